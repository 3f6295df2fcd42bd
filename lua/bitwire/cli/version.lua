-- bitwire version (or bitwire --version): the library's version.
local util = require "bitwire.cliutil"

local M = {}

M.summary = "print bitwire's version"
M.usage = [[
usage: bitwire version   (or bitwire --version)

Prints "bitwire X.Y.Z": the version of the bitwire modules it runs
(bitwire.version).
]]

function M.run(args, io)
  util.nomore(util.parse(args, {}, M.usage), 0, M.usage)
  io.stdout:write("bitwire ", require("bitwire").version, "\n")
  return 0
end

return M
