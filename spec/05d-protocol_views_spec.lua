-- bitwire.protocol's view of a baseline as the peer holds it, combined with
-- the other options: a delta against a value that went at another version
-- or under other definitions is taken against that send's decode, whatever
-- the schema's strict option says about keys the value carries.
local bitwire = require "bitwire"

local function write (path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

describe("a protocol's view of a baseline", function ()
  it("is the peer's under a strict schema, of a value sent with strict = false", function ()
    -- the view is the value encoded as it went: a strict encode refused
    -- the server-side key, and the delta went against the table itself,
    -- calling armor unchanged where the peer held its default
    local s = bitwire.schema({
      messages = { "T" },
      T = { { "tick", "int", min = 0, max = 100 }, { "hp", "int", min = 0, max = 9 },
            { "armor", "int", min = 0, max = 99, since = 2, default = 0 } },
    }, { strict = true })
    local p = bitwire.protocol(s, { deltas = true, versioned = true })
    local v = { tick = 1, hp = 5, armor = 50, note = "server-side" }
    local _, got = p:decode(p:encode("T", v, { version = 1, strict = false }))
    assert.equal(0, got.armor)  -- version 1 does not send it
    local w = { tick = 2, hp = 5, armor = 50 }
    local pk = p:encode("T", w, { version = 2, baseline = v, baseline_id = 1 })
    local _, now = p:decode(pk, { baselines = { [1] = got } })
    assert.same({ tick = 2, hp = 5, armor = 50 }, now)
  end)

  it("is the peer's across a reload of a strict registry", function ()
    local path = os.tmpname()
    finally(function () os.remove(path) end)
    local old = [[return { messages = { "T" },
      T = { { "tick", "int", min = 0, max = 100 }, { "x", "float", min = 0, max = 10, res = 1 } } }]]
    write(path, old)
    local sreg = assert(bitwire.watch(path, { strict = true }))
    local creg = assert(bitwire.watch(path))
    local sp = bitwire.protocol(sreg, { deltas = true })
    local cp = bitwire.protocol(creg, { deltas = true })
    local v = { tick = 1, x = 1.25, note = "server-side" }
    local _, got = cp:decode(sp:encode("T", v, { strict = false }))
    assert.equal(1.0, got.x)
    write(path, (old:gsub("res = 1 ", "res = 0.25 ")))
    assert.is_true(sreg:reload())
    assert.is_true(creg:reload())
    -- x 1.25 went on a grid of 1: the peer holds 1, which it now sends
    local pk = sp:encode("T", { tick = 2, x = 1.25 }, { baseline = v, baseline_id = 1 })
    local _, now = cp:decode(pk, { baselines = { [1] = got } })
    assert.same({ tick = 2, x = 1.25 }, now)
  end)
end)

describe("a protocol's view of a large baseline", function ()
  it("is the peer's past the default max_values", function ()
    -- the view's decode, under the default limit, failed: the delta went
    -- against the table itself, armor unchanged where the peer held 0
    local s = bitwire.schema {
      messages = { "T" },
      T = { { "tick", "int", min = 0, max = 100 },
            { "armor", "int", min = 0, max = 99, since = 1, default = 0 },
            { "cells", "array", of = "bool", max = bitwire.MAX_VALUES + 16 } },
    }
    local p = bitwire.protocol(s, { deltas = true, versioned = true })
    local cells = {}
    for i = 1, bitwire.MAX_VALUES + 8 do cells[i] = false end
    local v = { tick = 1, armor = 50, cells = cells }
    local limit = { max_values = 2 * bitwire.MAX_VALUES }
    local _, got = p:decode(p:encode("T", v, { version = 0 }), limit)
    assert.equal(0, got.armor)
    local pk = p:encode("T", { tick = 2, armor = 50, cells = cells },
                        { version = 1, baseline = v, baseline_id = 1 })
    local _, now = p:decode(pk, { baselines = { [1] = got }, max_values = limit.max_values })
    assert.equal(50, now.armor)
  end)
end)
