-- bitwire wireshark defs.lua --protocol ID --udp-port N -o dissector.lua
local util = require "bitwire.cliutil"

local M = {}

M.summary = "write a Wireshark Lua dissector for framed packets"
M.usage = [[
usage: bitwire wireshark defs.lua --protocol ID --udp-port N [-o dissector.lua]
                         [--no-check] [--no-fingerprint] [--deltas]
                         [--version-bits N] [--tag] [--name NAME]

Writes a Wireshark Lua plugin (to -o, or stdout) that dissects the framed
packets bitwire.protocol(schema, {id = ID, ...}) sends over UDP port N: the
CRC (flagged when it does not match), the frame header, the message type and
every field with its bit range, sparse slots, quaternions, delta frames
(changed and kept fields marked), and the end check. It runs on the Lua 5.2
that Wireshark embeds:
  tshark -X lua_script:dissector.lua -r capture.pcap -V
or copy it to ~/.local/lib/wireshark/plugins/.
]]

function M.run(args, io)
  local flags, options = {}, { ["udp-port"] = true, o = true, name = true }
  for k in pairs(util.FRAME_FLAGS) do flags[k] = true end
  for k in pairs(util.FRAME_OPTIONS) do options[k] = true end
  local pos, opts = util.parse(args, { flags = flags, options = options }, M.usage)
  local path = util.need(pos, 1, "definitions file", M.usage)
  util.nomore(pos, 1, M.usage)
  if opts.protocol == nil then util.fail("missing --protocol ID\n%s", M.usage) end
  if opts["udp-port"] == nil then util.fail("missing --udp-port N\n%s", M.usage) end
  local port = opts["udp-port"]
  local name = opts.name or "bitwire"
  local ws = require "bitwire.wireshark"
  local bad = ws.badname(name)
  if bad then util.fail("--name %s", bad) end
  -- a name tshark has already fails when Wireshark loads the plugin; asked
  -- only of a name given, since tshark takes a second to start
  local taken = opts.name and ws.protocols()
  if taken and taken[name:lower()] then
    util.fail("--name '%s' is a protocol Wireshark has already (tshark -G protocols)", name)
  end
  local s = util.loadschema(path)
  -- the framing options as encode, decode and dissect read and check them
  local frame = util.frame(s, opts, path)
  local text = require("bitwire.wireshark").generate(s, frame, { port = port, name = name })
  if opts.o then util.writefile(opts.o, text, io.stdout)
  else io.stdout:write(text) end
  return 0
end

return M
