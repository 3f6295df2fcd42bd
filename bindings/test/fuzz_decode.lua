-- fuzz_decode.lua - the Lua half of the fuzz_decode libFuzzer target: the
-- schemas, one check per input, and the seed corpus. fuzz_decode.c loads it
-- once per process (from the checkout root) and calls M.check(bytes) for
-- every input; a raised error is a crash.
--
-- An input is [mode][sel][opt][n][n bytes: first packet][main packet]:
--   mode % 8  0 plain  s:decode(T, main)
--             1 message  s:decode_message(main)
--             2 into  decode first, then main into that table; must equal a
--               fresh decode of main
--             3 baseline  decode first as the baseline, main as a delta on it
--               (fresh, shared and into a table: the same results)
--             4 protocol  bitwire.protocol with deltas over main (its CRC and
--               end check fixed up unless mode bit 3), baselines = {first}
--             5 frame  frame_decode of the versioned schema, with a tag,
--               version_bits and deltas picked by 'opt'
--             6 versioned  decode(T, main, {version = opt % ...})
--             7 hostile frame  the protocol's decode of main as it is
--   sel picks the type (or the protocol / message flag), opt the options.
-- For every decode: a value, or nil, message, code with a known code and a
-- message ending "(bit N)"; never an error. For every value decoded: encode
-- (in the same way) must not raise, and decoding what it made must succeed
-- and give an equal value (floats by value, quaternions up to rounding).
local bitwire = require "bitwire"

local M = {}

local MAXI, MINI = math.maxinteger, math.mininteger
local KNOWN = { truncated = true, range = true, align = true, check = true,
  crc = true, utf8 = true, tag = true, schema = true, baseline = true }


