-- Game-state field kinds: tiered integers, smallest-three quaternions and
-- vectors (fixed arrays of quantized floats).
local bitwire = require "bitwire"
local H = require "spec.helpers"
local fails, KNOWN_CODES = H.fails, H.KNOWN_CODES
local tohex, errorof, contains, lcg, randbytes =
  H.tohex, H.errorof, H.contains, H.lcg, H.randbytes

------------------------------------------------------------------------------
-- Tiered integers
------------------------------------------------------------------------------
describe("tiered", function ()
  local s = bitwire.schema {
    T = { { "t", "tiered", tiers = { 0, 2, 3, 4, 5, 6 }, min = 1 } },
    C = { { "t", "tiered", tiers = { 0, 2, 3, 4, 5, 6 }, min = 1, max = 100 } },
    N = { { "t", "tiered", tiers = { 1, 8 }, min = -10 } },
    S = { { "t", "tiered", tiers = { 0, 2, 3 }, max = 3 } },
  }
  -- value -> bits: i zero flags and a one for tier i, none for the last
  local EDGES = {
    { 1, 1 }, { 2, 4 }, { 5, 4 }, { 6, 6 }, { 13, 6 }, { 14, 8 }, { 29, 8 },
    { 30, 10 }, { 61, 10 }, { 62, 11 }, { 125, 11 },
  }
  for _, e in ipairs(EDGES) do
    it("spends " .. e[2] .. " bits on " .. e[1], function ()
      local v = { t = e[1] }
      assert.equal(e[2], s:bits("T", v))
      assert.same(v, s:decode("T", s:encode("T", v)))
    end)
  end

  it("covers min .. min + sum(2^bits) - 1 and says so in maxbits", function ()
    assert.equal(11, s:maxbits("T"))
    contains("t: 0 out of range [1, 125]", errorof(s.encode, s, "T", { t = 0 }))
    contains("t: 126 out of range [1, 125]", errorof(s.encode, s, "T", { t = 126 }))
    contains("t: 101 out of range [1, 100]", errorof(s.encode, s, "C", { t = 101 }))
    contains("expected an integer", errorof(s.encode, s, "T", { t = 1.5 }))
    contains("expected an integer", errorof(s.encode, s, "T", { t = "1" }))
  end)

  it("writes flags then the offset in the tier, LSB first", function ()
    assert.equal("01", tohex(s:encode("T", { t = 1 })))
    assert.equal("04", tohex(s:encode("T", { t = 6 })))     -- 0 0 1 000
    assert.equal("0c", tohex(s:encode("T", { t = 7 })))     -- 0 0 1 100
    assert.equal("e007", tohex(s:encode("T", { t = 125 }))) -- 00000 111111
    -- a declared max shortens the last tier: [62, 100] in 6 bits
    assert.equal(11, s:bits("C", { t = 100 }))
  end)

  it("works with a negative min", function ()
    -- [-10, -9] in '1' + 1 bit, then [-8, 247] in '0' + 8 bits
    for _, v in ipairs { -10, -9, -8, 247 } do
      assert.same({ t = v }, s:decode("N", s:encode("N", { t = v })))
    end
    assert.equal(2, s:bits("N", { t = -9 }))
    assert.equal(9, s:bits("N", { t = -8 }))
    assert.equal(9, s:maxbits("N"))
    contains("248 out of range [-10, 247]", errorof(s.encode, s, "N", { t = 248 }))
  end)

  it("refuses an offset past max in the last tier", function ()
    local w = bitwire.writer()
    w:bits(0, 5) w:bits(39, 6)            -- 62 + 39 = 101 > 100
    fails("range", "t: value out of range (bit 0)", s:decode("C", w:tostring()))
    w = bitwire.writer()
    w:bits(0, 5) w:bits(38, 6)
    assert.same({ t = 100 }, s:decode("C", w:tostring()))
  end)

  it("refuses flags that pick a tier wholly past max", function ()
    -- tiers {0, 2, 3} clipped to [0, 3]: tier 1 ends at max, tier 2 is empty
    local w = bitwire.writer()
    w:bits(0, 2) w:bits(5, 64)
    fails("range", "t: value out of range (bit 0)", s:decode("S", w:tostring()))
    for v = 0, 3 do assert.same({ t = v }, s:decode("S", s:encode("S", { t = v }))) end
  end)

  it("never raises on seeded random bytes", function ()
    local rand = lcg(11)
    for _ = 1, 2000 do
      local data = randbytes(rand, rand(4))
      for _, name in ipairs { "T", "C", "N", "S" } do
        local v, _, code = s:decode(name, data)
        if v then
          local lo = name == "N" and -10 or name == "S" and 0 or 1
          local hi = ({ T = 125, C = 100, N = 247, S = 3 })[name]
          assert.is_true(v.t >= lo and v.t <= hi, name .. " " .. v.t)
        else
          assert.is_true(KNOWN_CODES[code])
        end
      end
    end
  end)

  it("validates its options when the schema is built", function ()
    local function build (f) return errorof(bitwire.schema, { T = { f } }) end
    contains("'tiers' must be a list", build { "t", "tiered" })
    contains("max 200 beyond what the tiers cover (125)",
      build { "t", "tiered", tiers = { 0, 2, 3, 4, 5, 6 }, min = 1, max = 200 })
    contains("min 5 > max 4", build { "t", "tiered", tiers = { 3 }, min = 5, max = 4 })
  end)
end)

