-- Deltas against tapes: the fields a tape holds (float32 and float64,
-- bytes, tiered, a removed field's default), each raw and value compared
-- with its own past records kept, shared or skipped.
local bitwire = require "bitwire"
local T = require "spec.tape_helpers"
local copy, sameastable, decodesame = T.copy, T.sameastable, T.decodesame

describe("deltas against tapes", function ()
  it("keep a removed field's default in a kept record of optional fields", function ()
    -- a kept record whose type has optional fields is made after its
    -- fields, sized as a fresh decode sizes it; a field removed at this
    -- version still takes its default there
    local s = bitwire.schema {
      R = { { "o", "int", min = 0, max = 9, optional = true },
            { "gone", "int", min = 0, max = 9, removed = 1, default = 4 },
            { "n", "int", min = 0, max = 9 } },
      S = { { "k", "int", min = 0, max = 9 }, { "rs", "array", of = "R", max = 4 } } }
    local a = { k = 1, rs = { { o = 2, n = 1 }, { n = 2 } } }
    local b = { k = 2, rs = { { o = 2, n = 1 }, { n = 3 } } }
    local base = s:decode("S", s:encode("S", a))
    local bytes = s:encode("S", b, { baseline = a })
    local got = assert(s:decode("S", bytes, { baseline = base }))
    assert.same(s:decode("S", s:encode("S", b)), got)
    assert.equal(4, got.rs[1].gone)
    decodesame(s, "S", bytes, base)
  end)

  it("compare float32 and float64 fields by their bits, as the walk over tables does", function ()
    -- bw_equalopt's rule: the same bits on the wire (-0.0 is not 0.0, a
    -- NaN keeps its payload; a number float32 rounds is its rounding)
    local s = bitwire.schema { F = {
      { "k", "int", min = 0, max = 9 }, { "a", "float32" }, { "b", "float64" },
      { "o", "float32", optional = true },
      { "arr", "array", of = { "float64" }, max = 4 } } }
    local f32 = function (x) return (string.unpack("<f", string.pack("<f", x))) end
    local nan = 0 / 0
    local function payload (p) return (string.unpack("<d", string.pack("<i8", p))) end
    local pairs_ = { { 0.1, 0.1 }, { 0.1, f32(0.1) }, { f32(0.1), 0.1 }, { 0.0, -0.0 },
                     { -0.0, 0.0 }, { nan, nan }, { nan, 1 }, { 1e39, 1e39 }, { 1e39, 1 / 0 },
                     { 3, 3.0 }, { 2.5, 2.5000000000000004 },
                     { payload(0x7ff8000000000001), payload(0x7ff8000000000002) } }
    for i, p in ipairs(pairs_) do
      local x, y = p[1], p[2]
      local a = { k = 1, a = x, b = x, o = x, arr = { x, 1, x } }
      local b = { k = 2, a = y, b = y, o = y, arr = { y, 1, y } }
      local msg = ("pair %d: %s, %s"):format(i, x, y)
      -- against the table's own tape (its raws), and against a decoded one
      local bytes = sameastable(s, "F", b, a, nil, msg)
      local dec = s:decode("F", s:encode("F", a))
      local dbytes = sameastable(s, "F", b, dec, nil, msg)
      for _, c in ipairs { { bytes, dec }, { dbytes, dec } } do
        local got = assert(s:decode("F", c[1], { baseline = c[2] }))
        assert.equal(s:encode("F", b), s:encode("F", got), msg)  -- bit for bit
        local shared = assert(s:decode("F", c[1], { baseline = c[2], share = true }))
        assert.equal(s:encode("F", shared), s:encode("F", got), msg)
      end
      -- chained: the next delta against the tape this one left on 'b'
      a.k = 3
      sameastable(s, "F", a, b, nil, msg)
      -- what is kept is pushed from the codes each walk wrote: a delta's
      -- decode, and a decoded table encoded again (a relay's)
      local d1, d2 = dec, s:decode("F", s:encode("F", b))
      local got = assert(s:decode("F", dbytes, { baseline = d1 }))
      s:encode("F", d2, { baseline = d1 })
      for _, base2 in ipairs { got, d2 } do
        local v = copy(base2)
        v.k = 4
        local kept = sameastable(s, "F", v, base2, nil, msg)
        assert.equal(s:encode("F", assert(s:decode("F", kept, { baseline = base2, share = true }))),
                     s:encode("F", assert(s:decode("F", kept, { baseline = base2 }))), msg)
      end
    end
  end)

  it("hold bytes fields, their lengths past the field's min", function ()
    local s = bitwire.schema { B = { { "k", "int", min = 0, max = 9 },
      { "b", "bytes", min = 2, max = 5 }, { "c", "bytes", count = 3 },
      { "o", "bytes", max = 4, optional = true } } }
    local cases = {
      { { k = 1, b = "ab", c = "xyz" }, { k = 2, b = "ab", c = "xyz", o = "\0" } },
      { { k = 1, b = "abcde", c = "\0\1\2", o = "" }, { k = 2, b = "abcd", c = "\0\1\2" } },
      -- baselines no encode takes (too short, too long): read as the walk
      -- over tables reads them
      { { k = 1, b = "a", c = "xyz" }, { k = 2, b = "ab", c = "xyz" } },
      { { k = 1, b = "ab", c = "wxyz" }, { k = 2, b = "ab", c = "xyz" } },
    }
    for i, c in ipairs(cases) do
      local a, b = c[1], c[2]
      local bytes = sameastable(s, "B", b, a, nil, "case " .. i)
      if i <= 2 then
        local base = s:decode("B", s:encode("B", a))
        decodesame(s, "B", bytes, base)
        assert.same(s:decode("B", s:encode("B", b)), s:decode("B", bytes, { baseline = base }))
        a.k = 3
        sameastable(s, "B", a, b)  -- against the tape this delta left on 'b'
      end
    end
  end)

  it("hold tiered fields, compared by value", function ()
    local s = bitwire.schema { T = { { "k", "int", min = 0, max = 9 },
      { "t", "tiered", tiers = { 0, 2, 3, 4, 5, 6 }, min = 1, max = 100 },
      { "o", "tiered", tiers = { 1, 8 }, min = -10, optional = true },
      { "arr", "array", of = { "tiered", tiers = { 0, 2, 3 }, max = 3 }, max = 3 } } }
    for i, p in ipairs { { 5, 5 }, { 5, 5.0 }, { 5, 6 }, { 1, 100 }, { 100, 1 }, { 3, 2 } } do
      local x, y = p[1], p[2]
      local a = { k = 1, t = x, o = x, arr = { x % 4, 1, x % 4 } }
      local b = { k = 2, t = y, o = y, arr = { y % 4, 1, 3 } }
      local msg = "pair " .. i
      local dec = s:decode("T", s:encode("T", a))
      local bytes = sameastable(s, "T", b, a, nil, msg)
      assert.equal(bytes, sameastable(s, "T", b, dec, nil, msg))
      decodesame(s, "T", bytes, dec)
      assert.same(s:decode("T", s:encode("T", b)), s:decode("T", bytes, { baseline = dec }))
      -- kept values pushed from the codes a delta's decode and a relay's
      -- encode of a decoded table wrote
      local got = assert(s:decode("T", bytes, { baseline = dec }))
      local d2 = s:decode("T", s:encode("T", b))
      s:encode("T", d2, { baseline = dec })
      for _, base2 in ipairs { got, d2 } do
        local v = copy(base2)
        v.k = 4
        local kept = sameastable(s, "T", v, base2, nil, msg)
        decodesame(s, "T", kept, base2)
      end
      a.k = 3
      sameastable(s, "T", a, b, nil, msg)  -- against the tape left on 'b'
    end
    -- baselines the field does not take: read as the walk over tables reads them
    for _, bad in ipairs { 0, 101, 5.5 } do
      sameastable(s, "T", { k = 2, t = 5, arr = {} }, { k = 1, t = bad, arr = {} })
      -- the same value again: a baseline the field does not take vouches
      -- for none of its values, so it raises as its full encode does
      local v = { k = 2, t = bad, arr = {} }
      local ok, full = pcall(s.encode, s, "T", v)
      assert.is_false(ok)
      assert.has_error(function ()
        s:encode("T", v, { baseline = { k = 1, t = bad, arr = {} } })
      end, full)
    end
  end)

  it("compare each raw with its own, past records kept, shared or sent", function ()
    -- every walk past a record, kept, shared or sent, steps over exactly
    -- its raws, or a value is compared with another's raw. Every float,
    -- angle and quaternion number of the baseline is 5 but ps[2].x,
    -- ps[2].q[1] and ps[3].q[4], which 'b' sets to 5: compared with any
    -- other raw, they would read as unchanged.
    local s = bitwire.schema { P = {
      { "n", "int", min = 0, max = 9 }, { "x", "float", min = -100, max = 100, res = 0.01 },
      { "q", "quat", bits = 9 }, { "y", "float", min = -100, max = 100, res = 0.01 },
      { "f", "bool" },
      { "a", "angle", bits = 9 }, { "m", "uint", bits = 3 },
      { "ns", "array", of = { "int", min = 0, max = 9 }, max = 4 },
      { "vs", "array", of = { "float", min = 0, max = 10, res = 0.5 }, max = 4 } },
      S = { { "k", "int", min = 0, max = 9 }, { "ps", "array", of = "P", max = 8 }, { "last", "P" } } }
    local function p (n)
      return { x = 5, n = n, q = { 5, 5, 5, 5 }, y = 5, f = n % 2 == 0, a = 5, m = n,
               ns = { n, 2 }, vs = { 5, 5 } }
    end
    local a = { k = 1, ps = { p(1), p(2), p(3) }, last = p(4) }
    a.ps[2].x, a.ps[2].q, a.ps[3].q = 6, { 6, 5, 5, 5 }, { 5, 5, 5, 6 }
    local base = s:decode("S", s:encode("S", a))
    local function b (first)
      local v = copy(a)
      v.k, v.ps[1], v.ps[2].x = 2, first, 5
      v.ps[2].q, v.ps[3].q = { 5, 5, 5, 5 }, { 5, 5, 5, 5 }
      return v
    end
    local shareds = copy(a.ps[1])
    shareds.ns, shareds.vs = a.ps[1].ns, a.ps[1].vs
    for _, first in ipairs { copy(a.ps[1]), a.ps[1], shareds } do
      local v = b(first)
      -- the walk over tables (poisoned) against a's tape and a tape of a's table
      local bytes = sameastable(s, "S", v, a)
      assert.equal(bytes, sameastable(s, "S", v, copy(a)))
      local got = assert(s:decode("S", bytes, { baseline = base }))
      assert.is_true(math.abs(got.ps[2].x - 5) < 0.01)
      assert.is_true(math.abs(got.ps[2].q[1] - 0.5) < 0.01)
      assert.is_true(math.abs(got.ps[3].q[4] - 0.5) < 0.01)
      assert.same(s:decode("S", s:encode("S", v)), got)
      -- on, against the tape this delta left on 'v', with numbers that
      -- quantize as its own: unchanged, if the tape kept its codes
      local w = copy(v)
      w.k = 3
      for _, e in ipairs(w.ps) do e.q = { 5, 5, 5, 5 - 1e-9 } end
      sameastable(s, "S", w, v)
      -- and back, against the tape this delta left on 'v'
      v.k = 1
      sameastable(s, "S", a, v)
    end
  end)

  it("compare each value with its own baseline value, whatever the walk skips", function ()
    -- a tape keeps each scalar's Lua value next to its code, and a run
    -- whose values are all the baseline's is not quantized again; the
    -- values here make a run that read the wrong baseline values (after
    -- skipping or keeping a record, a scalar or array elements) look
    -- unchanged when it changed
    local s = bitwire.schema {
      Pair = { { "u", "int", min = 0, max = 9 }, { "v", "int", min = 0, max = 9 } },
      Root = { { "k", "int", min = 0, max = 1000 },
               { "o", "int", min = 0, max = 9, optional = true },
               { "items", "array", of = "Pair", max = 4 },
               { "nums", "array", of = { "int", min = 0, max = 9 }, max = 4 },
               { "onums", "array", of = { "int", min = 0, max = 9 }, max = 4,
                 optional = true },
               { "r", "Pair" } },
    }
    local function P (u, v) return { u = u, v = v } end
    local cases = {
      -- the baseline's second element, past the value's count, skipped
      { { k = 0, items = { P(1, 2), P(3, 4) }, nums = {}, r = P(7, 8) },
        function () return { k = 1, items = { P(1, 2) }, nums = {}, r = P(3, 4) } end },
      -- a shared element skipped; the next one is the skipped one's values
      { { k = 0, items = { P(5, 6), P(1, 1) }, nums = {}, r = P(0, 0) },
        function (a) return { k = 1, items = { a.items[1], P(5, 6) }, nums = {}, r = P(0, 0) } end },
      -- an optional scalar the value drops
      { { k = 0, o = 5, items = {}, nums = {}, r = P(1, 1) },
        function () return { k = 1, items = {}, nums = {}, r = P(5, 1) } end },
      -- an optional scalar both have
      { { k = 0, o = 5, items = {}, nums = {}, r = P(1, 1) },
        function () return { k = 1, o = 5, items = {}, nums = {}, r = P(5, 1) } end },
      -- scalar elements past the value's count
      { { k = 0, items = {}, nums = { 3, 4, 9 }, r = P(1, 1) },
        function () return { k = 1, items = {}, nums = { 3 }, r = P(4, 9) } end },
      -- an array of scalars the value drops
      { { k = 0, items = {}, nums = {}, onums = { 4, 9 }, r = P(1, 1) },
        function () return { k = 1, items = {}, nums = {}, r = P(4, 9) } end },
    }
    for n, case in ipairs(cases) do
      local a = case[1]
      local b = case[2](a)
      local want = sameastable(s, "Root", b, a, nil, "case " .. n)
      decodesame(s, "Root", want, s:decode("Root", s:encode("Root", a)))
    end
    -- the tape a delta leaves holds the values it kept: a shared element's,
    -- an element sent whole past the baseline's count
    local a = { k = 0, items = { P(5, 6), P(1, 1) }, nums = {}, r = P(0, 0) }
    local b = { k = 1, items = { a.items[1], P(2, 2), P(3, 3) }, nums = {}, r = P(0, 0) }
    s:encode("Root", b, { baseline = a })
    local c = { k = 2, items = { P(2, 2), P(3, 3), P(0, 0) }, nums = {}, r = P(3, 3) }
    sameastable(s, "Root", c, b, nil, "the chain")
    -- a float whose value moved less than a step keeps its code
    local f = bitwire.schema { V = { { "k", "int", min = 0, max = 9 },
                                     { "x", "float", min = 0, max = 1, res = 0.1 } } }
    local fa, fb = { k = 0, x = 0.5 }, { k = 1, x = 0.51 }
    assert.equal(4 + 1 + 1, f:bits("V", fb, { baseline = fa }))  -- k; x unchanged
    sameastable(f, "V", fb, fa)
    sameastable(f, "V", { k = 2, x = 0.5 }, fb)  -- fb's tape: its own value
  end)
end)
