-- bitwire.protocol: framed packets over a schema or over a bitwire.watch
-- registry. The frame header (CRC32 over a protocol id that is never sent,
-- then the optional tag, version, delta flag and baseline id, message id,
-- and the end check) is written and read by the core (core/bw_frame.c);
-- this class only turns options into that header. WIRE.md, "Frame header".
--
-- Over a schema, the schema's fingerprint is folded into the protocol id,
-- so peers running other definitions reject each other's packets. Over a
-- registry, the 32-bit tag of the current schema follows the CRC instead,
-- and the receiver decodes with whichever kept schema the tag names.
local core = require "bitwire.core"

local M = {}

local Protocol = {}
Protocol.__index = Protocol
Protocol.__name = "bitwire.Protocol"
M.Protocol = Protocol

local OPTIONS = {
  id = "integer", check = "boolean", fingerprint = "boolean",
  deltas = "boolean", versioned = "boolean", version_bits = "integer",
}
-- the call options: the frame calls' (core's list), and on encode 'peer',
-- which this class reads itself
local ENCODE, DECODE = { peer = true }, core.FRAME_OPTIONS.decode
for k in pairs(core.FRAME_OPTIONS.encode) do ENCODE[k] = true end

local function isregistry(x)
  return getmetatable(x) == require("bitwire.loader").Registry
end

local function isschema(x)
  local mt = getmetatable(x)
  return type(mt) == "table" and type(mt.__index) == "table"
    and type(mt.__index.frame_encode) == "function"
end

local options = require "bitwire.options"
local checkoptions = options.check

-- Raise at the caller's caller on keys of 'opts' not in 'known'.
local function checkkeys(opts, known, what)
  checkoptions(opts, known, "bitwire.protocol", what)
end

-- bitwire.protocol(schema or registry [, opts]) -> protocol
--   id = 0            fed to the CRC, never sent
--   check = true      an end check closes every packet
--   fingerprint = true  (schemas) fold the fingerprint into the id
--   deltas = false    frames say whether they are deltas, and of what
--   versioned = false, version_bits = 16: the version travels in the frame
function M.new(target, opts)
  local reg = isregistry(target) and target or nil
  if not reg and not isschema(target) then
    error("bitwire.protocol: first argument must be a schema or a registry", 2)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error("bitwire.protocol: options must be a table", 2)
  end
  opts = opts or {}
  checkkeys(opts, OPTIONS, "option")
  for k, t in pairs(OPTIONS) do
    local v = opts[k]
    if v ~= nil and (t == "integer" and math.type(v) ~= "integer"
                     or t == "boolean" and type(v) ~= "boolean") then
      error(string.format("bitwire.protocol: '%s' must be a%s %s", k,
        t == "integer" and "n" or "", t), 2)
    end
  end
  if reg and opts.fingerprint then
    error("bitwire.protocol: a registry protocol names its schema by tag; "
      .. "'fingerprint' applies to a schema", 2)
  end
  local vbits = 0
  if opts.versioned or (opts.versioned == nil and opts.version_bits) then
    vbits = opts.version_bits or 16
    if vbits < 1 or vbits > core.limits.version_bits then
      error(("bitwire.protocol: 'version_bits' must be an integer in [1, %d]")
        :format(core.limits.version_bits), 2)
    end
  elseif opts.version_bits then
    error("bitwire.protocol: 'version_bits' needs versioned = true", 2)
  end
  local hdr = {
    id = opts.id or 0,
    check = opts.check ~= false,
    fingerprint = not reg and opts.fingerprint ~= false,
    tagged = reg ~= nil,
    version_bits = vbits,
    deltas = opts.deltas or false,
  }
  local weak = { __mode = "k" }
  return setmetatable({ registry = reg, schema = not reg and target or nil,
    hdr = hdr, id = hdr.id, endcheck = hdr.check, deltas = hdr.deltas,
    version_bits = vbits,
    -- with deltas: the type, schema and version each value went at (per
    -- peer when the sends name one), and the peer's view of those a
    -- reload, a version switch or another type left behind
    sent = hdr.deltas and setmetatable({}, weak) or nil,
    combos = hdr.deltas and setmetatable({}, weak) or nil,
    views = hdr.deltas and setmetatable({}, weak) or nil }, Protocol)
