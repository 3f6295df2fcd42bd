-- The definitions-file sandbox: a lua_State of the file's own with exact
-- memory, instruction and CPU-time limits, a bounded read of the file, a
-- bounded copy of its result, and registries that never raise.
local bitwire = require "bitwire"
local core = require "bitwire.core"
local loader = require "bitwire.loader"

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local DEFS = here .. "fixtures/defs/"

local helpers = require "spec.helpers"
local lit, write = helpers.lit, helpers.write

-- temporary paths, removed by after_each
local temp = helpers.temps()
local temppath, tempdefs, cleanup = temp.path, temp.defs, temp.cleanup

local function sh(cmd)
  local ok = os.execute(cmd)
  assert(ok, cmd)
end

-- the host heap growth (KB) while f runs, with the collector stopped so
-- garbage the host made shows
local function host_growth(f)
  collectgarbage("collect")
  collectgarbage("stop")
  local before = collectgarbage("count")
  local ok, err = pcall(f)
  local grew = collectgarbage("count") - before
  collectgarbage("restart")
  assert(ok, err)
  return grew
end

-- core.sandbox with the loader's defaults and 'opts' (CPU time enough for
-- valgrind)
local function run(source, opts)
  local o = { time = 60 }
  for k, v in pairs(loader.DEFAULTS) do o[k] = o[k] or v end
  for k, v in pairs(opts or {}) do o[k] = v end
  return core.sandbox(source, "f.lua", o)
end

local ENTITY = [[
return { Entity = { {"id", "int", min = 0, max = 4095}, {"health", "int", min = 0, max = %d} } }
]]

