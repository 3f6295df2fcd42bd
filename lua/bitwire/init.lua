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
M.MAX_VALUES = core.MAX_VALUES  -- default of the decode option max_values
M.serializer = require("bitwire.serializer").new

-- normalized descriptions of the schemas compiled in this state, for
-- s:description() and bitwire.diff; weak so schemas can still be collected
local descriptions = setmetatable({}, { __mode = "k" })

-- bitwire.schema(description) -> compiled schema; raises on a bad description
-- with the type, the field and the problem.
function M.schema(description)
  local ok, norm = pcall(schema.normalize, description)
  if not ok then error(norm, 2) end
  local compiled
  ok, compiled = pcall(core.compile, norm, schema.totext(norm))
  if not ok then error(compiled, 2) end
  descriptions[compiled] = norm
  return compiled
end

-- Methods written in Lua join the C ones on every schema.
local methods = getmetatable(core.compile(schema.normalize {
  T = { { "x", "bool" } } })).__index

-- s:description() -> the normalized description (types sorted by name); a
-- schema adopted from another Lua state rebuilds it from the kept text.
function methods:description()
  local d = descriptions[self]
  if d == nil then   -- adopted from another state: rebuild from the text
    local text = self:_desc()
    if text == nil then return nil end
    d = schema.fromtext(text)
    descriptions[self] = d
  end
  return d
end

-- Schemas across lua_States: s:share() gives a handle, bitwire.adopt(handle)
-- in the other state makes a schema of it (each handle adopted once).
M.adopt = core.adopt
M.unshare = core.unshare

M.protocol = protocol.new

-- Definitions files and hot reload (bitwire/loader.lua), and what a reload
-- changes on the wire (bitwire/diff.lua).
local loader = require "bitwire.loader"
M.load = loader.load
M.watch = loader.watch
M.diff = require("bitwire.diff").diff

return M