end

-- The one object that stands for type 'name' of schema 's' at version
-- 'ver': what a value went as, so what the peer decoded it as.
local function combo(self, s, ver, name)
  local byver = self.combos[s]
  if not byver then
    byver = {}
    self.combos[s] = byver
  end
  local byname = byver[ver]
  if not byname then
    byname = {}
    byver[ver] = byname
  end
  local c = byname[name]
  if not c then
    c = { from = s, ver = ver, name = name }
    byname[name] = c
  end
  return c
end

-- The schema packets are encoded with: the registry's current one.
function Protocol:current()
  return self.registry and self.registry.schema or self.schema
end

-- The baseline 'b' as the peer holds it, when it went at combo 'at' (a
-- type of a schema at a version) other than this delta's: the peer
-- decoded it so, its values on that schema's grid and within its ranges,
-- and a field that version lacks at its default, where 'b' may hold values
-- the delta's schema and version send (hp 150 clamped to 100 then, not
-- now; armor 50 that version 0 did not send). A delta against 'b' itself
-- would call such a field unchanged, the peer wrong; so would one against
-- 'b' taken as the delta's type when it went as another (a key of 'b'
-- that type sends, which the one it went as did not).
local function peerview(self, at, b)
  local seen = self.views[b]
  if seen and seen[at] ~= nil then return seen[at] end
  -- its values as they went: a strict schema's refusal of a key the send
  -- let through (strict = false), or a decode past the default max_values,
  -- would leave 'b' itself as the view
  local ok, bytes = pcall(at.from.encode, at.from, at.name, b,
                          { version = at.ver, strict = false })
  local whole = { version = at.ver, max_values = math.maxinteger }
  local v = ok and at.from:decode(at.name, bytes, whole) or b
  if not seen then
    seen = {}
    self.views[b] = seen
  end
  seen[at] = v
  return v
end

-- 'had' (a combo, false for several, nil for none yet) after a send at 'c'.
local function joined(had, c)
  if had == nil or had == c then return c end
  return false
end

-- The combo the peer holds 'b' at: the one all its sends went at; or, for
-- a peer named in its sends, the one all sends to it went at, when no
-- unnamed send (which may have gone to it) went at another. false when
-- there are several it may hold, so which is unknown (the peer acked one
-- send, not the table); nil when this protocol did not send it (a foreign
-- baseline, taken as it is).
local function heldat(self, b, peer)
  local rec = self.sent[b]
  if not rec then return nil end
  local mine
  if peer ~= nil and rec.peers then mine = rec.peers[peer] end
  if mine == nil then return rec.only end
  if mine and rec.anon ~= nil and rec.anon ~= mine then return false end
  return mine
end

-- Remember that 'value' went at combo 'c' (to 'peer', if named).
local function remember(self, value, c, peer)
  local rec = self.sent[value]
  if not rec then
    rec = {}
    self.sent[value] = rec
  end
  rec.only = joined(rec.only, c)
  if peer ~= nil then
    rec.peers = rec.peers or setmetatable({}, { __mode = "k" })
    rec.peers[peer] = joined(rec.peers[peer], c)
  else
    rec.anon = joined(rec.anon, c)
  end
  self.views[value] = nil  -- sent again: its earlier views may be stale
end

