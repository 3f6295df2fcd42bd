-- bitwire/options.lua - the one check of the options tables the Lua side
-- takes (bitwire.protocol and its calls, bitwire.load, bitwire.watch): a
-- misspelt option is an error, never a silent default. The C calls check
-- theirs in bw_readopts (bindings/lbw_methods.c) with the same wording.
local M = {}

-- Raise on a key of 'opts' that 'known' (a set) lacks: "<who>: unknown
-- <what> '<key>' (known: <sorted keys>)", at the line that called the
-- public function whose argument check called this.
function M.check(opts, known, who, what)
  for k in next, opts do
    if known[k] == nil then
      local names = {}
      for name in pairs(known) do names[#names + 1] = name end
      table.sort(names)
      local key = type(k) == "string" and "'" .. k .. "'" or tostring(k)
      error(string.format("%s: unknown %s %s (known: %s)", who, what,
        key, table.concat(names, ", ")), 4)
    end
  end
end

return M
