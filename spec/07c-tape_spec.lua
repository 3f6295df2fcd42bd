-- Deltas against tapes (bindings/lbw_tape.c): a delta encode or decode of
-- a type whose fields a tape holds reads the baseline's codes from the tape
-- its own encode or decode left, not from its table. Checked against the
-- walk over baseline tables: the same bytes, values and failures, over
-- random values, random changes, random definitions and damaged packets.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local T = require "spec.tape_helpers"
local lcg, errorof = H.lcg, H.errorof
local DESC, gen, copy, change, poisoned, sameastable, decodesame =
  T.DESC, T.gen, T.copy, T.change, T.poisoned, T.sameastable, T.decodesame

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
      function (b) b.grid[#b.grid + 1] = { 10 } end,
      function (b) b.grid[#b.grid + 1] = 5 end,
      function (b) b.paths[1] = { { x = 0 }, {} } end,
      -- sparse arrays: bad keys (with a slot changed, so the array is
      -- sent), bad slots, a bad array
      function (b) b.marks.x, b.marks[1] = 1, (b.marks[1] or 0) + 1 % 10 end,
      function (b) b.marks[71], b.marks[2] = 1, (b.marks[2] or 0) + 1 % 10 end,
      function (b) b.marks[3] = 10 end,
      function (b) b.ents[1] = 5 end,
      function (b) b.ents[2] = { id = 1 } end,
      function (b) local k = next(b.ents) if k then b.ents[k].pos.y = 11 end end,
      function (b) b.ents = "x" end,
      function (b) b.far[6001] = { x = 0, y = 0 } end,
      function (b) b.far[0.5], b.far[1] = 1, { x = 1, y = 1 } end,
      function (b) b.tags[4] = "seven!!" end,
      function (b) b.spins[1] = { 0, 0, 0, 0 } end,
      function (b) b.groups = { [2] = { lead = 3, members = { [13] = { x = 0, y = 0 } } } } end,
      function (b) b.rows[1] = { [9] = 1 } end,
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

  it("agree with the walk over tables on random definitions", function ()
    -- random types of the kinds tapes hold: zero-bit and 64-bit fields,
    -- long fused runs, optional and versioned ones, nested records,
    -- arrays and sparse arrays; values from tools/gen_random.lua, the baseline's near them
    local gen_random = dofile("tools/gen_random.lua")
    math.randomseed(41)
    local rand = lcg(41)
    local function scalar ()
      local r = rand(14)
      if r == 0 then local lo = rand(20) - 10; return { "int", min = lo, max = lo }
      elseif r == 1 then return { "int", min = -rand(1000), max = rand(1 << 40), clamp = rand(2) == 0 }
      elseif r == 2 then return { "uint", bits = rand(64) + 1 }
      elseif r == 3 then return { "bool" }
      elseif r == 4 then
        return { "float", min = -rand(100), max = rand(100) + 1, res = 0.05,
                 delta = rand(3) == 0 and "relative" or nil }
      elseif r == 5 then return { "enum", values = { "p", "q", "r", "s", "t" } }
      elseif r == 6 then return { "string", max = rand(20) }
      elseif r == 7 then
        return { "quat", bits = 6 + rand(15), delta = rand(3) == 0 and "relative" or nil }
      elseif r == 8 then
        return { "angle", bits = 2 + rand(24), delta = rand(3) == 0 and "relative" or nil }
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
          elseif r == 3 then  -- arrays of arrays, of scalars or records
            local of = t < ntypes and rand(2) == 0 and "T" .. (t + 1) or scalar()
            f = { "array", of = { "array", of = of, max = 1 + rand(4) }, max = 1 + rand(3) }
          elseif r == 4 then  -- sparse arrays, of scalars or records
            local rec = t < ntypes and rand(2) == 0  -- a long one of scalars
            f = { "sparse", of = rec and "T" .. (t + 1) or scalar(),
                  max = 1 + rand(t == 1 and not rec and rand(3) == 0 and 9000 or 12),
                  encoding = ({ "auto", "mask", "index", "relative" })[rand(4) + 1] }
          end
          table.insert(f, 1, "f" .. i)
          if rand(6) == 0 then f.optional = true
          elseif rand(8) == 0 and t == 1 and f[2] == "int" then f.since, f.default = 1, f.min end
          fields[#fields + 1] = f
          r = rand(16)  -- align and check: on the wire, not on tapes
          if r == 0 then fields[#fields + 1] = { "align" }
          elseif r == 1 then fields[#fields + 1] = { "check", magic = rand(1 << 32) } end
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
        decodesame(s, "T1", want, assert(s:decode("T1", s:encode("T1", a))))
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
end)
