-- bench/message.lua - the standard benchmark message of issue 7: its bitwire
-- description, the quantizers the Lua peers share, deterministic data and
-- a checker for decoded tables.
local M = {}

local spack, sunpack = string.pack, string.unpack
local mtype = math.type

-- Snapshot: tick, ack and 64 entities; one entity in eight has a name.
M.description = {
  Entity = {
    {"id", "int", min = 0, max = 4095},
    {"kind", "int", min = 0, max = 7},
    {"x", "float", min = -512, max = 512, res = 0.01},
    {"y", "float", min = -512, max = 512, res = 0.01},
    {"z", "float", min = -512, max = 512, res = 0.01},
    {"yaw", "float", min = 0, max = 2 * math.pi, res = math.rad(0.35)},
    {"health", "int", min = 0, max = 100},
    {"f1", "bool"}, {"f2", "bool"}, {"f3", "bool"}, {"f4", "bool"},
    {"name", "string", max = 16, optional = true},
  },
  Snapshot = {
    {"tick", "uint", bits = 20},
    {"ack", "uint", bits = 16},
    {"entities", "array", of = "Entity", max = 64},
  },
}

M.MAXENTS, M.MAXNAME, M.MAXHEALTH = 64, 16, 100

local function f32 (x)
  return (sunpack("<f", spack("<f", x)))
end
M.f32 = f32

-- bits_required(min, max) of DESIGN.md, for integers.
function M.bits_required (min, max)
  local d, n = max - min, 0
  while d ~= 0 do d = d >> 1; n = n + 1 end
  return n
end

-- The compressed_float parameters, computed with serialize.h's float32
-- steps, so the Lua peers send the same widths as bitwire. The peers then
-- quantize each value in double arithmetic (float32 rounding in Lua costs
-- two string calls per step), so a value near a rounding tie may come out
-- one step away from bitwire's: same layout, not always the same bits.
function M.qfloat (min, max, res)
  local fmin, fmax, fres = f32(min), f32(max), f32(res)
  local delta = f32(fmax - fmin)
  local values = f32(delta / fres)
  if not (values >= 1) then values = 1 end
  if values > 4294967040 then values = 4294967040 end
  local miv = math.ceil(values)
  return {
    min = fmin, max = fmax, delta = delta, miv = miv,
    nbits = M.bits_required(0, miv),
    k = miv / delta,      -- encode: q = floor((v - min) * k + 0.5)
    step = delta / miv,   -- decode: v = q * step + min
    res = res,
  }
end

M.POS = M.qfloat(-512, 512, 0.01)
M.YAW = M.qfloat(0, 2 * math.pi, math.rad(0.35))

-- {===== deterministic data =====

-- 64-bit LCG (Knuth's MMIX constants); returns next_int(n) in [0, n) and
-- next_float() in [0, 1).
local function lcg (seed)
  local s = seed
  local function next_bits ()
    s = s * 6364136223846793005 + 1442695040888963407
    return s >> 11             -- 53 high bits
  end
  return function (n) return next_bits() % n end,
         function () return next_bits() * 0x1p-53 end
end

local NAMECHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"

function M.snapshot (seed, nents)
  local int, float = lcg(seed or 7)
  nents = nents or M.MAXENTS
  local ents = {}
  for i = 1, nents do
    local e = {
      id = int(4096), kind = int(8),
      x = float() * 1024 - 512, y = float() * 1024 - 512,
      z = float() * 1024 - 512, yaw = float() * 2 * math.pi,
      health = int(101),
      f1 = int(2) == 1, f2 = int(2) == 1, f3 = int(2) == 1, f4 = int(2) == 1,
    }
    if i % 8 == 1 then
      local len, c = 1 + int(M.MAXNAME), {}
      for j = 1, len do
        local k = 1 + int(#NAMECHARS)
        c[j] = NAMECHARS:sub(k, k)
      end
      e.name = table.concat(c)
    end
    ents[i] = e
  end
  return {tick = 0x9C5A3 % (1 << 20), ack = 0xBEEF, entities = ents}
end

-- }=====

-- {===== checking decoded tables =====

local ENTITY_KEYS = {
  id = "int", kind = "int", x = M.POS, y = M.POS, z = M.POS, yaw = M.YAW,
  health = "int", f1 = "bool", f2 = "bool", f3 = "bool", f4 = "bool",
  name = "string",
}

-- Largest error a quantized value may show: half a step, plus float32
-- rounding of the value, plus the JSON encoder's 14 significant digits.
local function tolerance (q)
  local big = math.max(math.abs(q.min), math.abs(q.max))
  return q.step / 2 + big * 2 ^ -22
end

local function near (a, b, q)
  return type(a) == "number" and math.abs(a - b) <= tolerance(q)
end

-- Checks that 'got' decodes 'want' (the original): same structure, same
-- integers, booleans and strings, floats within quantization error.
-- 'exact' compares floats exactly instead. Returns true or nil, message.
function M.compare (want, got, exact)
  if type(got) ~= "table" then return nil, "not a table: " .. tostring(got) end
  for _, k in ipairs {"tick", "ack"} do
    if got[k] ~= want[k] then
      return nil, ("%s: %s, want %s"):format(k, tostring(got[k]), want[k])
    end
  end
  local we, ge = want.entities, got.entities
  if type(ge) ~= "table" or #ge ~= #we or ge[#we + 1] ~= nil then
    return nil, "entities: wrong count"
  end
  for i, w in ipairs(we) do
    local g = ge[i]
    if type(g) ~= "table" then return nil, ("entities[%d]: missing"):format(i) end
    for k in pairs(g) do
      if not ENTITY_KEYS[k] then
        return nil, ("entities[%d].%s: unexpected key"):format(i, tostring(k))
      end
    end
    for k, kind in pairs(ENTITY_KEYS) do
      local wv, gv = w[k], g[k]
      local ok
      if type(kind) == "table" then
        ok = exact and gv == wv or not exact and near(gv, wv, kind)
      elseif kind == "int" then
        ok = mtype(gv) ~= nil and gv == wv  -- JSON gives floats
      else
        ok = gv == wv
      end
      if not ok then
        return nil, ("entities[%d].%s: %s, want %s"):format(
          i, k, tostring(gv), tostring(wv))
      end
    end
  end
  return true
end

-- The field that bit 'bit' of the encoding of 'v' belongs to, by walking
-- the layout (for reporting where two encodings differ).
function M.field_at (v, bit)
  local pos = 0
  local function over (width, path)
    if bit < pos + width then return path end
    pos = pos + width
  end
  local hit = over(20, "tick") or over(16, "ack") or over(7, "entities#")
  if hit then return hit end
  for i, e in ipairs(v.entities) do
    local p = ("entities[%d]."):format(i)
    hit = over(12, p .. "id") or over(3, p .. "kind")
      or over(M.POS.nbits, p .. "x") or over(M.POS.nbits, p .. "y")
      or over(M.POS.nbits, p .. "z") or over(M.YAW.nbits, p .. "yaw")
      or over(7, p .. "health") or over(4, p .. "f1..f4")
      or over(1, p .. "name?")
    if hit then return hit end
    if e.name then
      hit = over(5, p .. "#name") or over(-pos % 8, p .. "name padding")
        or over(8 * #e.name, p .. "name")
      if hit then return hit end
    end
  end
  return "past the end"
end

-- }=====

return M
