-- Framed packets: bitwire.protocol puts a CRC32 in front of each message,
-- computed over a protocol id that is never sent (with the schema's
-- fingerprint folded in), and an end check after it. Flip any one bit and
-- the receiver says so instead of handing over garbage.
--
--   LUA_PATH="./lua/?.lua;./lua/?/init.lua;;" LUA_CPATH="./build/?.so;;" \
--     lua5.4 examples/framing.lua
local bitwire = require "bitwire"

local schema = bitwire.schema {
  Input = {
    { "tick", "uint", bits = 16 },
    { "buttons", "uint", bits = 8 },
    { "aim", "vector", count = 2, min = -1, max = 1, res = 0.001 },
  },
  Chat = { { "text", "string", max = 64 } },
}
local proto = bitwire.protocol(schema, { id = 0x67616d65 })

local function hex (s)
  return (s:gsub(".", function (c) return string.format("%02x", c:byte()) end))
end

local input = { tick = 4711, buttons = 0x05, aim = { 0.25, -0.5 } }
local packet = proto:encode("Input", input)
print(string.format("packet  %s  (%d bytes: %d of message, %d of framing)",
  hex(packet), #packet, #packet - proto:overhead(), proto:overhead()))

local name, value = proto:decode(packet)
print(string.format("decoded %s tick=%d buttons=%d aim=(%.3f, %.3f)",
  name, value.tick, value.buttons, value.aim[1], value.aim[2]))

-- flip bit 3 of byte 6 (inside the message), as a bad link might
local i = 6
local corrupt = packet:sub(1, i - 1) .. string.char(packet:byte(i) ~ 0x08)
  .. packet:sub(i + 1)
print("corrupt " .. hex(corrupt))
local got, msg, code = proto:decode(corrupt)
print(string.format("rejected: %s, %q, code %q", tostring(got), msg, code))

-- a peer whose schema differs (another fingerprint) is rejected the same way
local other = bitwire.protocol(bitwire.schema {
  Input = { { "tick", "uint", bits = 16 }, { "buttons", "uint", bits = 16 },
            { "aim", "vector", count = 2, min = -1, max = 1, res = 0.001 } },
  Chat = { { "text", "string", max = 64 } },
}, { id = 0x67616d65 })
print("other schema's packet: " .. select(2, proto:decode(other:encode("Input", input))))

-- too short to hold the framing at all
print("3 bytes: " .. select(2, proto:decode(packet:sub(1, 3))))

os.exit(got == nil and code == "crc" and 0 or 1)
