-- A game client over UDP on 127.0.0.1 (see examples/game_server.lua): says
-- Hello, decodes every snapshot (deltas against the snapshots it kept) and
-- acks it; watches the same definitions file as the server, so a reload on
-- the server is a reload here too. Stops when the server has been silent
-- for a second, or after 20 seconds.
--
--   LUA_PATH="./lua/?.lua;./lua/?/init.lua;./examples/?.lua;;" \
--     LUA_CPATH="./build/?.so;;" lua5.4 examples/game_client.lua [port [defs]]
local socket = require "socket"
local bitwire = require "bitwire"
local G = require "game_loop"

local PORT = tonumber(arg[1]) or 40123
local DEFS = arg[2] or "/tmp/bitwire_game_defs.lua"

-- the server writes the definitions file: wait for it
local reg, err
local start = socket.gettime()
repeat
  reg, err = bitwire.watch(DEFS)
  if not reg then socket.sleep(0.02) end
until reg or socket.gettime() - start > 5
if not reg then error("client: no definitions: " .. tostring(err)) end

local client = G.client(reg)
local udp = assert(socket.udp())
assert(udp:setpeername("127.0.0.1", PORT))
udp:settimeout(0.05)

local last, hello_at, armor = nil, 0, false
while true do
  local now = socket.gettime()
  if now - start > 20 or (last and now - last > 1) then break end
  if not last and now - hello_at > 0.1 then   -- until the server answers
    udp:send(client:hello("lua"))
    hello_at = now
  end
  local packet = udp:receive()
  if packet then
    local ack, msg, code = client:receive(packet)
    if code == "schema" and reg:poll() then    -- the server reloaded first
      print("client: reloaded (" .. reg:current():fingerprint() .. ")")
      ack, msg, code = client:receive(packet)
    end
    if ack then
      udp:send(ack)
      last = now
      if client.state.entities[7].armor == 9 and not armor then
        armor = true
        print("client: armor seen at tick " .. client.state.tick)
      end
    else
      print(("client: dropped a packet (%s): %s"):format(code, msg))
    end
  end
  reg:poll()
end
udp:close()
print(("client: received %d snapshots, last tick %s"):format(client.received,
  client.state and client.state.tick or "none"))
