-- Messages: schema:encode_message and schema:decode_message, the type id
-- before the value.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local tohex = H.tohex

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
