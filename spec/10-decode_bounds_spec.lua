-- Decode into tables that alias each other, and the max_values bound on
-- what one decode may create (issue 15, items 9 and 14).
local bitwire = require "bitwire"
local H = require "spec.helpers"

describe("schema:decode into aliased tables", function ()
  local s = bitwire.schema {
    V = { { "x", "int", min = 0, max = 255 }, { "y", "int", min = 0, max = 255 } },
    T = { { "a", "V" }, { "b", "V" }, { "list", "array", of = "V", max = 8 },
          { "q", "quat", bits = 9 }, { "r", "quat", bits = 9 },
          { "flags", "array", of = "bool", count = 3 },
          { "more", "array", of = "bool", count = 3 } },
    S = { { "cells", "sparse", of = "V", max = 6, encoding = "mask" },
          { "other", "sparse", of = "V", max = 6, encoding = "index" } },
  }
  local value = {
    a = { x = 1, y = 2 }, b = { x = 3, y = 4 },
    list = { { x = 5, y = 6 }, { x = 7, y = 8 }, { x = 9, y = 10 } },
    q = { 0, 0, 0, 1 }, r = { 1, 0, 0, 0 },
    flags = { true, false, true }, more = { false, true, false },
  }
  local bytes = s:encode("T", value)
  local fresh = s:decode("T", bytes)

  it("gives a fresh decode's values when two fields share a table", function ()
    local zero = { x = 0, y = 0 }
    local t = { a = zero, b = zero }
    assert.equal(t, s:decode("T", bytes, { into = t }))
    assert.same(fresh, t)
    assert.are_not.equal(t.a, t.b)
  end)

  it("gives a fresh decode's values when array elements share a table", function ()
    local tmpl = { x = 0, y = 0 }
    local t = { list = { tmpl, tmpl, tmpl, tmpl } }
    s:decode("T", bytes, { into = t })
    assert.same(fresh, t)
    assert.are_not.equal(t.list[1], t.list[2])
    assert.are_not.equal(t.list[2], t.list[3])
  end)

  it("handles a table shared between arrays, quats and the root", function ()
    local shared = { 0, 0, 0, 0 }
    local t = { q = shared, r = shared, flags = shared, more = shared }
    t.a = t  -- the root itself as a field
    s:decode("T", bytes, { into = t })
    assert.same(fresh, t)
    assert.are_not.equal(t.q, t.r)
    assert.are_not.equal(t.flags, t.more)
  end)

  it("clears a table it did not decode of what the type lacks, first", function ()
    -- keys that are no slots, fields the type does not declare, elements
    -- past a hole: a full decode would not have them
    local k = bitwire.schema { T = { { "sp", "sparse", of = "E", max = 20 },
                                     { "a", "array", of = "E", max = 4 },
                                     { "q", "quat", bits = 9 } },
                               E = { { "hp", "int", min = 0, max = 9 } } }
    local v = { sp = { [3] = { hp = 1 } }, a = { { hp = 2 } }, q = { 0, 0, 0, 1 } }
    local shared = { hp = 5, junk = 1 }
    local t = { sp = { [0] = 1, [4] = 2, [30] = shared, x = shared }, other = 1,
                a = { shared, nil, shared, n = 3 }, q = { 1, 2, 3, 4, 5, w = 1 } }
    assert.equal(t, k:decode("T", k:encode("T", v), { into = t }))
    assert.same(k:decode("T", k:encode("T", v)), t)
    assert.equal(k:encode("T", v), k:encode("T", t))
    -- a table this schema decoded is refilled as it is: keys added by hand
    -- are the caller's, as they are in a baseline
    t.sp[0] = 1
    assert.equal(t, k:decode("T", k:encode("T", v), { into = t }))
    assert.equal(1, t.sp[0])
    assert.matches("sparse keys must be integers in %[1, 20%]", select(2, pcall(k.encode, k, "T", t)))
  end)

  it("clears what a reload dropped from a table decoded under the old definitions", function ()
    -- left there, a field the next reload adds again would come back as
    -- its old value, and a sparse slot past a lowered max would make the
    -- table a baseline the sender's copy is not
    local function desc(max, armor)
      local E = { { "hp", "int", min = 0, max = 255 } }
      if armor then E[2] = { "armor", "int", min = 0, max = 9, default = 0 } end
      return { E = E, Snap = { { "tick", "uint", bits = 8 }, { "arr", "array", of = "E", max = 4 },
        { "ents", "sparse", of = "E", max = max, encoding = "mask" } } }
    end
    local a, b, c = bitwire.schema(desc(30, true)), bitwire.schema(desc(10)),
                    bitwire.schema(desc(10, true))
    local old = a:decode("Snap", a:encode("Snap", { tick = 1, arr = { { hp = 1, armor = 7 } },
      ents = { [3] = { hp = 4, armor = 7 }, [20] = { hp = 7, armor = 0 } } }))
    local s2 = { tick = 2, arr = { { hp = 2 } }, ents = { [3] = { hp = 5 } } }
    local kept = assert(b:decode("Snap", b:encode("Snap", s2), { into = old }))
    assert.equal(old, kept)
    assert.same(b:decode("Snap", b:encode("Snap", s2)), kept)
    local view = b:decode("Snap", b:encode("Snap", s2))   -- the sender's copy
    local s3 = { tick = 3, arr = { { hp = 2, armor = 0 } },
                 ents = { [3] = { hp = 6, armor = 0 }, [4] = { hp = 1, armor = 0 } } }
    local got = c:decode("Snap", c:encode("Snap", s3, { baseline = view }), { baseline = kept })
    assert.same(s3, got)
  end)

  it("handles shared slots of sparse arrays", function ()
    local v = { cells = { [2] = { x = 1, y = 1 }, [5] = { x = 2, y = 2 } },
                other = { [1] = { x = 3, y = 3 }, [6] = { x = 4, y = 4 } } }
    local b = s:encode("S", v)
    local one = { x = 0, y = 0 }
    local t = { cells = { one, one, one, one, one, one } }
    t.other = t.cells
    s:decode("S", b, { into = t })
    assert.same(s:decode("S", b), t)
  end)

  it("clears a table reached as a record and as an array along both", function ()
    -- refilled as the field the decode meets first, whatever order the
    -- clearing met the keys in: both field orders, so one of them has the
    -- clearing meet the other field first
    local k = bitwire.schema {
      P = { { "x", "int", min = 0, max = 9 } },
      RL = { { "r", "P" }, { "l", "array", of = { "int", min = 0, max = 9 }, max = 4 } },
      LR = { { "l", "array", of = { "int", min = 0, max = 9 }, max = 4 }, { "r", "P" } },
      SR = { { "s", "sparse", of = { "int", min = 0, max = 9 }, max = 8 }, { "r", "P" } },
    }
    local v = { r = { x = 3 }, l = { 4 }, s = { [2] = 5 } }
    for _, name in ipairs { "RL", "LR", "SR" } do
      local shared = { x = 1, 5, 6, [7] = 8, junk = true }
      local t = { r = shared, l = shared, s = shared }
      local b = k:encode(name, v)
      assert.equal(t, k:decode(name, b, { into = t }))
      assert.same(k:decode(name, b), t)
    end
  end)

  it("notices aliasing that appears after decodes into the same tables", function ()
    local t = {}
    for _ = 1, 3 do s:decode("T", bytes, { into = t }) end
    t.b = t.a                  -- same order of tables as before, up to b
    t.list[3] = t.list[1]
    s:decode("T", bytes, { into = t })
    assert.same(fresh, t)
    assert.are_not.equal(t.a, t.b)
    assert.are_not.equal(t.list[1], t.list[3])
    t.r = t.list[2]            -- a table of another kind
    s:decode("T", bytes, { into = t })
    assert.same(fresh, t)
    local seen = {}
    for _, v in ipairs { t, t.a, t.b, t.list, t.list[1], t.list[2], t.list[3], t.q, t.r,
                         t.flags, t.more } do
      assert.is_nil(seen[v])
      seen[v] = true
    end
  end)

  it("clears a table it decoded of another type's keys, the caller having put it there too", function ()
    -- refilled where the walk meets it first, as a record, array or
    -- quaternion of another type than the one it holds the keys of; by
    -- a full decode and a delta's in-place walk alike
    local k = bitwire.schema {
      P = { { "x", "int", min = 0, max = 9 } },
      Q = { { "y", "int", min = 0, max = 9 }, { "z", "bool" } },
      T = { { "p", "P" }, { "rot", "quat", bits = 9 }, { "q", "Q" },
            { "l", "array", of = "Q", max = 3 } },
    }
    local v = { p = { x = 1 }, rot = { 0, 0, 0, 1 }, q = { y = 2, z = true },
                l = { { y = 3, z = false }, { y = 4, z = true } } }
    local v2 = { p = { x = 5 }, rot = { 0, 0, 0, 1 }, q = { y = 6, z = true },
                 l = { { y = 3, z = false }, { y = 7, z = true } } }
    local full, delta = k:encode("T", v2), k:encode("T", v2, { baseline = v })
    local base = k:decode("T", k:encode("T", v))
    local want = k:decode("T", full)
    for i, alias in ipairs {
      function (t) t.p = t.q end, function (t) t.p = t.l[2] end,
      function (t) t.rot = t.q end, function (t) t.p = t.l end,
      function (t) t.rot = t.l[1] end, function (t) t.p = t end,
    } do
      for _, opts in ipairs { {}, { baseline = base } } do
        local t = k:decode("T", full)
        if opts.baseline then t = k:decode("T", delta, { baseline = base }) end
        alias(t)
        opts.into = t
        assert.equal(t, k:decode("T", opts.baseline and delta or full, opts))
        assert.same(want, t, i)
        assert.equal(full, k:encode("T", t))
      end
    end
  end)

  it("does the same where the packet leaves the table's other place empty", function ()
    -- its own place an optional field now absent, an element past a
    -- shorter array, a slot no longer sent (a full decode's: a delta's
    -- sparse array is a new table, the old one not looked into): met
    -- there before the other place or after it
    local k = bitwire.schema {
      P = { { "x", "int", min = 0, max = 9 } },
      Q = { { "y", "int", min = 0, max = 9 }, { "z", "bool" } },
      T = { { "p", "P" }, { "o", "Q", optional = true }, { "l", "array", of = "Q", max = 3 },
            { "sp", "sparse", of = "Q", max = 4 }, { "rot", "quat", bits = 9 }, { "last", "P" } },
    }
    local q = { y = 1, z = true }
    local v = { p = { x = 1 }, o = q, l = { q, q }, sp = { [1] = q, [3] = q },
                rot = { 0, 0, 0, 1 }, last = { x = 2 } }
    local v2 = { p = { x = 3 }, l = { q }, sp = { [1] = q }, rot = { 0, 0, 0, 1 },
                 last = { x = 4 } }
    local full, delta = k:encode("T", v2), k:encode("T", v2, { baseline = v })
    local base = k:decode("T", k:encode("T", v))
    local want = k:decode("T", full)
    for i, alias in ipairs {
      function (t) t.p = t.o end, function (t) t.last = t.o end,
      function (t) t.p = t.l[2] end, function (t) t.last = t.l[2] end,
      function (t) t.last = t.sp end, function (t) t.rot = t.sp[3] end,
      function (t) t.p = t.sp[3] end,
    } do
      for _, opts in ipairs { {}, i < 5 and { baseline = base } or nil } do
        local t = k:decode("T", k:encode("T", v))
        alias(t)
        opts.into = t
        assert.equal(t, k:decode("T", opts.baseline and delta or full, opts))
        assert.same(want, t, i)
        assert.equal(full, k:encode("T", t))
      end
    end
  end)

  it("still refills the tables it was given, once aliasing is gone", function ()
    local t = {}
    s:decode("T", bytes, { into = t })
    local a, l1, q = t.a, t.list[1], t.q
    s:decode("T", bytes, { into = t })
    assert.equal(a, t.a)
    assert.equal(l1, t.list[1])
    assert.equal(q, t.q)
    assert.same(fresh, t)
  end)
end)

