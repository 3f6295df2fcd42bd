-- The seed's RigidBody: velocities are only sent when the body moves.
-- As a schema description the velocities are optional fields (a presence
-- bit each); as a unified serialize function it is the seed's code: one
-- at_rest bool, and on read a resting body gets zero velocities.
--
--   LUA_PATH="./lua/?.lua;./lua/?/init.lua;;" LUA_CPATH="./build/?.so;;" \
--     lua5.4 examples/rigidbody.lua
local bitwire = require "bitwire"
local cjson = require "cjson"

-- ranges: position +-1024 m by 1 cm, quaternion components by 0.001,
-- velocities +-64 by 0.01 (a quantized vector is a fixed array of floats)
local POS = { count = 3, min = -1024, max = 1024, res = 0.01 }
local ROT = { count = 4, min = -1, max = 1, res = 0.001 }
local VEL = { count = 3, min = -64, max = 64, res = 0.01 }

local function vector (name, r, optional)
  return { name, "vector", count = r.count, min = r.min, max = r.max, res = r.res,
           optional = optional }
end

-- {===== as a schema description =====
local schema = bitwire.schema {
  RigidBody = {
    vector("position", POS),
    vector("orientation", ROT),
    vector("linear_velocity", VEL, true),    -- absent when at rest
    vector("angular_velocity", VEL, true),
  },
}
-- }=====

-- {===== as the seed's unified serialize function =====
local function floats (r)
  return function (s, t)
    for i = 1, r.count do s:compressed_float(t, i, r.min, r.max, r.res) end
  end
end
local pos, rot, vel = floats(POS), floats(ROT), floats(VEL)

local function still (v)
  return v == nil or (v[1] == 0 and v[2] == 0 and v[3] == 0)
end

local serializer = bitwire.serializer and bitwire.serializer(function (s, p)
  s:object(p, "position", pos)
  s:object(p, "orientation", rot)
  local at_rest = s:bool(s.writing and still(p.linear_velocity)
                         and still(p.angular_velocity))
  if not at_rest then
    s:object(p, "linear_velocity", vel)
    s:object(p, "angular_velocity", vel)
  elseif s.reading then
    p.linear_velocity, p.angular_velocity = { 0, 0, 0 }, { 0, 0, 0 }
  end
end)
-- }=====

local function show (v)
  if v == nil then return "-" end
  local t = {}
  for i, x in ipairs(v) do t[i] = string.format("%.2f", x) end
  return "(" .. table.concat(t, ", ") .. ")"
end

local bodies = {
  { "moving", { position = { 12.5, 0.75, -300.25 }, orientation = { 1, 0, 0, 0 },
                linear_velocity = { 3.5, 0, -9.81 }, angular_velocity = { 0, 0.5, 0 } } },
  { "at rest", { position = { -7, 0, 42 }, orientation = { 0.707, 0, 0.707, 0 } } },
}

local failed = false
for _, b in ipairs(bodies) do
  local label, body = b[1], b[2]
  local bytes = schema:encode("RigidBody", body)
  local back = assert(schema:decode("RigidBody", bytes))
  print(string.format("%-8s schema %2d bytes (%3d bits)   JSON %3d bytes", label,
    #bytes, schema:bits("RigidBody", body), #cjson.encode(body)))
  print("         decoded: pos " .. show(back.position) .. " vel "
    .. show(back.linear_velocity) .. " spin " .. show(back.angular_velocity))
  if (body.linear_velocity == nil) ~= (back.linear_velocity == nil) then failed = true end
  if serializer then
    local sbytes = serializer:encode(body)
    local sback = assert(serializer:decode(sbytes))
    print(string.format("         serializer %2d bytes (%3d bits), vel %s spin %s",
      #sbytes, serializer:measure(body), show(sback.linear_velocity),
      show(sback.angular_velocity)))
    if sback.position[3] ~= back.position[3] then failed = true end
  end
end
os.exit(failed and 1 or 0)
