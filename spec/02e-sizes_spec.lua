-- Sizes: schema:bits, the bits encode writes, and schema:maxbits, the
-- worst case.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local snapshot_schema, entity = H.snapshot_schema, H.entity
local errorof, contains, lcg = H.errorof, H.contains, H.lcg

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
