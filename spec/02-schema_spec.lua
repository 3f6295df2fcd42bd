-- Schemas: bitwire.schema's validation of a description, schema:types,
-- and what require 'bitwire' adds to _G and exports.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local snapshot_schema = H.snapshot_schema
local errorof, contains = H.errorof, H.contains

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
    { "a string default holding bytes a message cannot show",
      { T = { { "s", "string", max = 3, default = "a\0b\\\255" } } },
      "bitwire.schema: T.s: default a\\0b\\92\\255 does not fit the field" },
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
    -- names reach terminals through every tool: no control characters
    { "a field name with an escape sequence",
      { T = { { "a\27[2Jb", "bool" } } },
      'bitwire.schema: T: field name "a\\27[2Jb" must be UTF-8 without control characters' },
    { "a field name with a newline",
      { T = { { "a\nb", "bool" } } },
      'bitwire.schema: T: field name "a\\10b" must be UTF-8 without control characters' },
    { "a field name with a NUL",
      { T = { { "a\0", "bool" } } },
      'bitwire.schema: T: field name "a\\0" must be UTF-8 without control characters' },
    { "a field name with DEL",
      { T = { { "a\127", "bool" } } },
      'bitwire.schema: T: field name "a\\127" must be UTF-8 without control characters' },
    { "a field name with a C1 control (CSI)",
      { T = { { "a\194\155", "bool" } } },
      'bitwire.schema: T: field name "a\\194\\155" must be UTF-8 without control characters' },
    { "a field name that is not UTF-8",
      { T = { { "a\255", "bool" } } },
      'bitwire.schema: T: field name "a\\255" must be UTF-8 without control characters' },
    { "an enum value with an escape sequence",
      { T = { { "e", "enum", values = { "ok", "\27]0;x\7" } } } },
      'bitwire.schema: T.e: enum value 2 ("\\27]0;x\\7") must be UTF-8 without control characters' },
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
