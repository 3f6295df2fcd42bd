-- bitwire end to end, as `make demo` runs it: the README's schema, its
-- size next to JSON, round trips, messages, a framed packet that a flipped
-- bit gets rejected, and what an error says. Exits non-zero if any of its
-- own checks fails.
--
--   make demo
--   LUA_PATH="./lua/?.lua;./lua/?/init.lua;;" LUA_CPATH="./build/?.so;;" \
--     lua5.4 examples/demo.lua
local bitwire = require "bitwire"
local ok_json, cjson = pcall(require, "cjson")

local failures, checks = 0, 0
local function check (cond, what)
  checks = checks + 1
  if not cond then
    failures = failures + 1
    print("  FAILED: " .. what)
  end
  return cond
end

local function hex (s, max)
  max = max or 16
  local h = s:sub(1, max):gsub(".", function (c) return string.format("%02x", c:byte()) end)
  return #s > max and h .. "..." or h
end

local function section (title) print("\n== " .. title) end

print(string.format("bitwire %s, %s", bitwire.version or "?", _VERSION))

-- {===== 1. a schema is a Lua table =====
section("schema (the README's snapshot)")
local function coord (n) return { n, "float", min = -512, max = 512, res = 0.01 } end
local schema = bitwire.schema {
  Vec3 = { coord "x", coord "y", coord "z" },
  Entity = {
    { "id", "int", min = 0, max = 4095 },
    { "kind", "enum", values = { "player", "grunt", "weapon" } },
    { "pos", "Vec3" },
    { "health", "int", min = 0, max = 100 },
    { "at_rest", "bool" },
    { "name", "string", max = 16, optional = true },
  },
  Snapshot = {
    { "tick", "uint", bits = 20 },
    { "entities", "array", of = "Entity", max = 64 },
  },
  Chat = { { "from", "int", min = 0, max = 4095 }, { "text", "string", max = 100 } },
}
print("types " .. table.concat(schema:types(), ", ") .. "; fingerprint " .. schema:fingerprint())
print(string.format("an Entity is at most %d bits, a Snapshot at most %d",
  schema:maxbits("Entity"), schema:maxbits("Snapshot")))
-- }=====

