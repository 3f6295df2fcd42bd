-- bench/bench_schema.lua - issue 7: bitwire schemas against the peers on
-- the standard Snapshot (bench/message.lua).
--
--   make bench      or, from the repository root,
--   LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;;" \
--   LUA_CPATH="./build/?.so;./build/bench/?.so;;" \
--   lua5.4 bench/bench_schema.lua [rounds [seconds]]
--
-- Every peer must round-trip the message first; hand C's bytes must equal
-- bitwire's. Then each operation runs for ~'seconds' (0.2) per round, the
-- peers interleaved, 'rounds' (7) times; the table shows the medians.
-- bitwire is optional until bitwire.schema exists.

if not package.cpath:find("./build/bench/?.so", 1, true) then
  package.cpath = "./build/bench/?.so;" .. package.cpath
end
if not package.path:find("./?.lua", 1, true) then
  package.path = "./?.lua;" .. package.path
end
local timing = require "bench.timing"

local msg = require "bench.message"

local ROUNDS = tonumber(arg and arg[1]) or 7
collectgarbage("incremental")  -- the 5.4 default, stated
local SECONDS = tonumber(arg and arg[2]) or 0.2
local NAME = "Snapshot"

local check, checked = timing.checker()

-- {===== peers =====

local peers = {}
local function add (p) peers[#peers + 1] = p; return p end

add(require "bench.peers.stringpack")
local luabits = add(require "bench.peers.luabits")
add(require "bench.peers.cjson")
do
  local ok, p = pcall(require, "bench.peers.msgpack")
  if ok then add(p)
  else print("note: lua-MessagePack not available: " .. tostring(p)) end
end

local handc
do
  local ok, m = pcall(require, "handc")
  if ok then
    handc = add {name = "hand C", encode = m.encode, decode = m.decode,
                 decode_into = m.decode_into, module = m}
  else
    print("note: hand C peer missing (make build/bench/handc.so): "
          .. tostring(m):match("^[^\n]*"))
  end
end

-- bitwire, once bitwire.schema exists
local bw, bw_note
do
  local ok, bitwire = pcall(require, "bitwire")
  if not ok then
    bw_note = "require failed: " .. tostring(bitwire):match("^[^\n]*")
  elseif type(bitwire) ~= "table" or type(bitwire.schema) ~= "function" then
    bw_note = "bitwire.schema not there yet"
  else
    local sok, s = pcall(bitwire.schema, msg.description)
    if not sok then
      check(false, "bitwire.schema(description)", s)
      bw_note = "schema failed to compile"
    else
      bw = {name = "bitwire", schema = s}
      function bw.encode (v) return s:encode(NAME, v) end
      function bw.decode (b) return s:decode(NAME, b) end
      -- the loops call the methods directly, without a wrapper
      function bw.encode_loop (n, v)
        for _ = 1, n do s:encode(NAME, v) end
      end
      function bw.decode_loop (n, b)
        for _ = 1, n do s:decode(NAME, b) end
      end
      -- {into = t}: supported when it refills and returns 't' itself
      local t = {}
      local iok, r = pcall(s.encode, s, NAME, msg.snapshot())
      if iok then iok, r = pcall(s.decode, s, NAME, r, {into = t}) end
      if iok and r == t then
        local opts = {}
        function bw.decode_into (b, into)
          opts.into = into
          return s:decode(NAME, b, opts)
        end
        function bw.decode_into_loop (n, b, into)
          opts.into = into
          for _ = 1, n do s:decode(NAME, b, opts) end
        end
      else
        bw.into_note = iok and "{into = t} ignored"
                       or "{into = t}: " .. tostring(r)
      end
      add(bw)
    end
  end
end

-- }=====

-- {===== correctness =====

local snap = msg.snapshot(7)
local other = msg.snapshot(8, 40)  -- fewer entities, other names

-- compressed_float math of hand C against serialize.h's vectors
if handc then
  local vf = io.open("spec/fixtures/serialize_sample.lua")
  if vf then
    vf:close()
    local qfloat = handc.module.qfloat
    for _, case in ipairs(dofile("spec/fixtures/serialize_sample.lua")) do
      for _, op in ipairs(case.ops) do
        if op.op == "compressed_float" then
          local q, nbits, dec = qfloat(op.value, op.min, op.max, op.res)
          check(q == op.q and nbits == op.qbits and dec == op.decoded,
                "hand C compressed_float vs serialize.h", case.name)
        end
      end
    end
  end
end

local bytes = {}
for _, p in ipairs(peers) do
  local ok, b = pcall(p.encode, snap)
  if check(ok and type(b) == "string", p.name .. " encode", b) then
    bytes[p] = b
    local dok, v, err = pcall(p.decode, b)
    if check(dok and v ~= nil, p.name .. " decode", dok and err or v) then
      local same, why = msg.compare(snap, v)
      check(same, p.name .. " round trip", why)
    end
  end
  if p.decode_into and bytes[p] then
    -- refill the same table: bigger message, smaller one, bigger again
    local t, ok2 = {}, true
    for _, v in ipairs {snap, other, snap} do
      local iok, r, err = pcall(p.decode_into, p.encode(v), t)
      local same, why = msg.compare(v, iok and r == t and t or nil)
      ok2 = check(iok and r == t and same, p.name .. " decode_into",
                  iok and (err or why) or r) and ok2
    end
    if ok2 then
      local e1 = t.entities[1]
      p.decode_into(bytes[p], t)
      check(t.entities[1] == e1, p.name .. " decode_into reuses entity tables")
    end
  end
end

local function first_diff (a, b)
  for i = 1, math.max(#a, #b) do
    local x, y = a:byte(i), b:byte(i)
    if x ~= y then
      local bit = (i - 1) * 8
      if x and y then
        local d = x ~ y
        while d & 1 == 0 do d = d >> 1; bit = bit + 1 end
      end
      return i, bit
    end
  end
end

local layout_note
if handc and bytes[handc] and bytes[luabits] then
  local a, b = bytes[handc], bytes[luabits]
  if a == b then
    layout_note = "pure-Lua bits == hand C bytes"
  else
    local n = 0
    for i = 1, math.max(#a, #b) do
      if a:byte(i) ~= b:byte(i) then n = n + 1 end
    end
    layout_note = ("pure-Lua bits differs from hand C in %d byte(s): double vs"
                   .. " float32 quantization"):format(n)
    check(#a == #b, "pure-Lua bits size == hand C size")
  end
  -- same layout: each decodes the other's bytes
  check(msg.compare(snap, handc.decode(b)), "hand C decodes pure-Lua bits")
  check(msg.compare(snap, luabits.decode(a)), "pure-Lua bits decodes hand C")
end

-- the acceptance check: bitwire's bytes are hand C's, and decode the same
if bw and handc and bytes[bw] and bytes[handc] then
  for _, v in ipairs {snap, other} do
    local eok, a = pcall(bw.encode, v)
    local b = handc.encode(v)
    if not eok then
      check(false, "bitwire encode", a)
    elseif a ~= b then
      local i, bit = first_diff(a, b)
      check(false, "bitwire bytes == hand C bytes",
            ("%d vs %d bytes, first difference in byte %d, bit %d (%s)"):format(
              #a, #b, i, bit, msg.field_at(v, bit)))
    else
      local x, y = bw.decode(b), handc.decode(b)
      check(msg.compare(y, x, true), "bitwire decode == hand C decode (exact)",
            select(2, msg.compare(y, x, true)))
    end
  end
  local dok, r, err, code = pcall(bw.decode, bytes[handc]:sub(1, -2))
  check(dok and r == nil and type(err) == "string" and type(code) == "string",
        "bitwire decode of truncated bytes returns nil, message, code",
        dok and err or r)
end

checked()

-- }=====

-- {===== timing =====


-- Each op: a function running 'n' iterations.
local function loop1 (f, a)
  return function (n) for _ = 1, n do f(a) end end
end
local function loop2 (f, a, b)
  return function (n) for _ = 1, n do f(a, b) end end
end

local ops = {}
for _, p in ipairs(peers) do
  local b = bytes[p]
  p.stats = {}
  ops[#ops + 1] = {peer = p, kind = "enc",
    run = p.encode_loop and function (n) p.encode_loop(n, snap) end
          or loop1(p.encode, snap)}
  ops[#ops + 1] = {peer = p, kind = "dec",
    run = p.decode_loop and function (n) p.decode_loop(n, b) end
          or loop1(p.decode, b)}
  if p.decode_into then
    local t = {}
    p.decode_into(b, t)
    ops[#ops + 1] = {peer = p, kind = "into",
      run = p.decode_into_loop and function (n) p.decode_into_loop(n, b, t) end
            or loop2(p.decode_into, b, t)}
  end
end

timing.run(ops, SECONDS, ROUNDS)
local median = timing.median

for _, op in ipairs(ops) do
  op.peer.stats[op.kind] = median(op.rates)
  op.peer.stats[op.kind .. "_spread"] =
    (op.rates[#op.rates] - op.rates[1]) / op.peer.stats[op.kind]
end


for _, op in ipairs(ops) do
  if op.kind ~= "enc" then op.peer.stats["alloc_" .. op.kind] = timing.alloc(op.run, 200) end
end

-- }=====

-- {===== report =====

local function rate (x)
  if not x then return "-" end
  if x >= 1e6 then return ("%.2fM"):format(x / 1e6) end
  if x >= 1e3 then return ("%.1fk"):format(x / 1e3) end
  return ("%.0f"):format(x)
end

local function kb (x)
  if not x then return "-" end
  if x < 10 and x ~= x // 1 then return ("%.1f B"):format(x) end
  if x < 1024 then return ("%.0f B"):format(x) end
  return ("%.1f KB"):format(x / 1024)
end

print(("%s, %s GC; %d interleaved rounds of ~%.2f s per op, median;"
       .. " Snapshot: 64 entities, 8 names"):format(
  _VERSION, "incremental",
  ROUNDS, SECONDS))
print()
print(("%-16s %6s %10s %10s %10s %8s %10s %10s"):format("peer", "bytes",
  "encode/s", "decode/s", "into/s", "spread", "alloc/dec", "alloc/into"))
for _, p in ipairs(peers) do
  local s = p.stats
  local spread = math.max(s.enc_spread, s.dec_spread, s.into_spread or 0)
  print(("%-16s %6d %10s %10s %10s %7.0f%% %10s %10s"):format(
    p.name, #bytes[p], rate(s.enc), rate(s.dec), rate(s.into), spread * 100,
    kb(s.alloc_dec), kb(s.alloc_into)))
end
print("(spread: max - min over the rounds, relative to the median, worst op)")
if layout_note then print(layout_note) end
if bw and bw.into_note then print("bitwire: " .. bw.into_note) end
print()

local byname = {}
for _, p in ipairs(peers) do byname[p.name] = p end
local sp, hc = byname["string.pack"], handc

if bw then
  for _, p in ipairs(peers) do
    if p ~= bw then
      local function r (k)
        local a, b = bw.stats[k], p.stats[k]
        return a and b and ("%.2fx"):format(a / b) or "-"
      end
      print(("bitwire vs %-16s encode %6s  decode %6s  into %6s  size %+6.1f%%")
            :format(p.name .. ":", r("enc"), r("dec"), r("into"),
                    (#bytes[bw] / #bytes[p] - 1) * 100))
    end
  end
  print()
end

-- the reference: how far hand C itself gets past string.pack
if hc then
  print(("hand C vs string.pack: encode %.2fx, decode %.2fx, into (vs fresh) %.2fx")
        :format(hc.stats.enc / sp.stats.enc, hc.stats.dec / sp.stats.dec,
                hc.stats.into / sp.stats.dec))
end

local function target (label, value, fmt, goal, pass)
  local shown = value and fmt:format(value) or "n/a"
  local mark = value == nil and "" or (pass(value) and "  ok" or "  MISS")
  print(("%-30s %9s  (target %s)%s"):format(label, shown, goal, mark))
end

local function ratio (k, peer)
  if not (bw and peer and bw.stats[k] and peer.stats[k]) then return nil end
  return bw.stats[k] / peer.stats[k]
end

local function pct (x) return x and x * 100 end

print("targets (issue 7):"
      .. (bw and "" or " bitwire not measured: " .. bw_note))
target("encode vs string.pack:", ratio("enc", sp), "%.2fx", ">= 2.0x",
       function (x) return x >= 2.0 end)
target("encode vs hand C:", pct(ratio("enc", hc)), "%.0f%%", ">= 90%",
       function (x) return x >= 90 end)
target("decode fresh vs string.pack:", ratio("dec", sp), "%.2fx", ">= 1.3x",
       function (x) return x >= 1.3 end)
target("decode fresh vs hand C:", pct(ratio("dec", hc)), "%.0f%%", ">= 90%",
       function (x) return x >= 90 end)
target("decode into vs string.pack:",
       bw and bw.stats.into and sp.stats.dec and bw.stats.into / sp.stats.dec,
       "%.2fx", ">= 3.0x", function (x) return x >= 3.0 end)
target("decode into vs hand C:", pct(ratio("into", hc)), "%.0f%%",
       ">= 90%", function (x) return x >= 90 end)
target("size vs pure-Lua bitpacker:",
       bw and bytes[bw] and (#bytes[bw] / #bytes[luabits] - 1) * 100,
       "%+.1f%%", "<= +2%", function (x) return x <= 2 end)
target("decode into allocation:", bw and bw.stats.alloc_into, "%.1f B",
       "0 B per decode", function (x) return x == 0 end)
if hc then
  print(("  (hand C decode into allocates %s per decode; pure-Lua bits %s)"):format(
    kb(hc.stats.alloc_into), kb(luabits.stats.alloc_into)))
end

-- }=====

-- compiling: bitwire.schema of this message's description (the compiler in
-- core/bw_compile.c), median of 5 rounds of 2000
if bw then
  local rounds = {}
  for r = 1, 5 do
    local t0 = os.clock()
    for _ = 1, 2000 do require("bitwire").schema(msg.description) end
    rounds[r] = (os.clock() - t0) / 2000 * 1e6
  end
  table.sort(rounds)
  print(("bitwire.schema(description): %.1f us per compile"):format(rounds[3]))
end