-- p:encode(name, value [, opts]) -> packet. opts: baseline (the value the
-- peer acked) and baseline_id (0..65535) for a delta; version (versioned
-- protocols); peer (any value naming the peer, for the baselines' views);
-- strict (raise on keys the type does not declare, as s:encode).
-- A baseline may be a value of any definitions the peer keeps: fields it
-- lacks count as their default; one this protocol sent before a reload, at
-- another version or as another type, counts as the peer decoded it
-- (peerview); one that
-- went at several and not named to this peer goes as no baseline (whole).
function Protocol:encode(name, value, opts)
  if opts ~= nil then
    if type(opts) ~= "table" then error("bitwire.protocol: options must be a table", 2) end
    checkkeys(opts, ENCODE, "encode option")
  end
  local s = self:current()
  local c, peer, b
  if opts then b, peer = opts.baseline, opts.peer end
  if self.sent then
    c = combo(self, s, opts and opts.version or s:version(), name)
    if peer ~= peer then error("bitwire.protocol: 'peer' cannot be NaN", 2) end
    local at
    if b ~= nil then at = heldat(self, b, peer) end
    if at == false then  -- which view the peer holds is unknown: whole
      b = nil
    elseif at and at ~= c then
      b = peerview(self, at, b)
    end
  end
  if opts and (peer ~= nil or b ~= opts.baseline) then
    -- the frame call's options: all but 'peer', the baseline as it went
    local own = {}
    for k, v in pairs(opts) do if k ~= "peer" then own[k] = v end end
    own.baseline = b
    if b == nil then own.baseline_id = nil end
    opts = own
  end
  -- a value that does not fit is the caller's error, raised at its line
  local ok, packet = pcall(s.frame_encode, s, self.hdr, name, value, opts)
  if not ok then error(options.reason("bitwire.protocol", packet), 2) end
  if c and type(value) == "table" then remember(self, value, c, peer) end
  return packet
end

-- p:decode(packet [, opts]) -> name, value, schema | nil, message, code.
-- opts: into (a table to refill), baselines ({[id] = value decoded earlier},
-- for deltas: an id not there gives code "baseline"), version (unversioned
-- protocols: decode at that version). Over a registry the packet's tag picks
-- the kept schema (one no longer kept gives code "schema"); 'schema' is the
-- one used.
function Protocol:decode(packet, opts)
  if type(packet) ~= "string" then
    error("bitwire.protocol: decode expects a string, got " .. type(packet), 2)
  end
  if opts ~= nil then
    if type(opts) ~= "table" then error("bitwire.protocol: options must be a table", 2) end
    checkkeys(opts, DECODE, "decode option")
  end
  local reg = self.registry
  if reg then self.hdr.schemas = reg.bytag end
  local s = self:current()
  -- bad bytes return nil, message, code; what raises is the caller's misuse
  local ok, a, b, c = pcall(s.frame_decode, s, self.hdr, packet, opts)
  if not ok then error(options.reason("bitwire.protocol", a), 2) end
  return a, b, c
end

-- Bytes every packet spends on the CRC32, the tag and the end check; the
-- version, delta flag, baseline id and message id add bits to the message.
-- The most bytes framing adds to a message (s:encode_message's bytes):
-- CRC32, the tag, the end check, and the header's bits (version, delta
-- flag and baseline id), which add ceil(bits / 8) bytes to a message
-- that ends on a byte boundary, and no more to any other.
function Protocol:overhead()
  local bits = self.version_bits + (self.deltas and 17 or 0)
  return 4 + (self.registry and 4 or 0) + (self.endcheck and 4 or 0) + (bits + 7) // 8
end

-- The protocol id fed to the CRC (the fingerprint folded in, for a schema
-- protocol): what a peer in another language needs.
function Protocol:wire_id()
  if self.hdr.fingerprint then
    return core.protocol_id(self.id, self.schema:fingerprint())
  end
  return self.id
end

function Protocol:__tostring()
  local parts = { string.format("id %d", self.id) }
  if self.deltas then parts[#parts + 1] = "deltas" end
  if self.version_bits > 0 then
    parts[#parts + 1] = string.format("version in %d bits", self.version_bits)
  end
  parts[#parts + 1] = self.endcheck and "end check" or "no end check"
  local over
  if self.registry then
    over = string.format("registry %s, current %s", self.registry.path,
      self.registry.schema:fingerprint())
  else
    over = string.format("schema %s%s", self.schema:fingerprint(),
      self.hdr.fingerprint and "" or ", fingerprint not folded")
  end
  return string.format("bitwire.Protocol (%s; %s)", over, table.concat(parts, ", "))
end

return M