-- {===== 2. size next to JSON, and back =====
section("20 entities: bitwire vs JSON")
local kinds = { "player", "grunt", "weapon" }
local snap = { tick = 123456, entities = {} }
for i = 1, 20 do
  snap.entities[i] = {
    id = i * 37, kind = kinds[i % 3 + 1], health = (i * 7) % 101,
    at_rest = i % 4 == 0, pos = { x = i * 10.25 - 200, y = -i * 3.5, z = i / 8 },
    name = i % 5 == 0 and ("unit" .. i) or nil,
  }
end
local bytes = schema:encode("Snapshot", snap)
local json = ok_json and cjson.encode(snap) or nil
print(string.format("bitwire %d bytes (%d bits)%s", #bytes, schema:bits("Snapshot", snap),
  json and string.format(", JSON %d bytes: %.1fx smaller", #json, #json / #bytes) or ""))
print("bytes   " .. hex(bytes, 24))
check(#bytes == (schema:bits("Snapshot", snap) + 7) // 8, "bits() matches encode")

local back, err = schema:decode("Snapshot", bytes)
check(back ~= nil, "decode: " .. tostring(err))
local worst = 0
for i, e in ipairs(snap.entities) do
  local d = back.entities[i]
  check(d.id == e.id and d.kind == e.kind and d.health == e.health
        and d.at_rest == e.at_rest and d.name == e.name, "entity " .. i .. " fields")
  for _, k in ipairs { "x", "y", "z" } do
    worst = math.max(worst, math.abs(d.pos[k] - e.pos[k]))
  end
end
check(worst <= 0.005 + 1e-4, "positions within res/2 (and float32 rounding)")
local e5, d5 = snap.entities[5], back.entities[5]
print(string.format("entity 5 sent  {id=%d, %s, pos=(%g, %g, %g), health=%d, name=%s}",
  e5.id, e5.kind, e5.pos.x, e5.pos.y, e5.pos.z, e5.health, e5.name))
print(string.format("entity 5 read  {id=%d, %s, pos=(%.4f, %.4f, %.4f), health=%d, name=%s}",
  d5.id, d5.kind, d5.pos.x, d5.pos.y, d5.pos.z, d5.health, d5.name))
print(string.format("largest position error %.5f (res 0.01)", worst))

-- decoding into the last value reuses its tables: no garbage per packet
local first_entity = back.entities[1]
snap.tick = snap.tick + 1
schema:decode("Snapshot", schema:encode("Snapshot", snap), { into = back })
check(rawequal(first_entity, back.entities[1]) and back.tick == snap.tick, "decode into")
print("decode into: same tables reused, tick now " .. back.tick)
-- }=====

-- {===== 3. messages carry their type =====
section("messages")
for _, m in ipairs { { "Chat", { from = 42, text = "gg ✓" } }, { "Snapshot", { tick = 1, entities = {} } } } do
  local packet = schema:encode_message(m[1], m[2])
  local name, v = schema:decode_message(packet)
  check(name == m[1], "message type " .. m[1])
  print(string.format("%-8s -> %2d bytes %-20s -> %s", m[1], #packet, hex(packet), name))
  if name == "Chat" then check(v.text == "gg ✓", "chat text") end
end
-- }=====

-- {===== 4. one serialize function for read, write and measure =====
if bitwire.serializer then
  section("unified serialize function (PacketC of \"Serialization Strategies\")")
  local packet_c = bitwire.serializer(function (s, p)
    s:bool(p, "x")
    s:int(p, "y", -32768, 32767)
    s:int(p, "z", -0x80000000, 0x7fffffff)
  end)
  local same = bitwire.schema { PacketC = { { "x", "bool" },
    { "y", "int", min = -32768, max = 32767 },
    { "z", "int", min = -0x80000000, max = 0x7fffffff } } }
  local v = { x = true, y = -1234, z = 2000000000 }
  local a, b = packet_c:encode(v), same:encode("PacketC", v)
  local r = packet_c:decode(a)
  print(string.format("serializer %s (%d bits), schema %s", hex(a), packet_c:measure(v), hex(b)))
  check(a == b, "serializer and schema agree on the wire")
  check(r and r.y == -1234 and r.z == 2000000000 and r.x == true, "serializer round trip")
end
-- }=====

-- {===== 5. the streams underneath =====
if bitwire.writer then
  section("bit streams (the articles' BitWriter/BitReader)")
  local w = bitwire.writer()
  w:int(-37, -100, 100)
  w:bool(true)
  w:compressed_float(0.5, 0, 1, 0.01)
  local r = bitwire.reader(w:tostring())
  local a, b, c = r:int(-100, 100), r:bool(), r:compressed_float(0, 1, 0.01)
  print(string.format("int -37 in [-100, 100], true, 0.5 by 0.01 -> %s (%d bits) -> %d, %s, %g",
    hex(w:tostring()), w:bits_written(), a, tostring(b), c))
  check(a == -37 and b == true and c == 0.5, "stream round trip")
  local one = bitwire.schema { T = { { "x", "int", min = -100, max = 100 } } }
  check(one:encode("T", { x = -37 }) == "\x3f", "schema int -37 is 3f")
end
-- }=====

-- {===== 6. framed packets: CRC32 and an end check =====
section("framed packets")
local proto = bitwire.protocol(schema, { id = 0x67616d65 })
local packet = proto:encode("Chat", { from = 7, text = "hello" })
local name, v = proto:decode(packet)
check(name == "Chat" and v.text == "hello", "protocol round trip")
print(string.format("packet %s (%d bytes, %d of framing) -> %s %q", hex(packet, 24),
  #packet, proto:overhead(), name, v.text))
local rejected = 0
for bit = 0, #packet * 8 - 1 do
  local i = bit // 8 + 1
  local flipped = packet:sub(1, i - 1) .. string.char(packet:byte(i) ~ (1 << bit % 8))
    .. packet:sub(i + 1)
  if proto:decode(flipped) == nil then rejected = rejected + 1 end
end
check(rejected == #packet * 8, "every flipped bit rejected")
local corrupt = packet:sub(1, 9) .. string.char(packet:byte(10) ~ 1) .. packet:sub(11)
local got, msg, code = proto:decode(corrupt)
check(got == nil and code == "crc", "corrupt packet rejected")
print(string.format("all %d single-bit flips rejected; e.g. byte 10: nil, %q, %q",
  rejected, msg, code))
-- }=====

-- {===== 7. errors say where =====
section("errors")
got, msg, code = schema:decode("Snapshot", bytes:sub(1, #bytes - 10))
check(got == nil and code == "truncated" and msg:find("%(bit %d+%)$"), "truncated")
print(string.format("%d of %d bytes -> nil, %q, %q", #bytes - 10, #bytes, msg, code))
got, msg, code = schema:decode("Snapshot", bytes:sub(1, 40))
check(got == nil and code == "truncated", "truncated count")
print(string.format("40 of %d bytes -> nil, %q, %q", #bytes, msg, code))
local loose = bitwire.schema { T = { { "hp", "int", min = 0, max = 127 } } }
local strict = bitwire.schema { T = { { "hp", "int", min = 0, max = 100 } } }
got, msg, code = strict:decode("T", loose:encode("T", { hp = 117 }))
check(got == nil and code == "range", "out of range")
print(string.format("hp 117 from a looser peer -> nil, %q, %q", msg, code))
snap.entities[3].health = 117
local ok, raised = pcall(schema.encode, schema, "Snapshot", snap)
check(not ok and raised:find("entities[3].health", 1, true), "encode raises with a path")
print("encode health 117 raises: " .. tostring(raised))
-- }=====

print(string.format("\n%d checks, %d failed", checks, failures))
os.exit(failures == 0 and 0 or 1)
