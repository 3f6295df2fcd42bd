-- dissect words a packet's failure as s:decode does: for every kind that
-- can fail a range, on crafted packets, the same message (field path,
-- words, numbers), code and bit; the words come from one place, the
-- core's (bitwire.core.formats).
local bitwire = require "bitwire"
local core = require "bitwire.core"

-- Bits 'bits' ({value, width} each) after a 3-bit field p = 5.
local function packet(bits)
  local w = bitwire.writer():bits(5, 3)
  for _, b in ipairs(bits) do w:bits(b[1], b[2]) end
  return w:tostring()
end

local ONES = { -1, 64 }

-- { name, field description, bits after p, decode's message }; a case
-- with 'base' is a delta against T's value { p = 1, <field> = base }
local CASES = {
  { "int", { "int", min = 3, max = 9 }, { { 7, 3 } }, "v: 10 out of range [3, 9] (bit 3)" },
  { "negative int", { "int", min = -100, max = 100 }, { { 255, 8 } },
    "v: 155 out of range [-100, 100] (bit 3)" },
  { "int past 2^63 - 1", { "int", min = 1, max = (1 << 62) + 1 }, { { (1 << 63) - 1, 63 } },
    "v: 9223372036854775808 out of range [1, 4611686018427387905] (bit 3)" },
  { "int of 64 bits from below 0", { "int", min = -5, max = math.maxinteger }, { ONES },
    "v: 18446744073709551610 out of range [-5, 9223372036854775807] (bit 3)" },
  { "int of 64 bits, below 0 and back", { "int", min = -(1 << 62), max = 1 << 62 }, { ONES },
    "v: 13835058055282163711 out of range [-4611686018427387904, 4611686018427387904] (bit 3)" },
  { "int of 64 bits to 2^63 - 1", { "int", min = math.mininteger, max = math.maxinteger - 1 },
    { ONES }, "v: 9223372036854775807 out of range [-9223372036854775808, "
      .. "9223372036854775806] (bit 3)" },
  { "enum", { "enum", values = { "a", "b", "c" } }, { { 3, 2 } },
    "v: 3 out of range [0, 2] (bit 3)" },
  { "float", { "float", min = 0, max = 2, res = 0.5 }, { { 7, 3 } },
    "v: quantized 7 out of range [0, 4] (bit 3)" },
  { "string length", { "string", max = 5 }, { { 7, 3 } },
    "v: length 7 out of range [0, 5] (bit 3)" },
  { "bytes length", { "bytes", min = 2, max = 6 }, { { 7, 3 } },
    "v: length 9 out of range [2, 6] (bit 3)" },
  { "array count", { "array", of = { "bool" }, min = 1, max = 5 }, { { 7, 3 } },
    "v: count 8 out of range [1, 5] (bit 3)" },
  { "array of ints, an element", { "array", of = { "int", min = 0, max = 2 }, max = 3 },
    { { 2, 2 }, { 1, 2 }, { 3, 2 } }, "v[2]: 3 out of range [0, 2] (bit 7)" },
  { "tiered", { "tiered", tiers = { 2, 4 }, min = 0, max = 12 }, { { 0, 1 }, { 15, 4 } },
    "v: " .. core.messages.range .. " (bit 3)" },
  { "quaternion", { "quat", bits = 9 }, { { 3, 2 }, { 511, 9 }, { 511, 9 }, { 511, 9 } },
    "v: quaternion code not in canonical form (bit 3)" },
  { "sparse encoding", { "sparse", of = { "bool" }, max = 5 }, { { 3, 2 } },
    "v: unknown sparse encoding 3 (bit 3)" },
  { "sparse count", { "sparse", of = { "bool" }, max = 5, encoding = "index" }, { { 7, 3 } },
    "v: count 7 above max 5 (bit 3)" },
  { "sparse index", { "sparse", of = { "bool" }, max = 5, encoding = "index" },
    { { 2, 3 }, { 2, 3 }, { 1, 1 }, { 1, 3 } }, "v: index 2 not in [4, 5] (bit 10)" },
  { "sparse index past max", { "sparse", of = { "bool" }, max = 5, encoding = "index" },
    { { 1, 3 }, { 6, 3 } }, "v: index 7 not in [1, 5] (bit 6)" },
  { "relative sparse index", { "sparse", of = { "bool" }, max = 5, encoding = "relative" },
    { { 0, 6 }, { 10, 32 } }, "v: index 10 above max 5 (bit 3)" },
  { "relative sparse index in tiers", { "sparse", of = { "bool" }, max = 6,
    encoding = "relative", tiers = { 1, 3 } }, { { 0, 1 }, { 1, 1 }, { 7, 3 } },
    "v: " .. core.messages.range .. " (bit 3)" },
  { "max_values", { "array", of = { "bool" }, max = 7 }, { { 7, 3 }, { 0, 7 } },
    "v: decode makes more values than max_values allows (bit 6)", max_values = 5 },
  -- deltas: p kept (its changed bit, 0, comes first), v changed, then its
  -- difference: a tier's flag and bits, or a quat's same-index flag first
  { "relative float", { "float", min = 0, max = 10, res = 1, delta = "relative" },
    { { 1, 1 }, { 1, 1 }, { 6, 3 } }, "v: difference from the baseline leaves the range (bit 2)",
    base = 10 },
  { "relative quat component", { "quat", bits = 9, delta = "relative" },
    { { 1, 1 }, { 1, 1 }, { 8, 4 }, { 510, 9 } },
    "v: difference from the baseline leaves the range (bit 3)", base = { 0, 0, 0, 1 } },
  { "relative quat rebuilt", { "quat", bits = 9, delta = "relative" },
    { { 1, 1 }, { 1, 1 }, { 8, 4 }, { 342, 9 }, { 8, 4 }, { 342, 9 }, { 8, 4 }, { 342, 9 } },
    "v: quaternion code not in canonical form (bit 2)", base = { 0, 0, 0, 1 } },
  { "array count in a delta", { "array", of = { "bool" }, max = 5 }, { { 1, 1 }, { 7, 3 } },
    "v: count 7 out of range [0, 5] (bit 2)", base = { true } },
  -- a count whose elements need 2^63 bits or more: exact, then 2^64 - 1;
  -- a delta's product wrapped past 2^64 to 0 and the count went through
  { "array needing past 2^63 bits", { "array", of = { "uint", bits = 2 }, max = 1 << 62 },
    { { 1 << 62, 63 } }, "v: count 4611686018427387904 needs 9223372036854775808 bits or "
      .. "more, 6 left (bit 3)" },
  { "array needing past 2^64 bits", { "array", of = { "uint", bits = 8 }, max = 1 << 62 },
    { { 1 << 62, 63 } }, "v: count 4611686018427387904 needs 18446744073709551615 bits or "
      .. "more, 6 left (bit 3)" },
  { "delta array needing past 2^64 bits", { "array", of = { "uint", bits = 8 }, max = 1 << 62 },
    { { 1, 1 }, { (1 << 61) + 1, 63 }, { 0, 24 } }, "v: count 2305843009213693953 needs "
      .. "18446744073709551615 bits or more, 31 left (bit 2)", base = { 1 },
    max_values = math.maxinteger },
}

describe("dissect's words for a failure", function()
  for _, case in ipairs(CASES) do
    it("are decode's: " .. case[1], function()
      local desc = { "v" }
      for k, v in pairs(case[2]) do desc[type(k) == "number" and k + 1 or k] = v end
      local s = bitwire.schema { T = { { "p", "uint", bits = 3 }, desc } }
      local bytes = packet(case[3])
      local bases = { false }
      if case.base ~= nil then
        -- a baseline by hand, and one the schema decoded (read from its tape)
        local v = { p = 1, v = case.base }
        bases = { v, assert(s:decode("T", s:encode("T", v))) }
        bytes = bitwire.writer():bits(0, 1)
        for _, b in ipairs(case[3]) do bytes:bits(b[1], b[2]) end
        bytes = bytes:tostring()
      end
      for _, base in ipairs(bases) do
        local opts = { baseline = base or nil, max_values = case.max_values }
        local _, want, wcode = s:decode("T", bytes, opts)
        assert.equal(case[4], want)
        local _, msg, code = s:dissect("T", bytes, opts)
        assert.equal(want, msg)
        assert.equal(wcode, code)
      end
    end)
  end

  -- the walk fills the core's own table: a word changed there changes
  -- dissect's, and the Wireshark plugin carries that table
  it("come from the core's formats, the table decode fills", function()
    local s = bitwire.schema { T = { { "v", "int", min = 0, max = 2 } } }
    local saved = core.formats.value
    finally(function () core.formats.value = saved end)
    core.formats.value = "%s is not in [%s, %s]"
    assert.equal("v: 3 is not in [0, 2] (bit 0)", select(2, s:dissect("T", "\3")))
    core.formats.value = saved
    local text = require("bitwire.wireshark").generate(s, { id = 1, wire_id = 1,
      endcheck = true }, { port = 7 })
    assert.matches('["value"]=' .. string.format("%q", saved), text, 1, true)
  end)
end)
