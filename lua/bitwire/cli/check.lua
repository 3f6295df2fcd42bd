-- bitwire check defs.lua: load a definitions file and list its types.
local util = require "bitwire.cliutil"

local M = {}

M.summary = "load a definitions file; list its types with min and max bits"
M.usage = [[
usage: bitwire check defs.lua

Loads defs.lua in bitwire's sandbox and compiles it. Prints the version,
the fingerprint and the message type id width, then one line per type: its
message id ("-" for a type the messages list leaves out), its size in bits
(min and max; "unbounded" when a field has no bound) and its number of
fields. Exit status 1, with the error (file, type and field), when the
file does not load or compile.
]]

function M.run(args, io)
  local pos = util.parse(args, {}, M.usage)
  local path = util.need(pos, 1, "definitions file", M.usage)
  util.nomore(pos, 1, M.usage)
  local s = util.loadschema(path)
  local p = s:program()
  local out = io.stdout
  out:write(string.format("%s: ok, %d type%s, version %d, fingerprint %s, "
    .. "message id %d bit%s\n", path, #p.types, #p.types == 1 and "" or "s",
    p.version, p.fingerprint, p.typebits, p.typebits == 1 and "" or "s"))
  -- the type column as wide as its longest name: the columns line up
  local w = 24
  for _, t in ipairs(p.types) do w = math.max(w, util.width(t.name)) end
  out:write(string.format("  %-4s %s %9s %10s %7s\n", "id", util.pad("type", w), "min bits",
    "max bits", "fields"))
  for _, t in ipairs(p.types) do
    out:write(string.format("  %-4s %s %9d %10s %7d%s\n", t.message_id or "-",
      util.pad(t.name, w), t.minbits, t.maxbits and tostring(t.maxbits) or "unbounded",
      #t.fields, t.versioned and "  versioned" or ""))
  end
  return 0
end

return M
