-- bench/bench_shapes.lua - issue 14: bitwire on a suite of message shapes,
-- each against a hand-written C peer (bench/handc*.c) and string.pack by
-- hand (bench/shapes/*.lua), timed in the same run.
--
--   make bench      or, from the repository root,
--   LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;;" \
--   LUA_CPATH="./build/?.so;./build/bench/?.so;;" \
--   lua5.4 bench/bench_shapes.lua [rounds [seconds]]
--
-- Every peer must round-trip each shape first, hand C's bytes must equal
-- bitwire's and decode to exactly the same values, and decode into a
-- reused table must refill it. Then every operation of every shape runs
-- for ~'seconds' (0.1) per round, all interleaved, 'rounds' (7) times; the
-- tables show the medians, and bitwire's ratios to the peers.

if not package.cpath:find("./build/bench/?.so", 1, true) then
  package.cpath = "./build/bench/?.so;" .. package.cpath
end
if not package.path:find("./?.lua", 1, true) then
  package.path = "./?.lua;" .. package.path
end
local timing = require "bench.timing"

local bitwire = require "bitwire"
local common = require "bench.shapes.common"
local handc_shapes = require "handc_shapes"

local ROUNDS = tonumber(arg and arg[1]) or 7
local SECONDS = tonumber(arg and arg[2]) or 0.1
collectgarbage("incremental")

local SHAPES = {"snapshot", "nested", "fixed", "optional", "cubes"}

local check, checked = timing.checker()

-- {===== the shapes and their peers =====

local shapes = {}
for _, key in ipairs(SHAPES) do
  local sh = require("bench.shapes." .. key)
  local s = bitwire.schema(sh.description)
  local T = sh.type
  local opts = {}
  local hc = sh.handc and handc_shapes[sh.handc] or require "handc"
  sh.value = sh.data(7)
  sh.other = sh.data(8, key == "cubes" and 2 or 40)
  sh.peers = {
    {name = "string.pack", encode = sh.pack.encode, decode = sh.pack.decode},
    {name = "hand C", encode = hc.encode, decode = hc.decode,
     decode_into = hc.decode_into},
    {name = "bitwire",
     encode = function (v) return s:encode(T, v) end,
     decode = function (b) return s:decode(T, b) end,
     decode_into = function (b, t) opts.into = t; return s:decode(T, b, opts) end,
     -- the loops call the methods directly, without a wrapper
     encode_loop = function (n, v) for _ = 1, n do s:encode(T, v) end end,
     decode_loop = function (n, b) for _ = 1, n do s:decode(T, b) end end,
     decode_into_loop = function (n, b, t)
       opts.into = t
       for _ = 1, n do s:decode(T, b, opts) end
     end},
  }
  for _, p in ipairs(sh.peers) do sh.peers[p.name] = p end
  shapes[#shapes + 1] = sh
end

-- }=====

-- {===== correctness =====

for _, sh in ipairs(shapes) do
  local bytes = {}
  for _, p in ipairs(sh.peers) do
    local what = sh.name .. ": " .. p.name
    for _, v in ipairs {sh.value, sh.other} do
      local ok, b = pcall(p.encode, v)
      if check(ok and type(b) == "string", what .. " encode", b) then
        bytes[p.name] = bytes[p.name] or b
        local dok, got, err = pcall(p.decode, b)
        check(dok and got ~= nil, what .. " decode", dok and err or got)
        if dok and got ~= nil then
          check(common.compare(v, got, sh.tol), what .. " round trip",
                select(2, common.compare(v, got, sh.tol)))
        end
      end
    end
    if p.decode_into and bytes[p.name] then
      local t = {}
      for _, v in ipairs {sh.value, sh.other, sh.value} do
        local ok, r, err = pcall(p.decode_into, p.encode(v), t)
        check(ok and r == t, what .. " decode_into returns the table",
              ok and err or r)
        check(common.compare(v, t, sh.tol), what .. " decode_into refills",
              select(2, common.compare(v, t, sh.tol)))
      end
    end
  end
  local hc, bw = sh.peers["hand C"], sh.peers.bitwire
  for _, v in ipairs {sh.value, sh.other} do
    local a, b = bw.encode(v), hc.encode(v)
    if check(a == b, sh.name .. ": bitwire bytes == hand C bytes",
             ("%d vs %d bytes"):format(#a, #b)) then
      check(common.compare(hc.decode(b), bw.decode(a), 0),
            sh.name .. ": bitwire decode == hand C decode (exact)",
            select(2, common.compare(hc.decode(b), bw.decode(a), 0)))
    end
  end
  local r, err, code = bw.decode(bytes.bitwire:sub(1, -2))
  check(r == nil and type(err) == "string" and type(code) == "string",
        sh.name .. ": bitwire decode of truncated bytes returns nil, message, code")
  r, err, code = hc.decode(bytes["hand C"]:sub(1, -2))
  check(r == nil and type(err) == "string" and type(code) == "string",
        sh.name .. ": hand C decode of truncated bytes returns nil, message, code")
  sh.bytes = bytes
end

checked()

-- }=====

-- {===== timing =====

local ops = {}
for _, sh in ipairs(shapes) do
  for _, p in ipairs(sh.peers) do
    local b, v = sh.bytes[p.name], sh.value
    p.stats = {}
    ops[#ops + 1] = {peer = p, kind = "enc", run = p.encode_loop
      and function (n) p.encode_loop(n, v) end
      or function (n) local f = p.encode for _ = 1, n do f(v) end end}
    ops[#ops + 1] = {peer = p, kind = "dec", run = p.decode_loop
      and function (n) p.decode_loop(n, b) end
      or function (n) local f = p.decode for _ = 1, n do f(b) end end}
    if p.decode_into then
      local t = {}
      p.decode_into(b, t)
      ops[#ops + 1] = {peer = p, kind = "into", run = p.decode_into_loop
        and function (n) p.decode_into_loop(n, b, t) end
        or function (n) local f = p.decode_into for _ = 1, n do f(b, t) end end}
    end
  end
end

timing.run(ops, SECONDS, ROUNDS)
local median = timing.median


for _, op in ipairs(ops) do
  op.peer.stats[op.kind] = median(op.rates)
  if op.kind == "into" then op.peer.stats.alloc_into = timing.alloc(op.run, 100) end
end

-- }=====

-- {===== report =====

local function rate (x)
  if not x then return "-" end
  if x >= 1e6 then return ("%.2fM"):format(x / 1e6) end
  if x >= 1e3 then return ("%.1fk"):format(x / 1e3) end
  return ("%.0f"):format(x)
end

print(("%s; %d interleaved rounds of ~%.2f s per op, median"):format(
  _VERSION, ROUNDS, SECONDS))
print()
print(("%-13s %-12s %6s %10s %10s %10s %10s"):format("shape", "peer", "bytes",
  "encode/s", "decode/s", "into/s", "alloc/into"))
for _, sh in ipairs(shapes) do
  for _, p in ipairs(sh.peers) do
    local s = p.stats
    print(("%-13s %-12s %6d %10s %10s %10s %10s"):format(sh.name, p.name,
      #sh.bytes[p.name], rate(s.enc), rate(s.dec), rate(s.into),
      s.alloc_into and ("%.0f B"):format(s.alloc_into) or "-"))
  end
end
print()

local misses = 0
print(("%-13s %-22s %-22s %-22s %s"):format("bitwire vs", "encode", "decode",
  "into", "size"))
for _, sh in ipairs(shapes) do
  local bw, hc, sp = sh.peers.bitwire.stats, sh.peers["hand C"].stats,
                     sh.peers["string.pack"].stats
  local function cell (k)
    local r = bw[k] / hc[k]
    local mark = r >= 0.9 and "" or "!"
    if r < 0.9 then misses = misses + 1 end
    -- into is compared with string.pack's fresh decode: it has no into
    return ("%3.0f%%%s C %5.2fx sp"):format(r * 100, mark,
                                         bw[k] / sp[k == "into" and "dec" or k])
  end
  if bw.alloc_into ~= 0 then misses = misses + 1 end
  print(("%-13s %-22s %-22s %-22s %+.0f%% vs sp"):format(sh.name, cell("enc"),
    cell("dec"), cell("into"),
    (#sh.bytes.bitwire / #sh.bytes["string.pack"] - 1) * 100))
end
print("(C: bitwire's rate as a share of hand C's, target >= 90%, ! below;"
      .. " sp: times string.pack's)")
print(misses == 0 and "targets: all met (>= 90% of hand C, into allocates 0 B)"
      or ("targets: %d missed"):format(misses))

-- }=====
