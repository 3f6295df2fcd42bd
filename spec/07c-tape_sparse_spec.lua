-- Deltas against tapes: sparse arrays. Pass 1 compares each slot by its
-- codes, IEEE floats by number (equal numbers may differ in codes); pass 2
-- sends a relative slot as a difference from the baseline slot's code.
-- Arrays and sparse arrays, as slots or in a slot's records, are compared
-- element by element (IEEE floats by number) and sent as deltas of their
-- own; every kind agrees with the walk over tables.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local T = require "spec.tape_helpers"
local copy, sameastable, decodesame = T.copy, T.sameastable, T.decodesame

-- 'b' against 'a', against a's own tape and against a decoded copy; then
-- the chain: 'c' against the tape b's delta left, and decoded against the
-- tape the decode left. 'loose': values a delta takes as equal (0 and -0)
-- are not the full decode's
local function chain (s, name, a, b, c, msg, loose)
  local bytes = sameastable(s, name, b, a, nil, msg)
  local dec = s:decode(name, s:encode(name, a))
  local dbytes = sameastable(s, name, b, dec, nil, msg)
  if not loose then assert.equal(bytes, dbytes, msg) end  -- a float32 decoded
  local got = assert(s:decode(name, bytes, { baseline = dec }))
  -- compared as their bytes: NaN is no NaN's equal
  local function same (x, y) assert.equal(s:encode(name, x), s:encode(name, y), msg) end
  if not loose then same(s:decode(name, s:encode(name, b)), got) end
  same(got, assert(s:decode(name, bytes, { baseline = dec, share = true })))
  local more = sameastable(s, name, c, b, nil, msg)
  local got2 = assert(s:decode(name, more, { baseline = got }))
  if not loose then same(s:decode(name, s:encode(name, c)), got2) end
  same(got2, assert(s:decode(name, more, { baseline = got, share = true })))
  if not msg or not msg:find("nan") then decodesame(s, name, more, got) end
end

