-- Delta encoding against a baseline: bare (schema:encode and schema:decode
-- with a baseline), framed, and through bitwire.protocol.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local fails, KNOWN_CODES = H.fails, H.KNOWN_CODES
local tohex, errorof, contains, lcg, randbytes =
  H.tohex, H.errorof, H.contains, H.lcg, H.randbytes

------------------------------------------------------------------------------
-- Delta encoding against a baseline
------------------------------------------------------------------------------
local function game_schema ()
  return bitwire.schema {
    Cube = {
      { "pos", "vector", count = 3, min = -256, max = 256, res = 1 / 512 },
      { "rot", "quat", bits = 9 },
      { "at_rest", "bool" },
    },
    Meta = { { "a", "int", min = 0, max = 15 }, { "b", "int", min = 0, max = 15 } },
    Snap = {
      { "tick", "uint", bits = 16 },
      { "cubes", "sparse", of = "Cube", max = 16 },
      { "meta", "Meta" },
      { "name", "string", max = 8, optional = true },
    },
    -- small ones for counting bits by hand
    Ints = { { "s", "sparse", of = { "int", min = 0, max = 7 }, max = 8,
               encoding = "index" } },
    Mask = { { "s", "sparse", of = { "int", min = 0, max = 7 }, max = 8,
               encoding = "mask" } },
    Big = { { "s", "sparse", of = "Meta2", max = 8, encoding = "index" } },
    Meta2 = { { "a", "uint", bits = 32 }, { "b", "uint", bits = 32 } },
  }
end

local function cube (i, rest)
  return { pos = { i, -i / 2, i / 4 }, rot = { 0, 0, math.sin(i), math.cos(i) },
           at_rest = rest or false }
end

local function snap (tick, list)
  local t = { tick = tick, cubes = {}, meta = { a = 1, b = 2 } }
  for _, i in ipairs(list) do t.cubes[i] = cube(i) end
  return t
end

