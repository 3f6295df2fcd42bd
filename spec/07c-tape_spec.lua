-- Deltas against tapes (bindings/lbw_tape.c): a delta encode or decode of
-- a type whose fields a tape holds reads the baseline's codes from the tape
-- its own encode or decode left, not from its table. Checked against the
-- walk over baseline tables, which still takes a baseline that is not a
-- value of its type (encode) and decode with share = true: the same bytes,
-- the same values, the same failures, over random values, random changes
-- and random damage to the packets.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local lcg, errorof = H.lcg, H.errorof

local DESC = {
  Vec = { { "x", "float", min = -10, max = 10, res = 0.01 },
          { "y", "float", min = -10, max = 10, res = 0.01 } },
  Item = {
    { "id", "int", min = 0, max = 100 },
    { "tag", "string", max = 12, optional = true },
    { "pos", "Vec" },
    { "hp", "int", min = 0, max = 50, clamp = true },
    { "on", "bool" },
    { "rot", "quat", bits = 9 },
    { "yaw", "angle", bits = 10 },
  },
  Root = {
    { "k", "int", min = 0, max = 1000 },
    { "flag", "bool" },
    { "mode", "enum", values = { "a", "b", "c" } },
    { "big", "uint", bits = 64 },
    { "name", "string", max = 24 },
    { "opt", "int", min = -5, max = 5, optional = true, clamp = true },
    { "optrec", "Item", optional = true },
    { "items", "array", of = "Item", max = 8 },
    { "nums", "array", of = { "int", min = 0, max = 9 }, max = 9 },
    { "words", "array", of = { "string", max = 12 }, max = 4 },
    { "pair", "array", of = "Vec", count = 2 },
    { "later", "int", min = 0, max = 9, since = 1, default = 3 },
  },
}

local WORDS = { "", "a", "bb", "héllo", "twelve chars", "x", "nine char" }

local function quat (rand)
  local q, l = {}, 0
  for k = 1, 4 do
    q[k] = rand(2001) / 1000 - 1
    l = l + q[k] * q[k]
  end
  l = math.sqrt(l)
  if l < 0.01 then return { 0, 0, 0, 1 } end
  for k = 1, 4 do q[k] = q[k] / l end
  return q
end

