-- spec/12-compiler_spec.lua - the one compiler in core/ (core/bw_compile.c):
-- rules it owns and the paths in its errors, message ids, strict encode,
-- clamped integers, the bounds on what a description may cost, and diff
-- reading compiled programs.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local errorof, contains = H.errorof, H.contains

describe("the compiler", function ()
  it("refuses a named align or check, so decode and encode agree", function ()
    -- a named align used to compile, then every decode segfaulted
    contains('bitwire.schema: T.pad: align takes no name: write { "align" }',
      errorof(bitwire.schema, { T = { { "pad", "align" }, { "x", "bool" } } }))
    contains('bitwire.schema: T.c: check takes no name',
      errorof(bitwire.schema, { T = { { "c", "check", magic = 1 } } }))
    local s = bitwire.schema { T = { { "align" }, { "x", "bool" } } }
    assert.same({ x = true }, s:decode("T", "\1"))
    assert.equal("\1", s:encode("T", { x = true }))
    contains("align cannot be an element",
      errorof(bitwire.schema, { T = { { "xs", "array", of = "align", max = 2 } } }))
  end)

  it("takes a float of an integer's value where an integer goes, as Lua does", function ()
    local floats = bitwire.schema {
      T = { { "x", "int", min = -2^7, max = 2^8 - 1, default = 3.0 },
            { "u", "uint", bits = 2^3 },
            { "t", "tiered", tiers = { 2.0, 4 }, min = 0, max = 1.6e1 },
            { "xs", "array", of = "bool", max = 1e1 } },
      messages = { "T" }, message_bits = 4.0 }
    local ints = bitwire.schema {
      T = { { "x", "int", min = -128, max = 255, default = 3 },
            { "u", "uint", bits = 8 },
            { "t", "tiered", tiers = { 2, 4 }, min = 0, max = 16 },
            { "xs", "array", of = "bool", max = 10 } },
      messages = { "T" }, message_bits = 4 }
    assert.equal(ints:fingerprint(), floats:fingerprint())
    local v = floats:decode("T", floats:encode("T", { u = 1, t = 2, xs = {} }))
    assert.equal("integer", math.type(v.x))
    assert.equal(3, v.x)
    -- a fraction, or a float no integer equals, is still no integer
    contains("T.x: 'max' must be an integer, got 2.5",
      errorof(bitwire.schema, { T = { { "x", "int", min = 0, max = 2.5 } } }))
    contains("T.x: 'max' must be an integer, got 9.2233720368548e+18",
      errorof(bitwire.schema, { T = { { "x", "int", min = 0, max = 2^63 } } }))
    contains("T.t: tier 1: width must be an integer",
      errorof(bitwire.schema, { T = { { "t", "tiered", tiers = { 0.5 }, min = 0, max = 1 } } }))
    contains("T.x: default 1.5 does not fit the field", errorof(bitwire.schema,
      { T = { { "x", "int", min = 0, max = 9, default = 1.5 } } }))
  end)

  it("keeps a tiered max from overflowing past math.maxinteger", function ()
    local s = bitwire.schema { T = { { "t", "tiered", tiers = { 8 }, min = math.maxinteger } } }
    local f = s:program().byname.T.fields[1]
    assert.equal(math.maxinteger, f.min)
    assert.equal(math.maxinteger, f.max)
    local v = s:decode("T", s:encode("T", { t = math.maxinteger }))
    assert.equal(math.maxinteger, v.t)
    assert.equal(s:encode("T", v), s:encode("T", { t = math.maxinteger }))
    contains("T.t: max 5 beyond what the tiers cover",
      errorof(bitwire.schema, { T = { { "t", "tiered", tiers = { 1 }, min = 0, max = 5 } } }))
  end)

  it("sizes a tiered field by the tiers its max lets a value reach", function ()
    -- max 255 keeps every value in the first tier (9 bits); the sizes used
    -- to count the 12-bit tiers past it, and the decoder refused an array
    -- of three as needing 48 bits (found by fuzz_schema)
    local s = bitwire.schema { A = { { "f1", "array", max = 255,
      of = { "tiered", max = 255, tiers = { 21, 20, 30, 12, 22, 14, 12 } } } } }
    local el = s:program().byname.A.fields[1].of
    assert.equal(9, el.minbits)
    assert.equal(9, el.maxbits)
    local v = { f1 = { 0, 255, 7 } }
    assert.same(v, s:decode("A", s:encode("A", v)))
  end)

  it("says how many tiers each kind takes, with the field's path", function ()
    local sixteen = {}
    for i = 1, 16 do sixteen[i] = 3 end
    assert.truthy(bitwire.schema { T = { { "t", "tiered", tiers = sixteen } } })
    -- 16 tiers used to pass the Lua checks and fail in C without a path
    contains("bitwire.schema: T.s: 'tiers' must be a list of 1 to 15 bit widths",
      errorof(bitwire.schema, { T = { { "s", "sparse", of = "bool", max = 9, tiers = sixteen } } }))
    contains("bitwire.schema: U.s: 'tiers' must be a list of 1 to 15",
      errorof(bitwire.schema, { T = { { "xs", "array", max = 2, of = "U" } },
        U = { { "s", "sparse", of = "bool", max = 9, tiers = sixteen } } }))
    contains("bitwire.schema: T.xs[]: 'tiers' must be a list of 1 to 15",
      errorof(bitwire.schema, { T = { { "xs", "array", max = 2,
        of = { "sparse", of = "bool", max = 9, tiers = sixteen } } } }))
  end)

  it("refuses zero-bit records nested as a tree, which decode from nothing", function ()
    local function tree (n)
      local d = {}
      for i = 1, n do
        local next = i < n and string.format("T%02d", i + 1)
        d[string.format("T%02d", i)] = next and { { "a", next }, { "b", next } }
          or { { "v", "int", min = 7, max = 7 } }
      end
      return d
    end
    local s = bitwire.schema(tree(10))   -- 2^9 tables from no bits: allowed
    assert.equal(0, s:maxbits("T01"))
    contains("takes no bits makes", errorof(bitwire.schema, tree(21)))
    contains("T.xs: 100000 elements that take no bits make",
      errorof(bitwire.schema, { T = { { "xs", "array", max = 100000,
        of = { "int", min = 1, max = 1 } } } }))
    assert.truthy(bitwire.schema { T = { { "xs", "array", max = 1000,
      of = { "int", min = 1, max = 1 } } } })
  end)

  it("bounds what takes no bits at 65536 values, exactly as SECURITY.md says", function ()
    local one = { "int", min = 1, max = 1 }
    local function record (n)  -- the record's table and n fields
      local t = {}
      for i = 1, n do t[i] = { "f" .. i, "int", min = 0, max = 0 } end
      return { T = t }
    end
    assert.truthy(bitwire.schema(record(65535)))
    contains("T: a value that takes no bits makes 65537 values (more than 65536)",
      errorof(bitwire.schema, record(65536)))
    for _, kind in ipairs { "array", "sparse" } do
      assert.truthy(bitwire.schema { T = { { "xs", kind, max = 65536, of = one } } })
      contains("T.xs: 65537 elements that take no bits make 65537 values",
        errorof(bitwire.schema, { T = { { "xs", kind, max = 65537, of = one } } }))
    end
  end)

  it("bounds the fields of a description, shared tables counted each time", function ()
    local fields = {}
    for i = 1, 1000 do fields[i] = { "f" .. i, "bool" } end
    local d = {}
    for i = 1, 4000 do d[string.format("T%04d", i)] = fields end
    contains("more than 100000 fields and enum values in all",
      errorof(bitwire.schema, d))
    local values = {}
    for i = 1, 100001 do values[i] = "v" .. i end
    contains("T.e: more than 100000 fields",
      errorof(bitwire.schema, { T = { { "e", "enum", values = values } } }))
  end)

  it("bounds the codes it tries for relative floats, each quantizer once", function ()
    -- 65,537 codes each that no error bound clears: tried one by one
    local function rel (name, min)
      return { name, "float", min = min, max = min + 655.36, res = 0.01, delta = "relative" }
    end
    local same = {}
    for i = 1, 2000 do same[i] = rel("f" .. i, 50000) end  -- one quantizer
    assert.is_not_nil(bitwire.schema { T = same })
    local distinct = {}
    for i = 1, 300 do distinct[i] = rel("f" .. i, 50000 + i) end
    contains("T.f256: relative floats of too many distinct ranges to check (more than 16777216",
      errorof(bitwire.schema, { T = distinct }))
  end)

  it("compiles angles and relative deltas into the program", function ()
    local s = bitwire.schema { T = {
      { "yaw", "angle", bits = 10 },
      { "deg", "angle", bits = 8, unit = "deg", delta = "relative", tiers = { 2, 4 } },
      { "x", "float", min = 0, max = 1, res = 0.01, delta = "relative" },
    } }
    local f = s:program().byname.T.fields
    assert.equal(2 * math.pi, f[1].period)
    assert.equal("rad", f[1].unit)
    assert.equal(10, f[1].bits)
    assert.equal(360, f[2].period)
    assert.is_true(f[2].relative)
    assert.same({ 2, 4 }, f[2].tiers)
    assert.is_true(f[3].relative)
    assert.same(s:program().relative_tiers, f[3].tiers)
    assert.is_true(#f[3].tiers >= 1)
    for _, c in ipairs {
      { { "a", "angle" }, "'bits' must be an integer, got nothing" },
      { { "a", "angle", bits = 33 }, "'bits' = 33 outside [1, 32]" },
      { { "a", "angle", bits = 8, default = 0 / 0 }, "does not fit the field" },
      { { "a", "angle", bits = 8, min = 0 }, "unknown option 'min' for type angle" },
      { { "x", "float", min = 0, max = 1, res = 0.1, delta = "absolute" },
        "'delta' must be \"relative\"" },
      { { "x", "float", min = 0, max = 1, res = 0.1, tiers = { 3 } },
        "'tiers' needs delta = \"relative\"" },
      { { "x", "int", min = 0, max = 1, delta = "relative" }, "unknown option 'delta'" },
      { { "x", "quat", bits = 23, delta = "relative" }, "bits <= 22" },
      { { "x", "angle", bits = 8, delta = "relative", tiers = { 40 } }, "tier 1" },
    } do
      contains("bitwire.schema: T." .. c[1][1] .. ": " , errorof(bitwire.schema, { T = { c[1] } }))
      contains(c[2], errorof(bitwire.schema, { T = { c[1] } }))
    end
  end)

  it("keeps the description it compiled, as plain data", function ()
    local d = { options = { strict = true }, messages = { "B" },
      A = { { "x", "bool" } }, B = { { "a", "A" } } }
    local s = bitwire.schema(d)
    d.A[1][2] = "int"   -- the caller's table changes; the schema's does not
    assert.same({ { "x", "bool" } }, s:description().A)
    local again = bitwire.schema(s:description())
    assert.equal(s:fingerprint(), again:fingerprint())
    assert.is_true(again:program().strict)
    -- each call's is a copy: what one caller does to it, the next never sees
    local mine = s:description()
    mine.A[1][2], mine.C = "int", { { "y", "bool" } }
    assert.same({ { "x", "bool" } }, s:description().A)
    assert.is_nil(s:description().C)
    assert.is_true(bitwire.diff(s:description(), s):empty())
  end)
end)

describe("message ids", function ()
  local listed = {
    messages = { "ConnectRequest", "Input", "Snapshot", "Chat" },
    ConnectRequest = { { "version", "uint", bits = 8 } },
    Input = { { "buttons", "uint", bits = 4 } },
    Snapshot = { { "tick", "uint", bits = 16 }, { "aim", "Aim" } },
    Chat = { { "text", "string", max = 32 } },
    Aim = { { "yaw", "float", min = 0, max = 1, res = 0.01 } },
  }

  it("number the listed types in list order; others are not messages", function ()
    local s = bitwire.schema(listed)
    local p = s:program()
    assert.same(listed.messages, p.messages)
    assert.equal(2, p.typebits)
    assert.equal(1, p.byname.Input.message_id)
    assert.equal(3, p.byname.Chat.message_id)
    assert.is_nil(p.byname.Aim.message_id)
    local bytes = s:encode_message("Chat", { text = "hi" })
    assert.equal(3, bitwire.reader(bytes):bits(2))
    local name, v = s:decode_message(bytes)
    assert.equal("Chat", name)
    assert.same({ text = "hi" }, v)
    contains("'Aim' is not a message", errorof(s.encode_message, s, "Aim", { yaw = 0 }))
  end)

  it("leave every id alone when a helper type is added", function ()
    local a = bitwire.schema(listed)
    local d = {}
    for k, v in pairs(listed) do d[k] = v end
    d.AAAHelper = { { "z", "bool" } }
    d.Snapshot = { { "tick", "uint", bits = 16 }, { "aim", "Aim" } }
    local b = bitwire.schema(d)
    assert.equal(a:encode_message("Input", { buttons = 5 }),
      b:encode_message("Input", { buttons = 5 }))
    -- without a list the sorted names number the types: AAAHelper moves them
    local c, e = {}, {}
    for k, v in pairs(listed) do if k ~= "messages" then c[k] = v; e[k] = v end end
    e.AAAHelper = d.AAAHelper
    assert.are_not.equal(bitwire.schema(c):encode_message("Input", { buttons = 5 }),
      bitwire.schema(e):encode_message("Input", { buttons = 5 }))
  end)

  it("take message_bits as the width, and the fingerprint covers both", function ()
    local d = {}
    for k, v in pairs(listed) do d[k] = v end
    d.message_bits = 8
    local s = bitwire.schema(d)
    assert.equal(8, s:program().typebits)
    assert.equal(8 + 8, s:bits("ConnectRequest", { version = 1 }) + 8)
    assert.are_not.equal(bitwire.schema(listed):fingerprint(), s:fingerprint())
    d.messages = { "Input", "ConnectRequest", "Snapshot", "Chat" }
    assert.are_not.equal(bitwire.schema(listed):fingerprint(), bitwire.schema(d):fingerprint())
    d.message_bits = 1
    contains("message_bits 1 cannot number 4 messages", errorof(bitwire.schema, d))
    d.message_bits, d.messages = nil, { "Input", "Nope" }
    contains("messages[2]: unknown type 'Nope'", errorof(bitwire.schema, d))
    d.messages = { "Input", "Input" }
    contains("messages: 'Input' listed twice", errorof(bitwire.schema, d))
  end)

  it("decode refuses an id past the list as tag, and frames use the ids", function ()
    local s = bitwire.schema(listed)
    local d = {}
    for k, v in pairs(listed) do d[k] = v end
    d.messages = { "Input", "Chat", "Snapshot" }
    local three = bitwire.schema(d)   -- 2 bits, ids 0..2
    local v, err, code = three:decode_message(bitwire.writer():bits(3, 2):tostring())
    assert.is_nil(v)
    assert.equal("tag", code, err)
    local pkt = s:frame_encode(7, true, "Chat", { text = "yo" }, true)
    local name, got = s:frame_decode(pkt, 7, true, nil, true)
    assert.equal("Chat", name)
    assert.same({ text = "yo" }, got)
  end)
end)

describe("strict encode", function ()
  local desc = {
    P = { { "x", "int", min = 0, max = 9 } },
    T = { { "p", "P" }, { "ps", "array", of = "P", max = 3 }, { "n", "bool", optional = true } },
  }

  it("raises on keys the type does not declare, naming path and key", function ()
    local s = bitwire.schema(desc)
    local v = { p = { x = 1 }, ps = { { x = 1 }, { x = 2, y = 3 } } }
    assert.truthy(s:encode("T", v))   -- off by default
    contains("ps[2]: unknown key 'y' (strict: P declares no such field)",
      errorof(s.encode, s, "T", v, { strict = true }))
    contains("unknown key 'hp'", errorof(s.encode, s, "T",
      { p = { x = 1 }, ps = {}, hp = 1 }, { strict = true }))
    contains("unknown key 1", errorof(s.encode, s, "T",
      { p = { x = 1 }, ps = {}, [1] = true }, { strict = true }))
    -- a declared optional field left out is fine
    assert.truthy(s:encode("T", { p = { x = 1 }, ps = {} }, { strict = true }))
  end)

  it("names every unknown key of the record, sorted, so one run shows them all", function ()
    local s = bitwire.schema(desc)
    contains("p: unknown keys 'w', 'y', 'z' (strict: P declares no such fields)",
      errorof(s.encode, s, "T", { p = { x = 1, z = 1, y = 2, w = 3 }, ps = {} }, { strict = true }))
    contains("unknown keys 'hp', 'mp', 1 (strict: T declares no such fields)",
      errorof(s.encode, s, "T", { p = { x = 1 }, ps = {}, mp = 1, hp = 1, [1] = 0 }, { strict = true }))
    local p = { x = 1 }
    for i = 1, 30 do p[("k%02d"):format(i)] = i end
    contains("p: unknown keys 'k01', 'k02', 'k03', 'k04', 'k05', 'k06', 'k07', 'k08' and 22 more",
      errorof(s.encode, s, "T", { p = p, ps = {} }, { strict = true }))
  end)

  it("checks a sparse slot a delta keeps as its full encode does, in both walks", function ()
    for _, enc in ipairs { "mask", "index", "relative", "auto" } do
      local s = bitwire.schema({
        S = { { "sp", "sparse", of = "E", max = 8, encoding = enc },
              { "arr", "array", of = "E", max = 4 } },
        E = { { "hp", "int", min = 0, max = 100 }, { "n", "N" } },
        N = { { "k", "bool" } } }, { strict = true })
      local function base () return { sp = { [3] = { hp = 1, n = { k = true } } },
                                       arr = { { hp = 1, n = { k = true } } } } end
      local b = base()
      local poisoned = base()  -- no value of S: the walk over tables
      poisoned.arr[1].hp = "bad"
      for _, bad in ipairs { { "hq", "sp[3]: unknown key 'hq'" }, { "z", "sp[3].n: unknown key 'z'" } } do
        local v = base()
        if bad[1] == "hq" then v.sp[3].hq = 1 else v.sp[3].n.z = 1 end
        contains(bad[2], errorof(s.encode, s, "S", v))
        local tape = errorof(s.encode, s, "S", v, { baseline = b })
        contains(bad[2], tape)
        assert.equal(tape, errorof(s.encode, s, "S", v, { baseline = poisoned }), enc)
      end
      -- a slot's record shared with the baseline is checked too: the
      -- baseline may never have gone strict (hand-built)
      local v = base()
      b.sp[3].n.z = 1
      v.sp[3].n = b.sp[3].n
      poisoned.sp[3].n = b.sp[3].n
      local tape = errorof(s.encode, s, "S", v, { baseline = b })
      contains("sp[3].n: unknown key 'z'", tape)
      assert.equal(tape, errorof(s.encode, s, "S", v, { baseline = poisoned }), enc)
      assert.truthy(s:encode("S", v, { baseline = b, strict = false }))
    end
  end)

  it("checks tables a delta shares with a baseline that never went strict", function ()
    -- a hand-built baseline sharing a record with the value: kept by the
    -- delta, yet checked as the full encode checks it, in both walks
    local s = bitwire.schema({ E = { { "hp", "int", min = 0, max = 100 } },
      Snap = { { "tick", "uint", bits = 8 }, { "r", "E" }, { "arr", "array", of = "E", max = 4 },
               { "sp", "sparse", of = "E", max = 4 } } }, { strict = true })
    for _, where in ipairs { "r", "arr[1]", "sp[2]" } do
      local junk = { hp = 1, junk = true }
      local function snap (tick)
        return { tick = tick, r = where == "r" and junk or { hp = 1 },
                 arr = { where == "arr[1]" and junk or { hp = 1 } },
                 sp = { [2] = where == "sp[2]" and junk or { hp = 1 } } }
      end
      local v, base = snap(2), snap(1)
      local poisoned = snap(1)  -- no value of Snap: the walk over tables
      poisoned.tick = "x"
      local want = where .. ": unknown key 'junk'"
      contains(want, errorof(s.encode, s, "Snap", v))
      local tape = errorof(s.encode, s, "Snap", v, { baseline = base })
      contains(want, tape)
      assert.equal(tape, errorof(s.encode, s, "Snap", v, { baseline = poisoned }), where)
      assert.truthy(s:encode("Snap", v, { baseline = base, strict = false }))
    end
    -- a shared element after a changed one: the same bit in both walks
    local shared = { hp = 3, junk = 1 }
    local a = { tick = 1, r = { hp = 1 }, arr = { { hp = 3 }, shared }, sp = {} }
    local b = { tick = 2, r = { hp = 1 }, arr = { { hp = 4 }, shared }, sp = {} }
    local tape = errorof(s.encode, s, "Snap", b, { baseline = a })
    contains("arr[2]: unknown key 'junk'", tape)
    assert.equal(tape, errorof(s.encode, s, "Snap", b,
      { baseline = { tick = "x", r = a.r, arr = a.arr, sp = a.sp } }))
  end)

  it("is a schema option too, which a call can turn off", function ()
    local s = bitwire.schema(desc, { strict = true })
    local v = { p = { x = 1, z = 0 }, ps = {} }
    contains("p: unknown key 'z'", errorof(s.encode, s, "T", v))
    contains("p: unknown key 'z'", errorof(s.encode_message, s, "T", v))
    assert.truthy(s:encode("T", v, { strict = false }))
    local d = { options = { strict = true } }
    for k, t in pairs(desc) do d[k] = t end
    local s2 = bitwire.schema(d)
    contains("p: unknown key 'z'", errorof(s2.encode, s2, "T", v))
    contains("unknown schema option 'strikt'",
      errorof(bitwire.schema, desc, { strikt = true }))
    contains("'strict' must be a boolean", errorof(bitwire.schema, desc, { strict = 1 }))
  end)

  it("checks the records of a delta too", function ()
    local s = bitwire.schema(desc, { strict = true })
    local base = { p = { x = 1 }, ps = {} }
    contains("p: unknown key 'q'", errorof(s.encode, s, "T",
      { p = { x = 2, q = 1 }, ps = {} }, { baseline = base }))
  end)
end)

describe("clamped integers", function ()
  it("send the nearest end instead of raising", function ()
    local s = bitwire.schema { T = { { "hp", "int", min = 0, max = 100, clamp = true },
      { "d", "int", min = -5, max = 5 } } }
    assert.equal(100, s:decode("T", s:encode("T", { hp = 500, d = 0 })).hp)
    assert.equal(0, s:decode("T", s:encode("T", { hp = -3, d = 0 })).hp)
    contains("d: 6 out of range", errorof(s.encode, s, "T", { hp = 1, d = 6 }))
    contains("'clamp' must be a boolean",
      errorof(bitwire.schema, { T = { { "hp", "int", min = 0, max = 1, clamp = 1 } } }))
  end)
end)

describe("bitwire.diff on compiled programs", function ()
  it("says a float bound that quantizes the same leaves the wire", function ()
    -- max 1 and 1.00000001 are the same float32 steps: same fingerprint,
    -- and diff used to call it a wire change
    local a = bitwire.schema { T = { { "x", "float", min = 0, max = 1, res = 0.01 } } }
    local b = bitwire.schema { T = { { "x", "float", min = 0, max = 1.00000001, res = 0.01 } } }
    assert.equal(a:fingerprint(), b:fingerprint())
    local r = bitwire.diff(a, b)
    assert.is_false(r.wire)
    assert.equal(1, #r.changes)
    assert.same({ "max" }, r.changes[1].what)
    assert.is_false(r.changes[1].wire)
  end)

  it("sees sparse tiers and clamp for what they are", function ()
    local function sp (tiers, clamp)
      return bitwire.schema { T = { { "s", "sparse", of = "bool", max = 50, tiers = tiers },
        { "f", "float", min = 0, max = 1, res = 0.1, clamp = clamp } } }
    end
    local r = bitwire.diff(sp({ 2, 4 }), sp({ 2, 5 }))
    assert.is_true(r.wire)
    assert.is_true(r.changes[1].wire)
    r = bitwire.diff(sp({ 2, 4 }), sp({ 2, 4 }, true))
    assert.is_false(r.wire)
    assert.same({ "clamp" }, r.changes[1].what)
  end)

  it("names relative deltas and angle units in its text", function ()
    local r = bitwire.diff(bitwire.schema { T = { { "x", "quat", bits = 9 } } },
      bitwire.schema { T = { { "x", "quat", bits = 9, delta = "relative" } } })
    assert.same({ "relative" }, r.changes[1].what)
    assert.equal("T: ~ x quat 9 bits -> 9 bits delta relative", r:text())
    r = bitwire.diff(
      bitwire.schema { T = { { "x", "angle", bits = 8, delta = "relative" } } },
      bitwire.schema { T = { { "x", "angle", bits = 8, delta = "relative", tiers = { 2 } } } })
    assert.same({ "tiers" }, r.changes[1].what)
    assert.equal("T: ~ x angle 8 bits rad delta relative -> 8 bits rad delta relative tiers {2}",
      r:text())
  end)

  it("agrees with the fingerprint on every case it reports", function ()
    local cases = {
      { { "x", "int", min = 0, max = 9 }, { "x", "int", min = 0, max = 9, default = 3 } },
      { { "x", "enum", values = { "a", "b" } }, { "x", "enum", values = { "c", "d" } } },
      { { "x", "angle", bits = 8 }, { "x", "angle", bits = 8, unit = "deg" } },
      { { "x", "quat", bits = 9 }, { "x", "quat", bits = 9, delta = "relative" } },
      { { "x", "uint", bits = 4 }, { "x", "uint", bits = 4, optional = true } },
    }
    for i, c in ipairs(cases) do
      local a, b = bitwire.schema { T = { c[1] } }, bitwire.schema { T = { c[2] } }
      local r = bitwire.diff(a, b)
      assert.equal(a:fingerprint() ~= b:fingerprint(), r.wire, "case " .. i)
      local any = false
      for _, ch in ipairs(r.changes) do any = any or ch.wire end
      assert.equal(r.wire, any, "case " .. i)
    end
  end)

  it("names a messages list or message_bits that keeps every id, which the fingerprint covers", function ()
    local plain = { A = { { "x", "int", min = 0, max = 3 } }, B = { { "y", "bool" } } }
    local listed = { messages = { "A", "B" }, A = plain.A, B = plain.B }
    local width = { message_bits = 1, A = plain.A, B = plain.B }
    for _, pair in ipairs { { plain, listed }, { listed, plain }, { plain, width } } do
      local a, b = bitwire.schema(pair[1]), bitwire.schema(pair[2])
      assert.are_not.equal(a:fingerprint(), b:fingerprint())
      local r = bitwire.diff(a, b)
      assert.is_true(r.wire)
      assert.is_false(r:empty())
      assert.equal(1, #r.changes)
      assert.equal("ids_listed", r.changes[1].op)
      assert.is_true(r.changes[1].wire)
      assert.matches("message ids", r:text())
    end
    -- a list and the width that number the same ids alike: no change
    assert.is_true(bitwire.diff(bitwire.schema(listed), bitwire.schema(width)):empty())
  end)
end)
