-- The generated Wireshark dissector against bitwire itself: encodes framed
-- packets (sparse slots, quaternions, 64-bit fields, a delta frame, a
-- packet with a bad CRC; message ids in another order than the type ids),
-- writes them to a pcap with text2pcap, dissects it with tshark and the
-- plugin, and checks every field line tshark prints against bitwire's own
-- dissect of the same packet. Prints "N passed, N failed"; without tshark
-- it says it was skipped, and why.
-- usage (make wireshark-test): lua5.4 tools/test_wireshark.lua
local bitwire = require "bitwire"
local dissect = require "bitwire.dissect"
local PATHS = require("bitwire.core").frame_paths

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  return out, ok
end

if not select(2, sh("command -v tshark && command -v text2pcap")) then
  print("wireshark test SKIPPED: tshark/text2pcap are not installed and could not be installed")
  print("0 passed, 0 failed")
  os.exit(0)
end

local DEFS, DIR, ID, PORT = "spec/fixtures/defs/wireshark.lua", "build/ws", 0x42, 9999
os.execute("mkdir -p " .. DIR)
local s = assert(bitwire.load(DEFS))
local plain = bitwire.protocol(s, { id = ID })
local deltas = bitwire.protocol(s, { id = ID, deltas = true })

local ent = { id = 5, kind = "grunt", pos = { x = 1.5, y = 2.25, z = -3.125 },
  rot = { 0, 0, 0.6, 0.8 }, name = "ab", hp = 19, big = -9007199254740993,
  mask = 1099511627775, yaw = -90.5 }
local snap = { tick = 77, ents = { [3] = ent, [40] = { id = -8, kind = "player",
  pos = { x = 0, y = 0, z = 0 }, rot = { 1, 0, 0, 0 }, hp = 0, big = 0, mask = 0,
  yaw = 359.9 } },
  ids = { 1, 2, 63 }, blob = "\1\2" }
local snap2 = { tick = 78, ents = snap.ents, ids = { 4 }, blob = "" }

-- { bytes, protocol, note, name = message type }
local packets = {
  { plain:encode("Snap", snap), plain, name = "Snap" },
  { plain:encode("Vec3", { x = 1, y = -2, z = 3 }), plain, name = "Vec3" },
  { plain:encode("Ent", ent), plain, name = "Ent" },
}
local bad = plain:encode("Vec3", { x = 4, y = 5, z = 6 })
packets[#packets + 1] = { bad:sub(1, 6) .. string.char(bad:byte(7) ~ 0x10) .. bad:sub(8),
  plain, "badcrc", name = "Vec3" }
local d = deltas:encode("Snap", snap2, { baseline = snap, baseline_id = 7 })

-- the dissectors: one for plain frames and one for delta frames, two ports
local function gen(extra, port, out)
  local _, ok = sh(string.format("lua5.4 bin/bitwire wireshark %s --protocol %d --udp-port %d %s -o %s",
    DEFS, ID, port, extra, out))
  assert(ok, "bitwire wireshark failed")
end
gen("", PORT, DIR .. "/plain.lua")
gen("--deltas --name bitwire_delta", PORT + 1, DIR .. "/delta.lua")

local f = assert(io.open(DIR .. "/packets.txt", "w"))
for _, p in ipairs(packets) do
  f:write("0000 ", (p[1]:gsub(".", function (c) return string.format("%02x ", c:byte()) end)), "\n")
end
f:close()
local _, ok = sh(string.format("text2pcap -q -u 5000,%d %s/packets.txt %s/plain.pcap", PORT, DIR, DIR))
assert(ok, "text2pcap failed")
f = assert(io.open(DIR .. "/delta.txt", "w"))
f:write("0000 ", (d:gsub(".", function (c) return string.format("%02x ", c:byte()) end)), "\n")
f:close()
assert(select(2, sh(string.format("text2pcap -q -u 5000,%d %s/delta.txt %s/delta.pcap", PORT + 1, DIR, DIR))))

