-- Validates a schema description and turns it into the normalized form the
-- C compiler (bitwire.core.compile) builds a program from. Every problem is
-- reported here, with the type and field it is in, so C can trust its input.
local M = {}

local mtype, huge = math.type, math.huge

-- Options each field type accepts besides the common ones.
local OPTIONS = {
  int = { min = true, max = true },
  uint = { bits = true },
  bool = {},
  float = { min = true, max = true, res = true, clamp = true, delta = true,
            tiers = true },
  float32 = {},
  float64 = {},
  enum = { values = true },
  string = { max = true },
  bytes = { max = true, min = true, count = true },
  array = { of = true, max = true, min = true, count = true },
  vector = { min = true, max = true, res = true, count = true, clamp = true },
  align = {},
  check = { magic = true },
  sparse = { of = true, max = true, encoding = true, tiers = true },
  quat = { bits = true, delta = true, tiers = true },
  angle = { bits = true, unit = true, delta = true, tiers = true },
  tiered = { tiers = true, min = true, max = true },
}
local COMMON = { optional = true, default = true, since = true, removed = true }
local KEYED = { align = true, check = true }   -- may stand without a name
local ENCODINGS = { mask = 0, index = 1, relative = 2, auto = 3 }
-- the article's relative-index tiers: +1, 2..5, 6..13, ... 62..125
M.ARTICLE_TIERS = { 0, 2, 3, 4, 5, 6 }

local function fail(where, fmt, ...)
  error("bitwire.schema: " .. where .. ": " .. string.format(fmt, ...), 0)
end

local function isint(v) return mtype(v) == "integer" end

local function isfinite(v)
  return type(v) == "number" and v == v and v ~= huge and v ~= -huge
end

-- x rounded to float32, or nil when it is beyond float32's range
local FLT_MAX = 3.4028234663852886e38
local function f32(x)
  if not (x >= -FLT_MAX and x <= FLT_MAX) then return nil end
  return (string.unpack("<f", string.pack("<f", x)))
end

local function checkint(where, f, key, lo, hi)
  local v = f[key]
  if not isint(v) then
    fail(where, "'%s' must be an integer, got %s", key, v == nil and "nothing"
      or type(v) == "number" and tostring(v) or type(v))
  end
  if (lo and v < lo) or (hi and v > hi) then
    fail(where, "'%s' = %d outside [%s, %s]", key, v, tostring(lo or "-inf"),
      tostring(hi or "inf"))
  end
  return v
end

local function checkrange(where, f)
  local min, max = checkint(where, f, "min"), checkint(where, f, "max")
  if min > max then fail(where, "min %d > max %d", min, max) end
  return min, max
end

-- Count options: fixed `count`, or `max` with optional `min` (default 0).
local function checkcount(where, f, out)
  if f.count ~= nil then
    if f.max ~= nil or f.min ~= nil then
      fail(where, "give either 'count' or 'max' (and 'min'), not both")
    end
    out.min = checkint(where, f, "count", 0)
    out.max, out.fixed = out.min, true
  else
    if f.max == nil then fail(where, "needs 'max' or 'count'") end
    out.max = checkint(where, f, "max", 0)
    out.min = f.min == nil and 0 or checkint(where, f, "min", 0)
    if out.min > out.max then fail(where, "min %d > max %d", out.min, out.max) end
  end
end

local function checkfloat(where, f, out)
  for _, k in ipairs { "min", "max", "res" } do
    if not isfinite(f[k]) then
      fail(where, "'%s' must be a finite number, got %s", k, tostring(f[k]))
    end
  end
  if not (f.min < f.max) then fail(where, "min %s >= max %s", f.min, f.max) end
  if not (f.res > 0) then fail(where, "res must be > 0, got %s", f.res) end
  -- the wire quantizes in float32 (DESIGN.md): the range must survive it
  local fmin, fmax, fres = f32(f.min), f32(f.max), f32(f.res)
  if not (fmin and fmax and fres and fmin < fmax and fres > 0
          and f32(fmax - fmin)) then
    fail(where, "min %s, max %s, res %s do not fit float32", f.min, f.max, f.res)
  end
  if f.clamp ~= nil and type(f.clamp) ~= "boolean" then
    fail(where, "'clamp' must be a boolean")
  end
  out.fmin, out.fmax, out.res, out.clamp = f.min, f.max, f.res, f.clamp or nil
