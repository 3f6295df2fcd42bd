-- Deltas against tapes: which baseline a delta reads, as it was sent or as
-- it was decoded, what a table's tape remembers when the table is refilled,
-- sent again or relayed, and tapes collected with their tables.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local T = require "spec.tape_helpers"
local lcg = H.lcg
local DESC, gen, copy, change, poisoned, sameastable =
  T.DESC, T.gen, T.copy, T.change, T.poisoned, T.sameastable

describe("deltas against tapes", function ()
  it("take a baseline as it was sent, as the peer has it", function ()
    local s = bitwire.schema(DESC)
    local rand = lcg(17)
    local a = gen(rand)
    local b = change(rand, a)
    local peer = s:decode("Root", s:encode("Root", a))
    peer = assert(s:decode("Root", s:encode("Root", b, { baseline = a }), { baseline = peer }))
    -- the sender edits what it sent; the peer's copy does not change
    b.flag, b.name = not b.flag, "edited"
    b.grid[1] = { 1, 2, 3 }
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

  it("decode deltas into recycled tables, the baseline's among them, as without into", function ()
    -- a client keeping snapshots in a ring: each delta goes into the oldest
    -- table, or into its baseline itself; the result keeps the tape the
    -- walk wrote, so the next delta against it reads that, not the table
    local s = bitwire.schema(DESC)
    local rand = lcg(41)
    local sent = (gen(rand))
    local ring = { s:decode("Root", s:encode("Root", sent)) }
    ring[2], ring[3] = s:decode("Root", s:encode("Root", (gen(rand)))), {}
    local base = ring[1]
    for i = 1, 30 do
      local nxt = change(rand, sent)
      local into = i % 3 == 0 and base or ring[i % #ring + 1]
      local d = s:encode("Root", nxt, { baseline = sent })
      local want = s:decode("Root", d, { baseline = base })
      local got = assert(s:decode("Root", d, { baseline = base, into = into }))
      assert.equal(into, got)
      assert.same(want, got)
      assert.same(s:decode("Root", s:encode("Root", nxt)), got)
      -- the caller edits the table by hand: a baseline is taken as it was
      -- decoded (its tape), and now 'into' holds the tape of this decode
      local name = got.name
      got.name = "edited by hand"
      local after = change(rand, nxt)
      assert.same(s:decode("Root", s:encode("Root", after)),
        s:decode("Root", s:encode("Root", after, { baseline = nxt }), { baseline = got }))
      got.name = name
      sent, base = nxt, got
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
      -- 'base' took its tape from that decode, which builds codes only:
      -- an encode against it compares codes too
      sameastable(s, "Root", change(rand, a), base)
    end
  end)

  it("read a small decoded baseline to its last bit", function ()
    -- tapes of a word or less, and of exactly one or two words, their last
    -- field kept or changed: each delta decoded against what the one
    -- before made (a tape of codes only, no raws after them), so a read of
    -- the last word finds the word every tape keeps past its end (the
    -- sanitized run of the specs would catch a read beyond it)
    local s = bitwire.schema({
      Small = { {"a", "int", min = 0, max = 1000}, {"b", "int", min = 0, max = 7} },
      Word = { {"a", "uint", bits = 32}, {"b", "uint", bits = 32} },
      Words = { {"a", "uint", bits = 64}, {"b", "uint", bits = 63}, {"c", "bool"} },
      Fixed = { {"a", "int", min = 0, max = 100}, {"z", "int", min = 5, max = 5} },
      Text = { {"f", "bool"}, {"s", "string", max = 16} },
    })
    local rand = lcg(101)
    local gens = {
      Small = function () return { a = rand(1001), b = rand(8) } end,
      Word = function () return { a = rand(1 << 32), b = rand(1 << 32) } end,
      Words = function ()
        return { a = rand(1 << 62) * 4 + rand(4), b = rand(1 << 62) * 2 + rand(2),
                 c = rand(2) == 1 }
      end,
      Fixed = function () return { a = rand(101), z = 5 } end,
      Text = function ()
        return { f = rand(2) == 1, s = ("x"):rep(rand(17)) }
      end,
    }
    for name, g in pairs(gens) do
      local sent = g()
      local peer = s:decode(name, s:encode(name, sent))
      for _ = 1, 30 do
        local v = g()
        for k, x in pairs(sent) do  -- some fields kept
          if rand(2) == 0 then v[k] = x end
        end
        local d = s:encode(name, v, { baseline = sent })
        peer = assert(s:decode(name, d, { baseline = peer }))
        assert.same(s:decode(name, s:encode(name, v)), peer)
        sent = v
      end
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
