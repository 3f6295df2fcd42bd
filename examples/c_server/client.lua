-- The Lua prototype's side of examples/c_server: starts the C server built
-- from the same definitions (make example-c-server), sends it messages
-- over UDP on 127.0.0.1 and decodes its answers with the Lua driver.
--   lua5.4 examples/c_server/client.lua build/examples/c_server/server
local bitwire = require "bitwire"
local socket = require "socket"

local server_bin = assert(arg[1], "usage: client.lua SERVER")
local port = 40000 + os.time() % 2000
local here = arg[0]:match("^(.*)/[^/]*$") or "."
local schema = assert(bitwire.load(here .. "/defs.lua"))

local server = assert(io.popen(server_bin .. " " .. port, "r"))
local udp = assert(socket.udp())
udp:settimeout(0.1)
assert(udp:setpeername("127.0.0.1", port))

-- send, and wait for the answer (the server may still be starting)
local function ask(name, value)
  local packet = schema:encode_message(name, value)
  for _ = 1, 30 do
    udp:send(packet)
    local reply = udp:receive()
    if reply then
      local rname, rvalue = schema:decode_message(reply)
      return assert(rname, rvalue), rvalue
    end
    socket.sleep(0.05)   -- refused: the server is not listening yet
  end
  error("no answer to " .. name)
end

local name, welcome = ask("Hello", { name = "ada", team = "blue" })
print(string.format("client: %s player %d, %q, spawn (%.2f, %.2f, %.2f)", name,
  welcome.player, welcome.greeting, welcome.spawn.x, welcome.spawn.y,
  welcome.spawn.z))
assert(name == "Welcome" and welcome.greeting == "welcome, ada")

local pos
for tick = 1, 3 do
  local _, ack = ask("Input", { tick = tick, move = { x = 1.5, y = 0, z = -0.25 },
                                fire = tick == 2 })
  assert(ack.tick == tick)
  pos = ack.pos
end
print(string.format("client: server has us at (%.2f, %.2f, %.2f)", pos.x, pos.y, pos.z))
assert(math.abs(pos.x - 4.5) < 0.02 and math.abs(pos.z + 0.75) < 0.02)

-- a packet cut short: the C server names the field, as Lua would
local cut = schema:encode_message("Input", { tick = 9, move = { x = 1, y = 2, z = 3 }, fire = true })
udp:send(cut:sub(1, 4))
local _, err = schema:decode_message(cut:sub(1, 4))
print("client: Lua says the cut packet fails with: " .. err)

udp:send(schema:encode_message("Bye", { reason = "done" }))
local log = server:read("a")
server:close()
io.write(log)
assert(log:find("Bye %(done%), stopping"), "the server did not stop on Bye")
local path = err:match("^([%w_.%[%]]+): ")
assert(log:find("bad packet: " .. path .. ": truncated", 1, true),
  "the server did not name the field " .. path)
print("client: the C server read every message the Lua prototype sent")