------------------------------------------------------------------------------
-- Quaternions: smallest three
------------------------------------------------------------------------------
describe("quat", function ()
  local s = bitwire.schema {
    Q = { { "rot", "quat", bits = 9 } },
    Q15 = { { "rot", "quat", bits = 15 } },
  }

  local function len (q)
    return math.sqrt(q[1] ^ 2 + q[2] ^ 2 + q[3] ^ 2 + q[4] ^ 2)
  end
  local function normalized (q)
    local l = len(q)
    return { q[1] / l, q[2] / l, q[3] / l, q[4] / l }
  end

  it("sends 2 bits of the largest's index and three components", function ()
    assert.equal(2 + 3 * 9, s:bits("Q", { rot = { 0, 0, 0, 1 } }))
    assert.equal(29, s:maxbits("Q"))
    assert.equal(2 + 45, s:maxbits("Q15"))
    -- largest is w (3); x, y, z of 0 quantize to round(0.5 * 511) = 256
    local w = bitwire.writer()
    w:bits(3, 2) w:bits(256, 9) w:bits(256, 9) w:bits(256, 9)
    assert.equal(tohex(w:tostring()), tohex(s:encode("Q", { rot = { 0, 0, 0, 1 } })))
  end)

  it("encodes q and -q the same", function ()
    local rand = lcg(3)
    for _ = 1, 200 do
      local q = {}
      for i = 1, 4 do q[i] = rand(2001) / 1000 - 1 end
      if len(q) > 0 then
        local neg = { -q[1], -q[2], -q[3], -q[4] }
        assert.equal(s:encode("Q", { rot = q }), s:encode("Q", { rot = neg }))
      end
    end
  end)

  it("decodes a unit quaternion near the normalized input, largest positive", function ()
    local rand = lcg(5)
    for _ = 1, 500 do
      local q = {}
      for i = 1, 4 do q[i] = rand(2001) / 1000 - 1 end
      if len(q) > 1e-3 then
        local n = normalized(q)
        local big = 1
        for i = 2, 4 do if math.abs(n[i]) > math.abs(n[big]) then big = i end end
        if n[big] < 0 then for i = 1, 4 do n[i] = -n[i] end end
        for _, name in ipairs { "Q", "Q15" } do
          local out = s:decode(name, s:encode(name, { rot = q })).rot
          assert.equal(4, #out)
          assert.is_true(math.abs(len(out) - 1) < 1e-12)
          local tol = name == "Q" and 0.006 or 0.0002
          for i = 1, 4 do
            assert.is_true(math.abs(out[i] - n[i]) < tol,
              string.format("%s %d: %g vs %g", name, i, out[i], n[i]))
          end
        end
      end
    end
  end)

  it("normalizes its input", function ()
    local a = s:decode("Q", s:encode("Q", { rot = { 0, 0, 0, 2 } })).rot
    local b = s:decode("Q", s:encode("Q", { rot = { 0, 0, 0, 1 } })).rot
    assert.same(a, b)
    assert.is_true(a[4] > 0.999)
  end)

  -- issue 15 item 11: a decoded quaternion encodes back to its own bits;
  -- codes no encoder makes (squares past 1, a small component above the
  -- rebuilt largest) are refused at the code's first bit
  it("refuses codes no encoder makes, so decode -> encode is a fixed point", function ()
    local w = bitwire.writer()
    w:bits(0, 2) w:bits(511, 9) w:bits(511, 9) w:bits(511, 9)
    local v, msg, code = s:decode("Q", w:tostring())
    assert.is_nil(v)
    assert.equal("range", code)
    assert.matches("rot: quaternion code not in canonical form %(bit 0%)", msg)
    local rand = lcg(13)
    local accepted = 0
    for _ = 1, 2000 do
      local bytes = randbytes(rand, 4)
      local got, _, why = s:decode("Q", bytes)
      if got then
        accepted = accepted + 1
        assert.is_true(math.abs(len(got.rot) - 1) < 1e-12)
        -- the 29 bits come back (the last 3 bits of the packet are padding)
        local again = s:encode("Q", got)
        assert.equal(bytes:sub(1, 3), again:sub(1, 3))
        assert.equal(bytes:byte(4) & 0x1f, again:byte(4))
      else
        assert.equal("range", why)
      end
    end
    assert.is_true(accepted > 500 and accepted < 2000)
    fails("truncated", nil, s:decode("Q", "\0\0\0"))
  end)

  it("encodes near-ties between components to codes that come back", function ()
    local r = lcg(29)
    local function rand () return r(1 << 24) / (1 << 24) end
    for _ = 1, 3000 do
      local a = rand() * 2 - 1
      local q = { a, a * (1 + (rand() - 0.5) * 1e-3), rand() * 2 - 1, rand() * 2 - 1 }
      for _, name in ipairs { "Q", "Q15" } do
        local bytes = s:encode(name, { rot = q })
        local got = assert(s:decode(name, bytes))
        assert.equal(bytes, s:encode(name, got))
      end
    end
  end)

  local BAD = {
    { "a zero quaternion", { 0, 0, 0, 0 }, "quaternion has no length" },
    { "a NaN component", { 0 / 0, 0, 0, 1 }, "quaternion has no length" },
    { "an infinite component", { math.huge, 0, 0, 1 }, "quaternion has no length" },
    { "three components", { 0, 0, 1 }, "quaternion needs 4 components, got 3" },
    { "five components", { 0, 0, 0, 1, 0 }, "quaternion needs 4 components, got 5" },
    { "a string component", { 0, "0", 0, 1 },
      "quaternion component 2 is not a number" },
    { "a number", 1, "expected a table {x, y, z, w}, got number" },
  }
  for _, c in ipairs(BAD) do
    it("raises on " .. c[1], function ()
      contains("rot: " .. c[3], errorof(s.encode, s, "Q", { rot = c[2] }))
    end)
  end

  it("validates bits when the schema is built", function ()
    contains("'bits' = 1 outside [2, 31]",
      errorof(bitwire.schema, { Q = { { "r", "quat", bits = 1 } } }))
    contains("'bits' = 32 outside [2, 31]",
      errorof(bitwire.schema, { Q = { { "r", "quat", bits = 32 } } }))
  end)
end)

------------------------------------------------------------------------------
-- Vectors: fixed arrays of quantized floats
------------------------------------------------------------------------------
describe("vector", function ()
  local s = bitwire.schema {
    V = { { "pos", "vector", count = 3, min = -512, max = 512, res = 0.01 } },
    F = {
      { "x", "float", min = -512, max = 512, res = 0.01 },
      { "y", "float", min = -512, max = 512, res = 0.01 },
      { "z", "float", min = -512, max = 512, res = 0.01 },
    },
  }

  it("is three compressed floats on the wire", function ()
    assert.equal(3 * 17, s:maxbits("V"))
    local v = { pos = { 1.25, -300.5, 511.99 } }
    assert.equal(s:encode("F", { x = 1.25, y = -300.5, z = 511.99 }), s:encode("V", v))
    local out = s:decode("V", s:encode("V", v)).pos
    assert.equal(3, #out)
    for i = 1, 3 do assert.is_true(math.abs(out[i] - v.pos[i]) <= 0.01) end
  end)

  it("raises on a wrong count or a value out of range", function ()
    contains("pos: count of 2 must have exactly 3",
      errorof(s.encode, s, "V", { pos = { 1, 2 } }))
    contains("pos: count of 4 must have exactly 3",
      errorof(s.encode, s, "V", { pos = { 1, 2, 3, 4 } }))
    contains("pos[2]: ", errorof(s.encode, s, "V", { pos = { 1, 600, 3 } }))
  end)

  it("needs count, min, max and res", function ()
    contains("vector needs 'count'",
      errorof(bitwire.schema, { V = { { "p", "vector", min = 0, max = 1, res = 0.1 } } }))
    contains("'res' must be a finite number",
      errorof(bitwire.schema, { V = { { "p", "vector", count = 3, min = 0, max = 1 } } }))
  end)
end)
