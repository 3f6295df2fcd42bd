-- Writes what test_blobmap.c maps: DIR/blobmap.h (bitwire.gen.blob's
-- header), DIR/snapshot.bin (s:blob of a generated snapshot) and
-- DIR/expected.h (the same values as C initializers, from the Lua table, not
-- from the blob). usage: lua5.4 bindings/test/blobmap.lua DIR
local bitwire = require "bitwire"
local gen = require "bitwire.gen.blob"

local dir = assert(arg[1], "usage: blobmap.lua DIR")

local s = bitwire.schema {
  Vec3 = { { "x", "float32" }, { "y", "float32" }, { "z", "float32" } },
  Entity = {
    { "id", "int", min = 0, max = 4095 },
    { "kind", "enum", values = { "player", "grunt", "weapon" } },
    { "pos", "Vec3" },
    { "health", "int", min = -100, max = 100 },
    { "alive", "bool" },
    { "name", "string", max = 16, optional = true },
    { "target", "Vec3", optional = true },
    { "tags", "array", of = { "int", min = -5, max = 5 }, max = 4 },
    { "near", "sparse", of = "Vec3", max = 10 },
    { "mass", "float64" },
    { "big", "uint", bits = 64 },
    { "grid", "array", of = { "int", min = 0, max = 9 }, count = 3 },
  },
  Snapshot = {
    { "tick", "uint", bits = 20 },
    { "title", "string", max = 32 },
    { "entities", "array", of = "Entity", max = 64 },
  },
}

local KINDS = { "player", "grunt", "weapon" }
local es = {}
for i = 1, 23 do
  local near = {}
  if i % 2 == 0 then near[i % 10 + 1] = { x = i, y = 0, z = 0 } end
  es[i] = {
    id = i * 17 % 4096, kind = KINDS[i % 3 + 1],
    pos = { x = i * 0.5, y = -i, z = 1 / i }, health = (i * 37) % 201 - 100,
    alive = i % 3 ~= 0, name = i % 4 ~= 0 and ("unit-" .. i .. "é") or nil,
    target = i % 5 == 0 and { x = 1, y = i, z = 3 } or nil,
    tags = ({ {}, { 1 }, { -5, 5 }, { 1, 2, 3, 4 } })[i % 4 + 1],
    near = near, mass = i * 1e10 + 0.25, big = -i, grid = { i % 10, 0, 9 },
  }
end
local value = { tick = 1048575, title = "mapped, not parsed", entities = es }

local function write(name, text)
  local f = assert(io.open(dir .. "/" .. name, "wb"))
  f:write(text)
  f:close()
end

write("blobmap.h", gen(s))
write("snapshot.bin", s:blob("Snapshot", value))

-- expected.h: C initializers of the same values
local out = {}
local function q(str) return str and string.format("%q", str):gsub("\\\n", "\\n") or "NULL" end
local function f32(x) return string.format("(float)%.9g", string.unpack("<f", string.pack("<f", x))) end
out[#out + 1] = string.format("#define EXPECT_TICK %d", value.tick)
out[#out + 1] = string.format("#define EXPECT_TITLE %s", q(value.title))
out[#out + 1] = string.format("#define EXPECT_N %d", #es)
out[#out + 1] = "static const struct Expect {"
out[#out + 1] = "  int id, kind, health, alive; float x, y, z; const char *name;"
out[#out + 1] = "  int has_target; float ty; int ntags; int tags[4]; int nnear, near_index;"
out[#out + 1] = "  float near_x; double mass; int64_t big; int grid[3];"
out[#out + 1] = "} expected[] = {"
for _, e in ipairs(es) do
  local kind
  for k, v in ipairs(KINDS) do if v == e.kind then kind = k - 1 end end
  local ni, nx, nn = 0, 0, 0
  for k, v in pairs(e.near) do ni, nx, nn = k - 1, v.x, 1 end
  local t = e.tags
  out[#out + 1] = string.format(
    "  {%d, %d, %d, %d, %s, %s, %s, %s, %d, %s, %d, {%d, %d, %d, %d}, %d, %d, %s, %.17g, INT64_C(%d), {%d, %d, %d}},",
    e.id, kind, e.health, e.alive and 1 or 0, f32(e.pos.x), f32(e.pos.y), f32(e.pos.z),
    q(e.name), e.target and 1 or 0, f32(e.target and e.target.y or 0), #t,
    t[1] or 0, t[2] or 0, t[3] or 0, t[4] or 0, nn, ni, f32(nx), e.mass, e.big,
    e.grid[1], e.grid[2], e.grid[3])
end
out[#out + 1] = "};"
write("expected.h", table.concat(out, "\n") .. "\n")
