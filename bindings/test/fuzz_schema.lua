-- fuzz_schema.lua - the Lua half of the fuzz_schema libFuzzer target
-- (bindings/test/fuzz_decode.c built with this script): descriptions are
-- input too. Each input's bytes make a description (every kind and option,
-- values valid and not, type references, cycles, nesting, message lists)
-- and the rest of the input is a packet. Then:
--   - bitwire.schema either compiles it or raises "bitwire.schema: ...",
--     nothing else;
--   - for every type of a compiled schema, random values encode, decode to
--     an equal value, and that value encodes again; a mix of two values,
--     sent as a delta against the first, decodes to what its full decode
--     gives, and so does a third against the mix;
--   - the packet bytes decode as every type (and as a message) to a value
--     or nil, "... (bit N)", known code; a value decoded encodes again and
--     decodes to an equal value.
local bitwire = require "bitwire"
local FD = dofile("bindings/test/fuzz_decode.lua")

local M = {}

local KINDS = { "int", "uint", "bool", "float", "float32", "float64", "enum",
  "string", "bytes", "array", "vector", "align", "check", "sparse", "quat",
  "tiered", "angle", "struct", "nope" }
-- angle joins once the driver encodes it (it compiles before it runs)
if not pcall(function ()
  local a = bitwire.schema { T = { { "a", "angle", bits = 8 } } }
  return a:encode("T", { a = 1 })
end) then table.remove(KINDS, 17) end
local OPTS = { "min", "max", "res", "clamp", "bits", "count", "of", "values",
  "magic", "encoding", "tiers", "unit", "delta", "optional", "default",
  "since", "removed", "bogus" }
local NUMS = { 0, 1, 2, 3, 7, 8, 15, 31, 32, 33, 63, 64, 65, 100, 255, 1000,
  -1, -128, 0.5, 0.01, 1e-9, 1e39, 2 * math.pi, math.maxinteger,
  math.mininteger, math.maxinteger - 1, 1 / 0, -1 / 0, 0 / 0, 0xFFFFFFFE,
  0xFFFFFFFF, 1 << 32, 22, 23, 1.00000001 }
local STRS = { "", "a", "relative", "mask", "index", "auto", "rad", "deg",
  "article", "x", "\0", "\xff" }

