-- Sparse arrays (array subsets): each encoding at its edges and tier
-- boundaries, with bit counts worked out by hand; hostile sparse bytes;
-- sparse arrays as the elements of an array.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local fails, KNOWN_CODES = H.fails, H.KNOWN_CODES
local tohex, errorof, contains, lcg, randbytes =
  H.tohex, H.errorof, H.contains, H.lcg, H.randbytes

-- int_relative's cost of a gap, from DESIGN.md's tiers
local IR = { { 1, 1 }, { 6, 5 }, { 23, 8 }, { 280, 13 }, { 4377, 18 },
             { 69914, 23 } }
local function irbits (d)
  for _, t in ipairs(IR) do if d <= t[1] then return t[2] end end
  return 38
end

-- the article's tiers: a flag per tier, then 0, 2, 3, 4, 5, 6 bits; the rest
-- (126 .. n + 1) after six zero flags in bits_required(126, n + 1). A tier
-- that reaches past the sentinel n + 1 is cut there and needs fewer bits.
local ART = { { 1, 1, 0 }, { 5, 2, 2 }, { 13, 3, 3 }, { 29, 4, 4 },
              { 61, 5, 5 }, { 125, 6, 6 } }
local function artbits (d, n)
  local lo = 1
  for _, t in ipairs(ART) do
    if d <= t[1] then
      if t[1] > n + 1 then return t[2] + bitwire.bits_required(lo, n + 1) end
      return t[2] + t[3]
    end
    lo = t[1] + 1
  end
  return 6 + bitwire.bits_required(126, n + 1)
end

-- Bits of a relative encoding of the sent slots (a sorted list) of 1..n.
local function relbits (slots, n, gapbits)
  local prev, b = 0, 0
  for _, i in ipairs(slots) do
    b = b + gapbits(i - prev, n)
    prev = i
  end
  return b + gapbits(n + 1 - prev, n)
end

-- a table with 'v' (or v(i)) at each listed slot
local function slots (list, v)
  local t = {}
  for _, i in ipairs(list) do
    if type(v) == "function" then t[i] = v(i) else t[i] = v end
  end
  return t
end

------------------------------------------------------------------------------
-- Sparse arrays: eight slots of 3-bit ints, so every count is a small sum.
------------------------------------------------------------------------------
local function small_schema (n)
  local function sp (enc, tiers)
    return { { "s", "sparse", of = { "int", min = 0, max = 7 }, max = n,
               encoding = enc, tiers = tiers } }
  end
  return bitwire.schema {
    M = sp "mask", I = sp "index", R = sp "relative",
    RA = sp("relative", "article"), A = sp "auto", AA = sp("auto", "article"),
  }
end

