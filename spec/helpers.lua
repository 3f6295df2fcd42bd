-- Shared helpers of the busted specs: hex codecs, the serialize.h sample
-- vectors, and the vectors' ops applied through the Lua stream API.
local M = {}

-- "\1\255" -> "01ff"
-- A deep copy of 't': tables no value shares with it.
function M.copy (t)
  if type(t) ~= "table" then return t end
  local c = {}
  for k, x in pairs(t) do c[k] = M.copy(x) end
  return c
end

function M.tohex (s)
  return (s:gsub(".", function (c) return string.format("%02x", c:byte()) end))
end

-- "01ff" -> "\1\255"
function M.fromhex (h)
  assert(#h % 2 == 0 and not h:find("%X"), "bad hex string")
  return (h:gsub("%x%x", function (x) return string.char(tonumber(x, 16)) end))
end

-- the directory of this file, so specs run from any working directory
local here = (debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./")

-- the cases of spec/fixtures/serialize_sample.lua (from serialize.h 1.11)
function M.samples ()
  return dofile(here .. "fixtures/serialize_sample.lua")
end

-- bit width of serialize.h's uintN ops
local UINT = { uint8 = 8, uint16 = 16, uint32 = 32, uint64 = 64 }
M.UINT = UINT

-- Apply a sample op to writer 'w' (the value the op holds).
function M.write_op (w, op)
  local k = op.op
  if k == "bits" then return w:bits(op.value, op.bits)
  elseif UINT[k] then return w:bits(op.value, UINT[k])
  elseif k == "bool" then return w:bool(op.value)
  elseif k == "int" or k == "int64" then return w:int(op.value, op.min, op.max)
  elseif k == "float" then return w:float(op.value)
  elseif k == "double" then return w:double(op.value)
  elseif k == "compressed_float" then
    return w:compressed_float(op.value, op.min, op.max, op.res)
  elseif k == "align" then return w:align()
  elseif k == "bytes" then return w:bytes(op.data)
  elseif k == "string" then return w:string(op.value, op.buffer_size - 1)
  elseif k == "int_relative" then return w:int_relative(op.previous, op.value)
  end
  error("unknown op " .. tostring(k))
end

-- Read a sample op from reader 'r': value, or nil, message, code.
function M.read_op (r, op)
  local k = op.op
  if k == "bits" then return r:bits(op.bits)
  elseif UINT[k] then return r:bits(UINT[k])
  elseif k == "bool" then return r:bool()
  elseif k == "int" or k == "int64" then return r:int(op.min, op.max)
  elseif k == "float" then return r:float()
  elseif k == "double" then return r:double()
  elseif k == "compressed_float" then
    return r:compressed_float(op.min, op.max, op.res)
  elseif k == "align" then return r:align()
  elseif k == "bytes" then return r:bytes(op.len)
  elseif k == "string" then return r:string(op.buffer_size - 1)
  elseif k == "int_relative" then return r:int_relative(op.previous)
  end
  error("unknown op " .. tostring(k))
end

-- The value a read of 'op' must give back (nil: the op has no value).
function M.expected (op)
  if op.op == "compressed_float" then return op.decoded end
  if op.op == "bytes" then return op.data end
  if op.op == "align" then return true end
  return op.value
end

-- float32 bit pattern of a Lua number, as an integer
function M.f32raw (x)
  return (string.unpack("<I4", string.pack("<f", x)))
end

-- float64 bit pattern of a Lua number, as an integer
function M.f64raw (x)
  return (string.unpack("<i8", string.pack("<d", x)))
end

-- global names, to check that require adds none
function M.globals ()
  local t = {}
  for k in pairs(_G) do t[k] = true end
  return t
end

-- the message of the error 'fn' raises (nil if it does not raise)
function M.errorof (fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then return nil end
  return tostring(err)
end

-- asserts that 'haystack' contains 'needle' literally
function M.contains (needle, haystack)
  assert(type(haystack) == "string",
    "expected an error containing '" .. needle .. "', got " .. tostring(haystack))
  assert(haystack:find(needle, 1, true),
    "expected '" .. needle .. "' in '" .. haystack .. "'")
end

-- the failure codes decode may return (baseline: a delta's)
M.KNOWN_CODES = { truncated = true, range = true, align = true,
  check = true, utf8 = true, tag = true, schema = true, crc = true,
  baseline = true }

-- asserts decode's failure shape: nil, "... (bit N)", code
function M.fails (code, needle, v, err, c)
  local luassert = require "luassert"
  luassert.is_nil(v)
  luassert.is_string(err)
  luassert.matches("%(bit %d+%)$", err)
  luassert.equal(code, c)
  if needle then M.contains(needle, err) end
end

-- the Entity/Snapshot example of DESIGN.md
function M.snapshot_schema ()
  local function coord (n)
    return { n, "float", min = -512, max = 512, res = 0.01 }
  end
  return require("bitwire").schema {
    Vec3 = { coord "x", coord "y", coord "z" },
    Entity = {
      { "id", "int", min = 0, max = 4095 },
      { "kind", "enum", values = { "player", "grunt", "weapon" } },
      { "pos", "Vec3" },
      { "health", "int", min = 0, max = 100 },
      { "at_rest", "bool" },
      { "name", "string", max = 16, optional = true },
    },
    Snapshot = {
      { "tick", "uint", bits = 20 },
      { "entities", "array", of = "Entity", max = 64 },
    },
  }
end

-- an Entity of M.snapshot_schema
function M.entity (i)
  return { id = i, kind = "grunt", pos = { x = 0, y = 0, z = 0 },
           health = 50, at_rest = false }
end

-- deterministic 64-bit LCG (Knuth's MMIX constants); next(n) -> 0..n-1
function M.lcg (seed)
  local state = seed
  return function (n)
    state = state * 6364136223846793005 + 1442695040888963407
    return (state >> 33) % n
  end
end

-- 'n' bytes from the generator 'rand' of M.lcg
function M.randbytes (rand, n)
  local t = {}
  for i = 1, n do t[i] = string.char(rand(256)) end
  return table.concat(t)
end

-- CRC32 (zlib's, reflected 0xEDB88320), to forge packets the way a peer would
local CRC = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do c = (c & 1 ~= 0) and (0xEDB88320 ~ (c >> 1)) or (c >> 1) end
  CRC[i] = c
end
local function crc32 (s)
  local c = 0xFFFFFFFF
  for i = 1, #s do c = CRC[(c ~ s:byte(i)) & 0xFF] ~ (c >> 8) end
  return c ~ 0xFFFFFFFF
end

-- a framed packet around 'payload' for protocol id 'id' (as fed to the CRC)
function M.forge (id, payload)
  return string.pack("<I4", crc32(string.pack("<i8", id) .. payload)) .. payload
end

-- a Lua pattern matching 's' literally
function M.lit (s)
  return (tostring(s):gsub("%p", "%%%0"))
end

function M.write (path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- Temporary files: t.path() a fresh name, t.defs(text) a file holding
-- 'text', t.cleanup() removes every one made (for after_each).
function M.temps ()
  local paths, t = {}, {}
  function t.path ()
    local path = os.tmpname()
    paths[#paths + 1] = path
    return path
  end
  function t.defs (text)
    local path = t.path()
    M.write(path, text)
    return path
  end
  function t.cleanup ()
    for i = #paths, 1, -1 do
      os.remove(paths[i])
      paths[i] = nil
    end
  end
  return t
end

-- A writer that keeps what is written: the command line's stdout or stderr.
function M.buffer ()
  local b = { text = "" }
  function b:write (...)
    for _, s in ipairs { ... } do self.text = self.text .. tostring(s) end
    return self
  end
  return b
end

-- Run the command line 'args' in this process; returns status, stdout,
-- stderr.
function M.runcli (...)
  local out, err = M.buffer(), M.buffer()
  local status = require("bitwire.cli").main({ ... }, { stdout = out, stderr = err })
  return status, out.text, err.text
end

return M
