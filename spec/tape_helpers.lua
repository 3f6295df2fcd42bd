-- Shared helpers of the tape specs (spec/07c-tape*_spec.lua): a schema of
-- every kind a tape holds, random values of it and random changes to them,
-- and the checks of a delta against the walk over baseline tables.
local assert = require "luassert"
local H = require "spec.helpers"
local M = {}

local DESC = {
  Vec = { { "x", "float", min = -10, max = 10, res = 0.01 },
          { "y", "float", min = -10, max = 10, res = 0.01 } },
  Item = {
    { "id", "int", min = 0, max = 100 },
    { "tag", "string", max = 12, optional = true },
    { "pos", "Vec" },
    { "hp", "int", min = 0, max = 50, clamp = true },
    { "drift", "float", min = -8, max = 8, res = 1 / 64, delta = "relative", default = 0 },
    { "on", "bool" },
    { "align" },
    { "rot", "quat", bits = 9 },
    { "yaw", "angle", bits = 10 },
    { "spin", "angle", bits = 8, delta = "relative", default = 0 },
    { "turn", "quat", bits = 9, delta = "relative", optional = true },
  },
  Group = { { "lead", "int", min = 0, max = 9 },
            { "members", "sparse", of = "Vec", max = 12, encoding = "auto" } },
  Root = {
    { "k", "int", min = 0, max = 1000 },
    { "flag", "bool" },
    { "mode", "enum", values = { "a", "b", "c" } },
    { "big", "uint", bits = 64 },
    { "name", "string", max = 24 },
    { "check", magic = 0x7A9E },
    { "opt", "int", min = -5, max = 5, optional = true, clamp = true },
    { "heat", "float", min = 0, max = 100, res = 0.5, delta = "relative", optional = true },
    { "optrec", "Item", optional = true },
    { "items", "array", of = "Item", max = 8 },
    { "nums", "array", of = { "int", min = 0, max = 9 }, max = 9 },
    { "words", "array", of = { "string", max = 12 }, max = 4 },
    { "pair", "array", of = "Vec", count = 2 },
    { "grid", "array", of = { "array", of = { "int", min = 0, max = 9 }, max = 4 }, max = 3 },
    { "paths", "array", of = { "array", of = "Vec", max = 2 }, max = 2 },
    { "track", "array", of = { "float", min = -4, max = 4, res = 1 / 32, delta = "relative" },
      max = 6 },
    { "later", "int", min = 0, max = 9, since = 1, default = 3 },
    -- sparse arrays: of records, of scalars, long (their keys visited),
    -- optional, of records holding sparse arrays, in arrays
    { "ents", "sparse", of = "Item", max = 40, encoding = "auto" },
    { "marks", "sparse", of = { "int", min = 0, max = 9 }, max = 70, encoding = "mask" },
    { "far", "sparse", of = "Vec", max = 6000, encoding = "relative", tiers = "article" },
    { "groups", "sparse", of = "Group", max = 6, encoding = "index", optional = true },
    { "rows", "array", of = { "sparse", of = { "int", min = 0, max = 3 }, max = 8 }, max = 3 },
    { "tags", "sparse", of = { "string", max = 6 }, max = 9, encoding = "index" },
    { "spins", "sparse", of = { "quat", bits = 9 }, max = 4 },
    -- slots that are arrays of IEEE floats, and sparse arrays
    { "bags", "sparse", of = { "array", of = { "float32" }, max = 3 }, max = 5 },
    { "layers", "sparse", of = { "sparse", of = "Vec", max = 4 }, max = 4, encoding = "auto" },
  },
}

local WORDS = { "", "a", "bb", "héllo", "twelve chars", "x", "nine char" }

local function quat (rand)
  local q, l = {}, 0
  for k = 1, 4 do
    q[k] = rand(2001) / 1000 - 1
    l = l + q[k] * q[k]
  end
  l = math.sqrt(l)
  if l < 0.01 then return { 0, 0, 0, 1 } end
  for k = 1, 4 do q[k] = q[k] / l end
  return q
end

