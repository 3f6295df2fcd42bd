-- bench/peers/luabits.lua - the Snapshot through a hand-written pure-Lua
-- bit packer: the articles' BitWriter/BitReader on Lua 5.4 integers.
--
-- The layout is bitwire's (LSB first, see bench/handc.c): tick 20 bits,
-- ack 16, count 7, then per entity id 12, kind 3, x/y/z 17, yaw 11,
-- health 7, f1..f4, name presence bit, and a name as 5-bit length, align,
-- bytes. Float widths come from serialize.h's float32 formula; the values
-- are quantized in double arithmetic (bench/message.lua says why), so a
-- rare value lands one step off bitwire's. Its size is the reference for
-- "bitwire's message at most 2% larger".
--
-- The writer gathers bits in a 64-bit scratch and stores whole 32-bit
-- words; the reader loads 32-bit words with string.unpack, only from bytes
-- that exist. Encode checks ranges and raises; decode checks truncation,
-- ranges, padding and UTF-8 and returns nil, message, code.
local msg = require "bench.message"

local spack, sunpack, sbyte, ssub, sfind = string.pack, string.unpack,
  string.byte, string.sub, string.find
local utf8len = utf8.len
local error, pcall, type = error, pcall, type
local POS, YAW = msg.POS, msg.YAW
local PMIN, PK, PMIV, PSTEP, PBITS = POS.min, POS.k, POS.miv, POS.step,
  POS.nbits
local YMIN, YK, YMIV, YSTEP, YBITS = YAW.min, YAW.k, YAW.miv, YAW.step,
  YAW.nbits
local MAXENTS, MAXNAME, MAXHEALTH = msg.MAXENTS, msg.MAXNAME, msg.MAXHEALTH

local M = {name = "pure-Lua bits"}

-- {===== writer =====

local words, nw, scratch, sb = {}, 0, 0, 0

-- Append the low 'n' (0..32) bits of 'v', which must fit.
local function put (v, n)
  scratch = scratch | (v << sb)
  sb = sb + n
  if sb >= 32 then
    nw = nw + 1
    words[nw] = scratch & 0xffffffff
    scratch = scratch >> 32
    sb = sb - 32
  end
end

-- string.pack formats for 'full' whole words and a last one of 'k' bytes
local formats = setmetatable({}, {__index = function (t, key)
  local full, k = key >> 3, key & 7
  local f = "<" .. ("I4"):rep(full) .. (k > 0 and "I" .. k or "")
  t[key] = f
  return f
end})

local function finish ()
  local full, k = nw, (sb + 7) >> 3
  if k > 0 then
    nw = nw + 1
    words[nw] = scratch
  end
  return spack(formats[full << 3 | k], table.unpack(words, 1, nw))
end

local function qpos (v)
  local t = (v - PMIN) * PK
  if not (t >= 0) then return 0 end  -- also NaN
  if t >= PMIV then return PMIV end
  return (t + 0.5) // 1
end

local function qyaw (v)
  local t = (v - YMIN) * YK
  if not (t >= 0) then return 0 end
  if t >= YMIV then return YMIV end
  return (t + 0.5) // 1
end

local function range (path, v, max)
  error(("%s: %s out of range [0, %d]"):format(path, tostring(v), max), 3)
end

function M.encode (v)
  nw, scratch, sb = 0, 0, 0
  local tick, ack, ents = v.tick, v.ack, v.entities
  if not (tick >= 0 and tick < 1 << 20) then range("tick", tick, 0xfffff) end
  if not (ack >= 0 and ack < 1 << 16) then range("ack", ack, 0xffff) end
  local n = #ents
  if n > MAXENTS then range("entities", n, MAXENTS) end
  put(tick, 20)
  put(ack, 16)
  put(n, 7)
  for i = 1, n do
    local e = ents[i]
    local id, kind, health, name = e.id, e.kind, e.health, e.name
    if not (id >= 0 and id <= 4095) then
      range("entities[" .. i .. "].id", id, 4095)
    end
    if not (kind >= 0 and kind <= 7) then
      range("entities[" .. i .. "].kind", kind, 7)
    end
    if not (health >= 0 and health <= MAXHEALTH) then
      range("entities[" .. i .. "].health", health, MAXHEALTH)
    end
    put(id | kind << 12, 15)
    put(qpos(e.x), PBITS)
    put(qpos(e.y), PBITS)
    put(qpos(e.z), PBITS)
    put(qyaw(e.yaw), YBITS)
    local f = health | (e.f1 and 0x80 or 0) | (e.f2 and 0x100 or 0)
              | (e.f3 and 0x200 or 0) | (e.f4 and 0x400 or 0)
    if name == nil then
      put(f, 12)
    else
      local len = #name
      if len > MAXNAME then range("entities[" .. i .. "].name", len, MAXNAME) end
      if not utf8len(name) or sfind(name, "\0", 1, true) then
        error(("entities[%d].name: invalid UTF-8 or NUL"):format(i), 2)
      end
      put(f | 0x800 | len << 12, 17)
      sb = (sb + 7) & ~7  -- align: the bits skipped are zero
      if sb == 32 then put(0, 0) end
      for j = 1, len do put(sbyte(name, j), 8) end
    end
  end
  return finish()
end

-- }=====