-- {===================== schemas =====================

-- every field kind, every option, full int64 ranges, nesting to the limit
local main = {
  Vec = {
    { "x", "float", min = -512, max = 512, res = 0.01 },
    { "y", "float", min = -512, max = 512, res = 0.01 },
    { "z", "float", min = -16, max = 16, res = 0.5 },
  },
  Entity = {
    { "id", "int", min = 0, max = 4095 },
    { "kind", "enum", values = { "player", "grunt", "weapon" } },
    { "pos", "Vec" },
    { "health", "int", min = 0, max = 100, default = 100 },
    { "at_rest", "bool" },
    { "name", "string", max = 16, optional = true },
  },
  Cube = {
    { "pos", "vector", count = 3, min = -64, max = 64, res = 0.01 },
    { "rot", "quat", bits = 9 },
    { "interacting", "bool" },
  },
  Scalars = {
    { "i8", "int", min = -128, max = 127 },
    { "ifull", "int", min = MINI, max = MAXI },
    { "ineg", "int", min = MINI, max = -1 },
    { "ihigh", "int", min = MAXI - 5, max = MAXI },
    { "izero", "int", min = 7, max = 7 },
    { "u1", "uint", bits = 1 },
    { "u13", "uint", bits = 13 },
    { "u63", "uint", bits = 63 },
    { "u64", "uint", bits = 64 },
    { "flag", "bool" },
    { "f", "float", min = -512, max = 512, res = 0.01 },
    { "fclamp", "float", min = 0, max = 1, res = 1 / 255, clamp = true },
    { "fodd", "float", min = -7.5, max = 3.25, res = 0.25 },
    { "ffine", "float", min = -1, max = 1, res = 1e-9 },
    { "fwide", "float", min = -1e38, max = 1e38, res = 1e30 },
    { "f32", "float32" },
    { "f64", "float64" },
    { "color", "enum", values = { "red", "green", "blue" } },
    { "one", "enum", values = { "only" } },
    { "name", "string", max = 20 },
    { "empty", "string", max = 0 },
    { "blob", "bytes", min = 1, max = 9 },
    { "tag4", "bytes", count = 4 },
    { "align" },
    { "gap", "tiered", tiers = { 0, 2, 3, 4, 5, 6 }, min = 1 },
    { "wide", "tiered", tiers = { 1, 32, 32 }, min = MINI },
    { "rot", "quat", bits = 9 },
    { "rot2", "quat", bits = 2 },
    { "rot31", "quat", bits = 31 },
    { "dir", "vector", count = 3, min = -1, max = 1, res = 0.001 },
    { "check" },
  },
  Options = {
    { "oi", "int", min = -5, max = 5, optional = true },
    { "di", "int", min = -5, max = 5, default = -3 },
    { "ou", "uint", bits = 64, optional = true },
    { "du", "uint", bits = 7, default = 99 },
    { "ob", "bool", optional = true },
    { "db", "bool", default = true },
    { "of", "float", min = 0, max = 100, res = 0.5, optional = true },
    { "df", "float", min = 0, max = 100, res = 0.5, default = 12.5 },
    { "of32", "float32", optional = true },
    { "df64", "float64", default = -0.5 },
    { "oe", "enum", values = { "a", "b", "c", "d", "e" }, optional = true },
    { "de", "enum", values = { "a", "b" }, default = "b" },
    { "os", "string", max = 8, optional = true },
    { "ds", "string", max = 8, default = "h\xc3\xa9" },
    { "oby", "bytes", max = 4, optional = true },
    { "dby", "bytes", count = 2, default = "\0\255" },
    { "ov", "Vec", optional = true },
    { "oa", "array", of = "bool", max = 5, optional = true },
    { "osp", "sparse", of = { "int", min = 0, max = 3 }, max = 10, optional = true },
    { "oq", "quat", bits = 5, optional = true },
    { "ot", "tiered", tiers = { 2, 4 }, optional = true, default = 3 },
    { "check", magic = 0xCAFE },
  },
  Arrays = {
    { "recs", "array", of = "Entity", max = 8 },
    { "pair", "array", of = "Vec", count = 2 },
    { "ints", "array", of = { "int", min = -3, max = 3 }, min = 1, max = 12 },
    { "strs", "array", of = { "string", max = 5 }, max = 4 },
    { "blobs", "array", of = { "bytes", count = 2 }, max = 3 },
    { "fixf", "array", of = { "float", min = 0, max = 10, res = 0.1 }, count = 3 },
    { "grid", "array", of = { "array", of = "bool", max = 3 }, max = 3 },
    { "zeros", "array", of = { "int", min = 0, max = 0 }, max = 100 },
    { "huge", "array", of = "Vec", max = 0x7fffffff },
    { "bits", "array", of = "bool", max = 1 << 40 },
    { "none", "array", of = "Vec", count = 0 },
  },
  Sparse = {
    { "mask", "sparse", of = "Vec", max = 20, encoding = "mask" },
    { "index", "sparse", of = { "int", min = 0, max = 15 }, max = 300,
      encoding = "index" },
    { "rel", "sparse", of = "Entity", max = 901, encoding = "relative" },
    { "art", "sparse", of = { "uint", bits = 5 }, max = 200,
      encoding = "relative", tiers = "article" },
    { "auto", "sparse", of = "bool", max = 64 },
    { "autot", "sparse", of = { "int", min = 0, max = 0 }, max = 3000,
      tiers = { 1, 3, 5, 8 } },
    { "one", "sparse", of = "Vec", max = 1 },
    { "cubes", "sparse", of = "Cube", max = 40 },
  },
  Snapshot = {
    { "tick", "uint", bits = 20 },
    { "entities", "array", of = "Entity", max = 64 },
    { "objects", "sparse", of = "Cube", max = 901 },
  },
  -- angles and relative deltas (differences from the baseline)
  Mover = {
    { "x", "float", min = -256, max = 255, res = 1 / 512, delta = "relative" },
    { "t", "float", min = 0, max = 1, res = 0.25, delta = "relative", tiers = { 0 },
      optional = true },
    { "yaw", "angle", bits = 10, delta = "relative" },
    { "deg", "angle", bits = 5, unit = "deg", delta = "relative", tiers = { 0, 1, 32 } },
    { "plain", "angle", bits = 32, optional = true },
    { "rot", "quat", bits = 9, delta = "relative" },
    { "r2", "quat", bits = 2, delta = "relative", tiers = { 1 } },
    { "r22", "quat", bits = 22, delta = "relative", optional = true },
  },
  Movers = { { "m", "sparse", of = "Mover", max = 12 }, { "one", "Mover" } },
}
-- nesting at the limit (BW_MAXDEPTH, 32 levels): a chain of records, and a
-- chain of sparse arrays of records (two levels a step)
for i = 1, 32 do
  main["Deep" .. i] = { { "v", "uint", bits = 3 },
    i < 32 and { "next", "Deep" .. (i + 1), optional = true } or nil }
end
for i = 1, 16 do
  main["Tree" .. i] = { { "v", "int", min = -1, max = 1 },
    i < 16 and { "kids", "sparse", of = "Tree" .. (i + 1), max = 2 } or nil }
end

-- fields that come and go with versions (current version: 5)
local versioned = {
  Pos = {
    { "x", "int", min = -100, max = 100 },
    { "y", "int", min = -100, max = 100, since = 2, default = 0 },
  },
  Player = {
    { "id", "int", min = 0, max = 1023 },
    { "name", "string", max = 12, since = 1 },
    { "hp", "int", min = 0, max = 100, since = 2, default = 100 },
    { "legacy", "bool", removed = 2 },
    { "mana", "float", min = 0, max = 10, res = 0.5, since = 3, removed = 5,
      default = 5 },
    { "align", since = 3 },
    { "pos", "Pos", since = 1, optional = true },
    { "tags", "array", of = { "enum", values = { "a", "b" } }, max = 3, since = 4 },
  },
  World = {
    { "players", "array", of = "Player", max = 4 },
    { "spots", "sparse", of = "Pos", max = 50, since = 2 },
    { "check", removed = 4 },
  },
}

local S = bitwire.schema(main)
local V = bitwire.schema(versioned)
local SN, VN = S:types(), V:types()
-- the compiled programs: types in id order, each field as C compiled it
local SD, VD = S:program(), V:program()

-- protocols over S: [deltas, check]
local PROTOS = {
  bitwire.protocol(S, { id = 0x5eed, deltas = true }),
  bitwire.protocol(S, { id = 7, deltas = true, check = false }),
  bitwire.protocol(S, { id = -1 }),
  bitwire.protocol(S, { id = 0, check = false, fingerprint = false }),
}

-- }=====================================================


