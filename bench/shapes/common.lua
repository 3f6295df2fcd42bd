-- bench/shapes/common.lua - what the shapes of the bench suite share:
-- deterministic numbers, quantizers for the string.pack peers and a
-- checker of decoded tables.
local msg = require "bench.message"

local M = {}

M.qfloat = msg.qfloat

-- 64-bit LCG (Knuth's MMIX constants): int(n) in [0, n), float() in [0, 1).
function M.lcg (seed)
  local s = seed
  local function nextbits ()
    s = s * 6364136223846793005 + 1442695040888963407
    return s >> 11
  end
  return function (n) return nextbits() % n end,
         function () return nextbits() * 0x1p-53 end
end

-- string.pack peers: the step of 'q' for value 'v', clamped; and back.
function M.quant (q)
  local min, k, miv, step = q.min, q.k, q.miv, q.step
  return function (v)
    local t = (v - min) * k
    if not (t >= 0) then return 0 end
    if t >= miv then return miv end
    return (t + 0.5) // 1
  end, function (i) return i * step + min end
end

-- Compare 'got' with 'want' deeply: same keys, integers and booleans and
-- strings equal, floats within 'tol' (0: exactly). Returns true or nil, why.
function M.compare (want, got, tol, path)
  path = path or "value"
  if type(want) ~= type(got) then
    return nil, ("%s: %s, want %s"):format(path, type(got), type(want))
  end
  if type(want) == "table" then
    for k in pairs(got) do
      if want[k] == nil then
        return nil, ("%s.%s: unexpected"):format(path, tostring(k))
      end
    end
    for k, w in pairs(want) do
      local ok, why = M.compare(w, got[k], tol, path .. "." .. tostring(k))
      if not ok then return nil, why end
    end
    return true
  end
  if type(want) == "number" and math.type(want) ~= math.type(got) then
    if math.type(want) == "integer" or tol == 0 then
      return nil, ("%s: %s, want %s"):format(path, got, want)
    end
  end
  if type(want) == "number" and math.type(want) == "float" then
    if math.abs(want - got) <= (tol or 0) then return true end
  end
  if want ~= got then
    return nil, ("%s: %s, want %s"):format(path, tostring(got), tostring(want))
  end
  return true
end

return M
