-- Schemas: bitwire.schema (description validation), s:encode / s:decode with
-- the exact wire bits of every field kind, errors on both sides, decode
-- into, messages, sizes and fingerprints.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local tohex, errorof, contains, lcg, randbytes =
  H.tohex, H.errorof, H.contains, H.lcg, H.randbytes

local function f32 (x) return (string.unpack("<f", string.pack("<f", x))) end

local KNOWN_CODES = { truncated = true, range = true, align = true,
  check = true, utf8 = true, tag = true, schema = true, crc = true }

-- the Entity/Snapshot example of DESIGN.md
local function snapshot_schema ()
  local function coord (n)
    return { n, "float", min = -512, max = 512, res = 0.01 }
  end
  return bitwire.schema {
    Vec3 = { coord "x", coord "y", coord "z" },
    Entity = {
      { "id", "int", min = 0, max = 4095 },
      { "kind", "enum", values = { "player", "grunt", "weapon" } },
      { "pos", "Vec3" },
      { "health", "int", min = 0, max = 100 },
      { "at_rest", "bool" },
      { "name", "string", max = 16, optional = true },
    },
    Snapshot = {
      { "tick", "uint", bits = 20 },
      { "entities", "array", of = "Entity", max = 64 },
    },
  }
end

local function entity (i)
  return { id = i, kind = "grunt", pos = { x = 0, y = 0, z = 0 },
           health = 50, at_rest = false }
end

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

