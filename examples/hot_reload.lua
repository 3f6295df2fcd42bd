-- Hot reload: a server loop keeps encoding snapshots while its definitions
-- file is edited under it. A good edit is swapped in (and the diff shown), a
-- bad edit is refused with its message while the old schema keeps serving,
-- and a packet framed with the earlier definitions still decodes, because
-- the registry keeps recent schemas by fingerprint.
--
--   make && LUA_PATH="./lua/?.lua;./lua/?/init.lua;;" \
--     LUA_CPATH="./build/?.so;;" lua5.4 examples/hot_reload.lua
local bitwire = require "bitwire"

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

-- the definitions file, as an operator would edit it
local function definitions(health_max, extra)
  return ([[
return {
  Entity = {
    {"id", "int", min = 0, max = 4095},
    {"health", "int", min = 0, max = HEALTH},
    {"pos", "vector", count = 2, min = -256, max = 256, res = 0.1},
    EXTRA
  },
  Snapshot = {
    {"tick", "uint", bits = 20},
    {"entities", "array", of = "Entity", max = 16},
  },
}
]]):gsub("HEALTH", tostring(health_max)):gsub("EXTRA", extra or "")
end

local path = os.tmpname()            -- our own definitions file
write(path, definitions(100))

local reg = assert(bitwire.watch(path))
local proto = reg:protocol { id = 0xB17 }
print("serving " .. reg:current():fingerprint() .. " from " .. path)

-- the edits made while the loop runs, by tick
local edits = {
  [3] = { "raise health to 200, add armor",
          definitions(200, '{"armor", "int", min = 0, max = 255, default = 0},') },
  [5] = { "a typo: max below min",
          definitions(200, '{"armor", "int", min = 0, max = -1},') },
  [7] = { "a syntax error", definitions(200, '{"armor" "int"},') },
}

local sent = {}
for tick = 1, 8 do
  local edit = edits[tick]
  if edit then
    print(("\ntick %d: operator saves the file (%s)"):format(tick, edit[1]))
    write(path, edit[2])
  end
  local before = reg:current()
  local changed, err = reg:poll()
  if changed then
    print("  reloaded " .. before:fingerprint() .. " -> " .. reg:current():fingerprint())
    print("  " .. tostring(bitwire.diff(before, reg:current())):gsub("\n", "\n  "))
  elseif err then
    print("  refused, still serving " .. reg:current():fingerprint() .. ":\n  " .. err)
  end
  local snapshot = { tick = tick, entities = {
    { id = 1, health = 50 + 10 * tick, pos = { 1.5 * tick, -3 }, armor = tick },
    { id = 2, health = 90, pos = { 0, 0 } },
  } }
  local packet = proto:encode("Snapshot", snapshot)
  sent[#sent + 1] = packet
  print(("tick %d: %d bytes, schema tag %08x"):format(tick, #packet,
    string.unpack("<I4", packet, 5)))
end

-- a peer reads every packet through the registry, old ones included
print("\ndecoding what was sent:")
for i, packet in ipairs(sent) do
  local name, v, schema = proto:decode(packet)
  assert(name, v)
  local e = v.entities[1]
  print(("  packet %d: %s tick %d, entity 1 health %d armor %s (schema %s)"):format(
    i, name, v.tick, e.health, tostring(e.armor), schema:fingerprint()))
end

os.remove(path)
