-- Definitions files and hot reload: bitwire.load runs a definitions file in
-- a sandbox, bitwire.watch keeps a registry of the schemas it produced.
--
-- A definitions file is Lua source that returns a description table. It is
-- run as untrusted code: text only (binary chunks are refused), in a fresh
-- environment, on its own coroutine under an instruction budget and a
-- memory guard, so a typo that loops forever or a file that builds a giant
-- table cannot hang or sink the server that reloads it. The environment:
--
--   pairs ipairs next select type tostring tonumber error assert pcall
--   math     all but random and randomseed (they touch the host's generator)
--   string   byte char format len lower upper rep reverse sub
--   table    concat insert move remove sort unpack
--   utf8     all
--
-- Library tables are fresh copies, so the file cannot change the host's.
-- Left out: io, os, require, load, dofile, debug, coroutine, print, _G,
-- setmetatable, getmetatable and raw*, string.dump, string.pack/unpack
-- (a format can ask for gigabytes of padding), and the pattern functions
-- (find, match, gmatch, gsub), whose backtracking runs in C where no hook
-- can stop it. Without setmetatable the result is made of plain tables, so
-- reading it afterwards runs no code of the file.
--
-- The budget (opts.budget, default 1e6) counts VM instructions with a count
-- hook of 1, so the memory check also runs after every instruction and a
-- file doubling a string cannot get far past the limit. Library calls whose
-- work is a loop in C (string.rep, table.concat/insert/remove/move/sort)
-- are charged to the budget by their size before they run. The memory
-- limit (opts.memory, KB, default 64 MB) bounds how much the Lua state may
-- grow while the file runs; a full collection is made before it is declared
-- exceeded, so garbage does not count. One operation can overshoot it by
-- about its own size (a concatenation at most doubles).
local core = require "bitwire.core"

local M = {}

local DEFAULT_BUDGET = 1000000        -- VM instructions
local DEFAULT_MEMORY = 64 * 1024       -- KB the state may grow by while loading
local DEFAULT_KEEP = 4

local sethook, getinfo = debug and debug.sethook, debug and debug.getinfo
local tointeger = math.tointeger

local function pick(lib, names)
  local t = {}
  for name in names:gmatch("%S+") do t[name] = lib[name] end
  return t
end

local function stop(state, msg)
  state.stopped = msg
  error(msg, 0)
end

-- Charge 'n' units of C work to the budget of 'state' (compared before it
-- is added: a huge count must not wrap around).
local function charge(state, n)
  if n > state.budget - state.used then
    stop(state, "instruction budget of " .. state.budget .. " exhausted")
  end
  state.used = state.used + n
end

-- n as an integer count when it is a number, else nil (the real function
-- then raises its own argument error)
local function count(n)
  return type(n) == "number" and tointeger(n) or nil
end

-- Builds the file's environment. 'state' is shared with the hook: once the
-- budget or the memory guard tripped, pcall re-raises, so a file cannot
-- swallow the stop in a pcall loop.
local function sandbox(state)
  local limit = state.memory * 1024
  local str = pick(string, "byte char format len lower upper reverse sub")
  local rep, concat = string.rep, table.concat
  local insert, remove, move, sort = table.insert, table.remove, table.move, table.sort
  function str.rep(s, n, sep)
    local k = count(n)
    if type(s) == "string" and k and k > 0 then
      local size = (#s + (type(sep) == "string" and #sep or 0)) * (k + 0.0)
      if size > limit then
        error(string.format("string.rep: result of %.0f bytes exceeds the "
          .. "memory limit", size), 2)
      end
      charge(state, k)
    end
    return rep(s, n, sep)
  end
  local tab = pick(table, "unpack")
  function tab.concat(t, sep, i, j)
    if type(t) == "table" then
      local first, last = count(i) or 1, count(j) or #t
      charge(state, math.max(0, last + 0.0 - first + 1))
      local size, slen = 0, type(sep) == "string" and #sep or 0
      for k = first, last do
        local v = t[k]
        size = size + slen + (type(v) == "string" and #v or 24)
        if size > limit then
          error("table.concat: result exceeds the memory limit", 2)
        end
      end
    end
    return concat(t, sep, i, j)
  end
  -- insert and remove shift the elements after 'pos', in C
  local function shift(t, pos)
    if type(t) == "table" then
      local n, p = #t, count(pos)
      charge(state, p and math.max(1, n + 0.0 - p + 1) or 1)
    end
  end
  function tab.insert(t, ...)
    if select("#", ...) >= 2 then shift(t, (...)) end
    return insert(t, ...)
  end
  function tab.remove(t, ...)
    if select("#", ...) >= 1 then shift(t, (...)) end
    return remove(t, ...)
  end
  function tab.move(a1, f, e, t, a2)
    local first, last = count(f), count(e)
    if first and last and last >= first then
      local n = last + 0.0 - first + 1     -- as a float: cannot wrap
      charge(state, n)
      if n * 16 > limit then
        error("table.move: too many elements for the memory limit", 2)
      end
    end
    return move(a1, f, e, t, a2)
  end
  function tab.sort(t, cmp)
    if type(t) == "table" then
      local n = #t
      charge(state, n * math.ceil(math.log(n + 1, 2)) + 0.0)
    end
    return sort(t, cmp)
  end
  local mth = pick(math, "abs ceil cos deg exp floor fmod huge log max "
    .. "maxinteger min mininteger modf pi rad sin sqrt tan tointeger type "
    .. "ult acos asin atan")
  local u8 = pick(utf8, "char charpattern codes codepoint len offset")
  local function rethrow(ok, ...)
    if state.stopped then error(state.stopped, 0) end
    return ok, ...
  end
  return {
    math = mth, string = str, table = tab, utf8 = u8,
    pairs = pairs, ipairs = ipairs, next = next, select = select,
    type = type, tostring = tostring, tonumber = tonumber,
    error = error, assert = assert,
    pcall = function(f, ...) return rethrow(pcall(f, ...)) end,
  }
end

-- "path:line: " for the innermost frame of the file on the dead coroutine.
local function where(co, path)
  local src = "@" .. path
  for level = 0, 200 do
    local info = getinfo(co, level, "Sl")
    if not info then break end
    if info.source == src and info.currentline > 0 then
      return path .. ":" .. info.currentline .. ": "
    end
  end
  return path .. ": "
end

-- opts[key] as a positive integer; raises at the caller's caller's caller
local function optint(fname, opts, key, default)
  local v = opts[key]
  if v == nil then return default end
  v = type(v) == "number" and math.tointeger(v) or nil
  if not v or v < 1 then
    error("bitwire." .. fname .. ": '" .. key .. "' must be a positive integer", 4)
  end
  return v
end

-- Runs 'source' (the text of 'path') in the sandbox; returns the
-- description table | nil, message.
local function run(source, path, opts)
  if not sethook then
    error("bitwire.load: needs the debug library for its instruction budget", 0)
  end
  local state = { budget = opts.budget, memory = opts.memory, used = 0 }
  local env = sandbox(state)
  local chunk, err = load(source, "@" .. path, "t", env)
  if not chunk then
    if err:find("attempt to load a binary chunk", 1, true) then
      return nil, path .. ": binary chunks are not accepted"
    end
    return nil, err
  end
  local co = coroutine.create(chunk)
  local base = collectgarbage("count")
  local budget, memory = state.budget, state.memory
  local nextgc = memory       -- KB of growth that triggers a full collection
  -- A method call on a string, ("x"):rep(n), goes through the string
  -- metatable: it points at the sandbox's string table while the file
  -- runs. The collector is stopped meanwhile, so no finalizer of the host
  -- runs under the hook or sees that table; the hook collects instead,
  -- with the host's string table back in place.
  local smt = getmetatable("")
  local sindex = smt and smt.__index
  sethook(co, function()
    if state.stopped then error(state.stopped, 0) end
    local used = state.used + 1
    state.used = used
    if used > budget then
      stop(state, "instruction budget of " .. budget .. " exhausted")
    end
    if collectgarbage("count") - base > nextgc then
      if smt then smt.__index = sindex end
      collectgarbage("collect")       -- garbage is not growth: look again
      if smt then smt.__index = env.string end
      local live = collectgarbage("count") - base
      if live > memory then
        stop(state, "memory limit of " .. memory .. " KB exceeded")
      end
      nextgc = math.max(memory, live + memory / 2)
    end
  end, "", 1)
  local gcrunning = collectgarbage("isrunning")
  collectgarbage("stop")
  if smt then smt.__index = env.string end
  local ok, result = coroutine.resume(co)
  if smt then smt.__index = sindex end
  if gcrunning then collectgarbage("restart") end
  if not ok then
    local msg
    if state.stopped then
      msg = state.stopped
    elseif type(result) == "string" then
      msg = result
    else
      msg = "error object is a " .. type(result) .. " value"
    end
    if msg:sub(1, #path + 1) ~= path .. ":" then msg = where(co, path) .. msg end
    return nil, msg
  end
  if coroutine.status(co) ~= "dead" then
    return nil, path .. ": definitions file did not run to its end"
  end
  if type(result) ~= "table" then
    return nil, path .. ": definitions file must return a table, got " .. type(result)
  end
  return result
end

local function compile(desc, path)
  local ok, s = pcall(require("bitwire").schema, desc)
  if not ok then
    return nil, path .. ": " .. (type(s) == "string" and s or tostring(s))
  end
  return s
end

local function readfile(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local source = f:read("a")
  f:close()
  if not source then return nil, path .. ": cannot read" end
  return source
end

-- Checks the arguments of bitwire.load/watch; returns the options with
-- their defaults filled in.
local function checkargs(fname, path, opts)
  if type(path) ~= "string" then
    error("bitwire." .. fname .. ": path must be a string, got " .. type(path), 3)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error("bitwire." .. fname .. ": options must be a table", 3)
  end
  opts = opts or {}
  return {
    budget = optint(fname, opts, "budget", DEFAULT_BUDGET),
    memory = optint(fname, opts, "memory", DEFAULT_MEMORY),
    keep = optint(fname, opts, "keep", DEFAULT_KEEP),
  }
end

-- Compile the definitions 'source' read from 'path' (used in messages).
local function fromsource(source, path, opts)
  local desc, err = run(source, path, opts)
  if not desc then return nil, err end
  return compile(desc, path)
end

-- bitwire.load(path [, {budget = instructions, memory = KB}])
--   -> schema | nil, message
-- Never raises on a bad file: syntax and runtime errors give "path:line:
-- ...", an invalid description gives "path: bitwire.schema: Type.field: ...".
function M.load(path, opts)
  opts = checkargs("load", path, opts)
  local source, err = readfile(path)
  if not source then return nil, err end
  return fromsource(source, path, opts)
end


-- {===================== registry =====================

local Registry = {}
Registry.__index = Registry
Registry.__name = "bitwire.Registry"

-- the 32-bit frame tag naming a schema (the core's bw_frametag)
local function tagof(s)
  return s:tag()
end
M.tag = tagof

-- Make 's' current and keep it; drop the oldest beyond 'keep', and any
-- older schema with the same fingerprint or tag.
local function install(self, s)
  local fp, tag = s:fingerprint(), tagof(s)
  for i = #self.kept, 1, -1 do
    local k = self.kept[i]
    if k:fingerprint() == fp or tagof(k) == tag then table.remove(self.kept, i) end
  end
  table.insert(self.kept, 1, s)
  while #self.kept > self.keep do table.remove(self.kept) end
  self.schema, self.tag = s, tag
  self.bytag = {}                -- tag -> schema, for the decoding path
  for _, k in ipairs(self.kept) do self.bytag[tagof(k)] = k end
end

-- bitwire.watch(path [, {keep = 4, budget = n, memory = KB}])
--   -> registry | nil, message (the file must load the first time)
function M.watch(path, opts)
  opts = checkargs("watch", path, opts)
  local source, err = readfile(path)
  if not source then return nil, err end
  local s
  s, err = fromsource(source, path, opts)
  if not s then return nil, err end
  local self = setmetatable({
    path = path, opts = opts, keep = opts.keep, kept = {},
    seen = source,     -- the content last looked at, loaded or refused
    seen_err = nil,    -- the read error last reported
    last_error = nil,  -- why the last changed content was refused
  }, Registry)
  install(self, s)
  return self
end

-- reg:current() -> the live schema
function Registry:current()
  return self.schema
end

-- reg:get(fingerprint) -> a kept schema | nil
function Registry:get(fingerprint)
  for _, s in ipairs(self.kept) do
    if s:fingerprint() == fingerprint then return s end
  end
  return nil
end

-- reg:get_tag(tag) -> the kept schema framed with this 32-bit tag | nil
function Registry:get_tag(tag)
  return self.bytag[tag]
end

-- reg:schemas() -> list of the kept schemas, newest (current) first
function Registry:schemas()
  return table.move(self.kept, 1, #self.kept, 1, {})
end

local function try(self, source)
  local s, err = fromsource(source, self.path, self.opts)
  if not s then
    self.last_error = err
    return false, err
  end
  self.last_error = nil
  install(self, s)
  return true
end

-- reg:poll() checks the file's modification time (nanoseconds) and size,
-- and only when they moved reads it and compares its content with what it
-- last looked at, so a touch without an edit swaps nothing.
--   true            changed, loaded, compiled and swapped in
--   false, nil      unchanged since the last poll (a refused file that is
--                   still the same is not reported again)
--   false, message  changed (or unreadable) and refused; the old schema
--                   keeps serving. reg.last_error keeps the message.
function Registry:poll()
  local stamp = core.filestamp(self.path)
  if stamp and stamp == self.stamp then return false, nil end
  self.stamp = stamp
  local source, err = readfile(self.path)
  if not source then
    if self.seen_err == err then return false, nil end
    self.seen_err, self.last_error = err, err
    return false, err
  end
  self.seen_err = nil
  if source == self.seen then return false, nil end
  self.seen = source
  return try(self, source)
end

-- reg:reload() -> true | false, message: like poll, even when unchanged.
function Registry:reload()
  self.stamp = core.filestamp(self.path)
  local source, err = readfile(self.path)
  if not source then
    self.last_error = err
    return false, err
  end
  self.seen, self.seen_err = source, nil
  return try(self, source)
end

function Registry:__tostring()
  return string.format("bitwire.Registry (%s, %s, %d kept)", self.path,
    self.schema:fingerprint(), #self.kept)
end

-- }=====================================================


-- reg:protocol(opts) is bitwire.protocol(reg, opts) (bitwire/protocol.lua).
function Registry:protocol(opts)
  return require("bitwire.protocol").new(self, opts)
end

M.Registry = Registry

-- }=====================================================

return M
