-- Dissect and cost: bitwire.walk over bitwire's own C reader. s:dissect
-- lists every field of a packet with its bit offset and width; s:cost
-- encodes a value and tells where its bits go.
local core = require "bitwire.core"
local walk = require "bitwire.walk"

local M = {}
local PATHS = core.frame_paths

-- The reader interface of bitwire.walk over a bitwire.reader.
local Reader = {}
Reader.__index = Reader

function M.reader(r)
  return setmetatable({ r = r }, Reader)
end

function Reader:pos() return self.r:bits_read() end
function Reader:remaining() return self.r:bits_remaining() end
function Reader:bits(n) return self.r:bits(n) end
-- a sparse array's slot indices run up to 2^32 - 1: the unsigned chain
function Reader:int_relative(prev) return self.r:uint_relative(prev) end
function Reader:f32(x) return (string.unpack("<f", string.pack("<f", x))) end

-- The bits of 'v' as an unsigned number's text
local function unsigned(v)
  if v >= 0 then return string.format("%d", v) end
  local q = (v >> 1) // 5
  return string.format("%d%d", q, v - q * 10)
end

-- min + u exactly, as decode writes a value past its range: below 0 only
-- when min is and u does not reach -min, else unsigned (past 2^63 - 1
-- perhaps, where the integer wraps)
local function sum(min, u)
  local v = min + u
  if v >= 0 or (min < 0 and math.ult(u, -min)) then return v end
  return unsigned(v)
end