local function tshark(plugin, pcap)
  local out = sh(string.format("tshark -X lua_script:%s -r %s -V", plugin, pcap))
  local frames = {}
  for block in ("\n" .. out):gmatch("\nbitwire[%w_]*\n(.-)\n\n") do frames[#frames + 1] = block end
  return frames, out
end

local passed, failed = 0, 0
local function check(cond, what)
  if cond then passed = passed + 1
  else
    failed = failed + 1
    print("FAILED: " .. what)
  end
end

-- the line the plugin prints for a field entry
local function show(v, kind, bits)
  if type(v) == "table" then
    local parts = {}
    for i = 1, #v do parts[i] = string.format("%.9g", v[i]) end
    return "(" .. table.concat(parts, ", ") .. ")"
  elseif math.type(v) == "integer" and bits > 32 and (kind == "int" or kind == "uint") then
    if v < 0 and kind == "uint" then
      local q = (v >> 1) // 5
      return string.format('"%d%d"', q, v - q * 10)
    end
    return string.format("%q", tostring(v))
  elseif type(v) == "number" then
    if kind == "float" or kind == "float32" or kind == "float64" or kind == "angle" then
      return string.format("%.9g", v)
    end
    return string.format("%.0f", v)
  elseif type(v) == "string" then
    if kind == "bytes" then
      return "0x" .. (v:gsub(".", function (c) return string.format("%02x", c:byte()) end))
    end
    return require("bitwire.cliutil").quote(v)   -- as the plugin escapes it
  end
  return tostring(v)
end

local function compare(frames, bytes, proto, note, label)
  local frame = { wire_id = dissect.wire_id(proto), endcheck = proto.endcheck, deltas = proto.deltas }
  local entries, h = dissect.frame(s, bytes, frame)
  local text = frames or ""
  local n = 0
  for _, e in ipairs(entries) do
    if e.kind ~= "struct" and e.kind ~= "array" and e.kind ~= "sparse"
        and e.path ~= PATHS.crc and e.path ~= PATHS.check then
      local line = string.format("%s = %s [bits %d..%d]", e.path, show(e.value, e.kind, e.bits),
        e.bit, e.bit + e.bits - 1)
      n = n + 1
      check(text:find(line, 1, true) ~= nil, label .. ": tshark shows '" .. line .. "'")
    end
  end
  check(n > 3, label .. ": fields compared")
  if note == "badcrc" then
    check(text:find("BAD CRC", 1, true) ~= nil, label .. ": bad CRC flagged")
  else
    check(text:find("] ok\n", 1, true) ~= nil or text:find("] ok$") ~= nil, label .. ": CRC ok")
  end
  return h
end

local frames, raw = tshark(DIR .. "/plain.lua", DIR .. "/plain.pcap")
check(#frames == #packets, "tshark dissected " .. #frames .. " of " .. #packets .. " packets")
if #frames ~= #packets then print(raw) end
for i, p in ipairs(packets) do
  local h = compare(frames[i], p[1], p[2], p[3], "packet " .. i)
  check(h and h.name == p.name, "packet " .. i .. ": bitwire dissect reads " .. p.name)
end
-- the summary names each packet's message: the frame's message id goes
-- through the description's messages list, whose order is not the types'
local summary = sh(string.format("tshark -X lua_script:%s/plain.lua -r %s/plain.pcap", DIR, DIR))
local shown = {}
for name in summary:gmatch(" bitwire %d+ (%w+)") do shown[#shown + 1] = name end
for i, p in ipairs(packets) do
  check(shown[i] == p.name, "packet " .. i .. ": tshark's summary says " .. p.name
    .. " (got " .. tostring(shown[i]) .. ")")
end
local dframes = tshark(DIR .. "/delta.lua", DIR .. "/delta.pcap")
local h = compare(dframes[1], d, deltas, nil, "delta frame")
check(h and h.delta == 1 and (dframes[1] or ""):find("delta against baseline 7", 1, true) ~= nil,
  "delta frame marked with its baseline id")
check((dframes[1] or ""):find("ents^ = 0 [bits", 1, true) ~= nil
  and (dframes[1] or ""):find("(delta: kept)", 1, true) ~= nil, "kept fields marked")
-- the plugin's fields filter packets
local only = sh(string.format("tshark -X lua_script:%s/plain.lua -r %s/plain.pcap -Y 'bitwire.type == \"Vec3\"'",
  DIR, DIR))
local function rows(out) return select(2, out:gsub(" bitwire %d+ ", "")) end
local nvec = rows(only)
check(nvec == 2, "filter bitwire.type == \"Vec3\" keeps the 2 Vec3 packets (got " .. nvec .. ")")
local badonly = sh(string.format("tshark -X lua_script:%s/plain.lua -r %s/plain.pcap -Y 'bitwire.crc_ok == 0'",
  DIR, DIR))
check(rows(badonly) == 1 and badonly:find("BAD CRC", 1, true) ~= nil,
  "filter bitwire.crc_ok == 0 keeps the damaged packet")
check(raw:find("Expert Info (Error/Checksum): Bad CRC32", 1, true) ~= nil, "bad CRC as expert info")
-- and every schema field is a filter field of its own
local function filter(expr)
  return rows(sh(string.format("tshark -X lua_script:%s/plain.lua -r %s/plain.pcap -Y '%s'",
    DIR, DIR, expr)))
end
check(filter("bitwire.Ent.hp == 19") == 2, "bitwire.Ent.hp == 19: the Snap and the Ent packet")
check(filter("bitwire.Vec3.x == 1") == 1, "bitwire.Vec3.x == 1: one packet")
check(filter('bitwire.Ent.kind == "player"') == 1, "bitwire.Ent.kind == \"player\": the Snap packet")
check(filter('bitwire.Ent.big == "-9007199254740993"') == 2, "64-bit values filter as strings")
local ticks = sh(string.format("tshark -X lua_script:%s/plain.lua -r %s/plain.pcap -T fields "
  .. "-e bitwire.Snap.tick -e bitwire.Snap.ids", DIR, DIR))
check(ticks:find("77\t1,2,63", 1, true) ~= nil, "-e bitwire.Snap.tick -e bitwire.Snap.ids gives 77 and 1,2,63")
print(string.format("wireshark (%s): %d passed, %d failed",
  "Lua " .. (sh("tshark -v"):gsub("%s+", " "):match("with Lua (%d+%.%d+)") or "?"), passed, failed))
print(string.format("%d passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
