-- What errors look like. Decoding untrusted bytes never raises: it returns
-- nil, "path: detail (bit N)", code. Encoding a value that does not fit its
-- field is a programmer error and raises with the same path.
--
--   LUA_PATH="./lua/?.lua;./lua/?/init.lua;;" LUA_CPATH="./build/?.so;;" \
--     lua5.4 examples/errors.lua
local bitwire = require "bitwire"

-- the README's snapshot, with health in [0, max_health]
local function snapshot (max_health)
  return bitwire.schema {
    Vec3 = { { "x", "float", min = -512, max = 512, res = 0.01 },
             { "y", "float", min = -512, max = 512, res = 0.01 },
             { "z", "float", min = -512, max = 512, res = 0.01 } },
    Entity = {
      { "id", "int", min = 0, max = 4095 },
      { "kind", "enum", values = { "player", "grunt", "weapon" } },
      { "pos", "Vec3" },
      { "health", "int", min = 0, max = max_health },
      { "name", "string", max = 16, optional = true },
    },
    Snapshot = { { "tick", "uint", bits = 20 },
                 { "entities", "array", of = "Entity", max = 64 } },
  }
end

local schema = snapshot(100)
local value = { tick = 7, entities = {} }
for i = 1, 3 do
  value.entities[i] = { id = i, kind = "grunt", health = 90 + i,
                        pos = { x = i, y = 2 * i, z = -i }, name = "grunt" .. i }
end
local bytes = schema:encode("Snapshot", value)
print(string.format("a snapshot of 3 entities: %d bytes", #bytes))

local function show (label, v, msg, code)
  print(string.format("%-22s -> %s, %q, %q", label, tostring(v), msg, code))
end

-- 1. cut short, as a lost fragment would be: the array's count already
-- promises more than is left; cut later, a field runs past the end
show("first 20 bytes", schema:decode("Snapshot", bytes:sub(1, 20)))
show("first 40 bytes", schema:decode("Snapshot", bytes:sub(1, 40)))

-- 2. a peer with a looser range: health 117 fits its 7 bits, not ours
local peer = snapshot(127)
value.entities[3].health = 117
show("peer's health = 117", schema:decode("Snapshot", peer:encode("Snapshot", value)))

-- 3. a count past the array's max: bit 26 is the count's 64
show("count 3 + 64", schema:decode("Snapshot",
  bytes:sub(1, 3) .. string.char(bytes:byte(4) | 0x04) .. bytes:sub(5)))

-- 4. encoding a value that does not fit raises, naming the same path
local _, err = pcall(schema.encode, schema, "Snapshot", value)
print("encode health = 117    -> raises: " .. tostring(err))
value.entities[2].pos.y = nil
local encoded
encoded, err = pcall(schema.encode, schema, "Snapshot", value)
print("encode without pos.y   -> raises: " .. tostring(err))

os.exit(encoded and 1 or 0)