describe("schema:decode of nested runs and optional fields", function ()
  local s = bitwire.schema {
    V = { { "x", "int", min = 0, max = 255 }, { "y", "float", min = -1, max = 1, res = 0.01 } },
    T = { { "o", "int", min = 0, max = 9, optional = true }, { "a", "V" },
          { "p", "V", optional = true }, { "n", "bool" }, { "b", "V" } },
  }
  local values = {
    { o = 3, a = { x = 1, y = 0.5 }, p = { x = 2, y = -0.25 }, n = true, b = { x = 3, y = 0 } },
    { a = { x = 4, y = 1 }, n = false, b = { x = 5, y = -1 } },
  }

  it("decodes records nested in records with optional fields, fresh and into", function ()
    local t = {}
    for _, v in ipairs(values) do
      local b = s:encode("T", v)
      assert.same(v, s:decode("T", b))
      assert.equal(t, s:decode("T", b, { into = t }))
      assert.same(v, t)
    end
  end)

  it("names the nested field that is out of range or cut", function ()
    local b = s:encode("T", values[2])
    local r, msg, code = s:decode("T", b:sub(1, 3))
    assert.is_nil(r)
    assert.equal("truncated", code)
    assert.matches("^b%.x: truncated input %(bit 19%)", msg)
    -- x of a in range, y of a's quantized value past its maximum (200)
    local w = bitwire.writer()
    w:bits(0, 1); w:bits(7, 8); w:bits(255, 8)
    r, msg, code = s:decode("T", w:tostring())
    assert.is_nil(r)
    assert.equal("range", code)
    assert.matches("^a%.y: ", msg)
  end)
end)

