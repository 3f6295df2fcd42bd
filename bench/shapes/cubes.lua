-- bench/shapes/cubes.lua - sparse records with quaternions: the cube scene
-- of tools/bandwidth.lua (901 slots, a position, a smallest-three
-- quaternion and a flag each), about a third of the cubes present. Hand C:
-- bench/handc_cubes.c.
local C = require "bench.shapes.common"

local M = {name = "sparse cubes", type = "Snap", handc = "cubes", tol = 0.01}

M.NCUBES = 901
local function q (n, lo, hi)
  return {n, "float", min = lo, max = hi, res = 1 / 512}
end

M.description = {
  Pos = {q("x", -256, 255), q("y", -256, 255), q("z", 0, 32)},
  Cube = {{"pos", "Pos"}, {"rot", "quat", bits = 9}, {"at_rest", "bool"}},
  Snap = {{"cubes", "sparse", of = "Cube", max = M.NCUBES, encoding = "auto"}},
}

-- a unit quaternion whose largest component is positive, as decode gives
local function quat (float)
  local v, l, big = {}, 0, 1
  for k = 1, 4 do
    v[k] = float() * 2 - 1
    l = l + v[k] * v[k]
    if math.abs(v[k]) > math.abs(v[big]) then big = k end
  end
  l = math.sqrt(l) * (v[big] < 0 and -1 or 1)
  for k = 1, 4 do v[k] = v[k] / l end
  return v
end

function M.data (seed, every)
  local int, float = C.lcg(seed or 7)
  local cubes = {}
  for i = 1, M.NCUBES do
    if int(every or 3) == 0 then
      cubes[i] = {
        pos = {x = float() * 500 - 250, y = float() * 500 - 250, z = float() * 30},
        rot = quat(float), at_rest = int(2) == 1,
      }
    end
  end
  return {cubes = cubes}
end

-- {===== string.pack by hand: the slot index, then whole bytes =====
-- x, y, z quantized to 1/512 in I3; the quaternion as four i2 (1/32767).

local pack, unpack, concat = string.pack, string.unpack, table.concat
local qxy, dxy = C.quant(C.qfloat(-256, 255, 1 / 512))
local qz, dz = C.quant(C.qfloat(0, 32, 1 / 512))
local CUBE = "<I2I3I3I3i2i2i2i2B"
local function qc (x)
  if type(x) ~= "number" then error("quaternion component: number expected") end
  return math.floor(x * 32767 + 0.5)
end

local P = {name = "string.pack"}
M.pack = P

function P.encode (v)
  local cubes = v.cubes
  local parts, np = {}, 1
  for i = 1, M.NCUBES do
    local c = cubes[i]
    if c then
      local p, r = c.pos, c.rot
      np = np + 1
      parts[np] = pack(CUBE, i, qxy(p.x), qxy(p.y), qz(p.z), qc(r[1]),
                       qc(r[2]), qc(r[3]), qc(r[4]), c.at_rest and 1 or 0)
    end
  end
  parts[1] = pack("<I2", np - 1)
  return concat(parts)
end

function P.decode (s)
  local n, pos = unpack("<I2", s)
  local cubes = {}
  for _ = 1, n do
    local i, x, y, z, a, b, c, d, rest
    i, x, y, z, a, b, c, d, rest, pos = unpack(CUBE, s, pos)
    cubes[i] = {
      pos = {x = dxy(x), y = dxy(y), z = dz(z)},
      rot = {a / 32767, b / 32767, c / 32767, d / 32767},
      at_rest = rest ~= 0,
    }
  end
  return {cubes = cubes}
end

-- }=====

return M