end

local function checktiers(where, tiers)
  if type(tiers) ~= "table" or #tiers == 0 or #tiers > 16 then
    fail(where, "'tiers' must be a list of 1 to 16 bit widths")
  end
  local out = {}
  for i, b in ipairs(tiers) do
    if not isint(b) or b < 0 or b > 32 then
      fail(where, "tier %d: width must be an integer in [0, 32]", i)
    end
    out[i] = b
  end
  return out
end

local normfield

-- delta = "relative" (float, quat, angle): in deltas, a difference from the
-- baseline in prefix tiers; C checks that float codes come back exactly.
local RELATIVE = { float = true, quat = true, angle = true }
local function normrelative(where, f, out)
  if f.delta == nil then
    if f.tiers ~= nil then fail(where, "'tiers' needs delta = \"relative\"") end
    return
  end
  if f.delta ~= "relative" then
    fail(where, "'delta' must be \"relative\", got %s", tostring(f.delta))
  end
  if out.kind == "quat" and out.bits > 22 then
    fail(where, "a relative quat needs bits <= 22 (float32 holds no finer steps)")
  end
  out.relative = true
  if f.tiers ~= nil then out.tiers = checktiers(where, f.tiers) end
end

M.MAXDEPTH = 32   -- the C core's BW_MAXDEPTH

-- An element description ('of'): a type name or an inline field; its
-- nesting is bounded here so a hostile file cannot overflow the stack.
local function normelement(of, where, named, ctx)
  ctx.depth = (ctx.depth or 0) + 1
  if ctx.depth > M.MAXDEPTH then
    fail(where, "nesting deeper than %d levels", M.MAXDEPTH)
  end
  local out = normfield(type(of) == "string" and { of } or of, where, named, ctx)
  ctx.depth = ctx.depth - 1
  return out
end

-- The value a default must be for field 'out'; returns the normalized one.
local function checkdefault(where, out, d)
  local k = out.kind
  local ok
  if k == "int" or k == "tiered" then
    ok = isint(d) and d >= out.min and d <= out.max
  elseif k == "uint" then
    ok = isint(d) and (out.bits == 64 or (d >= 0 and d >> out.bits == 0))
  elseif k == "bool" then ok = type(d) == "boolean"
  elseif k == "float" then ok = isfinite(d) and d >= out.fmin and d <= out.fmax
  elseif k == "angle" then ok = isfinite(d)
  elseif k == "float32" or k == "float64" then ok = type(d) == "number"
  elseif k == "enum" then
    for i, v in ipairs(out.values) do
      if v == d then return i - 1 end
    end
  elseif k == "string" then
    ok = type(d) == "string" and #d <= out.max and utf8.len(d) ~= nil
      and not d:find("\0", 1, true)
  elseif k == "bytes" then
    ok = type(d) == "string" and #d >= out.min and #d <= out.max
  else
    fail(where, "a %s field cannot have a default", k)
  end
  if not ok then fail(where, "default %s does not fit the field", tostring(d)) end
  return d
end

