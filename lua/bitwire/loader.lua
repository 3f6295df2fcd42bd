-- Definitions files and hot reload: bitwire.load runs a definitions file in
-- a sandbox, bitwire.watch keeps a registry of the schemas it produced.
--
-- A definitions file is Lua source that returns a description table. It is
-- untrusted code, so core.sandbox (bindings/lbw_sandbox.c) runs it in a
-- lua_State of its own and hands back a plain copy of what it returned;
-- core.readdefs reads it. The limits, each exact (see SECURITY.md):
--
--   max_size   bytes of the file (default 1 MiB); only a regular file is
--              opened, without blocking
--   memory     KB the file's lua_State may hold, libraries included
--              (default 64 MB): its allocator refuses the byte past it
--   budget     VM instructions (default 1e6), counted one by one
--   time       CPU seconds (default 0.25)
--   max_nodes  tables and fields copied out of the result (default 1e5);
--              a table reached twice counts twice
--
-- Its environment holds only these (the lists in lbw_sandbox.c; text
-- chunks only, binary ones are refused):
--
--   pairs ipairs next select type tostring tonumber error assert pcall
--   math     all but random and randomseed
--   string   byte char format len lower upper rep reverse sub
--   table    concat insert move remove sort unpack
--   utf8     all
--
-- Left out: io, os, require, load, dofile, debug, coroutine, print, _G,
-- setmetatable, getmetatable and raw*, collectgarbage, string.dump,
-- string.pack/unpack, and the pattern functions (find, match, gmatch,
-- gsub), whose backtracking runs in C where no hook can stop it.
local core = require "bitwire.core"
local checkoptions = require("bitwire.options").check

local M = {}

local DEFAULTS = {
  budget = 1000000,        -- VM instructions
  memory = 64 * 1024,      -- KB for the file's whole lua_State
  time = 0.25,             -- CPU seconds
  max_size = 1024 * 1024,  -- bytes of the file
  max_nodes = 100000,      -- tables and fields of the result
  keep = 4,                -- schemas a registry keeps
}
M.DEFAULTS = DEFAULTS
-- bitwire.load takes them all but keep, which only a registry has; both
-- take strict, the schema option, for every schema the file compiles to
local LOADS, WATCHES = { strict = true }, { strict = true }
for k, v in pairs(DEFAULTS) do
  WATCHES[k] = v
  if k ~= "keep" then LOADS[k] = v end
end

-- Lua's error object for a memory error
local NOMEMORY = "not enough memory"

local function compile(desc, path, opts)
  local ok, s = pcall(require("bitwire").schema, desc, opts.schema)
  if not ok then
    -- the host ran short, which says nothing of the file: protect sees it
    if s == NOMEMORY then error(s, 0) end
    return nil, path .. ": " .. (type(s) == "string" and s or tostring(s))
  end
  return s
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
  checkoptions(opts, fname == "watch" and WATCHES or LOADS, "bitwire." .. fname, "option")
  local out = {}
  if opts.strict ~= nil then
    if type(opts.strict) ~= "boolean" then
      error("bitwire." .. fname .. ": 'strict' must be a boolean", 3)
    end
    out.schema = { strict = opts.strict }
  end
  for key, default in pairs(DEFAULTS) do
    local v = opts[key]
    if v == nil then
      v = default
    elseif key == "time" then
      if type(v) ~= "number" or not (v > 0 and v < math.huge) then
        error("bitwire." .. fname .. ": 'time' must be a positive number of seconds", 3)
      end
    else
      v = type(v) == "number" and math.tointeger(v) or nil
      if not v or v < 1 then
        error("bitwire." .. fname .. ": '" .. key .. "' must be a positive integer", 3)
      end
    end
    out[key] = v
  end
  return out
end

-- The schema the definitions 'source' read from 'path' describes.
local function fromsource(source, path, opts)
  local desc, err = core.sandbox(source, path, opts)
  if not desc then return nil, err end
  return compile(desc, path, opts)
end