-- kept + fresh * per exactly, up to 2^64 - 1 (bw_countbits): the bits an
-- array needs, past 2^53 (the walk's own sum is exact below)
function Reader:needtext(kept, fresh, per)
  if per > 0 then   -- fresh * per past 2^64 - 1: ((2^64 - 1) // per, unsigned)
    local q = (math.maxinteger // per) << 1
    if not math.ult(-1 - q * per, per) then q = q + 1 end
    if math.ult(q, fresh) then return "18446744073709551615" end
  end
  local p = fresh * per + kept
  if math.ult(p, kept) then return "18446744073709551615" end
  return unsigned(p)
end

-- An integer in [min, max] (int(min, max) of WIRE.md), a failure worded as
-- decode words it: 'word' is what it is (bitwire.core.formats: value,
-- length, count).
function Reader:int(min, max, word)
  local r = self.r
  local at = r:bits_read()
  local u, msg, code = r:bits(core.bits_required(min, max))
  if u == nil then return nil, msg, code end
  if math.ult(max - min, u) then
    return nil, walk.say(word, sum(min, u), min, max) .. " (bit " .. at .. ")", "range"
  end
  return min + u
end

function Reader:leaf(f)
  local r, k = self.r, f.kind
  if k == "int" then return self:int(f.min, f.max, f.word or "value")
  elseif k == "uint" then return r:bits(f.bits)
  elseif k == "bool" then return r:bool()
  elseif k == "float32" then return r:float()
  elseif k == "float64" then return r:double()
  elseif k == "enum" then
    local i, msg, code = self:int(0, #f.values - 1, "value")
    if i == nil then return nil, msg, code end
    return f.values[i + 1]
  elseif k == "string" then   -- as the driver reads it, to fail at its bits
    local n, msg, code = self:int(0, f.max, "length")
    if n == nil then return nil, msg, code end
    local at = r:bits_read()
    local b
    b, msg, code = r:bytes(n)
    if b == nil then return nil, msg, code end
    if utf8.len(b) == nil or b:find("\0", 1, true) then
      return nil, core.messages.utf8 .. " (bit " .. at .. ")", "utf8", at
    end
    return b
  elseif k == "bytes" then
    local n = f.min
    if not f.fixed then
      local msg, code
      n, msg, code = self:int(f.min, f.max, "length")
      if n == nil then return nil, msg, code end
    end
    return r:bytes(n)
  elseif k == "align" then return r:align()
  elseif k == "check" then return r:check(f.magic)
  end
  -- a kind this walker does not know yet: a clean failure, never a crash
  return nil, "field kind '" .. tostring(k) .. "' is not supported by bitwire.walk", "schema"
end

local function typecheck(s, name, fn)
  if type(name) ~= "string" then
    error(fn .. ": type name must be a string, got " .. type(name), 3)
  end
  local p = s:program()
  if p.byname[name] == nil then
    error(fn .. ": no type '" .. name .. "' in this schema", 3)
  end
  return p
end

-- The entries of a walk, in the order fields start.
local function collect(program, name, r, opts)
  local list = {}
  local o = { version = opts and opts.version, baseline = opts and opts.baseline,
              max_values = opts and opts.max_values,
              on = function (e) list[#list + 1] = e end }
  local v, err = walk.walk(program, name, M.reader(r), o)
  return list, v, err
end

-- After a failure: containers that did not close end at the failing bit.
local function cut(list, err)
  for _, e in ipairs(list) do
    if e.open then
      e.open, e.incomplete = nil, true
      e.bits = math.max(0, err.bit - e.bit)
    end
  end
end

-- A delta keeps what its baseline holds, and the driver refuses one whose
-- kept value is missing or does not fit its field (bw_keepbaseline: code
-- baseline), a rule the walk, reading bits only, leaves to it; and counts
-- what it keeps against max_values, which the walk does not. After the
-- walk of a delta (failed with 'err' or not), ask the driver ('decode'
-- returns what s:decode does) and, when it stopped there first, stop the
-- list where it stopped and return its error.
local MANY = "decode makes more values than max_values allows"

local function keptfails(list, decode, err)
  local v, msg, code = decode()
  if v ~= nil then return nil end
  -- the walk counts no kept value, so the driver runs out first; a delta
  -- read from its baseline's tape says so at the bit its reading stopped
  local many = code == "range" and msg:find(MANY, 1, true) ~= nil
  if code ~= "baseline" and not many then return nil end
  local bit = tonumber(msg:match(" %(bit (%d+)%)$")) or 0
  -- at one bit the driver's came first: it stopped where the walk read on
  if err ~= nil and err.bit < bit and not many then return nil end
  local n = 0
  for _, e in ipairs(list) do
    if e.bit < bit or (e.bit == bit and e.role == "header") then
      if e.bit + e.bits > bit then e.bits, e.incomplete = bit - e.bit, true end
      n = n + 1
      list[n] = e
    end
  end
  for i = #list, n + 1, -1 do list[i] = nil end
  return { path = "", message = (msg:gsub(" %(bit %d+%)$", "")), code = code, bit = bit }
end

local function errtext(err)
  return string.format("%s%s%s (bit %d)", err.path, err.path ~= "" and ": " or "",
    err.message, err.bit)
end
M.errtext = errtext

-- s:dissect(name, bytes [, opts]) -> list of {path, bit, bits, value, kind,
-- depth, role}; on a bad packet the list up to the failure, then the
-- message and its code. opts: version, baseline, max_values (as for s:decode).

-- Raise at dissect's caller on options s:decode would refuse: the core
-- checks them as it checks decode's.
local function checkopts(opts)
  if opts == nil then return end
  if type(opts) ~= "table" then
    error("dissect: options must be a table, got " .. type(opts), 3)
  end
  local ok, e = pcall(core.check_walk_options, opts)
  if not ok then error(require("bitwire.options").reason("dissect", e), 3) end
end

function M.dissect(s, name, bytes, opts)
  local p = typecheck(s, name, "dissect")
  if type(bytes) ~= "string" then
    error("dissect: packet must be a string, got " .. type(bytes), 2)
  end
  checkopts(opts)
  local list, v, err = collect(p, name, core.reader(bytes), opts)
  local kept = opts and opts.baseline ~= nil and keptfails(list, function ()
    return s:decode(name, bytes, { version = opts.version, baseline = opts.baseline,
                                   max_values = opts.max_values })
  end, err)
  if kept then v, err = nil, kept end
  if v == nil then
    cut(list, err)
    return list, errtext(err), err.code
  end
  return list
end

-- A cost row's key and path, from the walk's steps (entries' up and name),
-- never from path text: a field named "x[1]" or "r.a" is not element 1 of
-- array x or field a of record r. A name goes in the key with its length,
-- so no two step lists give one key. 'wild' (by field) puts every element
-- and slot of an array in one row: entities[].pos.x.
local function stepto(key, path, name, kind, wild)
  if name == nil then   -- align or check
    name = "(" .. kind .. ")"
    return key .. name, path == "" and name or path .. "." .. name
  elseif type(name) == "number" then
    if wild then return key .. "[]", path .. "[]" end
    return key .. "[" .. name .. "]", path .. "[" .. name .. "]"
  end
  return key .. "." .. #name .. ":" .. name, path == "" and name or path .. "." .. name
end

-- Key and path of container entry 'c' (nil: the top), cached in 'memo'.
local function container(c, wild, memo)
  if c == nil then return "", "" end
  local m = memo[c]
  if m == nil then
    local key, path = container(c.up, wild, memo)
    key, path = stepto(key, path, c.name, c.kind, wild)
    m = { key, path }
    memo[c] = m
  end
  return m[1], m[2]
end

-- The key of the field or element entry 'e' is of (memo: not wild).
local function own(e, memo)
  return (stepto(container(e.up, false, memo), "", e.name, e.kind, false))
end

-- The row entry 'e' counts to: its field or element; a presence, changed
-- or slot bit to the one it describes (an empty slot's, not in 'known', to
-- its sparse array), a count, encoding or index to its array. Key and path.
local function owner(e, wild, memo, known, kmemo)
  local key, path = container(e.up, wild, memo)
  if e.role ~= nil and e.role ~= "delta" and e.name == nil then return key, path end
  if e.role == "slot" and not known[own(e, kmemo)] then return key, path end
  return stepto(key, path, e.name, e.kind, wild)
end

local function bysize(a, b)
  if a.bits ~= b.bits then return a.bits > b.bits end
  return a.at < b.at
end

-- The rows of a walk's entries, largest first, then in wire order; 'wild'
-- adds up those of one field path, ranked where their largest was.
local function tally(list, wild)
  local memo, wmemo, known = {}, {}, {}
  for _, e in ipairs(list) do   -- the fields and elements that have a value
    if e.role == nil then known[own(e, memo)] = true end
  end
  local rows, order, total = {}, {}, 0
  for _, e in ipairs(list) do
    if e.kind ~= "struct" and e.kind ~= "array" and e.kind ~= "sparse" then
      local key, path = owner(e, false, memo, known, memo)
      local row = rows[key]
      if row == nil then
        row = { path = path, bits = 0, at = #order + 1 }
        if wild then row.wkey, row.wpath = owner(e, true, wmemo, known, memo) end
        rows[key] = row
        order[#order + 1] = row
      end
      row.bits = row.bits + e.bits
      total = total + e.bits
    end
  end
  table.sort(order, bysize)
  if wild then
    local groups, each = {}, order
    order = {}
    for i, c in ipairs(each) do
      local g = groups[c.wkey]
      if g == nil then
        g = { path = c.wpath, bits = 0, at = i }
        groups[c.wkey] = g
        order[#order + 1] = g
      end
      g.bits = g.bits + c.bits
    end
    table.sort(order, bysize)
  end
  for _, c in ipairs(order) do c.at = nil end
  return order, total
end

-- The walk of 'value' encoded, for s:cost and cost_by_field: a value that
-- does not fit is the caller's error, raised at its line (two levels up).
local function costwalk(s, p, name, value, opts)
  local ok, bytes = pcall(s.encode, s, name, value, opts)
  if not ok then error(require("bitwire.options").reason("cost", bytes), 3) end
  -- the caller's own value, which encode took: no max_values to keep
  local list, v, err = collect(p, name, core.reader(bytes), { version = opts and opts.version,
    baseline = opts and opts.baseline, max_values = math.huge })
  if v == nil then error("cost: " .. errtext(err)) end  -- cannot happen
  return list
end

-- s:cost(name, value [, opts]) -> list of {path, bits} for every field
-- that costs bits (largest first, then in wire order), and the total.
function M.cost(s, name, value, opts)
  local p = typecheck(s, name, "cost")
  return tally(costwalk(s, p, name, value, opts), false)
end

-- The same with the elements of arrays and sparse arrays added up, one
-- row per field path (entities[].pos.x): `bitwire cost --by-field`.
function M.cost_by_field(s, name, value, opts)
  local p = typecheck(s, name, "cost")
  return tally(costwalk(s, p, name, value, opts), true)
end

-- The protocol id a bitwire.protocol feeds to the CRC (a field today; a
-- method p:wire_id() once the frame header moves to the core; a registry's
-- protocol uses its id).
function M.wire_id(p)
  if type(p.wire_id) == "function" then return p:wire_id() end
  return p.wire_id or p.id   -- a registry's protocol: its id as it is
end

-- A framed packet (bitwire.protocol): the CRC, the header, the message and
-- the end check. 'frame' = {wire_id, endcheck, tag, version_bits, deltas,
-- version, baseline, baseline_id}: version, the one to read the message at
-- when the header carries none; baseline, that of a delta frame, a value or
-- function (name) -> value; without it, record deltas are read; array and
-- slot deltas stop. baseline_id: the id the baseline is known by (nil: any);
-- a delta frame naming another is refused, as p:decode refuses it.
-- A bad CRC is reported, and the rest is still read, so the damage shows.
-- 'tag': true (this schema's), or the integer tag of s:frame_decode's
-- header. A failure in the frame's header names its part as decode does
-- (core.frame_paths: frame.type).
-- Returns the list, the header, the value, and an error or nil.
function M.frame(s, bytes, frame)
  local p = s:program()
  local list = {}
  local function on(e) list[#list + 1] = e end
  local n, need = #bytes, frame.endcheck and core.FRAME_MIN_CHECK or core.FRAME_MIN
  if n < need then
    return list, nil, nil, { path = PATHS.frame, message = walk.say("framesize", n, need),
                             code = "truncated", bit = 8 * n }
  end
  local crc = string.unpack("<I4", bytes)
  local r, msg, code, part = core.frame_open(bytes, frame.wire_id, frame.endcheck)
  local crcerr
  if r == nil then
    if code ~= "crc" then  -- the core's "frame: why (bit N)", in its part
      local why, bit = msg:match("^frame: (.-) %(bit (%d+)%)$")
      return list, nil, nil, { path = part, message = why or msg, code = code,
                               bit = tonumber(bit) or 0 }
    end
    crcerr = { path = part, message = walk.say("crc"), code = "crc", bit = 0 }
    r = core.reader(frame.endcheck and bytes:sub(1, n - 4) or bytes)
    r:bits(32)
  end
  on({ path = PATHS.crc, bit = 0, bits = 32, value = crc, kind = "uint",
       depth = 0, role = "header", bad = crcerr ~= nil })
  local rd = M.reader(r)
  local h, err = walk.header(p, rd, frame, on)
  local v
  if h ~= nil then
    on({ path = h.name, bit = rd:pos(), bits = 0, kind = "struct", depth = 0,
         role = h.delta == 1 and "delta" or nil, open = true })
    local top = list[#list]
    local base
    if h.delta == 1 then
      base = frame.baseline
      if type(base) == "function" then base = base(h.name) end
      if base == nil then base = walk.UNKNOWN end
    end
    v, err = walk.walk(p, h.name, rd, { on = on, depth = 1, path = "",
      version = h.version or frame.version, baseline = base })
    top.bits, top.value, top.open = rd:pos() - top.bit, v, nil
    if crcerr == nil and base ~= nil and base ~= walk.UNKNOWN then
      local kept = keptfails(list, function ()
        local tag = math.type(frame.tag) == "integer" and frame.tag or nil
        return s:frame_decode({ id = frame.wire_id, check = frame.endcheck,
          fingerprint = false, tagged = frame.tag == true, tag = tag,
          version_bits = frame.version_bits or 0, deltas = frame.deltas or false },
          bytes, { baselines = { [h.baseline_id] = base },
          version = h.version == nil and frame.version or nil })
      end, err)
      if kept then v, err = nil, kept end
    end
  end
  if err ~= nil then cut(list, err) end
  if err == nil and frame.endcheck then
    local check = string.unpack("<I4", bytes, n - 3)
    -- under a bad CRC the core has not checked it (0x12345678, BW_CHECKMAGIC)
    on({ path = PATHS.check, bit = 8 * (n - 4), bits = 32, value = check,
         kind = "check", depth = 0, role = "header", bad = check ~= 0x12345678 })
  end
  return list, h, v, crcerr or err
end

return M
