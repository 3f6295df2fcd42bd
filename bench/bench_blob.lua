-- bench/bench_blob.lua - Lua blobs against lua-cjson on the 64-entity
-- snapshot of bench/message.lua: unblob vs cjson.decode, blobview access to
-- one field, and sizes. Run by `make bench`.
local bitwire = require "bitwire"
local msg = require "bench.message"
local cjson = require "cjson"

local s = bitwire.schema(msg.description)
local snap = msg.snapshot(7)
local blob = s:blob("Snapshot", snap)
local json = cjson.encode(snap)
local packet = s:encode("Snapshot", snap)
assert(msg.compare(snap, s:unblob("Snapshot", blob)))   -- floats as float32
assert(msg.compare(snap, cjson.decode(json)))

local clock = os.clock
-- seconds per call of f, best of 5 runs of at least 0.2 s
local function per(f)
  local n, best = 1
  repeat
    local t0 = clock()
    for _ = 1, n do f() end
    local t = clock() - t0
    best = t / n
    n = n * 2
  until t >= 0.2
  n = n // 2
  for _ = 1, 4 do
    local t0 = clock()
    for _ = 1, n do f() end
    best = math.min(best, (clock() - t0) / n)
  end
  return best
end

local tun = per(function () return s:unblob("Snapshot", blob) end)
local tjs = per(function () return cjson.decode(json) end)
local view = s:blobview("Snapshot", blob)
local tview = per(function () return view.entities[40].health end)
local topen = per(function () return s:blobview("Snapshot", blob).entities[40].health end)
local tdec = per(function () return s:decode("Snapshot", packet) end)

print(string.format("blob: unblob %.1f us, cjson.decode %.1f us of the same snapshot: "
  .. "%.2fx (target >= 3x); s:decode of the packet %.1f us",
  tun * 1e6, tjs * 1e6, tjs / tun, tdec * 1e6))
print(string.format("blob: blobview one field of one entity %.0f ns; "
  .. "open (validate) + that field %.1f us", tview * 1e9, topen * 1e6))
print(string.format("blob: sizes: blob %d B, JSON %d B (%.2fx), packet %d B",
  #blob, #json, #blob / #json, #packet))

-- pairs over a sparse view visits each present slot once: its time grows
-- with the slots as unblob's does (reported: the ratio at 4k and 64k slots
-- stays near that of unblob)
local sp = bitwire.schema { T = { { "m", "sparse", of = "bool", max = 1 << 20 } } }
local grow = {}
for _, n in ipairs { 4096, 65536 } do
  local m = {}
  for i = 1, n do m[i * 3] = true end
  local b = sp:blob("T", { m = m })
  local v = sp:blobview("T", b)
  local tp = per(function () for _ in pairs(v.m) do end end)
  local tu = per(function () return sp:unblob("T", b) end)
  grow[#grow + 1] = { n, tp, tu }
end
print(string.format("blob: pairs over a sparse view of %d / %d slots %.2f / %.2f ms "
  .. "(x%.1f; unblob x%.1f)", grow[1][1], grow[2][1], grow[1][2] * 1e3, grow[2][2] * 1e3,
  grow[2][2] / grow[1][2], grow[2][3] / grow[1][3]))