local function gen (rand)
  local function vec () return { x = rand(2001) / 100 - 10, y = rand(2001) / 100 - 10 } end
  local function item ()
    return { id = rand(101), tag = rand(3) == 0 and WORDS[rand(#WORDS) + 1] or nil,
             pos = vec(), hp = rand(60), on = rand(2) == 0, rot = quat(rand),
             yaw = rand(6284) / 1000 }
  end
  local v = { k = rand(1001), flag = rand(2) == 0, mode = ({ "a", "b", "c" })[rand(3) + 1],
              big = rand(2) == 0 and -1 - rand(1000) or rand(1 << 40),
              name = WORDS[rand(#WORDS) + 1] .. WORDS[rand(#WORDS) + 1],
              opt = rand(2) == 0 and rand(15) - 7 or nil,
              optrec = rand(2) == 0 and item() or nil,
              items = {}, nums = {}, words = {}, pair = { vec(), vec() },
              later = rand(10) }
  for i = 1, rand(7) do v.items[i] = item() end
  for i = 1, rand(10) do v.nums[i] = rand(10) end
  for i = 1, rand(5) do v.words[i] = WORDS[rand(#WORDS) + 1] end
  return v, item, vec
end

local function copy (t)
  if type(t) ~= "table" then return t end
  local c = {}
  for k, x in pairs(t) do c[k] = copy(x) end
  return c
end

-- 'b' from 'a': a few changes of every kind, some tables shared with 'a'
local function change (rand, a)
  local fresh, item, vec = gen(rand)
  local b = copy(a)
  local keys = { "flag", "mode", "big", "name", "opt", "optrec", "nums", "words",
                 "pair", "later" }
  for _ = 1, rand(4) do
    local k = keys[rand(#keys) + 1]
    b[k] = fresh[k]
  end
  for i = 1, #b.items do
    local r = rand(6)
    if r == 0 then b.items[i] = a.items[i]          -- shared
    elseif r == 1 then b.items[i].pos = vec()
    elseif r == 2 then b.items[i].tag = WORDS[rand(#WORDS) + 1]
    elseif r == 3 then b.items[i].hp = rand(60)
    elseif r == 4 then b.items[i].rot = quat(rand)
    elseif r == 5 then b.items[i].yaw = rand(6284) / 1000 end
  end
  local r = rand(4)
  if r == 0 and #b.items < 8 then b.items[#b.items + 1] = item()
  elseif r == 1 then b.items[#b.items] = nil end
  if rand(3) == 0 then b.optrec = item() end
  if rand(4) == 0 then b.optrec = a.optrec end   -- shared records and arrays
  if rand(4) == 0 then b.pair = a.pair end
  if rand(4) == 0 then b.nums = a.nums end
  b.k = (a.k + 1 + rand(999)) % 1001  -- always changed: see poisoned
  return b
end

-- a copy of baseline 'a' that is no value of Root (its k), so the encode
-- walks the table; 'b' changes k anyway, so the bytes are the same
local function poisoned (a)
  local p = copy(a)
  p.k = "not a number"
  return p
end

-- the delta of 'v' against 'base' read from its tape is the walk over the
-- table's (poisoned(base) makes the encode walk it); returns the bytes
local function sameastable (s, name, v, base, version, msg)
  local want = s:encode(name, v, { baseline = poisoned(base), version = version })
  assert.equal(H.tohex(want), H.tohex(s:encode(name, v, { baseline = base, version = version })),
               msg)
  return want
end

-- a delta decoded against the tape is what the walk over tables (share) gives
local function decodesame (s, name, bytes, base, version)
  assert.same(s:decode(name, bytes, { baseline = base, version = version, share = true }),
              s:decode(name, bytes, { baseline = base, version = version }))
end

describe("deltas against tapes", function ()
  it("encode the same bytes as the walk over the baseline table", function ()
    local rand = lcg(7)
    local s = bitwire.schema(DESC)
    for round = 1, 300 do
      local a = gen(rand)
      local b = change(rand, a)
      local version = round % 3 == 0 and 0 or nil
      local want = sameastable(s, "Root", b, a, version)
      -- again, against the tape the first one left on 'a'
      assert.equal(want, s:encode("Root", b, { baseline = a, version = version }))
      -- and a chain: 'c' against 'b', whose tape its own delta left
      sameastable(s, "Root", change(rand, b), b, version)
    end
  end)

  it("raise the same errors at the same bits as the walk over tables", function ()
    local rand = lcg(11)
    local s = bitwire.schema(DESC)
    local bad = {
      function (b) b.flag = 1 end,
      function (b) b.mode = "d" end,
      function (b) b.name = 5 end,
      function (b) b.name = "\0" end,
      function (b) b.opt = 6 end,
      function (b) if b.items[1] then b.items[1].id = 101 end end,
      function (b) if b.items[1] then b.items[1].pos = 3 end end,
      function (b) if b.items[1] then b.items[1].pos.x = nil end end,
      function (b) b.nums[#b.nums + 1] = "x" end,
      function (b) b.words[1] = {} end,
      function (b) b.items = 1 end,
      function (b) b.pair = { b.pair[1] } end,
      function (b) b.nums[1] = 12 end,
      function (b) if b.items[1] then b.items[1].rot = 3 end end,
      function (b) if b.items[1] then b.items[1].rot = { 1, 0, 0 } end end,
      function (b) if b.items[1] then b.items[1].rot[2] = "x" end end,
      function (b) if b.items[1] then b.items[1].rot = { 0, 0, 0, 0 } end end,
      function (b) if b.items[1] then b.items[1].yaw = "x" end end,
      function (b) if b.items[1] then b.items[1].yaw = 0 / 0 end end,
    }
    for round = 1, 200 do
      local a = gen(rand)
      local b = copy(change(rand, a))  -- nothing shared: 'bad' edits 'b' only
      bad[round % #bad + 1](b)
      local want = errorof(s.encode, s, "Root", b, { baseline = poisoned(a) })
      local got = errorof(s.encode, s, "Root", b, { baseline = a })
      assert.equal(want, got)
    end
  end)

  it("decode what the walk over the baseline table decodes, bytes damaged or not", function ()
    local rand = lcg(13)
    local s = bitwire.schema(DESC)
    local checked = 0
    for _ = 1, 200 do
      local a = gen(rand)
      local b = change(rand, a)
      local base = s:decode("Root", s:encode("Root", a))
      local d = s:encode("Root", b, { baseline = a })
      local v = assert(s:decode("Root", d, { baseline = base }))
      assert.same(s:decode("Root", s:encode("Root", b)), v)
      assert.same(v, s:decode("Root", d, { baseline = base, share = true }))
      -- the result's tape: a chain of deltas
      local c = change(rand, b)
      local d2 = s:encode("Root", c, { baseline = b })
      assert.same(s:decode("Root", s:encode("Root", c)),
                  s:decode("Root", d2, { baseline = v }))
      for _ = 1, 8 do
        local bytes = { d:byte(1, -1) }
        local cut = rand(4) == 0
        if cut then
          bytes = { d:byte(1, rand(#d + 1)) }
        else
          local i = rand(#bytes) + 1
          bytes[i] = bytes[i] ~ (1 << rand(8))
        end
        local bad = string.char(table.unpack(bytes))
        local x1, e1, c1 = s:decode("Root", bad, { baseline = base })
        local x2, e2, c2 = s:decode("Root", bad, { baseline = base, share = true })
        assert.same({ x2, e2, c2 }, { x1, e1, c1 })
        if x1 == nil then checked = checked + 1 end
      end
    end
    assert.is_true(checked > 100)
  end)

  it("take a baseline as it was sent, as the peer has it", function ()
    local s = bitwire.schema(DESC)
    local rand = lcg(17)
    local a = gen(rand)
    local b = change(rand, a)
    local peer = s:decode("Root", s:encode("Root", a))
    peer = assert(s:decode("Root", s:encode("Root", b, { baseline = a }), { baseline = peer }))
    -- the sender edits what it sent; the peer's copy does not change
    b.flag, b.name = not b.flag, "edited"
    local c = copy(b)
    c.k = (b.k + 1) % 1001
    local got = assert(s:decode("Root", s:encode("Root", c, { baseline = b }),
                                { baseline = peer }))
    assert.same(s:decode("Root", s:encode("Root", c)), got)
  end)

  it("keep a decoded baseline as it was decoded, whatever it became", function ()
    local s = bitwire.schema(DESC)
    local a = gen(lcg(19))
    local b = copy(a)
    b.k = (a.k + 1) % 1001
    local peer = s:decode("Root", s:encode("Root", a))
    local d = s:encode("Root", b, { baseline = a })
    local first = assert(s:decode("Root", d, { baseline = peer }))
    assert.same(s:decode("Root", s:encode("Root", b)), first)
    peer.name, peer.flag = "mine", not peer.flag
    assert.same(first, s:decode("Root", d, { baseline = peer }))
  end)

  it("forget what a table was when a decode refills it", function ()
    local s = bitwire.schema(DESC)
    local rand = lcg(31)
    for _ = 1, 20 do
      local a = gen(rand)
      local b, c = change(rand, a), gen(rand)
      local base = s:decode("Root", s:encode("Root", a))
      local r = assert(s:decode("Root", s:encode("Root", b, { baseline = a }), { baseline = base }))
      s:encode("Root", b, { baseline = r })      -- r has a tape, and is b
      assert(s:decode("Root", s:encode("Root", c), { into = r }))  -- r is c now
      local d = change(rand, c)
      assert.same(s:decode("Root", s:encode("Root", d)),
                  s:decode("Root", s:encode("Root", d, { baseline = c }), { baseline = r }))
      assert.equal(s:encode("Root", d, { baseline = poisoned(c) }),
                   s:encode("Root", d, { baseline = r }))
    end
  end)

  it("keep what a table was last sent as, encoded again against other baselines", function ()
    local s = bitwire.schema(DESC)
    local rand = lcg(37)
    for _ = 1, 50 do
      local a1 = gen(rand)
      local a2, b = change(rand, a1), change(rand, a1)
      s:encode("Root", b, { baseline = a1 })   -- to one peer
      s:encode("Root", b, { baseline = a2 })   -- to another: the same tape
      b.items[#b.items] = nil                   -- shorter, then sent again
      s:encode("Root", b, { baseline = a1 })
      if rand(2) == 0 then                      -- or longer
        b.name = "a much longer name here"
        s:encode("Root", b, { baseline = a2 })
      end
      sameastable(s, "Root", change(rand, b), b)
    end
  end)

  it("take fused runs of more fields than a word has bits", function ()
    -- zero-bit fields (min == max) fuse without width: a run of 121 fields
    local d = { { "k", "int", min = 0, max = 1000 } }
    for i = 1, 120 do d[#d + 1] = { "z" .. i, "int", min = 5, max = 5 } end
    d[#d + 1] = { "b", "bool" }
    local s = bitwire.schema { T = d }
    local a = { k = 1, b = true }
    for i = 1, 120 do a["z" .. i] = 5 end
    local b = copy(a)
    b.k = 2
    local got = sameastable(s, "T", b, a)
    assert.equal(11 + 121, s:bits("T", b, { baseline = a }))  -- k; 121 unchanged
    decodesame(s, "T", got, s:decode("T", s:encode("T", a)))
    b.z7 = 6  -- refused in the run, at its own bit
    local err = errorof(s.encode, s, "T", b, { baseline = a })
    assert.equal(errorof(s.encode, s, "T", b, { baseline = poisoned(a) }), err)
    assert.matches("^z7: 6 out of range %[5, 5%] %(bit 17%)$", err)
  end)

  it("fetch the rest of a fused run whose missing field takes its default", function ()
    local s = bitwire.schema { R = {
      { "k", "int", min = 0, max = 1000 }, { "a", "int", min = 0, max = 7 },
      { "b", "int", min = 0, max = 7, default = 3 }, { "c", "int", min = 0, max = 7 },
      { "d", "bool" } } }
    local a = { k = 1, a = 1, b = 2, c = 3, d = true }
    local base = s:decode("R", s:encode("R", a))
    for _, v in ipairs { { k = 2, a = 1, c = 5, d = false }, { k = 3, a = 1, c = 3, d = true },
                         { k = 4, a = 4, c = 7, d = true } } do
      local bytes = sameastable(s, "R", v, a)
      local want = copy(v)
      want.b = 3
      assert.same(want, s:decode("R", bytes, { baseline = base }))
    end
    -- refused after the missing one: raised where the walk over tables does
    local bad = { k = 2, a = 1, c = "x", d = true }
    local err = errorof(s.encode, s, "R", bad, { baseline = a })
    assert.equal(errorof(s.encode, s, "R", bad, { baseline = poisoned(a) }), err)
    assert.matches("c: expected an integer", err, 1, true)
  end)

  it("keep a long tape in pieces and read it back whole", function ()
    -- tapes past TAPEWORDS words (lbw_tape.h) live in pieces: inline and
    -- in pieces, their count changing, again and in chains
    local s = bitwire.schema { Vec = DESC.Vec, Item = DESC.Item, Big = {
      { "k", "int", min = 0, max = 1000 }, { "ents", "array", of = "Item", max = 300 } } }
    local rand = lcg(53)
    local _, item = gen(rand)
    local function vary (a)
      local b = copy(a)
      b.k = (a.k + 1 + rand(999)) % 1001  -- always changed: see poisoned
      for i = 1, #b.ents do
        if rand(8) == 0 then b.ents[i] = item() end
      end
      local r = rand(4)
      if r == 0 then
        for _ = 1, rand(120) do
          if #b.ents < 300 then b.ents[#b.ents + 1] = item() end
        end
      elseif r == 1 then
        for _ = 1, rand(120) do b.ents[#b.ents] = nil end
      end
      return b
    end
    for _, n in ipairs { 0, 3, 40, 150, 300 } do
      local a = { k = rand(1001), ents = {} }
      for i = 1, n do a.ents[i] = item() end
      local base = s:decode("Big", s:encode("Big", a))
      for _ = 1, 6 do
        local b = vary(a)
        local bytes = sameastable(s, "Big", b, a)
        assert.equal(bytes, s:encode("Big", b, { baseline = a }))  -- again
        decodesame(s, "Big", bytes, base)
        local got = assert(s:decode("Big", bytes, { baseline = base }))
        assert.same(s:decode("Big", s:encode("Big", b)), got)
        -- a table sent again after it grew or shrank: its tape remade
        local c = vary(b)
        sameastable(s, "Big", c, b)
        if #c.ents > 150 then
          for _ = 1, 120 do c.ents[#c.ents] = nil end
        else
          for _ = 1, 120 do c.ents[#c.ents + 1] = item() end
        end
        sameastable(s, "Big", c, b)
        sameastable(s, "Big", vary(c), c)
        a, base = b, got  -- the next against the tapes these left
      end
    end
  end)

  it("gather a baseline in pieces again once its tape is remade", function ()
    -- the pieces gathered for one delta serve the next against the same
    -- tape, and only while that tape is unchanged
    local s = bitwire.schema { Vec = DESC.Vec, Item = DESC.Item, Big = {
      { "k", "int", min = 0, max = 1000 }, { "ents", "array", of = "Item", max = 300 } } }
    local rand = lcg(59)
    local _, item = gen(rand)
    local a, small = { k = 1, ents = {} }, { k = 2, ents = { item(), item() } }
    for i = 1, 150 do a.ents[i] = item() end
    local b = copy(a)
    b.k, b.ents[3], b.ents[90] = 5, item(), item()
    for round = 1, 4 do
      sameastable(s, "Big", b, a)  -- a's pieces gathered, then used again
      assert.equal(sameastable(s, "Big", b, a), s:encode("Big", b, { baseline = a }))
      -- a changed and sent against a baseline in one piece: its tape is
      -- remade in place, and nothing else is gathered in between
      a.k = 10 + round
      for i = round, 150, 7 do a.ents[i] = copy(b.ents[i]) end
      a.ents[40 + round] = item()
      s:encode("Big", a, { baseline = small })
    end
  end)

  it("agree with the walk over tables on random definitions", function ()
    -- random types of the kinds tapes hold: zero-bit and 64-bit fields,
    -- long fused runs, optional and versioned ones, nested records and
    -- arrays; values from tools/gen_random.lua, the baseline's near them
    local gen_random = dofile("tools/gen_random.lua")
    math.randomseed(41)
    local rand = lcg(41)
    local function scalar ()
      local r = rand(14)
      if r == 0 then local lo = rand(20) - 10; return { "int", min = lo, max = lo }
      elseif r == 1 then return { "int", min = -rand(1000), max = rand(1 << 40), clamp = rand(2) == 0 }
      elseif r == 2 then return { "uint", bits = rand(64) + 1 }
      elseif r == 3 then return { "bool" }
      elseif r == 4 then return { "float", min = -rand(100), max = rand(100) + 1, res = 0.05 }
      elseif r == 5 then return { "enum", values = { "p", "q", "r", "s", "t" } }
      elseif r == 6 then return { "string", max = rand(20) }
      elseif r == 7 then return { "quat", bits = 6 + rand(15) }
      elseif r == 8 then return { "angle", bits = 2 + rand(24) }
      elseif r == 9 then return { "float32" }
      elseif r == 10 then return { "float64" }
      elseif r == 11 then
        local lo = rand(4)
        if rand(3) == 0 then return { "bytes", count = lo + 1 } end
        return { "bytes", min = lo, max = lo + rand(20) }
      elseif r == 12 then
        return { "tiered", tiers = { rand(2), 2 + rand(3), 9 }, min = -rand(5), max = rand(300) }
      else return { "int", min = 0, max = rand(300) } end
    end
    for round = 1, 30 do
      local desc, ntypes = {}, 1 + rand(3)
      for t = ntypes, 1, -1 do
        local fields = t == 1 and { { "k", "int", min = 0, max = 1000 } } or {}
        for i = 1, 1 + rand(t == 1 and 8 or 40) do
          local f, r = scalar(), rand(10)
          if r == 0 and t < ntypes then f = { "T" .. (t + 1) }
          elseif r == 1 and t < ntypes then
            f = { "array", of = "T" .. (t + 1), max = rand(5) }
          elseif r == 2 then
            f = { "array", of = scalar(), max = 1 + rand(6) }
            if rand(3) == 0 then f.count, f.max = f.max, nil end
          end
          table.insert(f, 1, "f" .. i)
          if rand(6) == 0 then f.optional = true
          elseif rand(8) == 0 and t == 1 and f[2] == "int" then f.since, f.default = 1, f.min end
          fields[#fields + 1] = f
        end
        desc["T" .. t] = fields
      end
      local s = bitwire.schema(desc)
      local prog = s:program()
      for _ = 1, 10 do
        local a = gen_random.value(prog, prog.byname.T1)
        local b = gen_random.near(prog, prog.byname.T1, a)
        b.k = (a.k + 1) % 1001
        local want = sameastable(s, "T1", b, a, nil, "round " .. round)
        decodesame(s, "T1", want, s:decode("T1", s:encode("T1", a)))
      end
    end
  end)

  it("follow the version of each call", function ()
    local s = bitwire.schema(DESC)
    local rand = lcg(23)
    local a = gen(rand)
    local b = change(rand, a)
    for _, version in ipairs { 1, 0, 1, 0 } do
      local want = sameastable(s, "Root", b, a, version)
      local base = s:decode("Root", s:encode("Root", a, { version = version }),
                            { version = version })
      decodesame(s, "Root", want, base, version)
    end
  end)

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

  it("give the same bytes whichever elements a long array shares", function ()
    -- the encode checks every eighth element for sharing until one is
    -- shared: shared elements it does not check are compared instead
    local s = bitwire.schema { Item = DESC.Item, Vec = DESC.Vec,
      List = { { "k", "int", min = 0, max = 1000 },
               { "items", "array", of = "Item", max = 60 } } }
    local rand = lcg(31)
    local function item ()
      return { id = rand(101), pos = { x = rand(2001) / 100 - 10, y = 0 },
               hp = rand(51), on = rand(2) == 0, rot = quat(rand), yaw = rand(7),
               tag = rand(3) == 0 and WORDS[rand(#WORDS) + 1] or nil }
    end
    local patterns = {
      function () return false end,                  -- fresh tables only
      function () return true end,                   -- all shared
      function (i) return i % 8 ~= 1 end,            -- none where checked
      function (i) return i > 20 end,                -- shared after a while
      function (i) return i == 13 end,               -- one, never checked
      function (i) return i % 2 == 0 end,
    }
    for _, shared in ipairs(patterns) do
      for _ = 1, 10 do
        local n = 30 + rand(25)
        local a = { k = rand(1000), items = {} }
        for i = 1, n do a.items[i] = item() end
        s:encode("List", a, { baseline = a })  -- a tape on 'a'
        local b = { k = a.k + 1, items = {} }  -- k changed: see poisoned
        for i = 1, n - rand(3) do
          if shared(i) then b.items[i] = a.items[i]
          else
            b.items[i] = copy(a.items[i])
            if rand(4) == 0 then b.items[i].hp = rand(51) end
          end
        end
        sameastable(s, "List", b, a)
        -- the tape 'b' now has is what it sent
        local c = { k = b.k - 1, items = {} }
        for i = 1, #b.items do c.items[i] = rand(3) == 0 and item() or b.items[i] end
        sameastable(s, "List", c, b)
      end
    end
  end)

  it("compare float32 and float64 fields by number, as the walk over tables does", function ()
    -- bw_equalopt's rule: equal numbers, or both NaN, whatever their bits
    -- (0.0 and -0.0 are equal; a number float32 rounds is not its rounding)
    local s = bitwire.schema { F = {
      { "k", "int", min = 0, max = 9 }, { "a", "float32" }, { "b", "float64" },
      { "o", "float32", optional = true },
      { "arr", "array", of = { "float64" }, max = 4 } } }
    local f32 = function (x) return (string.unpack("<f", string.pack("<f", x))) end
    local nan = 0 / 0
    local pairs_ = { { 0.1, 0.1 }, { 0.1, f32(0.1) }, { f32(0.1), 0.1 }, { 0.0, -0.0 },
                     { -0.0, 0.0 }, { nan, nan }, { nan, 1 }, { 1e39, 1e39 }, { 1e39, 1 / 0 },
                     { 3, 3.0 }, { 2.5, 2.5000000000000004 } }
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
      -- the same value again is no change to the walk over tables
      sameastable(s, "T", { k = 2, t = bad, arr = {} }, { k = 1, t = bad, arr = {} })
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

  it("encode against what a delta decode made, whose tape keeps codes only", function ()
    -- a relay: the table a delta decode returned (its tape: the codes it
    -- was received as, no raw values) is the baseline of the next encode
    local rand = lcg(43)
    local s = bitwire.schema(DESC)
    for _ = 1, 40 do
      local a = gen(rand)
      local b = change(rand, a)
      local base = s:decode("Root", s:encode("Root", a))
      local got = assert(s:decode("Root", s:encode("Root", b, { baseline = a }), { baseline = base }))
      sameastable(s, "Root", change(rand, b), got)
    end
  end)

  it("remember a decoded table as decoded, whatever tape it takes", function ()
    -- a baseline a decode made keeps its values unchecked: with share, the
    -- result holds its unchanged records themselves; a hand-built one is
    -- checked and copied. One weak table holds what the schema knows of a
    -- table, its type id or its tape, and a tape carries the type id's word
    local s = bitwire.schema {
      V = { { "x", "int", min = 0, max = 9 }, { "y", "int", min = 0, max = 9 } },
      R = { { "k", "int", min = 0, max = 99 }, { "v", "V" }, { "w", "V" },
            { "z", "int", min = 0, max = 9, since = 1, default = 0 } } }
    local a = { k = 1, v = { x = 1, y = 2 }, w = { x = 3, y = 4 } }
    local b = { k = 2, v = { x = 1, y = 2 }, w = { x = 5, y = 4 } }
    local delta = s:encode("R", b, { baseline = a })
    local function trusted (base)
      local r = assert(s:decode("R", delta, { baseline = base, share = true }))
      return r.v == base.v
    end
    local function decoded () return s:decode("R", s:encode("R", a)) end
    local hand = copy(a)
    assert.is_false(trusted(hand))
    assert.is_true(trusted(decoded()))
    local d = decoded()
    s:encode("R", b, { baseline = d })          -- the baseline of an encode
    assert.is_true(trusted(d))
    d = decoded()
    s:encode("R", d, { baseline = hand })       -- encoded itself
    assert.is_true(trusted(d))
    d = assert(s:decode("R", s:encode("R", a, { baseline = a }), { baseline = decoded() }))
    assert.is_true(trusted(d))                  -- a delta decode's, with a tape
    s:encode("R", d, { baseline = hand })
    assert.is_true(trusted(d))
    assert.is_false(trusted(hand))              -- encoded and a baseline: still not
    -- decoded at another version than the schema's (1): checked
    assert.is_false(trusted(s:decode("R", s:encode("R", a, { version = 0 }), { version = 0 })))
    -- a decoded table whose tape an encode at another version made: the
    -- tape says what was sent at that version, not what was decoded
    d = decoded()
    s:encode("R", d, { baseline = hand, version = 0 })
    assert.is_false(trusted(d))
  end)

  it("read each element of a long array of scalars at its own index, runs of them popped at once", function ()
    -- more elements than a run holds (56 bits of bools, 64 elements a tape
    -- block): a value read from the wrong stack slot changes the bytes,
    -- an error names its own element
    local s = bitwire.schema({ T = {
      { "k", "int", min = 0, max = 1000 },  -- changed in each b: see poisoned
      { "xs", "array", of = { "int", min = 0, max = 1000 }, max = 300 },
      { "bs", "array", of = "bool", max = 300 },
    } })
    local a = { k = 0, xs = {}, bs = {} }
    for i = 1, 200 do a.xs[i], a.bs[i] = (i * 37) % 1001, i % 3 == 0 end
    assert.same(a, s:decode("T", s:encode("T", a)))
    local base = s:decode("T", s:encode("T", a))
    local edges = { 1, 2, 56, 57, 63, 64, 65, 128, 129, 200 }
    for _, k in ipairs(edges) do
      local b = copy(a)
      b.k, b.xs[k], b.bs[k] = k, (b.xs[k] + 1) % 1001, not b.bs[k]
      assert.same(b, s:decode("T", s:encode("T", b)), "full, element " .. k)
      local d = sameastable(s, "T", b, a, nil, "delta, element " .. k)
      assert.same(b, s:decode("T", d, { baseline = base }), "delta, element " .. k)
      for _, bad in ipairs { "x", 1001, -1, 0.5 } do
        b = copy(a)
        b.k, b.xs[k] = k, bad
        assert.matches("^xs%[" .. k .. "%]: ", errorof(s.encode, s, "T", b))
        local delta = errorof(s.encode, s, "T", b, { baseline = a })
        assert.matches("^xs%[" .. k .. "%]: ", delta)
        assert.equal(errorof(s.encode, s, "T", b, { baseline = poisoned(a) }), delta)
      end
      b = copy(a)
      b.k, b.bs[k] = k, 1
      assert.matches("^bs%[" .. k .. "%]: ", errorof(s.encode, s, "T", b, { baseline = a }))
      assert.matches("^bs%[" .. k .. "%]: ", errorof(s.encode, s, "T", b))
    end
    -- a call after the errors finds the schema as it was
    assert.same(a, s:decode("T", s:encode("T", a, { baseline = base }), { baseline = base }))
  end)

  it("keep tapes no longer than the tables they describe", function ()
    local s = bitwire.schema(DESC)
    local rand = lcg(29)
    local a = gen(rand)
    collectgarbage()
    local before = collectgarbage("count")
    for _ = 1, 2000 do
      local b = change(rand, a)
      s:encode("Root", b, { baseline = a })
    end
    collectgarbage()
    collectgarbage()
    assert.is_true(collectgarbage("count") - before < 64,
                   "tapes of collected tables stay")
  end)
end)
