-- Angles that wrap, and relative deltas: in a delta, a quantized float,
-- angle or quaternion is sent as a signed difference from its baseline value
-- in prefix tiers (WIRE.md, "Relative differences").
local bitwire = require "bitwire"
local H = require "spec.helpers"
local errorof, contains, lcg = H.errorof, H.contains, H.lcg

local PI2 = 2 * math.pi

local function fails (code, needle, v, err, c)
  assert.is_nil(v)
  assert.equal(code, c)
  if needle then contains(needle, err) end
end

describe("angle", function ()
  local s = bitwire.schema {
    A = { { "yaw", "angle", bits = 10 } },
    D = { { "deg", "angle", bits = 8, unit = "deg" } },
    O = { { "yaw", "angle", bits = 6, optional = true },
          { "pitch", "angle", bits = 6, default = 1.5 } },
  }

  local function code (name, v)   -- the bits sent
    local bytes = s:encode(name, v)
    local n = 0
    for i = #bytes, 1, -1 do n = n << 8 | bytes:byte(i) end
    return n
  end

  it("wraps: 2 pi - epsilon is step 0, not the top step", function ()
    assert.equal(0, code("A", { yaw = PI2 - 1e-9 }))
    assert.equal(0, code("A", { yaw = 0 }))
    assert.equal(0, code("A", { yaw = -1e-9 }))
    assert.equal(512, code("A", { yaw = math.pi }))
    assert.equal(1023, code("A", { yaw = PI2 - PI2 / 1024 }))
    assert.equal(10, s:bits("A", { yaw = 1 }))
  end)

  it("wraps any finite input into [0, period)", function ()
    assert.equal(768, code("A", { yaw = -math.pi / 2 }))
    assert.equal(256, code("A", { yaw = 7 * PI2 + math.pi / 2 }))
    assert.equal(192, code("D", { deg = -90 }))
    assert.equal(0, code("D", { deg = 359.9 }))
    assert.equal(64, code("D", { deg = 3690 }))   -- 10 turns and 90 degrees
    local v = s:decode("D", s:encode("D", { deg = -90 }))
    assert.equal(270, v.deg)
    v = s:decode("A", s:encode("A", { yaw = 1e9 }))
    assert.is_true(v.yaw >= 0 and v.yaw < PI2)
  end)

  it("decodes to values that encode back to the same step", function ()
    for q = 0, 1023 do
      local bytes = string.pack("<I2", q)
      local v = assert(s:decode("A", bytes))
      assert.equal(q * PI2 / 1024, v.yaw)
      assert.equal(bytes, s:encode("A", v))
    end
  end)

  it("sits among fixed-width fields", function ()
    local m = bitwire.schema {
      M = { { "a", "int", min = 0, max = 7 }, { "yaw", "angle", bits = 10 },
            { "b", "bool" }, { "deg", "angle", bits = 4, unit = "deg" },
            { "f", "float", min = 0, max = 1, res = 0.5 } },
    }
    local bytes = m:encode("M", { a = 5, yaw = -math.pi / 2, b = true, deg = 45, f = 1 })
    assert.equal(3 + 10 + 1 + 4 + 2, m:bits("M", { a = 5, yaw = 0, b = true, deg = 0, f = 1 }))
    -- 5 | 768 << 3 | 1 << 13 | 2 << 14 | 2 << 18
    assert.equal(string.pack("<I3", 5 | 768 << 3 | 1 << 13 | 2 << 14 | 2 << 18), bytes)
    assert.same({ a = 5, yaw = 1.5 * math.pi, b = true, deg = 45, f = 1 }, m:decode("M", bytes))
  end)

  it("decodes into a reused table as a fresh decode does", function ()
    local m = bitwire.schema {
      M = { { "yaw", "angle", bits = 10 }, { "rot", "quat", bits = 9 },
            { "deg", "angle", bits = 6, unit = "deg", optional = true } },
    }
    local t = {}
    for i = 1, 3 do
      local v = { yaw = i, rot = { 0, i / 10, 0, 1 }, deg = i ~= 2 and i * 100 or nil }
      local bytes = m:encode("M", v)
      local got = assert(m:decode("M", bytes, { into = t }))
      assert.equal(t, got)
      assert.same(m:decode("M", bytes), got)
    end
  end)

  it("refuses what is not a finite number", function ()
    for _, bad in ipairs { 0 / 0, math.huge, -math.huge } do
      contains("yaw: angle", errorof(s.encode, s, "A", { yaw = bad }))
    end
    contains("expected a number, got string", errorof(s.encode, s, "A", { yaw = "1" }))
  end)

  it("is optional, has defaults and shows in the program", function ()
    local v = s:decode("O", s:encode("O", {}))
    assert.is_nil(v.yaw)
    assert.equal(1.5 // (PI2 / 64) * (PI2 / 64), v.pitch)
    local f = s:program().byname.D.fields[1]
    assert.equal("angle", f.kind)
    assert.equal(8, f.bits)
    assert.equal(360, f.period)
    assert.equal("deg", f.unit)
    assert.equal(PI2, s:program().byname.A.fields[1].period)
  end)

  it("refuses bad descriptions", function ()
    for _, d in ipairs {
      { { "a", "angle" } }, { { "a", "angle", bits = 0 } },
      { { "a", "angle", bits = 33 } }, { { "a", "angle", bits = 8, unit = "grad" } },
      { { "a", "angle", bits = 8, default = 0 / 0 } },
      { { "a", "angle", bits = 8, min = 0 } },
    } do
      assert.is_truthy(errorof(bitwire.schema, { T = d }))
    end
  end)
end)

describe("relative deltas", function ()
  local function schema (tiers)
    return bitwire.schema {
      Pos = {
        { "x", "float", min = -256, max = 255, res = 1 / 512, delta = "relative",
          tiers = tiers },
        { "y", "float", min = -256, max = 255, res = 1 / 512 },
      },
      E = {
        { "pos", "Pos" },
        { "yaw", "angle", bits = 10, delta = "relative" },
        { "rot", "quat", bits = 9, delta = "relative" },
        { "hp", "float", min = 0, max = 100, res = 0.5, delta = "relative",
          optional = true },
      },
      Snap = { { "e", "sparse", of = "E", max = 16 } },
    }
  end
  local s = schema()

  local function check (name, v, b, opts)
    local bytes = s:encode(name, v, { baseline = b })
    local db = assert(s:decode(name, s:encode(name, b)))
    local got = assert(s:decode(name, bytes, { baseline = db }))
    assert.same(s:decode(name, s:encode(name, v)), got)
    if opts and opts.bits then assert.equal(opts.bits, s:bits(name, v, { baseline = b })) end
    return got
  end

  local base = { pos = { x = 10, y = 5 }, yaw = 0.5, rot = { 0, 0, 0, 1 }, hp = 50 }

  it("sends a small float difference in the first tier", function ()
    -- x: changed bit, tier flag 1, z = 2 * 3 = 6 in 3 bits; y unchanged
    local v = { pos = { x = 10 + 3 / 512, y = 5 }, yaw = 0.5, rot = { 0, 0, 0, 1 }, hp = 50 }
    check("E", v, base, { bits = 1 + (1 + 1 + 3) + 1 + 1 + 1 + 1 })
    -- a non-relative field is sent whole: 19 bits
    v.pos.y = 5 + 1 / 512
    check("E", v, base, { bits = 1 + (1 + 4) + (1 + 18) + 1 + 1 + 1 })
  end)

  it("picks later tiers, then the escape, by the size of the difference", function ()
    local sizes = {}
    for _, steps in ipairs { 1, -4, 5, 20, -20, 100, 500, -500, 5000 } do
      local v = { pos = { x = 10 + steps / 512, y = 5 }, yaw = 0.5, rot = { 0, 0, 0, 1 }, hp = 50 }
      sizes[#sizes + 1] = s:bits("E", v, { baseline = base }) - 6
      check("E", v, base)
    end
    -- tiers {3, 5, 7, 9} of z: 0..7, 8..39, 40..167, 168..679, then 4 + 18
    -- (z = 2d, or -2d - 1 below the baseline)
    assert.same({ 4, 4, 7, 10, 7, 13, 22, 22, 22 }, sizes)
  end)

  it("honours the field's own tiers", function ()
    local t = schema { 12 }
    local v = { pos = { x = 10 + 500 / 512, y = 5 }, yaw = 0.5, rot = { 0, 0, 0, 1 }, hp = 50 }
    -- z = 1000: one tier of 12 bits after its flag
    assert.equal(1 + (1 + 1 + 12) + 1 + 1 + 1 + 1,
      t:bits("E", v, { baseline = base }))
    assert.same(t:program().byname.Pos.fields[1].tiers, { 12 })
    assert.same(s:program().byname.Pos.fields[1].tiers, { 3, 5, 7, 9 })
    assert.is_true(s:program().byname.Pos.fields[1].relative)
    assert.is_nil(s:program().byname.Pos.fields[2].relative)
  end)

  it("takes the short way round for angles", function ()
    local v = { pos = base.pos, yaw = PI2 - 0.5 / 1024 * PI2, rot = { 0, 0, 0, 1 }, hp = 50 }
    local b = { pos = base.pos, yaw = 1 / 1024 * PI2, rot = { 0, 0, 0, 1 }, hp = 50 }
    -- step 1 to step 0 of 1024 is -1 (z 1); 1 to 1023 is -2 (z 3)
    check("E", v, b, { bits = 1 + (1 + 1 + 3) + 1 + 1 })
    v.yaw = PI2 - 1 / 1024 * PI2
    local got = check("E", v, b, { bits = 1 + (1 + 1 + 3) + 1 + 1 })
    assert.equal(1023 / 1024 * PI2, got.yaw)
  end)

  it("sends quaternion components as differences while the largest stays", function ()
    local v = { pos = base.pos, yaw = 0.5, rot = { 0.01, -0.01, 0.005, 1 }, hp = 50 }
    local bits = s:bits("E", v, { baseline = base })
    assert.is_true(bits < 4 + 1 + 1 + 29, bits)
    check("E", v, base)
    -- the largest changes: a 0 flag, then the whole code
    v.rot = { 1, 0.01, 0, 0 }
    assert.equal(1 + 1 + (1 + 1 + 29) + 1, s:bits("E", v, { baseline = base }))
    check("E", v, base)
  end)

  it("sends the value whole when the baseline has none to start from", function ()
    local b = { pos = base.pos, yaw = 0.5, rot = { 0, 0, 0, 1 } }   -- no hp
    local v = { pos = base.pos, yaw = 0.5, rot = { 0, 0, 0, 1 }, hp = 50.5 }
    check("E", v, b, { bits = 1 + 1 + 1 + 1 + 1 + 8 })
    -- and removing it is a presence bit
    check("E", b, v, { bits = 1 + 1 + 1 + 1 + 1 })
  end)

  it("starts from the default of a field a baseline of older definitions lacks", function ()
    local fields = { { "id", "int", min = 0, max = 9 } }
    local function defs (extra)
      local e = { fields[1], extra }
      return bitwire.schema { E = e, S = { { "e", "E" }, { "sp", "sparse", of = "E", max = 3 } } }
    end
    local old = defs(nil)
    for _, f in ipairs {
      { "x", "float", min = -10, max = 10, res = 0.5, delta = "relative", default = 3 },
      { "a", "angle", bits = 8, delta = "relative", default = 1 },
    } do
      local new = defs(f)
      local v = { e = { id = 1, [f[1]] = 4 }, sp = { [1] = { id = 1, [f[1]] = 4 } } }
      local sent = { e = { id = 1 }, sp = { [1] = { id = 1 } } }
      local ob = assert(old:decode("S", old:encode("S", sent)))
      local d = new:encode("S", v, { baseline = sent })
      local want = new:decode("S", new:encode("S", v))
      assert.same(want, assert(new:decode("S", d, { baseline = ob })))
      -- a baseline decoded by the new definitions starts from the same value
      local nb = assert(new:decode("S", new:encode("S", sent)))
      assert.equal(d, new:encode("S", v, { baseline = nb }))
      assert.same(want, assert(new:decode("S", d, { baseline = nb })))
    end
  end)

  it("decodes deltas in sparse slots, framed, against the client's copy", function ()
    local rand = lcg(77)
    local function r (n) return rand(1 << 20) / (1 << 20) * n end
    local ents, sent, got = {}, nil, nil
    local p = bitwire.protocol(s, { id = 9, deltas = true })
    for i = 1, 16 do
      ents[i] = { x = r(100), y = r(100), yaw = r(7), q = { r(1), r(1), r(1), 1 } }
    end
    for tick = 1, 40 do
      local e = {}
      for i = 1, 16 do
        local o = ents[i]
        if i % 3 ~= 0 then
          o.x, o.y, o.yaw = o.x + r(2) - 1, o.y + r(0.01), o.yaw + r(1) - 0.5
          o.q[1], o.q[2] = o.q[1] + r(0.1) - 0.05, o.q[3] + r(0.02)
        end
        if i % 5 ~= 0 or tick % 2 == 0 then
          e[i] = { pos = { x = o.x, y = o.y }, yaw = o.yaw,
                   rot = { o.q[1], o.q[2], o.q[3], o.q[4] },
                   hp = i % 4 ~= 0 and (tick * i) % 100 or nil }
        end
      end
      local v = { e = e }
      local pk = p:encode("Snap", v, sent and { baseline = sent, baseline_id = tick - 1 })
      local name, out = p:decode(pk, { baselines = { [tick - 1] = got } })
      assert.equal("Snap", name)
      assert.same(s:decode("Snap", s:encode("Snap", v)), out)
      sent, got = v, out
    end
  end)

  it("sends sparse slots of relative numbers as differences", function ()
    local t = bitwire.schema {
      T = { { "a", "sparse", of = { "angle", bits = 8, delta = "relative" }, max = 4,
              encoding = "mask" } },
    }
    local b = { a = { [1] = 0.1, [2] = 1, [4] = 2 } }
    local v = { a = { [1] = 0.1 + PI2 / 256, [3] = 3, [4] = 2 } }
    -- changed bit, 4 mask bits; slot 1: present, tier 0 (z 2); slot 2:
    -- absent; slot 3: present, no baseline value, whole
    assert.equal(1 + 4 + (1 + 1 + 3) + 1 + (1 + 8), t:bits("T", v, { baseline = b }))
    local db = t:decode("T", t:encode("T", b))
    local got = assert(t:decode("T", t:encode("T", v, { baseline = b }), { baseline = db }))
    assert.same(t:decode("T", t:encode("T", v)), got)
  end)

  it("refuses hostile differences that leave the range", function ()
    local b = { pos = { x = 254.99, y = 0 }, yaw = 0, rot = { 0, 0, 0, 1 }, hp = 99.5 }
    local db = s:decode("E", s:encode("E", b))
    -- hp from 99.5 (code 199): +1 step to 200 is fine, +2 leaves [0, 200]
    local w = bitwire.writer()
    w:bits(0, 1) w:bits(0, 1) w:bits(0, 1) w:bits(1, 1) w:bits(1, 1)
    w:bits(1, 1) w:bits(2, 3)       -- hp: changed, present, tier 0, z = 2: +1
    assert.equal(100, s:decode("E", w:tostring(), { baseline = db }).hp)
    w = bitwire.writer()
    w:bits(0, 1) w:bits(0, 1) w:bits(0, 1) w:bits(1, 1) w:bits(1, 1)
    w:bits(1, 1) w:bits(4, 3)       -- z = 4: +2
    fails("range", "hp: difference from the baseline leaves the range (bit 5)",
      s:decode("E", w:tostring(), { baseline = db }))
    -- random bytes never raise
    local rand = lcg(5)
    for _ = 1, 2000 do
      local bytes = H.randbytes(rand, 1 + rand(12))
      local ok = pcall(s.decode, s, "E", bytes, { baseline = db })
      assert.is_true(ok)
    end
  end)

  -- a quat component's difference out of range was called a code not in
  -- canonical form, the failure of the code rebuilt from good differences
  it("says which a hostile quat difference breaks: a component's range or the code", function ()
    local b = { pos = { x = 1, y = 0 }, yaw = 0, rot = { 0, 0, 0, 1 }, hp = 50 }
    -- pos and yaw kept, rot changed, same largest component; each component
    -- from code 256 by tier 3 (flags 0001): z = 168 + u, +339 or +255
    local function delta (u)
      local w = bitwire.writer():bits(0, 1):bits(0, 1):bits(1, 1):bits(1, 1)
      for _ = 1, 3 do w:bits(8, 4):bits(u, 9) end
      return w:bits(0, 1):tostring()
    end
    for _, db in ipairs { b, s:decode("E", s:encode("E", b)) } do
      fails("range", "rot: difference from the baseline leaves the range (bit 4)",
        s:decode("E", delta(510), { baseline = db }))
      -- each component 511: (0.707, 0.707, 0.707) and the largest 0
      fails("range", "rot: quaternion code not in canonical form (bit 3)",
        s:decode("E", delta(342), { baseline = db }))
    end
  end)

  it("decodes against another baseline than the sender's to a wrong value or range", function ()
    -- x: +1 step from 1 is fine; from 254.99 (the top code) it leaves the range
    local sent = s:decode("E", s:encode("E", base))
    local v = { pos = { x = 10 + 1 / 512, y = 5 }, yaw = 0.5, rot = { 0, 0, 0, 1 }, hp = 50 }
    local d = s:encode("E", v, { baseline = sent })
    local other = s:decode("E", s:encode("E", { pos = { x = 1, y = 5 }, yaw = 0.5,
                                               rot = { 0, 0, 0, 1 }, hp = 50 }))
    assert.equal(1 + 1 / 512, assert(s:decode("E", d, { baseline = other })).pos.x)
    local top = s:decode("E", s:encode("E", { pos = { x = 255, y = 5 }, yaw = 0.5,
                                             rot = { 0, 0, 0, 1 }, hp = 50 }))
    fails("range", "pos.x: difference from the baseline leaves the range (bit 2)",
      s:decode("E", d, { baseline = top }))
    -- a quaternion difference made against one rotation, applied to another
    local rand, codes = lcg(9), {}
    local function rot ()
      local q, n = {}, 0
      for i = 1, 4 do q[i] = rand(2001) / 1000 - 1; n = n + q[i] * q[i] end
      for i = 1, 4 do q[i] = q[i] / math.sqrt(n) end
      return q
    end
    for _ = 1, 300 do
      local b1 = s:decode("E", s:encode("E", { pos = base.pos, yaw = 0, rot = rot() }))
      local dq = s:encode("E", { pos = base.pos, yaw = 0, rot = rot() }, { baseline = b1 })
      local b2 = s:decode("E", s:encode("E", { pos = base.pos, yaw = 0, rot = rot() }))
      local got, _, code = s:decode("E", dq, { baseline = b2 })
      codes[got and "ok" or code] = true
    end
    assert.same({ ok = true, range = true }, codes)
  end)

  it("is in the fingerprint", function ()
    local a = bitwire.schema { T = { { "x", "float", min = 0, max = 1, res = 0.01 } } }
    local b = bitwire.schema { T = { { "x", "float", min = 0, max = 1, res = 0.01,
                                       delta = "relative" } } }
    local c = bitwire.schema { T = { { "x", "float", min = 0, max = 1, res = 0.01,
                                       delta = "relative", tiers = { 2 } } } }
    assert.are_not.equal(a:fingerprint(), b:fingerprint())
    assert.are_not.equal(b:fingerprint(), c:fingerprint())
  end)

  it("refuses bad descriptions", function ()
    local bad = {
      { { "x", "float", min = 0, max = 1, res = 0.1, delta = "absolute" },
        "'delta' must be \"relative\"" },
      { { "x", "float", min = 0, max = 1, res = 0.1, tiers = { 3 } },
        "'tiers' needs delta = \"relative\"" },
      { { "x", "int", min = 0, max = 1, delta = "relative" }, "unknown option 'delta'" },
      { { "x", "quat", bits = 23, delta = "relative" }, "bits <= 22" },
      { { "x", "float", min = 100000, max = 100001, res = 0.001, delta = "relative" },
        "steps float32 can hold" },
      { { "x", "angle", bits = 8, delta = "relative", tiers = { 40 } }, "tier 1" },
    }
    for _, c in ipairs(bad) do
      contains(c[2], errorof(bitwire.schema, { T = { c[1] } }))
    end
  end)
end)

describe("bitwire.diff of angles and relative deltas", function ()
  it("names what changed on the wire", function ()
    local cases = {
      { { "x", "angle", bits = 8 }, { "x", "angle", bits = 8, unit = "deg" }, { "period" },
        "T: ~ x angle 8 bits rad -> 8 bits deg" },
      { { "x", "angle", bits = 8 }, { "x", "angle", bits = 9 }, { "bits" } },
      { { "x", "quat", bits = 9 }, { "x", "quat", bits = 9, delta = "relative" }, { "relative" },
        "T: ~ x quat 9 bits -> 9 bits delta relative" },
      { { "x", "float", min = 0, max = 1, res = 0.1, delta = "relative" },
        { "x", "float", min = 0, max = 1, res = 0.1, delta = "relative", tiers = { 2 } },
        { "tiers" }, "delta relative -> [0, 1] res 0.1 delta relative tiers {2}" },
    }
    for i, c in ipairs(cases) do
      local r = bitwire.diff(bitwire.schema { T = { c[1] } }, bitwire.schema { T = { c[2] } })
      assert.equal(1, #r.changes, "case " .. i)
      assert.same(c[3], r.changes[1].what, "case " .. i)
      assert.is_true(r.wire, "case " .. i)
      if c[4] then contains(c[4], r:text()) end
    end
  end)
end)

describe("relative deltas with versions", function ()
  it("skips fields absent at the version and sends the rest relative", function ()
    local s = bitwire.schema {
      T = { { "a", "angle", bits = 8, delta = "relative" },
            { "x", "float", min = 0, max = 10, res = 0.01, delta = "relative", since = 2 },
            { "y", "float", min = 0, max = 10, res = 0.01, delta = "relative", removed = 2 } },
    }
    local b = { a = 1, x = 5, y = 5 }
    local v = { a = 1.1, x = 5.05, y = 4.99 }
    for version = 1, 2 do
      local o = { version = version }
      local db = s:decode("T", s:encode("T", b, o), o)
      local bytes = s:encode("T", v, { version = version, baseline = b })
      local got = assert(s:decode("T", bytes, { version = version, baseline = db }))
      assert.same(s:decode("T", s:encode("T", v, o), o), got)
      -- a: steps 41 -> 45, z 8: 1 + 2 + 5; y (v1): 500 -> 499, z 1: 1 + 1 + 3;
      -- x (v2): 500 -> 505, z 10: 1 + 2 + 5
      assert.equal(version == 1 and 8 + 5 or 8 + 8,
        s:bits("T", v, { version = version, baseline = b }))
    end
  end)
end)
