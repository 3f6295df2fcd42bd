-- schema:fingerprint: the same for the same wire form, whatever the order
-- a description was built in; what changes it and what does not.
local bitwire = require "bitwire"

describe("schema:fingerprint", function ()
  -- the same description, its tables filled in the given order
  local function build (order, keyorder)
    local fields = {
      Vec = { { "x", "int", min = 0, max = 100 }, { "y", "float", min = 0, max = 1, res = 0.1 } },
      Obj = { { "v", "Vec" }, { "tags", "array", of = { "enum", values = { "a", "b" } }, max = 4 } },
      Msg = { { "objs", "array", of = "Obj", max = 9 }, { "note", "string", max = 8, optional = true } },
    }
    local desc = {}
    for _, name in ipairs(order) do
      local list = {}
      for i, f in ipairs(fields[name]) do
        local copy = { f[1], f[2] }
        local keys = {}
        for k in pairs(f) do if type(k) == "string" then keys[#keys + 1] = k end end
        table.sort(keys)
        if keyorder then
          for j = #keys, 1, -1 do copy[keys[j]] = f[keys[j]] end
        else
          for j = 1, #keys do copy[keys[j]] = f[keys[j]] end
        end
        list[i] = copy
      end
      desc[name] = list
    end
    return desc
  end

  it("is 16 hex digits", function ()
    assert.matches("^%x+$", bitwire.schema(build { "Vec", "Obj", "Msg" }):fingerprint())
    assert.equal(16, #bitwire.schema(build { "Vec", "Obj", "Msg" }):fingerprint())
  end)

  it("does not depend on the order tables were filled in", function ()
    local a = bitwire.schema(build({ "Vec", "Obj", "Msg" }, false)):fingerprint()
    local b = bitwire.schema(build({ "Msg", "Obj", "Vec" }, true)):fingerprint()
    local c = bitwire.schema(build({ "Obj", "Msg", "Vec" }, false)):fingerprint()
    assert.equal(a, b)
    assert.equal(a, c)
  end)

  it("is stable across compiles", function ()
    local d = build { "Vec", "Obj", "Msg" }
    assert.equal(bitwire.schema(d):fingerprint(), bitwire.schema(d):fingerprint())
  end)

  local function changed (edit)
    local d = build { "Vec", "Obj", "Msg" }
    local before = bitwire.schema(d):fingerprint()
    edit(d)
    return bitwire.schema(d):fingerprint() ~= before
  end

  it("changes when a range changes", function ()
    assert.is_true(changed(function (d) d.Vec[1].max = 101 end))
    assert.is_true(changed(function (d) d.Vec[2].res = 0.01 end))
    assert.is_true(changed(function (d) d.Msg[1].max = 10 end))
    assert.is_true(changed(function (d) d.Msg[2].max = 9 end))
  end)

  it("changes when the wire form changes otherwise", function ()
    assert.is_true(changed(function (d) d.Msg[2].optional = nil end))
    assert.is_true(changed(function (d) d.Vec[1][2] = "uint"; d.Vec[1].bits = 7
      d.Vec[1].min, d.Vec[1].max = nil, nil end))
    assert.is_true(changed(function (d) d.Obj[2].of.values = { "a", "b", "c" } end))
    assert.is_true(changed(function (d) table.insert(d.Vec, { "z", "bool" }) end))
    assert.is_true(changed(function (d) d.Vec[1], d.Vec[2] = d.Vec[2], d.Vec[1] end))
  end)

  it("does not change when a field is renamed", function ()
    assert.is_false(changed(function (d) d.Vec[1][1] = "px" end))
    assert.is_false(changed(function (d) d.Msg[2][1] = "comment" end))
  end)

  it("does not change when a default is added", function ()
    assert.is_false(changed(function (d) d.Vec[1].default = 5 end))
  end)
end)