------------------------------------------------------------------------------
-- Description validation: each bad description and the words its error
-- must contain (type, field and problem).
------------------------------------------------------------------------------
describe("bitwire.schema", function ()
  local BAD = {
    { "an unknown field type",
      { T = { { "x", "foo" } } }, "bitwire.schema: T.x: unknown type 'foo'" },
    { "an unknown option",
      { T = { { "x", "int", min = 0, max = 1, bogus = 1 } } },
      "bitwire.schema: T.x: unknown option 'bogus' for type int" },
    { "an option of another type",
      { T = { { "x", "bool", max = 1 } } },
      "bitwire.schema: T.x: unknown option 'max' for type bool" },
    { "an int without min",
      { T = { { "x", "int", max = 1 } } },
      "bitwire.schema: T.x: 'min' must be an integer, got nothing" },
    { "an int without max",
      { T = { { "x", "int", min = 1 } } },
      "bitwire.schema: T.x: 'max' must be an integer, got nothing" },
    { "an int with a fractional bound",
      { T = { { "x", "int", min = 0.5, max = 1 } } },
      "bitwire.schema: T.x: 'min' must be an integer, got 0.5" },
    { "an int with min > max",
      { T = { { "x", "int", min = 5, max = 1 } } },
      "bitwire.schema: T.x: min 5 > max 1" },
    { "a float with min >= max",
      { T = { { "x", "float", min = 1, max = 1, res = 0.1 } } },
      "bitwire.schema: T.x: min 1 >= max 1" },
    { "a float with res = 0",
      { T = { { "x", "float", min = 0, max = 1, res = 0 } } },
      "bitwire.schema: T.x: res must be > 0, got 0" },
    { "a float with res < 0",
      { T = { { "x", "float", min = 0, max = 1, res = -1 } } },
      "bitwire.schema: T.x: res must be > 0, got -1" },
    { "a float without res",
      { T = { { "x", "float", min = 0, max = 1 } } },
      "bitwire.schema: T.x: 'res' must be a finite number, got nil" },
    { "a float with an infinite bound",
      { T = { { "x", "float", min = -math.huge, max = 1, res = 1 } } },
      "bitwire.schema: T.x: 'min' must be a finite number, got -inf" },
    { "a float range that float32 cannot hold",
      { T = { { "x", "float", min = -1e39, max = 0, res = 1 } } },
      "bitwire.schema: T.x: min -1e+39, max 0, res 1 do not fit float32" },
    { "a float range that vanishes in float32",
      { T = { { "x", "float", min = 1, max = 1 + 1e-9, res = 1e-10 } } },
      "bitwire.schema: T.x: min 1, max 1.000000001, res 1e-10 do not fit float32" },
    { "a float res that is 0 in float32",
      { T = { { "x", "float", min = 0, max = 1, res = 1e-50 } } },
      "bitwire.schema: T.x: min 0, max 1, res 1e-50 do not fit float32" },
    { "a vector with res <= 0",
      { T = { { "v", "vector", count = 3, min = 0, max = 1, res = 0 } } },
      "bitwire.schema: T.v: res must be > 0, got 0" },
    { "a vector without count",
      { T = { { "v", "vector", min = 0, max = 1, res = 0.5 } } },
      "bitwire.schema: T.v: vector needs 'count' (dimensions)" },
    { "a uint of 0 bits",
      { T = { { "x", "uint", bits = 0 } } },
      "bitwire.schema: T.x: 'bits' = 0 outside [1, 64]" },
    { "a uint of 65 bits",
      { T = { { "x", "uint", bits = 65 } } },
      "bitwire.schema: T.x: 'bits' = 65 outside [1, 64]" },
    { "a uint without bits",
      { T = { { "x", "uint" } } },
      "bitwire.schema: T.x: 'bits' must be an integer, got nothing" },
    { "duplicate field names",
      { T = { { "x", "bool" }, { "x", "int", min = 0, max = 1 } } },
      "bitwire.schema: T.x: duplicate field name" },
    { "a reference to an unknown type",
      { T = { { "x", "U" } } }, "bitwire.schema: T.x: unknown type 'U'" },
    { "an array of an unknown type",
      { T = { { "xs", "array", of = "U", max = 2 } } },
      "bitwire.schema: T.xs[]: unknown type 'U'" },
    { "a type containing itself",
      { T = { { "x", "T" } } }, "bitwire.schema: T: type refers to itself" },
    { "a type containing itself through an optional field",
      { Node = { { "next", "Node", optional = true } } },
      "bitwire.schema: Node: type refers to itself" },
    { "a type containing itself through an array",
      { T = { { "xs", "array", of = "T", max = 3 } } },
      "bitwire.schema: T: type refers to itself" },
    { "two types containing each other",
      { A = { { "b", "B" } }, B = { { "a", "A" } } },
      "bitwire.schema: A: type refers to itself" },
    { "an enum without values",
      { T = { { "e", "enum", values = {} } } },
      "bitwire.schema: T.e: 'values' must be a non-empty list of strings" },
    { "an enum with values not a table",
      { T = { { "e", "enum", values = "abc" } } },
      "bitwire.schema: T.e: 'values' must be a non-empty list of strings" },
    { "an enum with a duplicate value",
      { T = { { "e", "enum", values = { "a", "b", "a" } } } },
      "bitwire.schema: T.e: duplicate enum value 'a'" },
    { "an enum with a value not a string",
      { T = { { "e", "enum", values = { "a", 3 } } } },
      "bitwire.schema: T.e: enum value 2 is not a string" },
    { "an enum with values not a plain list",
      { T = { { "e", "enum", values = { "a", x = "b" } } } },
      "bitwire.schema: T.e: 'values' must be a plain list" },
    { "an int default out of range",
      { T = { { "x", "int", min = 0, max = 3, default = 4 } } },
      "bitwire.schema: T.x: default 4 does not fit the field" },
    { "an enum default not among the values",
      { T = { { "e", "enum", values = { "a" }, default = "b" } } },
      "bitwire.schema: T.e: default b does not fit the field" },
    { "a string default longer than max",
      { T = { { "s", "string", max = 3, default = "abcd" } } },
      "bitwire.schema: T.s: default abcd does not fit the field" },
    { "a bool default not a boolean",
      { T = { { "b", "bool", default = 1 } } },
      "bitwire.schema: T.b: default 1 does not fit the field" },
    { "a float default out of range",
      { T = { { "f", "float", min = 0, max = 1, res = 0.1, default = 2 } } },
      "bitwire.schema: T.f: default 2 does not fit the field" },
    { "a uint default too wide",
      { T = { { "u", "uint", bits = 3, default = 8 } } },
      "bitwire.schema: T.u: default 8 does not fit the field" },
    { "a default on an array",
      { T = { { "xs", "array", of = { "bool" }, max = 2, default = {} } } },
      "bitwire.schema: T.xs: a array field cannot have a default" },
    { "a default on a nested type",
      { P = { { "b", "bool" } }, T = { { "p", "P", default = {} } } },
      "bitwire.schema: T.p: a struct field cannot have a default" },
    { "an array without of",
      { T = { { "xs", "array", max = 3 } } },
      "bitwire.schema: T.xs: array needs 'of'" },
    { "an array without max or count",
      { T = { { "xs", "array", of = { "bool" } } } },
      "bitwire.schema: T.xs: needs 'max' or 'count'" },
    { "an array with both count and max",
      { T = { { "xs", "array", of = { "bool" }, count = 2, max = 3 } } },
      "bitwire.schema: T.xs: give either 'count' or 'max' (and 'min'), not both" },
    { "an array with min > max",
      { T = { { "xs", "array", of = { "bool" }, min = 4, max = 3 } } },
      "bitwire.schema: T.xs: min 4 > max 3" },
    { "an inline element with a bad range",
      { T = { { "xs", "array", of = { "int", min = 0 }, max = 3 } } },
      "bitwire.schema: T.xs[]: 'max' must be an integer, got nothing" },
    { "an optional array element",
      { T = { { "xs", "array", of = { "bool", optional = true }, max = 3 } } },
      "bitwire.schema: T.xs[]: array elements cannot be optional or versioned" },
    { "a string without max",
      { T = { { "s", "string" } } },
      "bitwire.schema: T.s: 'max' must be an integer, got nothing" },
    { "a string with a negative max",
      { T = { { "s", "string", max = -1 } } },
      "bitwire.schema: T.s: 'max' = -1 outside [0, inf]" },
    { "bytes without max or count",
      { T = { { "b", "bytes" } } }, "bitwire.schema: T.b: needs 'max' or 'count'" },
    { "a check magic wider than 32 bits",
      { T = { { "check", magic = 1 << 32 } } },
      "bitwire.schema: T: 'magic' = 4294967296 outside [0, 4294967295]" },
    { "an optional align",
      { T = { { "align", optional = true } } },
      "bitwire.schema: T: align cannot be optional or have a default" },
    { "'optional' not a boolean",
      { T = { { "x", "bool", optional = 1 } } },
      "bitwire.schema: T.x: 'optional' must be a boolean" },
    { "a field name that is not a string",
      { T = { { 1, "bool" } } },
      "bitwire.schema: T: field name (first entry) must be a non-empty string" },
    { "an empty field name",
      { T = { { "", "bool" } } },
      "bitwire.schema: T: field name (first entry) must be a non-empty string" },
    { "a field without a type",
      { T = { { "x" } } },
      "bitwire.schema: T.x: field type must be a string, got nil" },
    { "a field that is not a table",
      { T = { "x" } }, "bitwire.schema: T: field must be a table, got string" },
    { "fields that are not a list",
      { T = { x = { "x", "bool" } } },
      "bitwire.schema: T: fields must be a list, found key x" },
    { "a type that is not a table",
      { T = 5 }, "bitwire.schema: T: must be a list of fields" },
    { "a type name that is not an identifier",
      { ["1st"] = { { "x", "bool" } } },
      "bitwire.schema: type name 1st must be an identifier" },
    { "a type named after a built-in type",
      { int = { { "x", "bool" } } },
      "bitwire.schema: type name 'int' is a built-in type" },
    { "a description without types",
      {}, "bitwire.schema: description has no types" },
    { "a description that is not a table",
      "T", "bitwire.schema: description must be a table, got string" },
  }

  for _, c in ipairs(BAD) do
    it("rejects " .. c[1], function ()
      contains(c[3], errorof(bitwire.schema, c[2]))
    end)
  end

  it("raises at the caller's line", function ()
    local err = errorof(function () bitwire.schema { T = { { "x", "foo" } } } end)
    assert.matches("^[^:]*02%-schema_spec%.lua:%d+: bitwire%.schema: T%.x:", err)
  end)

  it("accepts every supported kind", function ()
    local s = bitwire.schema {
      P = { { "x", "int", min = 0, max = 1 } },
      T = {
        { "i", "int", min = -5, max = 5 }, { "u", "uint", bits = 7 },
        { "b", "bool" }, { "f", "float", min = 0, max = 1, res = 0.1 },
        { "f32", "float32" }, { "f64", "float64" },
        { "e", "enum", values = { "a", "b" } }, { "s", "string", max = 4 },
        { "by", "bytes", max = 4 }, { "bc", "bytes", count = 2 },
        { "ar", "array", of = "P", max = 3 }, { "af", "array", of = { "bool" }, count = 2 },
        { "v", "vector", count = 3, min = -1, max = 1, res = 0.5 },
        { "p", "P" }, { "o", "P", optional = true }, { "align" }, { "check" },
      },
    }
    assert.same({ "P", "T" }, s:types())
  end)

  it("accepts a uint default up to 2^bits - 1, for every width", function ()
    for bits = 1, 63 do
      local s = bitwire.schema { T = { { "u", "uint", bits = bits, default = (1 << bits) - 1 } } }
      assert.equal((1 << bits) - 1, s:decode("T", s:encode("T", {})).u)
    end
    local s = bitwire.schema { T = { { "u", "uint", bits = 64, default = -1 } } }
    assert.equal(-1, s:decode("T", s:encode("T", {})).u)
  end)

  it("accepts a type without fields, which takes no bits", function ()
    local s = bitwire.schema { Empty = {} }
    assert.equal("", s:encode("Empty", {}))
    assert.equal(0, s:maxbits("Empty"))
    assert.same({}, s:decode("Empty", ""))
  end)
end)

