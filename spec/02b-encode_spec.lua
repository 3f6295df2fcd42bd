-- schema:encode: the exact wire bits of every field kind, computed by hand
-- from DESIGN.md's wire format and written through the stream API, and the
-- errors of a value that does not fit.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local snapshot_schema, entity = H.snapshot_schema, H.entity
local tohex, errorof, contains = H.tohex, H.errorof, H.contains

------------------------------------------------------------------------------
-- Wire cases: one field (or a few) per case, the value, the bytes computed
-- by hand from DESIGN.md's wire format, the same bits written through the
-- stream API, and the decoded value when quantization changes it.
------------------------------------------------------------------------------
local MIN, MAX = math.mininteger, math.maxinteger
local WIRE = {
  { "int -37 in [-100, 100] is 63 in 8 bits",
    { { "x", "int", min = -100, max = 100 } }, { x = -37 }, "3f",
    function (w) w:int(-37, -100, 100) end },
  { "int in [1000, 1003] sends the offset in 2 bits",
    { { "x", "int", min = 1000, max = 1003 } }, { x = 1002 }, "02",
    function (w) w:int(1002, 1000, 1003) end },
  { "int with min == max takes no bits",
    { { "x", "int", min = 7, max = 7 } }, { x = 7 }, "",
    function () end },
  { "int over the full 64-bit range sends value - min in 64 bits",
    { { "x", "int", min = MIN, max = MAX } }, { x = 0 }, "0000000000000080",
    function (w) w:int(0, MIN, MAX) end },
  { "int at the bottom of the full 64-bit range is all zeros",
    { { "x", "int", min = MIN, max = MAX } }, { x = MIN }, "0000000000000000",
    function (w) w:int(MIN, MIN, MAX) end },
  { "uint of 12 bits is little-endian",
    { { "x", "uint", bits = 12 } }, { x = 0xABC }, "bc0a",
    function (w) w:bits(0xABC, 12) end },
  { "uint of 64 bits carries -1 as all ones",
    { { "x", "uint", bits = 64 } }, { x = -1 }, "ffffffffffffffff",
    function (w) w:bits(-1, 64) end },
  { "bool true is one bit",
    { { "x", "bool" } }, { x = true }, "01",
    function (w) w:bool(true) end },
  { "bools pack LSB first",
    { { "a", "bool" }, { "b", "bool" }, { "c", "bool" } },
    { a = true, b = false, c = true }, "05",
    function (w) w:bool(true) w:bool(false) w:bool(true) end },
  { "float32 is raw IEEE-754",
    { { "x", "float32" } }, { x = 1.0 }, "0000803f",
    function (w) w:float(1.0) end },
  { "float64 is raw IEEE-754",
    { { "x", "float64" } }, { x = 1.0 }, "000000000000f03f",
    function (w) w:double(1.0) end },
  { "enum sends the index in bits_required(0, #values - 1)",
    { { "x", "enum", values = { "a", "b", "c" } } }, { x = "c" }, "02",
    function (w) w:int(2, 0, 2) end },
  { "string sends its length, aligns, then the bytes",
    { { "x", "string", max = 10 } }, { x = "hi" }, "026869",
    function (w) w:string("hi", 10) end },
  { "empty string is only its length",
    { { "x", "string", max = 10 } }, { x = "" }, "00",
    function (w) w:string("", 10) end },
  { "bytes with max send int(#s, 0, max), align, bytes",
    { { "x", "bytes", max = 3 } }, { x = "\1\2" }, "020102",
    function (w) w:int(2, 0, 3) w:bytes("\1\2") end },
  { "bytes with min and max send int(#s, min, max)",
    { { "x", "bytes", min = 2, max = 5 } }, { x = "\1\2\3" }, "01010203",
    function (w) w:int(3, 2, 5) w:bytes("\1\2\3") end },
  { "bytes with count send no length",
    { { "b", "bool" }, { "x", "bytes", count = 2 } },
    { b = true, x = "\170\187" }, "01aabb",
    function (w) w:bool(true) w:bytes("\170\187") end },
  { "array sends its count, then the elements",
    { { "x", "array", of = { "int", min = 0, max = 9 }, max = 3 } },
    { x = { 1, 2, 3 } }, "870c",
    function (w) w:int(3, 0, 3) w:int(1, 0, 9) w:int(2, 0, 9) w:int(3, 0, 9) end },
  { "array with min sends int(count, min, max)",
    { { "x", "array", of = { "bool" }, min = 2, max = 5 } },
    { x = { true, true, false } }, "0d",
    function (w) w:int(3, 2, 5) w:bool(true) w:bool(true) w:bool(false) end },
  { "fixed array sends only its elements",
    { { "x", "array", of = { "bool" }, count = 2 } },
    { x = { false, true } }, "02",
    function (w) w:bool(false) w:bool(true) end },
  { "empty array is only its count",
    { { "x", "array", of = { "int", min = 0, max = 9 }, max = 3 } },
    { x = {} }, "00",
    function (w) w:int(0, 0, 3) end },
  { "optional absent is one zero bit",
    { { "x", "int", min = 0, max = 15, optional = true } }, {}, "00",
    function (w) w:bool(false) end },
  { "optional present is a one bit then the value",
    { { "x", "int", min = 0, max = 15, optional = true } }, { x = 5 }, "0b",
    function (w) w:bool(true) w:int(5, 0, 15) end },
  { "align pads with zeros to the next byte",
    { { "a", "bool" }, { "align" }, { "b", "bool" } },
    { a = true, b = true }, "0101",
    function (w) w:bool(true) w:align() w:bool(true) end },
  { "check aligns, then writes 0x12345678",
    { { "a", "bool" }, { "check" } }, { a = true }, "0178563412",
    function (w) w:bool(true) w:check() end },
  { "check takes its own magic",
    { { "check", magic = 0xCAFEF00D } }, {}, "0df0feca",
    function (w) w:check(0xCAFEF00D) end },
  { "float quantizes to ceil(delta / res) steps",
    { { "x", "float", min = 0, max = 1, res = 0.3 } }, { x = 0.5 }, "02",
    function (w) w:compressed_float(0.5, 0, 1, 0.3) end },
  { "float in [-512, 512] by 0.01 takes 17 bits",
    { { "x", "float", min = -512, max = 512, res = 0.01 } }, { x = 0 },
    "00c800",
    function (w) w:compressed_float(0, -512, 512, 0.01) end },
  { "float rounds to the nearest step",
    { { "x", "float", min = 0, max = 1, res = 0.25 } }, { x = 0.3 }, "01",
    function (w) w:compressed_float(0.3, 0, 1, 0.25) end, { x = 0.25 } },
  { "float with clamp clamps an out-of-range value",
    { { "x", "float", min = 0, max = 1, res = 0.25, clamp = true } },
    { x = 7 }, "04",
    function (w) w:compressed_float(1, 0, 1, 0.25) end, { x = 1.0 } },
  { "vector is a fixed array of quantized floats",
    { { "v", "vector", count = 3, min = -1, max = 1, res = 1 } },
    { v = { -1, 0, 1 } }, "24",
    function (w)
      w:compressed_float(-1, -1, 1, 1) w:compressed_float(0, -1, 1, 1)
      w:compressed_float(1, -1, 1, 1)
    end, { v = { -1.0, 0.0, 1.0 } } },
  { "default fills a missing field",
    { { "x", "int", min = 0, max = 15, default = 7 } }, {}, "07",
    function (w) w:int(7, 0, 15) end, { x = 7 } },
  { "fields go in declaration order",
    { { "b", "int", min = 0, max = 15 }, { "a", "int", min = 0, max = 15 } },
    { a = 2, b = 1 }, "21",
    function (w) w:int(1, 0, 15) w:int(2, 0, 15) end },
}