-- f(...) -> its two results | nil, message, memory: a memory error of the
-- host while copying or compiling is a refusal too, never a raise ('memory'
-- says it was one: Lua's error object for it is exactly this string).
local function protect(path, f, ...)
  local ok, a, b = pcall(f, ...)
  if ok then return a, b end
  return nil, path .. ": " .. (type(a) == "string" and a or tostring(a)),
         a == NOMEMORY
end

local function loaddefs(path, opts)
  local source, err = core.readdefs(path, opts.max_size)
  if not source then return nil, err end
  local s
  s, err = fromsource(source, path, opts)
  if not s then return nil, err end
  return s, source
end

-- bitwire.load(path [, {budget =, memory =, time =, max_size =, max_nodes =,
--                       strict =}])
--   -> schema | nil, message
-- Never raises on a bad file: syntax and runtime errors give "path:line:
-- ...", an invalid description gives "path: bitwire.schema: Type.field: ...".
function M.load(path, opts)
  opts = checkargs("load", path, opts)
  local s, err = protect(path, loaddefs, path, opts)
  if not s then return nil, err end
  return s
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

-- Make 's' (made from 'source') current and keep it; drop the oldest
-- beyond 'keep', and any older schema with the same fingerprint or tag.
-- The new lists are made first and then swapped in by assignments to keys
-- the registry holds, which allocate nothing: a memory error leaves the
-- registry as it was, never half the new schema's.
local function install(self, s, source)
  local fp, tag = s:fingerprint(), tagof(s)
  local kept, bytag = { s }, {}
  for _, k in ipairs(self.kept) do
    if #kept >= self.keep then break end
    if k:fingerprint() ~= fp and tagof(k) ~= tag then kept[#kept + 1] = k end
  end
  -- tag -> schema, for the decoding path; internal: users call reg:get_tag
  for _, k in ipairs(kept) do bytag[tagof(k)] = k end
  self.kept, self.bytag, self.schema, self.tag = kept, bytag, s, tag
  self.source = source
  self.last_error = nil
end

-- bitwire.watch(path [, {keep = 4, and the options of bitwire.load}])
--   -> registry | nil, message (the file must load the first time)
function M.watch(path, opts)
  opts = checkargs("watch", path, opts)
  local s, source = protect(path, loaddefs, path, opts)
  if not s then return nil, source end
  local self = setmetatable({
    path = path, opts = opts, keep = opts.keep,
    kept = {},         -- newest first; internal: reg:schemas() gives a copy
    seen = source,     -- the content last looked at, loaded or refused
    source = source,   -- the content the current schema was made from
    seen_err = nil,    -- the read error last reported
    last_error = nil,  -- why the last changed content was refused
  }, Registry)
  install(self, s, source)
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

-- The content last read was not judged (the host ran short): the next
-- poll reads and tries it again, whatever its stamp.
local function unjudged(self)
  self.seen, self.stamp = nil, nil
end

local function try(self, source)
  local s, err, memory = protect(self.path, fromsource, source, self.path, self.opts)
  if not s then
    if memory then unjudged(self) end
    self.last_error = err
    return false, err
  end
  install(self, s, source)
  return true
end

-- The file's content | nil, message; 'stamp' (taken before the read, so
-- an edit during it moves the stamp) is kept only when the read succeeds:
-- a read can fail with the stamp unchanged (EMFILE, EACCES), and the next
-- poll must read again rather than wait for an edit. Nor is a 'fresh' one
-- kept: a write later in the same timestamp tick would leave it as it is.
local function read(self, stamp, fresh)
  local source, err = core.readdefs(self.path, self.opts.max_size)
  self.stamp = source and not fresh and stamp or nil
  return source, err
end

-- reg:poll() checks the file's stamp (modification and change times, size,
-- inode: core.filestamp), and only when it moved (or none was kept: read)
-- reads it and compares its content with what it last looked at, so a
-- touch without an edit swaps nothing.
--   true            changed, loaded, compiled and swapped in
--   false, nil      unchanged since the last poll (a refused file that is
--                   still the same is not reported again), or back to the
--                   content the current schema was made from
--   false, message  changed (or unreadable) and refused; the old schema
--                   keeps serving. reg.last_error keeps the message.
-- Neither poll nor reload raises: a memory error is a refusal too.
local function poll(self)
  local stamp, fresh = core.filestamp(self.path)
  if stamp and stamp == self.stamp then return false, nil end
  local source, err = read(self, stamp, fresh)
  if not source then
    if self.seen_err == err then return false, nil end
    self.seen_err, self.last_error = err, err
    return false, err
  end
  if self.seen_err then  -- readable again: judge the content afresh, so
    self.seen_err, self.seen = nil, nil  -- last_error no longer names the read
  end
  if source == self.seen then return false, nil end
  self.seen = source
  if source == self.source then   -- an edit undone: the schema serves on
    self.last_error = nil
    return false, nil
  end
  return try(self, source)
end

-- reg:reload() -> true | false, message: like poll, even when unchanged.
local function reload(self)
  local source, err = read(self, core.filestamp(self.path))
  if not source then
    self.last_error = err
    return false, err
  end
  self.seen, self.seen_err = source, nil
  return try(self, source)
end

-- "path: why" for the error 'e' a poll or reload raised
local function raised(path, e)
  return path .. ": " .. (type(e) == "string" and e or tostring(e))
end

local function guard(f, name)
  return function(self)
    -- one from a hook or a finalizer during another would install under
    -- it, which then installs its older file and keeps the newer's stamp
    if self.busy then
      return false, self.path .. ": reg:" .. name .. " called during another poll or reload"
    end
    self.busy = true
    local ok, changed, err = pcall(f, self)
    self.busy = nil
    if ok then return changed, err end
    -- a raise is the host's (out of memory, say): nothing was judged, and
    -- the message itself may find no memory: then it is Lua's own
    unjudged(self)
    ok, err = pcall(raised, self.path, changed)
    if not ok then err = changed end
    pcall(rawset, self, "last_error", err)
    return false, err
  end
end
Registry.poll = guard(poll, "poll")
Registry.reload = guard(reload, "reload")

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
