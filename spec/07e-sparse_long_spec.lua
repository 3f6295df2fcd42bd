-- Sparse arrays of more slots than a walk visits one by one (over 4096):
-- encode, the delta's comparison and decode into visit the tables' keys.
-- Before, each encode of a sparse array of 0xFFFFFFFE slots walked all of
-- them (fuzz_schema's timeout): these specs did not end.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local errorof = H.errorof

local MAX = 0xFFFFFFFE

local function schema (encoding)
  return bitwire.schema {
    P = { { "x", "int", min = 0, max = 99 } },
    T = { { "k", "int", min = 0, max = 9 },
          { "sp", "sparse", of = "P", max = MAX, encoding = encoding } },
  }
end

local function value (slots)
  local sp = {}
  for i, x in pairs(slots) do sp[i] = { x = x } end
  return { k = 1, sp = sp }
end

describe("a sparse array of 0xFFFFFFFE slots", function ()
  it("encodes and decodes a few slots in each encoding", function ()
    local v = value { [1] = 1, [7] = 2, [1 << 31] = 3, [MAX] = 4 }
    for _, enc in ipairs { "index", "relative", "auto" } do
      local s = schema(enc)
      assert.same(v, s:decode("T", s:encode("T", v)), enc)
    end
    -- index: k, a 32-bit count, then per slot a 32-bit index and x
    assert.equal(4 + 32 + 4 * (32 + 7), schema("index"):bits("T", v))
    local empty = value {}
    assert.same(empty, schema("auto"):decode("T", schema("auto"):encode("T", empty)))
  end)

  it("refuses keys that are not integers in [1, max]", function ()
    local s = schema("auto")
    for _, key in ipairs { 0, MAX + 1, -1, 1.5, "a" } do
      local v = value { [3] = 1 }
      v.sp[key] = { x = 1 }
      assert.matches("sparse keys must be integers in %[1, 4294967294%]",
                     errorof(s.encode, s, "T", v))
    end
  end)

  it("sends only the slots that changed against a baseline", function ()
    for _, enc in ipairs { "index", "relative", "auto" } do
      local s = schema(enc)
      local a = value { [1] = 1, [1 << 31] = 2, [MAX] = 3, [99999] = 4 }
      local base = s:decode("T", s:encode("T", a))
      -- nothing changed but k: the sparse array is one bit
      local same = value { [1] = 1, [1 << 31] = 2, [MAX] = 3, [99999] = 4 }
      same.k = 2
      local d = s:encode("T", same, { baseline = a })
      assert.equal(1 + 4 + 1, s:bits("T", same, { baseline = a }), enc)
      assert.same(same, s:decode("T", d, { baseline = base }))
      -- one changed, one gone, one new
      local b = value { [1 << 31] = 9, [MAX] = 3, [99999] = 4, [5] = 7 }
      d = s:encode("T", b, { baseline = a })
      assert.same(b, s:decode("T", d, { baseline = base }), enc)
      assert.same(b, s:decode("T", d, { baseline = base, share = true }), enc)
    end
  end)

  it("fails a mask of every slot as too long for a packet, at once", function ()
    local s = schema("mask")
    assert.matches("packet over", errorof(s.encode, s, "T", value { [2] = 1 }))
  end)

  it("decodes into a table, clearing its old slots that were not sent", function ()
    for _, enc in ipairs { "index", "relative" } do
      local s = schema(enc)
      local t = value { [3] = 1, [100000] = 2, [MAX - 15] = 3 }
      local kept = t.sp[100000]
      local got = s:decode("T", s:encode("T", value { [100000] = 5, [7] = 6 }), { into = t })
      assert.equal(t, got)
      assert.same(value { [100000] = 5, [7] = 6 }, got, enc)
      assert.equal(kept, got.sp[100000], enc)  -- the slot's record refilled
    end
  end)

  -- s:blob walked every slot twice: 50 s of CPU for one slot
  it("writes a blob of a few slots, and refuses keys that are no slot", function ()
    local s = schema("auto")
    local v = value { [1] = 1, [7] = 2, [1 << 31] = 3, [MAX] = 4 }
    local blob = s:blob("T", v)
    assert.same(v, s:unblob("T", blob))
    local view = s:blobview("T", blob)
    assert.equal(4, view.sp[MAX].x)
    assert.same(value {}, s:unblob("T", s:blob("T", value {})))
    for _, key in ipairs { 0, MAX + 1, 1.5, "a" } do
      local bad = value { [3] = 1 }
      bad.sp[key] = { x = 1 }
      assert.matches("sp: sparse keys must be integers in %[1, 4294967294%]",
                     errorof(s.blob, s, "T", bad))
    end
  end)
end)
