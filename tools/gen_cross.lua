-- The generated-code cross test: for every description given, generate C
-- (bitwire.gen.c) and C++ (bitwire.gen.serialize_h), compile both against
-- the core, and for thousands of random values per type and as many hostile
-- byte strings check that the Lua driver, the generated C and the generated
-- C++ agree: same bytes, same sizes, and for bad bytes (C) the same error
-- code, bit position and field path.
-- usage: lua5.4 tools/gen_cross.lua OUTDIR "CC" "CXX" N defs.lua...
local bitwire = require "bitwire"
local gen = require "bitwire.gen"
local rand = require "tools.gen_random"
local poke = require "tools.gen_poke"
local ctypes = require "bitwire.gen.ctypes"

local outdir, CC, CXX, NCASES = arg[1], arg[2], arg[3], tonumber(arg[4])
local files = { table.unpack(arg, 5) }
local fmt = string.format
local CORE = os.getenv("CORE_SRC") or "build/libbitwire.a"
local SAN = os.getenv("CORE_SRC") and os.getenv("GEN_SAN") or ""

local function tohex(s)
  return (s:gsub(".", function(c) return fmt("%02x", c:byte()) end))
end

local function sh(cmd)
  local ok = os.execute(cmd)
  if not ok then error("failed: " .. cmd, 0) end
end

local function write(path, s)
  local f = assert(io.open(path, "w"))
  f:write(s)
  f:close()
end

-- "path: detail (bit N)" -> path ("" when the message has none)
local function pathof(msg)
  return msg:match("^([%w_%.%[%]]+): ") or ""
end