-- {===================== comparison =====================

local same, coarse

-- with a 'version', fields not on the wire at it are left out: a delta
-- copies them from its baseline, a fresh decode gives their defaults
local function samestruct (desc, ti, a, b, path, ver)
  if type(a) ~= "table" or type(b) ~= "table" then
    return false, path .. ": not tables"
  end
  for _, f in ipairs(desc.types[ti + 1].fields) do
    if f.name and not (ver and ((f.since and ver < f.since)
                                or (f.removed and ver >= f.removed))) then
      local ok, where = same(desc, f, a[f.name], b[f.name], path .. "." .. f.name,
        ver)
      if not ok then return false, where end
    end
  end
  return true
end

-- unit quaternions equal up to sign, within a few quantization steps
local function samequat (f, a, b)
  if type(a) ~= "table" or type(b) ~= "table" or #a ~= 4 or #b ~= 4 then
    return false
  end
  local tol = 4 * 1.4142135 / ((1 << f.bits) - 1) + 1e-6
  for _, s in ipairs { 1, -1 } do
    local ok = true
    for i = 1, 4 do
      if not (math.abs(a[i] - s * b[i]) <= tol) then ok = false end
    end
    if ok then return true end
  end
  return false
end

-- spacing of float32 numbers near x (> 0)
local function ulp32 (x)
  return 2.0 ^ (math.max(math.floor(math.log(x, 2)), -126) - 23)
end

-- A quantized float with more than 2^22 steps, or steps finer than float32
-- can tell apart near its ends: serialize.h's float32 arithmetic (which the
-- wire must match) then does not map a decoded value back to its integer,
-- and a re-encode may move it by a step or a float32 ulp (seen by this
-- fuzzer: [-1e38, 1e38] at 1e30 moves by 5.07e30, one ulp).
function coarse (f)
  return (f.fmax - f.fmin) / f.res > 2 ^ 22
    or ulp32(math.max(math.abs(f.fmin), math.abs(f.fmax))) > f.res / 4
end

