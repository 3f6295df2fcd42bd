-- bitwire fingerprint defs.lua: the wire form's fingerprint.
local util = require "bitwire.cliutil"

local M = {}

M.summary = "print the fingerprint of a definitions file's wire form"
M.usage = [[
usage: bitwire fingerprint defs.lua...

Prints "<fingerprint>  <file>" for each file: 16 hex digits that change
whenever the wire form changes (s:fingerprint()). Two files with the same
fingerprint read each other's packets.
]]

function M.run(args, io)
  local pos = util.parse(args, {}, M.usage)
  util.need(pos, 1, "definitions file", M.usage)
  for _, path in ipairs(pos) do
    local s = util.loadschema(path)
    io.stdout:write(s:program().fingerprint, "  ", path, "\n")
  end
  return 0
end

return M
