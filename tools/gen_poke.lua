-- Out-of-range integers for the generated-code cross test: the integers of
-- a type's value the C and C++ harnesses can set (pokes.inc) and values for
-- them past their field's range but inside their C type, so that the test
-- checks the generated writers clamp (clamp = true) or refuse them as the
-- driver does.
local ctypes = require "bitwire.gen.ctypes"

local M = {}

local fmt, random = string.format, math.random

local INTS = { int = true, tiered = true, uint = true, enum = true }

-- The integers of type 't': top-level fields and elements of top-level
-- arrays and sparse arrays, each { f = field, name =, elem =, stmt = C },
-- the statement setting it in struct 'v' (element 'idx') by SET().
function M.spots(program, t)
  local out = {}
  for _, f in ipairs(ctypes.fields(program, t)) do
    local m = f.name and ctypes.ident(f.name)
    if m and INTS[f.kind] then
      out[#out + 1] = { f = f, name = f.name,
        stmt = (f.optional and fmt("v->has_%s = 1; ", m) or "") .. fmt("SET(v->%s)", m) }
    elseif m and (f.kind == "array" or f.kind == "sparse") and INTS[f.of.kind] then
      out[#out + 1] = { f = f.of, name = f.name, elem = true, stmt = fmt("SET(v->%s[idx])", m) }
    end
  end
  return out
end

-- pokes.inc: POKE(type id, spot, C type, statement) lines.
function M.include(program)
  local lines = {}
  for _, t in ipairs(program.types) do
    for k, s in ipairs(M.spots(program, t)) do
      lines[#lines + 1] = fmt("POKE(%d, %d, %s, %s)", t.id, k - 1, ctypes.ident(t.name), s.stmt)
    end
  end
  return table.concat(lines, "\n") .. "\n"
end

-- A value of field 'f''s C type, mostly out of the range the driver takes
-- (one in six inside, as a control); nil when that type holds none a Lua
-- integer can stand for (a uint64_t past 2^63 - 1).
function M.value(f)
  if f.kind == "enum" then   -- C++ defines an enum only within its values' bits
    local top = (1 << ctypes.bitlen(#f.values - 1)) - 1
    return top >= #f.values and random(#f.values, top) or nil
  end
  if f.kind == "uint" and f.bits == 64 then return nil end
  local lo, hi = ctypes.range(f)
  local _, tlo, thi = ctypes.inttype(lo, hi)
  if thi == -1 then thi = math.maxinteger end
  local picks = {}
  if lo > tlo then picks[#picks + 1] = { lo - 1, tlo, random(tlo, lo - 1) } end
  if hi < thi then picks[#picks + 1] = { hi + 1, thi, random(hi + 1, thi) } end
  if #picks == 0 then return nil end
  if random(6) == 1 then return random(lo, hi) end
  return picks[random(#picks)][random(3)]
end

-- Set spot 's' of the decoded value 'v' to 'val' (an enum to a name it
-- does not have) as the harness will; the element's index from 0 (0 for a
-- field), or nil when 'v' has no element there.
function M.apply(v, s, val)
  local x = s.f.kind == "enum" and fmt("#%d", val) or val
  if not s.elem then
    v[s.name] = x
    return 0
  end
  local list, at = v[s.name], {}
  if list == nil then return nil end
  for i in pairs(list) do at[#at + 1] = i end   -- sparse: the slots set
  if #at == 0 then return nil end
  table.sort(at)
  local i = at[random(#at)]
  list[i] = x
  return i - 1
end

-- The harness's line for 'v' (spot 's' set) written by the driver: the
-- bytes and bits, or "W range" when it refuses the value; nil, message when
-- it refuses it for another reason.
function M.expect(sv, name, v, tohex)
  local ok, e = pcall(sv.encode, sv, name, v)
  if ok then return fmt("O %s %d", tohex(e), sv:bits(name, v)) end
  e = tostring(e)
  if e:find("out of range", 1, true) or e:find("does not fit", 1, true)
     or e:find("not one of", 1, true) then
    return "W range"
  end
  return nil, e
end

return M