-- the input as a stream of bytes; zeros past the end
local function reader (data)
  local i = 0
  local R = {}
  function R.byte ()
    i = i + 1
    return data:byte(i) or 0
  end
  function R.pick (t) return t[R.byte() % #t + 1] end
  function R.rest () return data:sub(i + 1) end
  return R
end

local NAMES = { "A", "B", "C", "D" }

local function value (R, depth, names)
  local k = R.byte() % 8
  if k < 4 then return R.pick(NUMS)
  elseif k == 4 then return R.pick(STRS)
  elseif k == 5 then return R.byte() % 2 == 0
  elseif k == 6 and depth < 2 then   -- a list
    local t = {}
    for i = 1, R.byte() % 5 do t[i] = value(R, depth + 1, names) end
    if R.byte() % 8 == 0 then t.x = 1 end
    return t
  end
  return R.pick(names)
end

local field

-- a field description: {name, kind, options...} (no name for an element)
function field (R, depth, names, named)
  local f = {}
  local kind = R.pick(KINDS)
  if kind == "struct" then kind = R.pick(names) end
  if named then
    local b = R.byte()
    if b % 16 == 0 and (kind == "align" or kind == "check") then f[1] = kind
    else f[1], f[2] = (b % 32 == 1) and "" or "f" .. (b % 6), kind end
  else
    f[1] = kind
  end
  for _ = 1, R.byte() % 6 do
    local opt = R.pick(OPTS)
    if opt == "of" then
      f.of = (R.byte() % 2 == 0 or depth > 3) and R.pick(names)
        or field(R, depth + 1, names, false)
    elseif opt == "values" or opt == "tiers" then
      local t = {}
      for i = 1, R.byte() % 18 do
        t[i] = opt == "values" and R.pick { "a", "b", "c", "d", 1 }
          or R.byte() % 36
      end
      f[opt] = t
    else
      f[opt] = value(R, 0, names)
    end
  end
  return f
end

local function description (R)
  local d, names = {}, {}
  local n = 1 + R.byte() % 4
  for i = 1, n do names[i] = NAMES[i] end
  for i = 1, n do
    local fields = {}
    for j = 1, R.byte() % 6 do fields[j] = field(R, 0, names, true) end
    d[names[i]] = fields
  end
  local extra = R.byte()
  if extra % 4 == 0 then
    local m = {}
    for i = 1, 1 + R.byte() % 4 do m[i] = R.pick(names) end
    d.messages = m
  end
  if extra % 8 == 1 then d.message_bits = R.byte() % 10 end
  if extra % 16 == 2 then d.options = { strict = true } end
  if extra % 32 == 3 then d["1bad"] = {} end
  return d
end

-- 'a' with some of 'b' (values of field 'f'; nil, an omitted optional or
-- default, is one): subtables of either shared, slots and elements taken,
-- dropped or mixed again, so that a delta of it against 'a' keeps some
-- and sends some
local function mix (G, prog, f, a, b)
  local k = f.kind
  if type(a) ~= "table" or type(b) ~= "table" or k == "quat" then
    return G.int(3) == 0 and b or a
  end
  local t = {}
  if k == "struct" then
    for _, g in ipairs(prog.types[prog.byname[f.type].id + 1].fields) do
      if g.name then
        t[g.name] = G.int(2) == 0 and a[g.name] or mix(G, prog, g, a[g.name], b[g.name])
      end
    end
  elseif k == "array" then  -- the length of either, its own elements
    local src = G.int(2) == 0 and a or b
    for i = 1, #src do
      t[i] = a[i] ~= nil and b[i] ~= nil and mix(G, prog, f.of, a[i], b[i]) or src[i]
    end
  else  -- sparse
    for key, x in pairs(a) do if G.int(4) > 0 then t[key] = x end end
    for key, y in pairs(b) do
      if G.int(3) == 0 then t[key] = a[key] ~= nil and mix(G, prog, f.of, a[key], y) or y end
    end
  end
  return t
end

local outcomes = {}

local function count (k) outcomes[k] = (outcomes[k] or 0) + 1 end

local function run (data)
  local R = reader(data)
  local ok, s = pcall(bitwire.schema, description(R))
  if not ok then
    if type(s) ~= "string" or not s:find("bitwire.schema: ", 1, true) then
      error("schema raised something else: " .. tostring(s), 0)
    end
    return count("refused")
  end
  count("compiled")
  local prog = s:program()
  local G = FD.lcg(#data * 0x9E3779B97F4A7C15 + R.byte())
  local packet = R.rest()
  for _, t in ipairs(prog.types) do
    local name = t.name
    -- a valid value (of a type of bounded size): encodes, decodes equal,
    -- encodes again
    if t.maxbits and t.maxbits <= 1 << 16 then
      local v = FD.genstruct(G, prog, t.id, 1)
      local bytes = s:encode(name, v)
      local got, err, code = s:decode(name, bytes)
      if got == nil then
        error(name .. ": own encode does not decode: " .. err .. " " .. code, 0)
      end
      local again = s:decode(name, s:encode(name, got))
      FD.expect_same(prog, name, got, again, name .. " round trip")
      -- deltas: a mix of this value and another against this one, then a
      -- third against the second (the tapes each encode and decode left);
      -- each decodes to what a full decode of its value gives
      local prev, pbase = v, got
      for _ = 1, 2 do
        local w = mix(G, prog, { kind = "struct", type = name }, prev,
                      FD.genstruct(G, prog, t.id, 1))
        local dv, derr, dcode = s:decode(name, s:encode(name, w, { baseline = prev }),
                                         { baseline = pbase })
        if dv == nil then
          error(name .. ": own delta does not decode: " .. derr .. " " .. dcode, 0)
        end
        FD.expect_same(prog, name, s:decode(name, s:encode(name, w)), dv, name .. " delta")
        prev, pbase = w, dv
      end
    end
    -- hostile bytes
    local got, err, code = s:decode(name, packet)
    local again
    if got == nil then FD.checkfail(name .. " decode", got, err, code)
    else
      again = assert(s:decode(name, s:encode(name, got)))
      FD.expect_same(prog, name, got, again, name .. " decoded bytes")
    end
  end
  local mname, mv, mcode = s:decode_message(packet)
  if mname == nil then FD.checkfail("decode_message", mname, mv, mcode)
  else
    local n2, v2 = s:decode_message(s:encode_message(mname, mv))
    if n2 ~= mname then error("message " .. mname .. " came back as " .. tostring(n2), 0) end
    FD.expect_same(prog, mname, mv, v2, "message")
  end
end

function M.describe (data) return description(reader(data)) end

function M.check (data)
  run(data)
end

function M.report ()
  return string.format("%d compiled, %d refused", outcomes.compiled or 0,
    outcomes.refused or 0)
end

-- seeds: inputs whose descriptions compile, found by trying byte strings
-- inputs that once failed, replayed by every run from its seed corpus
local REGRESSIONS = {
  -- a sparse array of 0xFFFFFFFE slots: its encode visited every slot
  "0efdd838075bd80a72130d317413cb633c9305005bd809000000000000000513138b00"
    .. "1311390007cb4313138b434343770600",
}

function M.seeds ()
  local G = FD.lcg(0x5eed5c4e)
  local out = {}
  for _, hex in ipairs(REGRESSIONS) do
    local data = hex:gsub("%x%x", function (h) return string.char(tonumber(h, 16)) end)
    out[#out + 1] = data
    M.check(data)
  end
  for _ = 1, 4000 do
    local t = {}
    for i = 1, 24 + G.int(40) do t[i] = string.char(G.int(256)) end
    local data = table.concat(t)
    if pcall(bitwire.schema, description(reader(data))) then
      out[#out + 1] = data
      M.check(data)
      if #out >= 64 then break end
    end
  end
  return out
end

return M
