-- bitwire: bit-packed serialization for game packets.
-- The facade over the C module bitwire.core and the pure-Lua helpers.
local core = require "bitwire.core"
local schema = require "bitwire.schema"
local protocol = require "bitwire.protocol"

local M = {}

M.version = core.version
M.writer = core.writer
M.reader = core.reader
M.bits_required = core.bits_required
M.frame_open = core.frame_open
M.serializer = require("bitwire.serializer").new

-- bitwire.schema(description) -> compiled schema; raises on a bad description
-- with the type, the field and the problem.
function M.schema(description)
  local ok, norm = pcall(schema.normalize, description)
  if not ok then error(norm, 2) end
  local compiled
  ok, compiled = pcall(core.compile, norm)
  if not ok then error(compiled, 2) end
  return compiled
end

M.protocol = protocol.new

return M