-- A packet of a list of one record: its count (1 in 2 bits), what 'fill'
-- writes, then zero bits enough for the rest.
local function onerecord (fill)
  local w = bitwire.writer()
  w:bits(1, 2)
  fill(w)
  w:bits(0, 32); w:bits(0, 32)
  return w:tostring()
end

describe("schema:decode of flat records", function ()
  local s = bitwire.schema {
    V = { { "x", "int", min = 0, max = 200 }, { "y", "float", min = -1, max = 1, res = 0.01 } },
    F = { { "id", "int", min = 0, max = 5 }, { "a", "V" }, { "n", "bool" }, { "b", "V" } },
    L = { { "list", "array", of = "F", max = 3 } },
  }
  local v = { list = { { id = 1, a = { x = 2, y = 0.5 }, n = true, b = { x = 200, y = -1 } },
                       { id = 5, a = { x = 0, y = 1 }, n = false, b = { x = 7, y = 0 } } } }

  it("decodes fresh and into, refilling the inner records", function ()
    local b = s:encode("L", v)
    assert.same(v, s:decode("L", b))
    local t = {}
    s:decode("L", b, { into = t })
    local a = t.list[2].a
    s:decode("L", b, { into = t })
    assert.same(v, t)
    assert.equal(a, t.list[2].a)
    t.list[1].b = t.list[1].a  -- aliased inner records
    s:decode("L", b, { into = t })
    assert.same(v, t)
    assert.are_not.equal(t.list[1].a, t.list[1].b)
  end)

  it("reports the first bad field, with its path and bit, as the general walk", function ()
    local cases = {
      { onerecord(function (w) w:bits(6, 3) end), "^list%[1%]%.id: .*%(bit 2%)$" },
      { onerecord(function (w) w:bits(1, 3); w:bits(201, 8) end), "^list%[1%]%.a%.x: .*%(bit 5%)$" },
      { onerecord(function (w) w:bits(1, 3); w:bits(1, 8); w:bits(255, 8) end),
        "^list%[1%]%.a%.y: .*%(bit 13%)$" },
      { onerecord(function (w) w:bits(1, 3); w:bits(1, 8); w:bits(1, 8); w:bits(1, 1); w:bits(0, 8);
                         w:bits(250, 8) end), "^list%[1%]%.b%.y: .*%(bit 30%)$" },
    }
    for _, case in ipairs(cases) do
      local r, msg, code = s:decode("L", case[1])
      assert.is_nil(r)
      assert.equal("range", code)
      assert.matches(case[2], msg)
      local r2, msg2 = s:decode("L", case[1], { into = { list = { { a = {}, b = {} } } } })
      assert.is_nil(r2)
      assert.equal(msg, msg2)
    end
    local r, msg, code = s:decode("F", s:encode("F", v.list[1]):sub(1, 4))
    assert.is_nil(r)
    assert.equal("truncated", code)
    assert.matches("^b%.y: truncated input %(bit 28%)$", msg)
  end)

  it("refuses past max_values inside a record as the general walk, then refills", function ()
    local one = { list = { v.list[1] } }
    local b = s:encode("L", one)
    -- root 2, array 2, the record 5, a 3, b 3
    assert.same(one, s:decode("L", b, { max_values = 15 }))
    local t = {}
    s:decode("L", b, { into = t })
    local a, bb = t.list[1].a, t.list[1].b
    for _, m in ipairs { 11, 12, 14 } do
      local r, msg, code = s:decode("L", b, { max_values = m })
      assert.is_nil(r)
      assert.equal("range", code)
      assert.matches("max_values", msg)
      local r2, msg2 = s:decode("L", b, { max_values = m, into = t })
      assert.is_nil(r2)
      assert.equal(msg, msg2)
    end
    assert.matches("^list%[1%]%.b: ", select(2, s:decode("L", b, { max_values = 14 })))
    assert.equal(t, s:decode("L", b, { into = t }))
    assert.same(one, t)
    assert.equal(a, t.list[1].a)
    assert.equal(bb, t.list[1].b)
  end)
end)

