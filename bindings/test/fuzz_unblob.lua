-- Checks of the fuzz_unblob target (bindings/test/fuzz_decode.c built with
-- -DSCRIPT naming this file): s:unblob and s:blobview on hostile blobs.
-- An input is [sel][flags][blob...]: sel picks the type and the version
-- read; flags bit 0 writes a correct header over the blob's first 32 bytes
-- (so mutations reach the body). unblob must return a value or nil,
-- message, known code and never raise; blobview must agree with it; a value
-- read must blob again and read back equal.
local bitwire = require "bitwire"

local M = {}

local DESC = {
  Vec3 = { { "x", "float32" }, { "y", "float32" }, { "z", "float64" } },
  Item = {
    { "id", "int", min = -3, max = 300 },
    { "kind", "enum", values = { "a", "b", "c" } },
    { "on", "bool" },
    { "name", "string", max = 12, optional = true },
    { "at", "Vec3", optional = true },
    { "hp", "int", min = 0, max = 9, optional = true },
    { "q", "quat", bits = 9 },
    { "key", "bytes", count = 3 },
    { "mana", "int", min = 0, max = 50, since = 1, default = 5 },
    { "old", "uint", bits = 12, removed = 1 },
  },
  Root = {
    { "items", "array", of = "Item", max = 20 },
    { "names", "array", of = { "string", max = 6 }, max = 4 },
    { "raw", "bytes", max = 40 },
    { "grid", "array", of = { "uint", bits = 40 }, count = 3 },
    { "near", "sparse", of = "Vec3", max = 12 },
    { "big", "int", min = math.mininteger, max = math.maxinteger },
    { "speed", "float", min = 0, max = 10, res = 0.01 },
  },
}
local S = bitwire.schema(DESC)
local TYPES = { "Root", "Item", "Vec3" }
local CODES = { truncated = true, range = true, align = true, utf8 = true,
                tag = true, schema = true, depth = true }
local stats = {}

local function count(k) stats[k] = (stats[k] or 0) + 1 end

local function same(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) == "number" then return a == b or (a ~= a and b ~= b) end
  if type(a) ~= "table" then return a == b end
  for k, v in pairs(a) do if not same(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

-- the view's content as plain tables, read field by field along DESC
local function fromview(v, name)
  local out = {}
  for _, f in ipairs(DESC[name]) do
    local x = v[f[1]]
    if x ~= nil and type(x) == "userdata" then
      local t = f[2]
      if DESC[t] then x = fromview(x, t)
      elseif t == "sparse" then
        local s = {}
        for i = 1, #x do
          if x[i] ~= nil then s[i] = fromview(x[i], f.of) end
        end
        x = s
      else
        local a = {}
        for i = 1, #x do
          local e = x[i]
          a[i] = type(e) == "userdata" and fromview(e, f.of) or e
        end
        x = a
      end
    end
    out[f[1]] = x
  end
  return out
end

local function header(blob, name, version)
  local lay = S:blob_layout(version)
  local id
  for i, t in ipairs(S:types()) do if t == name then id = i - 1 end end
  local fp = math.tointeger(tonumber(lay.types[id + 1].fingerprint:sub(1, 8), 16) << 32
    | tonumber(lay.types[id + 1].fingerprint:sub(9), 16))
  local h = string.pack("<c4 I2 I2 i8 I4 I4 I4 I4", "BWBL", 1, 1, fp, version, id,
    #blob, 0)
  return h .. blob:sub(33)
end

function M.check(data)
  if #data < 2 then return end
  local sel, flags = data:byte(1, 2)
  local name = TYPES[sel % #TYPES + 1]
  local version = (sel // #TYPES) % 2
  local blob = data:sub(3)
  if flags & 1 == 1 and #blob >= 32 then blob = header(blob, name, version) end
  local v, err, code = S:unblob(name, blob)
  local view, verr = S:blobview(name, blob)
  if v == nil then
    assert(type(err) == "string" and CODES[code], tostring(code))
    assert(view == nil and verr == err)
    count("refused " .. code)
    return
  end
  assert(type(v) == "table")
  count("read")
  assert(same(v, fromview(view, name)), "blobview differs from unblob")
  local again = S:unblob(name, S:blob(name, v))
  assert(same(v, again), "blob of a read value reads back different")
end

function M.report()
  local keys = {}
  for k in pairs(stats) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do keys[i] = k .. " " .. stats[k] end
  return table.concat(keys, ", ")
end

-- seeds: blobs of random values of each type, at both versions
local seed = 0x626c6f62
local function rnd(n)
  seed = (seed * 6364136223846793005 + 1442695040888963407)
  return (seed >> 33) % n
end

local function vec() return { x = rnd(100) / 4, y = -rnd(9), z = rnd(1000) * 1e-3 } end

local function item()
  return {
    id = rnd(304) - 3, kind = ({ "a", "b", "c" })[rnd(3) + 1], on = rnd(2) == 1,
    name = rnd(2) == 1 and ("n" .. rnd(1000)) or nil,
    at = rnd(2) == 1 and vec() or nil, hp = rnd(2) == 1 and rnd(10) or nil,
    q = { 0, 0, 0, 1 }, key = "k" .. rnd(10) .. "!", mana = rnd(51), old = rnd(4096),
  }
end

local GEN = {
  Vec3 = vec, Item = item,
  Root = function ()
    local r = { items = {}, names = {}, raw = string.rep("\7", rnd(41)),
                grid = { rnd(1 << 40), 0, 1 }, near = {}, big = rnd(1 << 62) - (1 << 61),
                speed = rnd(1000) / 100 }
    for i = 1, rnd(6) do r.items[i] = item() end
    for i = 1, rnd(5) do r.names[i] = ("x"):rep(rnd(7)) end
    for i = 1, 12 do if rnd(4) == 0 then r.near[i] = vec() end end
    return r
  end,
}

function M.seeds()
  local out = {}
  for k = 0, 5 do
    local name = TYPES[k % 3 + 1]
    local version = k // 3
    for _ = 1, 4 do
      out[#out + 1] = string.char(k, rnd(2)) .. S:blob(name, GEN[name](), { version = version })
    end
  end
  return out
end

return M
