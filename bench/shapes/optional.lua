-- bench/shapes/optional.lua - many optional fields: 64 records of 24
-- optional ints and floats, about a third present. Hand C:
-- bench/handc_optional.c.
local C = require "bench.shapes.common"

local M = {name = "optional", type = "Snapshot", handc = "optional", tol = 0.01}

M.NFIELDS = 24
local NAMES, props = {}, {}
for k = 1, M.NFIELDS do
  NAMES[k] = "o" .. k
  -- odd fields integers, even ones quantized floats
  props[k] = k % 2 == 1 and {NAMES[k], "int", min = 0, max = 1023, optional = true}
             or {NAMES[k], "float", min = -100, max = 100, res = 0.01,
                 optional = true}
end

M.description = {
  Props = props,
  Snapshot = {
    {"tick", "uint", bits = 20},
    {"items", "array", of = "Props", max = 64},
  },
}

function M.data (seed, n)
  local int, float = C.lcg(seed or 7)
  local items = {}
  for i = 1, n or 64 do
    local t = {}
    for k = 1, M.NFIELDS do
      if int(3) == 0 then
        t[NAMES[k]] = k % 2 == 1 and int(1024) or float() * 200 - 100
      end
    end
    items[i] = t
  end
  return {tick = 0x9C5A3, items = items}
end

-- {===== string.pack by hand: a 24-bit presence mask, then 2 bytes each =====

local pack, unpack, concat = string.pack, string.unpack, table.concat
local mtype = math.type
local qf, df = C.quant(C.qfloat(-100, 100, 0.01))

local P = {name = "string.pack"}
M.pack = P

function P.encode (v)
  local items = v.items
  local n = #items
  local parts, np = {pack("<I3B", v.tick, n)}, 1
  local vals = {}
  for i = 1, n do
    local t = items[i]
    local mask, nv = 0, 0
    for k = 1, M.NFIELDS do
      local x = t[NAMES[k]]
      if x ~= nil then
        mask = mask | 1 << (k - 1)
        nv = nv + 1
        if k % 2 == 1 then
          if mtype(x) ~= "integer" or x < 0 or x > 1023 then
            error(NAMES[k] .. ": out of range")
          end
          vals[nv] = x
        else
          if type(x) ~= "number" or not (x >= -100 and x <= 100) then
            error(NAMES[k] .. ": out of range")
          end
          vals[nv] = qf(x)
        end
      end
    end
    np = np + 1
    parts[np] = pack("<I3" .. ("I2"):rep(nv), mask, table.unpack(vals, 1, nv))
  end
  return concat(parts)
end

function P.decode (s)
  local tick, n, pos = unpack("<I3B", s)
  local items = {}
  for i = 1, n do
    local mask
    mask, pos = unpack("<I3", s, pos)
    local t = {}
    for k = 1, M.NFIELDS do
      if mask & (1 << (k - 1)) ~= 0 then
        local x
        x, pos = unpack("<I2", s, pos)
        t[NAMES[k]] = k % 2 == 1 and x or df(x)
      end
    end
    items[i] = t
  end
  return {tick = tick, items = items}
end

-- }=====

return M
