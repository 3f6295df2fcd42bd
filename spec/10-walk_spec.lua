-- bitwire.walk (dissect, cost, the Wireshark dissector) against the C
-- driver: for random values of every field kind, in every sparse encoding,
-- with versions, deltas and frames, the walk must give the value s:decode
-- gives and end on the bit the encoder ended on; on damaged bytes it must
-- fail exactly when decode fails, with the same code.
local bitwire = require "bitwire"
local walk = require "bitwire.walk"
local dissect = require "bitwire.dissect"
local H = require "spec.helpers"

local DESC = {
  Vec3 = { { "x", "float", min = -512, max = 512, res = 0.01 },
           { "y", "float32" }, { "z", "float64" } },
  Item = { { "id", "uint", bits = 12 }, { "count", "int", min = -3, max = 60 } },
  E = {
    { "id", "int", min = -8, max = 4095 },
    { "kind", "enum", values = { "a", "b", "c" } },
    { "pos", "Vec3" },
    { "name", "string", max = 12, optional = true },
    { "tags", "array", of = { "uint", bits = 3 }, max = 5 },
    { "q", "quat", bits = 9 },
    { "t", "tiered", tiers = { 2, 4 }, min = -5, max = 14 },
    { "blob", "bytes", max = 6, optional = true },
    { "key", "bytes", count = 2 },
    { "fixed", "array", of = "Item", count = 2 },
    { "big", "int", min = math.mininteger, max = math.maxinteger },
    { "wide", "uint", bits = 64 },
    { "armor", "int", min = 0, max = 255, since = 2, default = 7 },
    { "old", "bool", removed = 2, default = false },
    { "align" }, { "flag", "bool" }, { "check" },
    { "yaw", "angle", bits = 10, unit = "deg" }, { "roll", "angle", bits = 5 },
  },
  -- relative differences against a baseline: in records, slots, elements
  R = {
    { "x", "float", min = -100, max = 100, res = 0.05, delta = "relative" },
    { "h", "angle", bits = 12, delta = "relative", tiers = { 2, 6 } },
    { "q", "quat", bits = 11, delta = "relative" },
    { "w", "quat", bits = 16, delta = "relative", optional = true },
    { "n", "int", min = 0, max = 9 },
  },
  S = {
    { "tick", "uint", bits = 20 },
    { "mask", "sparse", of = "Item", max = 9, encoding = "mask" },
    { "index", "sparse", of = "Item", max = 40, encoding = "index" },
    { "rel", "sparse", of = { "int", min = 0, max = 9 }, max = 300, encoding = "relative" },
    { "art", "sparse", of = "Item", max = 200, encoding = "relative", tiers = "article" },
    { "auto", "sparse", of = "Item", max = 64 },
    { "ents", "array", of = "E", max = 3 },
    { "me", "E", optional = true },
    { "rs", "array", of = "R", max = 4 },
    { "slots", "sparse", of = { "angle", bits = 9, delta = "relative" }, max = 12 },
    { "speeds", "array", of = { "float", min = 0, max = 50, res = 0.1, delta = "relative" },
      max = 5 },
    { "r", "R" },
  },
}

-- H.lcg's rand(n) gives 0..n-1; these generators give 1..n
local RAW
local function gen(seed)
  RAW = H.lcg(seed)
  return function (n) return RAW(n) + 1 end
end

local s = bitwire.schema(DESC)
local p = s:program()

-- A random value of field 'f' (program form), from generator 'rand'.
local value
local function record(ty, rand, version)
  local t = {}
  for _, f in ipairs(ty.fields) do
    local here = (f.since or 0) <= version and (f.removed == nil or version < f.removed)
    if f.name and here and (not f.optional or rand(2) == 1) then
      t[f.name] = value(f, rand, version)
    end
  end
  return t
end

