-- Blobs: s:blob, s:unblob, s:blobview, s:blob_layout (WIRE.md, "Blobs").
local bitwire = require "bitwire"
local H = require "spec.helpers"
local errorof, contains = H.errorof, H.contains

local DESC = {
  Vec3 = { { "x", "float32" }, { "y", "float32" }, { "z", "float32" } },
  Entity = {
    { "id", "int", min = 0, max = 4095 },
    { "kind", "enum", values = { "player", "grunt", "weapon" } },
    { "pos", "Vec3" },
    { "health", "int", min = -100, max = 100 },
    { "at_rest", "bool" },
    { "name", "string", max = 16, optional = true },
    { "target", "Vec3", optional = true },
    { "tags", "array", of = { "int", min = -5, max = 5 }, max = 4 },
    { "q", "quat", bits = 9 },
    { "key", "bytes", count = 3 },
    { "blob", "bytes", max = 8 },
    { "speed", "float", min = 0, max = 10, res = 0.01 },
    { "mass", "float64" },
    { "flags", "uint", bits = 12 },
    { "big", "uint", bits = 64 },
    { "near", "sparse", of = "Vec3", max = 10 },
    { "grid", "array", of = { "int", min = 0, max = 9 }, count = 3 },
    { "lvl", "tiered", tiers = { 2, 4 } },
    { "hit", "int", min = 0, max = 100, optional = true },
  },
  Snapshot = {
    { "tick", "uint", bits = 20 },
    { "entities", "array", of = "Entity", max = 64 },
    { "names", "array", of = { "string", max = 8 }, max = 4 },
  },
}

local function entity(i)
  return {
    id = i, kind = ({ "player", "grunt", "weapon" })[i % 3 + 1],
    pos = { x = i, y = -i, z = 0.5 }, health = i % 2 == 0 and -7 or 100,
    at_rest = i % 2 == 0, name = i % 3 == 0 and "n" .. i or nil,
    target = i % 4 == 0 and { x = 1, y = 2, z = 3 } or nil,
    tags = { i % 5, -(i % 5) }, q = { 0, 0, 0, 1 }, key = "k" .. (i % 10) .. "!",
    blob = string.rep("\0", i % 3), speed = 2.5, mass = 1e-300 * i,
    flags = 4095, big = -1, near = { [2] = { x = 1, y = 1, z = 1 }, [10] = { x = i, y = 0, z = 0 } },
    grid = { 1, 2, i % 10 }, lvl = 19, hit = i % 2 == 1 and 42 or nil,
  }
end

local function snapshot(n)
  local es = {}
  for i = 1, n do es[i] = entity(i) end
  return { tick = 1048575, entities = es, names = { "", "héé", "abc" } }
end

