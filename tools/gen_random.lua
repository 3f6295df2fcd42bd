-- Random values of a compiled program's types (s:program()), for the
-- generated-code cross test: every field at the program's version, in
-- range, with optional fields and sparse slots present at varied rates.
local M = {}

local random = math.random

local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end

local CHARS = { "a", "Z", "0", " ", "~", "\u{e9}", "\u{20ac}", "\u{1f600}" }

local function randstring(max)
  local parts, len = {}, 0
  local want = random(0, max)
  while len < want do
    local c = CHARS[random(#CHARS)]
    if len + #c > want then c = "x" end
    parts[#parts + 1] = c
    len = len + #c
  end
  return table.concat(parts)
end

-- n random bytes, made a chunk at a time: string.char takes as many
-- arguments as Lua's stack holds (about a million), not a packet's worth
local function randbytes(n)
  local parts, t = {}, {}
  for i = 1, n do
    t[#t + 1] = random(0, 255)
    if #t == 4096 or i == n then
      parts[#parts + 1] = string.char(table.unpack(t))
      t = {}
    end
  end
  return table.concat(parts)
end
M.randbytes = randbytes

local SPECIAL32 = { 0.0, -0.0, 1 / 0, -1 / 0, 1e39, 3.4028234663852886e38,
                    1.4e-45 }

local value

local function field(program, f)
  local k = f.kind
  if k == "int" then
    if random(4) == 1 then return random(4) == 1 and f.max or f.min end
    return random(f.min, f.max)
  elseif k == "tiered" then
    local r = random(3)
    if r == 1 then  -- near min; max - min as unsigned, so no sum wraps
      local d = random(0, 4)
      return math.ult(f.max - f.min, d) and f.max or f.min + d
    end
    return random(f.min, f.max)
  elseif k == "uint" then
    if f.bits == 64 then return random(0) end
    return random(0, (1 << f.bits) - 1)
  elseif k == "bool" then return random(2) == 1
  elseif k == "float" then
    if random(8) == 1 then return random(2) == 1 and f.fmin or f.fmax end
    return f.fmin + (f.fmax - f.fmin) * random()
  elseif k == "float32" then
    if random(6) == 1 then return SPECIAL32[random(#SPECIAL32)] end
    return f32((random() - 0.5) * 10 ^ random(-3, 6))
  elseif k == "float64" then
    if random(6) == 1 then return SPECIAL32[random(#SPECIAL32)] end
    return (random() - 0.5) * 10 ^ random(-30, 30)
  elseif k == "angle" then   -- any turn, negative ones and exact steps too
    if random(4) == 1 then return random(-4, 4) * f.period / (1 << f.bits) end
    return (random() * 4 - 2) * f.period
  elseif k == "enum" then return f.values[random(#f.values)]
  elseif k == "string" then return randstring(f.max)
  elseif k == "bytes" then return randbytes(random(f.min, f.max))
  elseif k == "quat" then
    local q = {}
    repeat
      for i = 1, 4 do q[i] = random() * 2 - 1 end
    until math.abs(q[1]) + math.abs(q[2]) + math.abs(q[3]) + math.abs(q[4]) > 0.1
    return q
  elseif k == "struct" then return value(program, program.byname[f.type])
  elseif k == "array" then
    local t = {}
    for i = 1, random(f.min, f.max) do t[i] = field(program, f.of) end
    return t
  elseif k == "sparse" then
    local rates = { 0, 0.03, 0.3, 0.9, 1 }
    local p, t = rates[random(#rates)], {}
    for i = 1, f.max do
      if random() < p then t[i] = field(program, f.of) end
    end
    return t
  end
  return nil   -- align, check
end

-- A random value of type 't' of 'program'.
function value(program, t)
  local v = {}
  for _, f in ipairs(t.fields) do
    local on = f.since <= program.version
      and (f.removed == nil or program.version < f.removed)
    if on and f.name and not (f.optional and random(10) <= 3) then
      v[f.name] = field(program, f)
    end
  end
  return v
end
M.value = value

local function copy(x)
  if type(x) ~= "table" then return x end
  local t = {}
  for k, v in pairs(x) do t[k] = copy(v) end
  return t
end

local near, nearfield

-- A relative number 'b' moved by a few steps, sometimes by many: the
-- differences fill each tier, and past the last the value goes whole.
local function nudge(f, b)
  local k = ({ 1, 4, 40, 700 })[random(4)]
  if f.kind == "angle" then   -- across 0 and the period too
    return b + random(-k, k) * f.period / (1 << f.bits)
  elseif f.kind == "float" then
    local x = b + random(-k, k) * f.qdelta / f.qmax
    if f.clamp and random(6) == 1 then return x end
    return math.max(f.fmin, math.min(f.fmax, x))
  end
  local q = {}   -- quat: each component moved, the largest one mostly kept
  for i = 1, 4 do q[i] = b[i] + random(-k, k) * f.qdelta / f.qmax / 2 end
  if math.abs(q[1]) + math.abs(q[2]) + math.abs(q[3]) + math.abs(q[4]) < 0.1 then
    return copy(b)
  end
  return q
end

-- An array near 'b': elements near b's (then maybe more or fewer).
local function neararray(program, f, b)
  local t, n = {}, #b
  if not f.fixed and random(3) == 1 then n = random(f.min, f.max) end
  for i = 1, n do
    t[i] = b[i] ~= nil and nearfield(program, f.of, b[i]) or field(program, f.of)
  end
  return t
end

-- A value of field 'f' near 'b' (a baseline's): mostly kept, some changed.
function nearfield(program, f, b)
  if b == nil or random(4) == 1 then return field(program, f) end
  if f.kind == "struct" then return near(program, program.byname[f.type], b) end
  if f.relative and random(3) > 1 then return nudge(f, b) end
  if f.kind == "array" and random(2) == 1 then return neararray(program, f, b) end
  if f.kind == "sparse" then
    local t = {}
    for i = 1, f.max do
      local r = random(10)
      if r <= 7 then t[i] = copy(b[i])
      elseif r <= 9 and b[i] ~= nil then t[i] = nearfield(program, f.of, b[i])
      elseif random(2) == 1 then t[i] = field(program, f.of) end
    end
    return t
  end
  if random(3) == 1 then return field(program, f) end
  return copy(b)
end

-- A value of type 't' near the value 'b': what a delta usually carries.
function near(program, t, b)
  local v = {}
  for _, f in ipairs(t.fields) do
    local on = f.since <= program.version
      and (f.removed == nil or program.version < f.removed)
    if on and f.name then
      if f.optional and random(8) == 1 then v[f.name] = nil
      elseif f.optional and b[f.name] == nil and random(2) == 1 then v[f.name] = nil
      else v[f.name] = nearfield(program, f, b[f.name]) end
    end
  end
  return v
end
M.near = near

return M
