-- tools/bandwidth.lua - what the game-state encodings save, measured.
--
--   make bandwidth      or, from the repository root,
--   LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;;" LUA_CPATH="./build/?.so;;" \
--   lua5.4 tools/bandwidth.lua [--write docs/BANDWIDTH.md]
--
-- Part 1 simulates the cube scene of Glenn Fiedler's "Snapshot Compression"
-- (901 cubes, snapshots at 60 Hz) for 300 ticks: a player cube circles and
-- pushes the cubes it touches, every other cube is thrown at tick 0 and comes
-- to rest as damping slows it. Each tick's snapshot is sized in five
-- encodings, from raw floats down to a delta against the snapshot the client
-- acked a round trip (6 ticks) ago; every delta is decoded against the
-- client's copy of that baseline and checked against a full decode.
-- Part 2 sizes the index overhead of the 4000-object scene of "Serializing
-- Array Subsets" (a bit per object, 12-bit indices, relative indices).
--
-- Everything is deterministic (own LCG, fixed seed). The tables are printed
-- as markdown; --write PATH also writes them to PATH (nothing else is
-- written).
local bitwire = require "bitwire"

local NCUBES, TICKS, HZ, RTT_TICKS = 901, 300, 60, 6
local DT = 1 / HZ

-- {===== deterministic random numbers =====

local state = 20150104   -- the date Snapshot Compression was posted
local function rand ()   -- [0, 1)
  state = state * 6364136223846793005 + 1442695040888963407
  return ((state >> 11) & ((1 << 53) - 1)) / (1 << 53)
end
local function uniform (lo, hi) return lo + (hi - lo) * rand() end

-- }=====

-- {===== the simulation =====

local REST_SPEED = 0.05       -- below this (m/s and rad/s) a cube sleeps
local GROUND = 0.5            -- a cube's centre when it lies on the ground
local PUSH_RADIUS = 1.6

local function qnormalize (q)
  local l = math.sqrt(q[1] ^ 2 + q[2] ^ 2 + q[3] ^ 2 + q[4] ^ 2)
  q[1], q[2], q[3], q[4] = q[1] / l, q[2] / l, q[3] / l, q[4] / l
end

-- q += 0.5 * (w, 0) * q * dt
local function qintegrate (q, wx, wy, wz, dt)
  local x, y, z, w = q[1], q[2], q[3], q[4]
  local h = 0.5 * dt
  q[1] = x + h * (wx * w + wy * z - wz * y)
  q[2] = y + h * (wy * w + wz * x - wx * z)
  q[3] = z + h * (wz * w + wx * y - wy * x)
  q[4] = w - h * (wx * x + wy * y + wz * z)
  qnormalize(q)
end

local function newcube (i)
  local gx, gy = (i - 1) % 30, (i - 1) // 30
  local c = {
    x = (gx - 14.5) * 1.5, y = (gy - 14.5) * 1.5, z = GROUND,
    vx = 0, vy = 0, vz = 0, wx = 0, wy = 0, wz = 0,
    q = { 0, 0, 0, 1 },
    damping = uniform(0.955, 0.985),
    at_rest = false,
  }
  if i <= 900 then   -- thrown at tick 0
    c.vx, c.vy, c.vz = uniform(-4, 4), uniform(-4, 4), uniform(0, 5)
    c.wx, c.wy, c.wz = uniform(-3, 3), uniform(-3, 3), uniform(-3, 3)
  end
  return c
end

local cubes = {}
for i = 1, NCUBES do cubes[i] = newcube(i) end
local player = cubes[NCUBES]   -- cube 901: the player, never at rest

local function clamp (v, lo, hi) return v < lo and lo or v > hi and hi or v end

local function step (tick)
  local t = tick * DT
  -- the player circles the middle of the grid at 6 m/s
  local px, py = 12 * math.cos(t * 0.5), 12 * math.sin(t * 0.5)
  player.vx, player.vy = (px - player.x) / DT, (py - player.y) / DT
  player.x, player.y, player.z = px, py, GROUND
  player.wx, player.wy, player.wz = 0, 0, 0.5
  qintegrate(player.q, 0, 0, 0.5, DT)
  for i = 1, NCUBES - 1 do
    local c = cubes[i]
    local dx, dy = c.x - px, c.y - py
    local d2 = dx * dx + dy * dy
    if d2 < PUSH_RADIUS * PUSH_RADIUS then   -- pushed: wakes up
      local d = math.sqrt(d2) + 1e-6
      c.vx, c.vy = dx / d * 3 + uniform(-0.3, 0.3), dy / d * 3 + uniform(-0.3, 0.3)
      c.wz = c.wz + uniform(-1, 1)
      c.at_rest = false
    end
    if not c.at_rest then
      c.vz = c.vz - 9.8 * DT
      c.x = clamp(c.x + c.vx * DT, -250, 250)
      c.y = clamp(c.y + c.vy * DT, -250, 250)
      c.z = c.z + c.vz * DT
      if c.z <= GROUND then     -- bounce, losing energy
        c.z = GROUND
        c.vz = math.abs(c.vz) < 0.5 and 0 or -c.vz * 0.3
      end
      c.vx, c.vy = c.vx * c.damping, c.vy * c.damping
      c.wx, c.wy, c.wz = c.wx * c.damping, c.wy * c.damping, c.wz * c.damping
      qintegrate(c.q, c.wx, c.wy, c.wz, DT)
      local v = math.sqrt(c.vx ^ 2 + c.vy ^ 2 + c.vz ^ 2)
      local w = math.sqrt(c.wx ^ 2 + c.wy ^ 2 + c.wz ^ 2)
      if c.z == GROUND and v < REST_SPEED and w < REST_SPEED then
        c.vx, c.vy, c.vz, c.wx, c.wy, c.wz = 0, 0, 0, 0, 0, 0
        c.at_rest = true
      end
    end
  end
end

-- A snapshot: fresh tables each tick, so old snapshots stay valid baselines.
local function snapshot ()
  local list = {}
  for i = 1, NCUBES do
    local c = cubes[i]
    list[i] = {
      pos = { x = c.x, y = c.y, z = c.z },
      vel = { x = c.vx, y = c.vy, z = c.vz },
      rot = { c.q[1], c.q[2], c.q[3], c.q[4] },
      at_rest = c.at_rest,
    }
  end
  return list
end

-- }=====

