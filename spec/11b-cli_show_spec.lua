-- What the `bitwire` tools print of a packet's own text: one line per
-- field, and nothing a terminal acts on, whatever the packet holds.
local bitwire = require "bitwire"
local H = require "spec.helpers"

local run = H.runcli

describe("bitwire dissect of a string", function()
  it("keeps it on its line, newlines and C1 controls escaped", function()
    local defs = os.tmpname()
    H.write(defs, 'return { T = { {"s", "string", max = 90}, {"n", "int", min = 0, max = 7} } }')
    local s = bitwire.load(defs)
    -- a string that forges a field line and the verdict, then U+009B (CSI)
    local forged = "x\n     6     3  7                n = 7\nok: 9 bits read of 9\n"
      .. "\u{9b}31m\r"
    local bytes = s:encode("T", { s = forged, n = 1 })
    local status, out = run("dissect", defs, "T", "hex:" .. H.tohex(bytes))
    os.remove(defs)
    assert.equal(0, status)
    local lines = {}
    for l in out:gmatch("[^\n]*\n") do lines[#lines + 1] = l end
    assert.equal(5, #lines)   -- source, heading, s, n, the verdict
    assert.equal('s = "x\\n     6     3  7                n = 7\\nok: 9 bits read of 9\\n'
      .. '\\u{9b}31m\\13"\n', lines[3]:match("s = .*"))
    assert.is_nil(out:find("\u{9b}", 1, true))
    -- still a Lua string literal of the value
    assert.equal(forged, load("return " .. lines[3]:match("s = (.*)\n"))())
  end)
end)

describe("the Wireshark plugin's label of a string", function()
  it("keeps it on its line, newlines and C1 controls escaped", function()
    if not os.execute("command -v tshark >/dev/null && command -v text2pcap >/dev/null") then
      pending("tshark and text2pcap are not installed")
      return
    end
    local defs, plugin, txt, pcap = os.tmpname(), os.tmpname(), os.tmpname(), os.tmpname()
    H.write(defs, 'return { T = { {"s", "string", max = 90}, {"n", "int", min = 0, max = 7} } }')
    local s = bitwire.load(defs)
    local p = bitwire.protocol(s, { id = 0x77, fingerprint = false })
    local bytes = p:encode("T", { s = "x\nn = 7 [bits 0..2]\n\u{9b}31m", n = 1 })
    H.write(txt, "0000 " .. H.tohex(bytes):gsub("%x%x", "%0 ") .. "\n")
    assert.equal(0, (run("wireshark", defs, "--protocol", "0x77", "--udp-port", "7779",
      "--no-fingerprint", "-o", plugin)))
    local ok = os.execute("text2pcap -q -u 5000,7779 " .. txt .. " " .. pcap)
    local out = io.popen("tshark -X lua_script:" .. plugin .. " -r " .. pcap .. " -V 2>&1"):read("a")
    for _, f in ipairs { defs, plugin, txt, pcap } do os.remove(f) end
    assert.is_true(ok)
    assert.matches('\n        s = "x\\nn = 7 [bits 0..2]\\n\\u{9b}31m" [bits 32..', out, 1, true)
    assert.is_nil(out:find("\u{9b}", 1, true))
  end)
end)

describe("bitwire diff of a default", function()
  it("prints a string or bytes default in one line, C1 and raw bytes escaped", function()
    local old, new = os.tmpname(), os.tmpname()
    H.write(old, 'return { T = { {"s", "string", max = 10, default = "zz"}, {"b", "bytes", max = 4} } }')
    H.write(new, 'return { T = { {"s", "string", max = 10, default = "a\\nb\\xc2\\x9b2J"},'
      .. ' {"b", "bytes", max = 4, default = "\\x9b2J\\n"} } }')
    local status, out = run("diff", old, new)
    os.remove(old)
    os.remove(new)
    assert.equal(2, status)
    assert.matches('T: ~ s default "zz" -> "a\\nb\\u{9b}2J" (not on the wire)\n', out, 1, true)
    assert.matches('T: ~ b default none -> "\\1552J\\n" (not on the wire)\n', out, 1, true)
    assert.is_nil(out:find("[\128-\255]"))
  end)
end)

describe("the Wireshark plugin on a packet too short for a frame", function()
  it("says so as dissect does, as a malformed packet", function()
    if not os.execute("command -v tshark >/dev/null && command -v text2pcap >/dev/null") then
      pending("tshark and text2pcap are not installed")
      return
    end
    local defs, plugin, txt, pcap = os.tmpname(), os.tmpname(), os.tmpname(), os.tmpname()
    H.write(defs, 'return { T = { {"n", "int", min = 0, max = 7} } }')
    local s = bitwire.load(defs)
    local bytes = "\1\2\3\4\5"
    H.write(txt, "0000 01 02 03 04 05\n")
    local frame = { wire_id = 1, endcheck = true }
    local _, _, _, err = require("bitwire.dissect").frame(s, bytes, frame)
    assert.equal(0, (run("wireshark", defs, "--protocol", "1", "--udp-port", "7780",
      "--no-fingerprint", "-o", plugin)))
    local ok = os.execute("text2pcap -q -u 5000,7780 " .. txt .. " " .. pcap)
    local out = io.popen("tshark -X lua_script:" .. plugin .. " -r " .. pcap .. " -V 2>&1"):read("a")
    for _, f in ipairs { defs, plugin, txt, pcap } do os.remove(f) end
    assert.is_true(ok)
    local dissect = require "bitwire.dissect"
    assert.matches("error: " .. dissect.errtext(err) .. " [truncated]", out, 1, true)
    assert.matches("Expert Info (Error/Malformed): truncated: frame", out, 1, true)
  end)
end)

describe("a generator's refusal on the command line", function()
  it("names the definitions file, as the schema's errors do", function()
    local defs, dir = os.tmpname(), os.tmpname()
    os.remove(dir)
    H.write(defs, 'return { A = { {"NULL", "bool"} } }')
    local why = "bitwire.gen: field 'A.NULL' clashes with a C library name ('NULL' in struct A)\n"
    for _, args in ipairs { { "gen", "c", defs, "-o", dir }, { "gen", "c", defs, "-o", dir, "--blob" },
                            { "gen", "serialize-h", defs, "-o", dir }, { "blob", "header", defs } } do
      local status, out, err = run(table.unpack(args))
      assert.equal(1, status)
      assert.equal("", out)
      assert.equal("bitwire " .. args[1] .. ": " .. defs .. ": " .. why, err)
    end
    os.remove(defs)
  end)
end)

-- The README's "Command line" transcript, run by sh as a user types it:
-- each command prints what the README shows (its stdout, then its stderr;
-- a line "..." stands for lines the README leaves out).
describe("the README's command line transcript", function()
  it("runs as written and prints what it shows", function()
    local p = io.popen("pwd")
    local root = p:read("l") .. "/"
    p:close()
    local f = assert(io.open(root .. "README.md"))
    local block = f:read("a"):match("\n## Command line\n.-```\n(.-)```")
    f:close()
    assert.is_string(block)
    local steps = {}
    for line in block:gmatch("[^\n]*\n") do
      local cmd = line:match("^%$ (.*)\n$")
      if cmd then steps[#steps + 1] = { cmd = cmd, want = "" }
      else steps[#steps].want = steps[#steps].want .. line end
    end
    assert.is_true(#steps >= 7)
    local script = { 'E=$(mktemp)' }
    for _, st in ipairs(steps) do
      script[#script + 1] = "echo @@@"
      local line = st.cmd:gsub("^bitwire ", "lua5.4 " .. root .. "bin/bitwire ")
      -- a variable set for the commands after it prints nothing
      script[#script + 1] = st.cmd:match("^%u+=") and line or line .. ' 2>"$E"; cat "$E"'
    end
    script[#script + 1] = 'rm -f "$E"'
    local tmp = os.tmpname()
    H.write(tmp, table.concat(script, "\n") .. "\n")
    p = io.popen("cd " .. root .. " && sh " .. tmp)
    local out = p:read("a")
    p:close()
    os.remove(tmp)
    local i = 0
    for got in out:gmatch("@@@\n([^@]*)") do
      i = i + 1
      local st = steps[i]
      st.want = st.want:gsub("\n\n+$", "\n")   -- the blank line before the next $
      local head, tail = st.want:match("^(.-)%.%.%.\n(.*)$")
      if head then
        assert.equal(head, got:sub(1, #head), st.cmd)
        assert.equal(tail, got:sub(-#tail), st.cmd)
      else
        assert.equal(st.want, got, st.cmd)
      end
    end
    assert.equal(#steps, i)
  end)
end)
