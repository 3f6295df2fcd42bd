-- Deltas decoded into a table (bindings/lbw_tapedec.c): the tape walk
-- refills the table's records, arrays and quaternions in place, as a full
-- decode into refills them, and gives what a decode without into gives:
-- over random values, changes, versions and recycled tables of every kind,
-- aliased ones, ones shared with the baseline, and damaged packets.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local T = require "spec.tape_helpers"
local lcg = H.lcg
local DESC, gen, copy, change = T.DESC, T.gen, T.copy, T.change

-- The old tables a refill keeps at their places in a value of Root: its
-- items (records), their positions (records) and rotations (quaternions),
-- its pair (a fixed array and its records), nums and grid (arrays, and
-- arrays in an array) and optrec; by path.
local function refilled (v)
  local out = { items = v.items, pair = v.pair, pair1 = v.pair[1], pair2 = v.pair[2],
                nums = v.nums, grid = v.grid, optrec = v.optrec }
  for i, it in ipairs(v.items) do
    out["items" .. i], out["pos" .. i], out["rot" .. i] = it, it.pos, it.rot
  end
  for i, g in ipairs(v.grid) do out["grid" .. i] = g end
  return out
end

-- Whether the value 'v' has the place 'p' of refilled (an old table there
-- is refilled, not replaced).
local function hasplace (v, p)
  local i = tonumber(p:match("%d+$"))
  if p == "optrec" then return v.optrec ~= nil end
  if p:match("^items%d") or p:match("^pos%d") or p:match("^rot%d") then
    return i <= #v.items
  end
  if p:match("^grid%d") then return i <= #v.grid end
  return true
end

