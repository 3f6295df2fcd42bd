-- Delta snapshots: the server sends each snapshot as a delta against the
-- newest one the client has acked, naming it by id in the frame. The client
-- keeps what it decoded for each id and resolves deltas against that; a
-- packet whose baseline it no longer has is dropped with code "baseline".
-- Packets get lost on the way (every 7th here) and acks come back a round
-- trip later, so the baseline is usually a few ticks old.
--
--   LUA_PATH="./lua/?.lua;./lua/?/init.lua;;" LUA_CPATH="./build/?.so;;" \
--     lua5.4 examples/snapshot_delta.lua
local bitwire = require "bitwire"

local N = 64
local schema = bitwire.schema {
  Pos = {
    { "x", "float", min = -256, max = 255, res = 1 / 512 },
    { "y", "float", min = -256, max = 255, res = 1 / 512 },
    { "z", "float", min = 0, max = 32, res = 1 / 512 },
  },
  Cube = { { "pos", "Pos" }, { "rot", "quat", bits = 9 }, { "at_rest", "bool" } },
  Snapshot = {
    { "tick", "uint", bits = 16 },
    { "cubes", "sparse", of = "Cube", max = N },
  },
}
local server = bitwire.protocol(schema, { id = 0x736e6170, deltas = true })
local client = bitwire.protocol(schema, { id = 0x736e6170, deltas = true })

-- the world: every cube slides and spins to a stop, cube 1 never stops
local cubes = {}
for i = 1, N do
  cubes[i] = { x = i - 32, y = 0, z = 0.5, vx = (i % 5) - 2, angle = 0, spin = 1,
               damping = 0.80 + 0.19 * (i / N) }
end
local function snapshot (tick)
  local list = {}
  for i, c in ipairs(cubes) do
    if i > 1 then c.vx, c.spin = c.vx * c.damping, c.spin * c.damping end
    c.x, c.angle = c.x + c.vx / 60, c.angle + c.spin / 60
    local rest = math.abs(c.vx) < 0.01 and math.abs(c.spin) < 0.01
    list[i] = { pos = { x = c.x, y = c.y, z = c.z },
                rot = { 0, 0, math.sin(c.angle / 2), math.cos(c.angle / 2) },
                at_rest = rest }
  end
  return { tick = tick, cubes = list }
end

local RTT = 6
local sent = {}        -- server: snapshots by id, to delta against once acked
local acked            -- server: newest id the client acked
local received = {}    -- client: what it decoded, by id
local acks = {}        -- acks on their way back: tick -> id
local full_bytes, delta_bytes = 0, 0

for tick = 1, 120 do
  local snap = snapshot(tick)
  local id = tick % 65536
  sent[id] = snap
  if acks[tick] then acked = math.max(acked or 0, acks[tick]) end
  local opts = acked and { baseline = sent[acked], baseline_id = acked } or nil
  local packet = server:encode("Snapshot", snap, opts)
  full_bytes = full_bytes + #server:encode("Snapshot", snap)
  delta_bytes = delta_bytes + #packet

  if tick % 7 ~= 0 then                       -- the network drops every 7th
    local name, value, code = client:decode(packet, { baselines = received })
    if name then
      received[id] = value
      acks[tick + RTT] = id                   -- the ack arrives a round trip later
      received[(id - 32) % 65536] = nil       -- keep a window of 32 baselines
    else
      print("tick " .. tick .. ": dropped, " .. value .. " (" .. code .. ")")
    end
  end
  if tick % 20 == 0 then
    print(string.format("tick %3d  %4d bytes %s", tick, #packet,
      opts and ("(delta against tick " .. acked .. ")") or "(full)"))
  end
end

print(string.format("120 snapshots: %d bytes as deltas, %d bytes sent in full (%.0f%%)",
  delta_bytes, full_bytes, 100 * delta_bytes / full_bytes))

-- the client's latest state equals a full decode of what the server sent
local last = 0
for id in pairs(received) do last = math.max(last, id) end
local expect = schema:decode("Snapshot", schema:encode("Snapshot", sent[last]))
local got = received[last]
for i = 1, N do
  assert(got.cubes[i].pos.x == expect.cubes[i].pos.x)
  assert(got.cubes[i].rot[4] == expect.cubes[i].rot[4])
end
print("client state at tick " .. last .. " matches the server's")

-- a client that lost its baselines (say it reconnected) cannot use a delta
local packet = server:encode("Snapshot", snapshot(121), { baseline = sent[last], baseline_id = last })
local _, msg, code = client:decode(packet, { baselines = {} })
print("without its baseline: " .. msg .. " (" .. code .. ")")
