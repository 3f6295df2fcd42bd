-- bench/shapes/fixed.lua - fixed-count arrays: 64 players, each with 8
-- buttons and 6 inventory slots. Hand C: bench/handc_fixed.c.
local C = require "bench.shapes.common"

local M = {name = "fixed arrays", type = "Snapshot", handc = "fixed", tol = 0}

M.description = {
  Player = {
    {"id", "int", min = 0, max = 4095},
    {"buttons", "array", of = "bool", count = 8},
    {"slots", "array", of = {"int", min = 0, max = 15}, count = 6},
    {"health", "int", min = 0, max = 100},
  },
  Snapshot = {
    {"tick", "uint", bits = 20},
    {"players", "array", of = "Player", max = 64},
  },
}

function M.data (seed, n)
  local int = C.lcg(seed or 7)
  local players = {}
  for i = 1, n or 64 do
    local b, s = {}, {}
    for k = 1, 8 do b[k] = int(2) == 1 end
    for k = 1, 6 do s[k] = int(16) end
    players[i] = {id = int(4096), buttons = b, slots = s, health = int(101)}
  end
  return {tick = 0x9C5A3, players = players}
end

-- {===== string.pack by hand: buttons in a byte, slots in three =====

local pack, unpack, concat = string.pack, string.unpack, table.concat
local ENT = "<I2BI3B"

local P = {name = "string.pack"}
M.pack = P

function P.encode (v)
  local ps = v.players
  local n = #ps
  local parts = {pack("<I3B", v.tick, n)}
  for i = 1, n do
    local p = ps[i]
    local b, s = p.buttons, p.slots
    if #b ~= 8 or #s ~= 6 then error("players[" .. i .. "]: wrong count") end
    local bits = 0
    for k = 1, 8 do
      local x = b[k]
      if type(x) ~= "boolean" then error("buttons: boolean expected") end
      if x then bits = bits | 1 << (k - 1) end
    end
    local sl = 0
    for k = 1, 6 do
      local x = s[k]
      if math.type(x) ~= "integer" or x < 0 or x > 15 then
        error("slots: out of range")
      end
      sl = sl | x << (4 * (k - 1))
    end
    parts[i + 1] = pack(ENT, p.id, bits, sl, p.health)
  end
  return concat(parts)
end

function P.decode (s)
  local tick, n, pos = unpack("<I3B", s)
  local ps = {}
  for i = 1, n do
    local id, bits, sl, health
    id, bits, sl, health, pos = unpack(ENT, s, pos)
    ps[i] = {
      id = id,
      buttons = {bits & 1 ~= 0, bits & 2 ~= 0, bits & 4 ~= 0, bits & 8 ~= 0,
                 bits & 16 ~= 0, bits & 32 ~= 0, bits & 64 ~= 0,
                 bits & 128 ~= 0},
      slots = {sl & 15, sl >> 4 & 15, sl >> 8 & 15, sl >> 12 & 15,
               sl >> 16 & 15, sl >> 20 & 15},
      health = health,
    }
  end
  return {tick = tick, players = ps}
end

-- }=====

return M
