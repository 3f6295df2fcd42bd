-- bitwire.serializer: one serialize function for write, read and measure.
--
-- serialize.h's Serialize(Stream&) in Lua: the user writes one function
-- fn(s, p); encode runs it with a writing stream over the value p, decode
-- with a reading stream over a fresh table p, measure with a writing stream
-- that only counts. Every primitive has two forms:
--   field form  s:int(p, "x", min, max)  writes p.x, or reads into p.x
--   value form  v = s:int(v, min, max)   writes v, or ignores v and reads
-- and both return the value written or read, so a local (the seeds'
-- at_rest) is as easy as a field. The form is chosen by the first argument:
-- a table means field form, since no primitive value is a table.
--
-- A failed read aborts the whole decode with error(ABORT), a private
-- sentinel caught in decode, which then returns nil, message, code and never
-- a half-filled value, like the seeds' serialize macros returning false.
-- Errors from the user's own code pass through untouched; a write that does
-- not fit raises "path: op: detail (bit N)" from encode's caller.
local core = require "bitwire.core"

local type, error, pcall, setmetatable, getmetatable, tostring =
  type, error, pcall, setmetatable, getmetatable, tostring
local mathtype, format = math.type, string.format

local WM = getmetatable(core.writer(0)).__index   -- Writer methods
local RM = getmetatable(core.reader("")).__index  -- Reader methods

local ABORT = setmetatable({}, {
  __tostring = function () return "bitwire: read failed" end })
local NOKEY = {}  -- "the failing primitive had no field key"

local M = {}

