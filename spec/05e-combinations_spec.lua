-- The decode options in every combination: into (none, new, recycled,
-- another type's, schema's or version's decode, aliased and cyclic tables)
-- x baseline (none, this schema's decode, a copy by hand, another
-- schema's decode) x share x version x max_values x entry point (decode,
-- decode_message, frame_decode), then protocols over a registry with
-- deltas, reloads and each framing. Whatever the options, a decode into
-- a table gives exactly what the same decode without into gives (every
-- key, and the same bytes again), and a delta exactly what a full decode
-- of the same value gives.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local TH = require "spec.tape_helpers"

-- Two revisions of one set of definitions (a reload): ranges, a sparse
-- max and an added field differ.
local function defs (rev)
  return string.format([[
return {
  messages = { "Snap", "Ent", "Msg" },
  Vec = { {"x", "float", min = -10, max = 10, res = 0.01, delta = "relative"},
          {"y", "float", min = -10, max = 10, res = 0.01} },
  Ent = {
    {"id", "int", min = 0, max = 255},
    {"pos", "Vec"},
    {"rot", "quat", bits = 9, optional = true},
    {"hp", "int", min = 0, max = %d},
    {"tag", "string", max = 8, optional = true},
    {"armor", "int", min = 0, max = 9, since = 2, default = 1},
    {"old", "bool", removed = 2, default = false},
    {"lvl", "tiered", tiers = {0, 2, 4, 8}, min = 1},
    {"spin", "angle", bits = 8, delta = "relative", default = 0},
    %s
  },
  Snap = {
    {"tick", "uint", bits = 16},
    {"ents", "array", of = "Ent", max = 5},
    {"others", "sparse", of = "Ent", max = %d, encoding = "auto"},
    {"grid", "array", of = {"array", of = {"int", min = 0, max = 3}, max = 3}, max = 3},
    {"opt", "Vec", optional = true},
    {"fixed", "array", of = "Vec", count = 2},
    {"q", "quat", bits = 8, delta = "relative"},
    {"marks", "sparse", of = {"int", min = 0, max = 7}, max = 10, encoding = "index"},
  },
  -- names of Snap's and Ent's fields, as other kinds
  Msg = {
    {"ents", "Vec"},
    {"pos", "array", of = "Vec", max = 3},
    {"others", "quat", bits = 9},
    {"tick", "Vec", optional = true},
    {"grid", "sparse", of = "Vec", max = 4},
    {"x", "int", min = 0, max = 9},
  },
}]], rev == 1 and 100 or 200,
    rev == 2 and '{"shield", "int", min = 0, max = 3, default = 0},' or "",
    rev == 1 and 20 or 12)
end

local function schemaof (rev)
  return bitwire.schema(assert(load(defs(rev)))())
end

-- Values of each type (a revision's), and a change of one that keeps the
-- tables it does not change.
local function generators (rand)
  local G = {}
  local function quat () return TH.quat(rand) end
  local function vec () return { x = rand(2001) / 100 - 10, y = rand(2001) / 100 - 10 } end
  function G.Ent (rev)
    return { id = rand(256), pos = vec(), rot = rand(2) == 0 and quat() or nil,
             hp = rand(101), tag = rand(3) == 0 and ("t" .. rand(100)) or nil, armor = rand(10),
             old = rand(2) == 0, lvl = 1 + rand(277), spin = rand(6284) / 1000,
             shield = rev == 2 and rand(4) or nil }
  end
  function G.Snap (rev)
    local v = { tick = rand(65536), ents = {}, others = {}, grid = {}, fixed = { vec(), vec() },
                q = quat(), marks = {}, opt = rand(2) == 0 and vec() or nil }
    for i = 1, rand(6) do v.ents[i] = G.Ent(rev) end
    for _ = 1, rand(4) do v.others[rand(12) + 1] = G.Ent(rev) end
    for i = 1, rand(4) do
      v.grid[i] = {}
      for j = 1, rand(4) do v.grid[i][j] = rand(4) end
    end
    for _ = 1, rand(4) do v.marks[rand(10) + 1] = rand(8) end
    return v
  end
  function G.Msg ()
    local v = { ents = vec(), pos = {}, others = quat(), grid = {}, x = rand(10),
                tick = rand(2) == 0 and vec() or nil }
    for i = 1, rand(4) do v.pos[i] = vec() end
    for _ = 1, rand(3) do v.grid[rand(4) + 1] = vec() end
    return v
  end
  function G.change (name, v, rev)
    local c = {}
    for k, x in pairs(v) do c[k] = x end
    if name == "Snap" then
      c.tick = (v.tick + 1) % 65536
      c.ents, c.others, c.marks = { table.unpack(v.ents) }, {}, {}
      for k, x in pairs(v.others) do c.others[k] = x end
      for k, x in pairs(v.marks) do c.marks[k] = x end
      if #c.ents > 0 and rand(2) == 0 then c.ents[rand(#c.ents) + 1] = G.Ent(rev) end
      if rand(3) == 0 and #c.ents < 5 then c.ents[#c.ents + 1] = G.Ent(rev) end
      if rand(3) == 0 then c.ents[#c.ents] = nil end
      if rand(2) == 0 then c.others[rand(12) + 1] = rand(2) == 0 and G.Ent(rev) or nil end
      if rand(3) == 0 then c.opt = rand(2) == 0 and vec() or nil end
      if rand(3) == 0 then c.grid = { { rand(4) } } end
      if rand(2) == 0 then c.q = quat() end
      if rand(2) == 0 then c.marks[rand(10) + 1] = rand(2) == 0 and rand(8) or nil end
    elseif name == "Ent" then
      c.hp, c.spin = rand(101), rand(6284) / 1000
      if rand(2) == 0 then c.pos = vec() end
      if rand(2) == 0 then c.rot = rand(2) == 0 and quat() or nil end
    else
      c.x = rand(10)
      if rand(2) == 0 then c.others = quat() end
      if rand(2) == 0 then c.tick = rand(2) == 0 and vec() or nil end
    end
    return c
  end
  return G
end

-- nil if 'a' and 'b' hold the same keys and values all the way down, else
-- the path of the first difference (a table reached again is not walked
-- again)
local function difference (a, b, path, seen)
  path = path or "value"
  if type(a) ~= type(b) then return path .. ": " .. type(a) .. " vs " .. type(b) end
  if type(a) ~= "table" then
    if a == b and math.type(a) == math.type(b) then return nil end
    return path .. ": " .. tostring(a) .. " vs " .. tostring(b)
  end
  seen = seen or {}
  if seen[a] then return nil end
  seen[a] = true
  for k, x in pairs(a) do
    local d = difference(x, b[k], path .. "." .. tostring(k), seen)
    if d then return d end
  end
  for k in pairs(b) do
    if a[k] == nil then return path .. "." .. tostring(k) .. ": missing" end
  end
  return nil
end

local function same (want, got, what)
  local d = difference(got, want)
  assert(d == nil, what .. ": " .. tostring(d))
end

-- The keys of 't' holding tables, sorted (pairs' order is not the same run
-- to run).
local function tablekeys (t)
  local ks = {}
  for k, x in pairs(t) do
    if type(x) == "table" then ks[#ks + 1] = k end
  end
  table.sort(ks, function (a, b) return tostring(a) < tostring(b) end)
  return ks
end

-- The sparse arrays of each type: a delta's are new tables, the old ones
-- not looked into (README), so no table of theirs is put elsewhere below.
local SPARSE = { Snap = { others = true, marks = true }, Msg = { grid = true }, Ent = {} }

-- 'into' of each kind: returns the table (or nil) and its kind's name.
-- 'prev' is the last result of type 'name' and this schema (or nil),
-- 'base' the baseline (or nil), 'delta' whether the packet is a delta.
local function intoof (rand, G, S, name, prev, base, delta)
  local k = rand(11)
  if k == 10 then k = 5 end  -- aliasing twice as often
  if k == 0 then return nil, "none" end
  if k == 1 then return {}, "new" end
  if k == 2 and prev then return prev, "recycled" end
  if k == 3 then  -- a decode of another type, schema or version
    local s = S[rand(2) + 1]
    local other = ({ "Snap", "Ent", "Msg" })[rand(3) + 1]
    local ver = rand(2) == 0 and 1 or nil
    local v = G[other](s == S[1] and 1 or 2)
    return assert(s:decode(other, s:encode(other, v, { version = ver }), { version = ver })),
           "other decode"
  end
  if k == 4 then  -- built by hand: one table everywhere, and cycles
    local one = { x = 1, y = 2, 1, 2, 3, 4, 5, junk = true }
    local t = { ents = { one, one, one }, others = { [2] = one, [30] = one, w = one },
                grid = { one, one }, fixed = { one, one }, q = one, marks = one, pos = one,
                rot = one, tick = "no" }
    t.opt, one.self = t, t
    return t, "aliased by hand"
  end
  if k == 5 and prev then
    -- the last result, one of its tables (a field's, or an element's of
    -- one) also put in another field: in two places, not moved
    local to = tablekeys(prev)
    if #to == 0 then return prev, "recycled" end
    to = to[rand(#to) + 1]
    local from = {}
    for _, key in ipairs(tablekeys(prev)) do
      local x = prev[key]
      if not (delta and SPARSE[name][key]) then
        from[#from + 1] = x
        if key ~= to then
          for _, i in ipairs(tablekeys(x)) do from[#from + 1] = x[i] end
        end
      end
    end
    if #from > 0 then prev[to] = from[rand(#from) + 1] end
    return prev, "recycled, aliased"
  end
  if k == 6 and prev then
    local to = tablekeys(prev)
    if #to > 0 then prev[to[rand(#to) + 1]] = prev end
    return prev, "recycled, cyclic"
  end
  if k == 7 and base then return base, "the baseline" end
  if k == 8 then  -- a table inside another decode
    local s = S[rand(2) + 1]
    local t = assert(s:decode("Snap", s:encode("Snap", G.Snap(s == S[1] and 1 or 2))))
    local ks = tablekeys(t)
    return t[ks[rand(#ks) + 1]], "a table of a decode"
  end
  return {}, "new"
end

describe("decode options in combination", function ()
  it("give into, baseline, share, version and max_values what a decode without into gives", function ()
    local S = { schemaof(1), schemaof(2) }
    local rand = H.lcg(2024)
    local G = generators(rand)
    local prevs = {}
    for round = 1, 400 do
      local rev = rand(2) + 1
      local s = S[rev]
      local name = ({ "Snap", "Ent", "Msg" })[rand(3) + 1]
      local ver = rand(3) == 0 and 1 or nil
      local a = G[name](rev)
      local b = G.change(name, a, rev)
      -- the receiver's baseline: its own decode, a copy by hand, the
      -- other revision's decode
      local bk, base = rand(4), nil
      if bk == 0 then
        base = H.copy(a)
      elseif bk == 1 then
        local o = S[3 - rev]
        local ok, bytes = pcall(o.encode, o, name, a, { version = ver })
        base = ok and assert(o:decode(name, bytes, { version = ver })) or H.copy(a)
      else
        base = assert(s:decode(name, s:encode(name, a, { version = ver }), { version = ver }))
      end
      local delta = rand(3) > 0
      local share = rand(2) == 0
      local maxv = rand(5) == 0 and 10 + rand(80) or nil
      local into, how = intoof(rand, G, S, name, prevs[name .. rev], base, delta)
      local entry = ({ "decode", "decode_message", "frame_decode" })[rand(3) + 1]
      local what = string.format("round %d: %s of rev %d, version %s, baseline %s, %s, share %s,"
        .. " max_values %s, into %s, %s", round, name, rev, tostring(ver), delta and bk or "none",
        delta and "delta" or "full", tostring(share), tostring(maxv), how, entry)
      local eopts = { version = ver, baseline = delta and a or nil }
      local function decode (opts)
        opts.version, opts.share, opts.max_values = ver, share, maxv
        if entry == "decode" then
          if delta then opts.baseline = base end
          return s:decode(name, s:encode(name, b, eopts), opts)
        end
        local n, v
        if entry == "decode_message" then
          if delta then opts.baseline = base end
          n, v = s:decode_message(s:encode_message(name, b, eopts), opts)
        else
          -- the version, if any, in the frame
          local hdr = { id = 9, deltas = true, check = round % 2 == 0,
                        version_bits = ver and 8 or 0 }
          local fopts = { version = ver, baseline = eopts.baseline,
                          baseline_id = delta and 3 or nil }
          if delta then opts.baselines = { [3] = base } end
          opts.version = nil
          n, v = s:frame_decode(hdr, s:frame_encode(hdr, name, b, fopts), opts)
        end
        if not n then return nil, v end
        assert.equal(name, n)
        return v
      end
      -- the same decode without into first: into may be the baseline
      local kept = H.copy(base)
      local want, err = decode({})
      local got, err2 = decode({ into = into })
      assert.equal(err, err2, what)
      if want ~= nil then
        same(want, got, what)
        if into ~= nil then assert.equal(into, got, what) end
        assert.equal(s:encode(name, want, { version = ver }), s:encode(name, got, { version = ver }), what)
        if into ~= base then same(kept, base, what .. ", the baseline") end
        -- a delta against the sender's value as this schema decodes it
        if delta and bk ~= 1 and maxv == nil then
          same(assert(s:decode(name, s:encode(name, b, { version = ver }), { version = ver })), want,
               what .. ", against a full decode")
        end
        prevs[name .. rev] = got
      end
    end
  end)
end)

describe("protocols in combination", function ()
  local path
  local function write (rev)
    local f = assert(io.open(path, "wb"))
    f:write(defs(rev))
    f:close()
  end
  before_each(function () path = os.tmpname() end)
  after_each(function () os.remove(path) end)

  it("decode every framing's deltas across reloads into any table as without into", function ()
    local rand = H.lcg(77)
    local G = generators(rand)
    for _, popts in ipairs {
      { deltas = true }, { deltas = true, versioned = true }, { deltas = true, check = false },
      { deltas = false, versioned = true },
    } do
      write(1)
      local rev = 1
      local sreg, creg = assert(bitwire.watch(path)), assert(bitwire.watch(path))
      local server = bitwire.protocol(sreg, { id = 5, deltas = popts.deltas,
        versioned = popts.versioned, check = popts.check })
      local client = bitwire.protocol(creg, { id = 5, deltas = popts.deltas,
        versioned = popts.versioned, check = popts.check })
      local sent, got, ring = {}, {}, {}
      local last = G.Snap(rev)
      for tick = 1, 60 do
        if tick % 20 == 0 then  -- a reload on both sides
          rev = 3 - rev
          write(rev)
          assert.is_true(sreg:reload())
          assert.is_true(creg:reload())
          last = G.Snap(rev)
        end
        local name, v = "Snap"
        if rand(6) == 0 then name, v = "Msg", G.Msg()
        else
          v = G.change("Snap", last, rev)
          last = v
        end
        local id, eopts, bid = tick % 8, nil, nil
        if popts.deltas and name == "Snap" and rand(4) > 0 then
          local ids = {}
          for k, x in pairs(sent) do
            if x.name == "Snap" then ids[#ids + 1] = k end
          end
          table.sort(ids)
          if #ids > 0 then
            bid = ids[rand(#ids) + 1]
            eopts = { baseline = sent[bid].v, baseline_id = bid }
          end
        end
        local packet = server:encode(name, v, eopts)
        local k, into, how = rand(6), nil, "none"
        if k == 1 then into, how = {}, "new"
        elseif k == 2 or k == 3 then into, how = ring[rand(3) + 1], "a ring slot"
        elseif k == 4 and bid then into, how = got[bid], "the baseline"
        elseif k == 5 then
          local cur = creg:current()
          into, how = intoof(rand, G, { cur, cur }, name)
        end
        local share = rand(2) == 0
        local baselines = {}
        for i, x in pairs(got) do baselines[i] = x end
        if not popts.deltas then baselines = nil end
        local what = string.format("%s%s%s, tick %d, rev %d, %s against %s, into %s, share %s",
          popts.deltas and "deltas " or "", popts.versioned and "versioned " or "",
          popts.check == false and "no check" or "check", tick, rev, name, tostring(bid), how,
          tostring(share))
        local n1, want, s1 = client:decode(packet, { baselines = baselines, share = share })
        assert(n1, what .. ": " .. tostring(want))
        local n2, res, s2 = client:decode(packet, { baselines = baselines, into = into, share = share })
        assert(n2, what .. ": " .. tostring(res))
        assert.equal(s1, s2, what)
        same(want, res, what)
        if into then assert.equal(into, res, what) end
        same(s1:decode(name, s1:encode(name, v)), want, what .. ", against a full decode")
        -- the client keeps what it decoded under the frame's id; a table
        -- it decoded into is that value now, under no other id
        for i, x in pairs(got) do
          if x == res then got[i], sent[i] = nil, nil end
        end
        got[id], sent[id] = res, { name = name, v = v }
        if how ~= "a ring slot" and rand(2) == 0 then ring[rand(3) + 1] = res end
      end
    end
  end)
end)