local function gen (rand)
  local function vec () return { x = rand(2001) / 100 - 10, y = rand(2001) / 100 - 10 } end
  local function item ()
    return { id = rand(101), tag = rand(3) == 0 and WORDS[rand(#WORDS) + 1] or nil,
             pos = vec(), hp = rand(60), on = rand(2) == 0, rot = quat(rand),
             yaw = rand(6284) / 1000, drift = rand(1025) / 64 - 8,
             spin = rand(6284) / 1000, turn = rand(3) > 0 and quat(rand) or nil }
  end
  local v = { k = rand(1001), flag = rand(2) == 0, mode = ({ "a", "b", "c" })[rand(3) + 1],
              big = rand(2) == 0 and -1 - rand(1000) or rand(1 << 40),
              name = WORDS[rand(#WORDS) + 1] .. WORDS[rand(#WORDS) + 1],
              opt = rand(2) == 0 and rand(15) - 7 or nil,
              heat = rand(3) > 0 and rand(201) / 2 or nil,
              optrec = rand(2) == 0 and item() or nil,
              items = {}, nums = {}, words = {}, pair = { vec(), vec() },
              later = rand(10) }
  for i = 1, rand(7) do v.items[i] = item() end
  for i = 1, rand(10) do v.nums[i] = rand(10) end
  for i = 1, rand(5) do v.words[i] = WORDS[rand(#WORDS) + 1] end
  v.grid, v.paths, v.track = {}, {}, {}
  for i = 1, rand(7) do v.track[i] = rand(257) / 32 - 4 end
  for i = 1, rand(4) do
    v.grid[i] = {}
    for j = 1, rand(5) do v.grid[i][j] = rand(10) end
  end
  for i = 1, rand(3) do
    v.paths[i] = {}
    for j = 1, rand(3) do v.paths[i][j] = vec() end
  end
  local function group ()
    local g = { lead = rand(10), members = {} }
    for _ = 1, rand(4) do g.members[rand(12) + 1] = vec() end
    return g
  end
  v.ents, v.marks, v.far, v.rows, v.tags, v.spins = {}, {}, {}, {}, {}, {}
  for _ = 1, rand(5) do v.ents[rand(40) + 1] = item() end
  for _ = 1, rand(12) do v.marks[rand(70) + 1] = rand(10) end
  for _ = 1, rand(5) do v.far[rand(6000) + 1] = vec() end
  if rand(3) > 0 then
    v.groups = {}
    for _ = 1, rand(4) do v.groups[rand(6) + 1] = group() end
  end
  for i = 1, rand(4) do
    v.rows[i] = {}
    for _ = 1, rand(4) do v.rows[i][rand(8) + 1] = rand(4) end
  end
  for _ = 1, rand(4) do v.tags[rand(9) + 1] = ({ "", "a", "bb", "héllo", "x" })[rand(5) + 1] end
  for _ = 1, rand(3) do v.spins[rand(4) + 1] = quat(rand) end
  -- no -0.0: a delta keeps the baseline's 0.0 (07c-tape_sparse_spec.lua)
  local function bag ()
    local t = {}
    for i = 1, rand(4) do t[i] = ({ 0.0, 1.5, -2, 0.25 })[rand(4) + 1] end
    return t
  end
  local function layer ()
    local t = {}
    for _ = 1, rand(3) do t[rand(4) + 1] = vec() end
    return t
  end
  v.bags, v.layers = {}, {}
  for _ = 1, rand(3) do v.bags[rand(5) + 1] = bag() end
  for _ = 1, rand(3) do v.layers[rand(4) + 1] = layer() end
  return v, item, vec, group, bag, layer
end

-- the keys of table 't', sorted
local function keysof (t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return ks
end

-- a few slots of sparse array 'sp' ('max' slots) changed by 'edit' (which
-- returns the new value, or nil), dropped, added by 'new', or shared with
-- 'old' (the baseline's)
local function changeslots (rand, sp, old, max, edit, new)
  for _, k in ipairs(keysof(sp)) do
    local r = rand(8)
    if r == 0 then sp[k] = nil
    elseif r == 1 then sp[k] = edit(sp[k])
    elseif r == 2 and old[k] ~= nil then sp[k] = old[k] end
  end
  for _ = 1, rand(3) do
    local k = rand(max) + 1
    if sp[k] == nil then sp[k] = new() end
  end
end

local copy = H.copy

-- 'b' from 'a': a few changes of every kind, some tables shared with 'a'
local function change (rand, a)
  local fresh, item, vec, group, bag, layer = gen(rand)
  local b = copy(a)
  local keys = { "flag", "mode", "big", "name", "opt", "heat", "optrec", "nums",
                 "words", "pair", "grid", "paths", "track", "later", "ents", "marks",
                 "far", "groups", "rows", "tags", "spins", "bags", "layers" }
  for _ = 1, rand(4) do
    local k = keys[rand(#keys) + 1]
    b[k] = fresh[k]
  end
  for i = 1, #b.items do
    local r = rand(6)
    if r == 0 then b.items[i] = a.items[i]          -- shared
    elseif r == 1 then b.items[i].pos = vec()
    elseif r == 2 then b.items[i].tag = WORDS[rand(#WORDS) + 1]
    elseif r == 3 then b.items[i].hp = rand(60)
    elseif r == 4 then b.items[i].rot = quat(rand)
    elseif r == 5 then b.items[i].yaw = rand(6284) / 1000 end
    -- relative fields (not in a shared item): small moves, large ones,
    -- gone and back
    r = b.items[i] ~= a.items[i] and rand(8)
    local it = b.items[i]
    if r == 0 then it.drift = math.max(-8, math.min(8, it.drift + (rand(9) - 4) / 64))
    elseif r == 1 then b.items[i].drift = rand(1025) / 64 - 8
    elseif r == 2 then b.items[i].spin = rand(6284) / 1000
    elseif r == 3 then b.items[i].turn = quat(rand)
    elseif r == 4 then b.items[i].turn = nil end
  end
  if b.heat and rand(2) == 0 then b.heat = math.min(100, b.heat + rand(5) / 2) end
  for i = 1, #b.track do
    if rand(3) == 0 then b.track[i] = math.max(-4, math.min(4, b.track[i] + (rand(5) - 2) / 32)) end
  end
  local r = rand(4)
  if r == 0 and #b.items < 8 then b.items[#b.items + 1] = item()
  elseif r == 1 then b.items[#b.items] = nil end
  if rand(3) == 0 then b.optrec = item() end
  local row = b.grid[rand(#b.grid + 1)]  -- arrays in arrays: an element,
  if row and #row > 0 then row[rand(#row) + 1] = rand(10) end  -- a length
  local path = b.paths[rand(#b.paths + 1)]
  if path and #path < 2 then path[#path + 1] = vec()
  elseif path then path[#path] = nil end
  if rand(4) == 0 then b.optrec = a.optrec end   -- shared records and arrays
  if rand(4) == 0 then b.pair = a.pair end
  if rand(4) == 0 then b.nums = a.nums end
  if rand(4) == 0 then b.grid = a.grid end
  -- sparse arrays: slots edited, dropped, added, shared; or all shared
  local function moved (e)
    e = copy(e)
    e.pos = vec()
    if rand(2) == 0 then e.hp = rand(60) end
    return e
  end
  if b.ents ~= a.ents then changeslots(rand, b.ents, a.ents, 40, moved, item) end
  changeslots(rand, b.marks, a.marks, 70, function () return rand(10) end,
              function () return rand(10) end)
  if rand(2) == 0 then changeslots(rand, b.far, a.far, 6000, vec, vec) end
  if b.groups and a.groups and rand(2) == 0 then
    changeslots(rand, b.groups, a.groups, 6, function (g)
      g = copy(g)
      changeslots(rand, g.members, {}, 12, vec, vec)
      return g
    end, group)
  end
  local srow = b.rows[rand(#b.rows + 1)]
  if srow then changeslots(rand, srow, {}, 8, function () return rand(4) end,
                           function () return rand(4) end) end
  if rand(3) == 0 then b.tags[rand(9) + 1] = ({ "a", "zz" })[rand(2) + 1] end
  if rand(3) == 0 then b.spins[rand(4) + 1] = quat(rand) end
  if rand(2) == 0 then
    changeslots(rand, b.bags, a.bags, 5, function (x)
      x = copy(x)
      if #x > 0 then x[rand(#x) + 1] = 0.25 elseif rand(2) == 0 then x[1] = 1.5 end
      return x
    end, bag)
  end
  if rand(2) == 0 then
    changeslots(rand, b.layers, a.layers, 4, function (l)
      l = copy(l)
      changeslots(rand, l, {}, 4, vec, vec)
      return l
    end, layer)
  end
  if rand(5) == 0 then b.ents = a.ents end
  b.k = (a.k + 1 + rand(999)) % 1001  -- always changed: see poisoned
  return b
end

-- a copy of baseline 'a' that is no value of Root (its k), so the encode
-- walks the table; 'b' changes k anyway, so the bytes are the same
local function poisoned (a)
  local p = copy(a)
  p.k = "not a number"
  return p
end

-- the delta of 'v' against 'base' read from its tape is the walk over the
-- table's (poisoned(base) makes the encode walk it); returns the bytes
local function sameastable (s, name, v, base, version, msg)
  local want = s:encode(name, v, { baseline = poisoned(base), version = version })
  assert.equal(H.tohex(want), H.tohex(s:encode(name, v, { baseline = base, version = version })),
               msg)
  return want
end

-- a delta decoded against the tape is what the walk over tables (share) gives
local function decodesame (s, name, bytes, base, version)
  assert.same(s:decode(name, bytes, { baseline = base, version = version, share = true }),
              s:decode(name, bytes, { baseline = base, version = version }))
end

M.DESC, M.WORDS = DESC, WORDS
M.quat, M.gen, M.copy, M.change, M.poisoned = quat, gen, copy, change, poisoned
M.sameastable, M.decodesame = sameastable, decodesame

return M
