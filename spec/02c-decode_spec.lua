-- schema:decode: the hand-computed bytes read back, its failures (nil,
-- message, code) on bad and random bytes, the values it gives, and decode
-- into a table.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local snapshot_schema, entity = H.snapshot_schema, H.entity
local tohex, errorof, contains, lcg, randbytes =
  H.tohex, H.errorof, H.contains, H.lcg, H.randbytes

local function f32 (x) return (string.unpack("<f", string.pack("<f", x))) end

local KNOWN_CODES = { truncated = true, range = true, align = true,
  check = true, utf8 = true, tag = true, schema = true, crc = true }

describe("schema:decode", function ()
  local function schema ()
    return bitwire.schema {
      T = {
        { "a", "int", min = 0, max = 5 },                -- bits 0..2
        { "e", "enum", values = { "x", "y", "z" } },     -- bits 3..4
        { "align" },                                     -- bits 5..7
        { "s", "string", max = 10 },                     -- 8..11, align, bytes
        { "check" },
        { "f", "float", min = 0, max = 1, res = 0.3 },   -- 3 bits, miv 4
      },
    }
  end
  local VALUE = { a = 3, e = "y", s = "hé", f = 0.5 }
  local GOOD = "0b0368c3a97856341202"

  local function patch (bytes, i, byte)
    return bytes:sub(1, i - 1) .. string.char(byte) .. bytes:sub(i + 1)
  end

  it("reads what the hand-computed bytes say", function ()
    local s = schema()
    assert.equal(GOOD, tohex(s:encode("T", VALUE)))
    assert.same(VALUE, s:decode("T", s:encode("T", VALUE)))
  end)

  local FAIL = {
    { "an int above its range", function (b) return patch(b, 1, 0x07 | 0x08) end,
      "range", "a: 7 out of range [0, 5] (bit 0)" },
    { "an enum index past the last value", function (b) return patch(b, 1, 0x03 | 0x18) end,
      "range", "e: 3 out of range [0, 2] (bit 3)" },
    { "non-zero padding bits", function (b) return patch(b, 1, b:byte(1) | 0x80) end,
      "align", "non-zero padding bits (bit 5)" },
    { "a string length above max", function (b) return patch(b, 2, 0x0b) end,
      "range", "s: length 11 out of range [0, 10] (bit 8)" },
    { "malformed UTF-8", function (b) return patch(b, 4, 0xff) end,
      "utf8", "s: string with NUL or malformed UTF-8 (bit " },
    { "an interior NUL", function (b) return patch(b, 4, 0) end,
      "utf8", "s: string with NUL or malformed UTF-8 (bit " },
    { "a wrong check value", function (b) return patch(b, 6, 0x79) end,
      "check", "serialization check failed (bit 40)" },
    { "a quantized float above its step count", function (b) return patch(b, 10, 7) end,
      "range", "f: quantized 7 out of range [0, 4] (bit 72)" },
  }

  for _, c in ipairs(FAIL) do
    it("returns nil, message, code for " .. c[1], function ()
      local s = schema()
      local v, err, code = s:decode("T", c[2](s:encode("T", VALUE)))
      assert.is_nil(v)
      assert.equal(c[3], code)
      contains(c[4], err)
      assert.matches("%(bit %d+%)$", err)
    end)
  end

  it("returns truncated for every cut of a valid packet, never raising", function ()
    local s = snapshot_schema()
    local v = { tick = 99, entities = {} }
    for i = 1, 5 do
      v.entities[i] = entity(i)
      v.entities[i].name = ("n"):rep(i)
    end
    local bytes = s:encode("Snapshot", v)
    assert.same(v, s:decode("Snapshot", bytes))
    for n = 0, #bytes - 1 do
      local ok, got, err, code = pcall(s.decode, s, "Snapshot", bytes:sub(1, n))
      assert.is_true(ok, got)
      assert.is_nil(got)
      assert.equal("truncated", code)
      assert.matches("%(bit %d+%)$", err)
    end
  end)

  it("names the path and bit of a truncated field", function ()
    local s = snapshot_schema()
    local v = { tick = 1, entities = { entity(1), entity(2) } }
    v.entities[1].name = "abcdefgh"
    local bytes = s:encode("Snapshot", v)
    -- entity 1: bits 27..175 (its name ends at 112 + 64); entity 2's pos.y
    -- starts at 176 + 12 + 2 + 17 = 207, so 26 bytes hold only its first bit
    local got, err, code = s:decode("Snapshot", bytes:sub(1, 26))
    assert.is_nil(got)
    assert.equal("truncated", code)
    assert.equal("entities[2].pos.y: truncated input (bit 207)", err)
  end)

  it("refuses an array count the remaining bytes cannot hold", function ()
    local s = bitwire.schema { T = { { "xs", "array", of = { "uint", bits = 32 }, max = 1000 } } }
    local got, err, code = s:decode("T", "\255\3")     -- count 1023 > max
    assert.is_nil(got)
    assert.equal("range", code)
    contains("xs: count 1023 out of range [0, 1000]", err)
    got, err, code = s:decode("T", "\231\3" .. ("\0"):rep(8))  -- 999 of 32 bits
    assert.is_nil(got)
    assert.equal("truncated", code)
    contains("xs: count 999 needs", err)
  end)

  -- the value was written with its top bit cleared past 2^63 - 1 ("0 out
  -- of range [1, ...]") and wrapped below 0 from a negative min
  it("names the value an offset past the range makes, exactly", function ()
    for _, c in ipairs {
      { { "int", min = 1, max = (1 << 62) + 1 }, "9223372036854775808" },
      { { "int", min = -5, max = math.maxinteger }, "18446744073709551610" },
      { { "int", min = -(1 << 62), max = 1 << 62 }, "13835058055282163711" },
      { { "int", min = math.mininteger, max = -2 }, "-1" },
      { { "array", of = { "bool" }, min = 1, max = (1 << 62) + 1 }, "count 9223372036854775808" },
    } do
      local f = { "a" }
      for k, v in pairs(c[1]) do f[type(k) == "number" and k + 1 or k] = v end
      local s = bitwire.schema { T = { f } }
      local _, err, code = s:decode("T", ("\255"):rep(8))
      assert.equal("range", code)
      assert.equal(string.format("a: %s out of range [%d, %d] (bit 0)", c[2], f.min, f.max), err)
    end
  end)

  it("never raises on seeded random bytes", function ()
    local s = bitwire.schema {
      P = { { "x", "float", min = -10, max = 10, res = 0.001 },
            { "n", "int", min = -3, max = 1000 } },
      T = {
        { "u", "uint", bits = 13 }, { "b", "bool" },
        { "e", "enum", values = { "a", "b", "c" } },
        { "s", "string", max = 20, optional = true },
        { "by", "bytes", max = 9 },
        { "ps", "array", of = "P", max = 7 },
        { "v", "vector", count = 2, min = 0, max = 1, res = 0.01 },
        { "f32", "float32", optional = true }, { "f64", "float64" },
        { "check" }, { "tail", "int", min = 5, max = 11 },
      },
    }
    local rand = lcg(20240601)
    local outcomes = {}
    for i = 1, 5000 do
      local bytes = randbytes(rand, rand(48))
      local ok, v, err, code = pcall(s.decode, s, "T", bytes)
      assert.is_true(ok, v)
      if v == nil then
        assert.is_true(KNOWN_CODES[code], tostring(code))
        assert.matches("%(bit %d+%)$", err)
        outcomes[code] = true
      else
        assert.is_table(v)
        outcomes.ok = true
      end
      ok, v, err, code = pcall(s.decode_message, s, bytes)
      assert.is_true(ok, v)
      if v == nil then
        assert.is_string(err)
        assert.is_true(KNOWN_CODES[code], tostring(code))
      end
      if i == 1 then assert.is_nil(s:decode("T", "")) end
    end
    assert.is_true(outcomes.truncated)
    assert.is_true(outcomes.range)
  end)

  it("accepts trailing bytes after the value", function ()
    local s = bitwire.schema { T = { { "x", "int", min = 0, max = 9 } } }
    assert.same({ x = 1 }, s:decode("T", "\1\0\0"))
  end)

  it("raises on bad arguments", function ()
    local s = schema()
    contains("unknown type 'Nope'", errorof(s.decode, s, "Nope", ""))
    contains("string expected, got table", errorof(s.decode, s, "T", {}))
    contains("'into' must be a table", errorof(s.decode, s, "T", GOOD, { into = 5 }))
    contains("table expected, got number", errorof(s.decode, s, "T", GOOD, 5))
    -- options a metatable's __index holds are read, as lua_getfield reads
    local inherited = setmetatable({}, { __index = { max_values = 1 } })
    assert.is_nil((s:decode("T", GOOD, inherited)))
    assert.is_nil((s:decode("T", GOOD, { max_values = 1 })))
    -- a misspelt limit is not a silent default
    local want = "unknown option 'max_value' (known: baseline, into, max_values, share, version)"
    contains(want, errorof(s.decode, s, "T", GOOD, { max_value = 1 }))
    contains(want, errorof(s.decode_message, s, "", { max_value = 1 }))
    -- a name with a NUL past an option's is no spelling of it
    contains("unknown option 'max_values\\0x'", errorof(s.decode, s, "T", GOOD,
      { ["max_values\0x"] = 1 }))
    contains("unknown option 'baseline\\0'", errorof(s.encode, s, "T", {},
      { ["baseline\0"] = {} }))
  end)
end)

describe("decoded values", function ()
  local s = bitwire.schema {
    P = { { "x", "int", min = 0, max = 9 }, { "y", "int", min = 0, max = 9 } },
    T = {
      { "i", "int", min = -5, max = 5 }, { "u", "uint", bits = 64 },
      { "e", "enum", values = { "a", "b" } },
      { "f", "float", min = -512, max = 512, res = 0.01 },
      { "f32", "float32" }, { "f64", "float64" },
      { "p", "P" }, { "ps", "array", of = "P", max = 4 },
      { "ns", "array", of = { "int", min = 0, max = 9 }, max = 4 },
    },
  }
  local V = { i = -5, u = 1 << 63, e = "b", f = 0.1, f32 = 0.1, f64 = 0.1,
              p = { x = 1, y = 2 }, ps = { { x = 3, y = 4 }, { x = 5, y = 6 } },
              ns = { 7, 8, 9 } }

  it("are fresh tables on every decode", function ()
    local bytes = s:encode("T", V)
    local a, b = s:decode("T", bytes), s:decode("T", bytes)
    assert.is_false(rawequal(a, b))
    assert.is_false(rawequal(a.p, b.p))
    assert.is_false(rawequal(a.ps, b.ps))
    assert.is_false(rawequal(a.ps[1], b.ps[1]))
  end)

  it("have arrays numbered from 1", function ()
    local v = s:decode("T", s:encode("T", V))
    assert.is_nil(v.ns[0])
    assert.same({ 7, 8, 9 }, v.ns)
    assert.equal(3, #v.ns)
    assert.same({ x = 5, y = 6 }, v.ps[2])
  end)

  it("keep integers integers", function ()
    local v = s:decode("T", s:encode("T", V))
    for _, k in ipairs { "i", "u" } do assert.equal("integer", math.type(v[k]), k) end
    assert.equal("integer", math.type(v.p.x))
    assert.equal("integer", math.type(v.ns[1]))
    assert.equal(math.mininteger, v.u)       -- 2^63 as the same 64 bits
    assert.equal("b", v.e)
  end)

  it("give floats as the quantized value", function ()
    local v = s:decode("T", s:encode("T", V))
    local w = bitwire.writer()
    w:compressed_float(0.1, -512, 512, 0.01)
    assert.equal(bitwire.reader(w:tostring()):compressed_float(-512, 512, 0.01), v.f)
    assert.is_true(math.abs(v.f - 0.1) <= 0.005)
    assert.equal("float", math.type(v.f))
    assert.equal(f32(0.1), v.f32)
    assert.equal(0.1, v.f64)
  end)

  it("encode again, even where float32 rounds past the declared range", function ()
    -- 46.9 is 46.900001525879 in float32: above max in a double
    local q = bitwire.schema { T = { { "x", "float", min = 43.9, max = 46.9, res = 0.1 } } }
    local bytes = q:encode("T", { x = 46.9 })
    local v = q:decode("T", bytes)
    assert.is_true(v.x > 46.9)
    assert.equal(bytes, q:encode("T", v))
    contains("x: 47.0 out of range", errorof(q.encode, q, "T", { x = 47 }))
  end)

  it("omit an absent optional field", function ()
    local o = bitwire.schema { T = { { "x", "bool", optional = true }, { "y", "bool" } } }
    local v = o:decode("T", o:encode("T", { y = true }))
    assert.same({ y = true }, v)
  end)
end)

describe("schema:decode into", function ()
  local s = bitwire.schema {
    P = { { "x", "int", min = 0, max = 9 }, { "y", "int", min = 0, max = 9 } },
    T = {
      { "p", "P" }, { "opt", "P", optional = true },
      { "ps", "array", of = "P", max = 5 },
      { "ns", "array", of = { "int", min = 0, max = 9 }, max = 5 },
      { "grid", "array", of = { "array", of = { "bool" }, max = 3 }, max = 3 },
      { "d", "int", min = 0, max = 9, default = 4 },
    },
  }
  local A = { p = { x = 1, y = 2 }, opt = { x = 3, y = 4 },
              ps = { { x = 1, y = 1 }, { x = 2, y = 2 }, { x = 3, y = 3 } },
              ns = { 1, 2, 3 }, grid = { { true }, { false, true } } }
  local B = { p = { x = 5, y = 6 }, ps = { { x = 7, y = 7 } }, ns = { 4 },
              grid = { { false, false, true } }, d = 9 }

  it("gives the same value as a fresh decode", function ()
    local t = s:decode("T", s:encode("T", A))
    local b = s:encode("T", B)
    local got = s:decode("T", b, { into = t })
    assert.equal(t, got)
    assert.same(s:decode("T", b), t)
  end)

  it("reuses the nested tables", function ()
    local t = s:decode("T", s:encode("T", A))
    local p, ps, ps1, ns, grid, grid1 = t.p, t.ps, t.ps[1], t.ns, t.grid, t.grid[1]
    s:decode("T", s:encode("T", B), { into = t })
    assert.is_true(rawequal(p, t.p))
    assert.is_true(rawequal(ps, t.ps))
    assert.is_true(rawequal(ps1, t.ps[1]))
    assert.is_true(rawequal(ns, t.ns))
    assert.is_true(rawequal(grid, t.grid))
    assert.is_true(rawequal(grid1, t.grid[1]))
  end)

  it("clears an absent optional field", function ()
    local t = s:decode("T", s:encode("T", A))
    assert.is_table(t.opt)
    s:decode("T", s:encode("T", B), { into = t })
    assert.is_nil(t.opt)
  end)

  it("trims arrays that got shorter", function ()
    local t = s:decode("T", s:encode("T", A))
    s:decode("T", s:encode("T", B), { into = t })
    assert.equal(1, #t.ps)
    assert.is_nil(t.ps[2])
    assert.is_nil(t.ps[3])
    assert.same({ 4 }, t.ns)
    assert.same({ { false, false, true } }, t.grid)
  end)

  it("fills a table that starts empty", function ()
    local t = {}
    s:decode("T", s:encode("T", A), { into = t })
    assert.same(s:decode("T", s:encode("T", A)), t)
  end)

  it("returns nil, message, code on bad bytes", function ()
    local t = {}
    local v, err, code = s:decode("T", "", { into = t })
    assert.is_nil(v)
    assert.equal("truncated", code)
    assert.matches("%(bit 0%)$", err)
  end)
end)