describe("schema:blob and schema:unblob", function()
  local s = bitwire.schema(DESC)

  it("round-trip every field kind", function()
    local v = snapshot(9)
    local got = assert(s:unblob("Snapshot", s:blob("Snapshot", v)))
    assert.same(v, got)
  end)

  it("start with the header: magic, format, flags, fingerprint, version, root, size", function()
    local b = s:blob("Snapshot", snapshot(2))
    local magic, format, flags, fp, version, root, size, reserved =
      string.unpack("<c4 I2 I2 I8 I4 I4 I4 I4", b)
    assert.equal("BWBL", magic)
    assert.equal(1, format)
    assert.equal(1, flags)
    assert.equal(s:blob_layout().types[root + 1].fingerprint, string.format("%016x", fp))
    assert.equal(0, version)
    assert.equal("Snapshot", s:types()[root + 1])
    assert.equal(#b, size)
    assert.equal(0, reserved)
    assert.equal(0, #b % 8)
  end)

  it("keep a quantized float's range as stored, so what is read writes again", function()
    local d = bitwire.schema { T = { { "v", "float", min = 0, max = 0.1, res = 0.001 } } }
    local b = d:blob("T", { v = 0.1 })
    local t = assert(d:unblob("T", b))
    assert.equal(string.unpack("<f", string.pack("<f", 0.1)), t.v)
    assert.equal(b, d:blob("T", t))
  end)

  it("store values, not quantized bits", function()
    local v = entity(1)
    v.speed, v.pos.x = 1.2345, 0.1
    local got = s:unblob("Entity", s:blob("Entity", v))
    assert.equal(string.unpack("<f", string.pack("<f", 1.2345)), got.speed)
    assert.equal(string.unpack("<f", string.pack("<f", 0.1)), got.pos.x)
  end)

  it("raise naming the field on a value that does not fit", function()
    local cases = {
      { function (v) v.entities[2].health = 101 end, "entities%[2%]%.health: 101 out of range" },
      { function (v) v.entities[1].kind = "boss" end, "entities%[1%]%.kind: unknown enum value 'boss'" },
      { function (v) v.entities[1].name = string.rep("x", 17) end, "entities%[1%]%.name: length 17" },
      { function (v) v.entities[1].name = "\255" end, "malformed UTF%-8" },
      { function (v) v.entities[1].key = "ab" end, "entities%[1%]%.key: length 2 must be exactly 3" },
      { function (v) v.entities[1].grid = { 1 } end, "count 1 must be exactly 3" },
      { function (v) v.entities[1].pos = nil end, "entities%[1%]%.pos: missing field" },
      { function (v) v.entities[1].speed = 11 end, "speed: 11" },
      { function (v) v.names = { "a", "b", "c", "d", "e" } end, "names: count 5 out of range" },
      { function (v) v.entities[1].tags[1] = "1" end, "expected an integer, got string" },
      { function (v) v.entities[1].tags[1] = 1.5 end, "tags%[1%]: expected an integer, got 1%.5" },
      { function (v) v.entities[1].q = { 0, 0, 1 } end,
        "entities%[1%]%.q: quaternion needs 4 components, got 3" },
      { function (v) v.entities[1].q = 1 end, "q: expected a table {x, y, z, w}, got number" },
    }
    for _, c in ipairs(cases) do
      local v = snapshot(2)
      c[1](v)
      local ok, err = pcall(s.blob, s, "Snapshot", v)
      assert.is_false(ok, c[2])
      assert.matches(c[2], err)
    end
  end)

  it("refuse or clamp an int of a 64-bit range at both ends, as encode does", function()
    local m = math.maxinteger
    local w = bitwire.schema {
      T = { { "k", "int", min = 100, max = 5000000000 } },
      H = { { "k", "int", min = m - 3, max = m } },
      C = { { "k", "int", min = 100, max = 5000000000, clamp = true },
            { "j", "int", min = 0, max = 9, clamp = true } },
    }
    for _, c in ipairs { { "T", 7 }, { "T", 99 }, { "T", 5000000001 }, { "H", 0 }, { "H", m - 4 } } do
      local ok, err = pcall(w.blob, w, c[1], { k = c[2] })
      assert.is_false(ok, c[1] .. " " .. c[2])
      assert.matches("k: " .. c[2] .. " out of range", err)
      assert.is_false((pcall(w.encode, w, c[1], { k = c[2] })))
    end
    assert.equal(m - 1, w:unblob("H", w:blob("H", { k = m - 1 })).k)
    for _, v in ipairs { { k = 7, j = 40 }, { k = 6000000000, j = -3 } } do
      assert.same(w:decode("C", w:encode("C", v)), w:unblob("C", w:blob("C", v)))
    end
  end)

  it("refuse a sparse key that is no slot, as encode does, not drop it", function()
    local d = bitwire.schema { T = { { "m", "sparse", of = { "int", min = 0, max = 9 }, max = 4 } } }
    for _, m in ipairs { { [5] = 1 }, { [0] = 1 }, { x = 1 }, { [1.5] = 1 }, { [2] = 1, [7] = 3 } } do
      assert.is_false((pcall(d.encode, d, "T", { m = m })))
      local ok, err = pcall(d.blob, d, "T", { m = m })
      assert.is_false(ok)
      assert.matches("m: sparse keys must be integers in [1, 4]", err, 1, true)
    end
    assert.same({ m = { [4] = 9 } }, d:unblob("T", d:blob("T", { m = { [4] = 9 } })))
  end)

  it("clamp a negative value to min when the int's C type is uint64, as encode does", function()
    local w = bitwire.schema {
      C = { { "k", "int", min = 100, max = 5000000000, clamp = true } },   -- uint64_t
      D = { { "k", "int", min = 0, max = 10, clamp = true, ctype = "uint64" } },
      M = { { "k", "int", min = 0, max = math.maxinteger, clamp = true } } }
    for _, c in ipairs { { "C", -5, 100 }, { "C", math.mininteger, 100 }, { "D", -1, 0 },
                         { "M", -1, 0 }, { "D", 11, 10 } } do
      local v = { k = c[2] }
      assert.equal(c[3], w:decode(c[1], w:encode(c[1], v)).k)
      assert.equal(c[3], w:unblob(c[1], w:blob(c[1], v)).k, c[1] .. " " .. c[2])
    end
  end)

  it("fill a missing field that has a default", function()
    local d = bitwire.schema { T = { { "a", "int", min = 0, max = 9, default = 4 } } }
    assert.same({ a = 4 }, d:unblob("T", d:blob("T", {})))
  end)

  it("refuse keys no field has when strict, the schema's or the call's, as encode does", function()
    local desc = { T = { { "a", "int", min = 0, max = 3 }, { "p", "P" }, { "ps", "array", of = "P", max = 3 } },
                   P = { { "x", "bool" } } }
    local v = { a = 1, p = { x = true }, ps = { { x = true }, { x = false, r = 2, q = 1 } } }
    for _, case in ipairs {
      { bitwire.schema(desc, { strict = true }), nil },
      { bitwire.schema(desc), { strict = true } },
    } do
      local sc, opts = case[1], case[2]
      local want = "ps[2]: unknown keys 'q', 'r' (strict: P declares no such fields)"
      contains(want, errorof(sc.blob, sc, "T", v, opts))
      contains(want, errorof(sc.encode, sc, "T", v, opts))
      contains("unknown key 'zz' (strict: T", errorof(sc.blob, sc, "T",
        { a = 1, p = { x = true }, ps = {}, zz = 0 }, opts))
    end
    local lax = bitwire.schema(desc, { strict = true })
    assert.same({ a = 1, p = { x = true }, ps = { { x = true }, { x = false } } },
      lax:unblob("T", lax:blob("T", v, { strict = false })))
    assert.is_string(bitwire.schema(desc):blob("T", v))
  end)

  it("return nil, message, code for every truncation and never raise", function()
    local b = s:blob("Snapshot", snapshot(3))
    for n = 0, #b - 1 do
      local v, err, code = s:unblob("Snapshot", b:sub(1, n))
      assert.is_nil(v)
      assert.is_string(err)
      assert.matches("%(byte %d+%)$", err)
      assert.is_string(code)
    end
  end)

  it("name a sparse entry by the slot it claims, in order errors as in value errors", function()
    local d = bitwire.schema { T = { { "m", "sparse", of = { "int", min = 0, max = 9 }, max = 100 } } }
    local b = d:blob("T", { m = { [40] = 1, [50] = 2, [60] = 3 } })
    local t = 32 + string.unpack("<i4", b, 33)   -- entries {uint32 slot; uint8 value}, 8 bytes
    local function put(at, fmt, v)
      local p = string.pack(fmt, v)
      return b:sub(1, at) .. p .. b:sub(at + #p + 1)
    end
    assert.same({ nil, "m[30]: sparse index out of order or range (byte " .. (t + 8) .. ")", "tag" },
                { d:unblob("T", put(t + 8, "<I4", 29)) })
    assert.same({ nil, "m[101]: sparse index out of order or range (byte " .. (t + 16) .. ")", "tag" },
                { d:unblob("T", put(t + 16, "<I4", 100)) })
    assert.same({ nil, "m[60]: value out of range (byte " .. (t + 20) .. ")", "range" },
                { d:unblob("T", put(t + 20, "B", 77)) })
  end)

  it("name the header field at fault and its byte", function()
    local d = bitwire.schema { T = { { "x", "int", min = 0, max = 9 } } }
    local b = d:blob("T", { x = 1 })
    local function put(at, fmt, v)
      local p = string.pack(fmt, v)
      return b:sub(1, at) .. p .. b:sub(at + #p + 1)
    end
    for _, c in ipairs {
      { put(4, "<I2", 2), "unknown blob format or flags (byte 4)", "schema" },
      { put(6, "<I2", 3), "unknown blob format or flags (byte 6)", "schema" },
      { put(28, "<I4", 1), "reserved word not 0 (byte 28)", "schema" },
      { put(24, "<I4", 4096), "blob size out of range (byte 24)", "range" },
      { put(24, "<I4", 8), "blob size out of range (byte 24)", "range" },
      { put(0, "c4", "XXXX"), "not a blob (bad magic) (byte 0)", "tag" },
      { b:sub(1, 20), "truncated header (byte 0)", "truncated" } } do
      for _, read in ipairs { d.unblob, d.blobview } do
        assert.same({ nil, c[2], c[3] }, { read(d, "T", c[1]) })
      end
    end
  end)

  it("give schema, not an error, for a header naming a version with no layout", function()
    -- at version 1 the field of 2^30 + 5 bytes is there and cannot be laid out
    local v = bitwire.schema { T = {
      { "big", "bytes", count = (1 << 30) + 5, removed = 2 },
      { "x", "int", min = 0, max = 3 } } }
    local b = v:blob("T", { x = 1 })
    local old = b:sub(1, 16) .. string.pack("<I4", 1) .. b:sub(21)
    for _, read in ipairs { v.unblob, v.blobview } do
      local r, err, code = read(v, "T", old)
      assert.is_nil(r)
      assert.equal("schema", code)
      assert.equal("version 1 has no blob layout: big: too large for a blob (byte 16)", err)
    end
  end)

  it("refuse a version option: the blob says its version", function()
    local v = bitwire.schema { T = { { "x", "int", min = 0, max = 3 } } }
    local b = v:blob("T", { x = 1 })
    local ok, err = pcall(function () return v:unblob("T", b, { version = 0 }) end)
    assert.is_false(ok)
    assert.matches("bad argument #3 to 'unblob' (unknown option 'version' (known: max_values))",
      err, 1, true)
    ok, err = pcall(function () return v:blobview("T", b, { version = 0 }) end)
    assert.is_false(ok)
    assert.matches("bad argument #3 to 'blobview' (takes no options", err, 1, true)
    -- nor max_values: a view is lazy, and says why
    ok, err = pcall(function () return v:blobview("T", b, { max_values = 3 }) end)
    assert.is_false(ok)
    assert.matches("a view makes a value only when it is read", err, 1, true)
    assert.same({ x = 1 }, v:unblob("T", b, nil))
    assert.equal(1, v:blobview("T", b).x)
  end)

  it("stop unblob at max_values, as decode stops, before a tiny blob's millions of tables",
     function()
    -- arrays of empty arrays take 8 bytes each and claim up to 60000
    -- elements of no bytes: N of them in a blob of 8 N bytes
    local bs = bitwire.schema { T = { { "a", "array", max = 100000,
      of = { "array", max = 60000, of = { "array", count = 0, of = { "string", max = 3 } } } } } }
    local function hostile (n)
      local inner = {}
      for i = 1, n do inner[i] = {} end
      local b = bs:blob("T", { a = inner })
      local at = 32 + string.unpack("<i4", b, 33)  -- the inner arrays' entries
      local parts = { b:sub(1, at) }
      for i = 0, n - 1 do parts[#parts + 1] = string.pack("<i4I4", 8 * (n - i), 60000) end
      local out = table.concat(parts) .. b:sub(at + 8 * n + 1)
      return out:sub(1, 24) .. string.pack("<I4", #out) .. out:sub(29)
    end
    local big = hostile(200)
    assert.is_true(#big < 2000)
    assert.equal(60000, #bs:blobview("T", big).a[200])  -- valid, read lazily
    local v, msg, code = bs:unblob("T", big)  -- 24 million values
    assert.is_nil(v)
    assert.equal("range", code)
    assert.matches("^unblob makes more values than max_values allows %(byte %d+%)$", msg)
    local small = hostile(2)  -- 240002 values, under 2^20
    assert.equal(60000, #assert(bs:unblob("T", small)).a[2])
    v, msg, code = bs:unblob("T", small, { max_values = 100000 })
    assert.is_nil(v)
    assert.equal("range", code)
    assert.matches("max_values", msg, 1, true)
    -- counted as decode counts: the record 1 + its fields, an array 1 + its
    -- elements (here 2 + 4 + 3 x 1)
    local three = { a = { {}, {}, {} } }
    for m = 7, 11 do
      local ok = bs:unblob("T", bs:blob("T", three), { max_values = m }) ~= nil
      assert.equal(m >= 9, ok)
      assert.equal(ok, bs:decode("T", bs:encode("T", three), { max_values = m }) ~= nil)
    end
    local ok, err = pcall(bs.unblob, bs, "T", small, { max_values = -1 })
    assert.is_false(ok)
    assert.matches("'max_values' must not be negative", err, 1, true)
  end)

  it("reject hostile blobs with a path, a reason and a code", function()
    local b = s:blob("Snapshot", { tick = 1, entities = { entity(3) }, names = { "abc" } })
    local lay = s:blob_layout()
    local snap, ent
    for _, t in ipairs(lay.types) do
      if t.name == "Snapshot" then snap = t elseif t.name == "Entity" then ent = t end
    end
    local function field(t, name)
      for i = t.first + 1, t.first + t.count do
        if lay.fields[i].name == name then return lay.fields[i] end
      end
    end
    local root = 32
    local ents = root + field(snap, "entities").offset
    local names = root + field(snap, "names").offset
    local function put(blob, at, fmt, v)
      local p = string.pack(fmt, v)
      return blob:sub(1, at) .. p .. blob:sub(at + #p + 1)
    end
    local eoff = string.unpack("<i4", b, ents + 1)
    local e1 = ents + eoff
    local elem = names + string.unpack("<i4", b, names + 1)
    local chars = elem + string.unpack("<i4", b, elem + 1)   -- "abc\0"
    local cases = {
      { put(b, 0, "c4", "XXXX"), "tag", "bad magic" },
      { put(b, 8, "<I8", 12345), "schema", "fingerprint" },
      { put(b, 24, "<I4", #b + 8), "range", "size" },
      { put(b, ents, "<i4", -16), "range", "^entities: offset points backwards" },
      { put(b, ents, "<i4", 4), "range", "^entities: offset points into data already used" },
      { put(b, ents, "<i4", #b), "truncated", "^entities: offset past the end" },
      { put(b, ents, "<i4", eoff + 2), "align", "misaligned" },
      { put(b, ents + 4, "<I4", 0xFFFFFFFF), "range", "count out of range" },
      { put(b, ents + 4, "<I4", 64), "truncated", "data runs past the end" },
      { put(b, names, "<i4", e1 + 8 - names), "range", "already used" },
      { put(b, e1 + field(ent, "health").offset, "<i1", -101), "range",
        "^entities%[1%]%.health: value out of range" },
      { put(b, e1 + field(ent, "kind").offset, "B", 3), "range", "kind" },
      { put(b, e1 + field(ent, "speed").offset, "<f", 10.5), "range", "speed: value out of range" },
      { put(b, e1 + field(ent, "speed").offset, "<f", 0 / 0), "range", "speed" },
      { put(b, e1 + field(ent, "at_rest").offset, "B", 2), "range", "at_rest" },
      { put(b, e1 + field(ent, "name").presence, "B", 7), "range", "presence" },
      { put(b, chars + 3, "B", 65), "utf8", "^names%[1%]: string not NUL%-terminated" },
      { put(b, chars + 1, "B", 0xC0), "utf8", "malformed UTF%-8" },
    }
    for i, c in ipairs(cases) do
      local v, err, code = s:unblob("Snapshot", c[1])
      assert.is_nil(v, "case " .. i)
      assert.equal(c[2], code, "case " .. i .. ": " .. tostring(err))
      assert.matches(c[3], err)
      assert.is_nil(s:blobview("Snapshot", c[1]))
    end
  end)

  it("refuse a presence byte past 1 whatever the value needs checked", function()
    -- floats, quats, fixed bytes and ints whose C type holds just their
    -- range need no check of their value; their presence byte does
    local o = bitwire.schema { R = {
      {"a", "int", min = 0, max = 3},
      {"x", "float32", optional = true}, {"d", "float64", optional = true},
      {"q", "quat", bits = 9, optional = true}, {"k", "bytes", count = 2, optional = true},
      {"i", "int", min = -128, max = 127, optional = true},
      {"g", "angle", bits = 8, optional = true} } }
    local b = o:blob("R", { a = 1, x = 0.5, i = -3 })
    local n = 0
    for _, f in ipairs(o:blob_layout().fields) do
      if f.presence then
        n = n + 1
        for _, byte in ipairs({ 2, 7, 255 }) do
          local at = 32 + f.presence
          local bad = b:sub(1, at) .. string.char(byte) .. b:sub(at + 2)
          local v, err, code = o:unblob("R", bad)
          assert.is_nil(v, f.name)
          assert.equal("range", code, f.name)
          assert.equal(f.name .. ": presence byte not 0 or 1 (byte " .. at .. ")", err)
          assert.is_nil(o:blobview("R", bad))
        end
      end
    end
    assert.equal(6, n)
    local v = assert(o:unblob("R", b))   -- 0 and 1 stay fine
    assert.equal(-3, v.i)
    assert.is_nil(v.q)
  end)

  it("never raise on seeded random corruptions", function()
    local b = s:blob("Snapshot", snapshot(4))
    local rnd = math.random
    math.randomseed(1234)
    for _ = 1, 2000 do
      local t = { b:byte(1, -1) }
      for _ = 1, rnd(1, 4) do
        local at = rnd(9, #t)   -- keep the magic, hit everything else
        t[at] = rnd(0, 255)
      end
      local ok, v, err = pcall(s.unblob, s, "Snapshot", string.char(table.unpack(t)))
      assert.is_true(ok, v)
      assert.is_true(v ~= nil or type(err) == "string")
    end
  end)
end)

describe("blobs across schema handles", function()
  it("read the same with a schema adopted from another handle", function()
    local s = bitwire.schema(DESC)
    local adopted = bitwire.adopt(s:share())
    local v = snapshot(4)
    assert.equal(s:blob("Snapshot", v), adopted:blob("Snapshot", v))
    assert.same(v, adopted:unblob("Snapshot", s:blob("Snapshot", v)))
    assert.equal(v.entities[2].kind, adopted:blobview("Snapshot", s:blob("Snapshot", v)).entities[2].kind)
  end)
end)

describe("blobs across versions", function()
  local OLD = {
    Item = { { "id", "int", min = 0, max = 99 }, { "gone", "string", max = 8 } },
    Save = { { "items", "array", of = "Item", max = 8 } },
  }
  local NEW = {
    Item = { { "id", "int", min = 0, max = 99 },
             { "gone", "string", max = 8, removed = 1 },
             { "mana", "int", min = 0, max = 50, since = 1, default = 10 },
             { "tag", "string", max = 8, since = 1, optional = true } },
    Save = { { "items", "array", of = "Item", max = 8 } },
  }

  it("read a blob of an older description with defaults, dropping removed fields", function()
    local old, new = bitwire.schema(OLD), bitwire.schema(NEW)
    local b = old:blob("Save", { items = { { id = 1, gone = "x" }, { id = 2, gone = "y" } } })
    assert.same({ items = { { id = 1, mana = 10 }, { id = 2, mana = 10 } } },
                new:unblob("Save", b))
    local view = new:blobview("Save", b)
    assert.equal(10, view.items[2].mana)
    assert.is_nil(view.items[2].gone)
  end)

  it("write at an older version with {version = v}, matching the older description", function()
    local old, new = bitwire.schema(OLD), bitwire.schema(NEW)
    local v = { items = { { id = 3, gone = "z", mana = 5 } } }
    local b = new:blob("Save", v, { version = 0 })
    assert.equal(old:blob("Save", v), b)
    assert.same({ items = { { id = 3, gone = "z" } } }, old:unblob("Save", b))
    assert.same({ items = { { id = 3, mana = 10 } } }, new:unblob("Save", b))
  end)

  it("refuse a header whose version does not match the layout", function()
    local new = bitwire.schema(NEW)
    local b = new:blob("Save", { items = { { id = 3, mana = 5 } } })
    assert.equal(1, string.unpack("<I4", b, 17))
    local v, err, code = new:unblob("Save", b:sub(1, 16) .. string.pack("<I4", 0) .. b:sub(21))
    assert.is_nil(v)
    assert.equal("schema", code)
    assert.matches("fingerprint does not match the description at this version %(byte 8%)", err)
    -- a later version than the description's reads as the current one
    assert.is_table(new:unblob("Save", b:sub(1, 16) .. string.pack("<I4", 7) .. b:sub(21)))
  end)

  it("refuse a blob of a newer or different description", function()
    local old, new = bitwire.schema(OLD), bitwire.schema(NEW)
    local b = new:blob("Save", { items = { { id = 3, mana = 5, tag = "t" } } })
    local v, err, code = old:unblob("Save", b)
    assert.is_nil(v)
    assert.equal("schema", code)
    assert.matches("fingerprint", err)
  end)
end)

describe("schema:blobview", function()
  local s = bitwire.schema(DESC)
  local v = snapshot(5)
  local b = s:blob("Snapshot", v)
  local view = s:blobview("Snapshot", b)

  it("read fields on access, records and arrays as views", function()
    assert.equal(v.tick, view.tick)
    assert.equal(5, #view.entities)
    assert.equal("userdata", type(view.entities[3]))
    assert.equal(v.entities[3].kind, view.entities[3].kind)
    assert.equal(v.entities[3].pos.y, view.entities[3].pos.y)
    assert.equal(v.entities[3].name, view.entities[3].name)
    assert.is_nil(view.entities[1].name)
    assert.equal(v.entities[4].target.z, view.entities[4].target.z)
    assert.is_nil(view.entities[1].target)
    assert.equal(-(4 % 5), view.entities[4].tags[2])
    assert.equal(3, #view.entities[1].grid)
    assert.equal(10, #view.entities[1].near)
    assert.equal(5, view.entities[5].near[10].x)
    assert.is_nil(view.entities[5].near[3])
    assert.equal("héé", view.names[2])
    assert.is_nil(view.entities[6])
    assert.is_nil(view.nope)
    assert.same({}, { view.entities["1"], view.entities[5].near["10"] })  -- numbers only, as in a table
  end)

  it("iterate with pairs: fields present, elements, present sparse slots", function()
    local keys = {}
    for k in pairs(view.entities[1]) do keys[#keys + 1] = k end
    local want = {}
    for k in pairs(v.entities[1]) do want[#want + 1] = k end
    table.sort(keys); table.sort(want)
    assert.same(want, keys)
    local n = 0
    for i, e in pairs(view.entities) do
      n = n + 1
      assert.equal(v.entities[i].id, e.id)
    end
    assert.equal(5, n)
    local slots = {}
    for i, p in pairs(view.entities[5].near) do slots[#slots + 1] = i .. ":" .. p.x end
    assert.same({ "2:1.0", "10:5.0" }, slots)
    -- the next slot from any key, present or not (found by bisection)
    local sp = bitwire.schema { T = { { "m", "sparse", of = "bool", max = 100 } } }
    local m = sp:blobview("T", sp:blob("T", { m = { [3] = true, [7] = false, [100] = true } })).m
    local iter, state = pairs(m)
    local from = { [0] = 3, [1] = 3, [3] = 7, [5] = 7, [7] = 100, [99] = 100 }
    for k, after in pairs(from) do
      assert.equal(after, (iter(state, k ~= 0 and k or nil)))
    end
    assert.is_nil(iter(state, 100))
    assert.is_nil(iter(state, math.maxinteger))
    assert.has_error(function () return iter(state, "3") end)  -- a string is no slot
  end)

  it("name record fields by string keys only", function()
    local n = bitwire.schema { T = { { "1", "int", min = 0, max = 9 }, { "2.5", "bool" } } }
    local r = n:blobview("T", n:blob("T", { ["1"] = 7, ["2.5"] = true }))
    assert.same({ 7, true }, { r["1"], r["2.5"] })
    assert.same({}, { r[1], r[2.5] })  -- nil, as { ["1"] = 7 }[1] is
    local iter, state = pairs(r)
    assert.equal("2.5", (iter(state, "1")))
    assert.is_nil(iter(state, 1))  -- names no field, as "nope" does
  end)

  it("are read-only", function()
    assert.has_error(function () view.tick = 1 end, "blob views are read-only")
  end)

  it("keep the blob alive on their own", function()
    local e = s:blobview("Snapshot", s:blob("Snapshot", snapshot(2))).entities[2]
    collectgarbage(); collectgarbage()
    assert.equal(2, e.id)
  end)
end)

describe("schema:blob_layout", function()
  it("gives the core's offsets, sizes and C types", function()
    local s = bitwire.schema {
      P = { { "a", "bool" }, { "b", "float64" }, { "c", "int", min = -1, max = 1 },
            { "d", "string", max = 4, optional = true }, { "e", "P2", optional = true } },
      P2 = { { "x", "int", min = 0, max = 70000 } },
    }
    local lay = s:blob_layout()
    local p = lay.types[1]
    assert.equal("P", p.name)
    local f = {}
    for i = p.first + 1, p.first + p.count do f[lay.fields[i].name] = lay.fields[i] end
    assert.same({ 0, 8, 16, 20, 28 }, { f.a.offset, f.b.offset, f.c.offset, f.d.offset, f.e.offset })
    assert.equal(17, f.d.presence)
    assert.equal("double", f.b.ctype)
    assert.equal("int8_t", f.c.ctype)
    assert.equal("pointer", f.e.form)
    assert.equal(32, p.size)
    assert.equal(8, p.align)
    assert.equal("uint32_t", lay.fields[lay.types[2].first + 1].ctype)
  end)
end)

describe("bitwire blob (the command)", function()
  local cli = require "bitwire.cli.blob"
  local tmp = os.tmpname()
  local defs = tmp .. "_defs.lua"
  local function write(path, text)
    local f = assert(io.open(path, "wb")); f:write(text); f:close()
  end
  local function read(path)
    local f = assert(io.open(path, "rb")); local d = f:read("a"); f:close(); return d
  end
  local function run(args)
    local out = {}
    local sink = { write = function (self, ...) for _, s in ipairs { ... } do out[#out + 1] = s end return self end }
    local ok, status = pcall(cli.run, args, { stdout = sink, stderr = sink })
    return ok, ok and table.concat(out) or (type(status) == "table" and status.msg or tostring(status))
  end
  teardown(function ()
    for _, p in ipairs { tmp, defs, tmp .. ".json", tmp .. ".bin", tmp .. ".up", tmp .. ".h" } do os.remove(p) end
  end)

  it("builds a blob from JSON and prints it back", function()
    write(defs, [[return { Cmd = { {"type", "enum", values = {"fade", "say"}},
      {"text", "string", max = 32, optional = true}, {"at", "float32"} },
      Scene = { {"name", "string", max = 8}, {"cmds", "array", of = "Cmd", max = 9} } }]])
    write(tmp .. ".json", [[{"name": "x", "cmds": [{"type": "fade", "at": 0.5, "text": null},
      {"type": "say", "text": "hé", "at": 2}]}]])
    assert.same({ true, "" }, { run { defs, "Scene", tmp .. ".json", "-o", tmp .. ".bin" } })
    local s = bitwire.load(defs)
    assert.same({ name = "x", cmds = { { type = "fade", at = 0.5 }, { type = "say", text = "hé", at = 2 } } },
                s:unblob("Scene", read(tmp .. ".bin")))
    -- -o - is stdout: the blob's bytes
    assert.same({ true, read(tmp .. ".bin") }, { run { defs, "Scene", tmp .. ".json", "-o", "-" } })
    assert.is_nil(io.open("-"))
    local ok, out = run { defs, "Scene", tmp .. ".bin", "--json" }
    assert.is_true(ok)
    assert.same(s:unblob("Scene", read(tmp .. ".bin")), require("cjson").decode(out))
  end)

  it("upgrades a blob of an older version to the current one", function()
    write(defs, [[return { T = { {"a", "int", min = 0, max = 9},
      {"b", "int", min = 0, max = 9, since = 1, default = 7} } }]])
    local s = bitwire.load(defs)
    write(tmp .. ".bin", s:blob("T", { a = 3 }, { version = 0 }))
    assert.is_true((run { "upgrade", defs, "T", tmp .. ".bin", "-o", tmp .. ".up" }))
    local up = read(tmp .. ".up")
    assert.equal(s:blob("T", { a = 3, b = 7 }), up)
    assert.equal(1, string.unpack("<I4", up, 17))
  end)

  it("names the blob and type when an upgrade lacks a field no default fills", function()
    write(defs, [[return { T = { {"a", "int", min = 0, max = 9},
      {"b", "int", min = 0, max = 9, since = 1} } }]])
    write(tmp .. ".bin", bitwire.load(defs):blob("T", { a = 3 }, { version = 0 }))
    assert.same({ false, tmp .. ".bin: T: b: missing field" },
      { run { "upgrade", defs, "T", tmp .. ".bin", "-o", tmp .. ".up" } })
  end)

  it("prints the header at --version, and refuses options a form does not take", function()
    write(defs, [[return { T = { {"a", "int", min = 0, max = 9},
      {"b", "int", min = 0, max = 9, since = 1, default = 7} } }]])
    local s = bitwire.load(defs)
    local ok, out = run { "header", defs, "--version", "0" }
    assert.is_true(ok)
    assert.equal(require("bitwire.gen.blob").generate(s, { version = 0 }), out)
    assert.is_nil(out:find("  uint8_t b;", 1, true))
    write(tmp .. ".bin", s:blob("T", { a = 3 }, { version = 0 }))
    for _, c in ipairs {
      { { "header", defs, "--json" }, "blob header does not take --json" },
      { { defs, "T", tmp .. ".bin", "--json", "--version", "0" }, "blob --json does not take --version" },
      { { "upgrade", defs, "T", tmp .. ".bin", "-o", tmp .. ".up", "--version", "0" },
        "blob upgrade does not take --version" },
      { { defs, "T", tmp .. ".json", "-o", tmp .. ".up", "--prefix", "p" },
        "blob (JSON to blob) does not take --prefix" } } do
      local ok2, msg = run(c[1])
      assert.is_false(ok2)
      assert.equal(c[2] .. "\n" .. cli.usage, msg)
    end
  end)

  -- a form missing an argument (or -o) printed the usage alone
  it("says in its first line which argument is missing, and lists the types", function()
    write(defs, [[return { T = { {"a", "int", min = 0, max = 9} }, U = { {"b", "bool"} } }]])
    for _, c in ipairs {
      { {}, "missing definitions file (or header, upgrade)" },
      { { defs }, "missing type name" },
      { { defs, "T" }, "missing input (in.json, or in.bin with --json)" },
      { { "header" }, "missing definitions file" },
      { { "upgrade", defs }, "missing type name" },
      { { "upgrade", defs, "T" }, "missing blob (in.bin)" },
      { { "upgrade", defs, "T", tmp .. ".bin" }, "missing -o out.bin" },
    } do
      local ok, msg = run(c[1])
      assert.is_false(ok)
      assert.equal(c[2] .. "\n" .. cli.usage, msg)
    end
    -- the types listed, as every other subcommand lists them
    local ok, msg = run { defs, "V", tmp .. ".json", "-o", tmp .. ".bin" }
    assert.is_false(ok)
    assert.equal(defs .. ": no type 'V' (types: T, U)", msg)
  end)

  it("reads - as stdin, as the other commands do", function()
    write(defs, [[return { T = { {"a", "int", min = 0, max = 9} } }]])
    local s = bitwire.load(defs)
    local function stdin(data)  -- a file's read: the data, then nil at the end
      return { read = function () local d = data; data = nil; return d end }
    end
    local out = {}
    local sink = { write = function (self, ...) for _, x in ipairs { ... } do out[#out + 1] = x end return self end }
    assert.equal(0, cli.run({ defs, "T", "-", "-o", tmp .. ".bin" },
      { stdout = sink, stdin = stdin('{"a": 4}') }))
    assert.equal(s:blob("T", { a = 4 }), read(tmp .. ".bin"))
    assert.equal(0, cli.run({ defs, "T", "-", "--json" },
      { stdout = sink, stdin = stdin(s:blob("T", { a = 5 })) }))
    assert.equal('{"a":5}\n', table.concat(out))
  end)

  it("takes the JSON inline as json:{...}, as encode and cost do", function()
    write(defs, [[return { T = { {"a", "int", min = 0, max = 9} } }]])
    local s = bitwire.load(defs)
    assert.same({ true, s:blob("T", { a = 6 }) }, { run { defs, "T", 'json:{"a": 6}', "-o", "-" } })
  end)

  it("prints the C header and fails cleanly on bad input", function()
    write(defs, [[return { T = { {"a", "int", min = 0, max = 9}, {"s", "string", max = 4} } }]])
    local ok, out = run { "header", defs }
    assert.is_true(ok)
    assert.matches("struct T {", out, 1, true)
    assert.matches("BW_BLOBASSERT(offsetof(T, s) == 4", out, 1, true)
    assert.matches("T_blob_check", out, 1, true)
    write(tmp .. ".bin", "not a blob")
    local ok2, msg = run { defs, "T", tmp .. ".bin", "--json" }
    assert.is_false(ok2)
    assert.matches("truncated header", msg)
    assert.is_false((run { defs, "Nope", tmp .. ".bin", "--json" }))
  end)
end)

describe("the ctype option", function()
  it("picks the C integer type of a field in blobs, not on the wire", function()
    local d = { T = { { "a", "int", min = 0, max = 9, ctype = "int32" },
                      { "e", "enum", values = { "x", "y" }, ctype = "uint16" },
                      { "u", "uint", bits = 64, ctype = "uint64" } } }
    local s = bitwire.schema(d)
    local lay = s:blob_layout()
    assert.same({ "int32_t", "uint16_t", "uint64_t" },
                { lay.fields[1].ctype, lay.fields[2].ctype, lay.fields[3].ctype })
    assert.same({ 0, 4, 8 }, { lay.fields[1].offset, lay.fields[2].offset, lay.fields[3].offset })
    local v = { a = 9, e = "y", u = -1 }
    assert.same(v, s:unblob("T", s:blob("T", v)))
    local plain = bitwire.schema { T = { { "a", "int", min = 0, max = 9 },
      { "e", "enum", values = { "x", "y" } }, { "u", "uint", bits = 64 } } }
    assert.equal(plain:fingerprint(), s:fingerprint())
    assert.equal(plain:encode("T", v), s:encode("T", v))
    assert.not_equal(plain:blob_layout().types[1].fingerprint, lay.types[1].fingerprint)
  end)

  it("raises on a type that cannot hold the range, or an unknown one", function()
    for _, f in ipairs {
      { { "a", "int", min = -1, max = 9, ctype = "uint8" }, "cannot hold" },
      { { "a", "int", min = 0, max = 300, ctype = "int8" }, "cannot hold" },
      { { "a", "uint", bits = 64, ctype = "int64" }, "cannot hold" },
      { { "a", "int", min = 0, max = 9, ctype = "int33" }, "unknown ctype" },
      { { "a", "bool", ctype = "int32" }, "unknown option 'ctype'" },
    } do
      local ok, err = pcall(bitwire.schema, { T = { f[1] } })
      assert.is_false(ok)
      assert.matches("T%.a: .*" .. f[2], err)
    end
  end)
end)

describe("the generated header's accessors", function()
  it("give NULL and count 0 for an absent optional, whose offset is unchecked", function()
    local s = bitwire.schema { T = {
      { "s", "string", max = 4, optional = true },
      { "a", "array", of = { "int", min = 0, max = 9 }, max = 4, optional = true },
      { "b", "bytes", max = 4, optional = true } } }
    local b = s:blob("T", {})
    -- absent, with offsets far outside and counts: the check does not look
    for _, f in ipairs(s:blob_layout().fields) do
      local at = 32 + f.offset
      b = b:sub(1, at) .. string.pack("<i4I4", 0x100000, 3) .. b:sub(at + 9)
    end
    assert.same({}, assert(s:unblob("T", b)))
    local p = io.popen("pwd")
    local root = p:read("l") .. "/"
    p:close()
    local tmp = os.tmpname()
    local function write(path, text)
      local f = assert(io.open(path, "wb")); f:write(text); f:close()
    end
    write(tmp .. ".h", require("bitwire.gen.blob")(s))
    write(tmp .. ".bin", b)
    write(tmp .. ".c", string.format([[
#include <stdio.h>
#include "%s.h"
int main (void) {
  static uint64_t buf[64];
  FILE *f = fopen("%s.bin", "rb");
  size_t n = fread(buf, 1, sizeof(buf), f);
  const T *t;
  fclose(f);
  if (!T_blob_check(buf, n, NULL)) return 2;
  t = T_blob_root(buf);
  printf("%%d %%u %%d %%u %%d %%u\n", T_s(t) == NULL, (unsigned)T_s_len(t),
         T_a_at(t, 0) == NULL, (unsigned)T_a_count(t),
         T_b_at(t, 0) == NULL, (unsigned)T_b_count(t));
  return 0;
}
]], tmp, tmp))
    assert.is_true(os.execute(string.format(
      "cc -std=c11 -I%score -o %s.exe %s.c %score/bw_blob.c %score/bw_stream.c -lm",
      root, tmp, tmp, root, root)))
    p = io.popen(tmp .. ".exe")
    local out = p:read("a")
    p:close()
    for _, x in ipairs { "", ".h", ".c", ".bin", ".exe" } do os.remove(tmp .. x) end
    assert.equal("1 0 1 0 1 0\n", out)
  end)
end)

describe("the README's cutscene walk-through", function()
  it("runs as written in examples/cutscene, compiled without optimization", function()
    local p = io.popen("pwd")
    local root = p:read("l") .. "/"
    p:close()
    local f = assert(io.open(root .. "README.md"))
    local steps = f:read("a"):match("### Walk%-through: the seed's cutscene.-```sh\n(.-)```")
    f:close()
    assert.is_string(steps)
    -- a copy of the example beside a link to core/, so ../../core is there
    local tmp = os.tmpname()
    os.remove(tmp)
    local dir = tmp .. "/examples/cutscene"
    assert.is_true(os.execute(string.format("mkdir -p %s && ln -s %score %s/core && cp %s* %s/",
      dir, root, tmp, root .. "examples/cutscene/", dir)))
    local script = ("\n" .. steps):gsub("\nbitwire ", "\nlua5.4 " .. root .. "bin/bitwire ")
    p = io.popen(string.format("cd %s && sh -e 2>&1 <<'EOF'\n%s\nEOF", dir, script))
    local out = p:read("a")
    local ok = p:close()
    os.execute("rm -rf " .. tmp)
    assert.is_true(ok, out)
    assert.matches('scene "": 3 commands\n', out, 1, true)
  end)
end)
