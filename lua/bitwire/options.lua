-- bitwire/options.lua - the one check of the options tables the Lua side
-- takes (bitwire.protocol and its calls, bitwire.load, bitwire.watch): a
-- misspelt option is an error, never a silent default. The C calls check
-- theirs in bw_readopts (bindings/lbw_methods.c); the message comes from
-- there too (core.unknown_option), so both read alike.
-- Also how a library function raises a C call's error at its own caller,
-- so the user's misuse points at the user's line.
local M = {}

-- The error 'e' of a C method that a library function called under pcall,
-- to raise again at that function's caller: error(M.reason(who, e), 2).
-- Under pcall it carries no position; an argument error would name the C
-- call's argument and name, which are not the user's, so it speaks as 'who'.
function M.reason(who, e)
  if type(e) ~= "string" then return e end   -- a memory error, say
  return (e:gsub("^bad argument #%d+ to '[^']*' %((.*)%)$", who .. ": %1"))
end

-- Raise on a key of 'opts' that 'known' (a set) lacks: "<who>: unknown
-- <what> '<key>' (known: <sorted keys>)", at the line that called the
-- public function whose argument check called this.
function M.check(opts, known, who, what)
  for k in next, opts do
    if known[k] == nil then
      local names = {}
      for name in pairs(known) do names[#names + 1] = name end
      table.sort(names)
      error(who .. ": " .. require("bitwire.core").unknown_option(k, what, names), 4)
    end
  end
end

return M
