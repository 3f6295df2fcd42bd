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

-- The same for a framed packet's header: decode (s:frame_decode, which
-- bitwire.protocol calls) names each part of the frame that fails by the
-- path dissect.frame gives it (bitwire.core.frame_paths), with the same
-- words, code and bit.
describe("dissect's words for a frame's failure", function()
  local dissect = require "bitwire.dissect"
  local H = require "spec.helpers"
  local s = bitwire.schema { T = { { "a", "uint", bits = 3 } }, U = {}, V = {},
                             messages = { "T", "U", "V" } }
  local TAG = s:tag()
  local ALL = { id = 5, tagged = true, version_bits = 32, deltas = true }
  local CHECK = "\x78\x56\x34\x12"
  -- a frame of protocol 5 around bits ({value, width} each), then 'tail'
  -- (default: the end check)
  local function frame(bits, tail)
    local w = bitwire.writer()
    for _, b in ipairs(bits) do w:bits(b[1], b[2]) end
    return H.forge(5, w:tostring() .. (tail or CHECK))
  end
  -- tag, version 0, not a delta, message T with a = 5
  local GOOD = { { TAG, 32 }, { 0, 32 }, { 0, 1 }, { 0, 2 }, { 5, 3 } }
  -- a delta of baseline 9, a kept
  local DELTA = { { TAG, 32 }, { 0, 32 }, { 1, 1 }, { 9, 16 }, { 0, 2 }, { 0, 1 } }
  local good = frame(GOOD)
  local flipped = good:sub(1, 5) .. string.char(good:byte(6) ~ 4) .. good:sub(7)

  -- { name, header, packet, decode's message, code }; held: the receiver
  -- holds baseline 0 (false: none)
  local FRAMES = {
    { "a packet too short for a frame", ALL, "\1\2\3",
      "frame: packet of 3 bytes, a frame has at least 8 (bit 24)", "truncated" },
    { "a CRC that does not match", ALL, flipped, "frame.crc: CRC32 mismatch: corrupt, or "
      .. "another protocol id or definitions (bit 0)", "crc" },
    { "a wrong end check", ALL, frame(GOOD, "\x78\x56\x34\x13"),
      "frame.check: serialization check failed (bit 104)", "check" },
    { "an end check left out", ALL, frame(GOOD, ""),
      "frame.check: serialization check failed (bit 72)", "check" },
    { "a header cut in the tag", ALL, frame({ { TAG & 0xFFFF, 16 } }),
      "frame.tag: truncated input (bit 32)", "truncated" },
    { "a tag of other definitions", ALL, frame({ { TAG ~ 1, 32 }, { 0, 32 }, { 0, 1 }, { 0, 2 } }),
      string.format("frame.tag: packet for schema %08x, which this registry does not keep "
        .. "(current %s) (bit 32)", TAG ~ 1, s:fingerprint()), "schema" },
    { "a tag other than the one given", { id = 5, tag = TAG ~ 1 },
      frame({ { TAG, 32 }, { 0, 2 }, { 5, 3 } }),
      string.format("frame.tag: packet for schema %08x, this is %08x (bit 32)", TAG, TAG ~ 1),
      "schema" },
    { "a header cut at the version", ALL, frame({ { TAG, 32 } }),
      "frame.version: truncated input (bit 64)", "truncated" },
    { "version 2^32 - 1", ALL, frame({ { TAG, 32 }, { 0xFFFFFFFF, 32 }, { 0, 1 }, { 0, 2 } }),
      "frame.version: version 4294967295 out of range [0, 4294967294] (bit 64)", "range" },
    { "a header cut at the delta bit", ALL, frame({ { TAG, 32 }, { 0, 32 } }),
      "frame.delta: truncated input (bit 96)", "truncated" },
    { "a header cut in the baseline id", ALL, frame({ { TAG, 32 }, { 0, 32 }, { 1, 1 }, { 0, 7 } }),
      "frame.baseline_id: truncated input (bit 97)", "truncated" },
    { "a delta and no baseline held", ALL, frame(DELTA),
      "frame.baseline_id: unknown baseline 9 (bit 97)", "baseline", held = false },
    { "a delta of a baseline not held", ALL, frame(DELTA),
      "frame.baseline_id: unknown baseline 9 (bit 97)", "baseline", held = true },
    { "a header cut at the message id", { id = 5 }, frame({}),
      "frame.type: truncated input (bit 32)", "truncated" },
    { "a message id that names no message", ALL,
      frame({ { TAG, 32 }, { 0, 32 }, { 0, 1 }, { 3, 2 } }),
      "frame.type: message type 3 out of range [0, 2] (bit 97)", "tag" },
    -- taken by both: the CRC covers them, so the sender wrote them
    { "bytes after the message", ALL, frame(GOOD, "\0\7" .. CHECK) },
  }

  for _, case in ipairs(FRAMES) do
    it("are decode's: " .. case[1], function()
      local hdr, bytes = case[2], case[3]
      local base = { a = 1 }
      local held = case.held ~= false and hdr.deltas
      local got, msg, code = s:frame_decode(hdr, bytes, held and { baselines = { [0] = base } } or nil)
      if case[4] ~= nil then assert.same({ case[4], case[5] }, { msg, code }) end
      -- a receiver that holds no baseline knows no id (-1)
      local _, _, v, err = dissect.frame(s, bytes, { wire_id = 5, endcheck = hdr.check ~= false,
        tag = hdr.tag or hdr.tagged, version_bits = hdr.version_bits, deltas = hdr.deltas,
        baseline = held and base or nil, baseline_id = hdr.deltas and (held and 0 or -1) or nil })
      if case[4] == nil then
        assert.same({ "T", { a = 5 } }, { got, msg })
        assert.is_nil(err)
        assert.same({ a = 5 }, v)
      else
        assert.same({ msg, code }, { dissect.errtext(err), err.code })
      end
    end)
  end
end)