-- 'd' with 'n' random bits flipped
local function flipbits (rand, d, n)
  local t = { d:byte(1, -1) }
  for _ = 1, n do
    local i = rand(#t) + 1
    t[i] = t[i] ~ (1 << rand(8))
  end
  return string.char(table.unpack(t))
end

-- A random Root value 'a', a change 'b' of it, the receiver's copy of 'a'
-- and the delta of 'b' against 'a'.
local function deltaof (s, rand)
  local a = gen(rand)
  local b = change(rand, a)
  return a, b, s:decode("Root", s:encode("Root", a)), s:encode("Root", b, { baseline = a })
end

describe("a delta decoded into a table", function ()
  it("refills its tables in place and gives what a decode without into gives", function ()
    local s = bitwire.schema(DESC)
    local rand = lcg(53)
    for round = 1, 150 do
      local version = round % 4 == 0 and 0 or nil
      local a = gen(rand)
      local b = change(rand, a)
      local base = assert(s:decode("Root", s:encode("Root", a, { version = version }),
                                   { version = version }))
      local before = copy(base)
      local d = s:encode("Root", b, { baseline = a, version = version })
      local want = assert(s:decode("Root", d, { baseline = base, version = version }))
      -- recycled: a decode of another value, at this version or the other
      local other = change(rand, gen(rand))
      local into = assert(s:decode("Root", s:encode("Root", other, { version = round % 3 }),
                                   { version = round % 3 }))
      local old = refilled(into)
      local got = assert(s:decode("Root", d, { baseline = base, version = version, into = into }))
      assert.equal(into, got)
      assert.same(want, got)
      -- (at another version than the schema's own, a delta walks tables
      -- and moves new ones in)
      for p, t in pairs(version == nil and old or {}) do
        if hasplace(want, p) and hasplace(other, p) then
          assert.equal(t, refilled(got)[p], p)
        end
      end
      assert.same(before, base)  -- the baseline is read, not written
      -- 'into' now keeps the tape this decode wrote: the next delta
      -- against it reads that
      local c = change(rand, b)
      assert.same(s:decode("Root", s:encode("Root", c, { version = version }),
                           { version = version }),
                  s:decode("Root", s:encode("Root", c, { baseline = b, version = version }),
                           { baseline = got, version = version }))
    end
  end)

  it("clears what the value lacks from a table built by hand", function ()
    local s = bitwire.schema(DESC)
    local rand = lcg(59)
    for _ = 1, 60 do
      local _, _, base, d = deltaof(s, rand)
      local into = copy(gen(rand))
      into.junk, into.pair[1].z = 1, 2
      into.items[#into.items + 1] = { id = 1, extra = true }
      into.items[#into.items + 2] = { id = 2 }  -- past a hole
      into.nums[20] = 5
      into.optrec = { junk = 1 }
      into.later = "not a number"
      local got = assert(s:decode("Root", d, { baseline = base, into = into }))
      assert.equal(into, got)
      assert.same(s:decode("Root", d, { baseline = base }), got)
    end
  end)

  it("leaves an absent optional field with a default absent, kept or changed", function ()
    -- the default fills a field absent at the version, never an optional
    -- one the value lacks: a full decode leaves that nil
    local s = bitwire.schema {
      P = { { "x", "int", min = 0, max = 9 },
            { "o", "bool", optional = true, default = false } },
      R = { { "k", "int", min = 0, max = 9 },
            { "o", "int", min = 0, max = 9, optional = true, default = 4 },
            { "p", "P" }, { "ps", "array", of = "P", max = 2 },
            { "v", "int", min = 0, max = 9, since = 1, default = 6 } },
    }
    local a = { k = 1, o = 2, p = { x = 1, o = true }, ps = { { x = 1 } } }
    for _, b in ipairs { { k = 2, p = { x = 1 }, ps = { { x = 1 } } },
                         { k = 1, p = { x = 2 }, ps = { { x = 2 } } } } do
      for _, version in ipairs { 0, 1 } do
        local opts = { version = version }
        local base = s:decode("R", s:encode("R", a, opts), opts)
        local d = s:encode("R", b, { baseline = base, version = version })
        local want = s:decode("R", s:encode("R", b, opts), opts)
        local into = s:decode("R", s:encode("R", a, opts), opts)
        local got = assert(s:decode("R", d, { baseline = base, into = into, version = version }))
        assert.equal(into, got)
        assert.same(want, got)
        assert.is_nil(got.p.o)
      end
    end
  end)

  it("makes a new table where the table it would refill is reached twice", function ()
    local s = bitwire.schema(DESC)
    local rand = lcg(61)
    for _ = 1, 60 do
      local _, _, base, d = deltaof(s, rand)
      local want = s:decode("Root", d, { baseline = base })
      -- (each a table of its place's type: a decoded table the caller
      -- changed afterwards keeps what a decode into it does not write)
      local into = s:decode("Root", s:encode("Root", (gen(rand))))
      local item = into.items[1] or into.optrec or {}
      for i = 1, 8 do into.items[i] = item end
      into.pair[2], into.optrec = into.pair[1], item
      into.grid = { into.nums, into.nums, into.nums }
      local got = assert(s:decode("Root", d, { baseline = base, into = into }))
      assert.same(want, got)
      for i = 2, #got.items do assert.are_not.equal(got.items[1], got.items[i]) end
      assert.are_not.equal(got.pair[1], got.pair[2])
    end
  end)

  it("refills tables it shares with the baseline, whose tape stays as decoded", function ()
    local s = bitwire.schema(DESC)
    local rand = lcg(67)
    for _ = 1, 60 do
      local a, _, base, d = deltaof(s, rand)
      local want = s:decode("Root", d, { baseline = base })
      -- the caller put the baseline's own records into the recycled table
      local into = s:decode("Root", s:encode("Root", (gen(rand))))
      into.items, into.pair, into.optrec = base.items, base.pair, base.optrec
      local got = assert(s:decode("Root", d, { baseline = base, into = into }))
      assert.same(want, got)
      -- the baseline's tables now hold b's values; a delta against it still
      -- reads what it was decoded as
      local c = change(rand, a)
      assert.same(s:decode("Root", s:encode("Root", c)),
                  s:decode("Root", s:encode("Root", c, { baseline = a }), { baseline = base }))
    end
  end)

  it("reads a baseline that shares tables with a table built by hand as it is", function ()
    -- clearing the table of keys its type lacks must wait until the
    -- baseline is read: a walk over the baseline's tables, or the tape made
    -- from them, would read what the clearing left
    local s = bitwire.schema {
      P = { { "x", "int", min = 0, max = 99 } },
      R = { { "k", "int", min = 0, max = 99 }, { "ps", "array", of = "P", max = 8 },
            { "sp", "sparse", of = { "int", min = 0, max = 9 }, max = 4 } },
    }
    local a = { k = 1, ps = { { x = 1 }, { x = 2 } }, sp = { [1] = 3 } }
    local d = s:encode("R", { k = 2, ps = { { x = 1 }, { x = 2 } }, sp = { [1] = 3 } },
                       { baseline = a })
    local cases = {
      function ()  -- built by hand: an element past a hole, shared
        local base = { k = 1, ps = { { x = 1 }, { x = 2 }, nil, { x = 4 } }, sp = { [1] = 3 } }
        return base, { k = 0, ps = base.ps, sp = {} }
      end,
      function ()  -- built by hand: keys no field or slot, shared
        local base = { k = 1, ps = { { x = 1, y = 5 }, { x = 2 } }, sp = { [1] = 3, [9] = 1 } }
        return base, { k = 0, ps = base.ps, sp = base.sp }
      end,
      function ()  -- the baseline itself where a record goes
        local base = copy(a)
        return base, { k = 0, ps = { base }, sp = {} }
      end,
      function ()  -- the same, decoded (its tape made from its table)
        local base = s:decode("R", s:encode("R", a))
        return base, { k = 0, ps = { base }, sp = {} }
      end,
    }
    for i, make in ipairs(cases) do
      local v1, m1, c1 = s:decode("R", d, { baseline = (make()) })
      local base, into = make()
      local v2, m2, c2 = s:decode("R", d, { baseline = base, into = into })
      assert.equal(m1, m2, i)
      assert.equal(c1, c2, i)
      assert.same(v1, v2, i)
      if v2 ~= nil then assert.equal(into, v2, i) end
    end
  end)

  it("fails on damaged bytes with nil, message, code and forgets the table", function ()
    local s = bitwire.schema(DESC)
    local rand = lcg(71)
    local failed = 0
    for _ = 1, 150 do
      local a, b, base, d = deltaof(s, rand)
      local bad = rand(2) == 0 and d:sub(1, rand(#d)) or flipbits(rand, d, 1 + rand(3))
      local into = s:decode("Root", s:encode("Root", (gen(rand))))
      local ok, got, msg, code = pcall(s.decode, s, "Root", bad, { baseline = base, into = into })
      assert.is_true(ok, got)
      if got == nil then
        failed = failed + 1
        assert.is_string(msg)
        assert.is_string(code)
        -- half refilled, it is no decode of this schema: a delta against it
        -- walks its table, as against any table built by hand
        local e = s:encode("Root", b, { baseline = a })
        assert.same(s:decode("Root", e, { baseline = copy(into) }),
                    s:decode("Root", e, { baseline = into }))
        -- and a decode into it refills it whole again
        local full = s:encode("Root", b)
        assert.same(s:decode("Root", full), s:decode("Root", full, { into = into }))
      else
        assert.equal(into, got)
      end
      assert.same(s:decode("Root", d, { baseline = base }),
                  s:decode("Root", d, { baseline = base, into = into }))
    end
    assert.is_true(failed > 50, "damaged packets that failed: " .. failed)
  end)

  it("counts what it refills against max_values as a decode without into counts it", function ()
    local s = bitwire.schema(DESC)
    local rand = lcg(79)
    local seen = {}
    for _ = 1, 40 do
      local _, _, base, d = deltaof(s, rand)
      for _, max in ipairs { 0, 1, 5, 20, 60, 150, 400 } do
        local v1, m1, c1 = s:decode("Root", d, { baseline = base, max_values = max })
        local into = s:decode("Root", s:encode("Root", (gen(rand))))
        local v2, m2, c2 = s:decode("Root", d, { baseline = base, max_values = max, into = into })
        assert.equal(m1, m2)
        assert.equal(c1, c2)
        assert.equal(v1 == nil, v2 == nil)
        seen[v1 == nil] = true
      end
    end
    assert.is_true(seen[true] and seen[false], "both ran out and fitted")
  end)

  it("keeps keys the caller added to a table it refills with a value sent whole", function ()
    -- a value the baseline lacks comes whole, refilling the old table; its
    -- tape is of what was decoded, not of keys the caller added (they stay,
    -- as after a full decode into): 'decoded value refused' before
    local s = bitwire.schema {
      R = { { "n", "int", min = 0, max = 9 },
            { "arr", "array", of = { "sparse", of = { "int", min = 0, max = 3 }, max = 8 }, max = 3 },
            { "o", "G", optional = true } },
      G = { { "sp", "sparse", of = { "int", min = 0, max = 3 }, max = 8 },
            { "l", "array", of = { "int", min = 0, max = 3 }, max = 4 } },
    }
    local a = { n = 1, arr = {} }
    local b = { n = 2, arr = { { [2] = 1 } }, o = { sp = { [3] = 2 }, l = { 1, 2 } } }
    local base = s:decode("R", s:encode("R", a))
    local d = s:encode("R", b, { baseline = a })
    local old = { n = 0, arr = { { [1] = 1 } }, o = { sp = { [1] = 1 }, l = { 3 } } }
    local edits = {
      function (t) t.arr[1].x = true end,    -- a sparse array's key no slot
      function (t) t.arr[1][9] = 0 end,      -- a slot past max
      function (t) t.o.sp.y = 1 end,
      function (t) t.o.l[7] = 1 end,         -- an array's key past a hole
    }
    for i, edit in ipairs(edits) do
      local into, want = s:decode("R", s:encode("R", old)), s:decode("R", s:encode("R", old))
      edit(into)
      edit(want)
      assert(s:decode("R", s:encode("R", b), { into = want }))
      local got, msg = s:decode("R", d, { baseline = base, into = into })
      assert(got, i .. ": " .. tostring(msg))
      assert.same(want, got, i)
      -- as a baseline it reads as what was decoded: a delta against it
      local c = { n = 3, arr = { { [2] = 2 } }, o = { sp = { [3] = 2 }, l = { 1 } } }
      assert.same(s:decode("R", s:encode("R", c)),
                  s:decode("R", s:encode("R", c, { baseline = b }), { baseline = got }), i)
    end
  end)

  it("writes the table's own tape again in place: no memory a call", function ()
    local s = bitwire.schema({
      E = { { "id", "int", min = 0, max = 999 }, { "x", "float", min = 0, max = 100, res = 0.01 } },
      S = { { "es", "array", of = "E", max = 64 } },
    })
    local function snap (t)
      local v = { es = {} }
      for i = 1, 32 do v.es[i] = { id = i, x = (i == 5 or i == 20) and t or 1 } end
      return v
    end
    local a, b = snap(1), snap(2)
    local base = s:decode("S", s:encode("S", a))
    local d = s:encode("S", b, { baseline = a })
    local into = assert(s:decode("S", d, { baseline = base }))
    local opts = { baseline = base, into = into }
    assert(s:decode("S", d, opts))
    collectgarbage()
    collectgarbage("stop")
    local before = collectgarbage("count")
    for _ = 1, 200 do assert(s:decode("S", d, opts)) end
    local grew = (collectgarbage("count") - before) * 1024
    collectgarbage("restart")
    -- a new tape a call would be 200 of ~100 bytes and more
    assert.is_true(grew < 1024, ("grew %d bytes over 200 decodes into"):format(grew))
    assert.same(s:decode("S", s:encode("S", b)), into)
  end)

  it("writes the table's tape again, of any size, in pieces or not", function ()
    -- tapes past 112 words are kept in pieces (290 entities: 172 words;
    -- 120: 71): the ring's sizes change
    -- from tick to tick, so a table's old tape is written again or made anew
    local s = bitwire.schema({
      E = { { "id", "int", min = 0, max = 999 }, { "x", "float", min = 0, max = 100, res = 0.01 },
            { "y", "float", min = 0, max = 100, res = 0.01 } },
      S = { { "es", "array", of = "E", max = 300 } },
    })
    local rand = lcg(73)
    local function snap ()
      local v = { es = {} }
      for i = 1, ({ 3, 40, 120, 290 })[rand(4) + 1] do
        v.es[i] = { id = i, x = rand(1001) / 10, y = i / 3 }
      end
      return v
    end
    local sent, ring = {}, {}
    for k = 1, 3 do
      sent[k] = snap()
      ring[k] = s:decode("S", s:encode("S", sent[k]))
    end
    for tick = 1, 60 do
      local base, slot = (tick - 1) % 3 + 1, tick % 3 + 1
      local v = snap()
      for i = 1, math.min(#v.es, #sent[base].es) do
        if rand(8) > 0 then v.es[i].x = sent[base].es[i].x end
      end
      local d = s:encode("S", v, { baseline = sent[base] })
      local got = assert(s:decode("S", d, { baseline = ring[base], into = ring[slot] }))
      assert.equal(ring[slot], got)
      assert.same(s:decode("S", s:encode("S", v)), got)
      sent[slot] = v
    end
  end)

  it("keeps a ring of snapshot tables with their entity tables in place", function ()
    -- a client's ring: each delta goes into the oldest slot, against the
    -- newest, and the slots' entity tables stay the same tables
    local s = bitwire.schema({
      Entity = { { "id", "int", min = 0, max = 4095 },
                 { "x", "float", min = -512, max = 512, res = 0.01 },
                 { "name", "string", max = 16, optional = true } },
      Snapshot = { { "tick", "uint", bits = 20 },
                   { "entities", "array", of = "Entity", max = 64 } },
    })
    local function snap (tick)
      local v = { tick = tick, entities = {} }
      for i = 1, 32 do
        local moved = i == tick % 32 + 1 or i == (tick * 7) % 32 + 1
        v.entities[i] = { id = i, x = moved and tick * 0.5 or i,
                          name = (i + tick // 10) % 8 == 0 and "e" .. i or nil }
      end
      return v
    end
    local sent = { snap(0) }
    local ring = { s:decode("Snapshot", s:encode("Snapshot", sent[1])) }
    for k = 2, 3 do ring[k] = s:decode("Snapshot", s:encode("Snapshot", snap(0))) end
    local ents = {}
    for k = 1, 3 do ents[k] = { table.unpack(ring[k].entities) } end
    for tick = 1, 60 do
      local base, slot = (tick - 1) % 3 + 1, tick % 3 + 1
      local v = snap(tick)
      local d = s:encode("Snapshot", v, { baseline = sent[base] })
      local got = assert(s:decode("Snapshot", d, { baseline = ring[base], into = ring[slot] }))
      assert.equal(ring[slot], got)
      assert.same(s:decode("Snapshot", s:encode("Snapshot", v)), got)
      for i = 1, 32 do assert.equal(ents[slot][i], got.entities[i]) end
      sent[slot] = v
    end
  end)
end)