-- {===================== paths and errors =====================

local function keystr (k, first)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") then
    return first and k or "." .. k
  elseif mathtype(k) == "integer" then
    return "[" .. k .. "]"
  elseif type(k) == "string" then
    return format("[%q]", k)
  end
  return "[" .. tostring(k) .. "]"
end

-- "entities[3].health: " for the current path plus 'key', or ""
local function prefix (s, key)
  local buf, path = {}, s._path
  for i = 1, s._depth do buf[#buf + 1] = keystr(path[i], i == 1) end
  if key ~= nil and key ~= NOKEY then buf[#buf + 1] = keystr(key, #buf == 0) end
  if #buf == 0 then return "" end
  return table.concat(buf) .. ": "
end

-- a failed read: remember where and why, unwind to decode
local function abort (s, key, msg, code)
  if not s._msg then  -- keep the first, should the function catch ABORT
    s._msg, s._code = prefix(s, key) .. msg, code
  end
  error(ABORT, 0)
end

-- a programmer error at field 'key' of the current path
local function fieldfail (s, key, msg)
  s._at = key
  error(msg, 0)
end

-- the message of an error raised inside a primitive: drop the position
-- (it names this file) and the argument number (it counts the stream
-- method's parameters, not the user's), and name the field instead
local function fieldmessage (s, err)
  err = tostring(err):gsub("^[^\n]-:%d+: ", "", 1)
  err = err:gsub("^bad argument #%d+ to '[^']*' %((.*)%)$",
                 (s._op or "?") .. ": bad argument (%1)")
  return prefix(s, s._at) .. err
end

local function push (s, key)
  local d = s._depth + 1
  s._depth, s._path[d] = d, key
end

local function pop (s)
  s._depth = s._depth - 1
end

local function fnof (fn)
  if getmetatable(fn) == M.Serializer then return fn._fn end
  return fn
end

-- }============================================================


-- {===================== writing (and measuring) stream =====================

local Write = {}
Write.__index = Write

-- a primitive whose value is its first argument
local function writeprim (name)
  local f = WM[name]
  return function (s, a, b, ...)
    local w = s._w
    if type(a) == "table" then
      local v = a[b]
      s._at, s._op = b, name
      f(w, v, ...)
      s._at = nil
      return v
    end
    s._at, s._op = NOKEY, name
    f(w, a, b, ...)
    s._at = nil
    return a
  end
end

for _, name in ipairs { "bits", "bool", "int", "float", "double",
                        "compressed_float", "string" } do
  Write[name] = writeprim(name)
end

-- s:bytes(p, key, len) / s:bytes(v, len): exactly 'len' bytes
local wbytes = WM.bytes
function Write:bytes (a, b, len)
  local key, v = NOKEY, a
  if type(a) == "table" then key, v = b, a[b] else len = b end
  -- a number goes out as its string (the writer's coercion): count that
  local n = type(v) == "string" and #v or type(v) == "number" and #tostring(v)
  if n and len ~= nil and n ~= len then
    fieldfail(self, key, format("bytes: %d bytes, expected %s (bit %d)",
                                n, tostring(len), self._w:bits_written()))
  end
  self._at, self._op = key, "bytes"
  wbytes(self._w, v)
  self._at = nil
  return v
end

-- s:int_relative(p, key, prev) / s:int_relative(prev, cur)
local wintrel = WM.int_relative
function Write:int_relative (a, b, c)
  local key, prev, cur = NOKEY, a, b
  if type(a) == "table" then key, prev, cur = b, c, a[b] end
  self._at, self._op = key, "int_relative"
  wintrel(self._w, prev, cur)
  self._at = nil
  return cur
end

local walign, wcheck = WM.align, WM.check
function Write:align ()
  self._at, self._op = NOKEY, "align"
  walign(self._w)
  self._at = nil
end

function Write:check (magic)
  self._at, self._op = NOKEY, "check"
  wcheck(self._w, magic)
  self._at = nil
end

function Write:bits_processed ()
  return self._w:bits_written()
end

-- s:table(p, key): p[key], which must be a table
function Write:table (p, key)
  local t = p[key]
  if type(t) ~= "table" then
    fieldfail(self, key, "table expected, got " .. type(t))
  end
  return t
end

-- s:object(p, key, fn): fn(s, p[key]) with 'key' on the error path
function Write:object (p, key, fn)
  local t = self:table(p, key)
  push(self, key)
  fnof(fn)(self, t)
  pop(self)
  return t
end

-- s:array(p, key, max, fn): int(#t, 0, max), then fn(s, t, i) for each i
function Write:array (p, key, max, fn)
  local t = self:table(p, key)
  fn = fnof(fn)
  push(self, key)
  local n = self:int(self.writing and #t or nil, 0, max)
  for i = 1, n do fn(self, t, i) end
  pop(self)
  return t
end

-- }============================================================


-- {===================== reading stream =====================

local Read = {}
Read.__index = Read

local function readprim (name)
  local f = RM[name]
  return function (s, a, b, ...)
    local r = s._r
    local v, msg, code
    if type(a) == "table" then
      s._at, s._op = b, name
      v, msg, code = f(r, ...)
      s._at = nil
      if v == nil then abort(s, b, msg, code) end
      a[b] = v
      return v
    end
    s._at, s._op = NOKEY, name
    v, msg, code = f(r, b, ...)
    s._at = nil
    if v == nil then abort(s, NOKEY, msg, code) end
    return v
  end
end

for _, name in ipairs { "bits", "bool", "int", "float", "double",
                        "compressed_float", "string", "bytes" } do
  Read[name] = readprim(name)
end

local rintrel = RM.int_relative
function Read:int_relative (a, b, c)
  local key, prev = NOKEY, a
  if type(a) == "table" then key, prev = b, c end
  self._at, self._op = key, "int_relative"
  local v, msg, code = rintrel(self._r, prev)
  self._at = nil
  if v == nil then abort(self, key, msg, code) end
  if key ~= NOKEY then a[key] = v end
  return v
end

local ralign, rcheck = RM.align, RM.check
function Read:align ()
  local ok, msg, code = ralign(self._r)
  if not ok then abort(self, NOKEY, msg, code) end
end

function Read:check (magic)
  self._at, self._op = NOKEY, "check"
  local ok, msg, code = rcheck(self._r, magic)
  self._at = nil
  if not ok then abort(self, NOKEY, msg, code) end
end

function Read:bits_processed ()
  return self._r:bits_read()
end

function Read:table (p, key)
  local t = {}
  p[key] = t
  return t
end

-- the same walk as writing: self:table makes the fresh table
Read.object = Write.object
Read.array = Write.array

-- }============================================================


-- {===================== serializer objects =====================

local Serializer = {}
Serializer.__index = Serializer
M.Serializer = Serializer

local function newstream (mt, reading, measuring)
  return setmetatable({ reading = reading, writing = not reading,
                        measuring = measuring, _path = {}, _depth = 0 }, mt)
end

-- run the user's function over a writing stream; returns the writer
local function write (self, value, measuring, level)
  if type(value) ~= "table" then
    error(format("bad argument #1 to '%s' (table expected, got %s)",
                 measuring and "measure" or "encode", type(value)), level)
  end
  local s = newstream(Write, false, measuring)
  s._w = core.writer(self._maxbytes)
  local ok, err = pcall(self._fn, s, value)
  if not ok then
    if s._at ~= nil then error(fieldmessage(s, err), level) end
    error(err, 0)  -- the user's own error, untouched
  end
  return s._w
end

-- encode(value) -> bytes; raises if a value does not fit its field
function Serializer:encode (value)
  return write(self, value, false, 3):tostring()
end

-- measure(value) -> bits that encode(value) writes
function Serializer:measure (value)
  return write(self, value, true, 3):bits_written()
end

-- decode(bytes) -> value, or nil, message, code on bad bytes
function Serializer:decode (bytes)
  if type(bytes) ~= "string" then
    error(format("bad argument #1 to 'decode' (string expected, got %s)",
                 type(bytes)), 2)
  end
  local s = newstream(Read, true, false)
  s._r = core.reader(bytes)
  local p = {}
  local ok, err = pcall(self._fn, s, p)
  if s._msg then return nil, s._msg, s._code end  -- even if fn caught ABORT
  if not ok then
    if s._at ~= nil then error(fieldmessage(s, err), 2) end
    error(err, 0)
  end
  return p
end

-- bitwire.serializer(fn [, maxbytes]): fn(s, p) serializes p on stream s;
-- 'maxbytes' limits encode's output (default: bitwire.writer()'s).
function M.new (fn, maxbytes)
  if type(fn) ~= "function" then
    error(format("bad argument #1 to 'serializer' (function expected, got %s)",
                 type(fn)), 2)
  end
  if maxbytes ~= nil and (mathtype(maxbytes) ~= "integer" or maxbytes < 0) then
    error("bad argument #2 to 'serializer' (size limit must be an integer >= 0)",
          2)
  end
  return setmetatable({ _fn = fn, _maxbytes = maxbytes }, Serializer)
end

-- }============================================================

return M
