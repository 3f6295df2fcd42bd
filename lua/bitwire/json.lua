-- Values of a schema as JSON and back, along the compiled program:
--   record       object, fields in wire order; an absent optional is an
--                absent key (JSON null reads as absent too)
--   array, quat  array ([x, y, z, w] for a quat)
--   sparse       object keyed by slot number: {"3": {...}, "17": {...}}
--   enum         its name
--   int, uint, tiered  number; beyond 2^53 in magnitude a string of digits,
--                so 64-bit values survive (strings are read back either way,
--                and integer literals exactly); a 64-bit uint past 2^63 (a
--                negative Lua integer) as its unsigned digits; a negative
--                number for a uint is refused
--   float...     number, in the fewest digits that read back as the same
--                value (float32: the same float32); float32/float64 NaN
--                and infinities as the strings
--                "nan", "inf", "-inf"
--   string       string;  bytes: base64 (RFC 4648, with padding)
--   bool         true / false
-- bitwire.json.encode(schema, name, value) -> JSON text (raises on a value
-- that is not of the type); bitwire.json.decode(schema, name, text) -> value
-- | nil, message (then s:encode checks ranges as usual).
local M = {}

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

function M.base64(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = s:byte(i, i + 2)
    local n = (a << 16) | ((b or 0) << 8) | (c or 0)
    local k = { (n >> 18) & 63, (n >> 12) & 63, (n >> 6) & 63, n & 63 }
    out[#out + 1] = B64:sub(k[1] + 1, k[1] + 1) .. B64:sub(k[2] + 1, k[2] + 1)
      .. (b and B64:sub(k[3] + 1, k[3] + 1) or "=")
      .. (c and B64:sub(k[4] + 1, k[4] + 1) or "=")
  end
  return table.concat(out)
end

local UNB64 = {}
for i = 1, 64 do UNB64[B64:byte(i)] = i - 1 end

function M.unbase64(s)
  if #s % 4 ~= 0 then return nil end
  local out = {}
  for i = 1, #s, 4 do
    local n, pad = 0, 0
    for j = i, i + 3 do
      local c = s:byte(j)
      local v = UNB64[c]
      if c == 61 and j >= #s - 1 then pad, v = pad + 1, 0
      elseif v == nil or pad > 0 then return nil end
      n = (n << 6) | v
    end
    out[#out + 1] = string.char((n >> 16) & 255, (n >> 8) & 255, n & 255):sub(1, 3 - pad)
  end
  return table.concat(out)
end

local SAFE = 1 << 53

-- A missing lua-cjson is the installation's state, not a fault at the
-- caller's line: no position, so `bitwire encode` says it in one line
-- (the rock does not depend on lua-cjson).
local function cjson()
  local ok, c = pcall(require, "cjson")
  if not ok then error("bitwire.json needs lua-cjson (module 'cjson')", 0) end
  return c
end

-- Fail at 'path' (from the top value: "" for the value itself); M.encode
-- and M.decode name the type before it.
local function fail(path, msg) error({ path = path, msg = msg }, 0) end

local function named(name, path) return path == "" and name or name .. "." .. path end

-- {===== value -> JSON text =====

local encvalue

local function encfields(c, types, ty, v, path, out)
  if type(v) ~= "table" then fail(path, "expected a table, got " .. type(v)) end
  out[#out + 1] = "{"
  local first = true
  for _, f in ipairs(ty.fields) do
    if f.name ~= nil and v[f.name] ~= nil then
      if not first then out[#out + 1] = "," end
      first = false
      out[#out + 1] = c.encode(f.name) .. ":"
      encvalue(c, types, f, v[f.name], path == "" and f.name or path .. "." .. f.name, out)
    end
  end
  out[#out + 1] = "}"
end

-- The decimal digits of integer 'v' read as a uint64 (Lua holds one past
-- 2^63 as a negative integer): unsigned // 10 without overflow, then the
-- last digit.
function M.unsigned(v)
  if v >= 0 then return tostring(v) end
  local q = (v >> 1) // 5
  return string.format("%d%d", q, v - q * 10)
end

-- A float in the fewest digits that read back as the same number (as the
-- same float32 for a float32), so decode -> encode keeps the bytes: cjson's
-- 14 significant digits print 0.30000000000000004 as 0.3. From 14 digits (6
-- for a float32) up, so whole numbers print without an exponent.
function M.float(v, float32)
  local p, max = 14, 17
  if float32 then p, max = 6, 9 end
  local s
  repeat
    s = string.format("%." .. p .. "g", v)
    local back = tonumber(s)
    if float32 then
      if string.pack("<f", back) == string.pack("<f", v) then return s end
    elseif back == v then return s end
    p = p + 1
  until p > max
  return s
end

local function encnumber(v, path, float32)
  if type(v) ~= "number" then
    fail(path, "expected a number, got " .. type(v))
  end
  if v ~= v then return '"nan"' end
  if v == math.huge then return '"inf"' end
  if v == -math.huge then return '"-inf"' end
  if math.type(v) == "integer" then
    if v > SAFE or v < -SAFE then return '"' .. v .. '"' end
    return tostring(v)
  end
  return M.float(v, float32)
end

function encvalue(c, types, f, v, path, out)
  local k = f.kind
  if k == "struct" then return encfields(c, types, types[f.type], v, path, out) end
  if k == "array" or k == "quat" then
    if type(v) ~= "table" then fail(path, "expected a list, got " .. type(v)) end
    out[#out + 1] = "["
    for i = 1, #v do
      if i > 1 then out[#out + 1] = "," end
      if k == "quat" then out[#out + 1] = encnumber(v[i], path .. "[" .. i .. "]")
      else encvalue(c, types, f.of, v[i], path .. "[" .. i .. "]", out) end
    end
    out[#out + 1] = "]"
  elseif k == "sparse" then
    if type(v) ~= "table" then fail(path, "expected a table, got " .. type(v)) end
    local slots = {}
    for i in pairs(v) do
      if math.type(i) ~= "integer" then
        fail(path, "slot keys must be integers, got " .. tostring(i))
      end
      slots[#slots + 1] = i
    end
    table.sort(slots)
    out[#out + 1] = "{"
    for n, i in ipairs(slots) do
      if n > 1 then out[#out + 1] = "," end
      out[#out + 1] = '"' .. i .. '":'
      encvalue(c, types, f.of, v[i], path .. "[" .. i .. "]", out)
    end
    out[#out + 1] = "}"
  elseif k == "bytes" then
    if type(v) ~= "string" then fail(path, "expected a string, got " .. type(v)) end
    out[#out + 1] = '"' .. M.base64(v) .. '"'
  elseif k == "string" or k == "enum" then
    if type(v) ~= "string" then fail(path, "expected a string, got " .. type(v)) end
    out[#out + 1] = c.encode(v)
  elseif k == "bool" then
    if type(v) ~= "boolean" then fail(path, "expected a boolean, got " .. type(v)) end
    out[#out + 1] = tostring(v)
  elseif k == "uint" and math.type(v) == "integer" and v < 0 then
    -- a uint of 64 bits past 2^63: its unsigned digits
    out[#out + 1] = '"' .. M.unsigned(v) .. '"'
  else
    out[#out + 1] = encnumber(v, path, k == "float32")
  end
end

local function program(schema, name, fn)
  if type(name) ~= "string" then
    error("bitwire.json." .. fn .. ": type name must be a string", 3)
  end
  local p = schema:program()
  if p.byname[name] == nil then
    error("bitwire.json." .. fn .. ": no type '" .. name .. "'", 3)
  end
  return p
end

function M.encode(schema, name, value)
  local p = program(schema, name, "encode")
  local c = cjson()
  local out = {}
  local ok, err = pcall(encfields, c, p.byname, p.byname[name], value, "", out)
  if not ok then
    if type(err) ~= "table" then error(err, 0) end
    error("bitwire.json.encode: " .. named(name, err.path) .. ": " .. err.msg, 2)
  end
  return table.concat(out)
end

-- }=====

-- {===== JSON value -> Lua value =====

local decvalue


-- cjson reads every number as a double, so an integer literal past 2^53
-- would come back rounded. Each such literal goes to cjson as a stand-in,
-- a number no other literal of the text reads as; the table returned maps
-- the stand-ins back to the literals' digits (read as for strings of
-- digits). Returns the text cjson reads and that table.
local function bigints(text)
  local lits, big, i = {}, {}, 1
  while true do   -- the number literals outside strings
    local j = text:find('[%-%d"]', i)
    if j == nil then break end
    if text:byte(j) == 34 then   -- a string: past its closing quote
      local q = text:find('[\\"]', j + 1)
      while q and text:byte(q) == 92 do q = text:find('[\\"]', q + 2) end
      if q == nil then break end   -- unterminated: cjson says so
      i = q + 1
    else
      local e = select(2, text:find("^%-?%d*[%.%deE%+%-]*", j))
      local lit = text:sub(j, e)
      local int = lit:match("^%-?%d+$")
      local n = int and math.tointeger(tonumber(int))
      lits[#lits + 1] = { j, e, lit, big = int ~= nil and (n == nil or n > SAFE or n < -SAFE) }
      i = e + 1
    end
  end
  local taken, out, at, k = {}, {}, 1, 0
  for _, l in ipairs(lits) do
    if not l.big and tonumber(l[3]) then taken[tonumber(l[3])] = true end
  end
  for _, l in ipairs(lits) do
    if l.big then
      local stand
      repeat   -- a fraction no other literal of the text reads as
        k = k + 1
        stand = -(2.0 ^ 51 + k + 0.5)
      until not taken[stand]
      big[stand] = l[3]
      out[#out + 1] = text:sub(at, l[1] - 1) .. string.format("%.17g", stand)
      at = l[2] + 1
    end
  end
  out[#out + 1] = text:sub(at)
  return table.concat(out), big
end

-- The integer a string of decimal digits (with an optional '-') names,
-- read exactly, or nil past 64 bits: -2^63 .. 2^63 - 1, and for a uint up
-- to 2^64 - 1 (held wrapped, as the negative Lua integer a uint64 is).
-- Compared as digits: tonumber would round a literal past the limits to a
-- float, and -2^63 - 1 would come back as -2^63.
local function exactint(v, unsigned)
  local neg, digits = v:match("^(%-?)0*(%d*)$")
  local limit = neg == "-" and "9223372036854775808"
    or unsigned and "18446744073709551615" or "9223372036854775807"
  if #digits > #limit or (#digits == #limit and digits > limit) then return nil end
  local n = 0
  for d in digits:gmatch("%d") do   -- wraps past 2^63 only for a uint64
    if neg == "-" then n = n * 10 - tonumber(d) else n = n * 10 + tonumber(d) end
  end
  return n
end

-- A uint's JSON is its unsigned value: a negative one is refused, where
-- s:encode takes a negative Lua integer for a uint64 (the wrapped form Lua
-- holds one past 2^63 in), and -1 would silently become 2^64 - 1.
local function decint(v, path, f)
  local unsigned = f.kind == "uint"
  if unsigned and (type(v) == "number" and v < 0
                   or type(v) == "string" and v:match("^%-0*[1-9]%d*$")) then
    fail(path, string.format("%s is negative; a uint of %d bits takes 0..%s",
      type(v) == "string" and v or tostring(math.tointeger(v) or v), f.bits,
      M.unsigned((1 << f.bits) - 1)))
  end
  if type(v) == "string" and v:match("^%-?%d+$") then
    local n = exactint(v, unsigned)
    if n ~= nil then return n end
    fail(path, "'" .. v .. "' does not fit 64 bits")
  end
  if type(v) == "string" then fail(path, "'" .. v .. "' is not an integer") end
  local n = math.tointeger(v)
  if n == nil then fail(path, "expected an integer, got " .. tostring(v)) end
  return n
end

local FLOATS = { nan = 0 / 0, inf = math.huge, ["-inf"] = -math.huge }

-- cjson (2.1.0) reads a JSON array and an object both as a table, marking
-- neither: an object's keys are strings, an array's the integers 1..n. ({}
-- and [] read alike, as an empty table: either passes.)
local function isarray(v)
  if type(v) ~= "table" then return false end
  local k = next(v)
  return k == nil or math.type(k) == "integer"
end
local function isobject(v)
  return type(v) == "table" and type(next(v)) ~= "number"
end

local function decfields(c, types, ty, v, path)
  if not isobject(v) then fail(path, "expected an object") end
  local t, known = {}, {}
  for _, f in ipairs(ty.fields) do
    if f.name ~= nil then
      known[f.name] = true
      local x = v[f.name]
      if x ~= nil and x ~= c.null then
        t[f.name] = decvalue(c, types, f, x, path == "" and f.name or path .. "." .. f.name)
      end
    end
  end
  for k in pairs(v) do
    if not known[k] then fail(path, "unknown field '" .. tostring(k) .. "'") end
  end
  return t
end

function decvalue(c, types, f, v, path)
  local k = f.kind
  if k == "struct" then return decfields(c, types, types[f.type], v, path) end
  if k == "array" or k == "quat" then
    if not isarray(v) then fail(path, "expected an array") end
    local t = {}
    for i = 1, #v do
      t[i] = k == "quat" and decvalue(c, types, { kind = "float64" }, v[i], path .. "[" .. i .. "]")
        or decvalue(c, types, f.of, v[i], path .. "[" .. i .. "]")
    end
    return t
  elseif k == "sparse" then
    if not isobject(v) then fail(path, "expected an object keyed by slot") end
    local t, seen = {}, {}
    for key, x in pairs(v) do
      -- decimal digits, as an int's string: tonumber took " 1", "1.0" and
      -- "0x1" too, so two keys could name one slot and either one won
      local i = type(key) == "string" and key:match("^%-?%d+$") and exactint(key)
      if not i then fail(path, "slot key '" .. tostring(key) .. "' is not an integer") end
      if seen[i] then
        fail(path, string.format("keys '%s' and '%s' name the same slot", seen[i], key))
      end
      seen[i] = key
      if x ~= c.null then t[i] = decvalue(c, types, f.of, x, path .. "[" .. i .. "]") end
    end
    return t
  elseif k == "bytes" then
    local b = type(v) == "string" and M.unbase64(v)
    if not b then fail(path, "expected base64") end
    return b
  elseif k == "string" or k == "enum" then
    if type(v) ~= "string" then fail(path, "expected a string") end
    return v
  elseif k == "bool" then
    if type(v) ~= "boolean" then fail(path, "expected true or false") end
    return v
  elseif k == "int" or k == "uint" or k == "tiered" then
    return decint(c.big[v] or v, path, f)
  end
  if c.big[v] then return tonumber(c.big[v]) + 0.0 end
  if type(v) == "string" and FLOATS[v] then return FLOATS[v] end
  if type(v) ~= "number" then fail(path, "expected a number") end
  return v
end

function M.decode(schema, name, text)
  local p = program(schema, name, "decode")
  if type(text) ~= "string" then error("bitwire.json.decode: text must be a string", 2) end
  local c = cjson()
  local cjtext, big = bigints(text)
  local ok, v = pcall(c.decode, cjtext)
  if not ok then return nil, "bitwire.json.decode: " .. tostring(v):gsub("^.-: ", "") end
  local ok2, t = pcall(decfields, { null = c.null, big = big }, p.byname, p.byname[name], v, "")
  if not ok2 then
    if type(t) ~= "table" then error(t, 0) end
    return nil, "bitwire.json.decode: " .. named(name, t.path) .. ": " .. t.msg
  end
  return t
end

-- }=====

return M