describe("bitwire.load limits", function()
  after_each(cleanup)

  -- file, message pattern, options: each limit stops the file without the
  -- host's heap growing by what the file asked for. SLOW: the budget or
  -- memory, not the CPU time, must stop the file under valgrind too.
  local SLOW = { time = 60 }
  local hostile = {
    { "rep_count_string.lua", "rep_count_string%.lua:2: memory limit of 1024 KB exceeded$",
      { memory = 1024 } },
    { "rep_number.lua", "rep_number%.lua:2: memory limit of 1024 KB exceeded$", { memory = 1024 } },
    { "format_many.lua", "format_many%.lua:5: memory limit of 1024 KB exceeded$", { memory = 1024 } },
    { "concat_many.lua", "concat_many%.lua:3: memory limit of 1024 KB exceeded$", { memory = 1024 } },
    { "string_rep.lua", "string_rep%.lua:1: memory limit of 65536 KB exceeded$", SLOW },
    { "move_strings.lua", "move_strings%.lua:2: instruction budget of 1000000 exhausted$", SLOW },
    { "border.lua", "border%.lua:5: instruction budget of 1000000 exhausted$", SLOW },
    { "utf8_loop.lua", "utf8_loop%.lua:4: CPU time limit of 0%.1 s exceeded$",
      { budget = 1e12, time = 0.1 } },
    { "loop.lua", "loop%.lua:2: CPU time limit of 0%.02 s exceeded$", { budget = 1e12, time = 0.02 } },
    { "pcall_tail.lua", "pcall_tail%.lua:2: instruction budget of 1000000 exhausted$", SLOW },
    { "pcall_loop.lua", "pcall_loop%.lua:%d: CPU time limit of 0%.02 s exceeded$",
      { budget = 1e12, time = 0.02 } },
    { "shared_fields.lua", "shared_fields%.lua: description has more than 100000 tables and fields", SLOW },
    { "deep.lua", "deep%.lua: description nests deeper than 100 tables at T%[1%]%[1%]", SLOW },
    { "cycle.lua", "cycle%.lua: description nests deeper than 100 tables at loop%.self%.self", SLOW },
    { "function_value.lua", "function_value%.lua: description holds a function at T%[1%]%.default", SLOW },
  }
  for _, case in ipairs(hostile) do
    local file, pattern, opts = case[1], case[2], case[3]
    it("stops " .. file .. " at its limit, the host's heap untouched", function()
      local s, err
      local grew = host_growth(function() s, err = bitwire.load(DEFS .. file, opts) end)
      assert.is_nil(s)
      assert.matches(pattern, err)
      assert.is_true(grew < 4096, "the host heap grew by " .. grew .. " KB")
    end)
  end

  it("stops a file whose parsing alone runs past the time limit", function()
    -- checking each new label against the others is quadratic in Lua's
    -- parser: a quarter second of CPU for a file under max_size
    local n, lines = 30000, {}
    for i = 1, n do lines[i] = "::b" .. i .. ":: _ = 0" end
    lines[#lines + 1] = "return { T = { { 'x', 'bool' } } }"
    local path = tempdefs(table.concat(lines, "\n"))
    local s, err = bitwire.load(path, { time = 0.05, budget = 1e12 })
    assert.is_nil(s)
    -- stopped in the parser, before any line ran: no line in the message
    assert.matches("^[^:]*: CPU time limit of 0%.05 s exceeded$", err)
  end)

  it("refuses more gotos and breaks than the parser resolves in time", function()
    -- the gotos pending on one label are resolved at once, within one
    -- piece of source: 32766 of them took 0.4 s whatever the time limit
    local function file(n, word)
      local lines = {}
      for i = 1, n do lines[i] = word end
      return table.concat(lines, "\n")
    end
    local tail = "\nreturn { T = { { 'x', 'bool' } } }"
    for _, src in ipairs({ file(32766, "goto x") .. "\n::x::" .. tail,
                           "while true do\n" .. file(32766, "break") .. "\nend" .. tail,
                           file(4097, "goto x") .. "\n::x::" .. tail }) do
      local s, err = bitwire.load(tempdefs(src), { time = 0.01 })
      assert.is_nil(s)
      assert.matches(": more than 4096 goto and break words: the parser matches them "
        .. "to labels in quadratic time$", err)
    end
    -- at the bound it parses, and a word in a name is no goto
    local ok = file(4096, "goto x") .. "\n::x::\nlocal gotox, breaking = 1, 2" .. tail
    local s, err = bitwire.load(tempdefs(ok), { time = 60 })  -- valgrind: 50x slower
    assert.is_nil(err)
    assert.is_truthy(s)
  end)

  it("runs what the old budget charged and the new limits allow", function()
    local s, err = bitwire.load(DEFS .. "rep_empty.lua")
    assert.is_nil(err)
    assert.same({ x = 0 }, s:decode("T", s:encode("T", { x = 0 })))
  end)

  it("holds the memory limit to the allocation", function()
    local function rep(kb)
      return tempdefs(string.format([[
local s = ("x"):rep(%d * 1024)
return { T = { {"s", "string", max = #s} } }
]], kb))
    end
    -- rep holds its buffer and the string at once; the state with its
    -- libraries takes some 30 KB
    assert.is_not_nil(bitwire.load(rep(1000), { memory = 2048, time = 60 }))
    local s, err = bitwire.load(rep(2049), { memory = 2048, time = 60 })
    assert.is_nil(s)
    assert.matches(":1: memory limit of 2048 KB exceeded$", err)
    -- too small for the state itself: an error, not a crash
    s, err = bitwire.load(DEFS .. "game_v1.lua", { memory = 1 })
    assert.is_nil(s)
    assert.matches("game_v1%.lua: memory limit of 1 KB exceeded$", err)
  end)

  it("gives the file a memory error it can catch, and the limit holds after", function()
    local path = tempdefs([[
local ok, err = pcall(string.rep, "x", 1 << 24)
assert(not ok and err == "not enough memory", err)
return { T = { {"x", "bool"} } }
]])
    local s, err = bitwire.load(path, { memory = 1024 })
    assert.is_nil(err)
    assert.is_not_nil(s)
  end)

  it("counts every instruction, library code written in Lua included", function()
    local path = tempdefs([[
local t = {}
for i = 1, 100 do t[i] = 101 - i end
table.sort(t)
table.insert(t, 1, 0)
table.remove(t, 1)
assert(table.move(t, 1, 100, 1, {})[100] == 100)
return { T = { {"x", "bool"} } }
]])
    assert.is_not_nil(bitwire.load(path, { budget = 20000, time = 60 }))
    local s, err = bitwire.load(path, { budget = 2000, time = 60 })
    assert.is_nil(s)
    assert.matches(lit(path) .. ":%d: instruction budget of 2000 exhausted$", err)
  end)

  it("keeps each table function's results and errors", function()
    -- the same script in the host (C functions) and the sandbox (Lua ones)
    local script = [[
local out = {}
local function try(f, ...)
  local ok, err = pcall(f, ...)
  out[#out + 1] = ok and "ok" or err
end
local t = {5, 3, 9, 1, 7, 3, 8}
table.sort(t); out[#out + 1] = table.concat(t, ",")
table.sort(t, function(a, b) return a > b end); out[#out + 1] = table.concat(t, ",")
table.insert(t, 2, 42); table.insert(t, 99); out[#out + 1] = table.concat(t, ",")
out[#out + 1] = tostring(table.remove(t)) .. tostring(table.remove(t, 1)) .. tostring(table.remove({}))
out[#out + 1] = table.concat(table.move(t, 2, 4, 1), ",")
out[#out + 1] = table.concat(table.move(t, 1, 3, 3), ",")
out[#out + 1] = table.concat(table.move({1, 2, 3}, 1, 3, 2, {9}), ",")
try(table.insert, t, 0, 1); try(table.insert, t, #t + 2, 1); try(table.insert, t, 1, 2, 3)
try(table.remove, t, #t + 2); try(table.move, {}, math.mininteger, 1, 1)
try(table.move, {}, 1, 2, math.maxinteger); try(table.insert, t, 1.5, 1)
local e = {}; table.remove(e, 1); table.remove(e, 0); out[#out + 1] = tostring(#e)
return out
]]
    local host = assert(load(script))()
    local boxed, err = run(script)
    assert.is_nil(err)
    -- Lua 5.4.4's remove names argument #1 for a bad position; the host
    -- names a C function by where it finds it in package.loaded
    host[11] = host[11]:gsub("#1", "#2")
    for _, t in ipairs { host, boxed } do
      for i, v in ipairs(t) do t[i] = v:gsub("to '[^']*'", "to f") end
    end
    assert.same(host, boxed)
  end)

  it("sorts stably with any comparator and no comparator", function()
    local script = [[
local t = {}
for i = 1, 300 do t[i] = {k = (i * 7919) % 13, i = i} end
table.sort(t, function(a, b) return a.k < b.k end)
local ok = true
for i = 2, #t do
  if t[i - 1].k > t[i].k or (t[i - 1].k == t[i].k and t[i - 1].i > t[i].i) then ok = false end
end
local u = {}
for i = 1, 257 do u[i] = (i * 31) % 257 end
table.sort(u)
for i = 2, #u do if u[i - 1] > u[i] then ok = false end end
return { ok = ok, n = #t + #u }
]]
    assert.same({ ok = true, n = 557 }, run(script))
  end)

  it("copies numbers out bit for bit, infinities and NaN included", function()
    local d = run([[return { 1/0, -1/0, 0/0, -0.0, math.maxinteger, 2^53 + 0.0, 0.1 }]])
    assert.equal(math.huge, d[1])
    assert.equal(-math.huge, d[2])
    assert.is_true(d[3] ~= d[3])
    assert.equal(string.pack("<d", 0/0), string.pack("<d", d[3]))
    assert.equal("-0.0", tostring(d[4]))
    assert.equal(math.maxinteger, d[5])
    assert.equal("float", math.type(d[6]))
    assert.equal(0.1, d[7])
  end)

  it("holds each limit at its boundary: the limit passes, one past it fails", function()
    -- bytes of the file
    local body = "return { T = { { 'x', 'bool' } } }"
    local path = tempdefs(body)
    assert.is_not_nil(bitwire.load(path, { max_size = #body }))
    local s, err = bitwire.load(path, { max_size = #body - 1 })
    assert.is_nil(s)
    assert.equal(path .. ": file of " .. #body .. " bytes exceeds the size limit of "
      .. #body - 1 .. " bytes", err)
    -- bytes of the strings copied out
    local src = "return { [('k'):rep(100)] = true }"
    assert.is_not_nil(run(src, { max_size = 100 }))
    s, err = run(src, { max_size = 99 })
    assert.is_nil(s)
    assert.matches("strings take more than max_size, 99 bytes", err)
    -- instructions, counted as the host's own hook counts them
    src = "local x = 0 for i = 1, 10 do x = x + i end return { x }"
    local n, co = 0, coroutine.create(assert(load(src)))
    debug.sethook(co, function() n = n + 1 end, "", 1)
    assert(coroutine.resume(co))
    assert.same({ 55 }, run(src, { budget = n }))
    s, err = run(src, { budget = n - 1 })
    assert.is_nil(s)
    assert.equal("f.lua:1: instruction budget of " .. n - 1 .. " exhausted", err)
    -- tables nested in the result
    local function nest(depth)
      return "local r = {} local t = r for i = 2, " .. depth
        .. " do t.x = {} t = t.x end return r"
    end
    assert.is_not_nil(run(nest(100)))
    s, err = run(nest(101))
    assert.is_nil(s)
    assert.matches("^f%.lua: description nests deeper than 100 tables at x%.x", err)
    -- bytes of a message the file raises
    err = select(2, run("error(('x'):rep(1024), 0)"))
    assert.equal("f.lua:1: " .. ("x"):rep(1024), err)
    err = select(2, run("error(('x'):rep(1025), 0)"))
    assert.equal("f.lua:1: " .. ("x"):rep(1024) .. "... (1025 bytes in all)", err)
  end)

  it("copies a shared table once for each time it is reached", function()
    local d = assert(run([[local f = {"x", "bool"}
return { A = { f }, B = { f } }]]))
    assert.same({ "x", "bool" }, d.A[1])
    assert.same(d.A, d.B)
    assert.not_equal(d.A[1], d.B[1])
    -- 1 root + 2 pairs + 2 type tables + 2 pairs + 2 fields + 4 pairs = 13
    local src = "local f = {'x', 'bool'} return { A = { f }, B = { f } }"
    assert.is_not_nil(run(src, { max_nodes = 13 }))
    local none, err = run(src, { max_nodes = 12 })
    assert.is_nil(none)
    assert.matches("more than 12 tables and fields", err)
  end)

  it("copies out no more string bytes than max_size, a string reached twice counting twice", function()
    -- a 2-byte file line of string.rep would otherwise hand the host 16 MiB
    -- per field, and the schema its quoted text
    local src = [[local s = ("\0\49"):rep(%d)
return { T = { { "a", "bytes", max = 4096, default = s }, { "b", "bytes", max = 4096, default = s } } }]]
    assert.is_not_nil(run(src:format(25), { max_size = 200 }))  -- 2 x 50 bytes
    local none, err = run(src:format(50), { max_size = 200 })   -- 2 x 100
    assert.is_nil(none)
    assert.matches("strings take more than max_size, 200 bytes", err)
    none, err = run(src:format(1 << 23))  -- the default, 1 MiB
    assert.is_nil(none)
    assert.matches("max_size, 1048576 bytes", err)
  end)

  it("cuts a message the file raises to 1 KiB, saying how long it was", function()
    local none, err = run("error(string.rep('x', 1 << 20), 0)")
    assert.is_nil(none)
    assert.is_true(#err < 1200)
    assert.matches("xxxx%.%.%. %(1048576 bytes in all%)$", err)
    -- with the position error() puts first, it came to the host whole
    none, err = run("error(string.rep('x', 1 << 20))")
    assert.is_nil(none)
    assert.is_true(#err < 1200)
    assert.matches("^f%.lua:1: xxxx", err)
    assert.matches("xxxx%.%.%. %(1048576 bytes in all%)$", err)
    -- a syntax error quotes its token: an unfinished string of the whole file
    none, err = run("return '" .. string.rep("x", 1 << 19) .. "\n")
    assert.is_nil(none)
    assert.is_true(#err < 1200)
    assert.matches("^f%.lua:1: unfinished string near ''xxxx", err)
    assert.matches("xxxx%.%.%. %(%d+ bytes in all%)$", err)
    -- the cut falls between UTF-8 characters, never inside one
    for _, pre in ipairs { "", "x", "xx", "xxx" } do
      none, err = run("error('" .. pre .. "' .. string.rep('\u{20AC}\u{E9}', 1000), 0)")
      assert.is_nil(none)
      assert.is_true(#err < 1200)
      assert.is_not_nil(utf8.len(err), err)
      assert.matches("%.%.%. %(" .. 5000 + #pre .. " bytes in all%)$", err)
    end
  end)

  it("keeps the text after a NUL in a message, the NUL written \\0", function()
    local none, err = run("error('\\0abc')")
    assert.is_nil(none)
    assert.equal("f.lua:1: \\0abc", err)
    none, err = run("error('a\\0' .. 12 .. '\\0', 0)")  -- before a digit, as %q writes it
    assert.is_nil(none)
    assert.equal("f.lua:1: a\\00012\\0", err)
    -- escaped, the text still stops at 1 KiB
    none, err = run("error(string.rep('\\0', 1 << 20))")
    assert.is_nil(none)
    assert.is_true(#err < 1200)
    assert.matches("^f%.lua:1: \\0\\0", err)
    assert.matches("\\0%.%.%. %(1048576 bytes in all%)$", err)
  end)

  it("writes no byte of the file's that a terminal acts on into a message", function()
    -- a refusal goes to logs and terminals: C0, DEL, C1 and bytes that are
    -- no UTF-8 come escaped, as %q writes a control byte, wherever the
    -- file put them (its error, a key of its result, a description)
    local function clean(err)
      assert.is_string(err)
      assert.is_nil(err:find("[%z\1-\31\127]"), err)
      assert.is_nil(err:find("\194[\128-\159]"), err)
      assert.is_not_nil(utf8.len(err), err)
    end
    local function refused(src)
      local none, err = run(src)
      assert.is_nil(none)
      clean(err)
      return err
    end
    assert.equal([[f.lua:1: \27[2J\10\194\155x\255\128\0271 é]],
      refused([[error("\27[2J\n\u{9b}x\255\128\0271 \u{e9}")]]))
    assert.equal([[f.lua: description holds a function at T.\27[2J\0.x: only tables, ]]
      .. "strings, numbers and booleans are kept",
      refused([[return { T = { ["\27[2J\0"] = { x = print or type } } }]]))
    -- escapes are cut whole, never into a byte that is not an escape
    local err = refused([[error(("\27"):rep(4000), 0)]])
    assert.matches("^f%.lua:1: " .. ("\\27"):rep(341) .. "%.%.%. %(4000 bytes in all%)$", err)
    -- the compiler's messages about the description's keys
    local cases = {
      { [[return { T = { {"x", "int", ["\27[2J"] = 1} } }]], "T.x: unknown option '\\27[2J' for type int" },
      { [[return { T = { {"x", "int", ["\0z"] = 1} } }]], "T.x: unknown option '\\0z' for type int" },
      { [[return { T = { ["\27[2J"] = 1 } }]], "T: fields must be a list, found key \\27[2J" },
      { [[return { options = { ["\27[2J"] = true }, T = { {"x", "bool"} } }]],
        "unknown schema option '\\27[2J'" },
    }
    for _, case in ipairs(cases) do
      local path = tempdefs(case[1])
      local s, msg = bitwire.load(path)
      assert.is_nil(s)
      clean(msg)
      assert.equal(path .. ": bitwire.schema: " .. case[2], msg)
    end
  end)

  it("gives a long path once and in full, where Lua shortens it to ...tail", function()
    local path = "/tmp/" .. string.rep("a", 70) .. "/defs.lua"
    local function load(source)
      local o = { time = 60 }
      for k, v in pairs(loader.DEFAULTS) do o[k] = o[k] or v end
      return core.sandbox(source, path, o)
    end
    local none, err = load("local x = 1\nerror('boom')")
    assert.is_nil(none)
    assert.equal(path .. ":2: boom", err)
    none, err = load("return {\n x = = 1 }")
    assert.is_nil(none)
    assert.equal(path .. ":2: unexpected symbol near '='", err)
  end)

  it("refuses keys that are not plain data", function()
    local d, err = run("return { [{}] = 1 }")
    assert.is_nil(d)
    assert.matches("f%.lua: description has a table key in the returned table", err)
  end)

  it("sees none of the host's or the state's globals, and no string patterns", function()
    local d = assert(run([[
local names = {}
for k in pairs(_ENV) do names[#names + 1] = k end
table.sort(names)
return { names = table.concat(names, " "), find = ("x").find == nil,
  rep = ("ab"):rep(2), lib = string.pack == nil and math.random == nil }
]]))
    assert.equal("assert error ipairs math next pairs pcall select string table "
      .. "tonumber tostring type utf8", d.names)
    assert.is_true(d.find)
    assert.equal("abab", d.rep)
    assert.is_true(d.lib)
  end)

  it("raises on bad options", function()
    local bad = {
      { { time = 0 }, "'time' must be a positive number of seconds" },
      { { time = "1" }, "'time' must be a positive number of seconds" },
      { { time = math.huge }, "'time' must be a positive number of seconds" },
      { { max_size = 0 }, "'max_size' must be a positive integer" },
      { { max_nodes = 1.5 }, "'max_nodes' must be a positive integer" },
    }
    for _, case in ipairs(bad) do
      local ok, err = pcall(bitwire.load, DEFS .. "game_v1.lua", case[1])
      assert.is_false(ok)
      assert.matches(lit(case[2]), err)
      ok, err = pcall(bitwire.watch, DEFS .. "game_v1.lua", case[1])
      assert.is_false(ok)
      assert.matches(lit(case[2]), err)
    end
  end)
end)

describe("reading a definitions file", function()
  after_each(cleanup)

  it("refuses a file past max_size, without reading it all", function()
    local text = "-- " .. ("x"):rep(1024 * 1024) .. "\nreturn {}"
    local path = tempdefs(text)
    local s, err = bitwire.load(path)
    assert.is_nil(s)
    assert.equal(path .. ": file of " .. #text .. " bytes exceeds the size limit of 1048576 bytes", err)
    s, err = bitwire.load(DEFS .. "game_v1.lua", { max_size = 64 })
    assert.is_nil(s)
    assert.matches("game_v1%.lua: file of %d+ bytes exceeds the size limit of 64 bytes$", err)
  end)

  it("skips a UTF-8 BOM and a first #! line, as lua5.4 does, keeping line numbers", function()
    local body = 'return { T = { { "a", "int", min = 0, max = 3 } } }'
    for _, head in ipairs({ "\239\187\191", "#!/usr/bin/env lua\n",
                            "\239\187\191# defs\n" }) do
      local s = assert(bitwire.load(tempdefs(head .. body)))
      assert.same({ a = 2 }, s:decode("T", s:encode("T", { a = 2 })))
    end
    -- an error on line 3 is named at line 3 after a #! line
    local path = tempdefs("#!/usr/bin/env lua\nlocal x = 1\nerror('bad')\n")
    local s, err = bitwire.load(path)
    assert.is_nil(s)
    assert.matches(":3: bad", err, 1, true)
    -- only the first line: a '#' later is Lua's syntax error
    s, err = bitwire.load(tempdefs("return {}\n# no\n"))
    assert.is_nil(s)
    assert.is_string(err)
  end)

  it("opens only regular files, and never blocks on one that is not", function()
    local dir = temppath()
    os.remove(dir)
    sh("mkdir " .. dir)
    local fifo, link = dir .. "/fifo", dir .. "/zero"
    sh("mkfifo " .. fifo)
    sh("ln -s /dev/zero " .. link)
    local cases = {
      { link, "a character device, not a regular file" },
      { fifo, "a FIFO, not a regular file" },
      { dir, "a directory, not a regular file" },
      { dir .. "/missing", "No such file or directory" },
    }
    for _, case in ipairs(cases) do
      local s, err = bitwire.load(case[1])
      assert.is_nil(s)
      assert.equal(case[1] .. ": " .. case[2], err)
    end
    os.remove(fifo)
    os.remove(link)
    os.remove(dir)
  end)

  it("does not open what is not a regular file", function()
    -- opening a device can act (a watchdog starts, a tape rewinds); a
    -- FIFO shows an open: the writer blocked in its own open goes on
    local dir = temppath()
    os.remove(dir)
    sh("mkdir " .. dir)
    local fifo, mark = dir .. "/fifo", dir .. "/opened"
    sh("mkfifo " .. fifo)
    sh("(sh -c 'echo x > " .. fifo .. "' 2>/dev/null; touch " .. mark .. ") &")
    sh("sleep 0.1")  -- the writer waits in its open
    local reg = assert(bitwire.watch(tempdefs(ENTITY:format(100))))
    reg.path = fifo
    for _, call in ipairs { function() return bitwire.load(fifo) end,
                            function() return reg:poll() end,
                            function() return reg:reload() end } do
      local _, err = call()
      assert.equal(fifo .. ": a FIFO, not a regular file", err)
    end
    sh("sleep 0.1")
    local opened = io.open(mark) ~= nil
    -- let the writer go (it never blocks here once it was let go above)
    if not opened then assert.equal("x\n", assert(io.open(fifo)):read("a")) end
    sh("sleep 0.05")
    os.remove(mark)
    os.remove(fifo)
    os.remove(dir)
    assert.is_false(opened, "the FIFO was opened")
  end)

  it("follows a symbolic link to a regular file", function()
    local target = tempdefs(ENTITY:format(100))
    local link = temppath()
    os.remove(link)
    sh("ln -s " .. target .. " " .. link)
    assert.is_not_nil(bitwire.load(link))
  end)
end)

describe("a registry on a hostile file", function()
  after_each(cleanup)

  -- each swaps the watched file for something hostile; poll and reload
  -- must answer false, message and keep serving
  local function swap_link(path, target)
    os.remove(path)
    sh("ln -s " .. target .. " " .. path)
  end
  local hostile = {
    { "a symbolic link to /dev/zero", function(path) swap_link(path, "/dev/zero") end,
      "a character device, not a regular file" },
    { "a FIFO", function(path) os.remove(path); sh("mkfifo " .. path) end, "a FIFO, not a regular file" },
    { "a huge file", function(path) write(path, ("-"):rep(2 * 1024 * 1024)) end,
      "exceeds the size limit of 1048576 bytes" },
    { "a file past the memory limit", function(path) write(path, "local s = ('x'):rep(1 << 26) return {}") end,
      ":1: memory limit of 1024 KB exceeded" },
    { "a file that loops", function(path) write(path, "while true do end") end,
      ":1: instruction budget of 100000 exhausted" },
    { "a file sharing one list among many types", function(path)
        os.remove(path)
        sh("cp " .. DEFS .. "shared_fields.lua " .. path)
      end, "description has more than 100000 tables and fields" },
  }
  for _, case in ipairs(hostile) do
    it("answers false, message for " .. case[1], function()
      local path = tempdefs(ENTITY:format(100))
      local reg = assert(bitwire.watch(path, { memory = 1024, time = 60, budget = 100000 }))
      local old = reg:current()
      case[2](path)
      for _, method in ipairs { "poll", "reload" } do
        local ok, changed, err = pcall(reg[method], reg)
        assert.is_true(ok, changed)
        assert.is_false(changed)
        assert.is_string(err)
        assert.matches(lit(case[3]), err)
        assert.equal(err, reg.last_error)
        assert.equal(old, reg:current())
      end
    end)
  end

  it("answers false, message when the host runs out of memory", function()
    local path = tempdefs(ENTITY:format(100))
    local reg = assert(bitwire.watch(path))
    write(path, ENTITY:format(200))
    local real = core.sandbox
    core.sandbox = function() error("not enough memory") end
    local ok, changed, err = pcall(reg.poll, reg)
    core.sandbox = real
    assert.is_true(ok, changed)
    assert.is_false(changed)
    assert.matches(lit(path) .. ": .*not enough memory", err)
    assert.equal(err, reg.last_error)
    assert.is_true(reg:reload())
  end)

  it("polls again a file a memory error of the host stopped, its stamp unchanged", function()
    -- an edit older than the timestamp tick keeps its stamp: the poll
    -- after a refusal for memory must read the file all the same
    local path = tempdefs(ENTITY:format(100))
    local stamp, sandbox = core.filestamp, core.sandbox
    core.filestamp = function(p) return (stamp(p)), false end
    local reg = assert(bitwire.watch(path))
    write(path, ENTITY:format(200))
    -- short while the file runs, then while its description compiles
    local compile = bitwire.schema
    local short = {
      function() core.sandbox = function() error("not enough memory", 0) end end,
      function() bitwire.schema = function() error("not enough memory", 0) end end,
    }
    for i, shortof in ipairs(short) do
      write(path, ENTITY:format(200 + i))
      shortof()
      local ok, changed, err = pcall(reg.poll, reg)
      core.sandbox, bitwire.schema = sandbox, compile
      local again = { pcall(reg.poll, reg) }
      assert.is_true(ok, changed)
      assert.is_false(changed)
      assert.equal(path .. ": not enough memory", err)
      assert.same({ true, true }, again)
      assert.equal(200 + i, reg:current():description().Entity[2].max)
    end
    core.filestamp = stamp
  end)

  it("polls a return to the current content as no change", function()
    local path = tempdefs(ENTITY:format(100))
    local reg = assert(bitwire.watch(path))
    local current = reg:current()
    write(path, ENTITY:format(100) .. "oops(")
    local changed, err = reg:poll()
    assert.is_false(changed)
    assert.is_string(err)
    write(path, ENTITY:format(100))     -- the edit undone
    assert.same({ false, nil }, { reg:poll() })
    assert.equal(current, reg:current())
    assert.is_nil(reg.last_error)
    -- a good edit and its undoing are both changes
    write(path, ENTITY:format(300))
    assert.is_true(reg:poll())
    write(path, ENTITY:format(100))
    assert.is_true(reg:poll())
    assert.not_equal(current, reg:current())
  end)
end)

describe("an adopted schema's description", function()
  it("carries infinities, NaN (payload and sign) and -0.0 defaults exactly", function()
    local payload = string.unpack("<d", "\1\0\0\0\0\0\248\127")
    local defaults = { math.huge, -math.huge, 0/0, payload, -0.0, 0.1 }
    local fields = {}
    for i, d in ipairs(defaults) do
      fields[i] = { "f" .. i, "float64", default = d }
    end
    local s = bitwire.schema { T = fields }
    local adopted = bitwire.adopt(s:share())
    local ok, desc = pcall(adopted.description, adopted)
    assert.is_true(ok, desc)
    local function bits(d)
      local out = {}
      for i, f in ipairs(d.T) do out[i] = string.pack("<d", f.default) end
      return out
    end
    assert.same(bits(s:description()), bits(desc))
    for i, d in ipairs(defaults) do
      assert.equal(string.pack("<d", d), bits(desc)[i])
    end
  end)
end)
