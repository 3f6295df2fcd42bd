-- The seeds' PacketA, PacketB and PacketC ("Serialization Strategies"),
-- written twice: as schema descriptions, and as unified serialize functions
-- (one function for write, read and measure, like serialize.h's). Both give
-- the same bytes; each is sized next to JSON and decoded back.
--
--   LUA_PATH="./lua/?.lua;./lua/?/init.lua;;" LUA_CPATH="./build/?.so;;" \
--     lua5.4 examples/packets.lua
local bitwire = require "bitwire"
local cjson = require "cjson"

local MAX_ELEMENTS = 32

-- {===== as a schema: one table describes the wire =====
local schema = bitwire.schema {
  PacketA = {                      -- serialize_bits(x, 32) ...
    { "x", "uint", bits = 32 }, { "y", "uint", bits = 32 }, { "z", "uint", bits = 32 },
  },
  PacketB = {                      -- serialize_int(numElements, 0, Max), then bits
    { "elements", "array", of = { "uint", bits = 32 }, max = MAX_ELEMENTS },
  },
  PacketC = {                      -- a bool, a short, an int
    { "x", "bool" },
    { "y", "int", min = -32768, max = 32767 },
    { "z", "int", min = -0x80000000, max = 0x7fffffff },
  },
}
-- }=====

-- {===== as unified serialize functions (nil if bitwire.serializer is absent) =====
local serializers
if bitwire.serializer then
  serializers = {
    PacketA = bitwire.serializer(function (s, p)
      s:bits(p, "x", 32)
      s:bits(p, "y", 32)
      s:bits(p, "z", 32)
    end),
    PacketB = bitwire.serializer(function (s, p)
      s:array(p, "elements", MAX_ELEMENTS, function (s2, t, i) s2:bits(t, i, 32) end)
    end),
    PacketC = bitwire.serializer(function (s, p)
      s:bool(p, "x")
      s:int(p, "y", -32768, 32767)
      s:int(p, "z", -0x80000000, 0x7fffffff)
    end),
  }
end
-- }=====

local function hex (s)
  local h = s:sub(1, 20):gsub(".", function (c) return string.format("%02x", c:byte()) end)
  return #s > 20 and h .. "..." or h
end

local function same (a, b)
  if type(a) ~= "table" or type(b) ~= "table" then return a == b end
  for k, v in pairs(a) do if not same(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

local elements = {}
for i = 1, 10 do elements[i] = i * 1000003 % 4294967291 end
local packets = {
  { "PacketA", { x = 1, y = 1000, z = 4000000000 } },
  { "PacketB", { elements = elements } },
  { "PacketC", { x = true, y = -1234, z = 2000000000 } },
}

local failed = false
for _, pk in ipairs(packets) do
  local name, value = pk[1], pk[2]
  local bytes = schema:encode(name, value)
  local back = schema:decode(name, bytes)
  local json = cjson.encode(value)
  print(string.format("%s: %d bytes (%d bits) vs %d bytes of JSON", name,
    #bytes, schema:bits(name, value), #json))
  print("  schema     " .. hex(bytes))
  if not same(back, value) then
    failed = true
    print("  MISMATCH: schema decode differs")
  end
  local ser = serializers and serializers[name]
  if ser then
    local b2 = ser:encode(value)
    local back2 = ser:decode(b2)
    print("  serializer " .. hex(b2) .. string.format(" (%d bits measured)",
      ser:measure(value)))
    if b2 ~= bytes or not same(back2, value) then
      failed = true
      print("  MISMATCH: serializer and schema disagree")
    end
  end
  print("  decoded back: " .. cjson.encode(back))
end
if not serializers then print("(bitwire.serializer not available: schema only)") end
os.exit(failed and 1 or 0)