describe("schema:types", function ()
  it("lists the type names sorted", function ()
    local s = snapshot_schema()
    assert.same({ "Entity", "Snapshot", "Vec3" }, s:types())
  end)
end)

------------------------------------------------------------------------------
-- decode
------------------------------------------------------------------------------
describe("schema:decode", function ()
  local function schema ()
    return bitwire.schema {
      T = {
        { "a", "int", min = 0, max = 5 },                -- bits 0..2
        { "e", "enum", values = { "x", "y", "z" } },     -- bits 3..4
        { "align" },                                     -- bits 5..7
        { "s", "string", max = 10 },                     -- 8..11, align, bytes
        { "check" },
        { "f", "float", min = 0, max = 1, res = 0.3 },   -- 3 bits, miv 4
      },
    }
  end
  local VALUE = { a = 3, e = "y", s = "hé", f = 0.5 }
  local GOOD = "0b0368c3a97856341202"

  local function patch (bytes, i, byte)
    return bytes:sub(1, i - 1) .. string.char(byte) .. bytes:sub(i + 1)
  end

  it("reads what the hand-computed bytes say", function ()
    local s = schema()
    assert.equal(GOOD, tohex(s:encode("T", VALUE)))
    assert.same(VALUE, s:decode("T", s:encode("T", VALUE)))
  end)

  local FAIL = {
    { "an int above its range", function (b) return patch(b, 1, 0x07 | 0x08) end,
      "range", "a: 7 out of range [0, 5] (bit 0)" },
    { "an enum index past the last value", function (b) return patch(b, 1, 0x03 | 0x18) end,
      "range", "e: 3 out of range [0, 2] (bit 3)" },
    { "non-zero padding bits", function (b) return patch(b, 1, b:byte(1) | 0x80) end,
      "align", "non-zero padding bits (bit 5)" },
    { "a string length above max", function (b) return patch(b, 2, 0x0b) end,
      "range", "s: length 11 out of range [0, 10] (bit 8)" },
    { "malformed UTF-8", function (b) return patch(b, 4, 0xff) end,
      "utf8", "s: string with NUL or malformed UTF-8 (bit " },
    { "an interior NUL", function (b) return patch(b, 4, 0) end,
      "utf8", "s: string with NUL or malformed UTF-8 (bit " },
    { "a wrong check value", function (b) return patch(b, 6, 0x79) end,
      "check", "serialization check failed (bit 40)" },
    { "a quantized float above its step count", function (b) return patch(b, 10, 7) end,
      "range", "f: quantized 7 out of range [0, 4] (bit 72)" },
  }

  for _, c in ipairs(FAIL) do
    it("returns nil, message, code for " .. c[1], function ()
      local s = schema()
      local v, err, code = s:decode("T", c[2](s:encode("T", VALUE)))
      assert.is_nil(v)
      assert.equal(c[3], code)
      contains(c[4], err)
      assert.matches("%(bit %d+%)$", err)
    end)
  end

  it("returns truncated for every cut of a valid packet, never raising", function ()
    local s = snapshot_schema()
    local v = { tick = 99, entities = {} }
    for i = 1, 5 do
      v.entities[i] = entity(i)
      v.entities[i].name = ("n"):rep(i)
    end
    local bytes = s:encode("Snapshot", v)
    assert.same(v, s:decode("Snapshot", bytes))
    for n = 0, #bytes - 1 do
      local ok, got, err, code = pcall(s.decode, s, "Snapshot", bytes:sub(1, n))
      assert.is_true(ok, got)
      assert.is_nil(got)
      assert.equal("truncated", code)
      assert.matches("%(bit %d+%)$", err)
    end
  end)

  it("names the path and bit of a truncated field", function ()
    local s = snapshot_schema()
    local v = { tick = 1, entities = { entity(1), entity(2) } }
    v.entities[1].name = "abcdefgh"
    local bytes = s:encode("Snapshot", v)
    -- entity 1: bits 27..175 (its name ends at 112 + 64); entity 2's pos.y
    -- starts at 176 + 12 + 2 + 17 = 207, so 26 bytes hold only its first bit
    local got, err, code = s:decode("Snapshot", bytes:sub(1, 26))
    assert.is_nil(got)
    assert.equal("truncated", code)
    assert.equal("entities[2].pos.y: truncated input (bit 207)", err)
  end)

  it("refuses an array count the remaining bytes cannot hold", function ()
    local s = bitwire.schema { T = { { "xs", "array", of = { "uint", bits = 32 }, max = 1000 } } }
    local got, err, code = s:decode("T", "\255\3")     -- count 1023 > max
    assert.is_nil(got)
    assert.equal("range", code)
    contains("xs: count 1023 out of range [0, 1000]", err)
    got, err, code = s:decode("T", "\231\3" .. ("\0"):rep(8))  -- 999 of 32 bits
    assert.is_nil(got)
    assert.equal("truncated", code)
    contains("xs: count 999 needs", err)
  end)

  it("never raises on seeded random bytes", function ()
    local s = bitwire.schema {
      P = { { "x", "float", min = -10, max = 10, res = 0.001 },
            { "n", "int", min = -3, max = 1000 } },
      T = {
        { "u", "uint", bits = 13 }, { "b", "bool" },
        { "e", "enum", values = { "a", "b", "c" } },
        { "s", "string", max = 20, optional = true },
        { "by", "bytes", max = 9 },
        { "ps", "array", of = "P", max = 7 },
        { "v", "vector", count = 2, min = 0, max = 1, res = 0.01 },
        { "f32", "float32", optional = true }, { "f64", "float64" },
        { "check" }, { "tail", "int", min = 5, max = 11 },
      },
    }
    local rand = lcg(20240601)
    local outcomes = {}
    for i = 1, 5000 do
      local bytes = randbytes(rand, rand(48))
      local ok, v, err, code = pcall(s.decode, s, "T", bytes)
      assert.is_true(ok, v)
      if v == nil then
        assert.is_true(KNOWN_CODES[code], tostring(code))
        assert.matches("%(bit %d+%)$", err)
        outcomes[code] = true
      else
        assert.is_table(v)
        outcomes.ok = true
      end
      ok, v, err, code = pcall(s.decode_message, s, bytes)
      assert.is_true(ok, v)
      if v == nil then
        assert.is_string(err)
        assert.is_true(KNOWN_CODES[code], tostring(code))
      end
      if i == 1 then assert.is_nil(s:decode("T", "")) end
    end
    assert.is_true(outcomes.truncated)
    assert.is_true(outcomes.range)
  end)

  it("accepts trailing bytes after the value", function ()
    local s = bitwire.schema { T = { { "x", "int", min = 0, max = 9 } } }
    assert.same({ x = 1 }, s:decode("T", "\1\0\0"))
  end)

  it("raises on bad arguments", function ()
    local s = schema()
    contains("unknown type 'Nope'", errorof(s.decode, s, "Nope", ""))
    contains("string expected, got table", errorof(s.decode, s, "T", {}))
    contains("'into' must be a table", errorof(s.decode, s, "T", GOOD, { into = 5 }))
    contains("table expected, got number", errorof(s.decode, s, "T", GOOD, 5))
  end)
end)