local function differ (path, a, b)
  return false, string.format("%s: %s vs %s", path,
    math.type(a) == "float" and string.format("%.17g", a) or tostring(a),
    math.type(b) == "float" and string.format("%.17g", b) or tostring(b))
end

function same (desc, f, a, b, path, ver)
  if a == nil or b == nil then
    if a == b then return true end
    return differ(path, a, b)
  end
  local k = f.kind
  if k == "struct" then return samestruct(desc, desc.byname[f.type].id, a, b, path, ver)
  elseif k == "array" then
    if type(a) ~= "table" or type(b) ~= "table" or #a ~= #b then
      return false, path .. ": lengths differ"
    end
    for i = 1, #a do
      local ok, where = same(desc, f.of, a[i], b[i], path .. "[" .. i .. "]", ver)
      if not ok then return false, where end
    end
    return true
  elseif k == "sparse" then
    if type(a) ~= "table" or type(b) ~= "table" then return false, path end
    for key, v in pairs(a) do
      if math.type(key) ~= "integer" or key < 1 or key > f.max then
        return false, path .. ": key " .. tostring(key)
      end
      local ok, where = same(desc, f.of, v, b[key], path .. "[" .. key .. "]", ver)
      if not ok then return false, where end
    end
    for key in pairs(b) do
      if a[key] == nil then return false, path .. "[" .. tostring(key) .. "]" end
    end
    return true
  elseif k == "quat" then
    if samequat(f, a, b) then return true end
    return false, path .. ": quaternions differ"
  elseif k == "float" and coarse(f) then
    local tol = 2 * math.max(f.res, ulp32(math.max(math.abs(f.fmin), math.abs(f.fmax))))
    if type(a) == "number" and type(b) == "number" and math.abs(a - b) <= tol then
      return true
    end
    return differ(path, a, b)
  elseif k == "float" or k == "float32" or k == "float64" then
    if type(a) == "number" and type(b) == "number"
       and (a == b or (a ~= a and b ~= b)) then
      return true
    end
    return differ(path, a, b)
  elseif k == "int" or k == "uint" or k == "tiered" then
    if math.type(a) == "integer" and a == b then return true end
    return differ(path, a, b)
  end
  if a == b then return true end
  return differ(path, a, b)
end

local function index (desc, name)
  for i, t in ipairs(desc.types) do
    if t.name == name then return i - 1 end
  end
end

-- raise unless 'a' and 'b' are equal values of type 'name'
local function expect_same (desc, name, a, b, what, ver)
  local ok, where = samestruct(desc, index(desc, name), a, b, name, ver)
  if not ok then error(what .. ": values differ at " .. tostring(where), 0) end
end

-- }=====================================================


