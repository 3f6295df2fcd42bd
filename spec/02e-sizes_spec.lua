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

  it("is a sparse array's worst over every set of slots, for each encoding", function ()
    local elements = { { "bool" }, { "int", min = 5, max = 5 }, { "int", min = 0, max = 3 },
                       { "int", min = 0, max = 1000 } }
    local forms = { { encoding = "mask" }, { encoding = "index" }, { encoding = "relative" },
                    { encoding = "relative", tiers = { 0, 1 } }, { encoding = "relative", tiers = { 2 } },
                    { encoding = "auto" }, { encoding = "auto", tiers = { 1 } } }
    for n = 1, 9 do
      for _, el in ipairs(elements) do
        for _, form in ipairs(forms) do
          local f = { "xs", "sparse", of = el, max = n, encoding = form.encoding, tiers = form.tiers }
          local s = bitwire.schema { T = { f } }
          local worst, most = 0, el.max or true
          for set = 0, (1 << n) - 1 do
            local xs = {}
            for i = 1, n do if set & (1 << (i - 1)) ~= 0 then xs[i] = most end end
            worst = math.max(worst, s:bits("T", { xs = xs }))
          end
          local max = s:maxbits("T")
          local where = ("n %d, %s %s, %s %s"):format(n, el[1], el.max or "", form.encoding,
            form.tiers and table.concat(form.tiers, ",") or "")
          assert(worst <= max, where .. ": encode wrote " .. worst .. " > maxbits " .. max)
          if form.encoding == "relative" then
            -- a bound within one gap and its element; for these, a bit
            assert(max - worst <= 1, where .. ": maxbits " .. max .. ", worst " .. worst)
          else
            assert(max == worst, where .. ": maxbits " .. max .. ", worst " .. worst)
          end
        end
      end
    end
    -- the old bound took every encoding's worst: 64 records of 100 bits,
    -- masked, sent at most 64 + 6400 bits, not 2 + 65 * 38 + 6400
    local s = bitwire.schema { T = { { "xs", "sparse", of = { "uint", bits = 100 // 2 }, max = 64,
                                         encoding = "mask" } } }
    assert.equal(64 + 64 * 50, s:maxbits("T"))
  end)

  it("raises on an unknown type", function ()
    local s = snapshot_schema()
    contains("unknown type 'Q'", errorof(s.maxbits, s, "Q"))
  end)
end)