-- Hostile variants of the valid encoding 'b', by string operations (a
-- table of a packet's bytes passes no more than a million to string.char).
local function mutate(b)
  local op = math.random(4)
  if op == 1 and #b > 0 then   -- flip 1 to 3 bits
    for _ = 1, math.random(3) do
      local i = math.random(#b)
      b = b:sub(1, i - 1) .. string.char(b:byte(i) ~ (1 << math.random(0, 7)))
        .. b:sub(i + 1)
    end
    return b
  elseif op == 2 then          -- truncated
    return b:sub(1, math.random(0, #b) - 1)
  elseif op == 3 then          -- random bytes
    return rand.randbytes(math.random(0, #b + 4))
  end
  local keep = math.random(0, #b)  -- random bytes from a random point on
  return b:sub(1, keep) .. rand.randbytes(#b - keep + math.random(0, 3))
end

local failures, checked = 0, 0
local function fail(what, ...)
  failures = failures + 1
  if failures <= 20 then io.write(fmt(what, ...), "\n") end
end

-- The line for a message: its id, then its type's value.
local function expectmsg(s, program, bytes)
  local name, v, code = s:decode_message(bytes)
  if name == nil then
    return fmt("E %s %s %s", code, v:match("%(bit (%d+)%)$"), pathof(v))
  end
  local _ = program
  return fmt("O %s -", tohex(s:encode_message(name, v)))   -- no size: ids unaligned
end

-- 's' speaking 'version' (nil: its current one): opts get the version.
local function at(s, version)
  if version == nil then return s end
  local function o(opts)
    local t = { version = version }
    for k, v in pairs(opts or {}) do t[k] = v end
    return t
  end
  return {
    encode = function(_, name, v, opts) return s:encode(name, v, o(opts)) end,
    encode_message = function(_, name, v, opts) return s:encode_message(name, v, o(opts)) end,
    decode_message = function(_, b, opts) return s:decode_message(b, o(opts)) end,
    decode = function(_, name, b, opts) return s:decode(name, b, o(opts)) end,
    bits = function(_, name, v, opts) return s:bits(name, v, o(opts)) end,
  }
end

-- The line each side must print for 'bytes' of type 't': decode with the
-- driver (against 'opts.baseline' for a delta), then encode it again.
local function expect(s, t, bytes, opts)
  local v, msg, code = s:decode(t.name, bytes, opts)
  if v == nil then
    return fmt("E %s %s %s", code, msg:match("%(bit (%d+)%)$"), pathof(msg)), false
  end
  local e = s:encode(t.name, v, opts)
  return fmt("O %s %d", tohex(e), s:bits(t.name, v, opts)), true
end

local function run(file, version, N)
  local desc = dofile(file)
  if desc.description then desc = desc.description end
  local s = bitwire.schema(desc)
  local program = ctypes.program(s, version)
  local sv = at(s, version)
  local base = file:match("([^/]+)%.lua$") .. (version and "_v" .. version or "")
  local dir = outdir .. "/" .. base
  sh("mkdir -p " .. dir)
  local c = gen.c(s, { name = "messages", version = version })
  write(dir .. "/messages.h", c.header)
  write(dir .. "/messages.c", c.source)
  write(dir .. "/pokes.inc", poke.include(program))
  local flags = "-O0 -Wall -Wextra -Wpedantic -Wshadow -Werror -ffp-contract=off -Icore -I" .. dir
  -- the C side runs under ASan and UBSan: hostile bytes must not make the
  -- generated code touch memory outside the struct or the input
  sh(fmt("%s -std=c99 %s %s -o %s/harness_c core/test/gen_harness.c %s/messages.c "
    .. "%s -lz -lm", CC, flags, SAN, dir, dir, CORE))
  local sides = { "c" }
  local okcxx, cxx = pcall(gen.serialize_h, s, { name = "messages", version = version })
  if CXX == "-" or not okcxx then
    if CXX ~= "-" then io.write(fmt("gen cross %s: no C++ side (%s)\n", base, tostring(cxx))) end
    cxx = nil
  else sides[2] = "cxx" end
  if cxx then
    write(dir .. "/messages.hpp", cxx)
    local inc = {}
    for _, t in ipairs(program.types) do
      inc[#inc + 1] = fmt("MESSAGE_TYPE(%d, %s)", t.id, t.name)
    end
    write(dir .. "/messages_types.inc", table.concat(inc, "\n") .. "\n")
  end
  if cxx then sh(fmt("%s -std=c++11 %s -Ispec/fixtures -o %s/harness_cxx core/test/gen_harness.cc "
    .. "build/libbitwire.a -lz -lm", CXX, flags, dir)) end
  -- types that hold a quaternion somewhere
  local quats = {}
  local function hasquat(f)
    if f.kind == "quat" then return true end
    if f.kind == "struct" then
      for _, g in ipairs(program.byname[f.type].fields) do
        if hasquat(g) then return true end
      end
    end
    return f.of ~= nil and hasquat(f.of)
  end
  for _, t in ipairs(program.types) do
    quats[t.name] = hasquat({ kind = "struct", type = t.name })
  end
  -- cases: valid values, then hostile bytes
  local lines, expects, valid = {}, {}, {}
  for _, t in ipairs(program.types) do
    for _ = 1, N do
      local v = rand.value(program, t)
      local b = sv:encode(t.name, v)
      local want = expect(sv, t, b)
      -- quaternions renormalize on decode, so only their re-encoding is
      -- compared; everything else must come back as it was sent
      if not want:find("^O " .. tohex(b) .. " ") and not quats[t.name] then
        fail("%s %s: the driver does not round-trip %s", base, t.name, tohex(b))
      end
      lines[#lines + 1] = fmt("%d %s", t.id, tohex(b))
      expects[#expects + 1], valid[#valid + 1] = want, true
      local h = mutate(b)
      local hw, ok = expect(sv, t, h)
      lines[#lines + 1] = fmt("%d %s", t.id, tohex(h))
      expects[#expects + 1], valid[#valid + 1] = hw, ok
    end
  end
  -- integers set out of range in the value read: both sides must clamp
  -- or refuse them as the driver does
  for _, t in ipairs(program.types) do
    local spots = poke.spots(program, t)
    for _ = 1, #spots > 0 and N // 2 or 0 do
      local k = math.random(#spots)
      local val = poke.value(spots[k].f)
      local b = sv:encode(t.name, rand.value(program, t))
      local v = sv:decode(t.name, b)
      local idx = val and poke.apply(v, spots[k], val)
      if idx then
        local want, err = poke.expect(sv, t.name, v, tohex)
        if not want then fail("%s %s: %s refused: %s", base, t.name, spots[k].name, err) end
        lines[#lines + 1] = fmt("P%d %d %d %d %s", t.id, k - 1, idx, val, tohex(b))
        expects[#expects + 1], valid[#valid + 1] = want or "?", "poke"
      end
    end
  end
  -- deltas (C only: serialize.h has none): a value near a baseline, and
  -- one unrelated to it, then the same bytes corrupted
  local dlines, dexpects = {}, {}
  for _, t in ipairs(program.types) do
    for k = 1, N // 2 do
      local bb = sv:encode(t.name, rand.value(program, t))
      local bv = sv:decode(t.name, bb)
      local v = k % 4 == 0 and rand.value(program, t) or rand.near(program, t, bv)
      local opts = { baseline = bv }
      local d = sv:encode(t.name, v, opts)
      for _, bytes in ipairs { d, mutate(d) } do
        dlines[#dlines + 1] = fmt("D%d %s %s", t.id, tohex(bb), tohex(bytes))
        dexpects[#dexpects + 1] = expect(sv, t, bytes, opts)
      end
    end
  end
  -- messages (C only): the id, then the value; and corrupted
  for _, t in ipairs(program.types) do
    if ctypes.msgid(program, t) then
      for _ = 1, N // 4 do
        local m = sv:encode_message(t.name, rand.value(program, t))
        for _, bytes in ipairs { m, mutate(m) } do
          dlines[#dlines + 1] = "M " .. tohex(bytes)
          dexpects[#dexpects + 1] = expectmsg(sv, program, bytes)
        end
      end
    end
  end
  for i = 1, #dlines do
    lines[#lines + 1], expects[#expects + 1] = dlines[i], dexpects[i]
    valid[#valid + 1] = "delta"
  end
  write(dir .. "/cases.txt", table.concat(lines, "\n") .. "\n")
  -- the C++ side gets the cases up to the first delta
  local ncxx = 0
  while valid[ncxx + 1] ~= nil and valid[ncxx + 1] ~= "delta" do ncxx = ncxx + 1 end
  write(dir .. "/cases_cxx.txt", table.concat(lines, "\n", 1, ncxx) .. "\n")
  for _, side in ipairs(sides) do
    sh(fmt("%s/harness_%s < %s/%s > %s/out_%s.txt", dir, side, dir,
      side == "c" and "cases.txt" or "cases_cxx.txt", dir, side))
    local i = 0
    for got in io.lines(fmt("%s/out_%s.txt", dir, side)) do
      i = i + 1
      local want = expects[i]
      -- serialize.h's bool functions say only that a read failed
      if side == "cxx" and not valid[i] then want = "E" end
      if side == "cxx" and got:sub(1, 1) == "E" then got = "E" end
      if side == "cxx" and want == "W range" then want = "W" end
      if got ~= want and got:sub(1, 2) == "O " and want:sub(1, 2) == "O " then
        -- a value Lua cannot hold exactly (a signaling NaN's payload): the
        -- driver must read the other side's bytes as it read the input
        local hex, bits = got:match("^O (%x*) ([%d-]+)$")
        local t = program.types[tonumber(lines[i]:match("^[DP]?(%d+)") or "0") + 1]
        local opts
        if valid[i] == "delta" and lines[i]:sub(1, 1) == "D" then
          local bb = lines[i]:match("^D%d+ (%x*) ")
          opts = { baseline = sv:decode(t.name, (bb:gsub("%x%x", function(x)
            return string.char(tonumber(x, 16)) end))) }
        end
        local raw = hex:gsub("%x%x", function(x) return string.char(tonumber(x, 16)) end)
        local norm = lines[i]:sub(1, 1) == "M" and expectmsg(sv, program, raw)
          or expect(sv, t, raw, opts)
        if norm == want and want:match(" ([%d-]+)$") == bits then got = want end
      end
      if got ~= want then
        fail("%s %s: %s\n  input %s\n  want  %s\n  got   %s", base, side, i,
          lines[i]:sub(1, 200), want:sub(1, 200), got:sub(1, 200))
      end
      checked = checked + 1
    end
    local want = side == "c" and #expects or ncxx
    if i ~= want then fail("%s %s: %d lines for %d cases", base, side, i, want) end
  end
  io.write(fmt("gen cross %s: %d types, %d cases each side\n", base,
    #program.types, #expects))
end

math.randomseed(tonumber(os.getenv("SEED") or "") or 12345)
for _, f in ipairs(files) do
  local ok, err = pcall(run, f, nil, NCASES)
  if not ok then fail("%s: %s", f, err) end
  -- a versioned description: the older versions too
  local d = dofile(f)
  local current = bitwire.schema(d.description or d):program().version
  for v = 0, current - 1 do
    ok, err = pcall(run, f, v, math.max(1, NCASES // 4))   -- fewer: same code paths
    if not ok then fail("%s version %d: %s", f, v, err) end
  end
end
io.write(fmt("gen cross: %d checks, %d failed\n", checked, failures))
os.exit(failures == 0 and 0 or 1)
