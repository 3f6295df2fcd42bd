-- Definitions files and hot reload: bitwire.load (sandboxed), bitwire.watch
-- registries and their protocol, s:fingerprint, bitwire.diff, and versioned
-- fields (since/removed) read across versions.
local bitwire = require "bitwire"

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local DEFS = here .. "fixtures/defs/"

local helpers = require "spec.helpers"
local lit, write = helpers.lit, helpers.write

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- temporary definitions files, removed by after_each
local temp = helpers.temps()
local tempdefs, cleanup = temp.defs, temp.cleanup

-- definitions text with Entity.health in [0, hmax] (and 'extra' fields)
local function entity_defs(hmax, extra)
  return string.format([[
return {
  Entity = {
    {"id", "int", min = 0, max = 4095},
    {"health", "int", min = 0, max = %d},
    %s
  },
}
]], hmax, extra or "")
end

local ENTITY = { id = 7, health = 55 }

describe("bitwire.load", function()
  it("runs a definitions file and compiles what it returns", function()
    local s, err = bitwire.load(DEFS .. "game_v1.lua")
    assert.is_nil(err)
    local v = { tick = 9, entities = { { id = 1, health = 100, legacy = true, name = "ann" } } }
    assert.same(v, s:decode("Snapshot", s:encode("Snapshot", v)))
    assert.same({ "Entity", "Snapshot" }, s:types())
  end)

  -- file, what the message must contain (a Lua pattern), load options;
  -- the budget, not the CPU time, must stop these under valgrind too
  local SLOW = { time = 60 }
  local bad = {
    { "syntax_error.lua", "syntax_error%.lua:4: .*expected" },
    { "runtime_error.lua", "runtime_error%.lua:2: attempt to index a nil value" },
    { "error_call.lua", "error_call%.lua:1: health range missing" },
    { "loop.lua", "loop%.lua:2: instruction budget of 1000000 exhausted", SLOW },
    { "pcall_loop.lua", "pcall_loop%.lua:%d: instruction budget of 1000000 exhausted", SLOW },
    { "memory.lua", "memory%.lua:2: memory limit of 8192 KB exceeded",
      { budget = 1e12, memory = 8192, time = 60 } },
    { "string_rep.lua", "string_rep%.lua:1: memory limit of 65536 KB exceeded$" },
    { "doubling.lua", "doubling%.lua:3: memory limit of 8192 KB exceeded", { memory = 8192 } },
    { "table_move.lua", "table_move%.lua:2: instruction budget of 1000000 exhausted", SLOW },
    { "insert_front.lua", "insert_front%.lua:4: instruction budget of 1000000 exhausted", SLOW },
    { "pattern.lua", "pattern%.lua:2: attempt to call a nil value %(method 'find'%)" },
    { "random.lua", "random%.lua:2: attempt to call a nil value %(field 'randomseed'%)" },
    { "os_execute.lua", "os_execute%.lua:1: attempt to index a nil value %(global 'os'%)" },
    { "io_open.lua", "io_open%.lua:1: attempt to index a nil value %(global 'io'%)" },
    { "require.lua", "require%.lua:1: attempt to call a nil value %(global 'require'%)" },
    { "load.lua", "load%.lua:1: attempt to call a nil value %(global 'load'%)" },
    { "debug.lua", "debug%.lua:1: attempt to index a nil value %(global 'debug'%)" },
    { "dump.lua", "dump%.lua:1: attempt to call a nil value %(field 'dump'%)" },
    { "not_table.lua", "not_table%.lua: definitions file must return a table, got number$" },
    { "invalid.lua", "invalid%.lua: bitwire%.schema: Entity%.health: min 100 > max 0$" },
    { "missing.lua", "missing%.lua: No such file" },
  }
  for _, case in ipairs(bad) do
    local file, pattern, opts = case[1], case[2], case[3]
    it("returns nil and a message naming where for " .. file, function()
      local ok, s, err = pcall(bitwire.load, DEFS .. file, opts)
      assert.is_true(ok, s)             -- never raises on a bad file
      assert.is_nil(s)
      assert.is_string(err)
      assert.matches(pattern, err)
    end)
  end

  it("did not run os.execute from a definitions file", function()
    assert.is_nil(io.open("/tmp/bitwire-pwned"))
  end)

  it("gives the file copies of the libraries and none of the host's globals", function()
    local floor, format, insert = math.floor, string.format, table.insert
    local s = assert(bitwire.load(DEFS .. "globals.lua"))
    assert.equal(floor, math.floor)
    assert.equal(format, string.format)
    assert.equal(insert, table.insert)
    assert.is_nil(rawget(_G, "injected"))
    -- the file saw neither _G nor rawset: its default says so
    assert.same({ x = true }, s:decode("T", "", { version = 1 }))
  end)

  it("gives the file the documented pure functions", function()
    local path = tempdefs([[
local ok, err = pcall(error, "caught")
assert(not ok and err == "caught")
local names = {}
for i, v in ipairs { "a", "b", "c" } do names[#names + 1] = v:upper() end
table.insert(names, 1, "z")
table.sort(names)
local n = tonumber(string.format("%d", math.floor(7.9))) + select("#", 1, 2)
assert(table.concat(names, ",") == "A,B,C,z" and utf8.char(72) == "H")
assert(("hello"):sub(2, 3) == "el" and #("ab"):rep(3, "-") == 8)
return { T = { {"n", "int", min = 0, max = n}, {"s", "enum", values = names} } }
]])
    local s, err = bitwire.load(path)
    assert.is_nil(err)
    assert.same({ n = 9, s = "z" }, s:decode("T", s:encode("T", { n = 9, s = "z" })))
    cleanup()
  end)

  it("restores the string metatable after running a file", function()
    local index = getmetatable("").__index
    bitwire.load(DEFS .. "string_rep.lua")
    bitwire.load(DEFS .. "game_v1.lua")
    assert.equal(index, getmetatable("").__index)
    assert.equal(string, getmetatable("").__index)
    assert.equal("xxx", ("x"):rep(3))
  end)

  it("leaves the host's finalizers and collector alone", function()
    local path = tempdefs([[
for i = 1, 50000 do local t = {i} end
return { T = { {"x", "bool"} } }
]])
    local hits = {}
    for _ = 1, 200 do
      setmetatable({}, { __gc = function() hits[#hits + 1] = ("ok"):upper():find("K") end })
    end
    assert.is_not_nil(bitwire.load(path, { memory = 1024, time = 60 }))
    collectgarbage()
    assert.equal(200, #hits)
    for _, h in ipairs(hits) do assert.equal(2, h) end
    assert.is_true(collectgarbage("isrunning"))
    cleanup()
  end)

  it("refuses a binary chunk", function()
    local path = tempdefs(string.dump(function() return { T = { { "x", "bool" } } } end))
    local s, err = bitwire.load(path)
    assert.is_nil(s)
    assert.equal(path .. ": binary chunks are not accepted", err)
    cleanup()
  end)

  it("takes the instruction budget as an option", function()
    local path = tempdefs([[
local n = 0
for i = 1, 20000 do n = n + i end
return { T = { {"x", "int", min = 0, max = n} } }
]])
    assert.is_not_nil(bitwire.load(path, { time = 60 }))
    local s, err = bitwire.load(path, { budget = 5000, time = 60 })
    assert.is_nil(s)
    assert.matches(lit(path) .. ":2: instruction budget of 5000 exhausted", err)
    cleanup()
  end)

  it("does not count garbage against the memory limit", function()
    local path = tempdefs([[
local n = 0
for i = 1, 200000 do local t = {i, i, i} n = n + #t end
return { T = { {"x", "int", min = 0, max = n} } }
]])
    assert.is_not_nil(bitwire.load(path, { budget = 1e8, memory = 1024, time = 60 }))
    cleanup()
  end)

  -- arguments, options, what the error says
  local badargs = {
    { { 42 }, "path must be a string" },
    { { "x.lua", 5 }, "options must be a table" },
    { { "x.lua", { budget = 0 } }, "'budget' must be a positive integer" },
    { { "x.lua", { memory = 1.5 } }, "'memory' must be a positive integer" },
    { { "x.lua", { budget = "many" } }, "'budget' must be a positive integer" },
    { { "x.lua", { max_sise = 10 } },
      "unknown option 'max_sise' (known: budget, keep, max_nodes, max_size, memory, strict, time)" },
  }
  for _, case in ipairs(badargs) do
    it("raises on bad arguments: " .. case[2], function()
      for _, f in ipairs { bitwire.load, bitwire.watch } do
        local ok, err = pcall(f, table.unpack(case[1]))
        assert.is_false(ok)
        assert.matches(lit(f == bitwire.load and case[2]:gsub(" keep,", "") or case[2]), err)
      end
    end)
  end

  it("takes keep in bitwire.watch only, a registry's option", function()
    assert.matches(lit("bitwire.load: unknown option 'keep'"),
      select(2, pcall(bitwire.load, "x.lua", { keep = 2 })))
    assert.matches(lit("unknown option 1 (known:"), select(2, pcall(bitwire.load, "x.lua", { 1 })))
  end)
end)

describe("s:fingerprint", function()
  it("is 16 hex digits", function()
    assert.matches("^%x+$", bitwire.load(DEFS .. "game_v1.lua"):fingerprint())
    assert.equal(16, #bitwire.load(DEFS .. "game_v1.lua"):fingerprint())
  end)

  it("is the same for the same description written in another order", function()
    local a = bitwire.load(DEFS .. "game_v1.lua")
    local b = bitwire.load(DEFS .. "game_v1_reordered.lua")
    assert.equal(a:fingerprint(), b:fingerprint())
  end)

  it("does not depend on the order keys were inserted in", function()
    local names = {}
    for i = 1, 40 do names[i] = "T" .. i end
    local function build(first, last, step)
      local d = {}
      for i = first, last, step do
        local f = {}
        f.max, f.min, f[2], f[1] = i, 0, "int", "v"
        d[names[i]] = { f, { "b", "bool" } }
      end
      return d
    end
    local fwd, rev = bitwire.schema(build(1, 40, 1)), bitwire.schema(build(40, 1, -1))
    assert.equal(fwd:fingerprint(), rev:fingerprint())
  end)

  it("ignores field names and defaults, which never reach the wire", function()
    local a = bitwire.schema { T = { { "a", "int", min = 0, max = 9 } } }
    local b = bitwire.schema { T = { { "b", "int", min = 0, max = 9, default = 3 } } }
    assert.equal(a:fingerprint(), b:fingerprint())
  end)

  -- each description differs from the base on the wire
  local base = { "x", "int", min = 0, max = 9 }
  local wire = {
    { "x", "int", min = 0, max = 10 },
    { "x", "int", min = 1, max = 9 },
    { "x", "int", min = 0, max = 9, optional = true },
    { "x", "int", min = 0, max = 9, since = 2 },
    { "x", "int", min = 0, max = 9, removed = 2 },
    { "x", "uint", bits = 4 },
    { "x", "enum", values = { "a", "b", "c", "d", "e", "f", "g", "h", "i", "j" } },
  }
  for i, f in ipairs(wire) do
    it("changes when the wire form changes (" .. i .. ")", function()
      local a = bitwire.schema { T = { base } }
      local b = bitwire.schema { T = { f } }
      assert.not_equal(a:fingerprint(), b:fingerprint())
    end)
  end
end)

describe("bitwire.watch", function()
  after_each(cleanup)

  it("returns a registry serving the file's schema", function()
    local path = tempdefs(entity_defs(100))
    local reg = assert(bitwire.watch(path))
    local s = reg:current()
    assert.same(ENTITY, s:decode("Entity", s:encode("Entity", ENTITY)))
    assert.equal(s, reg:get(s:fingerprint()))
    assert.matches("^bitwire%.Registry", tostring(reg))
  end)

  it("returns nil and the message when the file does not load at first", function()
    local reg, err = bitwire.watch(DEFS .. "invalid.lua")
    assert.is_nil(reg)
    assert.matches("invalid%.lua: bitwire%.schema: Entity%.health", err)
    reg, err = bitwire.watch(DEFS .. "missing.lua")
    assert.is_nil(reg)
    assert.matches("missing%.lua", err)
  end)

  it("poll gives false, nil while the file is unchanged", function()
    local reg = assert(bitwire.watch(tempdefs(entity_defs(100))))
    local s = reg:current()
    assert.same({ false, nil }, { reg:poll() })
    assert.same({ false, nil }, { reg:poll() })
    assert.equal(s, reg:current())
  end)

  it("poll reads the file only when its stamp moved", function()
    local core = require "bitwire.core"
    local path = tempdefs(entity_defs(100))
    local realstamp, realread = core.filestamp, core.readdefs
    local reads = 0
    -- stamps as they are 2 s after a write (kept, not fresh), and each read
    -- of the file counted
    core.filestamp = function (p) return (realstamp(p)) end
    core.readdefs = function (...) reads = reads + 1; return realread(...) end
    local ok, err = pcall(function ()
      local reg = assert(bitwire.watch(path))
      reg:poll()  -- the first poll takes the file's stamp
      reads = 0
      assert.same({ false, nil }, { reg:poll() })
      assert.same({ false, nil }, { reg:poll() })
      assert.equal(0, reads)
      write(path, entity_defs(200))   -- another size: read and swapped in
      assert.is_true((reg:poll()))
      assert.equal(1, reads)
    end)
    core.filestamp, core.readdefs = realstamp, realread
    assert.is_true(ok, err)
  end)

  it("poll swaps in a good edit and returns true", function()
    local path = tempdefs(entity_defs(100))
    local reg = assert(bitwire.watch(path))
    local old = reg:current()
    write(path, entity_defs(200))
    assert.same({ true }, { reg:poll() })
    local new = reg:current()
    assert.not_equal(old, new)
    assert.not_equal(old:fingerprint(), new:fingerprint())
    assert.same({ id = 1, health = 150 }, new:decode("Entity",
      new:encode("Entity", { id = 1, health = 150 })))
    assert.same({ false, nil }, { reg:poll() })
  end)

  it("poll swaps in an edit of the same length (content, not size or time)", function()
    local path = tempdefs(entity_defs(100))
    local reg = assert(bitwire.watch(path))
    local old = reg:current()
    write(path, entity_defs(200))
    assert.equal(#slurp(path), #entity_defs(100))
    assert.is_true(reg:poll())
    assert.not_equal(old, reg:current())
  end)

  it("poll swaps in a same-size edit whose modification time was set back", function()
    local path = tempdefs(entity_defs(100))
    local function date(p) assert(os.execute("touch -d @1000000000 '" .. p .. "'")) end
    date(path)
    local reg = assert(bitwire.watch(path))
    reg:poll()
    write(path, entity_defs(200))     -- in place (cp -p, touch -r)
    date(path)
    assert.is_true((reg:poll()))
    local other = temp.path()         -- another file renamed over it
    write(other, entity_defs(300))
    date(other)
    assert(os.rename(other, path))
    assert.is_true((reg:poll()))
    assert.same({ id = 1, health = 250 }, reg:current():decode("Entity",
      reg:current():encode("Entity", { id = 1, health = 250 })))
  end)

  it("poll reads again while the stamp is fresh: a write in the same tick keeps it", function()
    local core = require "bitwire.core"
    local path = tempdefs(entity_defs(100))
    assert.is_true(select(2, core.filestamp(path)))  -- just written
    local reg = assert(bitwire.watch(path))
    -- a filesystem whose timestamps tick slower than these writes: every
    -- stamp is the same, fresh, as the first
    local real, stamp = core.filestamp, core.filestamp(path)
    core.filestamp = function () return stamp, true end
    local ok, a, b = pcall(function ()
      local first = { reg:poll() }
      write(path, entity_defs(200))
      return first, { reg:poll() }
    end)
    core.filestamp = real
    assert.is_true(ok, a)
    assert.same({ false, nil }, a)
    assert.same({ true }, b)
  end)

  it("poll tries an edit again after the host ran out of memory compiling it", function()
    local core = require "bitwire.core"
    local path = tempdefs(entity_defs(100))
    local reg = assert(bitwire.watch(path))
    local real = core.sandbox
    core.sandbox = function () core.sandbox = real; error("not enough memory", 0) end
    local ok, a, b = pcall(function ()
      write(path, entity_defs(200))
      local first = { reg:poll() }
      return first, { reg:poll() }
    end)
    core.sandbox = real
    assert.is_true(ok, a)
    assert.same({ false, path .. ": not enough memory" }, a)
    assert.same({ true }, b)   -- the same content, read and swapped in
    assert.is_nil(reg.last_error)
  end)

  it("poll refuses a bad edit with false, message and keeps the old schema", function()
    local path = tempdefs(entity_defs(100))
    local reg = assert(bitwire.watch(path))
    local old = reg:current()
    write(path, entity_defs(100, '{"armor", "int", min = 9, max = 1},'))
    local changed, err = reg:poll()
    assert.is_false(changed)
    assert.matches(lit(path) .. ": bitwire%.schema: Entity%.armor: min 9 > max 1", err)
    assert.equal(old, reg:current())
    assert.equal(err, reg.last_error)
    assert.same(ENTITY, old:decode("Entity", old:encode("Entity", ENTITY)))
    -- the same bad file is not reported twice
    assert.same({ false, nil }, { reg:poll() })
    -- a syntax error is refused the same way, with its line
    write(path, "return {\n  Entity = {\n    oops oops\n}")
    changed, err = reg:poll()
    assert.is_false(changed)
    assert.matches(lit(path) .. ":3:", err)
    assert.equal(old, reg:current())
    -- fixing the file swaps again
    write(path, entity_defs(300))
    assert.is_true(reg:poll())
    assert.is_nil(reg.last_error)
    assert.not_equal(old, reg:current())
  end)

  it("poll refuses a file that loops forever", function()
    local path = tempdefs(entity_defs(100))
    local reg = assert(bitwire.watch(path, { budget = 100000, time = 60 }))
    local old = reg:current()
    write(path, "while true do end")
    local changed, err = reg:poll()
    assert.is_false(changed)
    assert.matches("instruction budget of 100000 exhausted", err)
    assert.equal(old, reg:current())
  end)

  it("poll reports a vanished file once and serves on", function()
    local path = tempdefs(entity_defs(100))
    local reg = assert(bitwire.watch(path))
    local old = reg:current()
    os.remove(path)
    local changed, err = reg:poll()
    assert.is_false(changed)
    assert.matches(lit(path), err)
    assert.same({ false, nil }, { reg:poll() })
    assert.equal(old, reg:current())
    write(path, entity_defs(100))          -- back as it was: nothing to do
    assert.same({ false, nil }, { reg:poll() })
    assert.equal(old, reg:current())
    assert.is_nil(reg.last_error)          -- and no error left to show
    -- a refused edit that vanishes and comes back is refused again, with its
    -- own message rather than the vanished file's
    write(path, "return 1")
    assert.matches("must return a table", select(2, reg:poll()))
    os.remove(path)
    assert.matches("No such file", select(2, reg:poll()))
    write(path, "return 1")
    assert.matches("must return a table", select(2, reg:poll()))
    assert.matches("must return a table", reg.last_error)
  end)

  it("poll reads again after a read failed with the file's stamp unchanged", function()
    local core = require "bitwire.core"
    local path = tempdefs(entity_defs(100))
    local reg = assert(bitwire.watch(path))
    reg:poll()
    write(path, entity_defs(200))
    -- a failure that leaves the file as it is (out of descriptors, EACCES)
    local real = core.readdefs
    core.readdefs = function (p) return nil, p .. ": Too many open files" end
    local ok, changed, err = pcall(reg.poll, reg)
    local ok2, changed2, err2 = pcall(reg.reload, reg)
    core.readdefs = real
    assert.is_true(ok, changed)
    assert.is_false(changed)
    assert.matches("Too many open files", err)
    assert.is_true(ok2, changed2)      -- a reload's failed read, the same
    assert.is_false(changed2)
    assert.matches("Too many open files", err2)
    assert.is_true((reg:poll()))
    assert.same({ id = 1, health = 150 }, reg:current():decode("Entity",
      reg:current():encode("Entity", { id = 1, health = 150 })))
  end)

  it("poll called during a poll does nothing, and the outer one serves the newest file", function()
    local path = tempdefs(entity_defs(100))
    local reg = assert(bitwire.watch(path))
    reg:poll()
    write(path, entity_defs(200))
    local nested
    -- a hook (or a finalizer) that polls after a newer edit, mid-poll
    debug.sethook(function ()
      if nested == nil and debug.getinfo(2, "n").name == "install" then
        write(path, entity_defs(300))
        nested = { pcall(reg.poll, reg) }
      end
    end, "c")
    local ok, changed = pcall(reg.poll, reg)
    debug.sethook()
    assert.is_true(ok, changed)
    assert.is_true(nested[1])
    assert.is_false(nested[2])
    assert.matches("called during another poll or reload", nested[3])
    assert.is_true((reg:poll()))       -- the newer file, not left behind
    assert.same({ id = 1, health = 250 }, reg:current():decode("Entity",
      reg:current():encode("Entity", { id = 1, health = 250 })))
  end)

  it("makes every schema strict on request, reloads and polls too", function()
    local path = tempdefs(entity_defs(100))
    local bad = { id = 7, health = 55, hp = 1 }
    assert.matches(lit("unknown key 'hp' (strict: Entity"),
      select(2, pcall(assert(bitwire.load(path, { strict = true })).encode,
        assert(bitwire.load(path, { strict = true })), "Entity", bad)))
    assert.is_string(assert(bitwire.load(path)):encode("Entity", bad))
    local reg = assert(bitwire.watch(path, { strict = true }))
    local p = bitwire.protocol(reg)
    assert.matches(lit("unknown key 'hp'"), select(2, pcall(p.encode, p, "Entity", bad)))
    write(path, entity_defs(200))
    assert.is_true((reg:reload()))
    assert.matches(lit("unknown key 'hp'"), select(2, pcall(p.encode, p, "Entity", bad)))
    -- false turns off a description's own options = {strict = true}
    write(path, entity_defs(100):gsub("return {", "return { options = { strict = true },"))
    assert.matches(lit("unknown key 'hp'"),
      select(2, pcall(function () return assert(bitwire.load(path)):encode("Entity", bad) end)))
    assert.is_string(assert(bitwire.load(path, { strict = false })):encode("Entity", bad))
    assert.matches(lit("bitwire.watch: 'strict' must be a boolean"),
      select(2, pcall(bitwire.watch, path, { strict = 1 })))
  end)

  it("reload compiles the file even when it is unchanged", function()
    local path = tempdefs(entity_defs(100))
    local reg = assert(bitwire.watch(path))
    local old = reg:current()
    assert.same({ true }, { reg:reload() })
    assert.not_equal(old, reg:current())
    assert.equal(old:fingerprint(), reg:current():fingerprint())
    assert.equal(1, #reg:schemas())         -- one per fingerprint
    write(path, "return 1")
    local ok, err = reg:reload()
    assert.is_false(ok)
    assert.matches("must return a table, got number", err)
  end)

  it("picks up a default-only change (same fingerprint, new decode)", function()
    local path = tempdefs(entity_defs(100, '{"armor", "int", min = 0, max = 9, since = 2},'))
    local reg = assert(bitwire.watch(path))
    local old = reg:current()
    write(path, entity_defs(100, '{"armor", "int", min = 0, max = 9, since = 2, default = 4},'))
    assert.is_true(reg:poll())
    local bytes = old:encode("Entity", ENTITY, { version = 1 })
    assert.is_nil(old:decode("Entity", bytes, { version = 1 }).armor)
    assert.equal(4, reg:current():decode("Entity", bytes, { version = 1 }).armor)
    assert.equal(old:fingerprint(), reg:current():fingerprint())
    assert.equal(reg:current(), reg:get(old:fingerprint()))
  end)

  it("keeps old schemas working for code that holds them", function()
    local path = tempdefs(entity_defs(100))
    local reg = assert(bitwire.watch(path))
    local old = reg:current()
    local bytes = old:encode("Entity", ENTITY)
    for h = 101, 110 do
      write(path, entity_defs(h))
      assert.is_true(reg:poll())
    end
    collectgarbage()
    collectgarbage()
    assert.same(ENTITY, old:decode("Entity", bytes))
    assert.equal(bytes, old:encode("Entity", ENTITY))
  end)

  it("keeps the last N schemas by fingerprint", function()
    local path = tempdefs(entity_defs(100))
    local reg = assert(bitwire.watch(path, { keep = 2 }))
    local fps = { reg:current():fingerprint() }
    for _, h in ipairs { 200, 300 } do
      write(path, entity_defs(h))
      assert.is_true(reg:poll())
      fps[#fps + 1] = reg:current():fingerprint()
    end
    assert.is_nil(reg:get(fps[1]))
    assert.equal(reg:current(), reg:get(fps[3]))
    assert.is_not_nil(reg:get(fps[2]))
    assert.equal(2, #reg:schemas())
    assert.equal(reg:current(), reg:schemas()[1])
    assert.is_nil(reg:get("0000000000000000"))
  end)

  it("keeps 4 by default", function()
    local path = tempdefs(entity_defs(100))
    local reg = assert(bitwire.watch(path))
    for h = 101, 106 do
      write(path, entity_defs(h))
      reg:poll()
    end
    assert.equal(4, #reg:schemas())
  end)
end)

describe("registry protocol", function()
  after_each(cleanup)

  local function setup(opts, keep)
    local path = tempdefs(entity_defs(100))
    local reg = assert(bitwire.watch(path, { keep = keep }))
    return reg, reg:protocol(opts), path
  end

  it("frames with the current schema's tag after the CRC", function()
    local reg, p = setup()
    local packet = p:encode("Entity", ENTITY)
    local tag = string.unpack("<I4", packet, 5)
    assert.equal(tonumber(reg:current():fingerprint():sub(1, 8), 16), tag)
    local name, value, s = p:decode(packet)
    assert.equal("Entity", name)
    assert.same(ENTITY, value)
    assert.equal(reg:current(), s)
  end)

  it("decodes a packet framed with an earlier definition", function()
    local reg, p, path = setup()
    local old = p:encode("Entity", { id = 1, health = 100 })
    write(path, entity_defs(200, '{"armor", "int", min = 0, max = 255},'))
    assert.is_true(reg:poll())
    local new = p:encode("Entity", { id = 2, health = 200, armor = 3 })
    local name, v = p:decode(old)
    assert.equal("Entity", name)
    assert.same({ id = 1, health = 100 }, v)
    name, v = p:decode(new)
    assert.equal("Entity", name)
    assert.same({ id = 2, health = 200, armor = 3 }, v)
  end)

  it("rejects a packet whose schema is no longer kept with code 'schema'", function()
    local reg, p, path = setup(nil, 1)
    local old = p:encode("Entity", ENTITY)
    write(path, entity_defs(200))
    assert.is_true(reg:poll())
    local v, err, code = p:decode(old)
    assert.is_nil(v)
    assert.equal("schema", code)
    assert.matches(string.format("%08x", string.unpack("<I4", old, 5)), err)
  end)

  it("checks the CRC before it trusts the tag", function()
    local _, p = setup()
    local packet = p:encode("Entity", ENTITY)
    local bad = packet:sub(1, 4) .. string.char(packet:byte(5) ~ 1) .. packet:sub(6)
    local v, _, code = p:decode(bad)
    assert.is_nil(v)
    assert.equal("crc", code)
    v, _, code = p:decode(packet:sub(1, 3))
    assert.is_nil(v)
    assert.is_string(code)
  end)

  it("rejects packets of another protocol id", function()
    local reg = setup()
    local a, b = reg:protocol { id = 1 }, reg:protocol { id = 2 }
    local v, _, code = b:decode(a:encode("Entity", ENTITY))
    assert.is_nil(v)
    assert.equal("crc", code)
  end)

  it("is what bitwire.protocol(registry, opts) makes", function()
    local reg = setup()
    local p = bitwire.protocol(reg, { id = 5 })
    local q = reg:protocol { id = 5 }
    assert.equal(getmetatable(q), getmetatable(p))
    assert.equal(q:encode("Entity", ENTITY), p:encode("Entity", ENTITY))
  end)

  it("raises on bad options", function()
    local reg, p = setup()
    assert.has_error(function() reg:protocol(5) end)
    assert.has_error(function() reg:protocol { id = 1.5 } end)
    assert.has_error(function() reg:protocol { versioned = true, version_bits = 40 } end)
    assert.has_error(function() p:encode("Entity", ENTITY, { version = 1 }) end)
    assert.has_error(function() p:decode(42) end)
  end)
end)

describe("bitwire.diff", function()
  local v1 = bitwire.load(DEFS .. "game_v1.lua")
  local v3 = bitwire.load(DEFS .. "game_v3.lua")

  it("is empty for equal schemas", function()
    local r = bitwire.diff(v1, bitwire.load(DEFS .. "game_v1_reordered.lua"))
    assert.is_true(r:empty())
    assert.is_false(r.wire)
    assert.equal("", r:text())
    assert.equal("", tostring(r))
    assert.same({}, r.changes)
  end)

  it("lists added, removed and changed fields, type by type", function()
    local a = bitwire.schema { Entity = {
      { "id", "int", min = 0, max = 4095 },
      { "health", "int", min = 0, max = 100 },
      { "speed", "float", min = 0, max = 10, res = 0.1 },
    } }
    local b = bitwire.schema { Entity = {
      { "id", "int", min = 0, max = 4095 },
      { "health", "int", min = 0, max = 200 },
      { "armor", "int", min = 0, max = 255 },
    } }
    local r = bitwire.diff(a, b)
    assert.is_false(r:empty())
    assert.is_true(r.wire)
    assert.equal(table.concat({
      "Entity: - speed float [0, 10] res 0.1",
      "Entity: ~ health int [0, 100] -> [0, 200]",
      "Entity: + armor int [0, 255]",
    }, "\n"), r:text())
    assert.same({ type = "Entity", op = "change", field = "health",
      old = "int [0, 100]", new = "int [0, 200]", what = { "range" }, wire = true,
      old_field = r.changes[2].old_field, new_field = r.changes[2].new_field },
      r.changes[2])
    assert.equal("remove", r.changes[1].op)
    assert.equal("add", r.changes[3].op)
    assert.equal(255, r.changes[3].new_field.max)
  end)

  it("names what changed on the wire", function()
    local cases = {
      { { "x", "uint", bits = 4 }, { "x", "uint", bits = 5 }, { "bits" } },
      { { "x", "int", min = 0, max = 9 }, { "x", "int", min = 0, max = 9, optional = true },
        { "optional" } },
      { { "x", "int", min = 0, max = 9 }, { "x", "uint", bits = 4 }, { "kind", "range" } },
      { { "x", "float", min = 0, max = 1, res = 0.1 }, { "x", "float", min = 0, max = 1, res = 0.01 },
        { "res" } },
      { { "x", "array", of = "int8", max = 4 }, { "x", "array", of = "int8", count = 4 },
        { "range", "fixed" } },
      { { "x", "array", of = { "int", min = 0, max = 3 }, max = 4 },
        { "x", "array", of = { "int", min = 0, max = 7 }, max = 4 }, { "of" } },
      { { "x", "enum", values = { "a", "b" } }, { "x", "enum", values = { "a", "b", "c" } },
        { "values" } },
      { { "x", "bool" }, { "x", "bool", since = 2 }, { "since" } },
      { { "x", "bool" }, { "x", "bool", removed = 2 }, { "removed" } },
    }
    for i, c in ipairs(cases) do
      local int8 = { { "v", "int", min = -128, max = 127 } }
      local r = bitwire.diff(bitwire.schema { T = { c[1] }, int8 = int8 },
        bitwire.schema { T = { c[2] }, int8 = int8 })
      assert.equal(1, #r.changes, "case " .. i)
      assert.equal("change", r.changes[1].op, "case " .. i)
      assert.same(c[3], r.changes[1].what, "case " .. i)
      assert.is_true(r.wire, "case " .. i)
    end
  end)

  it("reports types added and removed, and moved message ids", function()
    local a = bitwire.schema { B = { { "x", "bool" } }, C = { { "y", "bool" } } }
    local b = bitwire.schema { A = { { "z", "bool" } }, B = { { "x", "bool" } } }
    local r = bitwire.diff(a, b)
    assert.same({ "A" }, r.types_added)
    assert.same({ "C" }, r.types_removed)
    assert.equal(table.concat({
      "+ type A",
      "- type C",
      "B: ~ message type id 0 -> 1",
    }, "\n"), r:text())
    local c = bitwire.schema { A = { { "z", "bool" } }, B = { { "x", "bool" } },
      C = { { "y", "bool" } } }
    r = bitwire.diff(a, c)
    assert.matches("~ message type ids take 1 %-> 2 bits", r:text())
  end)

  it("reports versioned fields and defaults (defaults are not on the wire)", function()
    local r = bitwire.diff(v1, v3)
    assert.equal(table.concat({
      "Entity: + armor int [0, 255] since 2",
      "Entity: ~ legacy bool -> bool removed 3",
      "Entity: ~ legacy default none -> false (not on the wire)",
      "Entity: + shield int [0, 7] since 3",
    }, "\n"), r:text())
    local a = bitwire.schema { T = { { "x", "int", min = 0, max = 9, default = 1 } } }
    local b = bitwire.schema { T = { { "x", "int", min = 0, max = 9, default = 2 } } }
    r = bitwire.diff(a, b)
    assert.is_false(r:empty())
    assert.is_false(r.wire)
    assert.same({ type = "T", op = "default", field = "x", old = 1, new = 2,
      wire = false }, r.changes[1])
  end)

  it("compares float defaults as encode sends them: NaN is itself, -0.0 not 0.0", function()
    local function with(d) return bitwire.schema { T = { { "f", "float64", default = d } } } end
    assert.is_true(bitwire.diff(with(0 / 0), with(0 / 0)):empty())
    local r = bitwire.diff(with(0.0), with(-0.0))
    assert.is_false(r:empty())
    assert.equal("T: ~ f default 0 -> -0 (not on the wire)", r:text())
  end)

  it("tells renames and new enum names, which leave the bits alone", function()
    local a = bitwire.schema { T = { { "hp", "int", min = 0, max = 9 },
      { "team", "enum", values = { "red", "blue" } } } }
    local b = bitwire.schema { T = { { "health", "int", min = 0, max = 9 },
      { "team", "enum", values = { "red", "green" } } } }
    local r = bitwire.diff(a, b)
    assert.is_false(r.wire)
    assert.equal(a:fingerprint(), b:fingerprint())
    assert.equal(table.concat({
      "T: ~ hp renamed health (not on the wire)",
      'T: ~ team enum {red, blue} -> {red, green} (names only, not on the wire)',
    }, "\n"), r:text())
    assert.same({ "rename", "change" }, { r.changes[1].op, r.changes[2].op })
    assert.is_false(r.changes[2].wire)
  end)

  it("reports reordered fields", function()
    local a = bitwire.schema { T = { { "x", "bool" }, { "y", "float32" } } }
    local b = bitwire.schema { T = { { "y", "float32" }, { "x", "bool" } } }
    local r = bitwire.diff(a, b)
    assert.equal("T: ~ field order x, y -> y, x", r:text())
    assert.is_true(r.wire)
  end)

  it("takes descriptions too, and raises on anything else", function()
    assert.is_true(bitwire.diff(v1:description(), v1):empty())
    assert.has_error(function() bitwire.diff(v1, 42) end)
  end)

  it("diffs a schema adopted from another state by its kept description", function()
    local adopted = bitwire.adopt(v1:share())
    assert.same(v1:description(), adopted:description())
    assert.is_true(bitwire.diff(v1, adopted):empty())
  end)
end)

describe("versioned fields", function()
  after_each(cleanup)

  local v1 = bitwire.load(DEFS .. "game_v1.lua")
  local v3 = bitwire.load(DEFS .. "game_v3.lua")
  local save = { tick = 77, entities = {
    { id = 1, health = 90, legacy = true, name = "old" },
    { id = 2, health = 10, legacy = false },
  } }

  it("takes the highest since/removed as the schema version", function()
    assert.equal(0, v1:version())
    assert.equal(3, v3:version())
  end)

  it("writes a version 1 save exactly as the version 1 definitions did", function()
    assert.equal(v1:encode("Snapshot", save), v3:encode("Snapshot", save, { version = 1 }))
  end)

  it("reads a version 1 save with defaults for the fields added since", function()
    local bytes = v1:encode("Snapshot", save)
    local v = assert(v3:decode("Snapshot", bytes, { version = 1 }))
    assert.equal(77, v.tick)
    assert.same({ id = 1, health = 90, legacy = true, name = "old", armor = 10, shield = 0 },
      v.entities[1])
    assert.same({ id = 2, health = 10, legacy = false, armor = 10, shield = 0 },
      v.entities[2])
  end)

  it("reads version 2 with armor on the wire and shield by default", function()
    local e = { id = 3, health = 5, armor = 200, legacy = true }
    local bytes = v3:encode("Entity", e, { version = 2 })
    local v = v3:decode("Entity", bytes, { version = 2 })
    assert.same({ id = 3, health = 5, armor = 200, legacy = true, shield = 0 }, v)
  end)

  it("drops a removed field from the wire and gives its default", function()
    local e = { id = 3, health = 5, armor = 1, shield = 6, legacy = true }
    local bytes = v3:encode("Entity", e)
    assert.equal(v3:bits("Entity", { id = 3, health = 5, armor = 1, shield = 6 }),
      v3:bits("Entity", e))
    assert.same({ id = 3, health = 5, armor = 1, shield = 6, legacy = false },
      v3:decode("Entity", bytes))
  end)

  it("sends the version in the frame of a versioned registry protocol", function()
    local path = tempdefs(slurp(DEFS .. "game_v3.lua"))
    local reg = assert(bitwire.watch(path))
    local p = reg:protocol { id = 9, versioned = true }
    local e = { id = 4, health = 50, legacy = true }
    local packet = p:encode("Entity", e, { version = 1 })
    assert.equal(1, string.unpack("<I2", packet, 9))      -- after CRC and tag
    local name, v = p:decode(packet)
    assert.equal("Entity", name)
    assert.same({ id = 4, health = 50, legacy = true, armor = 10, shield = 0 }, v)
    packet = p:encode("Entity", { id = 4, health = 50, armor = 9, shield = 1 })
    assert.equal(3, string.unpack("<I2", packet, 9))
    name, v = p:decode(packet)
    assert.equal("Entity", name)
    assert.same({ id = 4, health = 50, armor = 9, shield = 1, legacy = false }, v)
    local p8 = reg:protocol { versioned = true, version_bits = 8 }
    assert.equal(2, p8:encode("Entity", e, { version = 2 }):byte(9))
  end)
end)
