-- bindings/test/oom.lua - what test_oom.c runs while the state's allocator
-- refuses: decodes and encodes that refill or read a table, each stopped
-- by a memory error at every allocation in turn. Returns the scenarios:
-- prepare() (allocations allowed), op() (the one that fails), check()
-- (allowed again: raises if the table or the schema was left wrong).
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./build/?.so;" .. package.cpath
local bitwire = require "bitwire"

local s = bitwire.schema {
  Vec3 = { { "x", "float", min = -64, max = 64, res = 0.01 },
           { "y", "float", min = -64, max = 64, res = 0.01 },
           { "z", "float", min = -64, max = 64, res = 0.01 } },
  Entity = { { "id", "int", min = 0, max = 4095 },
             { "pos", "Vec3" },
             { "hp", "int", min = 0, max = 100 },
             { "rot", "quat", bits = 9 },
             { "name", "string", max = 16, optional = true },
             { "path", "array", of = "Vec3", max = 4 } },
  Snapshot = { { "tick", "uint", bits = 20 },
               { "entities", "array", of = "Entity", max = 16 } },
}

local function snapshot (tick, n, moved)
  local v = { tick = tick, entities = {} }
  for i = 1, n do
    local d = moved(i) and tick or 0
    local path = {}
    for k = 1, (i + tick) % 4 do
      path[k] = { x = k + d / 2, y = -k, z = i / 4 }
    end
    v.entities[i] = { id = i, pos = { x = i + d, y = -i / 2, z = d / 4 },
                      hp = (i * 7 + d) % 101, rot = { 0, 0, 0, 1 },
                      name = (i + d) % 3 == 0 and ("e" .. i + d) or nil,
                      path = path }
  end
  return v
end

local function moved (set)
  return function (i) return set[i] ~= nil end
end

local a = snapshot(1, 8, moved {})
local b = snapshot(2, 10, moved { [2] = true, [5] = true, [9] = true })
local c = snapshot(3, 6, moved { [1] = true, [3] = true })
local full = { a = s:encode("Snapshot", a), b = s:encode("Snapshot", b),
               c = s:encode("Snapshot", c) }
local delta_ba = s:encode("Snapshot", b, { baseline = a })
local delta_ca = s:encode("Snapshot", c, { baseline = a })
local delta_cb = s:encode("Snapshot", c, { baseline = b })
local delta_bc = s:encode("Snapshot", b, { baseline = c })

local function copy (v)
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = copy(x) end
  return t
end

-- The same results, value or failure, compared by their bytes.
local function same (r1, r2, what)
  if r1[1] == nil or r2[1] == nil then
    assert(r1[1] == nil and r2[1] == nil and r1[3] == r2[3],
           what .. ": one failed: " .. tostring(r1[2] or r2[2]))
    return
  end
  assert(s:encode("Snapshot", r1[1]) == s:encode("Snapshot", r2[1]),
         what .. ": values differ")
end

local base, into, handle

-- What a memory error left in 'into' is what its table holds, whatever
-- the schema remembered of it: it reads as a baseline and encodes as a
-- copy of it does; and a decode into it gives what a fresh one does.
local function check ()
  local twin = copy(into)
  same({ s:decode("Snapshot", delta_cb, { baseline = into }) },
       { s:decode("Snapshot", delta_cb, { baseline = twin }) },
       "decoded against it")
  local ok1, e1 = pcall(s.encode, s, "Snapshot", c, { baseline = into })
  local ok2, e2 = pcall(s.encode, s, "Snapshot", c, { baseline = twin })
  assert(ok1 == ok2 and (not ok1 or e1 == e2), "encoded against it: differs")
  -- the schema's own state is whole: a delta refills the table exactly
  same({ s:decode("Snapshot", delta_ba, { baseline = base, into = into }) },
       { s:decode("Snapshot", full.b) }, "decoded into it again")
  same({ s:decode("Snapshot", delta_cb, { baseline = into }) },
       { s:decode("Snapshot", full.c) }, "decoded against it again")
end

-- A scenario: the baseline decoded in full, then 'into' made by 'make'.
local function scenario (name, make, op)
  return { name = name, op = op, check = check,
           prepare = function () base = s:decode("Snapshot", full.a); into = make() end }
end

-- a table with a tape of its own, as a client's ring slot has
local function ringslot () return s:decode("Snapshot", delta_ca, { baseline = base }) end
local function deltainto ()
  return s:decode("Snapshot", delta_ba, { baseline = base, into = into })
end

return {
  scenario("delta decoded into a table it refills", ringslot, deltainto),
  scenario("full decode into a table it refills",
           function () return s:decode("Snapshot", full.c) end,
           function () return s:decode("Snapshot", full.b, { into = into }) end),
  scenario("delta decoded into a table of another's", function () return copy(c) end,
           deltainto),
  -- a share decode lends the baseline's tables to the table it fills:
  -- marked lent before they move in, and the table's old tape gone with
  -- them, wherever a memory error stops it
  scenario("delta shared into a table it refills", ringslot, function ()
    return s:decode("Snapshot", delta_ba, { baseline = base, into = into, share = true })
  end),
  scenario("delta shared into its own baseline", ringslot, function ()
    return s:decode("Snapshot", delta_bc, { baseline = into, into = into, share = true })
  end),
  scenario("delta encoded against a table", ringslot,
           function () return s:encode("Snapshot", b, { baseline = into }) end),
  -- a schema's userdata is made before it takes its program's reference:
  -- stopped first, adopt leaves the handle live and compile frees it
  { name = "adopt of a handle", prepare = function () handle = s:share() end,
    op = function () return bitwire.adopt(handle) end,
    check = function ()
      assert(bitwire.adopt(handle):fingerprint() == s:fingerprint(),
             "the handle was taken and its reference lost")
    end },
  -- the guard's __close runs as the call ends: what calling it needs is
  -- made when the call begins, or a memory error skips it for good
  { name = "encode_message ended by a memory error", prepare = function () end,
    op = function () return s:encode_message("Snapshot", b) end,
    check = function ()
      assert(s:decode_message(s:encode_message("Snapshot", c)), "schema unusable")
    end },
  -- a blob's buffer is made once its userdata frees it (run under
  -- valgrind or ASan: a stop before then leaked it)
  { name = "blob", prepare = function () end,
    op = function () return s:blob("Snapshot", b) end,
    check = function () assert(s:unblob("Snapshot", s:blob("Snapshot", c))) end },
  { name = "compile", prepare = function () end,
    op = function () return bitwire.schema(s:description()) end,
    check = function () end },
}