-- {===== the encodings =====

local function f32 (n) return { n, "float32" } end
local function q (n, lo, hi) return { n, "float", min = lo, max = hi, res = 1 / 512 } end
-- (f), (g): the same floats sent relative to the baseline in deltas, with
-- the default tiers or with tiers fitted to this scene's differences
local PTIERS, QTIERS = { 4, 5, 6, 7, 7 }, { 2, 3, 4, 4, 5 }
local function qr (n, lo, hi, tiers)
  return { n, "float", min = lo, max = hi, res = 1 / 512, delta = "relative", tiers = tiers }
end

local s = bitwire.schema {
  -- (a) raw floats, and the article's starting point with linear velocity
  Vec3f = { f32 "x", f32 "y", f32 "z" },
  CubeFloat = {
    { "pos", "Vec3f" }, { "rot", "array", of = { "float32" }, count = 4 },
    { "at_rest", "bool" },
  },
  CubeArticle = {
    { "at_rest", "bool" }, { "pos", "Vec3f" }, { "vel", "Vec3f" },
    { "rot", "array", of = { "float32" }, count = 4 },
  },
  -- (b) positions bounded and quantized to 1/512 m, quats as 4 components
  Pos = { q("x", -256, 255), q("y", -256, 255), q("z", 0, 32) },
  CubeQuant = {
    { "pos", "Pos" },
    { "rot", "vector", count = 4, min = -1, max = 1, res = 1 / 256 },
    { "at_rest", "bool" },
  },
  -- (c) smallest three at 9 bits
  Cube = { { "pos", "Pos" }, { "rot", "quat", bits = 9 }, { "at_rest", "bool" } },
  SnapFloat = { { "cubes", "array", of = "CubeFloat", count = NCUBES } },
  SnapArticle = { { "cubes", "array", of = "CubeArticle", count = NCUBES } },
  SnapQuant = { { "cubes", "array", of = "CubeQuant", count = NCUBES } },
  SnapQuat = { { "cubes", "array", of = "Cube", count = NCUBES } },
  -- (d) and (e): the cubes as a sparse array
  Snap = { { "cubes", "sparse", of = "Cube", max = NCUBES, encoding = "auto" } },
  -- (f): as (e), position and orientation relative to the baseline
  PosRel = { qr("x", -256, 255), qr("y", -256, 255), qr("z", 0, 32) },
  CubeRel = {
    { "pos", "PosRel" }, { "rot", "quat", bits = 9, delta = "relative" },
    { "at_rest", "bool" },
  },
  SnapRel = { { "cubes", "sparse", of = "CubeRel", max = NCUBES, encoding = "auto" } },
  RotRel = { { "rot", "quat", bits = 9, delta = "relative" } },   -- to size (f)'s parts
  PosFit = { qr("x", -256, 255, PTIERS), qr("y", -256, 255, PTIERS), qr("z", 0, 32, PTIERS) },
  CubeFit = {
    { "pos", "PosFit" }, { "rot", "quat", bits = 9, delta = "relative", tiers = QTIERS },
    { "at_rest", "bool" },
  },
  SnapFit = { { "cubes", "sparse", of = "CubeFit", max = NCUBES, encoding = "auto" } },
}

-- }=====

