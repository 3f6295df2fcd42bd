-- The core's number codes in Lua, for the walk (bitwire/walk.lua): the
-- quantized float, smallest-three quaternion and angle steps of
-- core/bw_game.c and core/bw.h, each as the C one computes it. 'r' is the
-- walk's reader, whose r:f32(x) rounds to float32.
--
-- Written in the subset of Lua that runs on 5.2 too, as walk.lua: the
-- generated Wireshark plugin embeds this file as it is and hands it to the
-- walk.
local M = {}

-- 2^n, an integer on Lua 5.4
local function pow2(n)
  local v = 1
  for _ = 1, n do v = v * 2 end
  return v
end
M.pow2 = pow2

-- A quantized float: the integer 'q' sent for field 'f' (program fields
-- qmin, qdelta, qmax), as bw_qfloatdecode rebuilds it in float32 steps.
function M.qfloat(r, q, qmin, qdelta, qmax)
  local f32 = r.f32
  return f32(r, f32(r, f32(r, f32(r, q) / f32(r, qmax)) * qdelta) + qmin)
end

-- Smallest-three quaternions (core/bw_game.c). A code is { largest
-- component (0-3), the other three quantized }, each step as the C one.
local QMIN, QDELTA = -0.707106781, 1.414213562

-- bw_quatdecode
function M.quatdecode(r, f, code)
  local out, sum, k = {}, 0, 1
  local qmin, qdelta, miv = r:f32(QMIN), r:f32(QDELTA), pow2(f.bits) - 1
  local largest = code[1] + 1
  for i = 1, 4 do
    if i ~= largest then
      k = k + 1
      out[i] = M.qfloat(r, code[k], qmin, qdelta, miv)
      sum = sum + out[i] * out[i]
    end
  end
  out[largest] = sum < 1 and math.sqrt(1 - sum) or 0
  local len = 0
  for i = 1, 4 do len = len + out[i] * out[i] end
  len = math.sqrt(len)
  for i = 1, 4 do out[i] = out[i] / len end
  return out
end

-- quatraw: the code of 'q' before it is made canonical, or nil
function M.quatraw(r, f, q)
  local len, v, largest = 0, {}, 1
  for i = 1, 4 do len = len + q[i] * q[i] end
  len = math.sqrt(len)
  if not (len > 0) or len == math.huge then return nil end
  for i = 1, 4 do
    v[i] = q[i] / len
    if math.abs(v[i]) > math.abs(v[largest]) then largest = i end
  end
  if v[largest] < 0 then
    for i = 1, 4 do v[i] = -v[i] end
  end
  local out = { largest - 1 }
  local qmin, qdelta, miv = r:f32(QMIN), r:f32(QDELTA), pow2(f.bits) - 1
  for i = 1, 4 do
    if i ~= largest then out[#out + 1] = M.qencode(r, v[i], qmin, qdelta, miv) end
  end
  return out, v
end

-- bw_quatcanonical: does 'code' come back from its own decode?
function M.quatcanonical(r, f, code)
  local miv = pow2(f.bits) - 1
  if code[1] > 3 or code[2] > miv or code[3] > miv or code[4] > miv then return false end
  local qmin, qdelta, sum, big = r:f32(QMIN), r:f32(QDELTA), 0, 0
  for i = 2, 4 do
    local g = M.qfloat(r, code[i], qmin, qdelta, miv)
    sum = sum + g * g
    if math.abs(g) > big then big = math.abs(g) end
  end
  if f.bits <= 22 and sum < 1 and math.sqrt(1 - sum) > big * (1 + 1e-9) then
    return true
  end
  local again = M.quatraw(r, f, M.quatdecode(r, f, code))
  if again == nil then return false end
  for i = 1, 4 do
    if again[i] ~= code[i] then return false end
  end
  return true
end

-- bw_quatencode: the canonical code of 'q' (a table of four numbers, as
-- bw_quatof reads it), or nil when it is no quaternion.
function M.quatencode(r, f, q)
  -- exactly four numbers, raw, as bw_quatnums: else decode sends it whole
  if type(q) ~= "table" or rawlen(q) ~= 4 then return nil end
  local x = {}
  for i = 1, 4 do
    x[i] = rawget(q, i)
    if type(x[i]) ~= "number" then return nil end
  end
  local out = M.quatraw(r, f, x)
  if out == nil or f.bits > 22 then return out end
  local round = 0
  while round < 16 and not M.quatcanonical(r, f, out) do
    local v = M.quatdecode(r, f, out)
    local again = M.quatraw(r, f, v)
    local largest = out[1] + 1
    if again[1] == out[1] then
      out = again
    else
      local k = 1
      for i = 1, 4 do
        if i ~= largest then
          k = k + 1
          if math.abs(v[i]) >= v[largest] then
            if v[i] > 0 then out[k] = out[k] - 1 else out[k] = out[k] + 1 end
          end
        end
      end
    end
    round = round + 1
  end
  return out
end

-- The integer bw_qfloatencode sends for 'x' (core/bw.h), in float32 steps.
function M.qencode(r, x, qmin, qdelta, qmax)
  local f32 = r.f32
  if x > 3.4028234663852886e38 then x = 3.4028234663852886e38 end
  if x < -3.4028234663852886e38 then x = -3.4028234663852886e38 end
  local norm = f32(r, f32(r, f32(r, x) - qmin) / qdelta)
  if not (norm >= 0) then norm = 0 end
  if norm > 1 then norm = 1 end
  local i = math.floor(f32(r, f32(r, norm * f32(r, qmax)) + 0.5))
  if i > qmax then i = qmax end
  return i
end

-- bw_angleencode and bw_angledecode (core/bw_game.c): 'bits' bits per turn
-- of 'period', in double steps.
function M.angleencode(x, period, bits)
  local steps = pow2(bits)
  local t = math.fmod(x, period)
  if t < 0 then t = t + period end
  local u = math.floor(t / period * steps + 0.5)
  if not (u < steps) then u = 0 end
  return u
end

function M.angledecode(q, period, bits)
  return q * period / pow2(bits)
end

return M