describe("schema:decode of flat records with fixed-count arrays", function ()
  local fields = {
    { "id", "int", min = 0, max = 5 }, { "b", "array", of = "bool", count = 3 },
    { "s", "array", of = { "int", min = 1, max = 10 }, count = 4 },
    { "e", "array", of = { "enum", values = { "a", "b", "c" } }, count = 2 },
    { "f", "array", of = { "float", min = 0, max = 1, res = 0.1 }, count = 2 },
  }
  -- the same fields, one of them versioned: not flat, so the general walk,
  -- on the same bits
  local general = { table.unpack(fields) }
  general[1] = { "id", "int", min = 0, max = 5, since = 1 }
  local s = bitwire.schema {
    P = fields, G = general,
    L = { { "list", "array", of = "P", max = 3 } },
    LG = { { "list", "array", of = "G", max = 3 } },
    W = { { "u", "array", of = { "uint", bits = 64 }, count = 2 },
          { "z", "array", of = { "int", min = 3, max = 3 }, count = 5 },
          { "k", "array", of = { "int", min = -100, max = 27 }, count = 10 } },
  }
  local function player (id)
    return { id = id, b = { true, false, id % 2 == 0 }, s = { 1, 10, id + 1, 7 },
             e = { "c", "a" }, f = { 0, 1 } }
  end
  local v = { list = { player(1), player(2) } }

  it("decodes fresh and into, refilling the arrays in place", function ()
    local b = s:encode("L", v)
    assert.same(v, s:decode("L", b))
    local t = { list = { { b = { true, true, true, true, true }, s = 5, e = { "b" } } } }
    assert.equal(t, s:decode("L", b, { into = t }))
    assert.same(v, t)  -- the longer array trimmed, the number replaced
    local bb, ss = t.list[2].b, t.list[2].s
    s:decode("L", b, { into = t })
    assert.same(v, t)
    assert.equal(bb, t.list[2].b)
    assert.equal(ss, t.list[2].s)
    t.list[1].s = t.list[1].b  -- aliased arrays
    t.list[2].f = t.list[1].b
    s:decode("L", b, { into = t })
    assert.same(v, t)
    assert.are_not.equal(t.list[1].b, t.list[1].s)
    assert.are_not.equal(t.list[1].b, t.list[2].f)
  end)

  it("reads elements of 64 and 0 bits, and more than one read holds", function ()
    local w = { u = { -1, math.mininteger }, z = { 3, 3, 3, 3, 3 },
                k = { -100, 27, 0, 1, 2, 3, 4, 5, 6, 7 } }
    local b = s:encode("W", w)
    assert.equal(25, #b)  -- 128 + 0 + 70 bits
    assert.same(w, s:decode("W", b))
    local t = { u = { 1, 2, 3 }, z = {}, k = { 1 } }
    s:decode("W", b, { into = t })
    assert.same(w, t)
  end)

  it("reports a bad element with its path and bit, as the general walk", function ()
    local cases = {
      { onerecord(function (w) w:bits(1, 3); w:bits(5, 3); w:bits(1, 4); w:bits(2, 4); w:bits(15, 4) end),
        "^list%[1%]%.s%[3%]: 16 out of range %[1, 10%] %(bit 16%)$" },
      { onerecord(function (w) w:bits(1, 3); w:bits(5, 3); w:bits(0, 16); w:bits(3, 2) end),
        "^list%[1%]%.e%[1%]: 3 out of range %[0, 2%] %(bit 24%)$" },
      { onerecord(function (w) w:bits(1, 3); w:bits(5, 3); w:bits(0, 16); w:bits(0, 4); w:bits(0, 4);
                         w:bits(11, 4) end),
        "^list%[1%]%.f%[2%]: quantized 11 out of range %[0, 10%] %(bit 32%)$" },
    }
    for _, case in ipairs(cases) do
      local r, msg, code = s:decode("L", case[1])
      assert.is_nil(r)
      assert.equal("range", code)
      assert.matches(case[2], msg)
      assert.equal(msg, select(2, s:decode("LG", case[1])))
      local into = { list = { { b = {}, s = {}, e = {}, f = {} } } }
      assert.equal(msg, select(2, s:decode("L", case[1], { into = into })))
    end
  end)

  it("refuses past max_values as the general walk", function ()
    local b = s:encode("L", v)
    local bg = s:encode("LG", v)
    local want = 0
    for m = 1, 60 do
      local r, msg = s:decode("L", b, { max_values = m })
      local rg, msgg = s:decode("LG", bg, { max_values = m })
      assert.equal(msgg, msg)
      assert.equal(rg == nil, r == nil)
      local ri, msgi = s:decode("L", b, { max_values = m, into = {} })
      assert.equal(r == nil, ri == nil)
      assert.equal(msg, msgi)
      if r and want == 0 then want = m end
    end
    assert.equal(2 + 3 + 2 * (6 + 4 + 5 + 3 + 3), want)  -- root, list, 2 x (P, arrays)
  end)
end)

describe("schema:decode of flat records with quaternions", function ()
  -- C is flat; G has the same bits but a versioned field, so the general walk
  local s = bitwire.schema {
    V = { { "x", "int", min = 0, max = 200 }, { "y", "int", min = 0, max = 3 } },
    C = { { "id", "int", min = 0, max = 7 }, { "pos", "V" }, { "rot", "quat", bits = 9 },
          { "big", "quat", bits = 22 }, { "ok", "bool" } },
    G = { { "id", "int", min = 0, max = 7, since = 1 }, { "pos", "V" },
          { "rot", "quat", bits = 9 }, { "big", "quat", bits = 22 }, { "ok", "bool" } },
    L = { { "list", "sparse", of = "C", max = 10 } },
    LG = { { "list", "sparse", of = "G", max = 10 } },
  }
  local function cube (i)
    local q = { 0.1 * i, -0.2, 0.3, 0.9 }
    return { id = i, pos = { x = 10 * i, y = 3 }, rot = q, big = { 0.5, 0.5, -0.5, 0.5 },
             ok = i % 2 == 0 }
  end
  local v = { list = { [2] = cube(2), [7] = cube(7) } }

  it("decodes fresh and into as the general walk, refilling the tables", function ()
    local b = s:encode("L", v)
    assert.equal(b, s:encode("LG", v))
    local want = s:decode("LG", b)
    assert.same(want, s:decode("L", b))
    local t = { list = { [7] = { rot = { 9, 9, 9, 9 }, big = 1 } } }
    assert.equal(t, s:decode("L", b, { into = t }))
    assert.same(want, t)
    local rot, pos = t.list[7].rot, t.list[7].pos
    t.list[2].big = t.list[2].rot  -- aliased quaternions
    s:decode("L", b, { into = t })
    assert.same(want, t)
    assert.equal(rot, t.list[7].rot)
    assert.equal(pos, t.list[7].pos)
    assert.are_not.equal(t.list[2].rot, t.list[2].big)
  end)

  it("trims a refilled quaternion to 4 elements, so the result encodes again", function ()
    for _, name in ipairs { "L", "LG" } do
      local b = s:encode(name, v)
      local rot = { 9, 9, 9, 9, 9, 9 }
      local t = { list = { [7] = { rot = rot } } }
      s:decode(name, b, { into = t })
      assert.equal(rot, t.list[7].rot)
      assert.equal(4, #rot)
      assert.same(s:decode(name, b), t)
      assert.equal(b, s:encode(name, t))
    end
  end)

  it("refuses a code not in canonical form and max_values as the general walk", function ()
    local w = bitwire.writer()
    w:bits(1, 2)  -- the index encoding: one slot, 4
    w:bits(1, 4); w:bits(3, 4)
    w:bits(5, 3); w:bits(7, 8); w:bits(1, 2)
    w:bits(0, 2); w:bits(511, 9); w:bits(511, 9); w:bits(511, 9)
    w:bits(0, 64); w:bits(0, 32)
    local bad = w:tostring()
    local r, msg, code = s:decode("L", bad)
    assert.is_nil(r)
    assert.equal("range", code)
    assert.equal("list[4].rot: quaternion code not in canonical form (bit 23)", msg)
    assert.equal(msg, select(2, s:decode("LG", bad)))
    assert.equal(msg, select(2, s:decode("L", bad, { into = { list = { [4] = { rot = {} } } } })))
    local b = s:encode("L", v)
    local ok = 0
    for m = 1, 60 do
      local rf, mf = s:decode("L", b, { max_values = m })
      local rg, mg = s:decode("LG", b, { max_values = m })
      local ri, mi = s:decode("L", b, { max_values = m, into = {} })
      assert.equal(mg, mf)
      assert.equal(mg, mi)
      assert.equal(rg == nil, rf == nil)
      assert.equal(rg == nil, ri == nil)
      if rf and ok == 0 then ok = m end
    end
    -- root, sparse, 2 x (slot, C, pos, rot, big)
    assert.equal(2 + 1 + 2 * (1 + 6 + 3 + 5 + 5), ok)
  end)
end)

describe("schema:decode of records of optional scalars", function ()
  local s = bitwire.schema {
    O = { { "a", "int", min = 0, max = 5, optional = true },
          { "b", "float", min = 0, max = 1, res = 0.01, optional = true },
          { "c", "bool" }, { "d", "enum", values = { "x", "y", "z" }, optional = true } },
    L = { { "list", "array", of = "O", max = 4 } },
  }

  it("decodes what came, fresh and into", function ()
    local v = { list = { { a = 5, c = true }, { b = 0.5, c = false, d = "z" }, { c = true } } }
    local b = s:encode("L", v)
    assert.same(v, s:decode("L", b))
    local t = { list = { { a = 1, b = 1, c = false, d = "x" } } }
    s:decode("L", b, { into = t })
    assert.same(v, t)
  end)

  it("fails as the general walk does, at the same field and bit", function ()
    local cases = {}
    local w = bitwire.writer()   -- a = 7: out of range
    w:bits(1, 3); w:bits(1, 1); w:bits(7, 3)
    cases[#cases + 1] = { w:tostring(), "range", "^list%[1%]%.a: .*%(bit 4%)$" }
    w = bitwire.writer()         -- d = 3: not a value
    w:bits(1, 3); w:bits(0, 2); w:bits(1, 1); w:bits(1, 1); w:bits(3, 2)
    cases[#cases + 1] = { w:tostring(), "range", "^list%[1%]%.d: .*%(bit 7%)$" }
    w = bitwire.writer()         -- cut in b
    w:bits(1, 3); w:bits(2, 2); w:bits(0, 3)
    cases[#cases + 1] = { w:tostring(), "truncated", "^list%[1%]%.b: " }
    for _, case in ipairs(cases) do
      local r, msg, code = s:decode("L", case[1])
      assert.is_nil(r)
      assert.equal(case[2], code)
      assert.matches(case[3], msg)
      local r2, msg2, code2 = s:decode("L", case[1], { into = { list = { {} } } })
      assert.is_nil(r2)
      assert.same({ msg, code }, { msg2, code2 })
    end
  end)
end)

describe("schema:decode max_values", function ()
  local s = bitwire.schema {
    Bit = { { "b", "bool" } },
    Many = { { "items", "array", of = "Bit", max = 1 << 20 } },
    Deep = { { "list", "array", of = { "array", of = "bool", max = 8 }, max = 100 } },
  }

  local function packet (n)
    local items = {}
    for i = 1, n do items[i] = { b = i % 2 == 0 } end
    return s:encode("Many", { items = items }), items
  end

  it("decodes up to the limit and refuses past it", function ()
    local bytes, items = packet(1000)
    -- the root and its field, the array and its 1000 elements, 1000
    -- records and their fields
    local v = assert(s:decode("Many", bytes, { max_values = 3003 }))
    assert.same(items, v.items)
    local r, msg, code = s:decode("Many", bytes, { max_values = 3002 })
    assert.is_nil(r)
    assert.equal("range", code)
    assert.matches("max_values", msg)
    assert.matches("items", msg)
    assert.matches("%(bit %d+%)", msg)
  end)

  it("applies to decode into and to decode_message", function ()
    local bytes = packet(100)
    local r, msg = s:decode("Many", bytes, { max_values = 50, into = {} })
    assert.is_nil(r)
    assert.matches("max_values", msg)
    local m = s:encode_message("Many", { items = { { b = true }, { b = false } } })
    assert.is_nil((s:decode_message(m, { max_values = 8 })))
    assert.truthy(s:decode_message(m, { max_values = 9 }))
  end)

  it("applies to protocol packets, deltas and frames", function ()
    local v = { items = { { b = true }, { b = false }, { b = true } } }
    local p = bitwire.protocol(s, { id = 9, deltas = true })
    local framed = p:encode("Many", v)
    assert.is_nil((p:decode(framed, { max_values = 11 })))
    local name, got = p:decode(framed, { max_values = 12 })
    assert.equal("Many", name)
    assert.same(v, got)
    local delta = p:encode("Many", v, { baseline = got, baseline_id = 1 })
    local r, msg = p:decode(delta, { baselines = { got }, max_values = 1 })
    assert.is_nil(r)
    assert.matches("max_values", msg)
    assert.same(v, select(2, p:decode(delta, { baselines = { got } })))
    local b = s:encode("Many", v, { baseline = got })
    r, msg = s:decode("Many", b, { baseline = got, max_values = 1 })
    assert.is_nil(r)
    assert.matches("max_values", msg)
    -- what a delta keeps counts as a full decode counts it: 12
    r, msg = s:decode("Many", b, { baseline = got, max_values = 11 })
    assert.is_nil(r)
    assert.matches("max_values", msg)
    assert.is_nil((p:decode(delta, { baselines = { got }, max_values = 11 })))
    assert.same(v, s:decode("Many", b, { baseline = got, max_values = 12 }))
    assert.same(v, select(2, p:decode(delta, { baselines = { got }, max_values = 12 })))
  end)

  it("counts what a delta keeps as the full decode of its result counts it", function ()
    local k = bitwire.schema {
      P = { { "n", "int", min = 0, max = 9 }, { "q", "quat", bits = 9 },
            { "tags", "array", of = { "int", min = 0, max = 9 }, max = 4 },
            { "s", "sparse", of = "Bit", max = 8, encoding = "mask" } },
      Bit = { { "b", "bool" } },
      W = { { "t", "int", min = 0, max = 9 }, { "ps", "array", of = "P", max = 8 },
            { "by", "sparse", of = "P", max = 16, encoding = "index" }, { "last", "P" } },
    }
    local function pv (i)
      return { n = i % 10, q = { 0, 0, 0, 1 }, tags = { 1, i % 10 },
               s = { [2] = { b = true }, [i % 8 + 1] = { b = false } } }
    end
    local base = { t = 1, ps = { pv(1), pv(2), pv(3) }, by = { [3] = pv(4), [9] = pv(5) },
                   last = pv(6) }
    local v = H.copy(base)
    v.t = 2
    v.ps[2].n = 7
    v.by[9].tags[2] = 3
    v.by[3] = nil  -- a removed slot makes nothing
    v.last.s[7] = nil
    -- the least max_values a decode takes
    local function least (f)
      local lo, hi = 0, 4096
      while lo < hi do
        local m = (lo + hi) // 2
        if f(m) then hi = m else lo = m + 1 end
      end
      return lo
    end
    local full = k:encode("W", v)
    local want = least(function (m) return k:decode("W", full, { max_values = m }) ~= nil end)
    assert.is_true(want > 50)
    local d = k:encode("W", v, { baseline = base })
    for _, bl in ipairs {
      k:decode("W", k:encode("W", base)),  -- trusted: kept from its tape
      H.copy(k:decode("W", k:encode("W", base))),  -- foreign: checked and recoded
    } do
      assert.equal(want, least(function (m)
        return k:decode("W", d, { baseline = bl, max_values = m }) ~= nil
      end))
      local r, msg, code = k:decode("W", d, { baseline = bl, max_values = want - 1 })
      assert.is_nil(r)
      assert.equal("range", code)
      assert.matches("max_values", msg)
    end
  end)

  it("counts nested arrays", function ()
    local v = { list = { { true, false }, { true }, {} } }
    local b = s:encode("Deep", v)
    -- root 1 + 1, list 1 + 3, inner arrays 1 + 2, 1 + 1, 1 + 0
    assert.same(v, s:decode("Deep", b, { max_values = 12 }))
    assert.is_nil((s:decode("Deep", b, { max_values = 11 })))
  end)

  it("has a default that bounds a 1 MiB packet of 1-bit records", function ()
    assert.equal(1 << 20, bitwire.MAX_VALUES)
    local bytes = packet(600000)
    local r, msg, code = s:decode("Many", bytes)
    assert.is_nil(r)
    assert.equal("range", code)
    assert.matches("max_values", msg)
    assert.truthy(s:decode("Many", bytes, { max_values = 3 * 600000 + 3 }))
  end)

  it("refuses a bad limit", function ()
    assert.has_error(function () s:decode("Many", "", { max_values = -1 }) end)
    assert.has_error(function () s:decode("Many", "", { max_values = 0.5 }) end)
  end)
end)
