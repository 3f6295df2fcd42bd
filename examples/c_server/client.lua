-- The Lua prototype's side of examples/c_server: starts the C server built
-- from the same definitions (make example-c-server), sends it framed
-- messages over UDP on 127.0.0.1 and decodes its answers with the Lua driver.
--   lua5.4 examples/c_server/client.lua build/examples/c_server/server
local bitwire = require "bitwire"
local socket = require "socket"

local server_bin = assert(arg[1], "usage: client.lua SERVER")
local port = 40000 + os.time() % 2000
local here = arg[0]:match("^(.*)/[^/]*$") or "."
local schema = assert(bitwire.load(here .. "/defs.lua"))

local ID = 0x6269747769726531   -- the protocol id; server.c has it too

-- framed as the server's core frames: CRC32 over the id as it is (no
-- fingerprint folded in), message id, message, end check
local HDR = { id = ID, check = true }

local function frame(name, value)
  return schema:frame_encode(HDR, name, value)
end

local function unframe(packet)
  return schema:frame_decode(HDR, packet)
end

local server = assert(io.popen(server_bin .. " " .. port, "r"))
local udp = assert(socket.udp())
udp:settimeout(0.1)
assert(udp:setpeername("127.0.0.1", port))

-- send, and wait for the answer (the server may still be starting)
local function ask(name, value)
  local packet = frame(name, value)
  for _ = 1, 30 do
    udp:send(packet)
    local reply = udp:receive()
    if reply then
      local rname, rvalue = unframe(reply)
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

-- a corrupted packet: the CRC says so, in C as in Lua
local good = frame("Input", { tick = 8, move = { x = 1, y = 2, z = 3 }, fire = true })
local flipped = good:sub(1, 5) .. string.char(good:byte(6) ~ 4) .. good:sub(7)
local _, crcerr, crccode = unframe(flipped)
print("client: Lua says the flipped packet fails with: " .. crccode)
udp:send(flipped)

-- a message cut short inside a valid frame: the C server names the field,
-- as Lua does
local cut = schema:encode_message("Input", { tick = 9, move = { x = 1, y = 2, z = 3 }, fire = true })
local _, err = schema:decode_message(cut:sub(1, 4))
print("client: Lua says the cut message fails with: " .. err)
local w = bitwire.writer()   -- the cut bytes in a frame of their own
w:frame_begin()
for i = 1, 4 do w:bits(cut:byte(i), 8) end
w:frame_end(ID, true)
udp:send(w:tostring())

udp:send(frame("Bye", { reason = "done" }))
local log = server:read("a")
server:close()
io.write(log)
assert(log:find("Bye %(done%), stopping"), "the server did not stop on Bye")
assert(log:find("dropped a packet: " .. crccode, 1, true), "the server took a corrupted packet")
assert(crcerr)
local path = err:match("^([%w_.%[%]]+): ")
assert(log:find("bad packet: " .. path .. ": truncated", 1, true),
  "the server did not name the field " .. path)
print("client: the C server read every message the Lua prototype sent")
