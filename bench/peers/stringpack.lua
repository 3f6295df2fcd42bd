-- bench/peers/stringpack.lua - the Snapshot with string.pack, by hand.
-- Same quantization as bitwire, each value in the smallest whole-byte
-- format: id I2, kind B, x/y/z I3 (17-bit steps), yaw I2 (11-bit steps),
-- health B, f1..f4 and the name's presence bit in one byte, name s1.
-- Header: tick I3, ack I2, count B. What a Lua programmer writes without a
-- bit packer; string.unpack raises on short input, so decode may raise.
local msg = require "bench.message"

local pack, unpack, concat = string.pack, string.unpack, table.concat
local POS, YAW = msg.POS, msg.YAW
local PMIN, PK, PMIV, PSTEP = POS.min, POS.k, POS.miv, POS.step
local YMIN, YK, YMIV, YSTEP = YAW.min, YAW.k, YAW.miv, YAW.step

local HEAD, ENT = "<I3I2B", "<I2BI3I3I3I2BB"

local M = {name = "string.pack"}

local function qpos (v)
  local t = (v - PMIN) * PK
  if not (t >= 0) then return 0 end  -- also NaN
  if t >= PMIV then return PMIV end
  return (t + 0.5) // 1
end

local function qyaw (v)
  local t = (v - YMIN) * YK
  if not (t >= 0) then return 0 end
  if t >= YMIV then return YMIV end
  return (t + 0.5) // 1
end

function M.encode (v)
  local ents = v.entities
  local n = #ents
  local parts = {pack(HEAD, v.tick, v.ack, n)}
  local np = 1
  for i = 1, n do
    local e = ents[i]
    local name = e.name
    local flags = (e.f1 and 1 or 0) | (e.f2 and 2 or 0) | (e.f3 and 4 or 0)
                  | (e.f4 and 8 or 0) | (name and 16 or 0)
    np = np + 1
    parts[np] = pack(ENT, e.id, e.kind, qpos(e.x), qpos(e.y), qpos(e.z),
                     qyaw(e.yaw), e.health, flags)
    if name then
      np = np + 1
      parts[np] = pack("s1", name)
    end
  end
  return concat(parts, "", 1, np)
end

function M.decode (s)
  local tick, ack, n, pos = unpack(HEAD, s)
  local ents = {}
  for i = 1, n do
    local id, kind, x, y, z, yaw, health, flags
    id, kind, x, y, z, yaw, health, flags, pos = unpack(ENT, s, pos)
    local e = {
      id = id, kind = kind,
      x = x * PSTEP + PMIN, y = y * PSTEP + PMIN, z = z * PSTEP + PMIN,
      yaw = yaw * YSTEP + YMIN, health = health,
      f1 = flags & 1 ~= 0, f2 = flags & 2 ~= 0, f3 = flags & 4 ~= 0,
      f4 = flags & 8 ~= 0,
    }
    if flags & 16 ~= 0 then e.name, pos = unpack("s1", s, pos) end
    ents[i] = e
  end
  return {tick = tick, ack = ack, entities = ents}
end

return M