describe("schema:encode with a baseline", function ()
  local s = game_schema()

  it("sends a changed bit per field: an unchanged value is tiny", function ()
    local b = s:decode("Snap", s:encode("Snap", snap(1, { 1, 2, 3, 9, 16 })))
    assert.equal(4, s:bits("Snap", b, { baseline = b }))
    assert.equal("\0", s:encode("Snap", b, { baseline = b }))
    assert.same(b, s:decode("Snap", "\0", { baseline = b }))
  end)

  it("treats q and -q, and values that quantize alike, as unchanged", function ()
    local v = snap(1, { 4 })
    local b = s:decode("Snap", s:encode("Snap", v))
    local w = snap(1, { 4 })
    local q = w.cubes[4].rot
    for i = 1, 4 do q[i] = -q[i] end
    w.cubes[4].pos[1] = w.cubes[4].pos[1] + 1 / 4096
    assert.equal(4, s:bits("Snap", w, { baseline = b }))
    assert.equal(4, s:bits("Snap", w, { baseline = v }))
  end)

  -- equal numbers are compared without quantizing: the numbers must still
  -- make a quaternion
  it("compares quaternions by their numbers, and refuses one of no length", function ()
    local v, w = snap(1, { 4 }), snap(1, { 4 })
    v.cubes[4].rot, w.cubes[4].rot = { 1, 0, 0, 0 }, { 1.0, 0, 0, 0 }
    assert.equal(4, s:bits("Snap", w, { baseline = v }))
    w.cubes[4].rot = { 1, 0, 1e-9, 0 }  -- other numbers, the same code
    assert.equal(4, s:bits("Snap", w, { baseline = v }))
    for _, q in ipairs { { 0, 0, 0, 0 }, { math.huge, 0, 0, 1 }, { 0 / 0, 0, 0, 1 } } do
      local a, b = snap(1, { 4 }), snap(1, { 4 })
      a.cubes[4].rot, b.cubes[4].rot = q, { q[1], q[2], q[3], q[4] }
      contains("cubes[4].rot: quaternion has no length",
        errorof(s.encode, s, "Snap", b, { baseline = a }))
    end
  end)

  it("decodes with the right baseline to what a full decode gives", function ()
    local rand = lcg(21)
    local v = snap(0, { 1, 5, 6 })
    local b = s:decode("Snap", s:encode("Snap", v))
    for tick = 1, 200 do
      local n = snap(tick, {})
      for i = 1, 16 do                       -- add, drop, move, rest, keep
        local r = rand(10)
        if b.cubes[i] and r < 6 then n.cubes[i] = cube(i, b.cubes[i].at_rest)
        elseif r == 6 then n.cubes[i] = cube(i + rand(100) / 7, rand(2) == 1)
        elseif r == 7 and b.cubes[i] then n.cubes[i] = nil
        elseif r == 8 then n.cubes[i] = cube(i) end
      end
      n.meta.b = rand(3) == 0 and rand(16) or b.meta.b
      n.name = rand(4) == 0 and "abc" or nil
      local full = s:decode("Snap", s:encode("Snap", n))
      local delta = s:encode("Snap", n, { baseline = b })
      assert.equal(s:bits("Snap", n, { baseline = b }) + 7 >> 3, #delta)
      local got = s:decode("Snap", delta, { baseline = b })
      assert.same(full, got)
      -- the sender may keep its raw values as the baseline
      if tick > 1 then assert.equal(delta, s:encode("Snap", n, { baseline = v })) end
      v, b = n, got
    end
  end)

  it("recurses into nested records: only the changed field is sent", function ()
    local b = s:decode("Snap", s:encode("Snap", snap(1, {})))
    local n = snap(1, {})
    n.meta.b = 9
    -- tick 0, cubes 0, meta 1 (a 0, b 1 + 4 bits), name 0
    assert.equal(4 + 2 + 4, s:bits("Snap", n, { baseline = b }))
    assert.same(s:decode("Snap", s:encode("Snap", n)),
      s:decode("Snap", s:encode("Snap", n, { baseline = b }), { baseline = b }))
  end)

  it("sends sparse slots added, removed and changed with a presence bit", function ()
    local b = { s = { [1] = 1, [2] = 2, [4] = 4 } }
    local n = { s = { [1] = 1, [2] = 3, [5] = 4 } }   -- 2 changed, 4 gone, 5 new
    -- changed bit, count 3 in 4 bits, 3 x (index 3 + presence 1) + 2 values
    assert.equal(1 + 4 + 3 * 4 + 2 * 3, s:bits("Ints", n, { baseline = b }))
    local w = bitwire.writer()
    w:bool(true) w:int(3, 0, 8)
    w:int(1, 0, 7) w:bool(true) w:int(3, 0, 7)
    w:int(3, 0, 7) w:bool(false)
    w:int(4, 0, 7) w:bool(true) w:int(4, 0, 7)
    assert.equal(tohex(w:tostring()), tohex(s:encode("Ints", n, { baseline = b })))
    assert.same(n, s:decode("Ints", w:tostring(), { baseline = b }))
    -- mask: changed bit, 8 slot bits, presence bits, values
    assert.equal(1 + 8 + 3 + 2 * 3, s:bits("Mask", n, { baseline = b }))
    assert.same(n, s:decode("Mask", s:encode("Mask", n, { baseline = b }),
      { baseline = b }))
    -- everything removed, or nothing left in the baseline
    assert.same({ s = {} }, s:decode("Ints", s:encode("Ints", { s = {} },
      { baseline = b }), { baseline = b }))
    assert.same(b, s:decode("Ints", s:encode("Ints", b, { baseline = { s = {} } }),
      { baseline = { s = {} } }))
  end)

  it("sends changed records in sparse slots as deltas of their own", function ()
    local b = s:decode("Snap", s:encode("Snap", snap(1, { 3, 4 })))
    local n = snap(1, { 3, 4 })
    n.cubes[4].at_rest = true
    -- 4 top bits; auto 2 + index (5 + 4) beats mask 16 and relative (8 + 1 + 13);
    -- presence 1; pos 0, rot 0, at_rest 1 + 1
    assert.equal(4 + 2 + 5 + 4 + 1 + 3 + 1, s:bits("Snap", n, { baseline = b }))
    assert.same(s:decode("Snap", s:encode("Snap", n)),
      s:decode("Snap", s:encode("Snap", n, { baseline = b }), { baseline = b }))
  end)

  it("decodes many removed records of an index delta (not a short count)", function ()
    local v = { s = {} }
    for i = 1, 8 do v.s[i] = { a = i, b = i } end
    local b = s:decode("Big", s:encode("Big", v))
    local delta = s:encode("Big", { s = {} }, { baseline = b })
    assert.equal(1 + 4 + 8 * 4, s:bits("Big", { s = {} }, { baseline = b }))
    assert.same({ s = {} }, s:decode("Big", delta, { baseline = b }))
  end)

  it("handles a baseline whose field has the wrong type like a missing one", function ()
    for _, bad in ipairs { 5, "x", true } do
      local bl = { s = bad }
      local bytes = s:encode("Ints", { s = { 1, 2 } }, { baseline = bl })
      assert.same({ s = { 1, 2 } }, s:decode("Ints", bytes, { baseline = bl }))
    end
  end)

  describe("of fixed-width fields", function ()
    local r = bitwire.schema { R = {
      { "a", "int", min = 0, max = 15 }, { "b", "int", min = 0, max = 15 },
      { "c", "float", min = 0, max = 1, res = 0.01 },
      { "d", "int", min = 0, max = 15, clamp = true },
    } }

    it("checks a value equal to its baseline as a full encode does", function ()
      local v = { a = 1, b = 99, c = 0.5, d = 3 }
      -- a's changed bit is gathered, not yet written: b fails at bit 1
      assert.has_error(function () r:encode("R", v, { baseline = v }) end,
        "b: 99 out of range [0, 15] (bit 1)")
      v = { a = 1, b = 2, c = 2, d = 3 }
      assert.has_error(function () r:encode("R", v, { baseline = v }) end,
        "c: 2.0 out of range [0.0, 1.0] (bit 2)")
    end)

    it("compares codes: a clamped value equal to its baseline is unchanged", function ()
      local base = { a = 1, b = 2, c = 0.5, d = 15 }
      assert.equal(4, r:bits("R", { a = 1, b = 2, c = 0.5, d = 40 }, { baseline = base }))
      assert.equal(4, r:bits("R", base, { baseline = { a = 1, b = 2, c = 0.5, d = 99 } }))
      assert.equal(4, r:bits("R", { a = 1, b = 2, c = 0.501, d = 15 }, { baseline = base }))
      -- optional fields too, in the walk over baseline tables (float32: a
      -- field tapes do not hold)
      local o = bitwire.schema { O = {
        { "o", "int", min = 0, max = 15, clamp = true, optional = true }, { "f", "float32" } } }
      assert.equal(2, o:bits("O", { o = 40, f = 1 }, { baseline = { o = 15, f = 1 } }))
      assert.equal(7, o:bits("O", { o = 40, f = 1 }, { baseline = { o = 14, f = 1 } }))
    end)

    it("compares array elements and sparse slots by the same rule", function ()
      local a = bitwire.schema {
        A = { { "xs", "array", of = { "int", min = 0, max = 15 }, max = 4 },
              { "cs", "array", of = { "int", min = 0, max = 15, clamp = true }, max = 4 } },
        S = { { "s", "sparse", of = { "int", min = 0, max = 15 }, max = 4, encoding = "mask" },
              { "c", "sparse", of = { "int", min = 0, max = 15, clamp = true }, max = 4,
                encoding = "mask" } },
      }
      -- a value equal to its baseline is checked...
      assert.has_error(function ()
        a:encode("A", { xs = { 1, 99 }, cs = {} }, { baseline = { xs = { 1, 99 }, cs = {} } })
      end, "xs[2]: 99 out of range [0, 15] (bit 5)")
      assert.has_error(function ()
        a:encode("S", { s = { [2] = 99 }, c = {} }, { baseline = { s = { [2] = 99 }, c = {} } })
      end, "s[2]: 99 out of range [0, 15] (bit 4)")
      -- ...and a clamped one with its baseline's code is unchanged: one bit each
      assert.equal(2, a:bits("A", { xs = {}, cs = { 40 } }, { baseline = { xs = {}, cs = { 15 } } }))
      assert.equal(2, a:bits("S", { s = {}, c = { [2] = 40 } },
        { baseline = { s = {}, c = { [2] = 15 } } }))
    end)

    it("sends a value whose baseline the field cannot take", function ()
      local v = { a = 1, b = 2, c = 0.5, d = 15 }
      for _, bad in ipairs { { c = 5 }, { a = 2.5 }, { b = -1 }, { a = "1" } } do
        local bl = { a = 1, b = 2, c = 0.5, d = 15 }
        for k, x in pairs(bad) do bl[k] = x end
        local d = r:encode("R", v, { baseline = bl })
        assert.is_true(r:bits("R", v, { baseline = bl }) > 4, "a changed field is sent")
        assert.same(r:decode("R", r:encode("R", v)), r:decode("R", d, { baseline = bl }))
      end
    end)
  end)

  describe("against a baseline that is no value of the type", function ()
    -- such a baseline (built by hand, or kept from definitions a reload
    -- narrowed) vouches for none of its values: every value the full
    -- encode refuses is refused, whatever the walk would keep
    local r = bitwire.schema {
      E = { { "hp", "int", min = 0, max = 100 } },
      R = { { "n", "int", min = 0, max = 9 }, { "name", "string", max = 4 },
            { "o", "int", min = 0, max = 9, optional = true },
            { "m", "enum", values = { "a", "b" } }, { "e", "E" } },
    }
    local function good () return { n = 1, name = "ok", o = 1, m = "a", e = { hp = 5 } } end
    local function refused (v, bl)
      local ok, full = pcall(r.encode, r, "R", v)
      assert.is_false(ok)
      assert.has_error(function () r:encode("R", v, { baseline = bl }) end, full)
      return full
    end

    it("refuses a value equal to its baseline's, as the full encode", function ()
      for _, bad in ipairs { { name = "toolong" }, { o = 99 }, { m = "z" }, { e = { hp = 500 } } } do
        local v, bl = good(), good()
        for k, x in pairs(bad) do v[k], bl[k] = x, x end  -- equal, or the same table
        v.n = 2
        refused(v, bl)
        v.n = 1
        refused(v, bl)  -- nothing else changed
      end
      -- a record shared by value and baseline
      local v, bl = good(), good()
      bl.e = { hp = 500 }
      v.e = bl.e
      assert.equal("e.hp: 500 out of range [0, 100] (bit 30)", refused(v, bl))
    end)

    it("refuses a quaternion or a sparse array the encoder does not take, equal or shared", function ()
      local q = bitwire.schema { T = { { "q", "quat", bits = 9 }, { "n", "int", min = 0, max = 9 },
        { "sp", "sparse", of = { "int", min = 0, max = 9 }, max = 8 } } }
      for _, bad in ipairs { { 0, 0, 1 }, { 0, 0, 0, 1, 5 }, { 0, 0, 0, "1" } } do
        for _, bq in ipairs { bad, { 0, 0, 1, 0 } } do  -- a bad baseline, or a good one
          local v = { q = { table.unpack(bad) }, n = 1, sp = {} }
          local _, full = pcall(q.encode, q, "T", v)
          assert.matches("quaternion", full)
          assert.matches("quaternion", H.errorof(q.encode, q, "T", v,
            { baseline = { q = bq, n = 1, sp = {} } }))
        end
      end
      for _, keys in ipairs { { [9] = 1 }, { [0] = 1 }, { [2] = 1, x = 1 } } do
        local b = { q = { 0, 0, 0, 1 }, n = 1, sp = keys }
        for _, v in ipairs { { q = b.q, n = 1, sp = b.sp }, b } do  -- shared, the baseline itself
          assert.matches("sparse keys must be integers in %[1, 8%]",
            H.errorof(q.encode, q, "T", v, { baseline = b }))
        end
      end
    end)

    it("sends a quaternion whose baseline has its four numbers and more", function ()
      -- five components are no quaternion to keep: the receiver refuses
      -- them as the full encode does, so the delta must send the value
      local q = bitwire.schema { T = { { "q", "quat", bits = 9 }, { "n", "int", min = 0, max = 9 } } }
      for _, rel in ipairs { false, true } do
        local t = rel and bitwire.schema { T = { { "q", "quat", bits = 9, delta = "relative" },
          { "n", "int", min = 0, max = 9 } } } or q
        local v = { q = { 0, 0.6, 0, 0.8 }, n = 1 }
        local bl = { q = { 0, 0.6, 0, 0.8, 1 }, n = 1 }
        local d = t:encode("T", v, { baseline = bl })
        assert.same(t:decode("T", t:encode("T", v)), t:decode("T", d, { baseline = bl }))
      end
    end)

    it("still sends a value the type takes, its own failures at the delta's bits", function ()
      local bl = good()
      bl.name = "toolong"
      local v = good()
      local d = r:encode("R", v, { baseline = bl })
      assert.same(r:decode("R", r:encode("R", v)), r:decode("R", d, { baseline = bl }))
      -- a changed value the field cannot take fails where the delta is, as
      -- against a baseline the type takes (name changed in both)
      v.e = { hp = 500 }
      local valid = good()
      valid.name = "zz"
      local _, want = pcall(r.encode, r, "R", v, { baseline = valid })
      assert.equal("e.hp: 500 out of range [0, 100] (bit 27)", want)
      assert.has_error(function () r:encode("R", v, { baseline = bl }) end, want)
    end)

    it("keeps a baseline of a strict schema's old definitions, dropping what a reload dropped", function ()
      -- strict is a rule for the caller's own values: the receiver's check
      -- of a kept baseline value must not refuse a field the new
      -- definitions no longer have
      local function defs(f5)
        local E = { { "hp", "int", min = 0, max = 100 } }
        if f5 then E[2] = { "f5", "int", min = 0, max = 9 } end
        return { options = { strict = true }, E = E,
                 Snap = { { "tick", "uint", bits = 8 }, { "ents", "array", of = "E", max = 4 } } }
      end
      local a, b = bitwire.schema(defs(true)), bitwire.schema(defs(false))
      local kept = a:decode("Snap", a:encode("Snap", { tick = 1, ents = { { hp = 50, f5 = 3 } } }))
      local d = b:encode("Snap", { tick = 2, ents = { { hp = 50 } } }, { baseline = kept })
      for _, share in ipairs { false, true } do
        assert.same({ tick = 2, ents = { { hp = 50 } } },
          (b:decode("Snap", d, { baseline = kept, share = share })))
      end
      -- the sender's own values stay strict
      assert.matches("unknown key 'f5'", H.errorof(b.encode, b, "Snap",
        { tick = 2, ents = { { hp = 50, f5 = 1 } } }, { baseline = kept }))
    end)

    it("refuses, after a reload narrowed a range, what the old baseline kept", function ()
      local defs = { S = { { "n", "int", min = 0, max = 9 }, { "name", "string", max = 8 } } }
      local s0 = bitwire.schema(defs)
      defs.S[2].max = 4
      local s1 = bitwire.schema(defs)
      local sent = { n = 1, name = "longname" }
      assert(s0:encode("S", sent))
      local v = { n = 2, name = "longname" }
      assert.has_error(function () s1:encode("S", v, { baseline = sent }) end,
        (select(2, pcall(s1.encode, s1, "S", v))))
      v.name = "ok"
      local d = s1:encode("S", v, { baseline = sent })
      assert.same({ n = 2, name = "ok" }, s1:decode("S", d, { baseline = s0:decode("S", s0:encode("S", sent)) }))
    end)
  end)

  it("sends optional fields appearing and disappearing", function ()
    local b = s:decode("Snap", s:encode("Snap", snap(1, {})))
    local n = snap(1, {})
    n.name = "hi"
    local d = s:encode("Snap", n, { baseline = b })
    local got = s:decode("Snap", d, { baseline = b })
    assert.equal("hi", got.name)
    local back = s:decode("Snap", s:encode("Snap", b, { baseline = got }),
      { baseline = got })
    assert.is_nil(back.name)
    assert.same(b, back)
  end)

  it("without a baseline option is a full encoding", function ()
    local v = snap(3, { 1, 2 })
    local full = s:encode("Snap", v)
    assert.equal(full, s:encode("Snap", v, {}))
    assert.equal(full, s:encode("Snap", v, { baseline = nil }))
    assert.same(s:decode("Snap", full), s:decode("Snap", full, {}))
  end)

  it("never raises decoding a delta without its baseline, or random bytes against one", function ()
    local b = s:decode("Snap", s:encode("Snap", snap(1, { 1, 2, 3 })))
    local n = snap(2, { 2, 3, 7 })
    local d = s:encode("Snap", n, { baseline = b })
    local ok = pcall(s.decode, s, "Snap", d)
    assert.is_true(ok)
    local rand = lcg(17)
    for _ = 1, 1000 do
      local ok2, v, _, code = pcall(s.decode, s, "Snap", randbytes(rand, rand(30)),
        { baseline = b })
      assert.is_true(ok2, v)
      if v == nil then assert.is_true(KNOWN_CODES[code]) end
    end
  end)

  it("raises on a baseline that is not a table", function ()
    local v = snap(1, {})
    contains("'baseline' must be a table",
      errorof(s.encode, s, "Snap", v, { baseline = 3 }))
    contains("'baseline' must be a table",
      errorof(s.decode, s, "Snap", "\0", { baseline = "x" }))
  end)

  it("decodes a delta into a table, as protocols do, the baseline itself too", function ()
    local a, b = snap(1, {}), snap(2, { 1 })
    local base = s:decode("Snap", s:encode("Snap", a))
    local d = s:encode("Snap", b, { baseline = a })
    local want = s:decode("Snap", s:encode("Snap", b))
    local t = { junk = true }
    assert.equal(t, s:decode("Snap", d, { baseline = base, into = t }))
    assert.same(want, t)
    local m = s:encode_message("Snap", b, { baseline = a })
    local t2 = {}
    local name, got = s:decode_message(m, { baseline = base, into = t2 })
    assert.equal("Snap", name)
    assert.equal(t2, got)
    assert.same(want, t2)
    assert.equal(base, s:decode("Snap", d, { baseline = base, into = base }))
    assert.same(want, base)
  end)
end)

describe("schema:decode with a baseline", function ()
  local s = bitwire.schema {
    Pt = { { "x", "int", min = 0, max = 9 }, { "v", "vector", count = 2, min = 0, max = 1, res = 0.5 } },
    Rec = { { "p", "Pt", optional = true }, { "q", "quat", bits = 9 }, { "n", "int", min = 0, max = 9 } },
    Top = { { "r", "Rec" }, { "s", "sparse", of = "Rec", max = 4 } },
  }
  local function rec(n, p) return { p = p, q = { 0, 0, 0, 1 }, n = n } end

  it("keeps absent optional records and nested tables, sharing none with the baseline", function ()
    local base = s:decode("Top", s:encode("Top", { r = rec(1), s = { rec(2), nil, rec(3, { x = 4, v = { 0, 1 } }) } }))
    -- r changes (n) while its optional p stays absent: p is kept as nil
    local cur = { r = rec(7), s = { rec(2), nil, rec(3, { x = 4, v = { 0, 1 } }), rec(5) } }
    local got = assert(s:decode("Top", s:encode("Top", cur, { baseline = base }), { baseline = base }))
    assert.same(s:decode("Top", s:encode("Top", cur)), got)
    assert.is_nil(got.r.p)
    assert.are_not.equal(base.s[3], got.s[3])
    assert.are_not.equal(base.s[3].p.v, got.s[3].p.v)
    assert.are_not.equal(base.r.q, got.r.q)
  end)

  it("reads a table another schema refilled last as what it holds", function ()
    -- two schemas of one description, called by hand on the same tables:
    -- what one knew of a table the other refilled or sent is stale
    local desc = {
      E = { { "id", "int", min = 0, max = 99 }, { "x", "float", min = 0, max = 64, res = 0.5 } },
      Snap = { { "tick", "uint", bits = 8 }, { "es", "array", of = "E", max = 8 } },
    }
    local s1, s2 = bitwire.schema(desc), bitwire.schema(desc)
    local function at (tick, x5, x2)
      local v = { tick = tick, es = {} }
      for i = 1, 6 do v.es[i] = { id = i, x = i == 5 and x5 or i == 2 and x2 or i } end
      return v
    end
    -- c differs from b in entity 5 alone; o, what the tables held before,
    -- in entity 2 as well
    local a, b, c, o = at(1, 1, 2), at(2, 20, 2), at(3, 30, 2), at(4, 30, 9)
    local full = function (v) return s1:decode("Snap", s1:encode("Snap", v)) end
    local base = full(a)
    for _, refill in ipairs({
      -- s2 decodes b into the table, in full and as a delta in place
      function (slot) return s2:decode("Snap", s2:encode("Snap", b), { into = slot }) end,
      function (slot)
        return s2:decode("Snap", s2:encode("Snap", b, { baseline = a }),
                         { baseline = s2:decode("Snap", s2:encode("Snap", a)), into = slot })
      end,
    }) do
      -- a slot s1 decoded a delta into: s1 has its tape
      local slot = assert(s1:decode("Snap", s1:encode("Snap", o, { baseline = a }),
                                    { baseline = base }))
      assert(refill(slot))
      assert.same(full(b), slot)
      -- a delta of c against b, decoded by s1 against the slot
      local got = assert(s1:decode("Snap", s1:encode("Snap", c, { baseline = b }),
                                   { baseline = slot }))
      assert.same(full(c), got)
    end
    -- the sender's side: s1 sent v as a delta (its tape kept for when v
    -- is the baseline), then s2 decoded b into v: a delta against v is of
    -- what v holds
    local v = at(4, 30, 9)
    s1:encode("Snap", v, { baseline = a })
    assert(s2:decode("Snap", s2:encode("Snap", b), { into = v }))
    local d = s1:encode("Snap", c, { baseline = v })
    assert.same(full(c), assert(s1:decode("Snap", d, { baseline = full(b) })))
  end)
end)