describe("schema:encode", function ()
  for _, c in ipairs(WIRE) do
    local claim, fields, value, hex, stream, decoded = table.unpack(c)
    it(claim .. " (" .. (hex == "" and "empty" or hex) .. ")", function ()
      local s = bitwire.schema { T = fields }
      assert.equal(hex, tohex(s:encode("T", value)))
    end)
    it(claim .. ": the same bytes as the stream API", function ()
      local s = bitwire.schema { T = fields }
      local w = bitwire.writer()
      stream(w)
      assert.equal(tohex(w:tostring()), tohex(s:encode("T", value)))
      assert.equal(w:bits_written(), s:bits("T", value))
    end)
    it(claim .. ": decodes back", function ()
      local s = bitwire.schema { T = fields }
      assert.same(decoded or value, s:decode("T", s:encode("T", value)))
    end)
  end

  it("puts a nested type's fields inline", function ()
    local s = bitwire.schema {
      P = { { "x", "int", min = 0, max = 15 }, { "y", "int", min = 0, max = 15 } },
      T = { { "p", "P" }, { "q", "P" } },
    }
    assert.equal("2143", tohex(s:encode("T", { p = { x = 1, y = 2 },
                                                q = { x = 3, y = 4 } })))
  end)

  it("writes an array of a named type element by element", function ()
    local s = bitwire.schema {
      P = { { "x", "int", min = 0, max = 7 } },
      T = { { "ps", "array", of = "P", max = 1 } },
    }
    -- count 1 (1 bit), x = 5 (3 bits): 1 | 5 << 1
    assert.equal("0b", tohex(s:encode("T", { ps = { { x = 5 } } })))
  end)

  it("ignores keys the type does not name", function ()
    local s = bitwire.schema { T = { { "x", "bool" } } }
    assert.equal("01", tohex(s:encode("T", { x = true, extra = {}, [1] = 5 })))
  end)

  it("fills every missing field that has a default", function ()
    local s = bitwire.schema {
      T = { { "x", "int", min = 0, max = 15, default = 7 },
            { "e", "enum", values = { "a", "b" }, default = "b" },
            { "s", "string", max = 3, default = "hi" } },
    }
    -- x = 7 (4 bits), e = 1 (1 bit), #s = 2 (2 bits): 0x57, align, "hi"
    assert.equal("576869", tohex(s:encode("T", {})))
  end)

  it("prefers a given value over the default", function ()
    local s = bitwire.schema {
      T = { { "x", "int", min = 0, max = 15, default = 7 },
            { "e", "enum", values = { "a", "b" }, default = "b" },
            { "s", "string", max = 3, default = "hi" } },
    }
    assert.equal("01", tohex(s:encode("T", { x = 1, e = "a", s = "" })))
  end)

  local ERRORS = {
    { "names a missing nested field with its full path",
      function (v) v.entities[3].pos.z = nil end, "entities[3].pos.z: missing (bit " },
    { "names an out-of-range value with its range",
      function (v) v.entities[3].health = 117 end,
      "entities[3].health: 117 out of range [0, 100] (bit " },
    { "rejects a float outside its range",
      function (v) v.entities[2].pos.x = 600 end,
      "entities[2].pos.x: 600.0 out of range [-512.0, 512.0] (bit " },
    { "rejects a string where an integer goes",
      function (v) v.entities[1].id = "1" end,
      "entities[1].id: expected an integer, got string (bit " },
    { "rejects a float where an integer goes",
      function (v) v.tick = 1.5 end, "tick: expected an integer, got 1.5 (bit 0)" },
    { "rejects a uint too wide for its bits",
      function (v) v.tick = 1 << 20 end, "tick: 1048576 does not fit in 20 bits (bit 0)" },
    { "rejects a negative uint",
      function (v) v.tick = -1 end, "tick: -1 does not fit in 20 bits (bit 0)" },
    { "rejects a number where a bool goes",
      function (v) v.entities[1].at_rest = 1 end,
      "entities[1].at_rest: expected a boolean, got number (bit " },
    { "rejects an unknown enum value",
      function (v) v.entities[2].kind = "ninja" end,
      "entities[2].kind: 'ninja' is not one of its enum values (bit " },
    { "rejects a string longer than max",
      function (v) v.entities[1].name = ("x"):rep(17) end,
      "entities[1].name: string of 17 bytes longer than max 16 (bit " },
    { "rejects invalid UTF-8",
      function (v) v.entities[1].name = "\xff" end,
      "entities[1].name: string with NUL or malformed UTF-8 (bit " },
    { "rejects an interior NUL",
      function (v) v.entities[1].name = "a\0b" end,
      "entities[1].name: string with NUL or malformed UTF-8 (bit " },
    { "rejects a number where a nested table goes",
      function (v) v.entities[2].pos = 5 end,
      "entities[2].pos: expected a table, got number (bit " },
    { "rejects a number where an array goes",
      function (v) v.entities = 5 end,
      "entities: expected a table, got number (bit 20)" },
    { "rejects an array longer than max",
      function (v) for i = 4, 65 do v.entities[i] = entity(i) end end,
      "entities: count 65 out of range [0, 64] (bit 20)" },
    { "rejects an array element of the wrong type",
      function (v) v.entities[2] = false end,
      "entities[2]: expected a table, got boolean (bit " },
  }

  for _, c in ipairs(ERRORS) do
    it(c[1], function ()
      local s = snapshot_schema()
      local v = { tick = 1, entities = { entity(1), entity(2), entity(3) } }
      assert.is_string(s:encode("Snapshot", v))
      c[2](v)
      contains(c[3], errorof(s.encode, s, "Snapshot", v))
    end)
  end

  it("reports the bit where encoding stopped", function ()
    local s = snapshot_schema()
    local v = { tick = 1, entities = { entity(1), entity(2), entity(3) } }
    v.entities[3].health = 117
    -- tick 20, count 7, two entities of 12+2+51+7+1+1 = 74, then the third's
    -- id, kind and pos: 20 + 7 + 148 + 65 = 240
    contains("(bit 240)", errorof(s.encode, s, "Snapshot", v))
  end)

  it("rejects a value that is not a table", function ()
    local s = snapshot_schema()
    contains("expected a table, got number", errorof(s.encode, s, "Snapshot", 5))
  end)

  it("rejects a bytes value of the wrong length", function ()
    local s = bitwire.schema { T = { { "b", "bytes", count = 2 } } }
    contains("b: length of 3 must have exactly 2",
      errorof(s.encode, s, "T", { b = "abc" }))
    s = bitwire.schema { T = { { "b", "bytes", min = 2, max = 3 } } }
    contains("b: length 1 out of range [2, 3]", errorof(s.encode, s, "T", { b = "a" }))
  end)

  it("rejects a fixed array of the wrong count", function ()
    local s = bitwire.schema { T = { { "v", "vector", count = 3, min = 0, max = 1, res = 0.5 } } }
    contains("v: count of 2 must have exactly 3",
      errorof(s.encode, s, "T", { v = { 0, 0 } }))
  end)

  it("rejects an omitted value, even when every field is optional", function ()
    local s = bitwire.schema { T = { { "x", "bool", optional = true } } }
    contains("expected a table, got nil", errorof(s.encode, s, "T"))
    contains("expected a table, got nil", errorof(s.bits, s, "T"))
    contains("expected a table, got nil", errorof(s.encode_message, s, "T"))
  end)

  it("rejects an unknown type name", function ()
    local s = snapshot_schema()
    contains("unknown type 'Nope'", errorof(s.encode, s, "Nope", {}))
  end)

  it("raises on an unknown option, naming it and the known ones", function ()
    local s = bitwire.schema { T = { { "x", "int", min = 0, max = 9 } } }
    local want = "unknown option 'basline' (known: baseline, strict, version)"
    contains(want, errorof(s.encode, s, "T", { x = 1 }, { basline = { x = 1 } }))
    contains(want, errorof(s.bits, s, "T", { x = 1 }, { basline = { x = 1 } }))
    contains(want, errorof(s.encode_message, s, "T", { x = 1 }, { basline = { x = 1 } }))
    contains("unknown option 1 (known", errorof(s.encode, s, "T", { x = 1 }, { 1 }))
    contains("unknown option 'versoin' (known: strict, version)", errorof(s.blob, s, "T", { x = 1 },
      { versoin = 0 }))
    -- every known one together is taken
    assert.equal(5, s:bits("T", { x = 1 }, { baseline = { x = 2 }, strict = true, version = 0 }))
  end)

  it("words an unknown option as the checks written in Lua do: one wording, from C", function ()
    local core = require "bitwire.core"
    local s = bitwire.schema { T = { { "x", "int", min = 0, max = 9 } } }
    local msg = core.unknown_option("basline", "option", { "baseline", "strict", "version" })
    assert.equal("unknown option 'basline' (known: baseline, strict, version)", msg)
    contains("(" .. msg .. ")", errorof(s.encode, s, "T", { x = 1 }, { basline = 1 }))
    assert.equal("unknown option 1 (known: a)", core.unknown_option(1, "option", { "a" }))
    contains("(" .. core.unknown_option(1, "option", { "baseline", "strict", "version" }) .. ")",
      errorof(s.encode, s, "T", { x = 1 }, { 1 }))
    -- bitwire.protocol's and bitwire.load's checks (bitwire/options.lua) ask C for it
    contains("bitwire.protocol: " .. core.unknown_option("delta", "option", { "check", "deltas",
      "fingerprint", "id", "version_bits", "versioned" }), errorof(bitwire.protocol, s, { delta = true }))
    local p = bitwire.protocol(s)
    contains("bitwire.protocol: " .. core.unknown_option(true, "decode option", { "baselines",
      "into", "max_values", "share", "version" }), errorof(p.decode, p, "", { [true] = 1 }))
    contains("bitwire.load: " .. core.unknown_option("keep", "option", { "budget", "max_nodes",
      "max_size", "memory", "strict", "time" }), errorof(bitwire.load, "x.lua", { keep = 1 }))
    contains("option names must be strings", errorof(core.unknown_option, "x", "option", { 1 }))
  end)

  it("writes a nested record of one fused run as any record: bits, defaults, errors", function ()
    -- V is one run of fixed-width fields, which encode writes inline: the
    -- bits, the default, and each error's path and bit as bw_encstruct's
    local s = bitwire.schema {
      V = { { "x", "int", min = 0, max = 9 }, { "y", "int", min = 0, max = 9, default = 4 },
            { "z", "bool" } },
      R = { { "id", "int", min = 0, max = 3 }, { "p", "V" }, { "ok", "bool" } },
    }
    local w = bitwire.writer()
    w:bits(1, 2); w:bits(1, 4); w:bits(4, 4); w:bool(true); w:bool(false)
    assert.equal(tohex(w:tostring()), tohex(s:encode("R", { id = 1, p = { x = 1, z = true }, ok = false })))
    local cases = {
      { { id = 1, p = { x = 10, z = true }, ok = true }, "^p%.x: 10 out of range %[0, 9%] %(bit 2%)" },
      { { id = 1, p = { x = 1 }, ok = true }, "^p%.z: missing %(bit 10%)" },
      { { id = 1, p = 5, ok = true }, "^p: expected a table, got number %(bit 2%)" },
      { { id = 1, p = { x = 1, y = 2, z = "no" }, ok = true }, "^p%.z: expected a boolean, got string %(bit 10%)" },
    }
    for _, c in ipairs(cases) do
      assert.matches(c[2], errorof(s.encode, s, "R", c[1]))
      assert.matches(c[2], errorof(s.encode, s, "R", c[1], { strict = true }))
    end
    local v = { id = 1, p = { x = 1, z = true, w = 1 }, ok = true }
    assert.is_string(s:encode("R", v))
    assert.matches("^p: unknown key 'w' %(strict: V declares no such field%) %(bit 11%)",
                   errorof(s.encode, s, "R", v, { strict = true }))
  end)
end)