local out = {}
local function emit (fmt, ...) out[#out + 1] = string.format(fmt, ...) end

local function kbps (bits) return bits * HZ / 1000 end

local function fmtint (n)   -- 1234567 -> "1,234,567"
  local str = string.format("%d", math.floor(n + 0.5))
  local k
  repeat str, k = str:gsub("^(%d+)(%d%d%d)", "%1,%2") until k == 0
  return str
end

local function fmtrate (bits)
  local k = kbps(bits)
  if k >= 1000 then return string.format("%.2f Mbps", k / 1000) end
  return string.format("%.1f kbps", k)
end

-- exact equality of two decoded snapshots
local function same (a, b)
  for i = 1, NCUBES do
    local x, y = a[i], b[i]
    if x.at_rest ~= y.at_rest or x.pos.x ~= y.pos.x or x.pos.y ~= y.pos.y
        or x.pos.z ~= y.pos.z then return false end
    for k = 1, 4 do if x.rot[k] ~= y.rot[k] then return false end end
  end
  return true
end

local function part1 ()
  local ROWS = {
    { key = "article", label = "(a) raw floats + linear velocity (the article's CubeState)" },
    { key = "float", label = "(a) raw floats: 3 x float32 position, 4 x float32 quat, bool" },
    { key = "quant", label = "(b) position to 1/512 m in [-256,255]²×[0,32], quat as 4 × 10 bits" },
    { key = "quat", label = "(c) as (b), quat as smallest three, 9 bits" },
    { key = "changed", label = "(d) changed-only: sparse (auto) of cubes changed since the last tick" },
    { key = "delta", label = "(e) delta vs the snapshot acked " .. RTT_TICKS .. " ticks earlier" },
    { key = "SnapRel", label = "(f) as (e), position and quat components relative to the "
      .. "baseline (`delta = \"relative\"`, default tiers {3, 5, 7, 9})" },
    { key = "SnapFit", label = "(g) as (f), tiers fitted to this scene: position "
      .. "{4, 5, 6, 7, 7}, quat {2, 3, 4, 4, 5}" },
  }
  local sizes = {}
  for _, r in ipairs(ROWS) do sizes[r.key] = {} end
  local sent, received = {}, {}      -- per tick: sender's raw, client's decoded
  local parts = { pos = 0, rot = 0 }
  local rel = { SnapRel = { sent = {}, received = {} },
                SnapFit = { sent = {}, received = {} } }
  local prevbytes = {}               -- (d): each cube's quantized bits last tick
  local atrest, moving = {}, {}
  local verified = 0
  for tick = 1, TICKS do
    step(tick)
    local snap = snapshot()
    local v = { cubes = snap }
    sizes.article[tick] = s:bits("SnapArticle", v)
    sizes.float[tick] = s:bits("SnapFloat", v)
    sizes.quant[tick] = s:bits("SnapQuant", v)
    sizes.quat[tick] = s:bits("SnapQuat", v)
    -- (d) the cubes whose quantized state changed since the previous tick
    local changed, nrest = {}, 0
    for i = 1, NCUBES do
      local b = s:encode("Cube", snap[i])
      if b ~= prevbytes[i] then changed[i] = snap[i] end
      prevbytes[i] = b
      if snap[i].at_rest then nrest = nrest + 1 end
    end
    atrest[tick] = nrest
    local nchanged = 0
    for _ in pairs(changed) do nchanged = nchanged + 1 end
    moving[tick] = nchanged
    sizes.changed[tick] = s:bits("Snap", { cubes = changed })
    -- (e) a delta against the snapshot acked a round trip ago (full at first)
    local base = tick > RTT_TICKS and sent[tick - RTT_TICKS] or nil
    local bytes = s:encode("Snap", v, base and { baseline = base } or nil)
    sizes.delta[tick] = s:bits("Snap", v, base and { baseline = base } or nil)
    assert(#bytes == (sizes.delta[tick] + 7) // 8)
    local got = assert(s:decode("Snap", bytes,
      base and { baseline = received[tick - RTT_TICKS] } or nil))
    local full = assert(s:decode("Snap", s:encode("Snap", v)))
    assert(same(got.cubes, full.cubes), "delta decode differs at tick " .. tick)
    verified = verified + 1
    sent[tick], received[tick] = v, got
    -- (f), (g) the same delta with relative positions and orientations
    for _, name in ipairs { "SnapRel", "SnapFit" } do
      local sr, rr = rel[name].sent, rel[name].received
      local rbase = tick > RTT_TICKS and sr[tick - RTT_TICKS] or nil
      local ropts = rbase and { baseline = rbase } or nil
      local rbytes = s:encode(name, v, ropts)
      sizes[name][tick] = s:bits(name, v, ropts)
      assert(#rbytes == (sizes[name][tick] + 7) // 8)
      local rgot = assert(s:decode(name, rbytes,
        rbase and { baseline = rr[tick - RTT_TICKS] } or nil))
      assert(same(rgot.cubes, full.cubes), name .. " delta decode differs at tick " .. tick)
      verified = verified + 1
      sr[tick], rr[tick] = v, rgot
      sr[tick - 2 * RTT_TICKS], rr[tick - 2 * RTT_TICKS] = nil, nil
      if name == "SnapRel" and rbase then   -- where (f)'s bits go
        for i = 1, NCUBES do
          local a, b = snap[i], rbase.cubes[i]
          if s:bits("CubeRel", a, { baseline = b }) > 3 then   -- the slot is sent
            parts.pos = parts.pos + s:bits("PosRel", a.pos, { baseline = b.pos })
            parts.rot = parts.rot + s:bits("RotRel", a, { baseline = b })
          end
        end
      end
    end
    sent[tick - 2 * RTT_TICKS], received[tick - 2 * RTT_TICKS] = nil, nil
  end

  emit("## Snapshots: %d cubes, %d ticks at %d Hz", NCUBES, TICKS, HZ)
  emit("")
  emit("Cubes at rest: %d at tick 1, %d at tick %d, %d at tick %d. "
    .. "Cubes changed since the previous tick: %d at tick 1, %d at tick %d.",
    atrest[1], atrest[TICKS // 2], TICKS // 2, atrest[TICKS], TICKS,
    moving[1], moving[TICKS], TICKS)
  emit("Bits are the schema's payload (`s:bits`), without packet headers.")
  emit("")
  emit("| encoding | first snapshot (bits) | last snapshot (bits) | average (bits) | average | last |")
  emit("|---|---:|---:|---:|---:|---:|")
  for _, r in ipairs(ROWS) do
    local t, sum = sizes[r.key], 0
    for i = 1, TICKS do sum = sum + t[i] end
    local avg = sum / TICKS
    emit("| %s | %s | %s | %s | %s | %s |", r.label, fmtint(t[1]), fmtint(t[TICKS]),
      fmtint(avg), fmtrate(avg), fmtrate(t[TICKS]))
  end
  emit("| Snapshot Compression, published: start (321 bits × 901 cubes) | | | | 17.37 Mbps | |")
  emit("| Snapshot Compression, published: end (all techniques) | | | | | under 0.25 Mbps |")
  emit("")
  emit("Per cube: (a) %d bits (%d with velocity), (b) %d, (c) %d. "
    .. "All %d deltas decoded against the client's copy of their baseline "
    .. "equal a full decode.",
    s:maxbits("CubeFloat"), s:maxbits("CubeArticle"), s:maxbits("CubeQuant"),
    s:maxbits("Cube"), verified)
  emit("")
  local first, nmoving, total = 0, 0, 0
  for i = 1, RTT_TICKS do first = first + sizes.SnapRel[i] end
  for i = 1, TICKS do total = total + sizes.SnapRel[i] end
  for i = RTT_TICKS + 1, TICKS do nmoving = nmoving + (NCUBES - atrest[i]) end
  emit("(f) and (g) send, in a delta, each changed position coordinate and each "
    .. "quaternion component (while the largest component stays) as a signed "
    .. "difference from the baseline in prefix tiers (WIRE.md, \"Relative "
    .. "differences\"). The first %d snapshots have no acked baseline and go "
    .. "whole: %s of the average. After them %d cubes move in an average "
    .. "snapshot (%s cube-snapshots in all): every cube is thrown at tick 0 "
    .. "and takes seconds to settle, where the article's cubes mostly rest. A framed delta adds 17 bits (delta flag "
    .. "and baseline id) to the CRC32 header.",
    RTT_TICKS, fmtrate(first / TICKS), nmoving // (TICKS - RTT_TICKS), fmtint(nmoving))
  emit("")
  emit("Where (f)'s average goes: %s the first %d whole snapshots, %s "
    .. "positions (changed bits and differences), %s quaternions (changed bit, "
    .. "same-largest flag, differences), %s the rest (which slots are sent, "
    .. "presence and changed bits of the records).", fmtrate(first / TICKS),
    RTT_TICKS, fmtrate(parts.pos / TICKS), fmtrate(parts.rot / TICKS),
    fmtrate((total - first - parts.pos - parts.rot) / TICKS))
  emit("")
end

-- {===== the 4000-object scene =====

local function part2 ()
  local N = 4000
  local function scene (enc, tiers)
    return bitwire.schema {
      -- objects of no bits: what is left is the cost of saying which are sent
      S = { { "objects", "sparse", of = { "int", min = 0, max = 0 }, max = N,
              encoding = enc, tiers = tiers } },
    }
  end
  local enc = {
    { "a bit per object", scene "mask" },
    { "12-bit count + 12-bit indices", scene "index" },
    { "relative (int_relative)", scene "relative" },
    { "relative (article tiers)", scene("relative", "article") },
    { "auto (int_relative)", scene "auto" },
    { "auto (article tiers)", scene("auto", "article") },
  }
  local PICK = { [0] = "mask", "index", "relative" }
  local function set (list)
    local t = {}
    for _, i in ipairs(list) do t[i] = 0 end
    return { objects = t }
  end
  local function range (a, b, stride)
    local t = {}
    for i = a, b, stride or 1 do t[#t + 1] = i end
    return t
  end
  local function randomset (k)   -- k distinct slots, chosen by the LCG
    local pool, t = range(1, N), {}
    for i = 1, k do
      local j = i + math.floor(rand() * (N - i + 1))
      pool[i], pool[j] = pool[j], pool[i]
      t[i] = pool[i]
    end
    table.sort(t)
    return t
  end
  local CASES = {
    { "1 object", { 2000 } },
    { "10 clustered (1000..1009)", range(1000, 1009) },
    { "10 spread (every 400th)", range(1, 4000, 400) },
    { "32 objects 128 apart", range(1, 4000, 128) },
    { "100 random", randomset(100) },
    { "half: every other", range(1, 4000, 2) },
    { "half: the first 2000", range(1, 2000) },
    { "half: random", randomset(2000) },
    { "all 4000", range(1, 4000) },
  }
  emit("## Array subsets: the 4000-object scene")
  emit("")
  emit("Bytes spent saying which objects are sent (the objects themselves "
    .. "excluded), ceil(bits / 8). Index: int(count, 0, 4000) then "
    .. "int(i, 0, 3999) each; relative: each index from the previous one, "
    .. "ending with the sentinel 4001; auto adds 2 bits naming the cheapest.")
  emit("")
  local head, rule = { "objects sent" }, { "---" }
  for _, e in ipairs(enc) do head[#head + 1] = e[1]; rule[#rule + 1] = "---:" end
  head[#head + 1] = "auto picks"; rule[#rule + 1] = "---"
  emit("| %s |", table.concat(head, " | "))
  emit("|%s|", table.concat(rule, "|"))
  for _, c in ipairs(CASES) do
    local v, row = set(c[2]), { c[1] }
    for _, e in ipairs(enc) do
      local bits = e[2]:bits("S", v)
      row[#row + 1] = fmtint((bits + 7) // 8)
    end
    local a = enc[5][2]:encode("S", v):byte(1) & 3
    local aa = enc[6][2]:encode("S", v):byte(1) & 3
    row[#row + 1] = PICK[a] .. (aa ~= a and " (article: " .. PICK[aa] .. ")" or "")
    emit("| %s |", table.concat(row, " | "))
  end
  emit("")
  emit("The article: 500 bytes for a bit per object however few are sent; "
    .. "2000 of 4000 with 12-bit indices ~3000 bytes; relative indices save "
    .. "2-3x when the sent objects cluster; the worst case for relative "
    .. "indices (gaps of ~128) fits only ~32 objects into 4000.")
  emit("")
end

-- }=====

local t0 = os.clock()
emit("# Bandwidth of the game-state encodings")
emit("")
emit("Generated by `make bandwidth` (tools/bandwidth.lua); deterministic. "
  .. 'Refresh with `make bandwidth BANDWIDTH_ARGS="--write docs/BANDWIDTH.md"`.')
emit("")
part1()
part2()
local text = table.concat(out, "\n") .. "\n"
io.write(text)
io.stderr:write(string.format("bandwidth: %.1f s\n", os.clock() - t0))

if arg[1] == "--write" then
  local path = assert(arg[2], "--write needs a path")
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  io.stderr:write("wrote " .. path .. "\n")
elseif arg[1] ~= nil then
  io.stderr:write("usage: lua5.4 tools/bandwidth.lua [--write PATH]\n")
  os.exit(1)
end
