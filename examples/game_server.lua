-- A game server over UDP on 127.0.0.1: 60 snapshots a second to every
-- client that said Hello, each a delta against the last snapshot that
-- client acked; the definitions file is watched, and rewritten halfway
-- through the run (a defaulted 'armor' field is added) to show a reload
-- under live deltas. Runs for a few seconds and stops by itself.
--
--   make && LUA_PATH="./lua/?.lua;./lua/?/init.lua;./examples/?.lua;;" \
--     LUA_CPATH="./build/?.so;;" lua5.4 examples/game_server.lua [port [defs [seconds]]]
-- and, alongside, examples/game_client.lua with the same port and defs.
local socket = require "socket"
local bitwire = require "bitwire"
local G = require "game_loop"

local PORT = tonumber(arg[1]) or 40123
local DEFS = arg[2] or "/tmp/bitwire_game_defs.lua"
local SECONDS = tonumber(arg[3]) or 3
local HZ = 60

G.write(DEFS, G.definitions(false))
local reg = assert(bitwire.watch(DEFS))
local server = G.server(reg)
local udp = assert(socket.udp())
assert(udp:setsockname("127.0.0.1", PORT))
udp:settimeout(0)
print(("server: 127.0.0.1:%d, definitions %s (%s)"):format(PORT, DEFS,
  reg:current():fingerprint()))

local start = socket.gettime()
local reloaded, worst = false, 0
while socket.gettime() - start < SECONDS do
  local now = socket.gettime() - start
  if not reloaded and now >= SECONDS / 2 then
    G.write(DEFS, G.definitions(true))
    reloaded = true
    server:edit("world", 7, { armor = 9 })
  end
  local changed, err = reg:poll()
  if changed then
    print(("server: reloaded at tick %d (%s)"):format(server.tick, reg:current():fingerprint()))
  elseif err then
    print("server: definitions refused: " .. err)
  end
  -- what the clients sent since the last tick
  for _ = 1, 64 do
    local packet, ip, port = udp:receivefrom()
    if not packet then break end
    local client = server:connect(ip .. ":" .. port)
    client.ip, client.port = ip, port
    local name, msg = server:receive(client, packet)
    if not name then print("server: dropped a packet: " .. msg) end
  end
  local snap = server:step()
  for _, client in pairs(server.clients) do
    local packet = server:packet_for(client)
    if client.acked then
      worst = math.max(worst, #packet / #server.proto:encode("Snapshot", snap))
    end
    udp:sendto(packet, client.ip, client.port)
  end
  socket.sleep(1 / HZ)
end
udp:close()
local st = server.stats
print(("server: %d ticks; full frames: %d (%d B); deltas: %d of at most %.0f%% of a full frame (%d B)")
  :format(server.tick, st.full, st.full_bytes, st.delta, worst * 100, st.delta_bytes))
os.remove(DEFS)