describe("sparse", function ()
  local s = small_schema(8)
  local ENCODINGS = { "M", "I", "R", "RA", "A", "AA" }

  -- slots -> hand counts: mask 8 + 3k; index 4 (int(k, 0, 8)) + k * (3 + 3);
  -- relative: the gaps and the sentinel 9 (int_relative / article tiers) + 3k;
  -- the article's third tier [6, 13] is cut to [6, 9] here: '001' + 2 bits;
  -- auto: 2 + the cheapest (mask on a tie, then index).
  local CASES = {
    { "empty", {}, M = 8, I = 4, R = 8, RA = 5, A = 6, pick = 1, AA = 6 },
    { "first slot only", { 1 }, M = 11, I = 10, R = 12, RA = 9, A = 12,
      pick = 1 },
    { "last slot only", { 8 }, M = 11, I = 10, R = 12, RA = 9, A = 12,
      pick = 1 },
    { "full", { 1, 2, 3, 4, 5, 6, 7, 8 }, M = 32, I = 52, R = 33, RA = 33,
      A = 34, pick = 0 },
    { "a run at the front", { 1, 2, 3 }, M = 17, I = 22, R = 17, RA = 17,
      A = 19, pick = 0 },
    { "first and last", { 1, 8 }, M = 14, I = 16, R = 16, RA = 13, A = 16,
      pick = 0 },
    { "a run at the back", { 6, 7, 8 }, M = 17, I = 22, R = 17, RA = 17,
      A = 19, pick = 0 },
    { "two far apart", { 2, 7 }, M = 14, I = 16, R = 21, RA = 18, A = 16,
      pick = 0, AA = 16 },
  }

  for _, c in ipairs(CASES) do
    it("counts bits by hand: " .. c[1], function ()
      local v = { s = slots(c[2], function (i) return i % 8 end) }
      for _, enc in ipairs { "M", "I", "R", "RA", "A" } do
        assert.equal(c[enc], s:bits(enc, v), enc)
        assert.equal(math.ceil(c[enc] / 8), #s:encode(enc, v), enc)
      end
      -- the formulas agree with the hand counts
      local k = #c[2]
      assert.equal(8 + 3 * k, c.M)
      assert.equal(4 + 6 * k, c.I)
      assert.equal(relbits(c[2], 8, irbits) + 3 * k, c.R)
      assert.equal(relbits(c[2], 8, artbits) + 3 * k, c.RA)
      assert.equal(2 + math.min(c.M, c.I, c.R), c.A)
      if c.AA then assert.equal(c.AA, s:bits("AA", v)) end
      -- auto names its pick in the first two bits
      assert.equal(c.pick, s:encode("A", v):byte(1) & 3)
    end)
  end

  it("auto picks each encoding where it is the cheapest", function ()
    local s2 = small_schema(64)   -- count in 7 bits, indices in 6
    -- spread: mask 64, index 7 + 3 * 6 = 25, relative 8 + 13 + 8 + 5 = 34
    local v = { s = slots({ 10, 40, 60 }, 1) }
    assert.equal(1, s2:encode("A", v):byte(1) & 3)
    assert.equal(2 + 25 + 9, s2:bits("A", v))
    -- a run: mask 64, index 25, relative 8 + 1 + 1 + 13 (gap 53) = 23
    v = { s = slots({ 10, 11, 12 }, 1) }
    assert.equal(2, s2:encode("A", v):byte(1) & 3)
    assert.equal(2 + 23 + 9, s2:bits("A", v))
    -- every other slot: mask 64, index 7 + 32 * 6, relative 1 + 31 * 5 + 5
    v = { s = {} }
    for i = 1, 63, 2 do v.s[i] = 2 end
    assert.equal(0, s2:encode("A", v):byte(1) & 3)
    assert.equal(2 + 64 + 32 * 3, s2:bits("A", v))
  end)

  it("writes the bits serialize.h's primitives would, in each encoding", function ()
    local v = { s = { [2] = 5, [3] = 6, [8] = 7 } }
    local w = bitwire.writer()            -- mask
    for i = 1, 8 do
      w:bool(v.s[i] ~= nil)
      if v.s[i] then w:int(v.s[i], 0, 7) end
    end
    assert.equal(tohex(w:tostring()), tohex(s:encode("M", v)))
    w = bitwire.writer()                  -- index: count, then i - 1
    w:int(3, 0, 8)
    for _, i in ipairs { 2, 3, 8 } do w:int(i - 1, 0, 7) w:int(v.s[i], 0, 7) end
    assert.equal(tohex(w:tostring()), tohex(s:encode("I", v)))
    w = bitwire.writer()                  -- relative: from 0, sentinel n + 1
    local prev = 0
    for _, i in ipairs { 2, 3, 8 } do
      w:int_relative(prev, i) w:int(v.s[i], 0, 7)
      prev = i
    end
    w:int_relative(8, 9)
    assert.equal(tohex(w:tostring()), tohex(s:encode("R", v)))
    local a = bitwire.writer()            -- auto: 2 bits, then the pick
    a:bits(0, 2)
    for i = 1, 8 do
      a:bool(v.s[i] ~= nil)
      if v.s[i] then a:int(v.s[i], 0, 7) end
    end
    assert.equal(tohex(a:tostring()), tohex(s:encode("A", v)))
  end)

  it("round-trips every encoding at its edges", function ()
    local lists = { {}, { 1 }, { 8 }, { 1, 8 }, { 1, 2, 3, 4, 5, 6, 7, 8 },
                    { 2, 4, 6, 8 }, { 1, 3, 5, 7 }, { 4, 5 } }
    for _, enc in ipairs(ENCODINGS) do
      for _, l in ipairs(lists) do
        local v = { s = slots(l, function (i) return 8 - i end) }
        assert.same(v, s:decode(enc, s:encode(enc, v)))
      end
    end
  end)

  it("round-trips every subset of 8 slots in every encoding", function ()
    for _, enc in ipairs(ENCODINGS) do
      for m = 0, 255 do
        local v = { s = {} }
        for i = 1, 8 do
          if m & (1 << (i - 1)) ~= 0 then v.s[i] = (m + i) % 8 end
        end
        local bytes = s:encode(enc, v)
        assert.equal(math.ceil(s:bits(enc, v) / 8), #bytes)
        assert.same(v, s:decode(enc, bytes))
      end
    end
  end)

  it("decodes into a table, clearing the slots that are not sent", function ()
    for _, enc in ipairs(ENCODINGS) do
      local t = { s = { 1, 2, 3, 4, 5, 6, 7, 0 } }
      local keep = t.s
      local v = s:decode(enc, s:encode(enc, { s = { [3] = 7 } }), { into = t })
      assert.equal(t, v)
      assert.equal(keep, v.s)
      assert.same({ [3] = 7 }, v.s)
    end
  end)

  it("of records names the slot in errors", function ()
    local s2 = bitwire.schema {
      Cube = { { "x", "int", min = 0, max = 7 } },
      S = { { "cubes", "sparse", of = "Cube", max = 8 } },
    }
    contains("cubes[3].x: 9 out of range [0, 7]",
      errorof(s2.encode, s2, "S", { cubes = { [3] = { x = 9 } } }))
    contains("cubes[5].x: missing",
      errorof(s2.encode, s2, "S", { cubes = { [5] = {} } }))
  end)

  local BADKEYS = {
    { "slot 0", { [0] = 1 } }, { "slot n + 1", { [9] = 1 } },
    { "a negative slot", { [-1] = 1 } }, { "a string key", { x = 1 } },
    { "a float key", { [1.5] = 1 } }, { "a table key", { [{}] = 1 } },
    { "good slots and a bad one", { 1, 2, [20] = 3 } },
  }
  for _, c in ipairs(BADKEYS) do
    it("raises on encode for keys outside 1..n: " .. c[1], function ()
      for _, enc in ipairs(ENCODINGS) do
        contains("s: sparse keys must be integers in [1, 8]",
          errorof(s.encode, s, enc, { s = c[2] }))
      end
    end)
  end

  it("raises on a value that is not a table", function ()
    contains("s: expected a table, got number", errorof(s.encode, s, "A", { s = 3 }))
    contains("s: missing", errorof(s.encode, s, "A", {}))
  end)

  it("refuses keys outside its slots in a delta whose slots did not change", function ()
    -- a delta that kept the slots would drop the other keys unsaid
    local sp3 = { "sparse", of = { "int", min = 0, max = 9 }, max = 3 }
    local d = bitwire.schema {
      Unit = { { "s", "sparse", of = { "int", min = 0, max = 9 }, max = 3 } },
      A = { { "s", "sparse", of = { "int", min = 0, max = 9 }, max = 3 },
            { "long", "sparse", of = { "int", min = 0, max = 9 }, max = 5000 },
            { "units", "array", of = "Unit", max = 4 },
            { "rows", "array", of = sp3, max = 4 },
            { "grid", "sparse", of = "Unit", max = 3 },
            { "tag", "int", min = 0, max = 3, since = 1 } },
    }
    -- the value with 'bad' at 'where' (its path in the error), the rest
    -- as the baseline
    local function value (where, bad)
      local ok = { [2] = 5 }
      local at = function (w) return where == w and bad or ok end
      return { s = at("s"), long = at("long"), units = { { s = at("units[1].s") } },
               rows = { at("rows[1]") }, grid = { [3] = { s = at("grid[3].s") } } }
    end
    local base = value()
    local cases = {}
    for _, bad in ipairs { { [2] = 5, [4] = 1 }, { [2] = 5, [0] = 1 },
                           { [2] = 5, [1.5] = 1 }, { [2] = 5, x = 1 } } do
      for _, where in ipairs { "s", "units[1].s", "rows[1]", "grid[3].s" } do
        cases[#cases + 1] = { where, bad, 3 }
      end
    end
    cases[#cases + 1] = { "long", { [2] = 5, [5001] = 1 }, 5000 }
    for _, case in ipairs(cases) do
      for _, version in ipairs { 1, 0 } do  -- against the tape, and the walk
        contains(("%s: sparse keys must be integers in [1, %d]"):format(case[1], case[3]),
                 errorof(d.encode, d, "A", value(case[1], case[2]),
                         { baseline = base, version = version }))
      end
    end
  end)

  it("takes a baseline with keys outside its slots as none, on both sides", function ()
    -- a reload's smaller max, or a field that was another kind, leaves such
    -- a baseline: its keys no wire can name, so the array goes whole, and
    -- the receiver, asking the same of its copy, reads it so
    local sp3 = { "sparse", of = { "int", min = 0, max = 9 }, max = 3 }
    local function schema (enc)
      local sp = { "s", "sparse", of = { "int", min = 0, max = 9 }, max = 3, encoding = enc }
      return bitwire.schema {
        Unit = { sp },
        A = { { "hp", "int", min = 0, max = 9 }, sp,
              { "long", "sparse", of = { "int", min = 0, max = 9 }, max = 5000 },
              { "units", "array", of = "Unit", max = 4 },
              { "rows", "array", of = sp3, max = 4 },
              { "grid", "sparse", of = "Unit", max = 3 } },
      }
    end
    local function value (where, v, other)
      local at = function (w) return where == w and v or other end
      return { hp = 1, s = at("s"), long = at("long"), units = { { s = at("units[1].s") } },
               rows = { at("rows[1]") }, grid = { [3] = { s = at("grid[3].s") } } }
    end
    local n = 0
    for _, enc in ipairs { "mask", "index", "relative", "auto" } do
      local d = schema(enc)
      for _, where in ipairs { "s", "long", "units[1].s", "rows[1]", "grid[3].s" } do
        local max = where == "long" and 5000 or 3
        for _, bad in ipairs { { [1] = 3, [max + 1] = 4 }, { [0] = 1 }, { [1.5] = 1 },
                               { x = 1, y = 2 }, { 7, 7, 7, 7, 7 } } do
          local base = value(where, bad, { [2] = 5 })
          -- the value's slots other than the baseline's, or the same ones
          -- (a slot 1..max alike, or none: the field still changed)
          for _, kept in ipairs { { [1] = 4 }, { [1] = 3 }, {} } do
            local b = value(where, kept, { [2] = 5 })
            local delta = d:encode("A", b, { baseline = base })
            local got, msg = d:decode("A", delta, { baseline = base })
            assert.is_truthy(got, msg)
            assert.are.equal(d:encode("A", b), d:encode("A", got))
            n = n + 1
          end
        end
      end
    end
    assert.are.equal(4 * 5 * 5 * 3, n)
  end)

  it("copies only slots from a baseline a decode into left other keys in", function ()
    -- a table this schema decoded is refilled as it is: keys added to it
    -- by hand stay; a delta against that table must not carry them into
    -- its fresh result, which encodes again
    local d = bitwire.schema { A = { { "k", "int", min = 0, max = 9 },
      { "sp", "sparse", of = { "int", min = 0, max = 9 }, max = 6 } } }
    local a = { k = 1, sp = { [2] = 5 } }
    local into = d:decode("A", d:encode("A", a))
    into.sp[50], into.sp.x = 1, 2
    assert(d:decode("A", d:encode("A", a), { into = into }))
    assert.equal(1, into.sp[50])  -- left, as documented
    for _, b in ipairs { { k = 2, sp = { [2] = 5 } }, { k = 2, sp = { [2] = 5, [4] = 7 } } } do
      for _, share in ipairs { false, true } do
        local got = assert(d:decode("A", d:encode("A", b, { baseline = a }),
          { baseline = into, share = share or nil }))
        if not share then
          assert.same(b, got)
          assert.is_string(d:encode("A", got))
        end
      end
    end
  end)

  it("measures the worst case of its encoding in maxbits", function ()
    -- auto: 2 + the least of mask's, index's and relative's worst, all at
    -- every slot with a 3-bit value: mask 8 + 24 (index 4 + 8 * (3 + 3),
    -- relative 9 + 24)
    assert.equal(2 + 8 + 24, s:maxbits("A"))
    for _, enc in ipairs(ENCODINGS) do
      local full = { s = { 7, 7, 7, 7, 7, 7, 7, 7 } }
      assert.is_true(s:bits(enc, full) <= s:maxbits(enc))
    end
  end)
end)

describe("sparse relative indices", function ()
  -- gap -> int_relative bits, at both ends of each DESIGN.md tier
  local GAPS = {
    { 1, 1 }, { 2, 5 }, { 6, 5 }, { 7, 8 }, { 23, 8 }, { 24, 13 }, { 280, 13 },
    { 281, 18 }, { 4377, 18 }, { 4378, 23 }, { 69914, 23 }, { 69915, 38 },
    { 99998, 38 },
  }
  local N = 100000
  local s = bitwire.schema {
    R = { { "s", "sparse", of = { "bool" }, max = N, encoding = "relative" } },
    A = { { "s", "sparse", of = { "bool" }, max = N } },
    I = { { "s", "sparse", of = { "bool" }, max = N, encoding = "index" } },
    M = { { "s", "sparse", of = { "bool" }, max = N, encoding = "mask" } },
  }

  for _, g in ipairs(GAPS) do
    local d, cost = g[1], g[2]
    it("spends " .. cost .. " bits on a gap of " .. d, function ()
      assert.equal(cost, irbits(d))
      -- slot 1, then slot 1 + d, then the sentinel N + 1
      local v = { s = { [1] = true, [1 + d] = false } }
      local expect = 1 + cost + irbits(N - d) + 2
      assert.equal(expect, s:bits("R", v))
      local w = bitwire.writer()
      w:int_relative(0, 1) w:bool(true)
      w:int_relative(1, 1 + d) w:bool(false)
      w:int_relative(1 + d, N + 1)
      assert.equal(expect, w:bits_written())
      assert.equal(tohex(w:tostring()), tohex(s:encode("R", v)))
      for _, enc in ipairs { "R", "A", "I", "M" } do
        assert.same(v, s:decode(enc, s:encode(enc, v)))
      end
      -- the gap as the first index (from 0) and as the sentinel's
      v = { s = { [d] = true } }
      assert.equal(cost + irbits(N + 1 - d) + 1, s:bits("R", v))
      assert.same(v, s:decode("R", s:encode("R", v)))
    end)
  end

  it("round-trips the last slot alone and every slot", function ()
    local v = { s = { [N] = true } }
    assert.equal(38 + 1 + 1, s:bits("R", v))
    assert.same(v, s:decode("R", s:encode("R", v)))
    local all = { s = {} }
    for i = 1, N do all.s[i] = i % 3 == 0 end
    assert.equal(N + 1 + N, s:bits("R", all))
    assert.same(all, s:decode("R", s:encode("R", all)))
    assert.equal(0, s:encode("A", all):byte(1) & 3)   -- mask: N + N
  end)
end)

describe("sparse encoding of long gaps and runs", function ()
  -- the bytes of each encoding written by hand, at sizes that keep a map of
  -- the present present while encoding (up to 4096) and one that does not
  local function expect (enc, n, present)
    local w, prev = bitwire.writer(), 0
    if enc == "index" then w:bits(#present, bitwire.bits_required(0, n)) end
    for _, sl in ipairs(present) do
      local i, val = sl[1], sl[2]
      if enc == "mask" then
        for _ = prev + 1, i - 1 do w:bits(0, 1) end
        w:bits(1, 1)
      elseif enc == "index" then w:bits(i - 1, bitwire.bits_required(0, n - 1))
      else w:int_relative(prev, i) end
      w:bool(val)
      prev = i
    end
    if enc == "mask" then for _ = prev + 1, n do w:bits(0, 1) end end
    if enc == "relative" then w:int_relative(prev, n + 1) end
    return w
  end

  for _, n in ipairs { 64, 65, 200, 4096, 4097 } do
    it("writes mask, index and relative bytes as by hand, " .. n .. " present", function ()
      local cases = {
        {}, { { 1, true } }, { { n, false } }, { { 1, true }, { n, true } },
        { { 63, true }, { 64, false } }, { { 64, true }, { 65 % n + 1, true } },
      }
      local all, some = {}, {}
      for i = 1, n do all[#all + 1] = { i, i % 2 == 0 } end
      for i = 1, n, 61 do some[#some + 1] = { i, i % 3 == 0 } end  -- gaps of 60
      cases[#cases + 1] = all
      cases[#cases + 1] = some
      if n > 130 then cases[#cases + 1] = { { 2, true }, { 130, false } } end  -- gap 127
      for _, present in ipairs(cases) do
        table.sort(present, function (a, b) return a[1] < b[1] end)
        local v = { s = {} }
        for _, sl in ipairs(present) do v.s[sl[1]] = sl[2] end
        for _, enc in ipairs { "mask", "index", "relative" } do
          local s = bitwire.schema { T = { { "s", "sparse", of = "bool", max = n,
                                             encoding = enc } } }
          assert.equal(tohex(expect(enc, n, present):tostring()), tohex(s:encode("T", v)))
          assert.same(v, s:decode("T", s:encode("T", v)))
        end
      end
    end)
  end

  for _, n in ipairs { 200, 4096, 4097 } do
    it("writes deltas as by hand, " .. n .. " slots", function ()
      -- against a baseline, the sent slots (changed, added, removed) are
      -- compared once and mapped up to 4096 slots, each one after its
      -- place a presence bit and, if present, its value
      local a = { s = { [1] = true, [5] = false, [64] = true, [n] = true } }
      local b = { s = { [1] = true, [5] = true, [101] = false, [n] = true } }
      local sent = {}
      for i = 1, n do
        if a.s[i] ~= b.s[i] then sent[#sent + 1] = i end
      end
      for _, enc in ipairs { "mask", "index", "relative" } do
        local s = bitwire.schema { T = { { "s", "sparse", of = "bool", max = n,
                                           encoding = enc } } }
        local w, prev = bitwire.writer(), 0
        w:bool(true)  -- the record's field changed
        if enc == "index" then w:bits(#sent, bitwire.bits_required(0, n)) end
        for _, i in ipairs(sent) do
          if enc == "mask" then
            for _ = prev + 1, i - 1 do w:bits(0, 1) end
            w:bits(1, 1)
          elseif enc == "index" then w:bits(i - 1, bitwire.bits_required(0, n - 1))
          else w:int_relative(prev, i) end
          w:bool(b.s[i] ~= nil)
          if b.s[i] ~= nil then w:bool(b.s[i]) end
          prev = i
        end
        if enc == "mask" then for _ = prev + 1, n do w:bits(0, 1) end end
        if enc == "relative" then w:int_relative(prev, n + 1) end
        local bytes = s:encode("T", b, { baseline = a })
        assert.equal(tohex(w:tostring()), tohex(bytes))
        assert.same(b, s:decode("T", bytes, { baseline = a }))
      end
    end)
  end

  it("names the slot and the bit of a value that does not fit", function ()
    for _, enc in ipairs { "mask", "index", "relative" } do
      local s = bitwire.schema { T = { { "s", "sparse", of = "bool", max = 300,
                                         encoding = enc } } }
      local present = { { 3, true }, { 100, false } }
      local bit = expect(enc, 300, present):bits_written()
      if enc == "mask" then bit = bit - (300 - 100) + (170 - 100) end
      if enc == "index" then bit = bit + 9 end  -- a count of 3, not 2
      if enc == "relative" then
        bit = bit - bitwire.bits_required(0, 0) - irbits(201) + irbits(70)
      end
      local err = errorof(s.encode, s, "T", { s = { [3] = true, [100] = false, [170] = "x" } })
      assert.matches("^s%[170%]: expected a boolean, got string %(bit " .. bit .. "%)", err)
    end
  end)
end)

describe("sparse relative indices with the article's tiers", function ()
  -- the seed's 4000-object scene: +1 in 1 bit, [2,5] in 2 + 2, [6,13] in
  -- 3 + 3, [14,29] 4 + 4, [30,61] 5 + 5, [62,125] 6 + 6, then six zero flags
  -- and int(d, 126, 4001) in 12 bits
  local N = 4000
  local GAPS = {
    { 1, 1 }, { 2, 4 }, { 5, 4 }, { 6, 6 }, { 13, 6 }, { 14, 8 }, { 29, 8 },
    { 30, 10 }, { 61, 10 }, { 62, 12 }, { 125, 12 }, { 126, 18 }, { 3999, 18 },
  }
  local s = bitwire.schema {
    R = { { "s", "sparse", of = { "bool" }, max = N, encoding = "relative",
            tiers = "article" } },
    A = { { "s", "sparse", of = { "bool" }, max = N, tiers = "article" } },
  }

  for _, g in ipairs(GAPS) do
    local d, cost = g[1], g[2]
    it("spends " .. cost .. " bits on a gap of " .. d, function ()
      assert.equal(cost, artbits(d, N))
      local v = { s = { [1] = true, [1 + d] = false } }
      assert.equal(1 + cost + artbits(N - d, N) + 2, s:bits("R", v))
      assert.same(v, s:decode("R", s:encode("R", v)))
      assert.same(v, s:decode("A", s:encode("A", v)))
    end)
  end

  it("writes the prefix flags LSB first", function ()
    -- slot 7 (gap 7: '001' + 3 bits of 1), a bool, sentinel gap 3994
    -- (six zero flags, then 3994 - 126 in 12 bits)
    local v = { s = { [7] = true } }
    local w = bitwire.writer()
    w:bits(4, 3) w:bits(1, 3) w:bool(true) w:bits(0, 6) w:int(3994, 126, 4001)
    assert.equal(tohex(w:tostring()), tohex(s:encode("R", v)))
  end)

  it("takes custom tiers, with a catch-all up to the sentinel", function ()
    local s2 = bitwire.schema {
      R = { { "s", "sparse", of = { "bool" }, max = 100, encoding = "relative",
              tiers = { 1, 4 } } },
    }
    -- gap 2: '1' + 1 bit; gap 18: '01' + 4 bits; gap 19+: '00' + int(d, 19, 101)
    assert.equal(2 + 1 + (2 + 7), s2:bits("R", { s = { [2] = true } }))
    assert.equal(6 + 1 + (2 + 7), s2:bits("R", { s = { [18] = true } }))
    assert.equal(9 + 1 + 2, s2:bits("R", { s = { [99] = true } }))
    for _, l in ipairs { {}, { 1 }, { 100 }, { 2, 18, 19, 20, 100 } } do
      local v = { s = slots(l, true) }
      assert.same(v, s2:decode("R", s2:encode("R", v)))
    end
  end)

  it("validates tiers and encodings when the schema is built", function ()
    local function build (opts)
      local f = { "s", "sparse", of = { "bool" }, max = 8 }
      for k, v in pairs(opts) do f[k] = v end
      return errorof(bitwire.schema, { T = { f } })
    end
    contains("unknown encoding 'bits'", build { encoding = "bits" })
    contains("'tiers' must be a list", build { tiers = {} })
    contains("'tiers' must be a list", build { tiers = "fiedler" })
    contains("tier 2: width must be an integer", build { tiers = { 1, 40 } })
    contains("'max' = 0 outside", build { max = 0 })
    contains("sparse needs 'of'",
      errorof(bitwire.schema, { T = { { "s", "sparse", max = 8 } } }))
    assert.is_nil(build { tiers = "article", encoding = "relative" })
  end)
end)

describe("sparse decode of hostile bytes", function ()
  local s = small_schema(8)
  local s6 = small_schema(6)

  local function bytes (f)
    local w = bitwire.writer()
    f(w)
    return w:tostring()
  end

  it("refuses an index count above max", function ()
    fails("range", "s: count 9 above max 8 (bit 0)",
      s:decode("I", bytes(function (w) w:bits(9, 4) end)))
    fails("range", "count 15 above max 8",
      s:decode("I", bytes(function (w) w:bits(15, 4) w:bits(0, 60) end)))
  end)

  it("refuses a count the bytes cannot hold before reading slots", function ()
    fails("truncated", "count 8 needs more bits than are left",
      s:decode("I", bytes(function (w) w:bits(8, 4) w:bits(0, 4) end)))
  end)

  it("refuses indices that do not rise", function ()
    fails("range", "s: index 3 not in [5, 8]", s:decode("I", bytes(function (w)
      w:int(2, 0, 8) w:int(3, 0, 7) w:int(1, 0, 7) w:int(2, 0, 7) w:int(1, 0, 7)
    end)))
    fails("range", "index 4 not in [5, 8]", s:decode("I", bytes(function (w)
      w:int(2, 0, 8) w:int(3, 0, 7) w:int(1, 0, 7) w:int(3, 0, 7) w:int(1, 0, 7)
    end)))
  end)

  it("refuses an index past max", function ()
    -- 6 slots: 3-bit indices can say 7 and 8
    fails("range", "index 8 not in [1, 6]", s6:decode("I", bytes(function (w)
      w:int(1, 0, 6) w:bits(7, 3) w:int(0, 0, 7)
    end)))
  end)

  it("refuses a relative index past the sentinel n + 1", function ()
    fails("range", "s: index 10 above max 8", s:decode("R", bytes(function (w)
      w:int_relative(0, 10)
    end)))
    fails("range", "index 12 above max 8", s:decode("R", bytes(function (w)
      w:int_relative(0, 2) w:int(0, 0, 7) w:int_relative(2, 12)
    end)))
    -- article tiers: gap 9 from slot 1 reaches 10
    fails("range", "index 10 above max 8", s:decode("RA", bytes(function (w)
      w:bits(1, 1) w:int(0, 0, 7) w:bits(4, 3) w:bits(3, 3)
    end)))
  end)

  it("refuses an absolute relative index that does not rise", function ()
    -- six zero flags then 32 bits of 1, after slot 2
    fails("range", nil, s:decode("R", bytes(function (w)
      w:int_relative(0, 2) w:int(0, 0, 7) w:bits(0, 6) w:bits(1, 32)
    end)))
  end)

  it("refuses auto's unused encoding 3", function ()
    fails("range", "s: unknown sparse encoding 3 (bit 0)",
      s:decode("A", bytes(function (w) w:bits(3, 2) w:bits(0, 30) end)))
  end)

  it("fails as truncated without a sentinel or on a short mask", function ()
    fails("truncated", nil, s:decode("R", bytes(function (w)
      w:int_relative(0, 1) w:int(0, 0, 7)
    end)))
    fails("truncated", nil, s:decode("M", "\255"))
    fails("truncated", nil, s:decode("A", ""))
  end)

  it("never raises on seeded random bytes", function ()
    local rand = lcg(7)
    local schemas = { s, s6, small_schema(1), small_schema(300) }
    for _ = 1, 3000 do
      local sch = schemas[rand(#schemas) + 1]
      local data = randbytes(rand, rand(40))
      for _, enc in ipairs { "M", "I", "R", "RA", "A", "AA" } do
        local ok, v, err, code = pcall(sch.decode, sch, enc, data)
        assert.is_true(ok, v)
        if v == nil then
          assert.is_true(KNOWN_CODES[code], tostring(code) .. ": " .. tostring(err))
        else
          for k in pairs(v.s) do
            assert.equal("integer", math.type(k))
          end
        end
      end
    end
  end)
end)

describe("sparse in an array", function ()
  -- an array's count is checked against each element's least size, so that
  -- size must not overstate a one-slot sparse array (1 bit)
  it("decodes an array of one-slot mask sparse arrays", function ()
    local s = bitwire.schema {
      E = { { "s", "sparse", of = { "bool" }, max = 1, encoding = "mask" } },
      A = { { "l", "array", of = "E", max = 16 } },
    }
    local l = {}
    for i = 1, 16 do l[i] = { s = {} } end
    assert.same({ l = l }, s:decode("A", s:encode("A", { l = l })))
  end)
end)
