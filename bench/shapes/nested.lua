-- bench/shapes/nested.lua - records three levels deep: a snapshot of 64
-- entities, each with pos and vel Vec3 records and an aim record of two
-- quantized angles. Hand C: bench/handc_nested.c.
local C = require "bench.shapes.common"

local PI = math.pi
local M = {name = "nested", type = "Snapshot", handc = "nested", tol = 0.01}

M.description = {
  Vec3 = {
    {"x", "float", min = -512, max = 512, res = 0.01},
    {"y", "float", min = -512, max = 512, res = 0.01},
    {"z", "float", min = -512, max = 512, res = 0.01},
  },
  Aim = {
    {"yaw", "float", min = 0, max = 2 * PI, res = math.rad(0.35)},
    {"pitch", "float", min = -PI / 2, max = PI / 2, res = math.rad(0.35)},
  },
  Entity = {
    {"id", "int", min = 0, max = 4095},
    {"pos", "Vec3"},
    {"vel", "Vec3"},
    {"aim", "Aim"},
    {"health", "int", min = 0, max = 100},
  },
  Snapshot = {
    {"tick", "uint", bits = 20},
    {"entities", "array", of = "Entity", max = 64},
  },
}

function M.data (seed, n)
  local int, float = C.lcg(seed or 7)
  local ents = {}
  local function vec (r)
    return {x = (float() * 2 - 1) * r, y = (float() * 2 - 1) * r,
            z = (float() * 2 - 1) * r}
  end
  for i = 1, n or 64 do
    ents[i] = {
      id = int(4096), pos = vec(512), vel = vec(40),
      aim = {yaw = float() * 2 * PI, pitch = (float() - 0.5) * PI},
      health = int(101),
    }
  end
  return {tick = 0x9C5A3, entities = ents}
end

-- {===== string.pack by hand: each value in whole bytes =====

local pack, unpack, concat = string.pack, string.unpack, table.concat
local qpos, dpos = C.quant(C.qfloat(-512, 512, 0.01))
local qyaw, dyaw = C.quant(C.qfloat(0, 2 * PI, math.rad(0.35)))
local qpitch, dpitch = C.quant(C.qfloat(-PI / 2, PI / 2, math.rad(0.35)))
local ENT = "<I2I3I3I3I3I3I3I2I2B"

local P = {name = "string.pack"}
M.pack = P

function P.encode (v)
  local ents = v.entities
  local n = #ents
  local parts = {pack("<I3B", v.tick, n)}
  for i = 1, n do
    local e = ents[i]
    local p, w, a = e.pos, e.vel, e.aim
    parts[i + 1] = pack(ENT, e.id, qpos(p.x), qpos(p.y), qpos(p.z),
                        qpos(w.x), qpos(w.y), qpos(w.z), qyaw(a.yaw),
                        qpitch(a.pitch), e.health)
  end
  return concat(parts)
end

function P.decode (s)
  local tick, n, pos = unpack("<I3B", s)
  local ents = {}
  for i = 1, n do
    local id, px, py, pz, vx, vy, vz, yaw, pitch, health
    id, px, py, pz, vx, vy, vz, yaw, pitch, health, pos = unpack(ENT, s, pos)
    ents[i] = {
      id = id,
      pos = {x = dpos(px), y = dpos(py), z = dpos(pz)},
      vel = {x = dpos(vx), y = dpos(vy), z = dpos(vz)},
      aim = {yaw = dyaw(yaw), pitch = dpitch(pitch)},
      health = health,
    }
  end
  return {tick = tick, entities = ents}
end

-- }=====

return M
