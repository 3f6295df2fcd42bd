-- The `bitwire` command: each subcommand's output, its errors (file, type,
-- field; exit status 1) and its --help, through bitwire.cli.main with the
-- output captured; and bin/bitwire itself as a process.
local bitwire = require "bitwire"
local cli = require "bitwire.cli"
local H = require "spec.helpers"
local _

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local V1 = here .. "fixtures/defs/game_v1.lua"
local V3 = here .. "fixtures/defs/game_v3.lua"
local BAD = here .. "fixtures/defs/invalid.lua"

local buffer, run = H.buffer, H.runcli

-- The command 'args' fails with 'why' alone on stderr, nothing on stdout.
local function refuses(args, why)
  local status, out, err = run(table.unpack(args))
  assert.equal(1, status, args[1])
  assert.equal("", out, args[1])
  assert.equal("bitwire " .. args[1] .. ": " .. why .. "\n", err)
end

local function tmpfile(data)
  local name = os.tmpname()
  local f = assert(io.open(name, "wb"))
  f:write(data)
  f:close()
  return name
end

local SNAP = '{"tick":5,"entities":[{"id":7,"health":99,"armor":3,"shield":2,'
  .. '"name":"bob"},{"id":8,"health":1,"armor":3,"shield":2}]}'

describe("bitwire help", function()
  it("lists every subcommand of the table with its summary", function()
    local status, out = run("help")
    assert.equal(0, status)
    for _, name in ipairs(cli.commands) do
      assert.matches("\n  " .. name .. " ", out, 1, true)
    end
    assert.matches("check        load a definitions file", out, 1, true)
  end)

  it("gives the same list for help on help", function()
    local _, list = run("help")
    for _, args in ipairs { { "help", "help" }, { "help", "--help" }, { "--help" } } do
      local status, out, err = run(table.unpack(args))
      assert.equal(0, status)
      assert.equal(list, out)
      assert.equal("", err)
    end
  end)

  -- with no command the list went to stdout, though the status was 1
  it("says a command is missing on stderr, with the list, status 1", function()
    local _, list = run("help")
    local status, out, err = run()
    assert.equal(1, status)
    assert.equal("", out)
    assert.equal("bitwire: missing command\n" .. list, err)
  end)

  it("marks a subcommand whose module is missing as not available", function()
    table.insert(cli.commands, "nosuch")
    local _, out = run("help")
    local status, _, err = run("nosuch", "x")
    table.remove(cli.commands)
    assert.matches("nosuch       (not available)", out, 1, true)
    assert.equal(1, status)
    assert.equal("bitwire nosuch: 'nosuch' is not available in this installation\n", err)
  end)

  it("reports a subcommand's error(msg, 0) plainly, and a bug with its traceback", function()
    package.loaded["bitwire.cli.zz"] = { summary = "", usage = "usage: bitwire zz\n",
      run = function (args)
        if args[1] == "user" then error("zz needs a value", 0) end
        local t = nil
        return t.field   -- a bug
      end }
    table.insert(cli.commands, "zz")
    local s1, _, e1 = run("zz", "user")
    local s2, _, e2 = run("zz", "bug")
    table.remove(cli.commands)
    package.loaded["bitwire.cli.zz"] = nil
    assert.equal(1, s1)
    assert.equal("bitwire zz: zz needs a value\n", e1)
    assert.equal(1, s2)
    assert.matches("attempt to index a nil value", e2, 1, true)
    assert.matches("stack traceback:", e2, 1, true)
  end)

  it("says plainly that JSON needs lua-cjson when it is not installed", function()
    -- the rock does not depend on lua-cjson: its absence is the user's
    -- setup, not a bug, so no traceback
    local saved = package.loaded.cjson
    package.loaded.cjson = nil
    package.preload.cjson = function () error("module 'cjson' not found") end
    local s1, _, e1 = run("encode", V3, "Snapshot", "json:" .. SNAP)
    local s2, _, e2 = run("decode", V3, "Snapshot", "hex:0500000000")
    package.preload.cjson = nil
    package.loaded.cjson = saved
    assert.equal(1, s1)
    assert.equal("bitwire encode: bitwire.json needs lua-cjson (module 'cjson')\n", e1)
    assert.equal(1, s2)
    assert.equal("bitwire decode: bitwire.json needs lua-cjson (module 'cjson')\n", e2)
  end)

  it("prints bitwire.version with --version and version, listed in help", function()
    assert.matches("^%d+%.%d+%.%d+$", bitwire.version)
    for _, arg in ipairs { "--version", "version" } do
      local status, out, err = run(arg)
      assert.equal(0, status)
      assert.equal("bitwire " .. bitwire.version .. "\n", out)
      assert.equal("", err)
    end
    assert.matches("\n  version      print bitwire's version\n", select(2, run("help")), 1, true)
    refuses({ "version", "x" }, "unexpected argument 'x'\n" .. cli.load("version").usage)
  end)

  it("refuses an unknown command and an unknown option", function()
    local status, _, err = run("frobnicate")
    assert.equal(1, status)
    assert.matches("unknown command 'frobnicate'", err, 1, true)
    status, _, err = run("check", V3, "--frob")
    assert.equal(1, status)
    assert.matches("unknown option --frob", err, 1, true)
  end)

  it("gives each subcommand's usage with --help and with help <command>", function()
    for _, name in ipairs(cli.commands) do
      local mod, why = cli.load(name)
      -- every subcommand of this branch loads; gen and blob come from others
      if name ~= "gen" and name ~= "blob" then assert.is_table(mod, why) end
      if mod then
        local status, out = run(name, "--help")
        assert.equal(0, status)
        assert.equal(mod.usage, out)
        assert.matches("^usage: bitwire " .. name, out)
        assert.matches("\n$", out)   -- the shell's prompt on a line of its own
        assert.equal(out, select(2, run("help", name)))
      end
    end
    assert.matches("sparse        object keyed by slot number", select(2, run("encode", "--help")),
      1, true)
    assert.matches("--protocol ID", select(2, run("dissect", "--help")), 1, true)
  end)
end)

describe("bitwire check", function()
  it("lists types with ids, min and max bits, version and fingerprint", function()
    local s = bitwire.load(V3)
    local status, out = run("check", V3)
    assert.equal(0, status)
    assert.matches(V3 .. ": ok, 2 types, version 3, fingerprint " .. s:fingerprint(), out, 1, true)
    local p = s:program()
    for _, t in ipairs(p.types) do
      assert.matches(string.format("  %-4d %-24s %9d %10d", t.id, t.name, t.minbits, t.maxbits),
        out, 1, true)
    end
  end)

  it("gives the message ids of a messages list, and none to other types", function()
    -- the types sort Move, Ping, Pos; the messages are Ping 0, Move 1
    local defs = tmpfile([[return { messages = { "Ping", "Move" }, Ping = {},
      Move = { { "x", "int", min = 0, max = 7 }, { "p", "Pos" } }, Pos = { { "y", "bool" } } }]])
    local status, out = run("check", defs)
    os.remove(defs)
    assert.equal(0, status)
    assert.matches("\n  1    Move  .*\n  0    Ping  .*\n  %-    Pos  ", out)
  end)

  it("fails with the file, type and field, and status 1", function()
    local status, out, err = run("check", BAD)
    assert.equal(1, status)
    assert.equal("", out)
    assert.equal("bitwire check: " .. BAD .. ": bitwire.schema: Entity.health: min 100 > max 0\n", err)
    status, _, err = run("check", here .. "fixtures/defs/nope.lua")
    assert.equal(1, status)
    assert.matches("nope.lua: No such file", err, 1, true)
    status, _, err = run("check")
    assert.equal(1, status)
    assert.matches("missing definitions file\nusage: bitwire check", err, 1, true)
  end)

  it("refuses - for a definitions file, which is read only from a path", function()
    local WHY = "a definitions file must be a file's path, not - (standard input)"
    for _, args in ipairs { { "check", "-" }, { "fingerprint", "-", V3 }, { "diff", V3, "-" },
                            { "layout", "-", "Entity" }, { "decode", "-", "Snapshot", "hex:00" },
                            { "blob", "-", "Snapshot", "x.json", "-o", "x.bin" },
                            { "blob", "header", "-" } } do
      refuses(args, WHY)
    end
  end)
end)

describe("bitwire layout", function()
  it("lists each field's wire form, bits and share, and draws the prefix", function()
    local status, out = run("layout", V3, "Entity")
    assert.equal(0, status)
    assert.matches("Entity: 20..172 bits (worst case 22 bytes), version 3", out, 1, true)
    assert.matches("  id      12             7.0%  int [0, 4095]\n", out, 1, true)
    assert.matches("  name    1..141        82.0%  string max 16 optional\n", out, 1, true)
    assert.matches("  armor   8              4.7%  int [0, 255] v2..\n", out, 1, true)
    assert.matches([[
 0                   1                   2                   3
 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
|          id           |   health    |     armor     |
+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
]], out, 1, true)
  end)

  it("sorts by worst case with --sort and nests types", function()
    local status, out = run("layout", V3, "Snapshot", "--sort")
    assert.equal(0, status)
    local a, b = out:find("entities"), out:find("tick")
    assert.is_true(a < b)
    status, out = run("layout", V3, "Snapshot")
    assert.equal(0, status)
    assert.matches("  entities  4..1380       98.6%  array of Entity [0, 8]", out, 1, true)
  end)

  it("splits rows of the diagram at 32 bits", function()
    local d = require("bitwire.cli.layout").diagram({ { name = "a", bits = 30 },
      { name = "b", bits = 4 } })
    assert.matches("|b ~|\n+-+-+\n", d, 1, true)
    assert.matches("|a|b|\n", (d:gsub(" ", "")), 1, true)
  end)

  it("counts a UTF-8 name's characters, and cuts it between them", function()
    local defs = tmpfile([[return { T = { {"\u{e9}t\u{e9}s", "int", min = 0, max = 3},
      {"z", "bool"} } }]])
    local status, out = run("layout", defs, "T")
    os.remove(defs)
    assert.equal(0, status)
    assert.matches("  \u{e9}t\u{e9}s   2 ", out, 1, true)
    assert.matches("  z      1 ", out, 1, true)
    assert.matches("|\u{e9}t~|z|\n", out, 1, true)
  end)

  it("counts a wide character two columns and a combining mark none", function()
    local defs = tmpfile([[return { T = { {"\u{4f4d}\u{7f6e}", "int", min = 0, max = 3},
      {"z", "bool"}, {"e\u{301}", "bool"} } }]])
    local status, out = run("layout", defs, "T")
    os.remove(defs)
    assert.equal(0, status)
    assert.matches("  field  bits", out, 1, true)
    assert.matches("  \u{4f4d}\u{7f6e}   2 ", out, 1, true)  -- 4 columns, as "field" and 2
    assert.matches("  e\u{301}      1 ", out, 1, true)
    assert.matches("|\u{4f4d}~|z|e\u{301}|\n", out, 1, true)  -- 3 columns for 2 bits
    local util = require "bitwire.cliutil"
    assert.equal(4, util.width("\u{4f4d}\u{7f6e}"))
    assert.equal("\u{4f4d}", util.cut("\u{4f4d}\u{7f6e}", 3))  -- never half a wide one
    assert.equal(3, util.width("\255ab"))  -- not UTF-8: a byte each
  end)

  it("draws nested records and fixed arrays of the prefix, up to the first variable field", function()
    local defs = tmpfile([[return { V = { {"x","float",min=-512,max=512,res=0.01} },
      P = { {"tick","uint",bits=16}, {"pos","V"}, {"aim","vector",count=2,min=-1,max=1,res=0.001},
            {"check"}, {"name","string",max=8}, {"after","bool"} } }]])
    local status, out = run("layout", defs, "P")
    os.remove(defs)
    assert.equal(0, status)
    assert.matches("    x      17            ", out, 1, true)
    assert.matches("float [-512, 512] in 102400 steps", out, 1, true)
    assert.matches("fixed-size prefix of P (88 bits):", out, 1, true)   -- 16+17+22+1+32
    assert.matches("|             tick              |             pos.x             |", out, 1, true)
    assert.matches("|p|       aim[1]        |       aim[2]        |(|     check     |", out, 1, true)
    assert.is_nil(out:find("name", out:find("prefix"), true))
  end)

  it("names a type that does not exist", function()
    local status, _, err = run("layout", V3, "Nope")
    assert.equal(1, status)
    assert.equal("bitwire layout: " .. V3 .. ": no type 'Nope' (types: Entity, Snapshot)\n", err)
  end)
end)

