-- s:program(): the compiled program that tools read instead of descriptions
describe("schema:program", function()
  local bitwire = require "bitwire"
  local s = bitwire.schema {
    Vec3 = { { "x", "float", min = -512, max = 512, res = 0.01 }, { "y", "float32" } },
    E = {
      { "id", "int", min = -8, max = 4095 },
      { "kind", "enum", values = { "a", "b", "c" }, default = "b" },
      { "pos", "Vec3" },
      { "name", "string", max = 16, optional = true },
      { "tags", "array", of = { "uint", bits = 3 }, max = 5 },
      { "q", "quat", bits = 9 },
      { "t", "tiered", tiers = { 2, 4 }, min = 0, max = 19 },
      { "armor", "int", min = 0, max = 255, since = 1, default = 0 },
    },
    S = { { "ents", "sparse", of = "E", max = 64, encoding = "relative" } },
  }
  local p = s:program()

  it("lists the types in id order with their sizes", function()
    assert.same(s:types(), { p.types[1].name, p.types[2].name, p.types[3].name })
    for i, t in ipairs(p.types) do
      assert.equal(i - 1, t.id)
      assert.equal(t, p.byname[t.name])
      assert.equal(s:maxbits(t.name), t.maxbits)
    end
    assert.equal(s:fingerprint(), p.fingerprint)
    assert.equal(s:version(), p.version)
  end)

  it("gives each field the widths C computed", function()
    local e = p.byname.E.fields
    assert.same({ "int", -8, 4095, bitwire.bits_required(-8, 4095) },
      { e[1].kind, e[1].min, e[1].max, e[1].bits })
    assert.same({ "a", "b", "c" }, e[2].values)
    assert.equal("b", e[2].default)
    assert.equal("Vec3", e[3].type)
    assert.is_true(e[4].optional)
    assert.equal(3, e[5].of.bits)
    assert.is_nil(e[5].of.name)
    assert.equal(511, e[6].qmax)
    assert.same({ 2, 4 }, e[7].tiers)
    assert.same({ 1, 0 }, { e[8].since, e[8].default })
    local x = p.byname.Vec3.fields[1]
    -- the quantizer's step count is what compressed_float writes
    local w = bitwire.writer()
    w:compressed_float(512, -512, 512, 0.01)
    assert.equal(w:bits_written(), bitwire.bits_required(0, x.qmax))
    assert.equal("relative", p.byname.S.fields[1].encoding)
    assert.equal("E", p.byname.S.fields[1].of.type)
  end)

  it("adds up: a type's minbits is the sum of its fields' minimums", function()
    local t = p.byname.Vec3
    local sum = 0
    for _, f in ipairs(t.fields) do sum = sum + f.minbits end
    assert.equal(t.minbits, sum)
  end)
end)
