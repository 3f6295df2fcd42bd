-- Framed packets for a schema: a CRC32 header computed over a protocol id
-- that is never sent, then the message (type id and value), then an optional
-- end check. By default the schema's fingerprint is folded into the id, so
-- peers running different definitions reject each other's packets.
local M = {}

local Protocol = {}
Protocol.__index = Protocol

-- 64-bit FNV-1a step over the 16 hex digits, folding them into 'id'.
local function fold(id, fingerprint)
  local h = id ~ -3750763034362895579   -- FNV offset basis as a signed int
  for i = 1, #fingerprint do
    h = (h ~ fingerprint:byte(i)) * 0x100000001b3
  end
  return h
end

-- bitwire.protocol(schema, {id = n, check = true, fingerprint = true,
-- deltas = false}): with deltas, every frame carries one bit saying whether it
-- is a delta, and a delta the 16-bit id of its baseline (both peers must agree)
-- bitwire.protocol(registry, {id = n, check = true, versioned = false,
-- version_bits = 16}): over a bitwire.watch registry (see bitwire/loader.lua)
function M.new(schema, opts)
  if getmetatable(schema) == require("bitwire.loader").Registry then
    return schema:protocol(opts)
  end
  if getmetatable(schema) == nil or type(schema.frame_encode) ~= "function" then
    error("bitwire.protocol: first argument must be a schema", 2)
  end
  opts = opts or {}
  if type(opts) ~= "table" then error("bitwire.protocol: options must be a table", 2) end
  local id = opts.id or 0
  if math.type(id) ~= "integer" then
    error("bitwire.protocol: 'id' must be an integer", 2)
  end
  if opts.deltas ~= nil and type(opts.deltas) ~= "boolean" then
    error("bitwire.protocol: 'deltas' must be a boolean", 2)
  end
  local self = setmetatable({
    schema = schema,
    id = id,
    endcheck = opts.check ~= false,
    deltas = opts.deltas or nil,
  }, Protocol)
  self.wire_id = opts.fingerprint == false and id or fold(id, schema:fingerprint())
  return self
end

-- The frame options of a call: the caller's, plus deltas = true for a
-- protocol with deltas.
local function frameopts(self, opts)
  if not self.deltas or (opts ~= nil and type(opts) ~= "table") then return opts end
  local o = { deltas = true }
  for k, v in pairs(opts or {}) do
    if k ~= "deltas" then o[k] = v end
  end
  return o
end

-- p:encode(name, value [, opts]) -> packet; with deltas, opts.baseline (the
-- value the peer acked) and opts.baseline_id (its id, 0..65535) send a delta
function Protocol:encode(name, value, opts)
  if not self.deltas and type(opts) == "table" and opts.baseline ~= nil then
    error("bitwire.protocol: a baseline needs a protocol with deltas = true", 2)
  end
  return self.schema:frame_encode(self.wire_id, self.endcheck, name, value, true,
    frameopts(self, opts))
end

-- p:decode(packet [, opts]) -> name, value | nil, message, code; with
-- deltas, opts.baselines = {[id] = value decoded earlier} resolves a delta
-- (an id not there gives nil, message, "baseline")
function Protocol:decode(packet, opts)
  if type(packet) ~= "string" then
    error("bitwire.protocol: decode expects a string, got " .. type(packet), 2)
  end
  return self.schema:frame_decode(packet, self.wire_id, self.endcheck, nil, true,
    frameopts(self, opts))
end

-- Bytes a packet adds around the message: CRC32 plus the end check.
function Protocol:overhead()
  return 4 + (self.endcheck and 4 or 0)
end

return M
