-- Properties over seeded random schemas: random valid descriptions (nesting,
-- every supported kind, optional fields, defaults, arrays) and random values
-- that fit them. decode(encode(v)) gives v after quantization, encode never
-- makes bytes its own decode rejects, and sizes agree. Deterministic: the
-- seed is fixed, and each failure names its case.
local bitwire = require "bitwire"

-- BITWIRE_SEED=n explores other cases; the default is what CI runs
local SEED = math.tointeger(tonumber(os.getenv("BITWIRE_SEED") or ""))
  or 0x6269747769726500             -- "bitwire\0"
local CASES = 300                 -- descriptions
local VALUES_PER_CASE = 4

-- {===================== random source =====================

local function lcg (seed)
  local state = seed
  local R = {}
  function R.u64 ()
    state = state * 6364136223846793005 + 1442695040888963407
    local hi = state >> 32
    state = state * 6364136223846793005 + 1442695040888963407
    return (hi << 32) | (state >> 32)
  end
  function R.int (n)      -- 0 .. n-1
    state = state * 6364136223846793005 + 1442695040888963407
    return (state >> 33) % n
  end
  function R.range (lo, hi) return lo + R.int(hi - lo + 1) end
  function R.chance (p) return R.int(1000) < p * 1000 end
  function R.pick (t) return t[R.int(#t) + 1] end
  function R.unit () return R.int(1 << 30) / (1 << 30) end
  -- uniform in [min, max] over the whole int64 range (unsigned span)
  function R.between (min, max)
    local span = max - min                  -- wraps: read as unsigned
    if span == -1 then return R.u64() end   -- full 64-bit range
    local mask = span
    local shift = 1
    while shift < 64 do mask, shift = mask | (mask >> shift), shift * 2 end
    while true do
      local off = R.u64() & mask
      if not math.ult(span, off) then return min + off end
    end
  end
  return R
end

-- }==========================================================


-- {===================== random descriptions =====================

local CHARS = { "a", "b", "z", "Q", "0", " ", "~", "é", "ß", "λ", "✓", "€", "𝄞" }
local INT_RANGES = {
  { 0, 1 }, { 0, 0 }, { -1, 0 }, { 0, 255 }, { -100, 100 }, { 1000, 1003 },
  { 0, 4095 }, { -5000000, 5000000 }, { 0, 0x7fffffff }, { -0x80000000, 0x7fffffff },
  { math.mininteger, math.maxinteger }, { math.mininteger, -1 }, { -1, math.maxinteger },
  { 0, math.maxinteger }, { 7, 7 },
}
local SCALARS = { "int", "uint", "bool", "float", "float32", "float64", "enum",
                  "string", "bytes" }

local genfield

-- an element or field spec of kind 'kind' (without a name)
local function genkind (R, kind, types, self, depth)
  local f = { kind }
  if kind == "int" then
    local r = R.pick(INT_RANGES)
    f.min, f.max = r[1], r[2]
  elseif kind == "uint" then
    f.bits = R.pick { 1, 2, 7, 8, 13, 31, 32, 33, 63, 64, R.range(1, 64) }
  elseif kind == "float" or kind == "vector" then
    f.min = R.range(-1000, 1000) / R.pick { 1, 2, 4, 10 }
    f.max = f.min + R.pick { 0.5, 1, 3, 10, 100, 1000, 65536 }
    f.res = (f.max - f.min) / R.pick { 1, 3, 10, 100, 1000, 4096, 65536, 1e6 }
    if R.chance(0.2) then f.clamp = true end
    if kind == "vector" then f.count = R.range(1, 4) end
  elseif kind == "enum" then
    local values = {}
    for i = 1, R.range(1, 6) do values[i] = "v" .. i end
    f.values = values
  elseif kind == "string" then
    f.max = R.pick { 0, 1, 3, 8, 20, 300 }
  elseif kind == "bytes" then
    local form = R.int(3)
    if form == 0 then f.max = R.range(0, 12)
    elseif form == 1 then f.min = R.range(0, 4); f.max = f.min + R.range(0, 6)
    else f.count = R.range(0, 5) end
  elseif kind == "array" then
    local form = R.int(3)
    if form == 0 then f.max = R.range(0, 5)
    elseif form == 1 then f.min = R.range(0, 2); f.max = f.min + R.range(0, 3)
    else f.count = R.range(0, 3) end
    -- elements: a later type, an inline scalar, or an inline array
    local later = {}
    for i = self + 1, #types do later[#later + 1] = types[i] end
    local pick = R.int(4)
    if pick == 0 and #later > 0 then f.of = R.pick(later)
    elseif pick == 1 and depth < 2 then
      f.of = genkind(R, "array", types, self, depth + 1)
    else
      local ek = R.pick(SCALARS)
      f.of = genkind(R, ek, types, self, depth + 1)
    end
  else                                      -- nested type, by name
    f[1] = kind
  end
  return f
end

local function gendefault (R, f)
  local k = f[1]
  if k == "int" then return R.between(f.min, f.max)
  elseif k == "uint" then return f.bits == 64 and R.u64() or R.u64() & ((1 << f.bits) - 1)
  elseif k == "bool" then return R.chance(0.5)
  elseif k == "enum" then return R.pick(f.values)
  elseif k == "string" and f.max >= 2 then return "hi"
  end
  return nil
end

-- a named field of type index 'self' among 'types'
function genfield (R, name, types, self)
  local later = {}
  for i = self + 1, #types do later[#later + 1] = types[i] end
  local roll = R.int(100)
  local f
  if roll < 6 then return { "align" }
  elseif roll < 10 then
    return R.chance(0.5) and { "check" } or { "check", magic = R.u64() & 0xFFFFFFFF }
  elseif roll < 22 and #later > 0 then f = genkind(R, R.pick(later), types, self, 0)
  elseif roll < 36 then f = genkind(R, "array", types, self, 0)
  elseif roll < 40 then f = genkind(R, "vector", types, self, 0)
  else f = genkind(R, R.pick(SCALARS), types, self, 0) end
  table.insert(f, 1, name)
  if R.chance(0.25) then f.optional = true end
  if not f.optional and R.chance(0.2) then f.default = gendefault(R, { f[2],
    min = f.min, max = f.max, bits = f.bits, values = f.values }) end
  return f
end

-- a description of 1..4 types; type i only refers to types after it
local function gendescription (R)
  local n = R.range(1, 4)
  local names = {}
  for i = 1, n do names[i] = "T" .. i end
  local desc = {}
  for i = 1, n do
    local fields = {}
    for j = 1, R.range(i == 1 and 1 or 0, 6) do
      fields[#fields + 1] = genfield(R, "f" .. j, names, i)
    end
    desc[names[i]] = fields
  end
  return desc, names
end

-- }==========================================================


-- {===================== random values and their decoded form =====================

local function f32 (x) return (string.unpack("<f", string.pack("<f", x))) end

local function quantized (x, f)
  local w = bitwire.writer()
  w:compressed_float(x, f.min, f.max, f.res)
  return bitwire.reader(w:tostring()):compressed_float(f.min, f.max, f.res)
end

local function randstring (R, max)
  local parts, len = {}, 0
  for _ = 1, R.range(0, math.min(max, 24)) do
    local c = R.pick(CHARS)
    if len + #c > max then break end
    parts[#parts + 1], len = c, len + #c
  end
  return table.concat(parts)
end

local function randbytes (R, n)
  local t = {}
  for i = 1, n do t[i] = string.char(R.int(256)) end
  return table.concat(t)
end

local genvalue

-- a value for spec 'f' (kind at f[k]); returns value, expected decode.
-- Floats record how far the decode may drift in 'tol' for a second check.
local function genscalar (R, f, kind, desc)
  if kind == "int" then
    local v = R.between(f.min, f.max)
    return v, v
  elseif kind == "uint" then
    local v = f.bits == 64 and R.u64() or R.u64() & ((1 << f.bits) - 1)
    return v, v
  elseif kind == "bool" then
    local v = R.chance(0.5)
    return v, v
  elseif kind == "float" then
    local v = f.min + (f.max - f.min) * R.unit()
    if R.chance(0.1) then v = R.chance(0.5) and f.min or f.max end
    return v, { float = quantized(v, f), x = v, spec = f }
  elseif kind == "float32" then
    local v = R.pick { 0.0, -0.0, 1.5, 0.1, -123456.789, 3.4e38, 1e-40, R.unit() * 1e6 - 5e5 }
    return v, f32(v)
  elseif kind == "float64" then
    local v = R.pick { 0.0, 0.1, -1e300, 5e-324, math.pi, R.unit() * 1e12 }
    return v, v
  elseif kind == "enum" then
    local v = R.pick(f.values)
    return v, v
  elseif kind == "string" then
    local v = randstring(R, f.max)
    return v, v
  elseif kind == "bytes" then
    local n = f.count or R.range(f.min or 0, f.max)
    local v = randbytes(R, n)
    return v, v
  elseif kind == "array" or kind == "vector" then
    local n = f.count or R.range(f.min or 0, f.max)
    local v, e = {}, {}
    for i = 1, n do
      if kind == "vector" then
        v[i], e[i] = genscalar(R, f, "float", desc)
      else
        local of = type(f.of) == "string" and { f.of } or f.of
        v[i], e[i] = genscalar(R, of, of[1], desc)
      end
    end
    return v, e
  else                                         -- a type of the description
    return genvalue(R, desc, kind)
  end
end

-- a value of type 'name' and what its decode must look like
function genvalue (R, desc, name)
  local v, e = {}, {}
  for _, f in ipairs(desc[name]) do
    local fname, kind = f[1], f[2]
    if kind ~= nil then
      if (f.optional or f.default ~= nil) and R.chance(0.3) then
        e[fname] = f.default                   -- absent: default or nothing
      else
        v[fname], e[fname] = genscalar(R, f, kind, desc)
      end
    end
  end
  return v, e
end

-- Compare decoded 'got' with expected 'e'; floats within res/2 of the value
-- and equal to the stream API's quantization. Returns ok, where.
local function match (got, e, path)
  if type(e) == "table" and e.float then
    if got ~= e.float then
      return false, path .. ": " .. tostring(got) .. " ~= " .. tostring(e.float)
    end
    local f = e.spec
    local tol = f.res / 2 + 2 ^ -20 * (math.abs(f.min) + math.abs(f.max) + 1)
    local want = math.min(math.max(e.x, f.min), f.max)
    if math.abs(got - want) > tol then
      return false, path .. ": " .. got .. " too far from " .. want
    end
    return true
  elseif type(e) == "table" then
    if type(got) ~= "table" then return false, path .. ": not a table" end
    for k, ev in pairs(e) do
      local ok, where = match(got[k], ev, path .. "." .. tostring(k))
      if not ok then return false, where end
    end
    for k in pairs(got) do
      if e[k] == nil then return false, path .. "." .. tostring(k) .. ": unexpected" end
    end
    return true
  elseif math.type(e) ~= math.type(got) and type(e) == "number" then
    return false, path .. ": " .. tostring(math.type(got)) .. ", expected "
      .. tostring(math.type(e))
  elseif got ~= e and not (e ~= e and got ~= got) then
    return false, path .. ": " .. tostring(got) .. " ~= " .. tostring(e)
  end
  return true
end

-- }==========================================================


-- every case once: { desc, names, { {name, value, expected}, ... } }
local cases
local function allcases ()
  if cases then return cases end
  cases = {}
  local R = lcg(SEED)
  for i = 1, CASES do
    local desc, names = gendescription(R)
    local values = {}
    for j = 1, VALUES_PER_CASE do
      local name = names[R.int(#names) + 1]
      local v, e = genvalue(R, desc, name)
      values[j] = { name, v, e }
    end
    cases[i] = { desc = desc, names = names, values = values }
  end
  return cases
end

local function each (fn)
  for i, c in ipairs(allcases()) do
    local ok, s = pcall(bitwire.schema, c.desc)
    assert(ok, "case " .. i .. ": " .. tostring(s))
    for j, t in ipairs(c.values) do
      fn(s, t[1], t[2], t[3], ("case %d.%d (%s)"):format(i, j, t[1]), c)
    end
  end
end

describe("random valid descriptions", function ()
  it("all compile", function ()
    for i, c in ipairs(allcases()) do
      local ok, err = pcall(bitwire.schema, c.desc)
      assert.is_true(ok, "case " .. i .. ": " .. tostring(err))
    end
  end)

  it("cover every supported kind, optional fields, defaults and nesting", function ()
    local seen = {}
    local function walk (f)
      seen[f[2] or f[1]] = true
      if f.optional then seen.optional = true end
      if f.default ~= nil then seen.default = true end
      if f.of then
        seen["array of " .. (type(f.of) == "string" and "type" or f.of[1])] = true
      end
    end
    for _, c in ipairs(allcases()) do
      for _, fields in pairs(c.desc) do
        for _, f in ipairs(fields) do walk(f) end
      end
    end
    for _, k in ipairs { "int", "uint", "bool", "float", "float32", "float64", "enum",
                         "string", "bytes", "array", "vector", "align", "check",
                         "T2", "T3", "T4", "optional", "default",
                         "array of type", "array of array", "array of int" } do
      assert.is_true(seen[k], "never generated: " .. k)
    end
  end)
end)

describe("schema:decode(schema:encode(v))", function ()
  it("gives v back after quantization", function ()
    each(function (s, name, v, e, where)
      local bytes = s:encode(name, v)
      local got, err, code = s:decode(name, bytes)
      assert(got, where .. ": own bytes rejected: " .. tostring(err) .. " " .. tostring(code))
      local ok, at = match(got, e, where)
      assert(ok, at)
    end)
  end)

  it("encodes the decoded value to the same bytes", function ()
    each(function (s, name, v, _, where)
      local bytes = s:encode(name, v)
      assert.equal(bytes, s:encode(name, s:decode(name, bytes)), where)
    end)
  end)

  it("decodes into an earlier value as a fresh decode does", function ()
    local last = {}
    each(function (s, name, v, _, where, c)
      local bytes = s:encode(name, v)
      local key = tostring(c) .. name
      local into = last[key]
      if into then
        local got = s:decode(name, bytes, { into = into })
        assert.equal(into, got, where)
        assert.same(s:decode(name, bytes), got, where)
      end
      last[key] = s:decode(name, bytes)
    end)
  end)

  it("round-trips as messages too", function ()
    each(function (s, name, v, _, where)
      local got, value = s:decode_message(s:encode_message(name, v))
      assert.equal(name, got, where)
      assert.same(s:decode(name, s:encode(name, v)), value, where)
    end)
  end)
end)

describe("sizes of random values", function ()
  it("bits(v) is what encode writes, within maxbits", function ()
    each(function (s, name, v, _, where)
      local bits, bytes = s:bits(name, v), s:encode(name, v)
      assert.equal((bits + 7) // 8, #bytes, where)
      local max = s:maxbits(name)
      if max then assert(bits <= max, where .. ": " .. bits .. " > maxbits " .. max) end
    end)
  end)
end)

describe("cut encodings of random values", function ()
  it("decode as truncated, never raising", function ()
    local R = lcg(SEED + 1)
    each(function (s, name, v, _, where)
      local bytes = s:encode(name, v)
      if #bytes == 0 then return end
      for _ = 1, 3 do
        local n = R.int(#bytes)
        local ok, got, err, code = pcall(s.decode, s, name, bytes:sub(1, n))
        assert(ok, where .. ": raised " .. tostring(got))
        assert(got == nil and code == "truncated",
          where .. " cut to " .. n .. ": " .. tostring(err))
        assert.matches("%(bit %d+%)$", err)
      end
    end)
  end)
end)

describe("random bytes against random schemas", function ()
  it("never raise and fail with a known code", function ()
    local CODES = { truncated = true, range = true, align = true, check = true,
                    utf8 = true, tag = true }
    local R = lcg(SEED + 2)
    each(function (s, name, _, _, where)
      for _ = 1, 4 do
        local b = randbytes(R, R.int(40))
        local ok, got, err, code = pcall(s.decode, s, name, b)
        assert(ok, where .. ": raised " .. tostring(got))
        if got == nil then
          assert(CODES[code], where .. ": code " .. tostring(code))
          assert.matches("%(bit %d+%)$", err)
        else
          -- whatever decodes is a value the schema can encode again
          local ok2, again = pcall(s.encode, s, name, got)
          assert(ok2, where .. ": decoded value does not encode: " .. tostring(again))
        end
      end
    end)
  end)
end)
