-- The `bitwire` command's dispatcher. Each subcommand is a module
-- bitwire.cli.<name> returning {summary =, usage =, run = function (args, io)};
-- run returns the exit status (0 when it returns nothing) and raises
-- cliutil.fail errors for the user. `io` has stdout and stderr (objects with
-- :write), so specs can capture the output.
local util = require "bitwire.cliutil"

local M = {}

-- The subcommands, in the order `bitwire help` lists them. One line each.
M.commands = {
  "check",        -- a definitions file's types, sizes and fingerprint
  "layout",       -- each field's wire form and bits, and a bit diagram
  "cost",         -- where the bits of one value go
  "dissect",      -- every field of a packet with its bits
  "encode",       -- JSON in, packet out
  "decode",       -- packet in, JSON out
  "diff",         -- what a new definitions file changes on the wire
  "fingerprint",  -- the wire form's fingerprint
  "wireshark",    -- a Wireshark dissector for framed packets
  "gen",          -- code generators
  "blob",         -- blob tools
  "version",      -- bitwire's version
}

-- The module of subcommand 'name', or nil and why it is not available.
function M.load(name)
  local ok, mod = pcall(require, "bitwire.cli." .. name)
  if not ok then
    if tostring(mod):find("module 'bitwire.cli." .. name .. "' not found", 1, true) then
      return nil, "'" .. name .. "' is not available in this installation"
    end
    return nil, "'" .. name .. "' failed to load: " .. tostring(mod)
  end
  return mod
end

local function known(name)
  for _, c in ipairs(M.commands) do
    if c == name then return true end
  end
  return false
end

function M.help(out)
  out:write("usage: bitwire <command> [arguments]   (bitwire <command> --help)\n\n")
  for _, name in ipairs(M.commands) do
    local mod = M.load(name)
    out:write(string.format("  %-12s %s\n", name, mod and mod.summary or "(not available)"))
  end
end

-- stdout and stderr for the subcommands. A write to stdout that fails (a
-- full disk, a pipe closed while SIGPIPE is ignored) stops the command,
-- never passing for success; buffered bytes fail only at a flush, which
-- main checks. stdout is flushed before each write to stderr: through one
-- pipe (2>&1) an error comes after the lines printed before it.
local function streams(sysio)
  local out, err = sysio.stdout, sysio.stderr
  local o, e, state = {}, {}, {}
  function state.flush()
    if state.why == nil and out.flush then
      local ok, why = out:flush()
      if not ok then state.why = tostring(why) end
    end
    return state.why == nil
  end
  function o.write(_, ...)
    local ok, why = out:write(...)
    if ok == nil and why ~= nil then
      state.why, state.said = tostring(why), true   -- said once, here
      util.fail("standard output: %s", why)
    end
    return o
  end
  function e.write(_, ...)
    state.flush()
    err:write(...)
    return e
  end
  return { stdout = o, stderr = e, stdin = sysio.stdin }, state
end

local dispatch

-- bitwire.cli.main(args [, io]) -> exit status
function M.main(args, sysio)
  sysio = sysio or { stdout = io.stdout, stderr = io.stderr, stdin = io.stdin }
  local sub, state = streams(sysio)
  local ok, status, name = pcall(dispatch, args, sub)
  if ok and not state.flush() and not state.said then
    ok, status = false, "standard output: " .. state.why
  end
  if not ok then   -- the help list, a usage or the last bytes not written
    sysio.stderr:write("bitwire" .. (name and " " .. name or "") .. ": "
      .. util.message(status) .. "\n")
    return 1
  end
  return status
end

function dispatch(args, sysio)
  local name = args[1]
  if name == nil then   -- an error, said as the subcommands say theirs
    sysio.stderr:write("bitwire: missing command\n")
    M.help(sysio.stderr)
    return 1
  end
  if name == "help" or name == "--help" or name == "-h" then
    local topic = name == "help" and args[2] or nil
    -- help on help (or `help --help`) is the list itself
    if topic == "help" or topic == "--help" or topic == "-h" then topic = nil end
    if topic == nil then
      M.help(sysio.stdout)
      return 0
    end
    name, args = topic, { topic, "--help" }
  end
  if name == "--version" then name = "version" end   -- as most commands take it
  if not known(name) then
    sysio.stderr:write("bitwire: unknown command '" .. tostring(name)
      .. "' (bitwire help lists them)\n")
    return 1
  end
  local mod, why = M.load(name)
  if mod == nil then
    sysio.stderr:write("bitwire " .. name .. ": " .. why .. "\n")
    return 1
  end
  local rest = table.move(args, 2, #args, 1, {})
  for _, a in ipairs(rest) do
    if a == "--" then break end   -- past it, --help is a file's name
    if a == "--help" or a == "-h" then
      sysio.stdout:write(mod.usage)
      return 0
    end
  end
  local ok, status = xpcall(mod.run, util.traceback, rest, sysio)
  if not ok then
    sysio.stderr:write("bitwire " .. name .. ": " .. util.message(status) .. "\n")
    return 1, name
  end
  return status or 0, name
end

return M