-- Normalize one field or element description 'f' found at 'where'.
-- 'named' is false for array elements, which carry only a type.
function normfield(f, where, named, ctx)
  if type(f) ~= "table" then fail(where, "field must be a table, got %s", type(f)) end
  local out, kind = {}
  if named then
    local name = f[1]
    if KEYED[name] and f[2] == nil then
      kind = name
    else
      if type(name) ~= "string" or name == "" then
        fail(where, "field name (first entry) must be a non-empty string")
      end
      out.name, kind = name, f[2]
      where = where .. "." .. name
    end
  else
    kind = f[1]
  end
  if type(kind) ~= "string" then
    fail(where, "field type must be a string, got %s", type(kind))
  end
  for k in pairs(f) do
    if not (isint(k) and k >= 1 and k <= (named and 2 or 1)) then
      if type(k) ~= "string" then
        fail(where, "unexpected entry [%s]", tostring(k))
      end
      local opts = OPTIONS[kind]
      if not (COMMON[k] or (opts and opts[k])) then
        fail(where, "unknown option '%s' for type %s", k, kind)
      end
    end
  end
  if not named and (f.optional ~= nil or f.since ~= nil or f.removed ~= nil) then
    fail(where, "array elements cannot be optional or versioned")
  end
  if OPTIONS[kind] == nil then      -- a type of this schema
    if ctx.index[kind] == nil then fail(where, "unknown type '%s'", kind) end
    out.kind, out.type = "struct", ctx.index[kind]
    out.typename = kind
  else
    out.kind = kind
  end
  if kind == "int" then
    out.min, out.max = checkrange(where, f)
  elseif kind == "uint" then
    out.bits = checkint(where, f, "bits", 1, 64)
  elseif kind == "float" then
    checkfloat(where, f, out)
  elseif kind == "enum" then
    local vals = f.values
    if type(vals) ~= "table" or #vals == 0 then
      fail(where, "'values' must be a non-empty list of strings")
    end
    local seen = {}
    out.values = {}
    for i, v in ipairs(vals) do
      if type(v) ~= "string" then fail(where, "enum value %d is not a string", i) end
      if seen[v] then fail(where, "duplicate enum value '%s'", v) end
      seen[v], out.values[i] = true, v
    end
    if #out.values ~= #vals or next(vals, #vals > 0 and #vals or nil) then
      for k in pairs(vals) do
        if not (isint(k) and k >= 1 and k <= #vals) then
          fail(where, "'values' must be a plain list")
        end
      end
    end
  elseif kind == "string" then
    out.max = checkint(where, f, "max", 0)
  elseif kind == "bytes" then
    checkcount(where, f, out)
  elseif kind == "array" or kind == "vector" then
    if kind == "vector" then   -- sugar: fixed array of quantized floats
      -- min and max are the float range here, not the count's
      if f.count == nil then fail(where, "vector needs 'count' (dimensions)") end
      out.min = checkint(where, f, "count", 0)
      out.max, out.fixed = out.min, true
      out.kind = "array"
      local e = { kind = "float" }
      checkfloat(where, f, e)
      out.of = e
    else
      checkcount(where, f, out)
      if f.of == nil then fail(where, "array needs 'of'") end
      out.of = normelement(f.of,
        where .. "[]", false, ctx)
    end
  elseif kind == "check" then
    out.magic = f.magic == nil and 0x12345678
      or checkint(where, f, "magic", 0, 0xFFFFFFFF)
  elseif kind == "sparse" then
    if f.of == nil then fail(where, "sparse needs 'of'") end
    out.max = checkint(where, f, "max", 1, 0xFFFFFFFE)
    local enc = f.encoding == nil and "auto" or f.encoding
    if ENCODINGS[enc] == nil then
      fail(where, "unknown encoding '%s' (mask, index, relative or auto)",
        tostring(enc))
    end
    out.encoding = ENCODINGS[enc]
    if f.tiers ~= nil then
      if f.tiers == "article" then out.tiers = M.ARTICLE_TIERS
      else out.tiers = checktiers(where, f.tiers) end
    end
    out.of = normelement(f.of,
      where .. "[]", false, ctx)
  elseif kind == "quat" then
    out.bits = checkint(where, f, "bits", 2, 31)
  elseif kind == "angle" then
    out.bits = checkint(where, f, "bits", 1, 32)
    if f.unit ~= nil and f.unit ~= "rad" and f.unit ~= "deg" then
      fail(where, "'unit' must be \"rad\" or \"deg\", got %s", tostring(f.unit))
    end
    out.unit = f.unit or "rad"
    out.period = out.unit == "deg" and 360 or 2 * math.pi
  elseif kind == "tiered" then
    out.tiers = checktiers(where, f.tiers)
    out.min = f.min == nil and 0 or checkint(where, f, "min")
    local span = 0
    for _, b in ipairs(out.tiers) do span = span + (1 << b) end
    out.max = out.min + span - 1
    if f.max ~= nil then
      local mx = checkint(where, f, "max")
      if mx > out.max then
        fail(where, "max %d beyond what the tiers cover (%d)", mx, out.max)
      end
      if mx < out.min then fail(where, "min %d > max %d", out.min, mx) end
      out.max = mx
    end
  end
  if RELATIVE[kind] then normrelative(where, f, out) end
  if f.optional ~= nil then
    if type(f.optional) ~= "boolean" then fail(where, "'optional' must be a boolean") end
    out.optional = f.optional or nil
  end
  if (kind == "align" or kind == "check") and (f.optional or f.default ~= nil) then
    fail(where, "%s cannot be optional or have a default", kind)
  end
  if f.since ~= nil then out.since = checkint(where, f, "since", 0, 0xFFFFFFFE) end
  if f.removed ~= nil then
    out.removed = checkint(where, f, "removed", 1, 0xFFFFFFFE)
    if out.removed <= (out.since or 0) then
      fail(where, "removed %d must come after since %d", out.removed, out.since or 0)
    end
  end
  if f.default ~= nil then out.default = checkdefault(where, out, f.default) end
  return out
end

-- Returns the normalized description: { types = { {name, fields}, ... } }
-- sorted by type name, so the program and its fingerprint do not depend on
-- the hash order of the description.
function M.normalize(desc)
  if type(desc) ~= "table" then
    error("bitwire.schema: description must be a table, got " .. type(desc), 0)
  end
  local names = {}
  for name, fields in pairs(desc) do
    if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") then
      error("bitwire.schema: type name " .. tostring(name)
        .. " must be an identifier", 0)
    end
    if OPTIONS[name] or name == "struct" then
      error("bitwire.schema: type name '" .. name .. "' is a built-in type", 0)
    end
    if type(fields) ~= "table" then
      error("bitwire.schema: " .. name .. ": must be a list of fields", 0)
    end
    names[#names + 1] = name
  end
  if #names == 0 then error("bitwire.schema: description has no types", 0) end
  table.sort(names)
  local ctx = { index = {} }
  for i, name in ipairs(names) do ctx.index[name] = i - 1 end
  local types = {}
  for i, name in ipairs(names) do
    local list, seen, fields = desc[name], {}, {}
    for k in pairs(list) do
      if not (isint(k) and k >= 1 and k <= #list) then
        fail(name, "fields must be a list, found key %s", tostring(k))
      end
    end
    for j, f in ipairs(list) do
      local nf = normfield(f, name, true, ctx)
      if nf.name then
        if seen[nf.name] then fail(name .. "." .. nf.name, "duplicate field name") end
        seen[nf.name] = true
      end
      fields[j] = nf
    end
    types[i] = { name = name, fields = fields }
  end
  return { types = types }
end




-- The normalized description as a Lua constructor (keys sorted, floats in
-- hex so they load back exactly), and back: a compiled schema keeps the text
-- so a Lua state that adopts it can still describe and diff it.
local function totext(v, out)
  local tv = type(v)
  if tv == "table" then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function (a, b)
      if type(a) == type(b) then return a < b end
      return type(a) == "number"
    end)
    out[#out + 1] = "{"
    for _, k in ipairs(keys) do
      out[#out + 1] = type(k) == "string" and string.format("[%q]=", k)
        or string.format("[%d]=", k)
      totext(v[k], out)
      out[#out + 1] = ","
    end
    out[#out + 1] = "}"
  elseif tv == "string" then out[#out + 1] = string.format("%q", v)
  elseif mtype(v) == "integer" then out[#out + 1] = string.format("%d", v)
  elseif tv == "number" then out[#out + 1] = string.format("%a", v)
  else out[#out + 1] = tostring(v) end
end

function M.totext(norm)
  local out = {}
  totext(norm, out)
  return table.concat(out)
end

function M.fromtext(text)
  return assert(load("return " .. text, "=description", "t", {}))()
end

return M
