-- bitwire diff old.lua new.lua: what a reload changes on the wire.
local util = require "bitwire.cliutil"

local M = {}

M.summary = "what replacing one definitions file with another changes"
M.usage = [[
usage: bitwire diff old.lua new.lua

One line per change (bitwire.diff): types added and removed, fields added
(+), removed (-), changed (~), renamed, reordered, defaults, and message ids
that move. The last line says whether the wire form changed, with both
fingerprints. Exit status 0 when nothing differs, 2 when something does
(like diff(1)), 1 on an error.
]]

function M.run(args, io)
  local pos = util.parse(args, {}, M.usage)
  util.nomore(pos, 2, M.usage)
  local a = util.loadschema(util.need(pos, 1, "old definitions file", M.usage))
  local b = util.loadschema(util.need(pos, 2, "new definitions file", M.usage))
  local report = require("bitwire").diff(a, b)
  if report:empty() then
    io.stdout:write("no changes (fingerprint ", a:program().fingerprint, ")\n")
    return 0
  end
  io.stdout:write(report:text(), "\n")
  io.stdout:write(string.format("wire: %s (%s -> %s)\n",
    report.wire and "changed" or "unchanged", a:program().fingerprint,
    b:program().fingerprint))
  return 2
end

return M