describe("deltas of sparse arrays against tapes", function ()
  it("compare IEEE floats in slots by their bits, as the walk over tables does", function ()
    local s = bitwire.schema {
      P = { { "t", "float32" }, { "u", "float64" }, { "n", "int", min = 0, max = 9 } },
      S = { { "k", "int", min = 0, max = 9 }, { "ps", "sparse", of = "P", max = 9 } } }
    local f32 = function (x) return (string.unpack("<f", string.pack("<f", x))) end
    local nan = 0 / 0
    for i, p in ipairs { { 0.0, -0.0 }, { -0.0, 0.0 }, { nan, nan }, { 0.1, f32(0.1) },
                         { f32(0.1), 0.1 }, { 1, 2 } } do
      local x, y = p[1], p[2]
      local a = { k = 1, ps = { [2] = { t = x, u = x, n = 1 }, [5] = { t = 1, u = 1, n = 2 } } }
      local b = { k = 2, ps = { [2] = { t = y, u = y, n = 1 }, [5] = { t = 1, u = 1, n = 2 } } }
      local c = { k = 3, ps = { [2] = { t = x, u = y, n = 3 } } }
      chain(s, "S", a, b, c, ("pair %d: %s, %s"):format(i, x, y), true)
    end
    -- equal bits send no slot: only k's bits and the array's unchanged bit;
    -- equal numbers of other bits (0.0, -0.0) are sent, as a full encode
    -- would send them
    local a = { k = 1, ps = { [2] = { t = 0.0, u = nan, n = 1 } } }
    assert.equal(1 + 4 + 1, s:bits("S", { k = 2, ps = { [2] = { t = 0.0, u = nan, n = 1 } } },
                                   { baseline = a }))
    assert.is_true(s:bits("S", { k = 2, ps = { [2] = { t = -0.0, u = nan, n = 1 } } },
                          { baseline = a }) > 1 + 4 + 1)
    -- the same numbers as whole slots; and in arrays inside a slot's record,
    -- compared element by element, in a schema of their own
    local whole = bitwire.schema {
      S = { { "k", "int", min = 0, max = 9 }, { "fs", "sparse", of = { "float32" }, max = 9 } } }
    local deep = bitwire.schema {
      Q = { { "n", "int", min = 0, max = 9 }, { "v", "array", of = { "float32" }, max = 3 } },
      S = { { "k", "int", min = 0, max = 9 }, { "qs", "sparse", of = "Q", max = 9 } } }
    for i, p in ipairs { { 0.0, -0.0 }, { -0.0, 0.0 }, { nan, nan }, { 0.1, f32(0.1) },
                         { f32(0.1), 0.1 }, { 1, 2 } } do
      local x, y = p[1], p[2]
      local msg = ("pair %d: %s, %s"):format(i, x, y)
      chain(whole, "S", { k = 1, fs = { [3] = x, [4] = 1 } }, { k = 2, fs = { [3] = y, [4] = 1 } },
            { k = 3, fs = { [3] = x } }, "whole, " .. msg, true)
      chain(deep, "S", { k = 1, qs = { [1] = { n = 1, v = { x, 1 } } } },
            { k = 2, qs = { [1] = { n = 1, v = { y, 1 } } } },
            { k = 3, qs = { [1] = { n = 2, v = { x } } } }, "in arrays, " .. msg, true)
    end
  end)

  it("compare a slot's arrays element by element: counts, IEEE numbers, records, nesting", function ()
    -- a slot record's arrays whose elements may hold IEEE floats are
    -- compared one element at a time (numbers by number); each pair below
    -- changes one thing only, so a missed change would keep the slot
    local s = bitwire.schema {
      R = { { "t", "float32" }, { "m", "int", min = 0, max = 9 } },
      Q = { { "n", "int", min = 0, max = 9 }, { "v", "array", of = { "float32" }, max = 3 },
            { "rs", "array", of = "R", max = 3 },
            { "g", "array", of = { "array", of = { "float64" }, max = 2 }, max = 2 },
            { "m", "sparse", of = { "float32" }, max = 4 } },
      S = { { "k", "int", min = 0, max = 9 }, { "qs", "sparse", of = "Q", max = 9 } } }
    local function q (v, rs, g, m) return { n = 1, v = v, rs = rs, g = g, m = m or {} } end
    local R1, R0 = { { t = 1, m = 1 } }, { { t = 0.0, m = 1 } }
    local changes = {
      { "v grows", q({ 1 }, R1, {}), q({ 1, 2 }, R1, {}) },
      { "v shrinks", q({ 1, 2 }, R1, {}), q({ 1 }, R1, {}) },
      { "v empties", q({ 1 }, R1, {}), q({}, R1, {}) },
      { "v element", q({ 1, 2 }, R1, {}), q({ 1, 3 }, R1, {}) },
      { "rs grows", q({}, R1, {}), q({}, { { t = 1, m = 1 }, { t = 2, m = 2 } }, {}) },
      { "rs element", q({}, R1, {}), q({}, { { t = 1, m = 2 } }, {}) },
      { "g inner grows", q({}, R1, { { 1 } }), q({}, R1, { { 1, 2 } }) },
      { "g inner element", q({}, R1, { { 1, 2 } }), q({}, R1, { { 1, 2.5 } }) },
      { "g outer shrinks", q({}, R1, { { 1 }, { 2 } }), q({}, R1, { { 1 } }) },
      { "m slot added", q({}, R1, {}, { [2] = 1 }), q({}, R1, {}, { [2] = 1, [4] = 2 }) },
      { "m slot added first", q({}, R1, {}, { [2] = 1 }), q({}, R1, {}, { [1] = 0, [2] = 1 }) },
      { "m slot dropped", q({}, R1, {}, { [2] = 1, [3] = 1 }), q({}, R1, {}, { [3] = 1 }) },
      { "m last dropped", q({}, R1, {}, { [2] = 1, [3] = 1 }), q({}, R1, {}, { [2] = 1 }) },
      { "m slot moved", q({}, R1, {}, { [2] = 1 }), q({}, R1, {}, { [3] = 1 }) },
      { "m element", q({}, R1, {}, { [2] = 1 }), q({}, R1, {}, { [2] = 1.5 }) },
    }
    local base = { k = 1, qs = { [4] = q({ 7 }, R1, {}) } }
    for _, ch in ipairs(changes) do
      local a = { k = 1, qs = { [2] = ch[2], [4] = base.qs[4] } }
      local b = { k = 2, qs = { [2] = ch[3], [4] = base.qs[4] } }
      local c = { k = 3, qs = { [2] = ch[2] } }
      chain(s, "S", a, b, c, ch[1])
      assert.is_true(s:bits("S", b, { baseline = a }) > 1 + 4 + 1, ch[1])  -- the slot sent
    end
    -- equal numbers, one code apart: the slot sent
    for _, p in ipairs {
      { q({ 0.0 }, R1, {}), q({ -0.0 }, R1, {}) },
      { q({}, R0, {}), q({}, { { t = -0.0, m = 1 } }, {}) },
      { q({}, R1, { { 0.0 } }), q({}, R1, { { -0.0 } }) },
      { q({}, R1, {}, { [3] = 0.0 }), q({}, R1, {}, { [3] = -0.0 }) } } do
      local a, b = { k = 1, qs = { [2] = p[1] } }, { k = 2, qs = { [2] = p[2] } }
      assert.is_true(s:bits("S", b, { baseline = a }) > 1 + 4 + 1)
      chain(s, "S", a, b, { k = 3, qs = { [2] = p[2] } }, "zeros", true)
    end
    -- a long sparse array (its keys visited, not its slots) and sparse
    -- arrays in an array, in a slot: slots either side lacks are changes,
    -- and so are equal numbers of other bits
    local long = bitwire.schema {
      Q = { { "far", "sparse", of = { "float32" }, max = 5000 },
            { "ms", "array", of = { "sparse", of = { "float32" }, max = 3 }, max = 2 } },
      S = { { "k", "int", min = 0, max = 9 }, { "qs", "sparse", of = "Q", max = 9 } } }
    local function lq (far, ms) return { k = 2, qs = { [3] = { far = far, ms = ms or {} } } } end
    local la = lq({ [7] = 1, [4000] = 2 })
    la.k = 1
    for _, ch in ipairs {
      { "a slot before", lq({ [3] = 1, [7] = 1, [4000] = 2 }) },
      { "a slot between", lq({ [7] = 1, [100] = 5, [4000] = 2 }) },
      { "a slot after", lq({ [7] = 1, [4000] = 2, [4999] = 1 }) },
      { "first dropped", lq({ [4000] = 2 }) },
      { "last dropped", lq({ [7] = 1 }) },
      { "all dropped", lq({}) },
      { "in an array", lq({ [7] = 1, [4000] = 2 }, { { [1] = 1 } }) } } do
      chain(long, "S", la, ch[2], { k = 3, qs = { [3] = { far = {}, ms = {} } } }, ch[1])
      assert.is_true(long:bits("S", ch[2], { baseline = la }) > 1 + 4 + 1, ch[1])
    end
    local ma = { k = 1, qs = { [3] = { far = { [4000] = 0.0 }, ms = { { [2] = 0.0 } } } } }
    local mb = { k = 2, qs = { [3] = { far = { [4000] = -0.0 }, ms = { { [2] = -0.0 } } } } }
    assert.is_true(long:bits("S", mb, { baseline = ma }) > 1 + 4 + 1)
    chain(long, "S", ma, mb, { k = 3, qs = { [3] = { far = {}, ms = {} } } }, "long zeros", true)
    -- what a field does not take raises as the walk over tables raises it,
    -- also where its number would be the baseline's (0)
    local a0 = { k = 1, qs = { [2] = q({ 0 }, R0, { { 0 } }) } }
    for _, bad in ipairs { "x", true, {}, "0" } do
      for _, b in ipairs { q({ bad }, R0, { { 0 } }), q({ 0 }, { { t = bad, m = 1 } }, { { 0 } }),
                           q({ 0 }, R0, { { bad } }) } do
        local v = { k = 2, qs = { [2] = b } }
        local ok, e = pcall(s.encode, s, "S", v, { baseline = a0 })
        local ok2, e2 = pcall(s.encode, s, "S", v, { baseline = T.poisoned(a0) })
        assert.is_false(ok)
        assert.is_false(ok2)
        assert.matches("^qs%[2%]%.[vrg]s?%[1%][%.%[%]t1]*: expected a number", e)
        assert.equal(e2, e)
      end
    end
  end)

  it("send slots of every other element kind as the walk over tables does", function ()
    -- one schema each, so that a failure names its kind
    local V = { { "x", "int", min = 0, max = 9 } }
    local kinds = {
      { { "float", min = 0, max = 8, res = 0.5, delta = "relative" },
        { [1] = 2, [3] = 4 }, { [1] = 2.5, [3] = 4, [6] = 1 }, { [3] = 4 } },
      { { "array", of = "V", max = 3 }, { [2] = { { x = 1 } } },
        { [2] = { { x = 1 }, { x = 2 } }, [5] = {} }, { [2] = { { x = 3 } } } },
      { { "array", of = { "int", min = 0, max = 9 }, max = 4 }, { [1] = { 1, 2 }, [3] = {} },
        { [1] = { 1, 3 }, [3] = { 4 }, [5] = { 1 } }, { [1] = { 1, 3, 5 }, [5] = {} } },
      { { "array", of = { "int", min = 0, max = 9 }, count = 2 }, { [1] = { 1, 2 }, [4] = { 0, 0 } },
        { [1] = { 1, 3 }, [4] = { 0, 0 }, [6] = { 9, 9 } }, { [1] = { 2, 3 } } },
      { { "array", of = { "array", of = "V", max = 2 }, max = 2 },
        { [2] = { { { x = 1 } }, {} }, [3] = { {} } },
        { [2] = { { { x = 1 }, { x = 2 } }, {} }, [3] = { {} } }, { [2] = { {} } } },
      { { "array", of = { "float", min = 0, max = 8, res = 0.5, delta = "relative" }, max = 3 },
        { [1] = { 1, 2 }, [2] = { 3 } }, { [1] = { 1, 2.5 }, [2] = { 3 } }, { [1] = { 1.5 } } },
      { { "sparse", of = { "int", min = 0, max = 3 }, max = 4 }, { [1] = { [2] = 3 } },
        { [1] = { [2] = 3, [4] = 0 }, [3] = {} }, { [1] = {} } },
      { { "sparse", of = "V", max = 5, encoding = "auto" }, { [1] = { [2] = { x = 1 } }, [3] = {} },
        { [1] = { [2] = { x = 2 }, [4] = { x = 1 } }, [3] = {}, [6] = { [1] = { x = 0 } } },
        { [1] = {}, [6] = { [1] = { x = 0 } } } },
      { { "sparse", of = { "int", min = 0, max = 9 }, max = 300, encoding = "relative" },
        { [2] = { [250] = 1 }, [5] = { [1] = 1 } }, { [2] = { [250] = 2, [7] = 1 }, [5] = { [1] = 1 } },
        { [2] = { [7] = 1 } } },
      { "V", { [4] = { x = 4 } }, { [4] = { x = 5 } }, { [1] = { x = 1 }, [4] = { x = 5 } } },
      { { "int", min = 0, max = 9 }, { [2] = 1, [3] = 2 }, { [2] = 1, [3] = 3 }, { [6] = 0 } },
      -- strings that only grow or shrink: their bytes agree as far as they go
      { { "string", max = 8 }, { [1] = "ab", [2] = "", [3] = "x", [5] = "héllo" },
        { [1] = "a", [2] = "x", [3] = "x", [4] = "", [5] = "héllo!" }, { [1] = "abc", [5] = "h" } },
      { { "bytes", max = 4 }, { [1] = "\0\1", [2] = "" }, { [1] = "\0", [2] = "\0" },
        { [1] = "\0\1\2" } },
      { { "quat", bits = 9, delta = "relative" },
        { [1] = { 0.6, 0, 0.8, 0 }, [3] = { 0, 0, 0, 1 } },
        { [1] = { 0.62, 0, 0.78, 0.1 }, [3] = { 0, 0, 0, 1 }, [4] = { 0, 1, 0, 0 } },
        { [1] = { 0.6, 0.1, 0.79, 0.05 }, [4] = { 0, 1, 0.02, 0 } } },
      { { "angle", bits = 10, delta = "relative" }, { [2] = 1, [5] = 6.2 },
        { [2] = 1.5, [5] = 0.1 }, { [2] = 1.5, [5] = 6.0 } },
    }
    for i, k in ipairs(kinds) do
      local s = bitwire.schema { V = V, S = { { "k", "int", min = 0, max = 9 },
                                              { "sp", "sparse", of = k[1], max = 6 } } }
      chain(s, "S", { k = 1, sp = k[2] }, { k = 2, sp = k[3] }, { k = 3, sp = k[4] },
            "kind " .. i)
    end
    -- arrays and sparse arrays of IEEE floats as slots: by bits, element
    -- by element
    for _, of in ipairs { { "array", of = { "float32" }, max = 3 },
                          { "sparse", of = { "float64" }, max = 3 } } do
      local s = bitwire.schema { S = { { "k", "int", min = 0, max = 9 },
                                       { "sp", "sparse", of = of, max = 6 } } }
      local a = { k = 1, sp = { [2] = { 0.0, 1 }, [4] = { 2 } } }
      local b = { k = 2, sp = { [2] = { -0.0, 1 }, [4] = { 2 } } }
      assert.is_true(s:bits("S", b, { baseline = a }) > 1 + 4 + 1)
      chain(s, "S", a, b, { k = 3, sp = { [2] = { -0.0, 2 }, [5] = {} } }, of[1] .. " of IEEE", true)
    end
    -- one element of a long array changed: a delta of the array, not all of it
    local long = bitwire.schema { S = { { "k", "int", min = 0, max = 9 },
      { "sp", "sparse", of = { "array", of = { "int", min = 0, max = 255 }, max = 40 }, max = 6 } } }
    local xs, ys = {}, {}
    for i = 1, 40 do xs[i], ys[i] = i, i end
    ys[17] = 200
    local la, lb = { k = 1, sp = { [3] = xs } }, { k = 2, sp = { [3] = ys } }
    assert.is_true(long:bits("S", lb, { baseline = la }) < 100)  -- whole: 40 * 8 bits
    chain(long, "S", la, lb, { k = 3, sp = { [3] = xs, [1] = ys } }, "long array")
  end)

  it("compare each raw of a slot with its own, past slots kept, added or dropped", function ()
    -- as spec/07c-tape_fields_spec.lua's raws, for slots: every float,
    -- angle and quaternion number of the baseline is 5 but in slots 5 and
    -- 7, which 'b' sets to 5; compared with another raw, a slot would read
    -- as unchanged
    local s = bitwire.schema { P = {
      { "n", "int", min = 0, max = 9 }, { "x", "float", min = -100, max = 100, res = 0.01 },
      { "q", "quat", bits = 9 }, { "y", "float", min = -100, max = 100, res = 0.01 },
      { "f", "bool" }, { "a", "angle", bits = 9 }, { "m", "uint", bits = 3 },
      { "vs", "array", of = { "float", min = 0, max = 10, res = 0.5 }, max = 4 } },
      S = { { "k", "int", min = 0, max = 9 }, { "ps", "sparse", of = "P", max = 9 } } }
    local function p (n)
      return { x = 5, n = n, q = { 5, 5, 5, 5 }, y = 5, f = n % 2 == 0, a = 5, m = n % 8,
               vs = { 5, 5 } }
    end
    local a = { k = 1, ps = { [2] = p(2), [5] = p(5), [7] = p(7), [8] = p(8) } }
    a.ps[5].x, a.ps[5].q, a.ps[7].q = 6, { 6, 5, 5, 5 }, { 5, 5, 5, 6 }
    local base = s:decode("S", s:encode("S", a))
    for _, edit in ipairs { function () end,
                            function (v) v.ps[2] = nil end,          -- dropped
                            function (v) v.ps[1] = p(1) end,         -- added
                            function (v) v.ps[2] = a.ps[2] end } do  -- shared
      local v = copy(a)
      v.k, v.ps[5].x, v.ps[5].q, v.ps[7].q = 2, 5, { 5, 5, 5, 5 }, { 5, 5, 5, 5 }
      edit(v)
      local bytes = sameastable(s, "S", v, a)
      assert.equal(bytes, sameastable(s, "S", v, copy(a)))
      local got = assert(s:decode("S", bytes, { baseline = base }))
      assert.is_true(math.abs(got.ps[5].x - 5) < 0.01)
      assert.is_true(math.abs(got.ps[5].q[1] - 0.5) < 0.01)
      assert.is_true(math.abs(got.ps[7].q[4] - 0.5) < 0.01)
      assert.same(s:decode("S", s:encode("S", v)), got)
      -- on, against the tape this delta left on 'v': numbers that quantize
      -- as its own are unchanged, if the tape kept its codes
      local w = copy(v)
      w.k = 3
      for _, e in pairs(w.ps) do e.q = { 5, 5, 5, 5 - 1e-9 } end
      sameastable(s, "S", w, v)
      v.k = 1
      sameastable(s, "S", a, v)  -- and back
    end
  end)

  it("take a slot's quaternion as the walk over tables takes it, whatever holds its numbers", function ()
    -- a quaternion whose numbers have the baseline's code is unchanged,
    -- against a tape with raws or without (a decoded baseline); one that
    -- is not four numbers is refused as its full encode refuses it
    local s = bitwire.schema {
      P = { { "n", "int", min = 0, max = 9 }, { "q", "quat", bits = 9 } },
      S = { { "k", "int", min = 0, max = 9 }, { "ps", "sparse", of = "P", max = 4 } } }
    local a = { k = 1, ps = { [2] = { n = 1, q = { 0, 0, 0, 1 } } } }
    local dec = s:decode("S", s:encode("S", a))
    for _, q in ipairs { { "a", 0, 0, 1 }, { 0, 0, 0, "1" }, { 0, 0, 1e-9, 1 }, { 0, 0, 0, 1 } } do
      local v = { k = 2, ps = { [2] = { n = 1, q = q } } }
      local takes = pcall(s.encode, s, "S", v)
      for _, base in ipairs { a, dec } do
        if takes then
          sameastable(s, "S", v, base)
          assert.equal(1 + 4 + 1, s:bits("S", v, { baseline = base }))  -- k, unchanged
        else
          assert.matches("quaternion component", H.errorof(s.encode, s, "S", v, { baseline = base }))
        end
      end
    end
    -- and inside a slot's arrays and sparse arrays, in the value or the
    -- baseline
    local s2 = bitwire.schema {
      P = { { "qs", "array", of = { "quat", bits = 9 }, max = 2 },
            { "sq", "sparse", of = { "quat", bits = 9 }, max = 3 } },
      S = { { "k", "int", min = 0, max = 9 }, { "ps", "sparse", of = "P", max = 4 } } }
    local function val (k, q) return { k = k, ps = { [3] = { qs = { q }, sq = { [2] = q } } } } end
    local a2 = val(1, { 0, 0, 0, 1 })
    local badbase = val(1, { 0, "0", 0, 1 })  -- differs from any quaternion
    for _, base in ipairs { a2, s2:decode("S", s2:encode("S", a2)), badbase } do
      for _, q in ipairs { { "a", 0, 0, 1 }, { 0, 0, 0, 1, 5 }, { 0, 0, 0, 1 } } do
        if pcall(s2.encode, s2, "S", val(2, q)) then
          sameastable(s2, "S", val(2, q), base)
          assert.equal(base == badbase, 1 + 4 + 1 < s2:bits("S", val(2, q), { baseline = base }))
        else
          assert.matches("quaternion", H.errorof(s2.encode, s2, "S", val(2, q), { baseline = base }))
        end
      end
    end
    -- a slot whose numbers are no quaternion is refused where the walk over
    -- tables refuses it
    local bad = { k = 2, ps = { [2] = { n = 1, q = { 0, 0, 0, 0 } } } }
    for _, base in ipairs { a, dec } do
      assert.equal(H.errorof(s.encode, s, "S", bad, { baseline = T.poisoned(base) }),
                   H.errorof(s.encode, s, "S", bad, { baseline = base }))
    end
  end)

  it("keep slots shared with the baseline, as the walk over tables keeps them", function ()
    -- a slot whose table is the baseline's is kept without a compare once
    -- one is found (fresh ones are checked every eighth, the others
    -- compared: the same bits); a sent slot's records shared with the
    -- baseline's are kept too; strict checks both, as the walk over tables
    -- does, raising alike
    local s = bitwire.schema {
      V = { { "x", "int", min = 0, max = 9 } },
      E = { { "n", "int", min = 0, max = 99 }, { "v", "V" } },
      S = { { "k", "int", min = 0, max = 9 }, { "es", "sparse", of = "E", max = 40 } } }
    local function e (n) return { n = n, v = { x = n % 10 } } end
    local rand = H.lcg(9)
    for round = 1, 40 do
      local a = { k = 1, es = {} }
      for i = 1, 40 do if rand(3) > 0 then a.es[i] = e(rand(100)) end end
      local b = { k = 2, es = {} }
      for i, x in pairs(a.es) do
        local r = rand(4)
        if r == 0 then b.es[i] = x                         -- shared
        elseif r == 1 then b.es[i] = { n = (x.n + 1) % 100, v = x.v }  -- sent, its
                                                                  -- record shared
        elseif r == 2 then b.es[i] = e(rand(100)) end      -- fresh
      end
      local strict = round % 2 == 0
      if strict then  -- an undeclared key in what both walks keep
        for _, x in pairs(a.es) do x.v.extra = 1 end
      end
      -- the walk over tables, against a baseline that shares a's tables
      local poisoned = { k = "not a number", es = a.es }
      local ok, want = pcall(s.encode, s, "S", b, { baseline = poisoned, strict = strict })
      local ok2, got = pcall(s.encode, s, "S", b, { baseline = a, strict = strict })
      assert.equal(ok, ok2)
      if ok then assert.equal(H.tohex(want), H.tohex(got))
      else
        assert.equal(want, got)
        assert.matches("unknown key 'extra'", got, 1, true)
      end
    end
  end)

  it("keep, drop, add and change slots of records, long and short", function ()
    local s = bitwire.schema {
      E = { { "id", "int", min = 0, max = 4095 }, { "x", "float", min = -512, max = 512, res = 0.01 },
            { "hp", "int", min = 0, max = 100, default = 100 },
            { "name", "string", max = 16, optional = true } },
      S = { { "k", "int", min = 0, max = 9 },
            { "short", "sparse", of = "E", max = 64 },
            { "long", "sparse", of = "E", max = 100000, encoding = "index" } } }
    local rand = H.lcg(3)
    local function ent (i) return { id = i % 4096, x = rand(1000) / 10, hp = rand(101),
                                   name = rand(3) == 0 and "e" .. i or nil } end
    for round = 1, 30 do
      local a = { k = 1, short = {}, long = {} }
      for _ = 1, rand(20) do local i = rand(64) + 1; a.short[i] = ent(i) end
      for _ = 1, rand(20) do local i = rand(100000) + 1; a.long[i] = ent(i) end
      local b = copy(a)
      b.k = 2
      for _, sp in ipairs { b.short, b.long } do
        for i, e in pairs(sp) do
          local r = rand(6)
          if r == 0 then sp[i] = nil
          elseif r == 1 then e.x = rand(1000) / 10
          elseif r == 2 then e.hp = nil            -- its default: maybe unchanged
          elseif r == 3 then e.name = nil end
        end
      end
      b.short[rand(64) + 1] = ent(1)
      b.long[rand(100000) + 1] = ent(2)
      local c = copy(b)
      c.k = 3
      c.short[next(c.short) or 1] = ent(3)
      chain(s, "S", a, b, c, "round " .. round)
    end
  end)
end)