function value(f, rand, version)
  local k = f.kind
  if k == "int" or k == "tiered" then
    if f.max - f.min > 1 << 40 or f.max - f.min < 0 then
      return ({ f.min, f.max, 0, -1, 1, rand(1 << 30) * (1 << 30) })[rand(6)]
    end
    return f.min + rand(f.max - f.min + 1) - 1
  elseif k == "uint" then
    if f.bits == 64 then return ({ -1, 0, math.maxinteger, rand(1 << 30) })[rand(4)] end
    return rand(1 << f.bits) - 1
  elseif k == "bool" then return rand(2) == 1
  elseif k == "float" then return f.fmin + (f.fmax - f.fmin) * rand(1000) / 1000
  elseif k == "float32" then return (string.unpack("<f", string.pack("<f", rand(1000) / 7)))
  elseif k == "float64" then return rand(100000) / 3
  elseif k == "enum" then return f.values[rand(#f.values)]
  elseif k == "string" then return string.rep("x", rand(f.max + 1) - 1)
  elseif k == "bytes" then
    local n = f.fixed and f.min or f.min + rand(f.max - f.min + 1) - 1
    return H.randbytes(RAW, n)
  elseif k == "array" then
    local n = f.fixed and f.min or f.min + rand(f.max - f.min + 1) - 1
    local t = {}
    for i = 1, n do t[i] = value(f.of, rand, version) end
    return t
  elseif k == "struct" then return record(p.byname[f.type], rand, version)
  elseif k == "sparse" then
    local t, dense = {}, rand(3)
    for i = 1, f.max do
      if rand(dense == 1 and 2 or 30) == 1 then t[i] = value(f.of, rand, version) end
    end
    return t
  elseif k == "angle" then
    -- any turn, negative, and now and then a code's own decode
    if rand(4) == 1 then return (rand(1 << f.bits) - 1) * f.period / (1 << f.bits) end
    return (rand(2000) - 1000) * f.period / 333
  elseif k == "quat" then
    local q = { rand(200) - 100, rand(200) - 100, rand(200) - 100, rand(200) - 100 }
    if q[1] == 0 then q[1] = 1 end
    return q
  end
  error("no generator for " .. k)
end

-- R near its baseline 'b', so relative fields go as short differences
local function near(b, rand)
  local q = b.q
  return { x = b.x + (rand(9) - 5) * 0.05, h = b.h + (rand(9) - 5) * 0.003 - 2 * math.pi * (rand(3) - 2),
           q = { q[1] + rand(5) - 3, q[2], q[3] * 1.01, q[4] }, w = b.w, n = b.n }
end

local function walked(name, bytes, opts)
  local r = bitwire.reader(bytes)
  local v, err = walk.walk(p, name, dissect.reader(r), opts)
  return v, err, r:bits_read()
end

-- 'bytes' cut short, or with one byte replaced
local function damage(bytes, rand)
  local i = rand(#bytes)
  if rand(3) == 1 then return bytes:sub(1, rand(#bytes) - 1) end
  return bytes:sub(1, i - 1) .. string.char(rand(256) - 1) .. bytes:sub(i + 1)
end

-- The walk of 'bad' agrees with s:decode: the same value, or the same
-- failure code and bit. Returns 1 when both failed.
local function agrees(name, bad, opts)
  local want, msg, code = s:decode(name, bad, opts)
  local got, err = walked(name, bad, opts)
  if want == nil then
    assert.is_nil(got)
    assert.equal(code, err.code)
    assert.equal(msg:match("%(bit (%d+)%)$"), tostring(err.bit))
    return 1
  end
  assert.is_nil(err)
  assert.same(want, got)
  return 0
end

describe("bitwire.walk against s:decode", function()
  it("gives decode's value and ends where the encoder ended, 300 random values", function()
    local rand = gen(1234)
    for n = 1, 300 do
      local name = n % 3 == 0 and "E" or "S"
      local version = ({ 0, 1, 2, p.version })[rand(4)]
      local v = record(p.byname[name], rand, version)
      local bytes = s:encode(name, v, { version = version })
      local got, err, endbit = walked(name, bytes, { version = version })
      assert.is_nil(err)
      assert.same(s:decode(name, bytes, { version = version }), got)
      assert.equal(s:bits(name, v, { version = version }), endbit)
    end
  end)

  -- A random baseline as a decode gives it, in tables decode does not know:
  -- a walk copies what a delta keeps as it is, where decode gives a
  -- baseline it did not make as its own decode would (quantized).
  local function baseline (rand)
    return H.copy(s:decode("S", s:encode("S", record(p.byname.S, rand, p.version))))
  end

  it("reads deltas against their baseline as decode does", function()
    local rand = gen(99)
    local seen = {}   -- relative differences read, by kind and shortness
    for _ = 1, 100 do
      local base = baseline(rand)
      local v = record(p.byname.S, rand, p.version)
      if rand(2) == 1 then v.mask = base.mask; v.tick = base.tick end
      v.r = near(base.r, rand)
      for i, x in ipairs(base.rs) do
        if rand(2) == 1 and v.rs[i] then v.rs[i] = near(x, rand) end
      end
      for i, a in pairs(base.slots) do
        if rand(2) == 1 then v.slots[i] = a + (rand(3) - 2) * 0.02 end
      end
      local bytes = s:encode("S", v, { baseline = base })
      local got, err, endbit = walked("S", bytes, { baseline = base, on = function (e)
        if e.role == "delta" and not e.open then
          local k = e.kind .. (e.bits < 9 and " short" or "")
          seen[k] = (seen[k] or 0) + 1
        end
      end })
      assert.is_nil(err)
      assert.same(s:decode("S", bytes, { baseline = base }), got)
      assert.equal(s:bits("S", v, { baseline = base }), endbit)
    end
    for _, k in ipairs { "float", "float short", "angle", "angle short", "quat" } do
      assert.is_true((seen[k] or 0) > 5, k)
    end
  end)

  it("fails where decode fails, with the same code and bit, on damaged bytes", function()
    local rand = gen(7)
    local failures = 0
    for _ = 1, 400 do
      local v = record(p.byname.S, rand, p.version)
      failures = failures + agrees("S", damage(s:encode("S", v), rand))
    end
    assert.is_true(failures > 50)
  end)

  -- decode counts the values it makes (SECURITY.md, max_values): a walk
  -- that did not made millions of entries from a short hostile packet
  it("fails where decode runs out of max_values, at its bit", function()
    local rand = gen(17)
    local failures = 0
    for n = 1, 300 do
      local name = n % 3 == 0 and "E" or "S"
      local bytes = s:encode(name, record(p.byname[name], rand, p.version))
      failures = failures + agrees(name, bytes, { max_values = rand(300) - 1 })
    end
    assert.is_true(failures > 100)
    for _ = 1, 100 do   -- deltas: dissect gives the driver's failure
      local base = baseline(rand)
      local v = record(p.byname.S, rand, p.version)
      local opts = { baseline = base, max_values = rand(300) - 1 }
      local bytes = s:encode("S", v, { baseline = base })
      local want, msg, code = s:decode("S", bytes, opts)
      local _, err, ecode = s:dissect("S", bytes, opts)
      assert.equal(want == nil and msg or nil, err)
      assert.equal(code, ecode)
    end
  end)

  it("stops a packet of empty records at max_values, as decode does", function()
    local z = bitwire.schema { Z = {}, T = { { "xs", "array", max = 40,
      of = { "array", of = "Z", max = 65535 } } } }
    -- an inner array is 1 + 65535 values, its 65535 records as many again
    local w = bitwire.writer():int(9, 0, 40)
    for _ = 1, 9 do w:int(65535, 0, 65535) end
    local bytes = w:tostring()
    -- a small limit for both (the default is one million values, slow to
    -- reach under valgrind), and the walk's default is decode's
    local opts = { max_values = 5000 }
    local _, msg, code = z:decode("T", bytes, opts)
    local list, err, ecode = z:dissect("T", bytes, opts)
    assert.equal("xs[1]: decode makes more values than max_values allows (bit 22)", msg)
    assert.equal(msg, err)
    assert.equal(code, ecode)
    assert.is_true(#list <= 5000)
    assert.equal(bitwire.MAX_VALUES, walk.MAX_VALUES)
  end)

  it("fails where decode fails on damaged deltas and versioned records too", function()
    local rand = gen(71)
    local failures = 0
    for n = 1, 300 do
      local opts
      local name = n % 2 == 0 and "E" or "S"
      local v
      if name == "S" then
        opts = { baseline = baseline(rand) }
        v = record(p.byname.S, rand, p.version)
        v.r = near(opts.baseline.r, rand)
      else
        opts = { version = rand(4) - 1 }
      end
      v = v or record(p.byname[name], rand, opts.version or p.version)
      failures = failures + agrees(name, damage(s:encode(name, v, opts), rand), opts)
    end
    assert.is_true(failures > 30)
  end)

  it("reads frames as bitwire.protocol decodes them", function()
    local rand = gen(5)
    for _, o in ipairs { { id = 1 }, { id = 0x1234, check = false },
                         { id = 9, deltas = true }, { id = 3, fingerprint = false } } do
      local proto = bitwire.protocol(s, o)
      for _ = 1, 20 do
        local name = rand(2) == 1 and "E" or "S"
        local v = record(p.byname[name], rand, p.version)
        local bytes = proto:encode(name, v)
        local list, h, got, err = dissect.frame(s, bytes, { wire_id = dissect.wire_id(proto),
          endcheck = proto.endcheck, deltas = o.deltas })
        assert.is_nil(err)
        local wname, want = proto:decode(bytes)
        assert.equal(wname, h.name)
        assert.same(want, got)
        assert.equal("frame.crc", list[1].path)
        assert.is_falsy(list[1].bad)
        if proto.endcheck then assert.equal("frame.check", list[#list].path) end
      end
    end
  end)

  it("flags a bad CRC and still shows the fields", function()
    local proto = bitwire.protocol(s, { id = 1 })
    local bytes = proto:encode("Item", { id = 5, count = 2 })
    local list, h, v, err = dissect.frame(s, bytes, { wire_id = dissect.wire_id(proto) + 1,
      endcheck = true })
    assert.equal("crc", err.code)
    assert.is_true(list[1].bad)
    assert.equal("Item", h.name)
    assert.same({ id = 5, count = 2 }, v)
  end)

  it("refuses version 2^32 - 1 in a header, as the core does", function()
    local proto = bitwire.protocol(s, { id = 1, version_bits = 32 })
    local good = proto:encode("Item", { id = 5, count = 2 }, { version = 4294967294 })
    local bytes = H.forge(proto:wire_id(), "\255" .. good:sub(6))
    local _, want, wcode = proto:decode(bytes)
    local list, h, v, err = dissect.frame(s, bytes, { wire_id = proto:wire_id(),
      endcheck = true, version_bits = 32 })
    assert.is_nil(h)
    assert.is_nil(v)
    assert.equal(wcode, err.code)
    assert.equal("frame.version: version 4294967295 out of range [0, 4294967294] (bit 32)", want)
    assert.equal(want, dissect.errtext(err))
    assert.equal(4294967295, list[#list].value)
  end)

  it("words a header cut short as a field cut short, its bit given once", function()
    local bytes = H.forge(0, "\x78\x56\x34\x12")
    local _, h, _, err = dissect.frame(s, bytes, { wire_id = 0, endcheck = true, deltas = true })
    assert.is_nil(h)
    assert.equal("frame.delta: truncated input (bit 32)", dissect.errtext(err))
    assert.equal("truncated", err.code)
  end)

  it("refuses a delta of another baseline before its message type, as the core does", function()
    local hdr = { id = 3, deltas = true }
    local t = bitwire.schema { A = { { "a", "bool" } }, B = {}, C = {} }   -- ids 0..2
    -- delta bit, baseline id 7, message type 3 (none), then the end check
    local body = bitwire.writer():bits(1, 1):bits(7, 16):bits(3, 2):tostring()
    local bytes = H.forge(3, body .. "\x78\x56\x34\x12")
    local _, want, wcode = t:frame_decode(hdr, bytes, { baselines = { [5] = {} } })
    assert.equal("frame.baseline_id: unknown baseline 7 (bit 33)", want)
    local _, h, v, err = dissect.frame(t, bytes, { wire_id = 3, endcheck = true,
      deltas = true, baseline = {}, baseline_id = 5 })
    assert.is_nil(h)
    assert.is_nil(v)
    assert.equal(wcode, err.code)
    assert.equal(want, dissect.errtext(err))
  end)

  it("refuses a tagged frame of other definitions, as the core does", function()
    local other = bitwire.schema { Item = DESC.Item, Z = { { "z", "bool" } } }
    local hdr = { id = 3, tagged = true }
    local bytes = other:frame_encode(hdr, "Item", { id = 5, count = 2 })
    local frame = { wire_id = 3, endcheck = true, tag = true }
    local _, want, wcode = s:frame_decode(hdr, bytes)
    local list, h, v, err = dissect.frame(s, bytes, frame)
    assert.is_nil(h)
    assert.is_nil(v)
    assert.equal(wcode, err.code)
    assert.matches("^frame%.tag: packet for schema %x+, which this registry", want)
    assert.equal(want, dissect.errtext(err))
    assert.equal("frame.tag", list[#list].path)
    -- its own frames read
    _, _, v, err = dissect.frame(other, bytes, frame)
    assert.is_nil(err)
    assert.same({ id = 5, count = 2 }, v)
  end)
end)

describe("hostile bytes through dissect.frame and bitwire.json", function()
  it("never raise: a result or an error with a code", function()
    local rand = gen(13)
    local proto = bitwire.protocol(s, { id = 9, deltas = true })
    local good = proto:encode("S", record(p.byname.S, rand, p.version))
    for n = 1, 300 do
      local bytes
      if n % 2 == 0 then bytes = H.randbytes(RAW, rand(64) - 1)
      else   -- a real frame, one byte changed: the CRC fails and the rest is still read
        local i = rand(#good - 4) + 4
        bytes = good:sub(1, i - 1) .. string.char(rand(256) - 1) .. good:sub(i + 1)
      end
      for _, frame in ipairs { { wire_id = dissect.wire_id(proto), endcheck = true, deltas = true },
                               { wire_id = 0, endcheck = false, tag = true, version_bits = 7 } } do
        local ok, list, _, v, err = pcall(dissect.frame, s, bytes, frame)
        assert.is_true(ok, list)
        assert.is_table(list)
        if v == nil then assert.is_string(err.code) end
      end
      local ok, v, msg = pcall(bitwire.json.decode, s, "S", bytes)
      assert.is_true(ok, v)
      if v == nil then assert.is_string(msg) end
    end
  end)
end)

describe("bitwire.walk of a kind it does not know", function()
  it("fails with code schema instead of raising", function()
    local prog = { version = 0, typebits = 0, types = {}, byname = {} }
    prog.byname.T = { name = "T", fields = { { name = "a", kind = "bool" },
      { name = "z", kind = "zorp" } } }
    local v, err = walk.walk(prog, "T", dissect.reader(bitwire.reader("\1")))
    assert.is_nil(v)
    assert.equal("schema", err.code)
    assert.equal("z", err.path)
    assert.equal(1, err.bit)
  end)
end)

describe("s:dissect", function()
  it("lists path, bit, width and value of each field in wire order", function()
    local t = bitwire.schema { T = { { "a", "uint", bits = 3 },
      { "b", "string", max = 7, optional = true }, { "c", "int", min = -1, max = 1 } } }
    local list = t:dissect("T", t:encode("T", { a = 5, b = "hi", c = -1 }))
    local rows = {}
    for _, e in ipairs(list) do rows[#rows + 1] = { e.path, e.bit, e.bits, e.value } end
    assert.same({ { "a", 0, 3, 5 }, { "b?", 3, 1, 1 }, { "b", 4, 3 + 1 + 16, "hi" },
                  { "c", 24, 2, -1 } }, rows)
  end)

  it("returns the fields up to a failure, then the message and code", function()
    local t = bitwire.schema { T = { { "a", "uint", bits = 8 }, { "b", "int", min = 0, max = 100 } } }
    local list, msg, code = t:dissect("T", "\5\127")
    assert.equal(1, #list)
    assert.equal(5, list[1].value)
    assert.equal("range", code)
    assert.matches("^b: .*%(bit 8%)$", msg)
    local _, dmsg, dcode = t:decode("T", "\5\127")
    assert.equal(dcode, code)
    assert.matches("(bit 8)", dmsg, 1, true)
  end)

  -- a delta keeps its baseline's values: one missing or out of its range is
  -- the driver's 'baseline' failure, which dissect must not call ok
  it("fails where decode refuses what a delta keeps of its baseline", function()
    local t = bitwire.schema { T = { { "a", "uint", bits = 4 },
      { "e", "array", of = { "int", min = 0, max = 9 }, max = 3 } } }
    local good = { a = 1, e = { 5 } }
    local delta = t:encode("T", { a = 2, e = { 5 } }, { baseline = good })
    for _, base in ipairs { { a = 1 }, { a = 1, e = { 50 } } } do
      local _, want, wcode = t:decode("T", delta, { baseline = base })
      local list, msg, code = t:dissect("T", delta, { baseline = base })
      assert.same({ want, wcode }, { msg, code })
      assert.equal("e^", list[#list].path)
      local proto = bitwire.protocol(t, { id = 7, deltas = true })
      local framed = proto:encode("T", { a = 2, e = { 5 } }, { baseline = good, baseline_id = 3 })
      local _, _, _, err = dissect.frame(t, framed, { wire_id = proto:wire_id(),
        endcheck = true, deltas = true, baseline = base })
      _, want = proto:decode(framed, { baselines = { [3] = base } })
      assert.equal(want, dissect.errtext(err))
    end
    assert.is_nil(select(2, t:dissect("T", delta, { baseline = good })))
  end)

  -- the plugin's reader words a failure as the core does: so must dissect's
  it("fails as decode does where a kept value is missing and the next field is bad", function()
    local t = bitwire.schema { T = { { "a", "int", min = 0, max = 3 }, { "check" } } }
    -- a kept, which the baseline lacks (bit 1), then non-zero padding at bit 1
    local bytes = "\x02\0\0\0\0"
    local _, want, wcode = t:decode("T", bytes, { baseline = {} })
    assert.equal("a: unchanged, but the baseline has no value (bit 1)", want)
    local _, err, code = t:dissect("T", bytes, { baseline = {} })
    assert.equal(want, err)
    assert.equal(wcode, code)
  end)

  -- a failure on a bit that belongs to a field (its presence or changed
  -- bit, a count, a slot's mask bit, an index, padding) was named by its
  -- entry ("o?", "a#", "s[2]?", "r.(align)"): decode names the field or
  -- array, and the record for padding and checks
  it("names the path decode names for a failure on a field's own bits", function()
    local R = { { "x", "uint", bits = 3 }, { "align" }, { "check" } }
    local function sparse(enc) return { { "p", "uint", bits = 8 },
      { "s", "sparse", of = { "bool" }, max = 4, encoding = enc } } end
    for _, c in ipairs {
      { { { "p", "uint", bits = 8 }, { "o", "bool", optional = true } }, "\5",
        "o: truncated input (bit 8)" },
      { { { "p", "uint", bits = 8 }, { "o", "bool", optional = true } }, "",
        "p: truncated input (bit 0)", { baseline = { p = 1 } } },
      { { { "p", "uint", bits = 6 }, { "o", "bool", optional = true } }, "\129",
        "o: truncated input (bit 8)", { baseline = { p = 1 } } },
      { { { "p", "uint", bits = 8 }, { "a", "array", of = { "bool" }, max = 5 } }, "\5",
        "a: truncated input (bit 8)" },
      { { { "p", "uint", bits = 8 }, { "a", "array", of = { "uint", bits = 7 }, max = 63 } },
        "\10\11", "a[2]: truncated input (bit 16)", { baseline = { p = 1, a = { 1, 1 } } } },
      { sparse("mask"), "\5", "s: truncated input (bit 8)" },
      { sparse("index"), "\5", "s: truncated input (bit 8)" },
      { sparse("auto"), "\5", "s: truncated input (bit 8)" },
      { sparse("mask"), "\174", "s[3]: truncated input (bit 8)",
        { baseline = { p = 1, s = {} } } },
      { sparse("mask"), "\5\15", "s: decode makes more values than max_values allows (bit 9)",
        { max_values = 4 } },
      { { { "r", "R" } }, "\255", "r: non-zero padding bits (bit 3)" },
      { { { "r", "R" } }, "\1\0\0\0\0", "r: serialization check failed (bit 8)" },
      { { { "x", "uint", bits = 3 }, { "check" } }, "\1\0\0\0\0",
        "serialization check failed (bit 8)" },
    } do
      local t = bitwire.schema { R = R, T = c[1] }
      local _, want, wcode = t:decode("T", c[2], c[4])
      assert.equal(c[3], want)
      local _, msg, code = t:dissect("T", c[2], c[4])
      assert.same({ want, wcode }, { msg, code })
    end
  end)

  it("words a bytes length's failure as the other fields' and the plugin's", function()
    local t = bitwire.schema { T = { { "a", "uint", bits = 7 }, { "b", "bytes", max = 5 } } }
    local _, msg, code = t:dissect("T", "\3")
    assert.same({ "b: truncated input (bit 7)", "truncated" }, { msg, code })
    _, msg, code = t:dissect("T", "\0\3")
    assert.same({ "b: length 6 out of range [0, 5] (bit 7)", "range" }, { msg, code })
    assert.same({ msg, code }, { select(2, t:decode("T", "\0\3")) })
  end)

  -- the walk read slot indices with serialize.h's signed int_relative, so
  -- a slot past 2^31 - 1 (its 32-bit escape) was range at bit 0
  it("reads a relative sparse array's slots up to 2^32 - 2, as decode does", function()
    local t = bitwire.schema { T = { { "x", "sparse", of = { "bool" }, max = 0xFFFFFFFE,
                                       encoding = "relative" } } }
    local v = { x = { [3] = true, [3000000000] = true, [3000000001] = false,
                      [0xFFFFFFFE] = true } }
    local bytes = t:encode("T", v)
    local list, msg = t:dissect("T", bytes)
    assert.is_nil(msg)
    local slots = {}
    for _, e in ipairs(list) do
      if e.path == "x@" then slots[#slots + 1] = e.value end
    end
    assert.same({ 3, 3000000000, 3000000001, 0xFFFFFFFE, 0xFFFFFFFF }, slots)
    -- and fails where decode fails: an escape to a slot, then no more bits
    local cut = bytes:sub(1, 6)
    local _, dmsg, dcode = t:decode("T", cut)
    local _, wmsg, wcode = t:dissect("T", cut)
    assert.equal(dcode, wcode)
    assert.equal(dmsg:match("%(bit %d+%)$"), wmsg:match("%(bit %d+%)$"))
  end)

  it("takes a relative quat's baseline only when decode does: four numbers", function()
    -- decode sends the value whole from a baseline it cannot encode; the
    -- walk read a same-index flag there and ran out of bits
    local t = bitwire.schema { T = { { "q", "quat", bits = 7, delta = "relative" } } }
    for _, q in ipairs { { "a", 1, 0, 0 }, { "0", 1, 0, 0 }, { 0, 1, 0, 0, 5 },
                         { 0, 1, 0, 0 } } do
      local opts = { baseline = { q = q } }
      local bytes = t:encode("T", { q = { 0, 1, 0, 0.3 } }, opts)
      local v = assert(t:decode("T", bytes, opts))
      local list, msg = t:dissect("T", bytes, opts)
      assert.is_nil(msg)
      assert.same(v.q, list[#list].value)
      assert.equal(t:bits("T", v, opts), list[#list].bit + list[#list].bits)
    end
  end)

  it("reads a sparse slot holding an array or a sparse array as a delta, as decode does", function()
    local t = bitwire.schema { T = {
      { "a", "sparse", max = 8, encoding = "index",
        of = { "array", max = 6, of = { "int", min = 1, max = 4 } } },
      { "s", "sparse", max = 4, encoding = "mask",
        of = { "sparse", max = 3, encoding = "mask", of = { "int", min = 0, max = 3 } } } } }
    local base = { a = { [2] = { 4, 4, 2, 1 }, [5] = { 2, 3 } }, s = { [1] = { [2] = 1 } } }
    local v = { a = { [2] = { 4, 4, 2, 1, 3 }, [6] = { 2, 2 } }, s = { [1] = { [2] = 2, [3] = 0 } } }
    local opts = { baseline = base }
    local bytes = t:encode("T", v, opts)
    local list, msg = t:dissect("T", bytes, opts)
    assert.is_nil(msg)
    local last = list[#list]
    assert.equal(t:bits("T", v, opts), last.bit + last.bits)
    local d = assert(t:decode("T", bytes, opts))
    assert.same(d.a[2], v.a[2])
    assert.same(d.s[1], v.s[1])
  end)

  -- The delta of 'v' against opts.baseline (type T of 't'): dissect reads
  -- it without an error to the bit s:bits counts, and cost counts as many.
  -- Returns its decode and dissect's list.
  local function walksdelta (t, v, opts)
    local bytes = t:encode("T", v, opts)
    local d = assert(t:decode("T", bytes, opts))
    local list, msg = t:dissect("T", bytes, opts)
    assert.is_nil(msg)
    assert.equal(t:bits("T", v, opts), list[#list].bit + list[#list].bits)
    assert.equal(t:bits("T", v, opts), select(2, t:cost("T", v, opts)))
    return d, list
  end

  it("reads a record whose baseline value is no table in full, as decode does", function()
    local t = bitwire.schema { P = { { "x", "int", min = 0, max = 7 }, { "y", "int", min = 0, max = 7 } },
                               T = { { "p", "P" }, { "n", "int", min = 0, max = 3 } } }
    local v = { p = { x = 1, y = 2 }, n = 1 }
    assert.same(v, (walksdelta(t, v, { baseline = { p = 5, n = 1 } })))
  end)

  it("reads a sparse array in full when its baseline has a key that is no slot", function()
    local t = bitwire.schema { T = { { "s", "sparse", max = 4, encoding = "mask",
                                       of = { "int", min = 0, max = 3 } } } }
    for _, b in ipairs { { [1] = 2, [7] = 1 }, { [1] = 2, x = 1 }, { [0] = 1 } } do
      local v = { s = { [1] = 3 } }
      assert.same(v, (walksdelta(t, v, { baseline = { s = b } })))
    end
  end)

  it("counts an array baseline up to its first hole, as decode does", function()
    local t = bitwire.schema { T = { { "a", "array", of = { "int", min = 0, max = 15 }, max = 7 } } }
    local b = { 1, 2, 3 }
    b[4] = 4
    b[3] = nil   -- '#b' may be 4; the driver counts 2
    for _, base in ipairs { b, { nil, 2, 3 } } do
      local v = { a = { 1, 2, 9, 5 } }
      assert.same(v, (walksdelta(t, v, { baseline = { a = base } })))
    end
  end)

  it("takes a relative field the baseline lacks from its default, as decode does", function()
    local t = bitwire.schema { T = {
      { "f", "float", min = 0, max = 10, res = 0.5, default = 2, delta = "relative" },
      { "h", "angle", bits = 8, default = 1, delta = "relative" },
      { "n", "int", min = 0, max = 3 } } }
    local d, list = walksdelta(t, { f = 2.5, h = 1.1, n = 1 }, { baseline = {} })
    assert.equal(d.f, list[2].value)
  end)

  it("raises on a type that does not exist or bytes that are not a string", function()
    assert.has_error(function() s:dissect("Nope", "") end, "dissect: no type 'Nope' in this schema")
    assert.has_error(function() s:dissect("S", 5) end)
  end)

  it("refuses the options s:decode refuses, at the caller's line", function()
    local t = bitwire.schema { T = { { "a", "uint", bits = 3 },
      { "b", "uint", bits = 3, since = 2 } } }
    local b = t:encode("T", { a = 1, b = 2 })
    for _, o in ipairs { { versoin = 1 }, { version = -1 }, { version = 1.5 },
                         { version = 4294967295 }, { baseline = 3 }, { max_values = 1.5 },
                         { max_values = -1 }, { max_values = "5" }, { version = "1" }, 7 } do
      local ok, err = pcall(function () local list = t:dissect("T", b, o); return list end)
      assert.is_false(ok)
      assert.matches("^[^:]*10%-walk_spec%.lua:%d+: dissect: ", err)
      assert.is_false(pcall(t.decode, t, "T", b, o))
    end
    assert.has_error(function () t:dissect("T", b, { versoin = 1 }) end,
      "dissect: unknown option 'versoin' (known: baseline, max_values, version)")
    assert.equal(2, #t:dissect("T", b, { version = 2.0 }))
    assert.equal(1, #t:dissect("T", b, { version = 1 }))
  end)
end)

describe("s:cost", function()
  it("adds up to s:bits, largest first, presence and count bits to their field", function()
    local rand = gen(11)
    for _ = 1, 30 do
      local v = record(p.byname.S, rand, p.version)
      local list, total = s:cost("S", v)
      assert.equal(s:bits("S", v), total)
      local sum = 0
      for i, c in ipairs(list) do
        sum = sum + c.bits
        if i > 1 then assert.is_true(list[i - 1].bits >= c.bits) end
      end
      assert.equal(total, sum)
    end
    local t = bitwire.schema { T = { { "n", "string", max = 7, optional = true },
      { "a", "array", of = { "uint", bits = 4 }, max = 3 } } }
    local list = t:cost("T", { n = "abc", a = { 1, 2 } })
    assert.same({ { path = "n", bits = 1 + 3 + 4 + 24 }, { path = "a[1]", bits = 4 },
      { path = "a[2]", bits = 4 }, { path = "a", bits = 2 } }, list)
  end)

  -- rows were keyed by path text: field "x[1]" took array x's element 1,
  -- "r.a" record r's field a, and "s[2]" an empty slot's mask bit
  it("counts a value of more values than decode's max_values", function()
    local t = bitwire.schema { T = { { "xs", "array", of = { "bool" }, max = 2000000 } } }
    local xs = {}
    for i = 1, 101 do xs[i] = true end
    -- the walk's default limit made small: a cost that counted against it
    -- (as it did) fails here as it did past a million values
    local saved = walk.MAX_VALUES
    finally(function () walk.MAX_VALUES = saved end)
    walk.MAX_VALUES = 100
    local rows, total = t:cost("T", { xs = xs })
    assert.equal(t:bits("T", { xs = xs }), total)
    assert.equal("xs", rows[1].path)
  end)

  it("keeps fields apart whose names read as another field's path", function()
    local t = bitwire.schema { R = { { "a", "uint", bits = 3 } }, T = {
      { "x", "array", of = { "uint", bits = 8 }, max = 3 }, { "x[1]", "uint", bits = 10 },
      { "r", "R" }, { "r.a", "uint", bits = 5 }, { "y?", "bool" }, { "y", "bool", optional = true },
      { "s", "sparse", of = { "uint", bits = 4 }, max = 3, encoding = "mask" },
      { "s[2]", "uint", bits = 6 } } }
    local v = { x = { 1, 2 }, ["x[1]"] = 7, r = { a = 1 }, ["r.a"] = 2, ["y?"] = true,
                y = false, s = { [1] = 9 }, ["s[2]"] = 3 }
    local function rows(list)
      local o = {}
      for _, c in ipairs(list) do o[#o + 1] = c.path .. " " .. c.bits end
      return o
    end
    assert.same({ "x[1] 10", "x[1] 8", "x[2] 8", "s[2] 6", "r.a 5", "s[1] 5", "r.a 3",
                  "x 2", "y 2", "s 2", "y? 1" }, rows(t:cost("T", v)))
    assert.same({ "x[] 16", "x[1] 10", "s[2] 6", "r.a 5", "s[] 5", "r.a 3", "x 2", "y 2",
                  "s 2", "y? 1" }, rows(dissect.cost_by_field(t, "T", v)))
  end)
end)

describe("bitwire.walk's source", function()
  it("stays in the Lua 5.2 subset that Wireshark's plugins run on", function()
    local f = assert(io.open(assert(package.searchpath("bitwire.walk", package.path))))
    local src = f:read("a")
    f:close()
    -- without comments and strings, no 5.3 operator or library is left
    local code = src:gsub("%-%-[^\n]*", ""):gsub('"[^"\n]*"', '""')
    for _, bad in ipairs { "//", "<<", ">>", "&", "|", "math.type", "math.tointeger",
                           "string.pack", "string.unpack", "table.move", "utf8." } do
      assert.is_nil(code:find(bad, 1, true), "walk.lua uses " .. bad)
    end
    assert.is_nil(code:find("[^~=<>]~[^=]"), "walk.lua uses the ~ operator")
  end)
end)
