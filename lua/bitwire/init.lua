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

-- the descriptions of schemas, rebuilt from their text on first use (a
-- copy: the caller's table may change); weak so schemas can be collected
local descriptions = setmetatable({}, { __mode = "k" })

-- A copy of plain data 'v' (a description: tables of tables and scalars).
local function copy(v)
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in next, v do t[k] = copy(x) end
  return t
end

-- bitwire.schema(description [, {strict = true}]) -> compiled schema;
-- raises on a bad description with the type, the field and the problem.
function M.schema(description, opts)
  local ok, compiled = pcall(schema.compile, description, opts)
  if not ok then error(compiled, 2) end
  return compiled
end

-- Methods written in Lua join the C ones on every schema.
local methods = getmetatable(core.compile { T = { { "x", "bool" } } }).__index

-- s:description() -> the description the schema was compiled from, as
-- plain data (a copy); also for a schema adopted from another Lua state.
function methods:description()
  local d = descriptions[self]
  if d == nil then
    local text = self:_desc()
    if text == nil then return nil end
    d = schema.fromtext(text)
    descriptions[self] = d
  end
  return copy(d)  -- the kept one stays as compiled, whatever callers do
end

-- Tools over the compiled program (bitwire/dissect.lua): s:dissect(name,
-- bytes [, opts]) lists every field with its bits; s:cost(name, value)
-- tells where a value's bits go.
do
  local dissect = require "bitwire.dissect"
  methods.dissect = dissect.dissect
  methods.cost = dissect.cost
end
-- Values as JSON along the schema (bitwire/json.lua, needs lua-cjson).
M.json = require "bitwire.json"

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
M.gen = require "bitwire.gen"   -- code generators (bitwire/gen/)

return M