-- {===== reader =====

local s, slen, bytepos, limit, pos = "", 0, 1, 0, 0  -- scratch, sb shared

local TRUNC = {code = "truncated"}

-- Read 'n' (1..32) bits.
local function get (n)
  local p = pos + n
  if p > limit then error(TRUNC) end
  pos = p
  if sb < n then
    local left = slen - bytepos + 1
    local w
    if left >= 4 then
      w = sunpack("<I4", s, bytepos)
      bytepos = bytepos + 4
      scratch = scratch | (w << sb)
      sb = sb + 32
    else
      w = sunpack("<I" .. left, s, bytepos)
      bytepos = bytepos + left
      scratch = scratch | (w << sb)
      sb = sb + 8 * left
    end
  end
  local v = scratch & ((1 << n) - 1)
  scratch = scratch >> n
  sb = sb - n
  return v
end

local function fail (code, text, at)
  error({code = code, msg = ("%s (bit %d)"):format(text, at)})
end

-- 'v', just read in 'n' bits for entities[i].<field> (or 'field' when 'i'
-- is 0), must not exceed 'max'.
local function checkmax (v, max, i, field, n)
  if v > max then
    local path = i == 0 and field or ("entities[%d].%s"):format(i, field)
    fail("range", ("%s: %d out of range [0, %d]"):format(path, v, max), pos - n)
  end
  return v
end

local function getname (i)
  local len = checkmax(get(5), MAXNAME, i, "name", 5)
  local at = pos
  local pad = -pos & 7
  if pad > 0 and get(pad) ~= 0 then
    fail("align", ("entities[%d].name: non-zero padding bits"):format(i), at)
  end
  if len * 8 > limit - pos then error(TRUNC) end
  local b = (pos >> 3) + 1
  local name = ssub(s, b, b + len - 1)
  if not utf8len(name) or sfind(name, "\0", 1, true) then
    fail("utf8", ("entities[%d].name: invalid string"):format(i), at)
  end
  pos = pos + len * 8  -- restart the scratch after the bytes
  bytepos, scratch, sb = b + len, 0, 0
  return name
end

local function getpos (i, field)
  local q = get(PBITS)
  if q > PMIV then checkmax(q, PMIV, i, field, PBITS) end
  return q * PSTEP + PMIN
end

local function run (bytes, into)
  s, slen, bytepos, limit, pos, scratch, sb = bytes, #bytes, 1, #bytes * 8,
    0, 0, 0
  local tick, ack = get(20), get(16)
  local n = checkmax(get(7), MAXENTS, 0, "entities", 7)
  local ents
  if into then
    into.tick, into.ack = tick, ack
    ents = into.entities
    if type(ents) ~= "table" then ents = {}; into.entities = ents end
  else
    ents = {}
  end
  for i = 1, n do
    local idkind = get(15)
    local x, y, z = getpos(i, "x"), getpos(i, "y"), getpos(i, "z")
    local qy = get(YBITS)
    if qy > YMIV then checkmax(qy, YMIV, i, "yaw", YBITS) end
    local health = checkmax(get(7), MAXHEALTH, i, "health", 7)
    local flags = get(5)
    local name = flags & 16 ~= 0 and getname(i) or nil
    local e = into and ents[i]
    if type(e) == "table" then
      e.id, e.kind, e.x, e.y, e.z = idkind & 0xfff, idkind >> 12, x, y, z
      e.yaw, e.health = qy * YSTEP + YMIN, health
      e.f1, e.f2, e.f3, e.f4 = flags & 1 ~= 0, flags & 2 ~= 0,
        flags & 4 ~= 0, flags & 8 ~= 0
      e.name = name
    else
      ents[i] = {
        id = idkind & 0xfff, kind = idkind >> 12, x = x, y = y, z = z,
        yaw = qy * YSTEP + YMIN, health = health,
        f1 = flags & 1 ~= 0, f2 = flags & 2 ~= 0, f3 = flags & 4 ~= 0,
        f4 = flags & 8 ~= 0, name = name,
      }
    end
  end
  if into then
    for i = #ents, n + 1, -1 do ents[i] = nil end
    return into
  end
  return {tick = tick, ack = ack, entities = ents}
end

local function result (ok, v)
  s = ""  -- do not keep the input alive
  if ok then return v end
  if type(v) == "table" then
    if v == TRUNC then
      return nil, ("truncated input (bit %d)"):format(pos), "truncated"
    end
    return nil, v.msg, v.code
  end
  error(v, 0)
end

function M.decode (bytes)
  return result(pcall(run, bytes))
end

-- Refill 'into', reusing its entity tables.
function M.decode_into (bytes, into)
  return result(pcall(run, bytes, into))
end

-- }=====

return M