describe("decoded values", function ()
  local s = bitwire.schema {
    P = { { "x", "int", min = 0, max = 9 }, { "y", "int", min = 0, max = 9 } },
    T = {
      { "i", "int", min = -5, max = 5 }, { "u", "uint", bits = 64 },
      { "e", "enum", values = { "a", "b" } },
      { "f", "float", min = -512, max = 512, res = 0.01 },
      { "f32", "float32" }, { "f64", "float64" },
      { "p", "P" }, { "ps", "array", of = "P", max = 4 },
      { "ns", "array", of = { "int", min = 0, max = 9 }, max = 4 },
    },
  }
  local V = { i = -5, u = 1 << 63, e = "b", f = 0.1, f32 = 0.1, f64 = 0.1,
              p = { x = 1, y = 2 }, ps = { { x = 3, y = 4 }, { x = 5, y = 6 } },
              ns = { 7, 8, 9 } }

  it("are fresh tables on every decode", function ()
    local bytes = s:encode("T", V)
    local a, b = s:decode("T", bytes), s:decode("T", bytes)
    assert.is_false(rawequal(a, b))
    assert.is_false(rawequal(a.p, b.p))
    assert.is_false(rawequal(a.ps, b.ps))
    assert.is_false(rawequal(a.ps[1], b.ps[1]))
  end)

  it("have arrays numbered from 1", function ()
    local v = s:decode("T", s:encode("T", V))
    assert.is_nil(v.ns[0])
    assert.same({ 7, 8, 9 }, v.ns)
    assert.equal(3, #v.ns)
    assert.same({ x = 5, y = 6 }, v.ps[2])
  end)

  it("keep integers integers", function ()
    local v = s:decode("T", s:encode("T", V))
    for _, k in ipairs { "i", "u" } do assert.equal("integer", math.type(v[k]), k) end
    assert.equal("integer", math.type(v.p.x))
    assert.equal("integer", math.type(v.ns[1]))
    assert.equal(math.mininteger, v.u)       -- 2^63 as the same 64 bits
    assert.equal("b", v.e)
  end)

  it("give floats as the quantized value", function ()
    local v = s:decode("T", s:encode("T", V))
    local w = bitwire.writer()
    w:compressed_float(0.1, -512, 512, 0.01)
    assert.equal(bitwire.reader(w:tostring()):compressed_float(-512, 512, 0.01), v.f)
    assert.is_true(math.abs(v.f - 0.1) <= 0.005)
    assert.equal("float", math.type(v.f))
    assert.equal(f32(0.1), v.f32)
    assert.equal(0.1, v.f64)
  end)

  it("encode again, even where float32 rounds past the declared range", function ()
    -- 46.9 is 46.900001525879 in float32: above max in a double
    local q = bitwire.schema { T = { { "x", "float", min = 43.9, max = 46.9, res = 0.1 } } }
    local bytes = q:encode("T", { x = 46.9 })
    local v = q:decode("T", bytes)
    assert.is_true(v.x > 46.9)
    assert.equal(bytes, q:encode("T", v))
    contains("x: 47.0 out of range", errorof(q.encode, q, "T", { x = 47 }))
  end)

  it("omit an absent optional field", function ()
    local o = bitwire.schema { T = { { "x", "bool", optional = true }, { "y", "bool" } } }
    local v = o:decode("T", o:encode("T", { y = true }))
    assert.same({ y = true }, v)
  end)
end)

describe("schema:decode into", function ()
  local s = bitwire.schema {
    P = { { "x", "int", min = 0, max = 9 }, { "y", "int", min = 0, max = 9 } },
    T = {
      { "p", "P" }, { "opt", "P", optional = true },
      { "ps", "array", of = "P", max = 5 },
      { "ns", "array", of = { "int", min = 0, max = 9 }, max = 5 },
      { "grid", "array", of = { "array", of = { "bool" }, max = 3 }, max = 3 },
      { "d", "int", min = 0, max = 9, default = 4 },
    },
  }
  local A = { p = { x = 1, y = 2 }, opt = { x = 3, y = 4 },
              ps = { { x = 1, y = 1 }, { x = 2, y = 2 }, { x = 3, y = 3 } },
              ns = { 1, 2, 3 }, grid = { { true }, { false, true } } }
  local B = { p = { x = 5, y = 6 }, ps = { { x = 7, y = 7 } }, ns = { 4 },
              grid = { { false, false, true } }, d = 9 }

  it("gives the same value as a fresh decode", function ()
    local t = s:decode("T", s:encode("T", A))
    local b = s:encode("T", B)
    local got = s:decode("T", b, { into = t })
    assert.equal(t, got)
    assert.same(s:decode("T", b), t)
  end)

  it("reuses the nested tables", function ()
    local t = s:decode("T", s:encode("T", A))
    local p, ps, ps1, ns, grid, grid1 = t.p, t.ps, t.ps[1], t.ns, t.grid, t.grid[1]
    s:decode("T", s:encode("T", B), { into = t })
    assert.is_true(rawequal(p, t.p))
    assert.is_true(rawequal(ps, t.ps))
    assert.is_true(rawequal(ps1, t.ps[1]))
    assert.is_true(rawequal(ns, t.ns))
    assert.is_true(rawequal(grid, t.grid))
    assert.is_true(rawequal(grid1, t.grid[1]))
  end)

  it("clears an absent optional field", function ()
    local t = s:decode("T", s:encode("T", A))
    assert.is_table(t.opt)
    s:decode("T", s:encode("T", B), { into = t })
    assert.is_nil(t.opt)
  end)

  it("trims arrays that got shorter", function ()
    local t = s:decode("T", s:encode("T", A))
    s:decode("T", s:encode("T", B), { into = t })
    assert.equal(1, #t.ps)
    assert.is_nil(t.ps[2])
    assert.is_nil(t.ps[3])
    assert.same({ 4 }, t.ns)
    assert.same({ { false, false, true } }, t.grid)
  end)

  it("fills a table that starts empty", function ()
    local t = {}
    s:decode("T", s:encode("T", A), { into = t })
    assert.same(s:decode("T", s:encode("T", A)), t)
  end)

  it("returns nil, message, code on bad bytes", function ()
    local t = {}
    local v, err, code = s:decode("T", "", { into = t })
    assert.is_nil(v)
    assert.equal("truncated", code)
    assert.matches("%(bit 0%)$", err)
  end)
end)

------------------------------------------------------------------------------
-- messages, sizes, fingerprints
------------------------------------------------------------------------------
describe("schema:encode_message", function ()
  local s = bitwire.schema {
    A = { { "x", "int", min = 0, max = 15 } },
    B = { { "on", "bool" } },
    C = { { "s", "string", max = 3 } },
  }

  it("puts the type id (index in sorted names) first", function ()
    -- 3 types: 2 bits of id; B = 1, then on = 1 at bit 2
    assert.equal("05", tohex(s:encode_message("B", { on = true })))
    -- A = 0, x = 9 at bits 2..5
    assert.equal("24", tohex(s:encode_message("A", { x = 9 })))
  end)

  it("sends no id for a schema of one type", function ()
    local one = bitwire.schema { T = { { "x", "int", min = 0, max = 15 } } }
    assert.equal(one:encode("T", { x = 9 }), one:encode_message("T", { x = 9 }))
  end)
end)

describe("schema:decode_message", function ()
  local s = bitwire.schema {
    A = { { "x", "int", min = 0, max = 15 } },
    B = { { "on", "bool" } },
    C = { { "s", "string", max = 3 } },
  }

  it("returns the type name and the value", function ()
    for name, v in pairs { A = { x = 9 }, B = { on = false }, C = { s = "abc" } } do
      local got, value = s:decode_message(s:encode_message(name, v))
      assert.equal(name, got)
      assert.same(v, value)
    end
  end)

  it("rejects an unknown type id with code tag", function ()
    local name, err, code = s:decode_message("\3")
    assert.is_nil(name)
    assert.equal("tag", code)
    assert.equal("message type 3 out of range [0, 2] (bit 0)", err)
  end)

  it("rejects an empty packet with code truncated", function ()
    local name, err, code = s:decode_message("")
    assert.is_nil(name)
    assert.equal("truncated", code)
    assert.matches("%(bit 0%)$", err)
  end)

  it("decodes into a table", function ()
    local t = {}
    local name, v = s:decode_message(s:encode_message("A", { x = 3 }), { into = t })
    assert.equal("A", name)
    assert.equal(t, v)
    assert.same({ x = 3 }, t)
  end)
end)

describe("schema:bits", function ()
  local s = snapshot_schema()
  local rand = lcg(7)

  it("counts the bits encode writes, rounded up to its bytes", function ()
    for n = 0, 20 do
      local v = { tick = rand(1 << 20), entities = {} }
      for i = 1, n do
        local e = entity(rand(4096))
        if rand(2) == 1 then e.name = ("é"):rep(rand(9)) end
        v.entities[i] = e
      end
      local bits, bytes = s:bits("Snapshot", v), s:encode("Snapshot", v)
      assert.equal((bits + 7) // 8, #bytes)
      assert.is_true(bits <= s:maxbits("Snapshot"))
    end
  end)

  it("is exact for a known value", function ()
    -- tick 20 + count 7 + one entity 74 (no name)
    assert.equal(101, s:bits("Snapshot", { tick = 1, entities = { entity(1) } }))
    -- a name "ab": presence 1, length 5 bits, pad, 16 bits
    local e = entity(1)
    e.name = "ab"
    -- 27 + 73 bits before the length, 5 of length: 105, padded to 112, + 16
    assert.equal(128, s:bits("Snapshot", { tick = 1, entities = { e } }))
  end)

  it("raises like encode on a value that does not fit", function ()
    contains("tick: missing", errorof(s.bits, s, "Snapshot", { entities = {} }))
  end)
end)

describe("schema:maxbits", function ()
  it("is the worst case, computed by hand for DESIGN.md's example", function ()
    local s = snapshot_schema()
    -- 1024 / 0.01 = 102400 steps: 17 bits per coordinate
    assert.equal(51, s:maxbits("Vec3"))
    -- id 12, kind 2, pos 51, health 7, at_rest 1, name 1 + 5 + 7 pad + 128
    assert.equal(214, s:maxbits("Entity"))
    -- tick 20, count 7, 64 entities
    assert.equal(20 + 7 + 64 * 214, s:maxbits("Snapshot"))
  end)

  it("counts align and check at their worst padding", function ()
    local s = bitwire.schema { T = { { "b", "bool" }, { "align" }, { "check" } } }
    assert.equal(1 + 7 + 39, s:maxbits("T"))
  end)

  it("is nil when the size is too large to count", function ()
    local s = bitwire.schema {
      P = { { "x", "uint", bits = 64 } },
      T = { { "ps", "array", of = "P", max = math.maxinteger } },
    }
    assert.is_nil(s:maxbits("T"))
    assert.equal(64, s:maxbits("P"))
  end)

  it("raises on an unknown type", function ()
    local s = snapshot_schema()
    contains("unknown type 'Q'", errorof(s.maxbits, s, "Q"))
  end)
end)

describe("schema:fingerprint", function ()
  -- the same description, its tables filled in the given order
  local function build (order, keyorder)
    local fields = {
      Vec = { { "x", "int", min = 0, max = 100 }, { "y", "float", min = 0, max = 1, res = 0.1 } },
      Obj = { { "v", "Vec" }, { "tags", "array", of = { "enum", values = { "a", "b" } }, max = 4 } },
      Msg = { { "objs", "array", of = "Obj", max = 9 }, { "note", "string", max = 8, optional = true } },
    }
    local desc = {}
    for _, name in ipairs(order) do
      local list = {}
      for i, f in ipairs(fields[name]) do
        local copy = { f[1], f[2] }
        local keys = {}
        for k in pairs(f) do if type(k) == "string" then keys[#keys + 1] = k end end
        table.sort(keys)
        if keyorder then
          for j = #keys, 1, -1 do copy[keys[j]] = f[keys[j]] end
        else
          for j = 1, #keys do copy[keys[j]] = f[keys[j]] end
        end
        list[i] = copy
      end
      desc[name] = list
    end
    return desc
  end

  it("is 16 hex digits", function ()
    assert.matches("^%x+$", bitwire.schema(build { "Vec", "Obj", "Msg" }):fingerprint())
    assert.equal(16, #bitwire.schema(build { "Vec", "Obj", "Msg" }):fingerprint())
  end)

  it("does not depend on the order tables were filled in", function ()
    local a = bitwire.schema(build({ "Vec", "Obj", "Msg" }, false)):fingerprint()
    local b = bitwire.schema(build({ "Msg", "Obj", "Vec" }, true)):fingerprint()
    local c = bitwire.schema(build({ "Obj", "Msg", "Vec" }, false)):fingerprint()
    assert.equal(a, b)
    assert.equal(a, c)
  end)

  it("is stable across compiles", function ()
    local d = build { "Vec", "Obj", "Msg" }
    assert.equal(bitwire.schema(d):fingerprint(), bitwire.schema(d):fingerprint())
  end)

  local function changed (edit)
    local d = build { "Vec", "Obj", "Msg" }
    local before = bitwire.schema(d):fingerprint()
    edit(d)
    return bitwire.schema(d):fingerprint() ~= before
  end

  it("changes when a range changes", function ()
    assert.is_true(changed(function (d) d.Vec[1].max = 101 end))
    assert.is_true(changed(function (d) d.Vec[2].res = 0.01 end))
    assert.is_true(changed(function (d) d.Msg[1].max = 10 end))
    assert.is_true(changed(function (d) d.Msg[2].max = 9 end))
  end)

  it("changes when the wire form changes otherwise", function ()
    assert.is_true(changed(function (d) d.Msg[2].optional = nil end))
    assert.is_true(changed(function (d) d.Vec[1][2] = "uint"; d.Vec[1].bits = 7
      d.Vec[1].min, d.Vec[1].max = nil, nil end))
    assert.is_true(changed(function (d) d.Obj[2].of.values = { "a", "b", "c" } end))
    assert.is_true(changed(function (d) table.insert(d.Vec, { "z", "bool" }) end))
    assert.is_true(changed(function (d) d.Vec[1], d.Vec[2] = d.Vec[2], d.Vec[1] end))
  end)

  it("does not change when a field is renamed", function ()
    assert.is_false(changed(function (d) d.Vec[1][1] = "px" end))
    assert.is_false(changed(function (d) d.Msg[2][1] = "comment" end))
  end)

  it("does not change when a default is added", function ()
    assert.is_false(changed(function (d) d.Vec[1].default = 5 end))
  end)
end)

describe("require 'bitwire'", function ()
  it("adds nothing to _G", function ()
    local before = {}
    for k in pairs(_G) do before[k] = true end
    local saved = {}
    for name in pairs(package.loaded) do
      if name == "bitwire" or name:match("^bitwire%.") then
        saved[name], package.loaded[name] = package.loaded[name], nil
      end
    end
    local ok, err = pcall(require, "bitwire")
    for name, mod in pairs(saved) do package.loaded[name] = mod end
    assert.is_true(ok, err)
    for k in pairs(_G) do
      assert.is_true(before[k], "new global " .. tostring(k))
    end
  end)

  it("exports schema and protocol", function ()
    assert.is_function(bitwire.schema)
    assert.is_function(bitwire.protocol)
  end)
end)
