-- Writes a Wireshark Lua plugin that dissects framed bitwire packets over
-- UDP. The plugin carries the compiled program (s:program()) as data and
-- bitwire/walk.lua as it is, over a reader of the packet's bits written for
-- the Lua 5.2 that Wireshark embeds (no integer division, no bit operators:
-- Wireshark's `bit` library for the CRC, UInt64 for 64-bit values).
local core = require "bitwire.core"

local M = {}

-- A Lua 5.2 constructor for plain data; integers past 2^53 become strings
-- (the plugin shows those fields' values as raw 64-bit patterns).
local function literal(v, out)
  local t = type(v)
  if t == "table" then
    out[#out + 1] = "{"
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function (a, b)
      if type(a) == type(b) then return a < b end
      return type(a) == "number"
    end)
    for _, k in ipairs(keys) do
      out[#out + 1] = type(k) == "string" and string.format("[%q]=", k)
        or string.format("[%d]=", k)
      literal(v[k], out)
      out[#out + 1] = ","
    end
    out[#out + 1] = "}"
  elseif t == "string" then out[#out + 1] = string.format("%q", v)
  elseif math.type(v) == "integer" then
    if v > (1 << 53) or v < -(1 << 53) then out[#out + 1] = string.format("%q", tostring(v))
    else out[#out + 1] = string.format("%d", v) end
  elseif t == "number" then out[#out + 1] = string.format("%.17g", v)
  else out[#out + 1] = tostring(v) end
end

local function program_literal(p)
  local types = {}
  for i, t in ipairs(p.types) do types[i] = t end
  local out = {}
  literal({ version = p.version, fingerprint = p.fingerprint, typebits = p.typebits,
            relative_tiers = p.relative_tiers, messages = p.messages, types = types }, out)
  return table.concat(out)
end

-- The text of module 'name' this state runs (bitwire.walk and the
-- bitwire.walkcodes it requires), found through its function 'fn':
-- package.path may name another copy, or none (an embedder's searcher or
-- sandbox), and a plugin must read as dissect does.
local function source(name, fn)
  local src = debug.getinfo(require(name)[fn], "S").source
  if src:sub(1, 1) == "@" then
    local f = assert(io.open(src:sub(2), "rb"))
    local text = f:read("a")
    f:close()
    return text
  end
  -- loaded from a string: its source is the text, unless it was named
  if src:sub(1, 1) ~= "=" then return src end
  error("bitwire.wireshark: the source of " .. name .. " is not available", 0)
end

-- The part of the plugin that does not depend on the schema.
local RUNTIME = [==[
-- {===== bit reader over a Tvb (Lua 5.2) =====
-- a failure as bitwire reports it: the core's message for 'code'
local function fail(code, at)
  return nil, MESSAGES[code] .. " (bit " .. at .. ")", code
end

local Reader = {}
Reader.__index = Reader

local function newreader(tvb, first, last)   -- bytes [first, last) of tvb
  return setmetatable({ tvb = tvb, first = first, nbits = 8 * (last - first), p = 32 }, Reader)
end

function Reader:pos() return self.p end
function Reader:remaining() return self.nbits - self.p end

-- n <= 32 bits, least significant first
function Reader:bits(n)
  if n > self.nbits - self.p then
    return fail("truncated", self.p)
  end
  local v, scale = 0, 1
  while n > 0 do
    local byte = self.tvb(self.first + math.floor(self.p / 8), 1):uint()
    local off = self.p % 8
    local take = math.min(8 - off, n)
    local chunk = math.floor(byte / 2 ^ off) % 2 ^ take
    v = v + chunk * scale
    scale = scale * 2 ^ take
    self.p = self.p + take
    n = n - take
  end
  return v
end

-- a value of more than 32 bits as a UInt64; one cut short fails at its
-- first bit, as the core's reader, not at its second half
function Reader:wide(n)
  if n > self.nbits - self.p then
    return fail("truncated", self.p)
  end
  local lo, m1, c1 = self:bits(32)
  if lo == nil then return nil, m1, c1 end
  local hi, m2, c2 = self:bits(n - 32)
  if hi == nil then return nil, m2, c2 end
  return UInt64.new(lo, hi)
end

-- min + u for a tiered field (bitwire.walk): as an Int64 past 2^53
function Reader:addmin(f, u)
  if f.minlo == nil then return f.min + u end
  return tostring(Int64.new(u % 2 ^ 32, math.floor(u / 2 ^ 32)) + Int64.new(f.minlo, f.minhi))
end

function Reader:f32(x)
  if x == 0 or x ~= x or x == math.huge or x == -math.huge then return x end
  local m, e = math.frexp(x)
  local y = m * 2 ^ 24
  local fl = math.floor(y)
  local d = y - fl
  if d > 0.5 or (d == 0.5 and fl % 2 == 1) then fl = fl + 1 end
  return math.ldexp(fl / 2 ^ 24, e)
end

-- a NaN with the sign bit clear (0 / 0 has it set on x86)
local NAN = 0 / 0
if tostring(NAN):sub(1, 1) == "-" then NAN = -NAN end

local function ieee(hi, lo, ebits, mbits_hi)
  local sign = hi >= 2 ^ 31 and -1 or 1
  local exp = math.floor(hi / 2 ^ mbits_hi) % 2 ^ ebits
  local frac, fbits = hi % 2 ^ mbits_hi, mbits_hi
  if lo ~= nil then frac, fbits = frac * 2 ^ 32 + lo, mbits_hi + 32 end
  local bias = 2 ^ (ebits - 1) - 1
  if exp == 2 ^ ebits - 1 then
    if frac == 0 then return sign * math.huge end
    return sign < 0 and -NAN or NAN   -- shown "nan" or "-nan", as dissect shows it
  elseif exp == 0 then
    return sign * math.ldexp(frac, 1 - bias - fbits)
  end
  return sign * math.ldexp(frac + 2 ^ fbits, exp - bias - fbits)
end

function Reader:align()
  local pad = (8 - self.p % 8) % 8
  if pad > 0 then
    local at = self.p
    local v, msg, code = self:bits(pad)
    if v == nil then return nil, msg, code end
    if v ~= 0 then return fail("align", at) end
  end
  return true
end

function Reader:bytes(n)
  local ok, msg, code = self:align()
  if not ok then return nil, msg, code end
  if 8 * n > self.nbits - self.p then
    return fail("truncated", self.p)
  end
  local s = n > 0 and self.tvb(self.first + self.p / 8, n):raw() or ""
  self.p = self.p + 8 * n
  return s
end

-- bw_utf8valid (core/bw_stream.c): no NUL, overlong form, surrogate or
-- code point past U+10FFFF (Lua 5.2 has no utf8 library)
local function utf8valid(s)
  local i, n = 1, #s
  while i <= n do
    local c, len, cp = s:byte(i), 1, 0
    if c == 0 then return false
    elseif c >= 0xC2 and c <= 0xDF then len, cp = 2, c - 0xC0
    elseif c >= 0xE0 and c <= 0xEF then len, cp = 3, c - 0xE0
    elseif c >= 0xF0 and c <= 0xF4 then len, cp = 4, c - 0xF0
    elseif c >= 0x80 then return false end
    if i + len - 1 > n then return false end
    for k = 1, len - 1 do
      local b = s:byte(i + k)
      if b < 0x80 or b > 0xBF then return false end
      cp = cp * 64 + (b - 0x80)
    end
    if (len == 3 and (cp < 0x800 or (cp >= 0xD800 and cp <= 0xDFFF)))
        or (len == 4 and (cp < 0x10000 or cp > 0x10FFFF)) then
      return false
    end
    i = i + len
  end
  return true
end

local function bitsfor(n)
  local b = 0
  while n >= 1 do n = math.floor(n / 2); b = b + 1 end
  return b
end

-- a value past its range, in decode's words: 'word' says what it is
-- (value, length, count), 'v' its value (as text past 2^53)
local function outside(word, v, min, max, at)
  return nil, walk.say(word, v, min, max) .. " (bit " .. at .. ")", "range"
end

function Reader:int(min, max, word)
  local at = self.p
  local u, msg, code = self:bits(bitsfor(max - min))
  if u == nil then return nil, msg, code end
  if u > max - min then return outside(word, min + u, min, max, at) end
  return min + u
end

-- min + u of an int in halves exactly, as decode writes it: below 0 only
-- when min is and the unsigned sum does not wrap, else unsigned
local function widesum(f, u)
  local sum = u + UInt64.new(f.minlo, f.minhi)
  if f.minhi >= 2 ^ 31 and not (sum < u) then
    return tostring(Int64.new(sum:lower(), sum:higher()))
  end
  return tostring(sum)
end

function Reader:leaf(f)
  local k = f.kind
  if k == "int" and f.minlo then   -- past 2^53 or 32 bits: in UInt64 and Int64
    local at, u, msg, code = self.p, nil, nil, nil
    if f.bits > 32 then u, msg, code = self:wide(f.bits)
    else
      u, msg, code = self:bits(f.bits)
      if u ~= nil then u = UInt64.new(u, 0) end
    end
    if u == nil then return nil, msg, code end
    if u > UInt64.new(f.spanlo, f.spanhi) then
      return outside(f.word or "value", widesum(f, u), f.min, f.max, at)
    end
    return tostring(Int64.new(u:lower(), u:higher()) + Int64.new(f.minlo, f.minhi))
  elseif k == "uint" and f.bits > 32 then
    local u, msg, code = self:wide(f.bits)
    if u == nil then return nil, msg, code end
    return tostring(u)
  elseif k == "int" then return self:int(f.min, f.max, f.word or "value")
  elseif k == "uint" then return self:bits(f.bits)
  elseif k == "bool" then
    local v, msg, code = self:bits(1)
    if v == nil then return nil, msg, code end
    return v == 1
  elseif k == "enum" then
    local i, msg, code = self:int(0, #f.values - 1, "value")
    if i == nil then return nil, msg, code end
    return f.values[i + 1]
  elseif k == "float32" then
    local v, msg, code = self:bits(32)
    if v == nil then return nil, msg, code end
    return ieee(v, nil, 8, 23)
  elseif k == "float64" then
    if 64 > self.nbits - self.p then   -- cut short: at its first bit, as wide
      return fail("truncated", self.p)
    end
    local lo = self:bits(32)
    return ieee(self:bits(32), lo, 11, 20)
  elseif k == "string" or k == "bytes" then
    local n = f.min
    if k == "string" or not f.fixed then
      local msg, code
      n, msg, code = self:int(k == "string" and 0 or f.min, f.max, "length")
      if n == nil then return nil, msg, code end
    end
    local at = self.p
    local s, msg, code = self:bytes(n)
    if k == "string" and s ~= nil and not utf8valid(s) then
      return fail("utf8", at)
    end
    return s, msg, code
  elseif k == "align" then return self:align()
  elseif k == "check" then
    local ok, msg, code = self:align()
    if not ok then return nil, msg, code end
    local at = self.p
    local v
    v, msg, code = self:bits(32)
    if v == nil then return nil, msg, code end
    if v ~= f.magic then return fail("check", at) end
    return true
  end
  return nil, "field kind " .. tostring(k) .. " not supported", "schema"
end

local IR = { { 1, 0 }, { 2, 3 }, { 7, 5 }, { 24, 9 }, { 281, 13 }, { 4378, 17 } }
local IRHI = { 1, 6, 23, 280, 4377, 69914 }
function Reader:int_relative(prev)
  local at = self.p
  for i, t in ipairs(IR) do
    local flag, msg, code = self:bits(1)
    if flag == nil then return nil, msg, code end
    if flag == 1 then
      local d = t[1]
      if t[2] > 0 then
        local u
        u, msg, code = self:bits(t[2])
        if u == nil then return nil, msg, code end
        d = d + u
        if d > IRHI[i] then return fail("range", at) end
      end
      return prev + d
    end
  end
  local cur, msg, code = self:bits(32)
  if cur == nil then return nil, msg, code end
  if cur <= prev then return fail("range", at) end
  return cur
end
-- }=====

-- {===== CRC32 (zlib's) over the protocol id and the packet =====
local band, bxor, rshift = bit.band, bit.bxor, bit.rshift
local CRC = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do
    if band(c, 1) == 1 then c = bxor(rshift(c, 1), 0xEDB88320) else c = rshift(c, 1) end
  end
  CRC[i] = c
end
local function crc32(tvb, first, last)
  local c = 0xFFFFFFFF
  for _, b in ipairs(SETTINGS.id_bytes) do c = bxor(CRC[band(bxor(c, b), 0xFF)], rshift(c, 8)) end
  for i = first, last - 1 do
    c = bxor(CRC[band(bxor(c, tvb(i, 1):uint()), 0xFF)], rshift(c, 8))
  end
  c = bxor(c, 0xFFFFFFFF)
  if c < 0 then c = c + 2 ^ 32 end
  return c
end
-- }=====

local function show(v, kind)
  if type(v) == "table" then
    local parts = {}
    for i = 1, #v do parts[i] = show(v[i], "float") end
    return "(" .. table.concat(parts, ", ") .. ")"
  elseif type(v) == "number" then
    if kind == "float" or kind == "float32" or kind == "float64" or kind == "quat"
        or kind == "angle" then
      return string.format("%.9g", v)
    end
    return string.format("%.0f", v)
  elseif type(v) == "string" then
    if kind == "bytes" then
      return "0x" .. (v:gsub(".", function (c) return string.format("%02x", c:byte()) end))
    end
    return walk.quote(v)
  end
  return tostring(v)
end

-- Wireshark cuts a label past ITEM_LABEL_LENGTH (240 bytes with its NUL),
-- which would drop the bit range after a long string or bytes value: the
-- value gives way, cut between UTF-8 characters, and says so with "...".
local LABELMAX = 239
local function shorten(head, value, tail)
  local room = LABELMAX - #head - #tail
  if #value <= room then return head .. value .. tail end
  local n = math.max(room - 3, 0)
  while n > 0 and value:byte(n + 1) ~= nil and value:byte(n + 1) >= 0x80
      and value:byte(n + 1) < 0xC0 do
    n = n - 1   -- not inside a character
  end
  return head .. value:sub(1, n) .. "..." .. tail
end

local proto = Proto(SETTINGS.name, SETTINGS.title)
-- filterable: <name>.type == "Snapshot", <name>.crc_ok == false, <name>.delta
local F = {
  type = ProtoField.string(SETTINGS.name .. ".type", "Message type"),
  crc_ok = ProtoField.bool(SETTINGS.name .. ".crc_ok", "CRC32 matches"),
  delta = ProtoField.bool(SETTINGS.name .. ".delta", "Delta frame"),
}
-- a filterable field per schema field with a scalar value
local NUMERIC = { int = true, uint = true, tiered = true, float = true, float32 = true,
                  float64 = true, angle = true }
local VALUEFIELDS = {}
local function valuefield(f)
  local k = f.key
  while f.of do f = f.of end
  if k == nil or VALUEFIELDS[k] then return end
  local abbr = SETTINGS.name .. "." .. k
  local pf
  if NUMERIC[f.kind] and (f.bits or 0) <= 32 and not f.minlo then
    pf = ProtoField.double(abbr, k)
  elseif NUMERIC[f.kind] or f.kind == "string" or f.kind == "enum" then
    pf = ProtoField.string(abbr, k)
  elseif f.kind == "bool" then pf = ProtoField.bool(abbr, k)
  end
  VALUEFIELDS[k] = pf
end
do
  local list = { F.type, F.crc_ok, F.delta }
  for _, t in ipairs(PROGRAM.types) do
    for _, f in ipairs(t.fields) do
      valuefield(f)
    end
  end
  for _, pf in pairs(VALUEFIELDS) do list[#list + 1] = pf end
  proto.fields = list
end
local BADCRC = ProtoExpert.new(SETTINGS.name .. ".bad_crc", "Bad CRC32",
  expert.group.CHECKSUM, expert.severity.ERROR)
local MALFORMED = ProtoExpert.new(SETTINGS.name .. ".malformed", "Malformed packet",
  expert.group.MALFORMED, expert.severity.ERROR)
proto.experts = { BADCRC, MALFORMED }

-- the bytes of entry 'e'; one of no bits gets the byte it starts in, or
-- none at the packet's end (past it Wireshark raises)
local function range(tvb, first, e)
  local n = tvb:len() - first
  local a = math.min(math.floor(e.bit / 8), n)
  local b = math.min(math.ceil((e.bit + math.max(e.bits, 1)) / 8), n)
  return tvb(first + a, b - a)
end

function proto.dissector(tvb, pinfo, tree)
  pinfo.cols.protocol = SETTINGS.title
  local n = tvb:len()
  local root = tree:add(proto, tvb(), SETTINGS.title)
  local need = SETTINGS.framemin
  if n < need then   -- malformed, in dissect's words
    root:add_proto_expert_info(MALFORMED, "truncated: " .. PATHS.frame)
    root:add(tvb(), string.format("error: %s: %s (bit %d) [truncated]", PATHS.frame,
      walk.say("framesize", n, need), 8 * n))
    return
  end
  local last = SETTINGS.endcheck and n - 4 or n
  local crc = tvb(0, 4):le_uint()
  local want = crc32(tvb, 4, n)
  local crcitem = root:add(tvb(0, 4), string.format("%s = 0x%08x [bits 0..31]", PATHS.crc, crc))
  local info = ""
  root:add(F.crc_ok, crc == want):set_generated()
  if crc ~= want then
    crcitem:append_text(string.format(" BAD CRC (computed 0x%08x)", want))
    crcitem:add_proto_expert_info(BADCRC)
    info = " [BAD CRC]"
  else
    crcitem:append_text(" ok")
  end
  local r = newreader(tvb, 0, last)
  local stack = { root }
  local function add(e)
    local tail = string.format(" [bits %d..%d]", e.bit, e.bit + e.bits - 1)
    if e.role == "changed" then tail = tail .. " (delta: " .. (e.value == 1 and "changed" or "kept") .. ")" end
    local label = shorten(e.path .. " = ", show(e.value, e.kind), tail)
    local pf = e.field and VALUEFIELDS[e.field.key]
    local v = e.value
    if pf and (type(v) == "number" or type(v) == "string" or type(v) == "boolean") then
      stack[#stack]:add(pf, range(tvb, 0, e), v):set_text(label)
    else
      stack[#stack]:add(range(tvb, 0, e), label)
    end
  end
  local h, err = walk.header(PROGRAM, r, SETTINGS, add)
  if h then
    local top = root:add(tvb(math.floor(r:pos() / 8)), h.name ..
      (h.delta == 1 and (" (delta against baseline " .. h.baseline_id .. ")") or ""))
    top:add(F.type, h.name):set_generated()
    if SETTINGS.deltas then top:add(F.delta, h.delta == 1):set_generated() end
    stack[#stack + 1] = top
    local v
    v, err = walk.walk(PROGRAM, h.name, r, {
      version = h.version, baseline = h.delta == 1 and walk.UNKNOWN or nil,
      on = function (e)
        if e.open then
          stack[#stack + 1] = stack[#stack]:add(range(tvb, 0, e), e.path
            .. (e.role == "delta" and " (delta)" or "") .. string.format(" [from bit %d]", e.bit))
        else add(e) end
      end,
      onclose = function (e)
        stack[#stack]:append_text(string.format(" (%d bits)", e.bits))
        stack[#stack] = nil
      end })
    info = h.name .. (h.delta == 1 and " (delta)" or "") .. info
  end
  -- under a good CRC a wrong end check is what the core refuses the frame
  -- for, before reading it (WIRE.md, Packet framing): not a field's error
  local checkfirst = crc == want and SETTINGS.endcheck
    and tvb(n - 4, 4):le_uint() ~= 0x12345678
  if err and not checkfirst then
    root:add_proto_expert_info(MALFORMED, err.code .. ": " .. err.path)
    root:add(tvb(), string.format("error: %s%s%s (bit %d) [%s]", err.path,
      err.path ~= "" and ": " or "", tostring(err.message):gsub(" %(bit %d+%)$", ""),
      err.bit, err.code))
    info = info .. " [" .. err.code .. "]"
  elseif SETTINGS.endcheck then
    local check = tvb(n - 4, 4):le_uint()
    root:add(tvb(n - 4, 4), string.format("%s = 0x%08x [bits %d..%d]",
      PATHS.check, check, 8 * (n - 4), 8 * n - 1))
    if check ~= 0x12345678 then   -- the protocol refuses the frame (check)
      root:add_proto_expert_info(MALFORMED, "check: " .. PATHS.check)
      root:add(tvb(n - 4, 4), string.format(
        "error: %s: %s (bit %d) [check]", PATHS.check, MESSAGES.check, 8 * (n - 4)))
      info = info .. " [check]"
    end
  end
  pinfo.cols.info = info
end

DissectorTable.get("udp.port"):add(SETTINGS.port, proto)
]==]

-- Display filter keywords, which Wireshark refuses as a protocol's name
-- (a "Dissector bug" that stops tshark), as in its epan/proto.c.
local RESERVED = {}
for w in ([[eq ne all_eq any_eq all_ne any_ne gt ge lt le bitand bitwise_and
  contains matches not and or xor in any all true false nan inf]]):gmatch("%S+") do
  RESERVED[w] = true
end

-- Why 'name' cannot name the plugin's protocol (its filter name), or nil.
function M.badname(name)
  if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") then
    return "must be an identifier"
  elseif #name < 2 then
    return "must have two characters or more (Wireshark's rule)"
  elseif RESERVED[name:lower()] then
    return "'" .. name .. "' is a Wireshark display filter keyword"
  end
  return nil
end

-- The filter names of the protocols tshark has, as a set, from the text of
-- `tshark -G protocols` (read from tshark when not given); nil when there
-- is no tshark to ask.
function M.protocols(text)
  if text == nil then
    local p = io.popen("tshark -G protocols 2>/dev/null")
    if p == nil then return nil end
    text = p:read("a")
    p:close()
  end
  local set, any = {}, false
  for line in text:gmatch("[^\n]+") do
    local filter = line:match("^[^\t]*\t[^\t]*\t([^\t]+)")
    if filter then
      set[filter:lower()] = true
      any = true
    end
  end
  return any and set or nil
end

-- The plugin text for the frames 'frame' describes (as bitwire.cliutil's
-- frame() gives them: id, wire_id, endcheck, deltas, version_bits, tag,
-- checked there and by bitwire.protocol). opts: port, name, title.
function M.generate(s, frame, opts)
  local p = s:program()
  -- ints of more than 32 bits, or with an end past 2^53 (a Lua 5.2 number
  -- cannot hold it, nor max - min): the plugin checks the offset against
  -- max - min and adds min as UInt64 and Int64 of two halves
  local function halves(f)
    local big = 1 << 53
    if f.kind == "int" and (f.bits > 32 or f.min < -big or f.max > big) then
      local span = f.max - f.min
      f.minlo, f.minhi = f.min & 0xFFFFFFFF, (f.min >> 32) & 0xFFFFFFFF
      f.spanlo, f.spanhi = span & 0xFFFFFFFF, (span >> 32) & 0xFFFFFFFF
    elseif f.kind == "tiered" and (f.min < -big or f.max > big) then
      -- the walk reads the offset up to span (tiers keep it small)
      f.minlo, f.minhi = f.min & 0xFFFFFFFF, (f.min >> 32) & 0xFFFFFFFF
      f.span = f.max - f.min
    end
    if f.of then halves(f.of) end
  end
  -- each named field gets a filter name <name>.<Type>.<field>; array and
  -- sparse elements share their field's
  local function key(f, k)
    f.key = k
    if f.of then key(f.of, k) end
  end
  -- Wireshark takes letters, digits, _ and - between a filter name's dots
  -- (any other byte stops the plugin loading): others become _, and a
  -- name met again gets a number
  local function part(n) return (n:gsub("[^%w_%-]", "_")) end
  local used = {}
  for _, t in ipairs(p.types) do
    for _, f in ipairs(t.fields) do
      halves(f)
      if f.name then
        local k = part(t.name) .. "." .. part(f.name)
        if used[k] then
          local i = 2
          while used[k .. "_" .. i] do i = i + 1 end
          k = k .. "_" .. i
        end
        used[k] = true
        key(f, k)
      end
    end
  end
  local idbytes = {}
  for i = 0, 7 do idbytes[#idbytes + 1] = (frame.wire_id >> (8 * i)) & 0xFF end
  local name = opts.name or "bitwire"
  local bad = M.badname(name)
  if bad then error("bitwire.wireshark: name " .. bad, 2) end
  local settings = { name = name, title = opts.title or "bitwire",
    port = opts.port, endcheck = frame.endcheck, id_bytes = idbytes,
    deltas = frame.deltas or false, version_bits = frame.version_bits or 0,
    tag = frame.tag or false,
    framemin = frame.endcheck and core.FRAME_MIN_CHECK or core.FRAME_MIN }
  local out = {}
  literal(settings, out)
  local mout, fout, pout = {}, {}, {}
  literal(core.messages, mout)
  literal(core.formats, fout)
  literal(core.frame_paths, pout)
  local messages = table.concat(mout)
  local walksrc = source("bitwire.walk", "walk")
  local codessrc = source("bitwire.walkcodes", "qfloat")
  return table.concat {
    "-- Wireshark dissector for bitwire packets, written by `bitwire wireshark`.\n",
    string.format("-- Schema fingerprint %s, protocol id 0x%x, UDP port %d.\n",
      p.fingerprint, frame.id, opts.port),
    "-- Load with: tshark -X lua_script:<this file> (or copy to the plugins folder).\n",
    "local SETTINGS = ", table.concat(out), "\n",
    "local MESSAGES = ", messages, "\n",
    "local FORMATS = ", table.concat(fout), "\n",
    "local PATHS = ", table.concat(pout), "\n",
    "local PROGRAM = ", program_literal(p), "\n",
    "do local byname = {}; for _, t in ipairs(PROGRAM.types) do byname[t.name] = t end;",
    " PROGRAM.byname = byname end\n",
    "local walk = (function (...)\n", walksrc, "\nend)((function ()\n", codessrc,
    "\nend)(), FORMATS, MESSAGES, PATHS)\n",
    RUNTIME,
  }
end

return M
