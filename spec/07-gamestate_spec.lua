-- Game-state encodings: sparse arrays (array subsets) in each encoding at
-- its edges and tier boundaries, with bit counts worked out by hand; hostile
-- sparse bytes; tiered integers; smallest-three quaternions; vectors; delta
-- encoding against a baseline, bare, framed and through bitwire.protocol.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local tohex, errorof, contains, lcg, randbytes =
  H.tohex, H.errorof, H.contains, H.lcg, H.randbytes

local KNOWN_CODES = { truncated = true, range = true, align = true,
  check = true, utf8 = true, tag = true, schema = true, crc = true,
  baseline = true }

-- asserts decode's failure shape: nil, "... (bit N)", code
local function fails (code, needle, v, err, c)
  assert.is_nil(v)
  assert.is_string(err)
  assert.matches("%(bit %d+%)$", err)
  assert.equal(code, c)
  if needle then contains(needle, err) end
end

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

  it("measures the worst case of any encoding in maxbits", function ()
    -- auto 2 + the largest of mask 8, index 4 + 8 * 3, relative 9 * 38;
    -- plus 8 values of 3 bits
    assert.equal(2 + 9 * 38 + 24, s:maxbits("A"))
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

  it("raises on a baseline that is not a table, and with into", function ()
    local v = snap(1, {})
    contains("'baseline' must be a table",
      errorof(s.encode, s, "Snap", v, { baseline = 3 }))
    contains("'baseline' must be a table",
      errorof(s.decode, s, "Snap", "\0", { baseline = "x" }))
    contains("'into' and 'baseline' together",
      errorof(s.decode, s, "Snap", "\0", { baseline = v, into = {} }))
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