describe("framed deltas", function ()
  local s = game_schema()
  local ID = 0x1234
  local HDR = { id = ID, check = true, message = false, type = "Snap", deltas = true }

  it("round-trips with the baseline of the id the frame names", function ()
    local b = s:decode("Snap", s:encode("Snap", snap(1, { 1, 2 })))
    local n = snap(2, { 2, 3 })
    local pk = s:frame_encode(HDR, "Snap", n, { baseline = b, baseline_id = 41 })
    local _, got = s:frame_decode(HDR, pk, { baselines = { [40] = {}, [41] = b } })
    assert.same(s:decode("Snap", s:encode("Snap", n)), got)
    -- CRC 32, delta bit, 16-bit id, the delta, end check
    local body = s:bits("Snap", n, { baseline = b })
    assert.equal(4 + (1 + 16 + body + 7 >> 3) + 4, #pk)
  end)

  it("says 'baseline' for an id it does not have", function ()
    local b = s:decode("Snap", s:encode("Snap", snap(1, { 1 })))
    local h = { id = ID, check = false, message = false, type = "Snap", deltas = true }
    local pk = s:frame_encode(h, "Snap", snap(2, { 1 }), { baseline = b, baseline_id = 7 })
    fails("baseline", "unknown baseline 7", s:frame_decode(h, pk, { baselines = { [8] = b } }))
    fails("baseline", "unknown baseline 7", s:frame_decode(h, pk))
    fails("baseline", "unknown baseline 7", s:frame_decode(h, pk,
      { baselines = { [7] = "not a table" } }))
  end)

  it("decodes a wrong baseline to a wrong value, never raising", function ()
    local b1 = s:decode("Snap", s:encode("Snap", snap(1, { 1 })))
    local b2 = s:decode("Snap", s:encode("Snap", snap(5, { 9, 10 })))
    local n = snap(2, { 1, 2 })
    local pk = s:frame_encode(HDR, "Snap", n, { baseline = b1, baseline_id = 1 })
    local ok, _, v = pcall(s.frame_decode, s, HDR, pk, { baselines = { [1] = b2 } })
    assert.is_true(ok)
    assert.are_not.same(s:decode("Snap", s:encode("Snap", n)), v)
  end)

  it("sends full frames with one bit more when a protocol has deltas", function ()
    local v = snap(3, { 4 })
    local pk = s:frame_encode(HDR, "Snap", v)
    assert.same(s:decode("Snap", s:encode("Snap", v)), select(2, s:frame_decode(HDR, pk)))
    assert.equal(4 + (1 + s:bits("Snap", v) + 7 >> 3) + 4, #pk)
  end)

  it("refuses baselines without deltas or with a bad id", function ()
    local v = snap(1, {})
    contains("a baseline needs a protocol with deltas", errorof(s.frame_encode, s,
      { id = ID, message = false }, "Snap", v, { baseline = v, baseline_id = 1 }))
    for _, bad in ipairs { -1, 65536, 1.5, "1", false } do
      contains("'baseline_id' must be an integer in [0, 65535]", errorof(s.frame_encode, s,
        HDR, "Snap", v, { baseline = v, baseline_id = bad }))
    end
    contains("'baseline_id' must be an integer in [0, 65535]", errorof(s.frame_encode,
      s, HDR, "Snap", v, { baseline = v }))
  end)

  it("reads every integer option alike: 2.0 is 2, \"2\" is refused", function ()
    local v = snap(1, {})
    local pk = s:frame_encode(HDR, "Snap", v, { baseline = v, baseline_id = 2.0 })
    assert.equal(pk, s:frame_encode(HDR, "Snap", v, { baseline = v, baseline_id = 2 }))
    local full = s:encode("Snap", v)
    assert.same(s:decode("Snap", full, { max_values = 100 }),
                s:decode("Snap", full, { max_values = 100.0 }))
    assert.equal(s:encode("Snap", v, { version = 0 }), s:encode("Snap", v, { version = 0.0 }))
    contains("'version' must be an integer", errorof(s.encode, s, "Snap", v, { version = "0" }))
    contains("'max_values' must be an integer",
      errorof(s.decode, s, "Snap", full, { max_values = "100" }))
    contains("'version' must be an integer", errorof(s.encode, s, "Snap", v, { version = 0.5 }))
  end)
end)

describe("bitwire.protocol with deltas", function ()
  local s = game_schema()

  it("passes baseline and baseline_id through to its frames", function ()
    local p = bitwire.protocol(s, { id = 99, deltas = true })
    local q = bitwire.protocol(s, { id = 99, deltas = true })
    local b = s:decode("Snap", s:encode("Snap", snap(1, { 1, 2 })))
    local n = snap(2, { 2, 3 })
    local pk = p:encode("Snap", n, { baseline = b, baseline_id = 300 })
    local name, v = q:decode(pk, { baselines = { [300] = b } })
    assert.equal("Snap", name)
    assert.same(s:decode("Snap", s:encode("Snap", n)), v)
    fails("baseline", "unknown baseline 300", q:decode(pk, { baselines = {} }))
    fails("baseline", "unknown baseline 300", q:decode(pk))
    -- full messages still work, with or without options
    name, v = q:decode(p:encode("Snap", n))
    assert.equal("Snap", name)
    assert.same(s:decode("Snap", s:encode("Snap", n)), v)
    name, v = q:decode(p:encode("Ints", { s = { 3 } }, {}), {})
    assert.equal("Ints", name)
    assert.same({ s = { 3 } }, v)
  end)

  it("is the frame layout of frame_encode with deltas", function ()
    local p = bitwire.protocol(s, { id = 5, deltas = true, fingerprint = false })
    local b = snap(1, { 1 })
    local n = snap(2, { 1 })
    assert.equal(s:frame_encode({ id = 5, deltas = true }, "Snap", n,
        { baseline = b, baseline_id = 2 }),
      p:encode("Snap", n, { baseline = b, baseline_id = 2 }))
  end)

  it("refuses a baseline without deltas, and a deltas option that is not a boolean", function ()
    local p = bitwire.protocol(s, { id = 99 })
    local v = snap(1, {})
    contains("a baseline needs a protocol with deltas",
      errorof(p.encode, p, "Snap", v, { baseline = v, baseline_id = 1 }))
    contains("'deltas' must be a boolean",
      errorof(bitwire.protocol, s, { deltas = 1 }))
  end)
end)