describe("bitwire encode, decode, cost, dissect", function()
  local s = bitwire.load(V3)
  local value = bitwire.json.decode(s, "Snapshot", SNAP)
  local packet = s:encode("Snapshot", value)

  it("encodes JSON to the packet s:encode writes, as hex or to a file", function()
    local status, out = run("encode", V3, "Snapshot", "json:" .. SNAP)
    assert.equal(0, status)
    assert.equal(H.tohex(packet) .. "\n", out)
    local jf, pf = tmpfile(SNAP), os.tmpname()
    status = run("encode", V3, "Snapshot", jf, "-o", pf)
    assert.equal(0, status)
    local f = assert(io.open(pf, "rb"))
    assert.equal(packet, f:read("a"))
    f:close()
    os.remove(jf)
    os.remove(pf)
    -- -o - is stdout, as an input of - is stdin: the raw bytes
    status, out = run("encode", V3, "Snapshot", "json:" .. SNAP, "-o", "-")
    assert.equal(0, status)
    assert.equal(packet, out)
    assert.is_nil(io.open("-"))
    -- a write that fails at close (a full disk) fails the command
    if io.open("/dev/full", "w") then
      local err
      status, out, err = run("encode", V3, "Snapshot", "json:" .. SNAP, "-o", "/dev/full")
      assert.equal(1, status)
      assert.equal("", out)
      assert.matches("/dev/full: ", err, 1, true)
    end
  end)

  it("writes -o whole, by a rename: the old file stays as it was until the new one is there", function()
    local pf = os.tmpname()
    local f = assert(io.open(pf, "wb"))
    f:write("old bytes")
    f:close()
    local held = assert(io.open(pf, "rb"))  -- the old file, as a reader holds it
    local status = run("encode", V3, "Snapshot", "json:" .. SNAP, "-o", pf)
    assert.equal(0, status)
    assert.equal("old bytes", held:read("a"))  -- written in place, it would be cut
    held:close()
    f = assert(io.open(pf, "rb"))
    assert.equal(packet, f:read("a"))
    f:close()
    assert.is_nil(io.open(pf .. ".bitwire-tmp"))
    os.remove(pf)
    -- a device is written in place, never replaced; a link is written through
    status = run("encode", V3, "Snapshot", "json:" .. SNAP, "-o", "/dev/null")
    assert.equal(0, status)
    assert.is_true(os.execute("test -c /dev/null"))
    local target, link = os.tmpname(), os.tmpname()
    os.remove(link)
    assert.is_true(os.execute("ln -s " .. target .. " " .. link))
    status = run("encode", V3, "Snapshot", "json:" .. SNAP, "-o", link)
    assert.equal(0, status)
    assert.is_true(os.execute("test -L " .. link))
    f = assert(io.open(target, "rb"))
    assert.equal(packet, f:read("a"))
    f:close()
    os.remove(link)
    os.remove(target)
  end)

  it("decodes a packet back to the same JSON", function()
    local status, out = run("decode", V3, "Snapshot", "hex:" .. H.tohex(packet))
    assert.equal(0, status)
    assert.same(s:decode("Snapshot", packet), bitwire.json.decode(s, "Snapshot", out))
    assert.matches('^{"tick":5,"entities":%[{"id":7,"health":99,"armor":3,', out)
  end)

  it("round-trips framed packets", function()
    local status, out = run("encode", V3, "Snapshot", "json:" .. SNAP, "--protocol", "0x77")
    assert.equal(0, status)
    local proto = bitwire.protocol(s, { id = 0x77 })
    assert.equal(H.tohex(proto:encode("Snapshot", value)) .. "\n", out)
    status, out = run("decode", V3, "hex:" .. out, "--protocol", "0x77")
    assert.equal(0, status)
    assert.matches('^{"type":"Snapshot","value":{"tick":5,', out)
  end)

  -- an inline value was echoed whole in an error: lines of JSON made the
  -- error many lines, and a long one a line of that length
  it("names an inline value in one short line in its errors", function()
    local big = 'json:{\n  "tick": -1,\n  "entities": [' .. ("{}, "):rep(5000) .. "{}]\n}"
    local label = big:gsub("%s+", " "):sub(1, 61) .. "..."
    assert.equal('json:{ "tick": -1, "entities": [{}, {}, {}, {}, {}, {}, {}, {...', label)
    for _, cmd in ipairs { "cost", "encode" } do
      refuses({ cmd, V3, "Snapshot", big }, label .. ": bitwire.json.decode: Snapshot.tick: "
        .. "-1 is negative; a uint of 20 bits takes 0..1048575")
    end
    local hex = "hex:05\n00" .. ("00"):rep(100) .. "zz"
    refuses({ "decode", V3, "Snapshot", hex }, "hex:05 00" .. ("0"):rep(52) .. "...: not a hex string")
    local status, out, err = run("dissect", V3, "Snapshot", "hex:" .. ("ff"):rep(40))
    assert.equal(1, status)
    local name = "hex:" .. ("f"):rep(57) .. "..."
    assert.equal(name .. ": 40 bytes, Snapshot\n", out:match("^[^\n]*\n"))
    assert.matches("^error: " .. name:gsub("%p", "%%%0") .. ": Snapshot: ", err)
    -- a file's name is never cut
    local long = os.tmpname() .. ("_x"):rep(40)
    H.write(long, H.fromhex("0500000000"))
    status, out = run("dissect", V3, "Snapshot", long)
    os.remove(long)
    assert.equal(0, status)
    assert.equal(long .. ": 5 bytes, Snapshot\n", out:match("^[^\n]*\n"))
  end)

  -- decode refused the type dissect takes with a framed packet, naming
  -- the packet as the unexpected argument
  it("decodes a framed packet given with its type, as dissect does", function()
    local _, hex = run("encode", V3, "Snapshot", "json:" .. SNAP, "--protocol", "0x77")
    local P = "hex:" .. hex:sub(1, -2)
    local status, out, err = run("decode", V3, "Snapshot", P, "--protocol", "0x77")
    assert.equal(0, status, err)
    assert.equal(select(2, run("decode", V3, P, "--protocol", "0x77")), out)
    refuses({ "decode", V3, "Entity", P, "--protocol", "0x77" },
      P .. ": frame.type: packet holds Snapshot, not Entity [tag]")
    refuses({ "decode", V3, "Nope", P, "--protocol", "0x77" },
      V3 .. ": no type 'Nope' (types: Entity, Snapshot)")
    for _, cmd in ipairs { "decode", "dissect" } do
      assert.matches("bitwire " .. cmd .. " defs.lua [Type] packet --protocol ID",
        cli.load(cmd).usage, 1, true)
    end
  end)

  it("names the field of a value that does not fit, and of bad JSON", function()
    local status, _, err = run("encode", V3, "Snapshot", 'json:{"tick":5,"entities":[{"id":7,"health":999}]}')
    assert.equal(1, status)
    assert.matches("Snapshot: entities[1].health: 999 out of range [0, 100]", err, 1, true)
    status, _, err = run("encode", V3, "Snapshot", 'json:{"tick":"x"}')
    assert.equal(1, status)
    assert.matches("bitwire.json.decode: Snapshot.tick: 'x' is not an integer", err, 1, true)
    status, _, err = run("encode", V3, "Snapshot", 'json:{"tock":1}')
    assert.equal(1, status)
    assert.matches("unknown field 'tock'", err, 1, true)
  end)

  it("gives a library's error in one line without a Lua position", function()
    local bad = 'json:{"tick":5,"entities":[{"id":7,"health":999}]}'
    for _, args in ipairs {
      { "cost", V3, "Snapshot", bad },
      { "encode", V3, "Snapshot", bad },
      { "encode", V3, "Snapshot", bad, "--protocol", "7" },
      { "encode", V3, "Snapshot", bad, "--protocol", "7", "--deltas", "--baseline", "json:" .. SNAP },
    } do
      local status, out, err = run(table.unpack(args))
      assert.equal(1, status)
      assert.equal("", out)
      assert.matches("^bitwire " .. args[1] .. ": [^\n]*entities%[1%]%.health: 999 out of range "
        .. "%[0, 100%] %(bit %d+%)\n$", err)
      assert.not_matches("%.lua:%d+:", err)
    end
  end)

  it("words a value's error alike in cost, encode and blob: file, type, field", function()
    local bad = 'json:{"tick":5,"entities":[{"id":7,"health":999}]}'
    local _, _, cerr = run("cost", V3, "Snapshot", bad)
    local _, _, eerr = run("encode", V3, "Snapshot", bad)
    assert.equal("bitwire encode: " .. bad .. ": Snapshot: entities[1].health: 999 out of range "
      .. "[0, 100] (bit 36)\n", eerr)
    assert.equal(eerr:gsub("^bitwire encode", "bitwire cost"), cerr)
    local out = os.tmpname()
    local status, _, berr = run("blob", V3, "Snapshot", bad, "-o", out)
    os.remove(out)
    assert.equal(1, status)
    assert.equal("bitwire blob: " .. bad .. ": Snapshot: entities[1].health: 999 out of range "
      .. "[0, 100]\n", berr)
    -- and JSON the mapping refuses: the one reader, naming the argument
    local json = 'json:{"tick":5,"tock":1}'
    local errs = {}
    for _, cmd in ipairs { "cost", "encode", "blob" } do
      local st, _, e = run(cmd, V3, "Snapshot", json, cmd == "blob" and "-o" or nil,
        cmd == "blob" and out or nil)
      assert.equal(1, st)
      errs[#errs + 1] = e:gsub("^bitwire " .. cmd, "bitwire")
    end
    os.remove(out)
    assert.equal("bitwire: " .. json .. ": bitwire.json.decode: Snapshot: unknown field 'tock'\n", errs[1])
    assert.same({ errs[1], errs[1] }, { errs[2], errs[3] })
  end)

  it("stops reading an input at the most it may hold: a device never ends", function()
    local util = require "bitwire.cliutil"
    local limits = require("bitwire.core").limits
    assert.equal(limits.packet + 64, util.LIMITS.packet)
    assert.equal(limits.blob, util.LIMITS.blob)
    local f = io.open("/dev/zero", "rb")
    if f then  -- a packet past what encode makes, read a piece at a time
      f:close()
      refuses({ "decode", V3, "Snapshot", "/dev/zero" },
        "/dev/zero: more than " .. util.LIMITS.packet .. " bytes, the most this input may hold")
    end
    local name = tmpfile(("x"):rep(70000))
    assert.equal(70000, #util.readfile(name, nil, 70000))
    local ok, err = pcall(util.readfile, name, nil, 69999)
    os.remove(name)
    assert.is_false(ok)
    assert.matches("more than 69999 bytes", util.message(err), 1, true)
  end)

  it("says where a bad packet fails, with its code", function()
    local bad = H.tohex(packet:sub(1, 9))
    local status, _, err = run("decode", V3, "Snapshot", "hex:" .. bad)
    assert.equal(1, status)
    local _, msg = s:decode("Snapshot", packet:sub(1, 9))
    assert.matches("entities[1].name", msg, 1, true)
    assert.equal("bitwire decode: hex:" .. bad .. ": Snapshot: " .. msg .. " [truncated]\n", err)
    status, _, err = run("decode", V3, "Snapshot", "hex:0g")
    assert.equal(1, status)
    assert.matches("hex:0g: not a hex string", err, 1, true)
  end)

  it("costs a value: every path, largest first, adding up to the total", function()
    local status, out = run("cost", V3, "Snapshot", "json:" .. SNAP)
    assert.equal(0, status)
    local total = s:bits("Snapshot", value)
    assert.matches("Snapshot: " .. total .. " bits, " .. (total + 7) // 8 .. " bytes", out, 1, true)
    assert.matches("\n  entities%[1%]%.name +37 +30%.3%%\n  tick +20 ", out)
    local sum = 0
    for bits in out:gmatch("\n  %S+ +(%d+) ") do sum = sum + tonumber(bits) end
    assert.equal(total, sum)
  end)

  it("adds up array elements by field with --by-field", function()
    local two = '{"tick":5,"entities":[{"id":7,"health":99,"armor":3,"shield":2},'
      .. '{"id":8,"health":1,"armor":3,"shield":2}]}'
    local status, out = run("cost", V3, "Snapshot", "json:" .. two, "--by-field")
    assert.equal(0, status)
    assert.matches("\n  entities%[%]%.id +24 ", out)
    assert.matches("\n  entities%[%]%.name +2 ", out)   -- two presence bits
    assert.is_nil(out:find("entities[1]", 1, true))
  end)

  it("keeps a field named x[1] out of array x's row with --by-field", function()
    local defs = tmpfile([[return { T = { {"x", "array", of = {"uint", bits = 8}, max = 3},
      {"x[1]", "uint", bits = 10} } }]])
    local status, out = run("cost", defs, "T", 'json:{"x": [1, 2], "x[1]": 7}', "--by-field")
    os.remove(defs)
    assert.equal(0, status)
    assert.matches("\n  x%[%] +16 ", out)
    assert.matches("\n  x%[1%] +10 ", out)
  end)

  it("dissects a packet into a tree with offsets, raw bits and values", function()
    local status, out = run("dissect", V3, "Snapshot", "hex:" .. H.tohex(packet))
    assert.equal(0, status)
    assert.matches("     0    20  5                tick = 5\n", out, 1, true)
    assert.matches("    20     4  2                  entities# = 2\n", out, 1, true)
    assert.matches("    24    12  7                    entities[1].id = 7\n", out, 1, true)
    assert.matches('entities[1].name = "bob"\n', out, 1, true)
    assert.matches("ok: " .. s:bits("Snapshot", value) .. " bits read of 128\n", out, 1, true)
  end)

  it("dissects up to a failure, then the error with its code", function()
    local status, out, err = run("dissect", V3, "Snapshot", "hex:" .. H.tohex(packet:sub(1, 9)))
    assert.equal(1, status)
    assert.matches("entities[1].health = 99\n", out, 1, true)
    local _, msg = s:decode("Snapshot", packet:sub(1, 9))
    local bit = msg:match("%(bit %d+%)$")
    assert.matches("^error: hex:%x+: Snapshot: entities%[1%]%.name: .*"
      .. bit:gsub("%p", "%%%0") .. " %[truncated%]\n$", err)
  end)

  it("dissects a framed packet: CRC, message type, end check; flags a bad CRC", function()
    local proto = bitwire.protocol(s, { id = 0x77 })
    local framed = H.tohex(proto:encode("Snapshot", value))
    local status, out = run("dissect", V3, "hex:" .. framed, "--protocol", "0x77")
    assert.equal(0, status)
    assert.matches("frame.crc = 0x%x+ ok\n", out)
    assert.matches("    32     1  1                frame.type = 1\n", out, 1, true)
    assert.matches("frame.check = ok\n", out, 1, true)
    local err
    status, out, err = run("dissect", V3, "hex:" .. framed, "--protocol", "0x78")
    assert.equal(1, status)
    assert.matches("frame.crc = 0x%x+ BAD\n", out)
    assert.matches("tick = 5\n", out, 1, true)
    assert.matches("[crc]\n", err, 1, true)
    -- in decode's words (the core's one table), not words of its own
    local _, why = bitwire.protocol(s, { id = 0x78 }):decode(H.fromhex(framed))
    assert.equal("error: hex:" .. framed .. ": " .. why .. " [crc]\n", err)
    local _, _, derr = run("decode", V3, "hex:" .. framed, "--protocol", "0x78")
    assert.equal("bitwire decode: hex:" .. framed .. ": " .. why .. " [crc]\n", derr)
    status, _, err = run("dissect", V3, "Snapshot", "hex:00", "--deltas")
    assert.equal(1, status)
    assert.matches("--deltas needs --protocol", err, 1, true)
  end)

  -- header entries were told by their path text alone
  it("shows a message field named frame.crc as a field, not as the frame's CRC", function()
    local defs = tmpfile([[return { messages = { "T" }, T = { {"frame.crc", "uint", bits = 32},
      {"frame.tag", "int", min = 0, max = 9} } }]])
    local framed = H.tohex(bitwire.protocol(bitwire.load(defs), { id = 7 }):encode("T",
      { ["frame.crc"] = 5, ["frame.tag"] = 6 }))
    local status, out = run("dissect", defs, "hex:" .. framed, "--protocol", "7")
    local _, _, err = run("dissect", defs, "T", "hex:00")
    os.remove(defs)
    assert.equal(0, status)
    assert.matches("frame.crc = 0x%x+ ok\n", out)   -- the frame's
    assert.matches("    32    32  5                  frame.crc = 5\n", out, 1, true)
    assert.matches("    64     4  6                  frame.tag = 6\n", out, 1, true)
    assert.matches("hex:00: T: frame.crc: truncated input (bit 0) [truncated]", err, 1, true)
  end)

  it("dissects a delta frame, marking the changed bits", function()
    local proto = bitwire.protocol(s, { id = 1, deltas = true })
    local base = s:decode("Snapshot", packet)
    local v2 = s:decode("Snapshot", packet)
    v2.tick = 6
    local framed = proto:encode("Snapshot", v2, { baseline = base, baseline_id = 4 })
    local status, out = run("dissect", V3, "hex:" .. H.tohex(framed), "--protocol", "1", "--deltas")
    assert.equal(0, status)
    assert.matches("frame.delta = 1\n", out, 1, true)
    assert.matches("frame.baseline_id = 4\n", out, 1, true)
    assert.matches("tick^ = 1\n", out, 1, true)
    assert.matches("tick = 6\n", out, 1, true)
    assert.matches("entities^ = 0\n", out, 1, true)
  end)

  it("dissects a delta against --baseline, framed or not, as decode reads it", function()
    local t = bitwire.schema { P = { { "hp", "int", min = 0, max = 100 } },
      W = { { "tick", "uint", bits = 8 }, { "ps", "sparse", of = "P", max = 6, encoding = "mask" } } }
    local defs = tmpfile([[return { P = { { "hp", "int", min = 0, max = 100 } },
      W = { { "tick", "uint", bits = 8 }, { "ps", "sparse", of = "P", max = 6, encoding = "mask" } } }]])
    local base = { tick = 1, ps = { [2] = { hp = 50 }, [5] = { hp = 7 } } }
    local v = { tick = 2, ps = { [2] = { hp = 49 }, [5] = { hp = 7 }, [6] = { hp = 1 } } }
    local bj = "json:" .. bitwire.json.encode(t, "W", base)
    local delta = t:encode("W", v, { baseline = base })
    local status, out = run("dissect", defs, "W", "hex:" .. H.tohex(delta), "--baseline", bj)
    assert.equal(0, status)
    assert.matches("ps[2].hp = 49\n", out, 1, true)
    assert.matches("ps[6].hp = 1\n", out, 1, true)
    assert.matches("ok: " .. t:bits("W", v, { baseline = base }) .. " bits read", out, 1, true)
    local proto = bitwire.protocol(t, { id = 3, deltas = true })
    local framed = "hex:" .. H.tohex(proto:encode("W", v, { baseline = base, baseline_id = 1 }))
    status, out = run("dissect", defs, framed, "--protocol", "3", "--deltas", "--baseline", bj)
    assert.equal(0, status)
    assert.matches("ps[2].hp = 49\n", out, 1, true)
    -- encode and decode the same deltas
    local vj = "json:" .. bitwire.json.encode(t, "W", v)
    status, out = run("encode", defs, "W", vj, "--baseline", bj)
    assert.equal(0, status)
    assert.equal(H.tohex(delta) .. "\n", out)
    status, out = run("decode", defs, "W", "hex:" .. H.tohex(delta), "--baseline", bj)
    assert.equal(0, status)
    assert.same(v, bitwire.json.decode(t, "W", out))
    status, out = run("encode", defs, "W", vj, "--baseline", bj, "--baseline-id", "1",
      "--protocol", "3", "--deltas")
    assert.equal(0, status)
    assert.equal(framed:sub(5) .. "\n", out)
    status, out = run("decode", defs, framed, "--baseline", bj, "--baseline-id", "1",
      "--protocol", "3", "--deltas")
    assert.equal(0, status)
    assert.same(v, bitwire.json.decode(t, "W", out:match('"value":(.*)}\n$')))
    local err
    status, _, err = run("decode", defs, framed, "--protocol", "3", "--deltas")
    assert.equal(1, status)
    assert.matches("unknown baseline 1", err, 1, true)
    -- dissect takes --baseline-id as decode does: a frame naming another
    -- baseline is not read against this one
    status, out = run("dissect", defs, framed, "--protocol", "3", "--deltas", "--baseline", bj,
      "--baseline-id", "1")
    assert.equal(0, status)
    assert.matches("ps[2].hp = 49\n", out, 1, true)
    status, out, err = run("dissect", defs, framed, "--protocol", "3", "--deltas",
      "--baseline", bj, "--baseline-id", "2")
    assert.equal(1, status)
    assert.matches("frame.baseline_id = 1\n", out, 1, true)
    assert.matches("frame.baseline_id: unknown baseline 1 (bit 33) [baseline]", err, 1, true)
    -- a frame without deltas has no delta to read or write against it
    for _, args in ipairs { { "encode", defs, "W", vj }, { "decode", defs, framed },
                            { "dissect", defs, framed } } do
      table.insert(args, "--baseline")
      table.insert(args, bj)
      table.insert(args, "--protocol")
      table.insert(args, "3")
      refuses(args, "--baseline in a frame needs --deltas")
    end
    status, out, err = run("dissect", defs, framed, "--protocol", "3", "--deltas")
    assert.equal(1, status)
    assert.matches("tick = 2\n", out, 1, true)
    assert.matches("a slot delta needs the baseline", err, 1, true)
    os.remove(defs)
  end)

  it("refuses --baseline-id where no delta frame names its baseline", function()
    local J = "json:" .. SNAP
    local t = bitwire.load(V3)
    local v = bitwire.json.decode(t, "Snapshot", SNAP)
    local plain = "hex:" .. H.tohex(t:encode("Snapshot", v))
    local framed = "hex:" .. H.tohex(bitwire.protocol(t, { id = 1 }):encode("Snapshot", v))
    local WHY = "--baseline-id names a delta frame's baseline: it needs --protocol, "
      .. "--deltas and --baseline"
    for _, args in ipairs {
      { "encode", V3, "Snapshot", J, "--baseline", J, "--baseline-id", "1" },
      { "encode", V3, "Snapshot", J, "--protocol", "1", "--baseline-id", "1" },
      { "encode", V3, "Snapshot", J, "--protocol", "1", "--deltas", "--baseline-id", "1" },
      { "decode", V3, "Snapshot", plain, "--baseline", J, "--baseline-id", "1" },
      { "decode", V3, framed, "--protocol", "1", "--baseline", J, "--baseline-id", "1" },
      { "dissect", V3, "Snapshot", plain, "--baseline", J, "--baseline-id", "1" },
      { "dissect", V3, framed, "--protocol", "1", "--deltas", "--baseline-id", "1" },
    } do
      refuses(args, WHY)
    end
  end)

  it("refuses - for both the input and --baseline, before reading stdin", function()
    local t = bitwire.load(V3)
    local v = bitwire.json.decode(t, "Snapshot", SNAP)
    for _, args in ipairs {
      { "decode", V3, "Snapshot", "-", "--baseline", "-" },
      { "decode", V3, "-", "--protocol", "1", "--deltas", "--baseline", "-" },
      { "dissect", V3, "Snapshot", "-", "--baseline", "-" },
      { "dissect", V3, "-", "--protocol", "1", "--deltas", "--baseline", "-" },
      { "encode", V3, "Snapshot", "-", "--baseline", "-" },
    } do
      local stdin = { text = args[1] == "encode" and SNAP or t:encode("Snapshot", v) }
      function stdin:read()
        local text = self.text
        self.text = ""
        return text
      end
      local full = stdin.text
      local out, err = buffer(), buffer()
      local status = cli.main(args, { stdout = out, stderr = err, stdin = stdin })
      assert.equal(1, status)
      assert.equal("", out.text)
      assert.equal("bitwire " .. args[1] .. ": --baseline - and the "
        .. (args[1] == "encode" and "value" or "packet")
        .. " - would both read standard input: give one as a file\n", err.text)
      assert.equal(full, stdin.text)
    end
  end)

  it("reads a frame's message id through the messages list, not as a type id", function()
    -- the types sort Move, Ping, Pos, Zed; the messages are Ping 0, Move 1, Zed 2
    local defs = tmpfile([[return { messages = { "Ping", "Move", "Zed" }, Ping = {},
      Move = { { "x", "int", min = 0, max = 7 } }, Pos = { { "y", "bool" } },
      Zed = { { "p", "Pos" } } }]])
    local status, hex = run("encode", defs, "Move", 'json:{"x":5}', "--protocol", "1")
    assert.equal(0, status)
    local move = "hex:" .. hex:gsub("%s", "")
    local out, err
    status, out = run("dissect", defs, move, "--protocol", "1")
    assert.equal(0, status)
    assert.matches("frame.type = 1\n +%d+ +%d+ +Move\n.*  x = 5\n", out)
    status, out = run("dissect", defs, "Move", move, "--protocol", "1")
    assert.equal(0, status)
    assert.matches("  x = 5\n", out, 1, true)
    status, out = run("decode", defs, move, "--protocol", "1")
    assert.equal(0, status)
    assert.equal('{"type":"Move","value":{"x":5}}\n', out)
    -- a delta frame's baseline is the message's type
    local bj = 'json:{"x":2}'
    status, hex = run("encode", defs, "Move", 'json:{"x":5}', "--protocol", "1", "--deltas",
      "--baseline", bj)
    assert.equal(0, status)
    status, out = run("decode", defs, "hex:" .. hex:gsub("%s", ""), "--protocol", "1",
      "--deltas", "--baseline", bj)
    assert.equal(0, status)
    assert.equal('{"type":"Move","value":{"x":5}}\n', out)
    -- message id 3 names no message, though there is a fourth type
    local id = require("bitwire.dissect").wire_id(bitwire.protocol(bitwire.load(defs), { id = 1 }))
    local bad = bitwire.writer():frame_begin():bits(3, 2):frame_end(id, true):tostring()
    status, out, err = run("dissect", defs, "hex:" .. H.tohex(bad), "--protocol", "1")
    assert.equal(1, status)
    assert.matches("frame.type = 3\n", out, 1, true)
    assert.matches("frame.type: message type 3 out of range [0, 2]", err, 1, true)
    os.remove(defs)
  end)
end)

describe("bitwire dissect, encode and decode of registry frames", function()
  -- the README's game loop: bitwire.protocol(reg, {deltas = true})
  it("reads and writes a registry's delta frames (--tag --deltas)", function()
    local reg = bitwire.watch(V3)
    local proto = reg:protocol({ id = 5, deltas = true })
    local base = { id = 1, health = 2, armor = 3, shield = 1 }
    local v = { id = 1, health = 9, armor = 3, shield = 1 }
    local packet = proto:encode("Entity", v, { baseline = base, baseline_id = 4 })
    local json = bitwire.json.encode(reg:current(), "Entity", base)
    local flags = { "--protocol", "5", "--tag", "--deltas", "--baseline", "json:" .. json }
    local status, out = run("encode", V3, "Entity", "json:" .. bitwire.json.encode(
      reg:current(), "Entity", v), "--baseline-id", "4", table.unpack(flags))
    assert.equal(0, status)
    assert.equal(H.tohex(packet) .. "\n", out)
    status, out = run("dissect", V3, "hex:" .. H.tohex(packet), table.unpack(flags))
    assert.equal(0, status)
    assert.matches("frame.baseline_id = 4\n", out, 1, true)
    assert.matches("  health = 9\n", out, 1, true)
    status, out = run("decode", V3, "hex:" .. H.tohex(packet), "--baseline-id", "4",
      table.unpack(flags))
    assert.equal(0, status)
    local _, want = proto:decode(packet, { baselines = { [4] = base } })
    assert.same(want, bitwire.json.decode(reg:current(), "Entity", out:match('"value":(.*)}\n$')))
    local plugin = os.tmpname()
    status = run("wireshark", V3, "--protocol", "5", "--udp-port", "7", "--tag", "--deltas",
      "-o", plugin)
    os.remove(plugin)
    assert.equal(0, status)
  end)

  it("reads the tag and version a versioned registry protocol sends", function()
    local reg = bitwire.watch(V3)
    local proto = reg:protocol({ versioned = true, id = 5 })
    local v = { id = 1, health = 2, armor = 3, shield = 1 }
    local packet = proto:encode("Entity", v, { version = 2 })
    local flags = { "--protocol", "5", "--tag", "--version-bits", "16" }
    local status, out = run("dissect", V3, "hex:" .. H.tohex(packet), table.unpack(flags))
    assert.equal(0, status)
    assert.matches("frame.tag = 0x" .. reg:current():fingerprint():sub(1, 8) .. "\n", out, 1, true)
    assert.matches("    64    16  2                frame.version = 2\n", out, 1, true)
    assert.matches("legacy = false\n", out, 1, true)
    assert.is_nil(out:find("shield =", 1, true))   -- since 3: not sent at version 2
    status, out = run("decode", V3, "hex:" .. H.tohex(packet), table.unpack(flags))
    assert.equal(0, status)
    local _, want = proto:decode(packet)
    assert.same(want, bitwire.json.decode(reg:current(), "Entity",
      out:match('"value":(.*)}\n$')))
    status, out = run("encode", V3, "Entity", "json:" .. bitwire.json.encode(reg:current(),
      "Entity", v), "--version", "2", table.unpack(flags))
    assert.equal(0, status)
    assert.equal(H.tohex(packet) .. "\n", out)
  end)

  it("reads an unversioned frame at --version, and refuses it where the frame carries one",
      function()
    -- a v1 peer's frame, id not folded: read at version 1 by the v3 file
    local packet = bitwire.protocol(bitwire.load(V1), { id = 0x77, fingerprint = false })
      :encode("Entity", { id = 7, health = 99, legacy = true, name = "bob" })
    local flags = { "--protocol", "0x77", "--no-fingerprint", "--version", "1" }
    local status, out = run("decode", V3, "hex:" .. H.tohex(packet), table.unpack(flags))
    assert.equal(0, status)
    assert.matches('"legacy":true,"name":"bob"', out, 1, true)
    status, out = run("dissect", V3, "hex:" .. H.tohex(packet), table.unpack(flags))
    assert.equal(0, status)
    assert.matches("legacy = true\n", out, 1, true)
    assert.matches('name = "bob"\n', out, 1, true)
    assert.is_nil(out:find("armor =", 1, true))   -- since 2: not sent at version 1
    for _, cmd in ipairs { "decode", "dissect" } do
      local err
      status, _, err = run(cmd, V3, "hex:00", "--protocol", "1", "--version-bits", "4",
        "--version", "3")
      assert.equal(1, status)
      assert.equal("bitwire " .. cmd .. ": --version: these frames carry their version "
        .. "(--version-bits), the packet's is read\n", err)
    end
  end)

  it("marks the records a failure cut short as incomplete", function()
    local s = bitwire.load(V3)
    local packet = s:encode("Snapshot", bitwire.json.decode(s, "Snapshot", SNAP))
    local list = s:dissect("Snapshot", packet:sub(1, 10))
    local open = 0
    for _, e in ipairs(list) do
      if e.incomplete then
        open = open + 1
        assert.equal(64 - e.bit, e.bits)   -- up to the failing bit
      end
    end
    assert.equal(2, open)
    local _, out = run("dissect", V3, "Snapshot", "hex:" .. H.tohex(packet:sub(1, 10)))
    assert.matches("    24    40                     entities[1] = (incomplete)\n", out, 1, true)
  end)
end)

describe("bitwire numeric and repeated options", function()
  local J = "json:" .. SNAP
  -- every numeric option, in a command line that takes it: {option, range, args}
  local NUMERIC = {
    { "protocol", "0..18446744073709551615", { "encode", V3, "Snapshot", J } },
    { "protocol", "0..18446744073709551615", { "dissect", V3, "hex:00" } },
    { "version-bits", "1..32", { "decode", V3, "hex:00", "--protocol", "1" } },
    { "version", "0..4294967294", { "encode", V3, "Snapshot", J } },
    { "version", "0..4294967294", { "decode", V3, "Snapshot", "hex:00" } },
    { "version", "0..4294967294", { "dissect", V3, "Snapshot", "hex:00" } },
    { "version", "0..4294967294", { "blob", V3, "Snapshot", "x.json", "-o", "x.bin" } },
    { "version", "0..4294967294", { "gen", "c", V3, "-o", "/nonexistent/bitwire" } },
    { "baseline-id", "0..65535", { "encode", V3, "Snapshot", J, "--protocol", "1",
                                   "--deltas", "--baseline", J } },
    { "udp-port", "1..65535", { "wireshark", V3, "--protocol", "1" } },
  }
  local JUNK = { "0x1ffffffffffffffff", "18446744073709551616", "99999999999999999999999",
                "-1", "12abc", "", "0x", "1.5", " 7" }

  it("refuses a number past 64 bits, a sign or junk: one line naming the option and range", function()
    for _, c in ipairs(NUMERIC) do
      for _, v in ipairs(JUNK) do
        for _, form in ipairs { { "--" .. c[1], v }, { "--" .. c[1] .. "=" .. v } } do
          local args = table.move(form, 1, #form, #c[3] + 1, table.move(c[3], 1, #c[3], 1, {}))
          refuses(args, "option --" .. c[1] .. " takes an integer in "
            .. c[2] .. " (decimal or 0x hex), not '" .. v .. "'")
        end
      end
    end
  end)

  it("refuses a value just past an option's range and takes its ends", function()
    local status, _, err = run("encode", V3, "Snapshot", J, "--protocol", "1", "--deltas",
      "--baseline", J, "--baseline-id", "65536")
    assert.equal(1, status)
    assert.matches("option --baseline-id takes an integer in 0..65535", err, 1, true)
    local p = bitwire.protocol(bitwire.load(V3), { id = -1 })
    local want = H.tohex(p:encode("Snapshot", bitwire.json.decode(bitwire.load(V3), "Snapshot", SNAP)))
    for _, id in ipairs { "0xffffffffffffffff", "0XFFFFFFFFFFFFFFFF", "18446744073709551615",
                          "0x0000ffffffffffffffff", "00018446744073709551615" } do
      local st, out = run("encode", V3, "Snapshot", J, "--protocol", id)
      assert.equal(0, st)
      assert.equal(want .. "\n", out)
    end
    assert.equal(1, (run("encode", V3, "Snapshot", J, "--protocol", "18446744073709551616")))
    assert.equal(0, (run("encode", V3, "Snapshot", J, "--protocol", "0")))
  end)

  it("refuses an option given twice, not taking the last", function()
    for _, c in ipairs {
      { "--protocol", { "encode", V3, "Snapshot", J, "--protocol", "1", "--protocol", "2" } },
      { "--protocol", { "encode", V3, "Snapshot", J, "--protocol=1", "--protocol", "1" } },
      { "--version", { "decode", V3, "Snapshot", "hex:00", "--version", "1", "--version=1" } },
      { "--deltas", { "dissect", V3, "hex:00", "--protocol", "1", "--deltas", "--deltas" } },
      { "--sort", { "layout", V3, "Entity", "--sort", "--sort" } },
      { "-o", { "encode", V3, "Snapshot", J, "-o", "a.bin", "-o", "b.bin" } },
      { "--baseline", { "encode", V3, "Snapshot", J, "--baseline", J, "--baseline", J } },
      { "--name", { "wireshark", V3, "--protocol", "1", "--udp-port", "7", "--name", "a",
                    "--name", "b" } },
      { "--prefix", { "blob", "header", V3, "--prefix", "a", "--prefix", "b" } },
      { "--json", { "blob", V3, "Snapshot", "x.bin", "--json", "--json" } },
      { "--name", { "gen", "c", V3, "-o", "/nonexistent/bitwire", "--name", "a", "--name", "b" } },
    } do
      local status, out, err = run(table.unpack(c[2]))
      assert.equal(1, status)
      assert.equal("", out)
      assert.equal("bitwire " .. c[2][1] .. ": option " .. c[1] .. " given twice\n", err)
    end
  end)

  -- an argument past the last one a form reads was dropped without a word:
  -- `encode defs T v.json out.bin` (no -o) printed hex and wrote nothing
  it("refuses an argument past those the form reads, not ignoring it", function()
    local BIN = tmpfile(bitwire.load(V3):blob("Snapshot", { tick = 1, entities = {} }))
    for _, args in ipairs {
      { "check", V3, "extra" },
      { "layout", V3, "Entity", "extra" },
      { "cost", V3, "Snapshot", J, "extra" },
      { "encode", V3, "Snapshot", J, "extra" },
      { "decode", V3, "Snapshot", "hex:050000", "extra" },
      { "decode", V3, "Snapshot", "hex:050000", "extra", "--protocol", "1" },
      { "dissect", V3, "Snapshot", "hex:050000", "extra" },
      { "dissect", V3, "Snapshot", "hex:050000", "extra", "--protocol", "1" },
      { "diff", V3, V3, "extra" },
      { "wireshark", V3, "extra", "--protocol", "1", "--udp-port", "7" },
      { "blob", "header", V3, "extra" },
      { "blob", V3, "Snapshot", BIN, "extra", "--json" },
      { "blob", "upgrade", V3, "Snapshot", BIN, "extra", "-o", "-" },
    } do
      local status, out, err = run(table.unpack(args))
      assert.equal(1, status, args[1])
      assert.equal("", out, args[1])
      assert.matches("^bitwire " .. args[1] .. ": unexpected argument 'extra'\n", err)
    end
    os.remove(BIN)
  end)

  it("refuses a value given to a flag, and a single-dash option it does not know", function()
    local status, _, err = run("layout", V3, "Entity", "--sort=yes")
    assert.equal(1, status)
    assert.equal("bitwire layout: option --sort takes no value\n", err)
    status, _, err = run("check", V3, "-x")
    assert.equal(1, status)
    assert.matches("^bitwire check: unknown option %-x\n", err)
  end)

  -- -o was named --o when its value was missing, and --o passed for it
  it("names -o as it is typed, and knows no --o", function()
    local status, _, err = run("encode", V3, "Snapshot", J, "-o")
    assert.equal(1, status)
    assert.matches("^bitwire encode: option %-o needs a value\n", err)
    status, _, err = run("encode", V3, "Snapshot", J, "--o", "x.bin")
    assert.equal(1, status)
    assert.matches("^bitwire encode: unknown option %-%-o\n", err)
  end)

  -- "--" was taken for a file's name, and the arguments after it too
  it("ends the options at --: a file named like an option can follow", function()
    local status, out, err = run("check", "--", V3)
    assert.equal(0, status, err)
    assert.matches("game_v3.lua: ok, 2 types", out, 1, true)
    local bin = tmpfile(H.fromhex("0500000000"))
    status, out, err = run("decode", V3, "--version", "3", "Snapshot", "--", bin)
    assert.equal(0, status, err)
    assert.equal('{"tick":5,"entities":[]}\n', out)
    os.remove(bin)
    -- after --, -p.bin, --help and -h name files
    for _, name in ipairs { "-p.bin", "--help", "-h" } do
      status, out, err = run("decode", V3, "Snapshot", "--", name)
      assert.equal(1, status)
      assert.equal("", out)
      assert.equal("bitwire decode: " .. name .. ": No such file or directory\n", err)
    end
    status, _, err = run("decode", V3, "Snapshot", "--", "hex:00", "--version", "1")
    assert.equal(1, status)
    assert.matches("^bitwire decode: unexpected argument '%-%-version'\n", err)
  end)
end)

describe("bitwire wireshark", function()
  it("writes a plugin for the schema, protocol and port", function()
    local o = os.tmpname()
    local status = run("wireshark", V3, "--protocol", "0x77", "--udp-port", "4000", "-o", o)
    assert.equal(0, status)
    local f = assert(io.open(o))
    local text = f:read("a")
    f:close()
    os.remove(o)
    local fp = bitwire.load(V3):fingerprint()
    assert.matches("-- Schema fingerprint " .. fp .. ", protocol id 0x77, UDP port 4000.", text, 1, true)
    assert.matches('["port"]=4000', text, 1, true)
    assert.matches('DissectorTable.get("udp.port"):add(SETTINGS.port, proto)', text, 1, true)
    -- the walker is embedded as it is, so dissect and Wireshark read alike
    local walksrc = assert(io.open(assert(package.searchpath("bitwire.walk", package.path)))):read("a")
    assert.matches(walksrc, text, 1, true)
    assert.is_function(load(text, "=plugin", "t", {}))   -- it parses
  end)

  it("embeds the walker this state runs, not whatever package.path finds now", function()
    local walkpath = assert(package.searchpath("bitwire.walk", package.path))
    local walksrc = assert(io.open(walkpath)):read("a")
    require "bitwire.walk"
    local s = bitwire.load(V3)
    local saved = package.path
    package.path = "/nonexistent/?.lua"   -- an embedder's sandbox, or another copy
    local ok, text = pcall(require("bitwire.wireshark").generate, s,
      { id = 1, wire_id = 1, endcheck = true }, { port = 7 })
    package.path = saved
    assert.is_true(ok, text)
    assert.matches(walksrc, text, 1, true)
  end)

  it("gives every field a filter name Wireshark takes, whatever its bytes", function()
    local defs = tmpfile([[return { T = { {"a b", "int", min = 0, max = 3}, {"a_b", "bool"},
      {"x-y", "bool"}, {"\195\156", "bool"}, {"p.q", "bool"} } }]])
    local o = os.tmpname()
    local status = run("wireshark", defs, "--protocol", "1", "--udp-port", "7", "-o", o)
    os.remove(defs)
    assert.equal(0, status)
    local f = assert(io.open(o))
    local text = f:read("a")
    f:close()
    os.remove(o)
    -- load the plugin over a stand-in of Wireshark's API that checks field
    -- abbreviations as epan/proto.c does
    local abbrevs = {}
    local function field(abbr)
      assert(abbr:match("^[%w_%-]+[%w_%-.]*$") and not abbr:find("..", 1, true)
        and abbr:sub(-1) ~= ".", "Invalid char in abbrev: " .. abbr)
      assert(not abbrevs[abbr], "two fields " .. abbr)
      abbrevs[abbr] = true
      return {}
    end
    local any = setmetatable({}, { __index = function (t) return t end,
      __call = function (t) return t end })
    local env = setmetatable({ ProtoField = { double = field, string = field, bool = field } },
      { __index = function (_, k) return _G[k] or any end })
    assert(load(text, "=plugin", "t", env))()
    for _, a in ipairs { "bitwire.T.a_b", "bitwire.T.a_b_2", "bitwire.T.x-y",
                         "bitwire.T.__", "bitwire.T.p_q" } do
      assert.is_true(abbrevs[a], a)
    end
  end)

  it("refuses a --name Wireshark refuses for a protocol, writing nothing", function()
    for name, why in pairs { ["and"] = "'and' is a Wireshark display filter keyword",
        Contains = "'Contains' is a Wireshark display filter keyword",
        x = "must have two characters or more (Wireshark's rule)",
        ["x-y"] = "must be an identifier" } do
      local status, out, err = run("wireshark", V3, "--protocol", "1", "--udp-port", "7",
        "--name", name)
      assert.equal(1, status)
      assert.equal("", out)
      assert.equal("bitwire wireshark: --name " .. why .. "\n", err)
    end
    assert.equal(0, (run("wireshark", V3, "--protocol", "1", "--udp-port", "7", "--name", "ok")))
    assert.has_error(function ()
      local s = bitwire.load(V3)
      require("bitwire.wireshark").generate(s, { id = 1, wire_id = 1, endcheck = true },
        { port = 7, name = "or" })
    end, "bitwire.wireshark: name 'or' is a Wireshark display filter keyword")
  end)

  it("refuses a --name of a protocol tshark has, when there is a tshark to ask", function()
    local ws = require "bitwire.wireshark"
    local set = ws.protocols("User Datagram Protocol\tUDP\tudp\tT\tT\tT\n"
      .. "Ethernet\tEthernet\teth\tT\tT\tT\n")
    assert.same({ udp = true, eth = true }, set)
    assert.is_nil(ws.protocols(""))
    local status, out, err = run("wireshark", V3, "--protocol", "1", "--udp-port", "7",
      "--name", "Udp")
    if ws.protocols() then
      assert.equal(1, status)
      assert.equal("", out)
      assert.equal("bitwire wireshark: --name 'Udp' is a protocol Wireshark has already"
        .. " (tshark -G protocols)\n", err)
    else  -- no tshark: the name goes, as README says
      assert.equal(0, status)
    end
  end)

  it("needs --protocol and --udp-port, and a port in range", function()
    local status, _, err = run("wireshark", V3, "--udp-port", "4000")
    assert.equal(1, status)
    assert.matches("missing --protocol ID", err, 1, true)
    status, _, err = run("wireshark", V3, "--protocol", "1")
    assert.equal(1, status)
    assert.matches("missing --udp-port N", err, 1, true)
    status, _, err = run("wireshark", V3, "--protocol", "1", "--udp-port", "70000")
    assert.equal(1, status)
    assert.equal("bitwire wireshark: option --udp-port takes an integer in 1..65535 "
      .. "(decimal or 0x hex), not '70000'\n", err)
    status, _, err = run("wireshark", BAD, "--protocol", "1", "--udp-port", "7")
    assert.equal(1, status)
    assert.matches("Entity.health: min 100 > max 0", err, 1, true)
  end)

  it("checks the framing options as bitwire.protocol and the other commands do", function()
    for _, vb in ipairs { "99", "33", "-1" } do
      for _, args in ipairs { { "wireshark", V3, "--udp-port", "7" },
                              { "dissect", V3, "hex:00" } } do
        local status, _, err = run(table.unpack(table.move({ "--protocol", "1",
          "--version-bits", vb }, 1, 4, #args + 1, args)))
        assert.equal(1, status)
        assert.equal("bitwire " .. args[1] .. ": option --version-bits takes an integer in "
          .. "1..32 (decimal or 0x hex), not '" .. vb .. "'\n", err)
      end
    end
  end)

  -- Run plugin 'text' on 'packet' over a stand-in of Wireshark's API and
  -- its Lua 5.2, whose numbers are doubles: arithmetic on a numeric string
  -- (the plugin's integers past 2^53) is done in doubles. Returns the
  -- labels of the tree, in order, one a line.
  local function wsrun(text, packet)
    local labels = {}
    local Item = {}
    Item.__index = Item
    function Item:add(...)
      local e = { text = "" }
      for i = 1, select("#", ...) do
        local a = select(i, ...)
        if type(a) == "string" then e.text = a end
      end
      labels[#labels + 1] = e
      return setmetatable(e, Item)
    end
    function Item:set_text(t) self.text = t return self end
    function Item:append_text(t) self.text = self.text .. t return self end
    function Item:set_generated() return self end
    function Item:add_proto_expert_info() return self end
    -- UInt64 (unsigned) and Int64 (signed) over a 5.4 integer
    local function u64(v, signed)
      return setmetatable({ v = v }, {
        __lt = function (a, b) return math.ult(a.v, b.v) end,
        __add = function (a, b) return u64(a.v + b.v, signed) end,
        __tostring = function (a)
          if signed or a.v >= 0 then return tostring(a.v) end
          local q = (a.v >> 1) // 5
          return string.format("%d%d", q, a.v - q * 10)
        end,
        __index = { lower = function (a) return a.v & 0xFFFFFFFF end,
                    higher = function (a) return a.v >> 32 end } })
    end
    local function bits(lo, hi) return math.tointeger(lo) | (math.tointeger(hi) << 32) end
    local function tvb(off, len)
      off, len = math.tointeger(off or 0), math.tointeger(len or #packet - (off or 0))
      assert(off >= 0 and len >= 0 and off + len <= #packet, "Range is out of bounds")
      local s = packet:sub(off + 1, off + len)
      return { raw = function () return s end,
               uint = function () return (string.unpack(">I" .. len, s)) end,
               le_uint = function () return (string.unpack("<I" .. len, s)) end }
    end
    local any = setmetatable({}, { __index = function (t) return t end,
      __call = function (t) return t end })
    local proto
    local env = setmetatable({
      Proto = function () return {} end, ProtoExpert = any, ProtoField = any,
      expert = any, UInt64 = { new = function (lo, hi) return u64(bits(lo, hi)) end },
      Int64 = { new = function (lo, hi) return u64(bits(lo, hi), true) end },
      bit = { band = function (a, b) return a & b end, bxor = function (a, b) return a ~ b end,
              rshift = function (a, n) return a >> n end },
      DissectorTable = { get = function ()
        return { add = function (_, _, p) proto = p end } end } },
      { __index = _G })
    local smt = getmetatable("")
    local saved = {}
    for _, op in ipairs { "__add", "__sub", "__mul", "__div", "__mod", "__unm" } do
      saved[op] = smt[op]
      smt[op] = function (a, b)
        return saved[op](tonumber(a) + 0.0, b and tonumber(b) + 0.0)
      end
    end
    local ok, err = pcall(function ()
      assert(load(text, "=plugin", "t", env))()
      proto.dissector(setmetatable({ len = function () return #packet end },
        { __call = function (_, off, len) return tvb(off, len) end }),
        { cols = {} }, setmetatable({}, Item))
    end)
    for op, f in pairs(saved) do smt[op] = f end
    assert(ok, err)
    local out = {}
    for i, e in ipairs(labels) do out[i] = e.text end
    return table.concat(out, "\n")
  end

  it("reads ints past 32 bits or 2^53 exactly, and checks their range", function()
    local s = bitwire.schema { T = {
      {"a", "int", min = 0, max = (1 << 40) + 3},
      {"b", "int", min = math.maxinteger - 791, max = math.maxinteger},   -- 10 bits
      {"c", "bool"} } }
    local frame = { id = 0x42, wire_id = 0x42, endcheck = true }
    local text = require("bitwire.wireshark").generate(s, frame, { port = 7 })
    local function framed(bits)
      local w = bitwire.writer()
      w:frame_begin()
      for _, b in ipairs(bits) do w:bits(b[1], b[2]) end
      w:frame_end(0x42, true)
      return w:tostring()
    end
    local got = wsrun(text, framed { { 5, 41 }, { 500, 10 }, { 1, 1 } })
    assert.matches('a = "5" [bits 32..72]\nb = "9223372036854775516" [bits 73..82]\n'
      .. "c = true [bits 83..83]", got, 1, true)
    assert.not_matches("error", got, 1, true)
    -- past max in its 41 bits: a range error, as the driver
    got = wsrun(text, framed { { (1 << 41) - 1, 41 }, { 0, 10 }, { 1, 1 } })
    assert.matches("error: a: 2199023255551 out of range [0, 1099511627779] (bit 32) [range]",
      got, 1, true)
    assert.not_matches("a = ", got, 1, true)
  end)

  it("words a value past its range as dissect and decode do", function()
    local frame = { id = 0x42, wire_id = 0x42, endcheck = true }
    for _, c in ipairs {
      { { "int", min = -3, max = 9 }, { 15, 4 }, "v: 12 out of range [-3, 9] (bit 35)" },
      { { "enum", values = { "a", "b", "c" } }, { 3, 2 }, "v: 3 out of range [0, 2] (bit 35)" },
      { { "string", max = 5 }, { 7, 3 }, "v: length 7 out of range [0, 5] (bit 35)" },
      { { "array", of = { "bool" }, max = 5 }, { 7, 3 }, "v: count 7 out of range [0, 5] (bit 35)" },
      { { "float", min = 0, max = 2, res = 0.5 }, { 7, 3 },
        "v: quantized 7 out of range [0, 4] (bit 35)" },
      { { "int", min = -5, max = math.maxinteger }, { -1, 64 },
        "v: 18446744073709551610 out of range [-5, 9223372036854775807] (bit 35)" },
      { { "int", min = -(1 << 60), max = (1 << 60) }, { (1 << 62) - 1, 62 },
        "v: 3458764513820540927 out of range [-1152921504606846976, 1152921504606846976] (bit 35)" },
      { { "int", min = -(1 << 62), max = 1 << 62 }, { -1, 64 },
        "v: 13835058055282163711 out of range [-4611686018427387904, 4611686018427387904] (bit 35)" },
    } do
      local f = { "v" }
      for k, v in pairs(c[1]) do f[type(k) == "number" and k + 1 or k] = v end
      local s = bitwire.schema { T = { { "p", "uint", bits = 3 }, f } }
      local text = require("bitwire.wireshark").generate(s, frame, { port = 7 })
      local w = bitwire.writer()
      w:frame_begin()
      w:bits(5, 3):bits(c[2][1], c[2][2])
      w:frame_end(0x42, true)
      local packet = w:tostring()
      local _, _, _, err = require("bitwire.dissect").frame(s, packet, frame)
      assert.equal(c[3], require("bitwire.dissect").errtext(err))
      assert.equal(c[3], select(2, s:frame_decode({ id = 0x42 }, packet)))
      assert.matches("error: " .. c[3] .. " [range]", wsrun(text, packet), 1, true)
    end
  end)

  it("reports a 64-bit value cut short at its first bit, as dissect does", function()
    -- it read two halves and failed at the second: (bit 73) where dissect says 41
    for _, kind in ipairs { { "uint", bits = 64 }, { "float64" },
                            { "int", min = 0, max = (1 << 40) + 3 } } do
      local s = bitwire.schema { T = { { "a", "uint", bits = 9 },
        { "v", kind[1], bits = kind.bits, min = kind.min, max = kind.max } } }
      local frame = { id = 0x42, wire_id = 0x42, endcheck = false }
      local text = require("bitwire.wireshark").generate(s, frame, { port = 7 })
      local w = bitwire.writer()
      w:frame_begin()
      w:bits(1, 9):bits(0, 32):bits(0, 7)  -- 39 bits of the value's 64 (or 41)
      w:frame_end(0x42, false)
      local packet = w:tostring()
      local _, _, _, err = require("bitwire.dissect").frame(s, packet, frame)
      assert.same({ "v", "truncated", 41 }, { err.path, err.code, err.bit })
      assert.matches("error: v: truncated input (bit 41) [truncated]", wsrun(text, packet), 1, true)
    end
  end)

  it("reports a wrong end check under a good CRC, not the field it cuts short", function()
    -- framed with no check: the walk fails on the last bytes, which the core
    -- never reads (it refuses the frame first)
    local s = bitwire.schema { T = { { "a", "uint", bits = 9 }, { "s", "string", max = 9 } } }
    local frame = { id = 0x42, wire_id = 0x42, endcheck = true }
    local text = require("bitwire.wireshark").generate(s, frame, { port = 7 })
    local w = bitwire.writer()
    w:frame_begin()
    w:bits(1, 9):bits(9, 4):bits(0, 3):bits(0x616161, 24)
    w:frame_end(0x42, false)
    local packet = w:tostring()
    local list, _, _, err = require("bitwire.dissect").frame(s, packet, frame)
    assert.same({ {}, "frame.check", "check", 8 * (#packet - 4) },
                { list, err.path, err.code, err.bit })
    local got = wsrun(text, packet)
    assert.matches("[bits 0..31] ok\n", got, 1, true)
    assert.matches("\nerror: frame.check: serialization check failed (bit "
      .. 8 * (#packet - 4) .. ") [check]", got, 1, true)
    assert.not_matches("truncated", got, 1, true)
  end)

  it("reads tiered ints whose range lies past 2^53 exactly", function()
    local s = bitwire.schema { T = {
      {"t", "tiered", min = math.maxinteger - 1000, max = math.maxinteger, tiers = {2, 5, 10}},
      {"u", "tiered", min = -(1 << 60), max = -(1 << 60) + 100000, tiers = {3, 20}},
      {"b", "bool"} } }
    local frame = { id = 0x42, wire_id = 0x42, endcheck = true }
    local text = require("bitwire.wireshark").generate(s, frame, { port = 7 })
    for _, v in ipairs { { t = math.maxinteger - 998, u = -(1 << 60) + 2, b = true },
                         { t = math.maxinteger - 3, u = -(1 << 60) + 99999, b = false } } do
      local w = bitwire.writer()
      w:frame_begin()
      for _, byte in ipairs { s:encode("T", v):byte(1, -1) } do w:bits(byte, 8) end
      w:frame_end(0x42, true)
      local packet = w:tostring()
      local got = wsrun(text, packet)
      assert.not_matches("error", got, 1, true)
      for _, e in ipairs((require("bitwire.dissect").frame(s, packet, frame))) do
        if e.kind == "tiered" then
          assert.matches(string.format("%s = %q [bits %d..%d]", e.path, tostring(e.value),
            e.bit, e.bit + e.bits - 1), got, 1, true)
        end
      end
    end
  end)

  it("refuses a string with NUL or malformed UTF-8, as dissect and the driver", function()
    local s = bitwire.schema { T = { {"n", "string", max = 5}, {"b", "bool"} } }
    local frame = { id = 0x42, wire_id = 0x42, endcheck = true }
    local text = require("bitwire.wireshark").generate(s, frame, { port = 7 })
    for _, str in ipairs { "\195(", "a\0", "\237\160\128", "\192\175", "\244\144\128\128" } do
      local w = bitwire.writer()
      w:frame_begin()
      w:int(#str, 0, 5):bytes(str):bool(true)
      w:frame_end(0x42, true)
      local packet = w:tostring()
      local _, _, _, err = require("bitwire.dissect").frame(s, packet, frame)
      assert.equal("utf8", err.code)
      local got = wsrun(text, packet)
      assert.matches(string.format("error: %s: %s (bit %d) [utf8]", err.path, err.message,
        err.bit), got, 1, true)
    end
    local w = bitwire.writer()   -- and takes a valid one
    w:frame_begin()
    w:string("\u{e9}\u{20ac}", 5):bool(true)
    w:frame_end(0x42, true)
    assert.matches('n = "\u{e9}\u{20ac}" [bits 32..79]\nb = true [bits 80..80]',
      wsrun(text, w:tostring()), 1, true)
  end)

  -- Wireshark cuts a label past 239 bytes, which took the bit range with it
  it("cuts a long value, not its bit range, to a label Wireshark shows whole", function()
    local s = bitwire.schema { T = { {"s", "string", max = 300}, {"b", "bytes", max = 200} } }
    local frame = { id = 0x42, wire_id = 0x42, endcheck = true }
    local text = require("bitwire.wireshark").generate(s, frame, { port = 7 })
    local w = bitwire.writer()
    w:frame_begin()
    w:string(string.rep("\u{e9}", 150), 300):int(200, 0, 200):bytes(string.rep("\1", 200))
    w:frame_end(0x42, true)
    local got = wsrun(text, w:tostring())
    local sl = got:match('\n(s = "[^\n]*)')
    assert.equal('s = "... [bits 32..2447]', (sl:gsub("\u{e9}", "")))
    assert.is_true(#sl <= 239 and utf8.len(sl) ~= nil)
    local bl = got:match("\n(b = 0x[^\n]*)")
    assert.matches("^b = 0x[01]+%.%.%. %[bits 2448..4055%]$", bl)
    assert.is_true(#bl <= 239)
    assert.matches('n = "ab" [bits', wsrun(require("bitwire.wireshark").generate(
      bitwire.schema { T = { {"n", "string", max = 300} } }, frame, { port = 7 }),
      (function () local x = bitwire.writer(); x:frame_begin(); x:string("ab", 300)
        x:frame_end(0x42, true); return x:tostring() end)()), 1, true)
  end)

  it("words padding and check errors as dissect does: the core's messages", function()
    local s = bitwire.schema { T = { {"a", "uint", bits = 3}, {"align"}, {"b", "bool"}, {"check"} } }
    local frame = { id = 0x42, wire_id = 0x42, endcheck = true }
    local text = require("bitwire.wireshark").generate(s, frame, { port = 7 })
    for _, case in ipairs { { pad = 5, magic = 0x12345678, code = "align" },
                            { pad = 0, magic = 0x12345679, code = "check" } } do
      local w = bitwire.writer()
      w:frame_begin()
      w:bits(1, 3):bits(case.pad, 5):bool(true):align():bits(case.magic, 32)
      w:frame_end(0x42, true)
      local packet = w:tostring()
      local _, _, _, err = require("bitwire.dissect").frame(s, packet, frame)
      assert.equal(case.code, err.code)
      assert.equal(require("bitwire.core").messages[case.code], err.message)
      assert.matches(string.format("error: %s [%s]", require("bitwire.dissect").errtext(err),
        err.code), wsrun(text, packet), 1, true)
    end
  end)

  it("shows a NaN with its sign, as dissect does", function()
    local s = bitwire.schema { T = { {"f", "float32"}, {"g", "float32"}, {"d", "float64"},
                                     {"e", "float64"} } }
    local frame = { id = 0x42, wire_id = 0x42, endcheck = true }
    local text = require("bitwire.wireshark").generate(s, frame, { port = 7 })
    local w = bitwire.writer()
    w:frame_begin()
    w:bits(0x7fc00001, 32):bits(0xffc00000, 32)
    w:bits(0x7ff8000000000001, 64):bits(0xfff8000000000000, 64)
    w:frame_end(0x42, true)
    local packet = w:tostring()
    local got = wsrun(text, packet)
    for _, e in ipairs((require("bitwire.dissect").frame(s, packet, frame))) do
      if e.kind:match("^float") then
        assert.matches(string.format("%s = %.9g [bits", e.path, e.value), got, 1, true)
      end
    end
    assert.matches("f = nan [bits 32..63]\ng = -nan [bits 64..95]", got, 1, true)
  end)

  it("shows fields of no bits at the end of a frame without an end check", function()
    local s = bitwire.schema { T = { {"a", "int", min = 0, max = 255}, {"align"},
      {"s", "string", max = 3}, {"e", "array", of = {"bool"}, max = 0} } }
    local frame = { id = 0x42, wire_id = 0x42, endcheck = false }
    local text = require("bitwire.wireshark").generate(s, frame, { port = 7 })
    local w = bitwire.writer()
    w:frame_begin()
    w:int(7, 0, 255):align():string("", 3)
    w:frame_end(0x42, false)
    assert.matches('a = 7 [bits 32..39]\n(align) = true [bits 40..39]\ns = "" [bits 40..47]\n'
      .. "e [from bit 48] (0 bits)\ne# = 0 [bits 48..47]", wsrun(text, w:tostring()), 1, true)
  end)

  it("flags a frame whose end check is wrong under a good CRC, as the protocol refuses it",
    function()
    local s = bitwire.schema { T = { {"a", "int", min = 0, max = 100}, {"b", "bool"} } }
    local frame = { id = 0x42, wire_id = 0x42, endcheck = true }
    local text = require("bitwire.wireshark").generate(s, frame, { port = 7 })
    local w = bitwire.writer()   -- the CRC covers the bad check: frame_end without one
    w:frame_begin()
    w:int(5, 0, 100):bool(true):align():bits(0xdeadbeef, 32)
    w:frame_end(0x42, false)
    local packet = w:tostring()
    local _, _, _, err = require("bitwire.dissect").frame(s, packet, frame)
    assert.equal("check", err.code)
    -- the core's message taken apart, not wrapped again (dissect printed
    -- "frame: frame: serialization check failed (bit 40) (bit 0)")
    assert.same({ "frame.check", "serialization check failed", 40 },
      { err.path, err.message, err.bit })
    local defs = tmpfile('return { T = { {"a", "int", min = 0, max = 100}, {"b", "bool"} } }')
    -- (a frame of protocol 0x42 over these definitions, its CRC over a bad
    -- end check)
    local _, _, err2 = run("dissect", defs, "--protocol", "0x42", "hex:1f13b97a85efbeadde")
    assert.matches("error: hex:1f13b97a85efbeadde: frame.check: serialization check failed "
                   .. "(bit 40) [check]\n", err2, 1, true)
    local got = wsrun(text, packet)
    assert.matches("frame.crc = 0x%x+ %[bits 0..31%] ok", got)
    assert.matches("frame.check = 0xdeadbeef [bits 40..71]\n"
      .. "error: frame.check: serialization check failed (bit 40) [check]", got, 1, true)
  end)

  it("words a frame's failures as decode does, a header field by its path", function()
    local s = bitwire.schema { T = { { "a", "bool" } }, U = {}, V = {},
                               messages = { "T", "U", "V" } }
    local frame = { id = 0x42, wire_id = 0x42, endcheck = true }
    local text = require("bitwire.wireshark").generate(s, frame, { port = 7 })
    local hdr = { id = 0x42 }
    local unknown = bitwire.writer():frame_begin():bits(3, 2):frame_end(0x42, true):tostring()
    for _, packet in ipairs { "\1\2\3", unknown } do
      local _, msg, code = s:frame_decode(hdr, packet)
      assert.matches("^frame", msg)
      assert.matches("\nerror: " .. msg .. " [" .. code .. "]", wsrun(text, packet), 1, true)
    end
  end)

  it("dissect shows a wrong end check under a bad CRC as bad, not ok, as the plugin flags it",
    function()
    local defs = tmpfile('return { T = { {"a", "int", min = 0, max = 100}, {"b", "bool"} } }')
    -- the frame above with its CRC damaged: the core checks neither, so the
    -- end check 0xdeadbeef was printed 'frame.check = ok'
    local status, out = run("dissect", defs, "--protocol", "0x42", "hex:0013b97a85efbeadde")
    assert.equal(1, status)
    assert.matches("frame.check = 0xdeadbeef BAD\n", out, 1, true)
    status, out = run("dissect", defs, "--protocol", "0x42", "hex:0013b97a8578563412")
    assert.equal(1, status)
    assert.matches("frame.check = ok\n", out, 1, true)
  end)
end)

describe("bitwire gen", function()
  it("names the file once in an error", function()
    local status, out, err = run("gen", "c", BAD, "-o", os.tmpname())
    assert.equal(1, status)
    assert.equal("", out)
    assert.equal("bitwire gen: " .. BAD .. ": bitwire.schema: Entity.health: min 100 > max 0\n", err)
  end)
end)

describe("bitwire diff and fingerprint", function()
  it("prints each file's fingerprint", function()
    local status, out = run("fingerprint", V1, V3)
    assert.equal(0, status)
    assert.equal(bitwire.load(V1):fingerprint() .. "  " .. V1 .. "\n"
      .. bitwire.load(V3):fingerprint() .. "  " .. V3 .. "\n", out)
  end)

  it("lists what changes, status 2 when something does, 0 when nothing does", function()
    local status, out = run("diff", V1, V3)
    assert.equal(2, status)
    assert.equal(tostring(bitwire.diff(bitwire.load(V1), bitwire.load(V3))) .. "\n"
      .. "wire: changed (" .. bitwire.load(V1):fingerprint() .. " -> "
      .. bitwire.load(V3):fingerprint() .. ")\n", out)
    status, out = run("diff", V3, V3)
    assert.equal(0, status)
    assert.matches("^no changes", out)
    local err
    status, _, err = run("diff", V3, BAD)
    assert.equal(1, status)
    assert.matches("Entity.health: min 100 > max 0", err, 1, true)
  end)
end)

describe("bitwire file arguments", function()
  it("say a directory is one, in a line, where a file is read", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir " .. dir))
    local out = os.tmpname()
    for _, args in ipairs {
      { "encode", V3, "Snapshot", dir }, { "decode", V3, "Snapshot", dir },
      { "dissect", V3, "Snapshot", dir }, { "cost", V3, "Snapshot", dir },
      { "decode", V3, "Snapshot", "hex:00", "--baseline", dir },
      { "encode", V3, "Snapshot", "json:" .. SNAP, "--baseline", dir },
      { "blob", V3, "Snapshot", dir, "-o", out }, { "blob", V3, "Snapshot", dir, "--json" },
      { "blob", "upgrade", V3, "Snapshot", dir, "-o", out },
    } do
      local status, _, err = run(table.unpack(args))
      local what = table.concat(args, " ")
      assert.equal(1, status, what)
      assert.matches("^bitwire %a+: " .. dir:gsub("%p", "%%%0") .. ": [^\n]+\n$", err)
    end
    os.remove(out)
    os.remove(dir)
  end)

  -- '' gave ": No such file or directory", a message that names nothing
  it("say an empty argument where a file name goes is one", function()
    local J = "json:" .. SNAP
    for _, args in ipairs {
      { "check", "" }, { "diff", V3, "" }, { "layout", "", "Entity" },
      { "encode", V3, "Snapshot", "" }, { "encode", V3, "Snapshot", J, "-o", "" },
      { "decode", V3, "Snapshot", "" }, { "cost", V3, "Snapshot", "" },
      { "encode", V3, "Snapshot", J, "--baseline", "" },
      { "blob", V3, "Snapshot", J, "-o", "" }, { "blob", "header", "" },
      { "wireshark", V3, "--protocol", "1", "--udp-port", "7", "-o", "" },
    } do
      refuses(args, "an empty argument where a file name goes")
    end
  end)
end)

describe("bitwire gen output", function()
  it("names the file it cannot write, not its temporary", function()
    local defs = tmpfile('return { P = { { "x", "int", min = 0, max = 9 } } }')
    local dir = os.tmpname()
    os.remove(dir)  -- no such directory
    for what, file in pairs { c = "p.h", ["serialize-h"] = "p.hpp" } do
      local status, out, err = run("gen", what, defs, "-o", dir, "--name", "p")
      assert.equal(1, status)
      assert.equal("", out)
      assert.equal("bitwire gen: " .. dir .. "/" .. file .. ": No such file or directory\n", err)
    end
  end)

  it("names the file when writing the temporary or renaming it fails", function()
    local defs = tmpfile('return { P = { { "x", "int", min = 0, max = 9 } } }')
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p '" .. dir .. "/p.h'"))  -- a directory in p.h's place
    local status, _, err = run("gen", "c", defs, "-o", dir, "--name", "p")
    assert.equal(1, status)
    -- os.rename's message names no file ('bitwire gen: Is a directory')
    assert.equal("bitwire gen: " .. dir .. "/p.h: Is a directory\n", err)
    -- a write that fails (a full disk): not 'p.hpp.tmp: ...'
    local open = io.open
    io.open = function (name, mode)  -- luacheck: ignore
      if name:match("%.tmp$") then
        local f = assert(open(name, mode))
        return setmetatable({}, { __index = {
          write = function () return nil, "No space left on device" end,
          close = function () return f:close() end } })
      end
      return open(name, mode)
    end
    status, _, err = run("gen", "serialize-h", defs, "-o", dir, "--name", "p")
    io.open = open  -- luacheck: ignore
    assert.equal(1, status)
    assert.equal("bitwire gen: " .. dir .. "/p.hpp: No space left on device\n", err)
    assert.is_nil(open(dir .. "/p.hpp.tmp"))  -- and the temporary is gone
    os.execute("rm -rf '" .. dir .. "'")
  end)
end)

describe("bitwire dissect values", function()
  it("shows a uint64 past 2^63 unsigned and a float64 in all its digits", function()
    local defs = tmpfile('return { T = { { "u", "uint", bits = 64 }, { "d", "float64" } } }')
    local hex = H.tohex(string.pack("<i8d", -1, 0.1 + 0.2))
    local status, out, err = run("dissect", defs, "T", "hex:" .. hex)
    assert.equal(0, status, err)
    assert.matches(" u = 18446744073709551615\n", out, 1, true)
    assert.matches(" d = 0.30000000000000004\n", out, 1, true)
    status, out = run("decode", defs, "T", "hex:" .. hex)
    assert.equal(0, status)
    assert.equal('{"u":"18446744073709551615","d":0.30000000000000004}\n', out)
    os.remove(defs)
  end)
end)

describe("bitwire cost and layout columns", function()
  it("line up a name past 99 characters (string.format's widest)", function()
    local long = string.rep("f", 110)
    local defs = tmpfile('return { T = { { "' .. long .. '", "uint", bits = 3 }, { "b", "bool" } } }')
    local status, out, err = run("cost", defs, "T", 'json:{"' .. long .. '":5,"b":true}')
    assert.equal(0, status, err)
    assert.matches("\n  path" .. string.rep(" ", 106) .. "   bits   share\n", out, 1, true)
    assert.matches("\n  " .. long .. "      3   75.0%\n", out, 1, true)
    assert.matches("\n  b" .. string.rep(" ", 109) .. "      1   25.0%\n", out, 1, true)
    for _, sort in ipairs { false, true } do
      status, out, err = run("layout", defs, "T", sort and "--sort" or nil)
      assert.equal(0, status, err)
      assert.matches("\n  field" .. string.rep(" ", 105) .. "  bits ", out, 1, true)
      assert.matches("\n  " .. long .. "  3   ", out, 1, true)
    end
    os.remove(defs)
  end)

  -- check's type column was 24 wide: a longer name pushed its row's
  -- numbers out from under their headings
  it("line up check's columns under a type name past 24 characters", function()
    local long = string.rep("T", 40)
    local defs = tmpfile('return { ' .. long .. ' = { { "x", "int", min = 0, max = 9 } }, '
      .. 'U = { { "y", "bool" } } }')
    local status, out, err = run("check", defs)
    os.remove(defs)
    assert.equal(0, status, err)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equal("  id   type" .. string.rep(" ", 38) .. "min bits   max bits  fields", lines[2])
    assert.equal("  0    " .. long .. "         4          4       1", lines[3])
    assert.equal("  1    U" .. string.rep(" ", 39) .. "         1          1       1", lines[4])
  end)
end)

describe("bitwire.json", function()
  local s = bitwire.schema {
    T = { { "big", "int", min = math.mininteger, max = math.maxinteger },
          { "u", "uint", bits = 64 }, { "b", "bytes", max = 8 },
          { "e", "enum", values = { "red", "green" } },
          { "sp", "sparse", of = { "int", min = 0, max = 9 }, max = 20 },
          { "o", "string", max = 5, optional = true }, { "f", "float64" },
          { "q", "quat", bits = 10 } },
  }

  it("maps sparse, 64-bit, bytes, enums, optionals and floats both ways", function()
    local v = { big = math.mininteger, u = -1, b = "\0\1\255", e = "green",
                sp = { [3] = 7, [17] = 0 }, f = 1 / 0, q = { 0, 0, 0, 1 } }
    local text = bitwire.json.encode(s, "T", v)
    assert.equal('{"big":"-9223372036854775808","u":"18446744073709551615","b":"AAH/","e":"green",'
      .. '"sp":{"3":7,"17":0},"f":"inf","q":[0,0,0,1]}', text)
    assert.same(v, bitwire.json.decode(s, "T", text))
    local back = bitwire.json.decode(s, "T", '{"big":1,"u":2,"b":"","e":"red","sp":{},'
      .. '"o":null,"f":0.5,"q":[1,0,0,0]}')
    assert.is_nil(back.o)
    assert.equal(1, back.big)
    assert.equal("integer", math.type(back.big))
    local again = s:decode("T", s:encode("T", back))
    back.q, again.q = nil, nil
    assert.same(back, again)
  end)

  it("refuses a negative number for a uint, naming the field, as s:encode would", function()
    local t = bitwire.schema {
      T = { { "u8", "uint", bits = 8 }, { "u64", "uint", bits = 64, optional = true },
            { "list", "array", of = { "uint", bits = 3 }, max = 4, optional = true },
            { "i", "int", min = -9, max = 9, optional = true } },
    }
    -- s:encode refuses a negative u8; a negative u64 is how Lua holds one
    -- past 2^63, which JSON writes as its digits, so JSON refuses both
    assert.matches("u8: -1 does not fit in 8 bits", select(2, pcall(t.encode, t, "T", { u8 = -1 })),
      1, true)
    for _, c in ipairs {
      { '{"u8":-1}', "T.u8: -1 is negative; a uint of 8 bits takes 0..255" },
      { '{"u8":"-7"}', "T.u8: -7 is negative; a uint of 8 bits takes 0..255" },
      { '{"u8":0,"u64":-1}', "T.u64: -1 is negative; a uint of 64 bits takes 0..18446744073709551615" },
      { '{"u8":0,"u64":"-1"}', "T.u64: -1 is negative; a uint of 64 bits takes 0..18446744073709551615" },
      { '{"u8":0,"u64":-9223372036854775809}',
        "T.u64: -9223372036854775809 is negative; a uint of 64 bits takes 0..18446744073709551615" },
      { '{"u8":0,"list":[1,-2]}', "T.list[2]: -2 is negative; a uint of 3 bits takes 0..7" },
    } do
      local v, err = bitwire.json.decode(t, "T", c[1])
      assert.is_nil(v)
      assert.equal("bitwire.json.decode: " .. c[2], err)
    end
    local v = assert(bitwire.json.decode(t, "T", '{"u8":-0,"u64":"18446744073709551615","i":-9}'))
    assert.same({ u8 = 0, u64 = -1, i = -9 }, v)
  end)

  it("reads integer literals past 2^53 exactly, and refuses one past 64 bits", function()
    local v = assert(bitwire.json.decode(s, "T", '{"big":9007199254740993,'
      .. '"u":18446744073709551615,"sp":{"3":1},"f":-9007199254740993,"q":[0,0,0,1],'
      .. '"o":"9007199254740993 \\" 9007199254740995","e":"red","b":""}'))
    assert.equal(9007199254740993, v.big)
    assert.equal("integer", math.type(v.big))
    assert.equal(-1, v.u)   -- 2^64 - 1, as a uint64 is held in Lua
    assert.equal(-9007199254740993.0, v.f)
    assert.equal('9007199254740993 " 9007199254740995', v.o)
    v = assert(bitwire.json.decode(s, "T", '{"big":-9223372036854775808,"u":9223372036854775807,'
      .. '"f":-2251799813685249.5}'))
    assert.equal(math.mininteger, v.big)
    assert.equal(math.maxinteger, v.u)
    assert.equal(-2251799813685249.5, v.f)
    local _, err = bitwire.json.decode(s, "T", '{"big":9223372036854775808}')
    assert.equal("bitwire.json.decode: T.big: '9223372036854775808' does not fit 64 bits", err)
    _, err = bitwire.json.decode(s, "T", '{"u":18446744073709551616}')
    assert.equal("bitwire.json.decode: T.u: '18446744073709551616' does not fit 64 bits", err)
    -- one past 64 bits on the negative side: refused, not read as -2^63,
    -- as a literal and as a string
    for _, j in ipairs { '{"big":-9223372036854775809}', '{"big":"-9223372036854775809"}',
                         '{"big":-18446744073709551616}', '{"big":"-99999999999999999999999"}' } do
      local key, lit = j:match('^{"(%w+)":"?(.-)"?}$')
      _, err = bitwire.json.decode(s, "T", j)
      assert.equal("bitwire.json.decode: T." .. key .. ": '" .. lit .. "' does not fit 64 bits", err)
    end
    v = assert(bitwire.json.decode(s, "T", '{"big":"-0009223372036854775808",'
      .. '"u":"018446744073709551615"}'))
    assert.equal(math.mininteger, v.big)
    assert.equal(-1, v.u)
    _, err = bitwire.json.decode(s, "T", '{"big":"9223372036854775808"}')
    assert.equal("bitwire.json.decode: T.big: '9223372036854775808' does not fit 64 bits", err)
    _, err = bitwire.json.decode(s, "T", '{"o":12345678901234567890}')
    assert.equal("bitwire.json.decode: T.o: expected a string", err)
    -- and on the command line
    local defs = tmpfile('return { T = { { "n", "uint", bits = 64 } } }')
    local status, out, cerr = run("encode", defs, "T", 'json:{"n":-1}')
    assert.equal(1, status)
    assert.equal("", out)
    assert.equal("bitwire encode: json:{\"n\":-1}: bitwire.json.decode: T.n: -1 is negative; "
      .. "a uint of 64 bits takes 0..18446744073709551615\n", cerr)
    status, out = run("encode", defs, "T", 'json:{"n":9007199254740993}')
    assert.equal(0, status)
    assert.equal(H.tohex(string.pack("<i8", 9007199254740993)) .. "\n", out)
    os.remove(defs)
  end)

  it("prints floats in digits that read back as the same bytes", function()
    local f = bitwire.schema { F = { { "d", "float64" }, { "s", "float32" }, { "w", "float64" } } }
    local v = { d = 0.1 + 0.2, s = 0.1, w = 100.0 }
    local text = bitwire.json.encode(f, "F", v)
    -- 14 significant digits printed 0.3; a float32 prints as a float32 reads
    assert.equal('{"d":0.30000000000000004,"s":0.1,"w":100}', text)
    local back = bitwire.json.decode(f, "F", text)
    assert.equal(f:encode("F", v), f:encode("F", back))
    local rand = H.lcg(5)
    for _ = 1, 200 do
      local bytes = H.randbytes(rand, 8) .. H.randbytes(rand, 4) .. H.randbytes(rand, 8)
      local x = f:decode("F", bytes)
      if x and x.d == x.d and x.s == x.s and x.w == x.w then   -- NaN payloads aside
        assert.equal(bytes, f:encode("F", bitwire.json.decode(f, "F", bitwire.json.encode(f, "F", x))))
      end
    end
  end)

  it("round-trips random base64", function()
    local rand = H.lcg(3)
    for n = 0, 40 do
      local b = H.randbytes(rand, n)
      assert.equal(b, bitwire.json.unbase64(bitwire.json.base64(b)))
    end
    assert.is_nil(bitwire.json.unbase64("A==="))
    assert.is_nil(bitwire.json.unbase64("AB*="))
  end)

  it("names the path of a value of the wrong shape", function()
    local _, err = bitwire.json.decode(s, "T", '{"sp":{"x":1}}')
    assert.equal("bitwire.json.decode: T.sp: slot key 'x' is not an integer", err)
    -- a slot key is decimal digits: tonumber's other forms were slots too,
    -- and two keys of one slot kept either value
    for _, key in ipairs { " 1", "1.0", "0x1", "1e0" } do
      _, err = bitwire.json.decode(s, "T", '{"sp":{"' .. key .. '":1}}')
      assert.equal("bitwire.json.decode: T.sp: slot key '" .. key .. "' is not an integer", err)
    end
    _, err = bitwire.json.decode(s, "T", '{"sp":{"1":1,"01":2}}')
    assert.matches("^bitwire.json.decode: T.sp: keys '0?1' and '0?1' name the same slot$", err)
    -- an object where an array is wanted is not an empty array (cjson
    -- reads both as tables), nor an array a record or a sparse array
    for _, j in ipairs { '{"q":{"x":1}}', '{"q":{"1":0,"2":0,"3":0,"4":1}}' } do
      _, err = bitwire.json.decode(s, "T", j)
      assert.equal("bitwire.json.decode: T.q: expected an array", err)
    end
    _, err = bitwire.json.decode(s, "T", '{"sp":[1,2]}')
    assert.equal("bitwire.json.decode: T.sp: expected an object keyed by slot", err)
    _, err = bitwire.json.decode(s, "T", "[1,2]")
    assert.equal("bitwire.json.decode: T: expected an object", err)
    -- a failure of the top record's own names the type alone
    _, err = bitwire.json.decode(s, "T", '{"zz":1}')
    assert.equal("bitwire.json.decode: T: unknown field 'zz'", err)
    local ok, eerr = pcall(bitwire.json.encode, s, "T", 5)
    assert.is_false(ok)
    assert.equal("bitwire.json.encode: T: expected a table, got number", eerr)
    local a = bitwire.schema { A = { { "a", "array", of = { "int", min = 0, max = 9 }, max = 4 } } }
    _, err = bitwire.json.decode(a, "A", '{"a":{"1":1}}')
    assert.equal("bitwire.json.decode: A.a: expected an array", err)
    assert.same({ a = {} }, bitwire.json.decode(a, "A", '{"a":{}}'))   -- {} reads as []
    _, err = bitwire.json.decode(s, "T", '{"b":"***"}')
    assert.equal("bitwire.json.decode: T.b: expected base64", err)
    _, err = bitwire.json.decode(s, "T", "[1,")
    assert.matches("^bitwire.json.decode: ", err)
    assert.has_error(function() bitwire.json.encode(s, "T", { e = 5 }) end,
      "bitwire.json.encode: T.e: expected a string, got number")
  end)
end)

describe("bin/bitwire", function()
  local root = here .. "../"
  local function sh(cmd)
    local p = io.popen("cd " .. root .. " && " .. cmd .. " 2>&1; echo \"status=$?\"")
    local out = p:read("a")
    p:close()
    return out
  end

  it("runs from a checkout and exits 1 on an error", function()
    -- without LUA_PATH and LUA_CPATH: it finds lua/ and build/ itself
    local out = sh("env -u LUA_PATH -u LUA_CPATH lua5.4 bin/bitwire help")
    assert.matches("  dissect      every field", out, 1, true)
    assert.matches("status=0\n$", out)
    out = sh("env -u LUA_PATH -u LUA_CPATH lua5.4 bin/bitwire check spec/fixtures/defs/invalid.lua")
    assert.matches("Entity.health: min 100 > max 0\nstatus=1\n$", out)
    out = sh("cd bin && env -u LUA_PATH -u LUA_CPATH lua5.4 ../bin/bitwire help")
    assert.matches("status=0\n$", out)
  end)

  it("finds the checkout when run from bin/ by its own name", function()
    -- arg[0] is then "bitwire" or "./bitwire", with no "bin/" in it
    for _, cmd in ipairs { "lua5.4 bitwire", "lua5.4 ./bitwire", "./bitwire" } do
      local out = sh("cd bin && env -u LUA_PATH -u LUA_CPATH " .. cmd .. " help")
      assert.matches("  dissect      every field", out, 1, true)
      assert.matches("status=0\n$", out)
    end
  end)

  -- the README's `lua5.4 tools/blob.lua ...` stopped with a traceback:
  -- unlike bin/bitwire it did not find the checkout's modules itself
  it("runs tools/blob.lua as bitwire blob, from anywhere", function()
    for _, cmd in ipairs {
      "env -u LUA_PATH -u LUA_CPATH lua5.4 tools/blob.lua header spec/fixtures/defs/game_v3.lua",
      "cd tools && env -u LUA_PATH -u LUA_CPATH lua5.4 blob.lua header ../spec/fixtures/defs/game_v3.lua",
    } do
      local out = sh(cmd .. " | head -1")
      assert.equal("/* Generated by bitwire.gen.blob: mapped blob access (WIRE.md, \"Blobs\").\n"
        .. "status=0\n", out)
    end
    local out = sh("env -u LUA_PATH -u LUA_CPATH lua5.4 tools/blob.lua header")
    assert.matches("^bitwire blob: missing definitions file\nusage: bitwire blob ", out)
    assert.matches("\nstatus=1\n$", out)
  end)

  -- output lost to a full disk or a closed pipe exited 0, as a success
  it("exits 1, saying so, when standard output cannot be written", function()
    local f = io.open("/dev/full", "w")
    if f == nil then return end   -- not Linux: the in-process spec covers it
    f:close()
    local out = sh("(lua5.4 bin/bitwire check spec/fixtures/defs/game_v3.lua >/dev/full)")
    assert.equal("bitwire check: standard output: No space left on device\nstatus=1\n", out)
    out = sh("(lua5.4 bin/bitwire help >/dev/full)")
    assert.equal("bitwire: standard output: No space left on device\nstatus=1\n", out)
  end)
end)

describe("bitwire standard output", function()
  -- a pipe closed while SIGPIPE is ignored: every write fails
  local function broken()
    return { write = function () return nil, "Broken pipe", 32 end,
             flush = function () return nil, "Broken pipe", 32 end }
  end

  it("stops at the first write that fails, with status 1 and one line", function()
    for _, args in ipairs {
      { "check", V3 },
      { "decode", V3, "Snapshot", "hex:0500000000" },
      { "encode", V3, "Snapshot", "json:" .. SNAP, "-o", "-" },
      { "dissect", V3, "Snapshot", "hex:0500000000" },
    } do
      local err = buffer()
      local status = cli.main(args, { stdout = broken(), stderr = err })
      assert.equal(1, status, args[1])
      assert.equal("bitwire " .. args[1] .. ": standard output: Broken pipe\n", err.text)
    end
  end)

  -- through one pipe (2>&1) the error came before the lines printed
  -- ahead of it: stdout sat in its buffer while stderr went straight out
  it("flushes what stdout holds before a line on stderr", function()
    local log, held = {}, {}
    local out = { write = function (self, ...)
                    for _, s in ipairs { ... } do held[#held + 1] = s end
                    return self
                  end,
                  flush = function ()
                    log[#log + 1] = table.concat(held)
                    held = {}
                    return true
                  end }
    local err = { write = function (self, s) log[#log + 1] = s; return self end }
    assert.equal(1, cli.main({ "dissect", V3, "Snapshot", "hex:0500200730" },
      { stdout = out, stderr = err }))
    local text = table.concat(log)
    assert.matches("entities# = 2\nerror: hex:0500200730: Snapshot: entities: ", text, 1, true)
    log = {}
    assert.equal(1, cli.main({ "fingerprint", V3, "/nonexistent/x.lua" },
      { stdout = out, stderr = err }))
    assert.matches("  " .. V3 .. "\nbitwire fingerprint: /nonexistent/x.lua: ",
      table.concat(log), 1, true)
  end)

  it("checks the flush that writes the last buffered bytes", function()
    local out, err = buffer(), buffer()
    out.flush = function () return nil, "No space left on device", 28 end
    assert.equal(1, cli.main({ "version" }, { stdout = out, stderr = err }))
    assert.equal("bitwire version: standard output: No space left on device\n", err.text)
    out.flush = function () return true end
    err = buffer()
    assert.equal(0, cli.main({ "version" }, { stdout = out, stderr = err }))
    assert.equal("", err.text)
  end)
end)

describe("examples/demo.lua (make demo)", function()
  it("mentions only files that are in the repository", function()
    local root = here .. "../"
    local p = io.popen("cd " .. root .. " && lua5.4 examples/demo.lua 2>&1")
    local out = p:read("a")
    p:close()
    assert.matches("checks, 0 failed", out, 1, true)
    -- a name ends at a character no name has: frame.crc is no file frame.c
    for name in out:gmatch("[%w_/%.-]+%.[mlch][duh]?a?%f[^%w_]") do
      if name:match("%.md$") or name:match("%.lua$") or name:match("%.[ch]$") then
        local f = io.open(root .. name) or io.open(root .. "docs/" .. name)
        assert.is_truthy(f, "demo mentions " .. name .. ", which is not in the repository")
        f:close()
      end
    end
    assert.is_nil(out:find("DESIGN.md", 1, true))
  end)
end)