-- {===================== decode results =====================

-- the failure shape: nil, "... (bit N)", known code
local function checkfail (what, v, msg, code)
  if v ~= nil then error(what .. ": failure with a value", 0) end
  if type(msg) ~= "string" or not msg:find("%(bit %d+%)$") then
    error(what .. ": bad message " .. tostring(msg), 0)
  end
  if not KNOWN[code] then error(what .. ": unknown code " .. tostring(code), 0) end
end

-- decode(T, main) never raises; nil or a value
local function dec (s, name, bytes, opts, what)
  local v, msg, code = s:decode(name, bytes, opts)
  if v == nil then checkfail(what, v, msg, code) end
  return v, msg, code
end

-- decode(encode(v)) == v, plain and (with 'b') as a delta
local function roundtrip (s, desc, name, v, opts, what)
  local bytes = s:encode(name, v, opts)
  local v2, msg = s:decode(name, bytes, opts)
  if v2 == nil then error(what .. ": re-encoded value does not decode: " .. msg, 0) end
  expect_same(desc, name, v, v2, what, opts and opts.version)
  return bytes
end

-- a deep copy (baselines must not share tables with what is compared)
local function copy (v)
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = copy(x) end
  return t
end

-- a valid value of each type (filled in by M.seeds' generator below)
local fallback = {}

-- a table for decode into with the type's field names but values of the
-- wrong kinds, nested two levels
local function junk (desc, ti, depth)
  local t = {}
  for _, f in ipairs(desc.types[ti + 1].fields) do
    if f.name then
      local k = f.kind
      if depth > 0 and k == "struct" then t[f.name] = junk(desc, desc.byname[f.type].id, depth - 1)
      elseif k == "array" then t[f.name] = { 1, "two", {}, true }
      elseif k == "sparse" then
        t[f.name] = { [1] = "x", [math.min(f.max, 3)] = {} }
      elseif k == "struct" or k == "quat" then t[f.name] = 42
      else t[f.name] = {} end
    end
  end
  return t
end

local function reader_version (packet, vbits, tagged)
  local r = bitwire.reader(packet)
  r:bits(32)
  if tagged then r:bits(32) end
  return vbits > 0 and r:bits(vbits) or nil
end

-- }=====================================================


-- {===================== one input =====================

local function run (data)
  local mode, sel, opt, n = data:byte(1, 4)
  mode, sel, opt, n = mode or 0, sel or 0, opt or 0, n or 0
  local first = data:sub(5, 4 + n)
  local body = data:sub(5 + n)
  local m = mode % 8
  if m == 0 or m == 2 or m == 3 then
    local name = SN[sel % #SN + 1]
    local what = ({ [0] = "plain", [2] = "into", [3] = "baseline" })[m] .. " " .. name
    if m == 0 then
      local v, _, code = dec(S, name, body, nil, what)
      if v ~= nil then roundtrip(S, SD, name, v, nil, what) end
      return m, code
    elseif m == 2 then
      local t = opt & 1 == 1 and junk(SD, index(SD, name), 2)
        or dec(S, name, first, nil, what .. " (first)") or copy(fallback[name])
      local fresh, fmsg, fcode = dec(S, name, body, nil, what)
      local v, msg, code = dec(S, name, body, { into = t }, what)
      if (v == nil) ~= (fresh == nil) or msg ~= fmsg or code ~= fcode then
        error(what .. ": into and fresh decode disagree: " .. tostring(msg)
          .. " / " .. tostring(fmsg), 0)
      end
      if v ~= nil then
        if v ~= t then error(what .. ": into did not return its table", 0) end
        expect_same(SD, name, fresh, v, what)
      end
      return m, code
    else
      local b = dec(S, name, first, nil, what .. " (first)") or fallback[name]
      local before = copy(b)
      local v, msg, code = dec(S, name, body, { baseline = b }, what)
      -- share = true: the same result or failure, the baseline untouched
      local sv, smsg, scode = dec(S, name, body, { baseline = b, share = true }, what)
      if (sv == nil) ~= (v == nil) or smsg ~= msg or scode ~= code then
        error(what .. ": share and copy disagree: " .. tostring(smsg) .. " / "
          .. tostring(msg), 0)
      end
      if v ~= nil then expect_same(SD, name, v, sv, what .. " share") end
      expect_same(SD, name, before, b, what .. " baseline after share")
      -- into a table (refilled in place): the same result or failure
      local t = opt & 1 == 1 and junk(SD, index(SD, name), 2) or copy(fallback[name])
      local iv, imsg, icode = dec(S, name, body, { baseline = b, into = t }, what)
      if (iv == nil) ~= (v == nil) or imsg ~= msg or icode ~= code then
        error(what .. ": into and fresh delta disagree: " .. tostring(imsg) .. " / "
          .. tostring(msg), 0)
      end
      if iv ~= nil then
        if iv ~= t then error(what .. ": into did not return its table", 0) end
        expect_same(SD, name, v, iv, what .. " into")
      end
      expect_same(SD, name, before, b, what .. " baseline after into")
      if v ~= nil then
        roundtrip(S, SD, name, v, { baseline = b }, what .. " delta")
        roundtrip(S, SD, name, v, nil, what)
      end
      return m, code
    end
  elseif m == 1 then
    local name, v, code = S:decode_message(body)
    if name == nil then checkfail("message", name, v, code)
    else
      if type(name) ~= "string" then error("message: bad name", 0) end
      local v2n, v2 = S:decode_message(S:encode_message(name, v))
      if v2n ~= name then error("message: type changed", 0) end
      expect_same(SD, name, v, v2, "message")
    end
    return m, code
  elseif m == 4 or m == 7 then
    local p = PROTOS[sel % #PROTOS + 1]
    local packet = body
    if m == 4 and mode & 8 == 0 then
      if p.endcheck then body = body .. "\x78\x56\x34\x12" end
      packet = M.crc(p:wire_id(), body) .. body
    end
    local b = dec(S, SN[opt % #SN + 1], first, nil, "protocol (first)")
    local bid = (opt * 257 + n) & 0xFFFF
    local opts = p.deltas and { baselines = { [bid] = b } } or nil
    local name, v, code = p:decode(packet, opts)
    if name == nil then checkfail("protocol", name, v, code)
    else
      code = nil  -- the third result is the schema
      local what = "protocol " .. name
      local n2, v2 = p:decode(p:encode(name, v))
      if n2 ~= name then error(what .. ": type changed", 0) end
      expect_same(SD, name, v, v2, what)
      if p.deltas then
        local base = b ~= nil and SN[opt % #SN + 1] == name and b or fallback[name]
        local pk = p:encode(name, v, { baseline = base, baseline_id = bid })
        n2, v2 = p:decode(pk, { baselines = { [bid] = base } })
        if n2 ~= name then error(what .. ": delta type changed", 0) end
        expect_same(SD, name, v, v2, what .. " delta")
      end
    end
    return m, code
  elseif m == 5 then
    local msg = sel & 1 == 1
    local name = VN[(sel >> 1) % #VN + 1]
    local id, endcheck = 0x77 + sel, opt & 1 == 1
    local hdr = { id = id, check = endcheck, message = msg, type = name,
      version_bits = ({ 0, 3, 16, 32 })[(opt >> 1) % 4 + 1],
      deltas = opt & 8 == 8, tagged = opt & 16 == 16 }
    if endcheck then body = body .. "\x78\x56\x34\x12" end
    local packet = M.crc(id, body) .. body
    -- the baseline as decoded at the version the packet gives
    local ver = reader_version(packet, hdr.version_bits, hdr.tagged)
    local b = dec(V, name, first, { version = ver and ver < 0xFFFFFFFF and ver or nil },
      "frame (first)") or fallback[name]
    local fo = hdr.deltas and { baselines = { [n] = b } } or nil
    local r1, r2, r3 = V:frame_decode(hdr, packet, fo)
    if r1 == nil then checkfail("frame", r1, r2, r3)
    else
      local v = r2
      name = r1
      local what = "frame " .. name
      local eo = { version = ver }
      local pk = V:frame_encode(hdr, name, v, eo)
      local s1, s2 = V:frame_decode(hdr, pk, fo)
      if s1 == nil then error(what .. ": re-encoded frame fails: " .. s2, 0) end
      expect_same(VD, name, v, s2, what, eo.version or V:version())
    end
    return m, r1 == nil and r3 or nil
  elseif m == 6 then
    local name = VN[sel % #VN + 1]
    local version = opt % (V:version() + 3)
    local what = "versioned " .. name .. " @" .. version
    local v, _, code = dec(V, name, body, { version = version }, what)
    if v ~= nil then roundtrip(V, VD, name, v, { version = version }, what) end
    return m, code
  end
end

-- outcomes by mode, for the seed generator's report
local stats = {}

function M.check (data)
  local m, code = run(data)
  local key = m .. ":" .. (code or "ok")
  stats[key] = (stats[key] or 0) + 1
end

function M.report ()
  local keys = {}
  for k in pairs(stats) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do keys[i] = k .. " " .. stats[k] end
  return table.concat(keys, ", ")
end

-- }=====================================================


-- {===================== seeds =====================

local function lcg (seed)
  local state = seed
  local R = {}
  function R.u64 ()
    state = state * 6364136223846793005 + 1442695040888963407
    local hi = state >> 32
    state = state * 6364136223846793005 + 1442695040888963407
    return (hi << 32) | (state >> 32)
  end
  function R.int (k) return R.u64() % k end          -- 0 .. k-1 (k > 0)
  function R.chance (p) return R.int(1000) < p * 1000 end
  function R.pick (t) return t[R.int(#t) + 1] end
  function R.between (lo, hi)                         -- any int64 range
    local span, mask = hi - lo, hi - lo               -- span as unsigned
    for _, sh in ipairs { 1, 2, 4, 8, 16, 32 } do mask = mask | (mask >> sh) end
    while true do
      local off = R.u64() & mask
      if not math.ult(span, off) then return lo + off end
    end
  end
  return R
end

local CHARS = { "a", "Z", "0", " ", "~", "\xc3\xa9", "\xce\xbb", "\xe2\x82\xac",
  "\xf0\x9d\x84\x9e" }
local F32 = { 0.0, -0.0, 1.5, -2.25, 1 / 0, -1 / 0, 0 / 0, 3.4028234663852886e38,
  1.401298464324817e-45, 1e-30 }
local F64 = { 0.0, -0.0, math.pi, -1e308, 1 / 0, -1 / 0, 0 / 0, 5e-324,
  1.7976931348623157e308 }

local genstruct

local function genvalue (R, desc, f, depth)
  local k = f.kind
  if k == "int" or k == "tiered" then
    if R.chance(0.3) then return R.pick { f.min, f.max } end
    return R.between(f.min, f.max)
  elseif k == "uint" then
    local v = R.u64()
    return f.bits == 64 and v or v & ((1 << f.bits) - 1)
  elseif k == "bool" then return R.chance(0.5)
  elseif k == "float" then
    if R.chance(0.2) then return R.pick { f.fmin, f.fmax } end
    return f.fmin + (f.fmax - f.fmin) * (R.int(1 << 20) / (1 << 20))
  elseif k == "angle" then   -- any finite number wraps
    if R.chance(0.3) then return R.pick { 0, f.period - 1e-9, -f.period / 3, 1e6 } end
    return (R.int(1 << 20) / (1 << 20) - 0.5) * 4 * f.period
  elseif k == "float32" then
    return R.chance(0.5) and R.pick(F32) or (R.int(1 << 24) - (1 << 23)) / 64
  elseif k == "float64" then
    return R.chance(0.5) and R.pick(F64) or (R.u64() >> 11) / 3
  elseif k == "enum" then return R.pick(f.values)
  elseif k == "string" then
    local s = ""
    for _ = 1, R.int(math.min(f.max, 64) + 1) do
      local c = R.pick(CHARS)
      if #s + #c > f.max then break end
      s = s .. c
    end
    return s
  elseif k == "bytes" then
    local len = f.fixed and f.min or f.min + R.int(math.min(f.max - f.min, 8) + 1)
    local t = {}
    for i = 1, len do t[i] = string.char(R.int(256)) end
    return table.concat(t)
  elseif k == "array" then
    local count = f.fixed and f.min
      or f.min + R.int(math.min(f.max - f.min, depth > 3 and 1 or 4) + 1)
    local t = {}
    for i = 1, count do t[i] = genvalue(R, desc, f.of, depth + 1) end
    return t
  elseif k == "sparse" then
    local t = {}
    local want = R.chance(0.2) and 0 or R.int(depth > 3 and 2 or 6)
    for _ = 1, want do
      local key = R.chance(0.3) and R.pick { 1, f.max } or 1 + R.int(f.max)
      t[key] = genvalue(R, desc, f.of, depth + 1)
    end
    return t
  elseif k == "quat" then
    local q = { 0, 0, 0, 0 }
    q[R.int(4) + 1] = 1
    for i = 1, 4 do q[i] = q[i] + (R.int(2001) - 1000) / 1000 end
    return q
  elseif k == "struct" then
    return genstruct(R, desc, desc.byname[f.type].id, depth + 1)
  elseif k == "angle" then
    return (R.int(1 << 20) - (1 << 19)) / 1000
  end
  return nil
end

function genstruct (R, desc, ti, depth)
  local t = {}
  for _, f in ipairs(desc.types[ti + 1].fields) do
    if f.name then
      local skip = (f.optional and R.chance(depth > 2 and 0.6 or 0.3))
        or (f.default ~= nil and R.chance(0.3))
      if not skip then t[f.name] = genvalue(R, desc, f, depth) end
    end
  end
  return t
end

-- valid encodes for every mode and type: a list of inputs
-- inputs that once failed, replayed by every run from its seed corpus
local REGRESSIONS = {
  -- a protocol frame against a baseline: a delta's run of changed bits
  -- filled its word, then a fixed count of no bits shifted by 64
  "04002f00000000000000000000000028000000000000000000000100000000000000"
    .. "00effffffefffe0000005effff",
}

function M.seeds ()
  local R = lcg(0x626974776972650A)
  local out = {}
  for _, hex in ipairs(REGRESSIONS) do
    out[#out + 1] = hex:gsub("%x%x", function (h) return string.char(tonumber(h, 16)) end)
  end
  local function add (mode, sel, opt, first, main)
    first = first or ""
    out[#out + 1] = string.char(mode, sel & 0xFF, opt & 0xFF, #first) .. first .. main
  end
  local function value (desc, name) return genstruct(R, desc, index(desc, name), 1) end
  for i, name in ipairs(SN) do
    local sel = i - 1
    for _ = 1, 3 do
      local v = value(SD, name)
      local bytes = S:encode(name, v)
      add(0, sel, 0, "", bytes)
      add(1, 0, 0, "", S:encode_message(name, v))
      local b = value(SD, name)
      local bb = S:encode(name, b)
      if #bb < 256 then
        add(2, sel, 0, bb, bytes)
        add(3, sel, 0, bb, S:encode(name, v, { baseline = b }))
      end
    end
  end
  for pi, p in ipairs(PROTOS) do
    for i, name in ipairs(SN) do
      local v = value(SD, name)
      local cut = 4 + (p.endcheck and 4 or 0)
      local pk = p:encode(name, v)
      add(4, pi - 1, i - 1, "", pk:sub(5, #pk - cut + 4))
      add(7, pi - 1, i - 1, "", pk)
      if p.deltas then
        local b = value(SD, name)
        local bb = S:encode(name, b)
        if #bb < 256 then
          local bid = ((i - 1) * 257 + #bb) & 0xFFFF
          pk = p:encode(name, v, { baseline = b, baseline_id = bid })
          add(4, pi - 1, i - 1, bb, pk:sub(5, #pk - cut + 4))
        end
      end
    end
  end
  for i, name in ipairs(VN) do
    for version = 0, V:version() + 1 do
      local v = value(VD, name)
      add(6, i - 1, version, "", V:encode(name, v, { version = version }))
    end
    for opt = 0, 31 do
      local msg = opt % 2 == 1
      local sel = ((i - 1) << 1) | (msg and 1 or 0)
      local endcheck = opt & 1 == 1
      local vbits = ({ 0, 3, 16, 32 })[(opt >> 1) % 4 + 1]
      local hdr = { id = 0x77 + sel, check = endcheck, message = msg,
        version_bits = vbits, deltas = opt & 8 == 8, tagged = opt & 16 == 16 }
      local fo = {}
      if vbits > 0 then fo.version = R.int(math.min(V:version() + 2, 8)) end
      local v = value(VD, name)
      local first = ""
      if hdr.deltas and R.chance(0.5) then
        local b = value(VD, name)
        first = V:encode(name, b, { version = fo.version })
        if #first < 256 then fo.baseline, fo.baseline_id = b, #first
        else first = "" end
      end
      local pk = V:frame_encode(hdr, name, v, fo)
      add(5, sel, opt, first, pk:sub(5, #pk - (endcheck and 4 or 0)))
    end
  end
  return out
end

-- fallback baselines and into tables: one valid value per type
do
  local R = lcg(42)
  for _, name in ipairs(SN) do fallback[name] = genstruct(R, SD, index(SD, name), 1) end
  for _, name in ipairs(VN) do fallback[name] = genstruct(R, VD, index(VD, name), 1) end
  -- and they must be what a decode gives, so round trips compare equal
  for _, name in ipairs(SN) do
    fallback[name] = assert(S:decode(name, S:encode(name, fallback[name])))
  end
  for _, name in ipairs(VN) do
    fallback[name] = assert(V:decode(name, V:encode(name, fallback[name])))
  end
end

-- }=====================================================

-- for bindings/test/fuzz_schema.lua: values of any compiled program, and
-- the comparison and failure checks
M.lcg, M.genstruct, M.expect_same, M.checkfail = lcg, genstruct, expect_same,
  checkfail

return M
