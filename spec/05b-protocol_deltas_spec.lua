-- bitwire.protocol over a schema or a registry, every option with every
-- other (deltas x registry x versioned x end check x into); deltas against
-- baselines decoded under other definitions; arrays in deltas.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local errorof, contains, fails = H.errorof, H.contains, H.fails

local temps = {}
local function write (path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end
local function tempdefs (text)
  local path = os.tmpname()
  write(path, text)
  temps[#temps + 1] = path
  return path
end
local function cleanup ()
  for i = #temps, 1, -1 do
    os.remove(temps[i])
    temps[i] = nil
  end
end

-- A game's definitions; 'extra' adds Entity fields (a reload).
local function defs (extra)
  return string.format([[
return {
  Vec = { {"x", "float", min = -100, max = 100, res = 0.01},
          {"y", "float", min = -100, max = 100, res = 0.01} },
  Entity = {
    {"id", "int", min = 0, max = 4095},
    {"pos", "Vec"},
    {"health", "int", min = 0, max = 100},
    {"removed_at", "int", min = 0, max = 7, since = 0, removed = 3, default = 0},
    %s
  },
  Snapshot = {
    {"tick", "uint", bits = 20},
    {"entities", "array", of = "Entity", max = 32},
    {"others", "sparse", of = "Entity", max = 64},
    {"scores", "array", of = {"int", min = 0, max = 999}, max = 8},
  },
  Chat = { {"text", "string", max = 40} },
}
]], extra or "")
end

local function entity (i, tick, extra)
  local e = { id = i, pos = { x = i - 16, y = 16 - i }, health = 100,
              removed_at = 0 }
  if extra then for k, v in pairs(extra) do e[k] = v end end
  if tick then e.pos.x = e.pos.x + tick / 4 end
  return e
end

-- 32 entities in an array and a few in the sparse array; those in 'moving'
-- move with the tick.
local function snapshot (tick, moving, extra)
  local s = { tick = tick, entities = {}, others = {}, scores = { 1, 2, 3 } }
  for i = 1, 32 do
    s.entities[i] = entity(i, moving[i] and tick or nil, extra)
  end
  for _, i in ipairs { 3, 17, 40 } do
    s.others[i] = entity(i, moving[i] and tick or nil, extra)
  end
  return s
end

describe("a registry protocol with deltas", function ()
  after_each(cleanup)

  it("sends deltas against the baselines the receiver names", function ()
    local reg = assert(bitwire.watch(tempdefs(defs())))
    local p = bitwire.protocol(reg, { id = 7, deltas = true })
    local a = snapshot(1, {})
    local full = p:encode("Snapshot", a)
    local name, base, s = p:decode(full)
    assert.equal("Snapshot", name)
    assert.equal(reg:current(), s)
    local b = snapshot(2, { [5] = true, [9] = true })
    local delta = p:encode("Snapshot", b, { baseline = a, baseline_id = 1 })
    assert.is_true(#delta * 10 <= #full * 4, #delta .. " vs " .. #full)
    local _, got = p:decode(delta, { baselines = { [1] = base } })
    assert.same(select(2, p:decode(p:encode("Snapshot", b))), got)
    fails("baseline", "unknown baseline 1", p:decode(delta, { baselines = {} }))
  end)

  it("decodes a delta against a baseline decoded under the previous definitions", function ()
    local path = tempdefs(defs())
    local reg = assert(bitwire.watch(path))
    local server = bitwire.protocol(reg, { id = 7, deltas = true })
    local creg = assert(bitwire.watch(path))
    local client = bitwire.protocol(creg, { id = 7, deltas = true })
    local a = snapshot(1, {})
    local _, base = client:decode(server:encode("Snapshot", a))
    write(path, defs('{"armor", "int", min = 0, max = 255, since = 0, default = 0},'))
    assert.is_true(reg:reload())
    assert.is_true(creg:reload())
    local b = snapshot(2, { [2] = true }, { armor = 0 })
    b.entities[4].armor = 9
    local delta = server:encode("Snapshot", b, { baseline = a, baseline_id = 3 })
    local _, got, s = client:decode(delta, { baselines = { [3] = base } })
    assert.equal(creg:current(), s)
    assert.same(select(2, client:decode(server:encode("Snapshot", b))), got)
    for i, e in ipairs(got.entities) do
      assert.equal(i == 4 and 9 or 0, e.armor)
    end
    for _, e in pairs(got.others) do assert.equal(0, e.armor) end
  end)

  it("sends a sparse field whole against a baseline whose keys a reload left no slots", function ()
    -- a smaller max, or a record that became sparse: the acked baseline
    -- holds keys the new wire cannot name; both sides take it as none
    local function sp (max) return ([[{"s", "sparse", of = {"int", min = 0, max = 9}, max = %d}]]):format(max) end
    local cases = {
      { sp(4), sp(2), { [1] = 3, [3] = 4 } },
      { [[{"s", "array", of = {"int", min = 0, max = 9}, max = 6}]], sp(2), { 1, 2, 3, 4 } },
      { [[{"s", "P"}]], sp(2), { x = 1 } },
    }
    for _, case in ipairs(cases) do
      local function text (field)
        return ([[return { P = { {"x", "int", min = 0, max = 9} },
          Root = { {"hp", "int", min = 0, max = 9}, %s } }]]):format(field)
      end
      local path = tempdefs(text(case[1]))
      local reg, creg = assert(bitwire.watch(path)), assert(bitwire.watch(path))
      local server = bitwire.protocol(reg, { id = 1, deltas = true })
      local client = bitwire.protocol(creg, { id = 1, deltas = true })
      local a = { hp = 1, s = case[3] }
      local _, base = assert(client:decode(server:encode("Root", a)))
      write(path, text(case[2]))
      assert.is_true(reg:reload())
      assert.is_true(creg:reload())
      local b = { hp = 2, s = { [1] = 5 } }
      local delta = server:encode("Root", b, { baseline = a, baseline_id = 0 })
      local name, got = client:decode(delta, { baselines = { [0] = base } })
      assert.equal("Root", name, got)
      assert.same(b, got)
    end
  end)

  it("sends what a reload changed on the grid or in range against a baseline sent before it", function ()
    -- the client holds the baseline as the old definitions decoded it (hp
    -- clamped to 100, x on a grid of 1): a field the sender's table still
    -- holds at 150 or 1.3 changed for it, though not for the sender's table
    local before = [[return { messages = {"Snap"}, Snap = { {"tick", "uint", bits = 16},
      {"hp", "int", min = 0, max = 100, clamp = true}, {"x", "float", min = 0, max = 10, res = 1},
      {"q", "quat", bits = 9}, {"a", "angle", bits = 9} } }]]
    local after = [[return { messages = {"Snap"}, Snap = { {"tick", "uint", bits = 16},
      {"hp", "int", min = 0, max = 200, clamp = true}, {"x", "float", min = 0, max = 10, res = 0.1},
      {"q", "quat", bits = 10}, {"a", "angle", bits = 9, unit = "deg"} } }]]
    for _, versioned in ipairs { false, true } do
      local path = tempdefs(before)
      local reg, creg = assert(bitwire.watch(path)), assert(bitwire.watch(path))
      local opts = { id = 7, deltas = true, versioned = versioned }
      local server, client = bitwire.protocol(reg, opts), bitwire.protocol(creg, opts)
      local sent = { tick = 1, hp = 150, x = 1.3, q = { 0.1, 0.2, 0.3, 0.9 }, a = 1 }
      local _, kept = assert(client:decode(server:encode("Snap", sent)))
      write(path, after)
      assert.is_true(reg:reload())
      assert.is_true(creg:reload())
      for tick = 2, 3 do  -- the peer's view is made once, then kept
        local snap = { tick = tick, hp = 150, x = 1.3, q = sent.q, a = 1 }
        local _, full = assert(client:decode(server:encode("Snap", snap)))
        local delta = server:encode("Snap", snap, { baseline = sent, baseline_id = 1 })
        local _, got = assert(client:decode(delta, { baselines = { [1] = kept } }))
        assert.same(full, got)
        assert.equal(150, got.hp)
      end
      -- a baseline sent after the reload is read as it is
      local _, now = assert(client:decode(server:encode("Snap", sent)))
      local snap = { tick = 4, hp = 150, x = 1.3, q = sent.q, a = 1 }
      local d2 = server:encode("Snap", snap, { baseline = sent, baseline_id = 2 })
      assert.same(select(2, client:decode(server:encode("Snap", snap))),
        select(2, client:decode(d2, { baselines = { [2] = now } })))
    end
    cleanup()
  end)

  it("sends a field against a baseline that went at a version without it", function ()
    -- the peer holds armor at its default (version 0 did not send it); the
    -- sender's table holds 50: changed for the peer, not for the table
    local text = [[return { messages = {"Snap"}, Snap = { {"tick", "uint", bits = 16},
      {"armor", "int", min = 0, max = 255, since = 1, default = 0},
      {"hp", "int", min = 0, max = 9} } }]]
    for _, over in ipairs { "schema", "registry" } do
      local target = over == "schema" and bitwire.schema(assert(load(text))())
        or assert(bitwire.watch(tempdefs(text)))
      local opts = { id = 3, deltas = true, versioned = true }
      local server, client = bitwire.protocol(target, opts), bitwire.protocol(target, opts)
      for _, vs in ipairs { { 0, 1 }, { 1, 0 } } do
        local sent = { tick = 1, armor = 50, hp = 1 }
        local _, kept = assert(client:decode(server:encode("Snap", sent, { version = vs[1] })))
        for tick = 2, 3 do
          local snap = { tick = tick, armor = 50, hp = 1 }
          local _, full = assert(client:decode(server:encode("Snap", snap, { version = vs[2] })))
          local d = server:encode("Snap", snap, { baseline = sent, baseline_id = 1, version = vs[2] })
          local _, got = assert(client:decode(d, { baselines = { [1] = kept } }))
          assert.same(full, got, over .. " " .. vs[1] .. " -> " .. vs[2])
        end
        -- sent again (edited): the peer's view is of that last send
        sent.hp = 5
        local _, kept2 = assert(client:decode(server:encode("Snap", sent, { version = vs[1] })))
        local snap = { tick = 4, armor = 50, hp = 1 }
        local _, full = assert(client:decode(server:encode("Snap", snap, { version = vs[2] })))
        local d = server:encode("Snap", snap, { baseline = sent, baseline_id = 2, version = vs[2] })
        assert.same(full, select(2, assert(client:decode(d, { baselines = { [2] = kept2 } }))))
      end
    end
    cleanup()
  end)

  it("takes a baseline that went as another message type as the peer decoded it", function ()
    -- the peer holds a Snap as a Snap: a Move against it is taken against
    -- that decode, not against the sender's table (whose 'l' and, at
    -- version 1, 'tag' the Snap did not send); a view made for a Ping
    -- delta is not one for a Move
    local text = [[return {
      Snap = { {"hp", "int", min = 0, max = 9}, {"tag", "int", min = 0, max = 9, optional = true},
               {"nv", "int", min = 0, max = 9, since = 1, default = 4} },
      Ping = { {"hp", "int", min = 0, max = 9} },
      Move = { {"tag", "int", min = 0, max = 9, optional = true},
               {"l", "array", of = {"int", min = 0, max = 9}, max = 4} } }]]
    for _, over in ipairs { "schema", "registry" } do
      local target = over == "schema" and bitwire.schema(assert(load(text))())
        or assert(bitwire.watch(tempdefs(text)))
      local opts = { deltas = true, versioned = true }
      local server, client = bitwire.protocol(target, opts), bitwire.protocol(target, opts)
      for _, ver in ipairs { 0, 1 } do
        for _, ping in ipairs { false, true } do
          local snap = { hp = 3, tag = 7, l = { 1, 2 } }
          local _, held = assert(client:decode(server:encode("Snap", snap, { version = ver })))
          local kept = { [1] = held }
          if ping then
            assert(client:decode(server:encode("Ping", { hp = 3 },
              { baseline = snap, baseline_id = 1 }), { baselines = kept }))
          end
          for _, move in ipairs { { l = {} }, { tag = 7, l = { 1 } }, { tag = 7, l = { 1, 2 } } } do
            local d = server:encode("Move", move, { baseline = snap, baseline_id = 1 })
            local _, got = assert(client:decode(d, { baselines = kept }))
            assert.same(select(2, assert(client:decode(server:encode("Move", move)))), got,
                        over .. " " .. ver .. " " .. tostring(ping))
          end
        end
      end
    end
    cleanup()
  end)

  it("keeps each peer's view of a table sent to peers at different versions or definitions", function ()
    -- one snapshot to peer A at version 1 and to peer B at version 3 (or
    -- before and after a reload): A holds legacy = true and hp 100, B
    -- does not; a delta to A must not be taken against B's view
    local v = [[return { messages = {"Snap"}, Snap = { {"tick", "uint", bits = 8},
      {"legacy", "bool", removed = 3, default = false},
      {"hp", "int", min = 0, max = %d, clamp = true} } }]]
    for _, how in ipairs { "versions", "reload" } do
      local path = tempdefs(v:format(100))
      local target = how == "versions" and bitwire.schema(assert(load(v:format(100)))())
        or assert(bitwire.watch(path))
      local opts = { id = 9, deltas = true, versioned = how == "versions" }
      local server, client = bitwire.protocol(target, opts), bitwire.protocol(target, opts)
      local va, vb = how == "versions" and 1 or nil, how == "versions" and 3 or nil
      local function send (value, o)
        o.version = va
        return server:encode("Snap", value, o)
      end
      for _, named in ipairs { false, true } do
        if how == "reload" then  -- back to the first definitions
          write(path, v:format(100))
          assert(target:reload() ~= nil)
        end
        local S = { tick = 1, legacy = true, hp = 150 }
        local _, heldA = assert(client:decode(send(S, { peer = named and "A" or nil })))
        if how == "reload" then
          write(path, v:format(200))
          assert.is_true(target:reload())
          assert.is_true(select(2, client:decode(server:encode("Snap", S,
            { peer = named and "B" or nil }))) ~= nil)
        else
          server:encode("Snap", S, { version = vb, peer = named and "B" or nil })
        end
        local T = { tick = 2, legacy = false, hp = 150 }
        local full = send(T, {})
        local d = send(T, { baseline = S, baseline_id = 1, peer = named and "A" or nil })
        local _, got = assert(client:decode(d, { baselines = { [1] = heldA } }))
        assert.same(select(2, assert(client:decode(full))), got, how)
        if named then  -- A named: a delta against A's view, which needs it
          local n, _, code = client:decode(d)
          assert.is_nil(n, how)
          assert.equal("baseline", code, how)
        else  -- which view the peer holds is unknown: the frame goes whole
          assert.equal(full, d, how)
        end
      end
    end
    cleanup()
  end)

  it("sends whole against a table a named peer may hold at two views", function ()
    -- the peer acks a send, not the table: a table that went to it at two
    -- views (or unnamed at another, which may have gone to it) is one of
    -- which it may hold either
    local v = [[return { messages = {"Snap"}, Snap = { {"tick", "uint", bits = 8},
      {"hp", "int", min = 0, max = %d, clamp = true} } }]]
    for _, second in ipairs { "A", false } do
      local path = tempdefs(v:format(100))
      local reg = assert(bitwire.watch(path))
      local server = bitwire.protocol(reg, { id = 2, deltas = true })
      local client = bitwire.protocol(reg, { id = 2, deltas = true })
      local S = { tick = 1, hp = 150 }
      local _, held = assert(client:decode(server:encode("Snap", S, { peer = "A" })))
      write(path, v:format(200))
      assert.is_true(reg:reload())
      server:encode("Snap", S, { peer = second or nil })  -- hp 150 now
      local T = { tick = 2, hp = 150 }
      local d = server:encode("Snap", T, { baseline = S, baseline_id = 1, peer = "A" })
      assert.equal(server:encode("Snap", T, { peer = "A" }), d, tostring(second))
      local _, got = assert(client:decode(d, { baselines = { [1] = held } }))
      assert.equal(150, got.hp)
    end
    cleanup()
    local p = bitwire.protocol(bitwire.schema { T = { { "x", "bool" } } }, { deltas = true })
    local ok, err = pcall(p.encode, p, "T", { x = true }, { peer = 0 / 0 })
    assert.is_false(ok)
    contains("'peer' cannot be NaN", err)
  end)

  it("counts an array baseline with holes by its first border, however it was built", function ()
    -- a reload that made a sparse field an array leaves baselines with
    -- holes; '#' of such a table depends on how it was built, so the two
    -- ends, holding copies built apart, count it by its first border, and
    -- never keep it unchanged (the receiver would check its copy by '#')
    local s = bitwire.schema {
      P = { { "x", "int", min = 0, max = 9 } },
      A = { { "m", "array", of = { "int", min = 0, max = 9 }, max = 8 },
            { "ps", "array", of = "P", max = 8 },
            { "f", "array", of = { "int", min = 0, max = 9 }, count = 4 } },
    }
    local function holes (build, a, b)  -- {[1] = a, [3] = b} or {[2] = ...}
      local t = {}
      if build == 1 then t[1], t[3] = a, b
      elseif build == 2 then t = { a, nil, b }
      elseif build == 3 then t[2], t[5] = a, b
      else t = { nil, a, nil, nil, b } end
      return t
    end
    local n = 0
    for _, field in ipairs { "m", "ps", "f" } do
      local mk = field == "ps" and function (x) return { x = x } end
                 or function (x) return x end
      for _, builds in ipairs { { 1, 2 }, { 3, 4 } } do
        local function base (build)
          local v = { m = { 1 }, ps = { { x = 1 } }, f = { 1, 2, 3, 4 } }
          v[field] = holes(build, mk(9), mk(7))
          return v
        end
        local sent, held = base(builds[1]), base(builds[2])
        for _, arr in ipairs { { 9, 7, 7, 9 }, { 9 }, {} } do
          if field ~= "f" or #arr == 4 then
            local v = { m = { 1 }, ps = { { x = 1 } }, f = { 1, 2, 3, 4 } }
            v[field] = {}
            for i, x in ipairs(arr) do v[field][i] = mk(x) end
            for _, pair in ipairs { { sent, held }, { held, sent } } do
              local d = s:encode("A", v, { baseline = pair[1] })
              local got, msg = s:decode("A", d, { baseline = pair[2] })
              assert.is_truthy(got, msg)
              assert.same(v, got, field)
              n = n + 1
            end
          end
        end
      end
    end
    assert.equal(2 * (2 * 3 * 2 + 2), n)
    -- a value with a hole sent whole (its first border went), then a
    -- baseline; and one of table.pack (a key 'n')
    local p = bitwire.protocol(s, { id = 7, deltas = true })
    local odd = {}
    odd[1], odd[3] = 1, 3
    for id, arr in ipairs { odd, table.pack(1, 2, 3) } do
      local sent = { m = arr, ps = {}, f = { 1, 2, 3, 4 } }
      local _, held = assert(p:decode(p:encode("A", sent)))
      local v = { m = { 1, 2, 7, 8 }, ps = {}, f = { 1, 2, 3, 4 } }
      local d = p:encode("A", v, { baseline = sent, baseline_id = id })
      assert.same(v, select(2, assert(p:decode(d, { baselines = { [id] = held } }))))
    end
    -- decoded into a table whose array held more past a hole: a fresh
    -- decode's elements, and the next delta against it reads alike
    local into = { m = {}, ps = {}, f = { 1, 2, 3, 4 } }
    into.m[3] = 3
    local clean = { m = { 1, 2 }, ps = {}, f = { 1, 2, 3, 4 } }
    assert(s:decode("A", s:encode("A", clean), { into = into }))
    assert.is_nil(into.m[3])
    local v = { m = { 1, 2, 7, 8 }, ps = {}, f = { 1, 2, 3, 4 } }
    assert.same(v, s:decode("A", s:encode("A", v, { baseline = clean }), { baseline = into }))
  end)

  it("round-trips in every combination of its options", function ()
    local path = tempdefs(defs())
    local reg = assert(bitwire.watch(path))
    local schema = reg:current()
    for _, over in ipairs { "schema", "registry" } do
      for _, deltas in ipairs { false, true } do
        for _, versioned in ipairs { false, true } do
          for _, check in ipairs { true, false } do
            for _, into in ipairs { false, true } do
             for _, share in ipairs { false, true } do
              local what = string.format("%s deltas=%s versioned=%s check=%s into=%s share=%s",
                over, deltas, versioned, check, into, share)
              local p = bitwire.protocol(over == "schema" and schema or reg,
                { id = 11, deltas = deltas, versioned = versioned, check = check })
              local a, b = snapshot(1, {}), snapshot(2, { [1] = true })
              local t = into and {} or nil
              local name, base = p:decode(p:encode("Snapshot", a), { into = t })
              assert.equal("Snapshot", name, what)
              if into then assert.equal(t, base, what) end
              local opts = deltas and { baseline = a, baseline_id = 5 } or nil
              local pk = p:encode("Snapshot", b, opts)
              local t2 = into and {} or nil
              local _, got = p:decode(pk, { into = t2, share = share,
                baselines = deltas and { [5] = base } or nil })
              if into then assert.equal(t2, got, what) end
              assert.same(select(2, p:decode(p:encode("Snapshot", b))), got, what)
              -- entity 2 did not move: the baseline's own table when shared
              assert.equal(deltas and share, rawequal(base.entities[2], got.entities[2]), what)
              assert.is_false(rawequal(base.entities[1], got.entities[1]), what)
              local _, chat = p:decode(p:encode("Chat", { text = "gg" }))
              assert.same({ text = "gg" }, chat, what)
             end
            end
          end
        end
      end
    end
  end)

  it("never refills in place the records a share decode lent, whatever decodes into them", function ()
    local path = tempdefs(defs())
    local reg = assert(bitwire.watch(path))
    local s0 = reg:current()
    local p = bitwire.protocol(reg, { id = 11, deltas = true })
    local a, b, c = snapshot(1, {}), snapshot(2, { [1] = true }), snapshot(3, { [1] = true, [2] = true })
    local _, base = p:decode(p:encode("Snapshot", a))
    local held = s0:encode("Snapshot", base)
    local scratch = {}
    local pk = p:encode("Snapshot", b, { baseline = a, baseline_id = 5 })
    assert(p:decode(pk, { baselines = { [5] = base }, into = scratch, share = true }))
    assert.is_true(rawequal(base.entities[2], scratch.entities[2]))   -- lent
    -- a full frame into the result (a client's recovery) leaves the baseline
    assert(p:decode(p:encode("Snapshot", c), { into = scratch }))
    assert.equal(held, s0:encode("Snapshot", base))
    assert.same(select(2, p:decode(p:encode("Snapshot", c))), scratch)
    -- and one into the baseline leaves what the result holds of it
    assert(p:decode(pk, { baselines = { [5] = base }, into = scratch, share = true }))
    local got = s0:encode("Snapshot", scratch)
    assert(p:decode(p:encode("Snapshot", c), { into = base }))
    assert.equal(got, s0:encode("Snapshot", scratch))
    -- the marks are the state's: after a reload, the new schema's decode
    -- into a table the old one lent leaves the lender as it was
    local pk2 = p:encode("Snapshot", c, { baseline = b, baseline_id = 6 })
    local again = {}
    assert(p:decode(pk2, { baselines = { [6] = scratch }, into = again, share = true }))
    assert.is_true(rawequal(scratch.entities[3], again.entities[3]))
    got = s0:encode("Snapshot", scratch)
    write(path, defs('{"armor", "int", min = 0, max = 255, since = 0, default = 0},'))
    assert.is_true(reg:reload())
    assert(p:decode(p:encode("Snapshot", snapshot(4, {}, { armor = 7 })), { into = again }))
    assert.equal(got, s0:encode("Snapshot", scratch))
    assert.equal(7, again.entities[3].armor)
    -- that decode shared nothing: the table is its own, refilled in place
    local t = again.entities[1]
    assert(p:decode(p:encode("Snapshot", snapshot(5, {}, { armor = 8 })), { into = again }))
    assert.is_true(rawequal(t, again.entities[1]))
    assert.equal(8, again.entities[1].armor)
  end)

  it("refills a client's ring of tables in place with deltas, across a reload", function ()
    -- a registry protocol with deltas: each frame goes into the oldest slot
    -- against the newest; a reload mid-run adds a defaulted field. Each
    -- result is a full decode of what the server sent, and the slots'
    -- entity tables stay the same tables
    local path = tempdefs(defs())
    local sreg, creg = assert(bitwire.watch(path)), assert(bitwire.watch(path))
    local server = bitwire.protocol(sreg, { id = 9, deltas = true })
    local client = bitwire.protocol(creg, { id = 9, deltas = true })
    local sent, ring, ents = {}, {}, {}
    sent[1] = snapshot(0, {})
    local _, first = assert(client:decode(server:encode("Snapshot", sent[1])))
    ring[1] = first
    for k = 2, 3 do ring[k] = select(2, assert(client:decode(server:encode("Snapshot", sent[1])))) end
    for k = 1, 3 do ents[k] = { table.unpack(ring[k].entities) } end
    local extra
    for tick = 1, 30 do
      if tick == 15 then
        write(path, defs('{"armor", "int", min = 0, max = 255, since = 0, default = 0},'))
        assert.is_true(sreg:reload())
        assert.is_true(creg:reload())
        extra = { armor = 0 }
      end
      local base, slot = (tick - 1) % 3 + 1, tick % 3 + 1
      local v = snapshot(tick, { [tick % 32 + 1] = true, [(tick * 7) % 32 + 1] = true }, extra)
      local pk = server:encode("Snapshot", v, { baseline = sent[base], baseline_id = base })
      local _, got = assert(client:decode(pk, { baselines = { [base] = ring[base] },
                                                into = ring[slot] }))
      assert.equal(ring[slot], got)
      assert.same(select(2, client:decode(server:encode("Snapshot", v))), got)
      -- (but for the first delta after the reload: against a baseline the
      -- old definitions decoded, it walks tables and moves new ones in)
      for i = 1, 32 do
        assert.equal(tick ~= 15, ents[slot][i] == got.entities[i], "tick " .. tick)
      end
      ents[slot], sent[slot] = { table.unpack(got.entities) }, v
    end
  end)

  it("decodes an old frame's delta against a table the new definitions decoded into", function ()
    -- the client's ring slot r was a delta's result under the old schema;
    -- after the reload a frame of the new one refills it; then a delta sent
    -- before the reload, against what r holds now, arrives
    local path = tempdefs(defs())
    local sreg, creg = assert(bitwire.watch(path)), assert(bitwire.watch(path))
    local server = bitwire.protocol(sreg, { id = 7, deltas = true })
    local client = bitwire.protocol(creg, { id = 7, deltas = true })
    local a, b, c = snapshot(1, {}), snapshot(2, { [1] = true }), snapshot(3, { [2] = true })
    local e = snapshot(4, { [2] = true, [3] = true })
    local _, ra = assert(client:decode(server:encode("Snapshot", a)))
    local _, r = assert(client:decode(server:encode("Snapshot", b, { baseline = a, baseline_id = 1 }),
                                      { baselines = { [1] = ra } }))
    local late = server:encode("Snapshot", e, { baseline = c, baseline_id = 2 })   -- old tag
    write(path, defs('{"armor", "int", min = 0, max = 255, since = 0, default = 0},'))
    assert.is_true(sreg:reload())
    assert.is_true(creg:reload())
    assert(client:decode(server:encode("Snapshot", c), { into = r }))   -- the new tag
    local _, got = assert(client:decode(late, { baselines = { [2] = r } }))
    local old = creg:schemas()[2]
    assert.same(old:decode("Snapshot", old:encode("Snapshot", e)), got)
  end)

  it("sends the version of a versioned registry protocol with deltas", function ()
    local reg = assert(bitwire.watch(tempdefs(defs())))
    local p = bitwire.protocol(reg, { deltas = true, versioned = true, version_bits = 4 })
    local a = snapshot(1, {})
    local _, base = p:decode(p:encode("Snapshot", a, { version = 3 }))
    local b = snapshot(2, { [1] = true })
    local pk = p:encode("Snapshot", b, { baseline = a, baseline_id = 0, version = 3 })
    local _, got = p:decode(pk, { baselines = { [0] = base } })
    assert.same(select(2, p:decode(p:encode("Snapshot", b, { version = 3 }))), got)
    -- a baseline decoded at version 3 serves a delta at version 2 (checked)
    pk = p:encode("Snapshot", b, { baseline = a, baseline_id = 0, version = 2 })
    _, got = p:decode(pk, { baselines = { [0] = base } })
    assert.same(select(2, p:decode(p:encode("Snapshot", b, { version = 2 }))), got)
  end)
end)

describe("baselines across reloads", function ()
  local s0 = bitwire.schema {
    E = { { "id", "int", min = 0, max = 99 }, { "hp", "int", min = 0, max = 9 } },
    S = { { "es", "sparse", of = "E", max = 8 } },
  }
  local s1 = bitwire.schema {
    E = { { "id", "int", min = 0, max = 99 }, { "hp", "int", min = 0, max = 9 },
          { "armor", "int", min = 0, max = 255, since = 1, default = 0 } },
    S = { { "es", "sparse", of = "E", max = 8 } },
  }

  it("gives fields the baseline's schema lacks their default (the issue's case)", function ()
    local a = { es = { [1] = { id = 1, hp = 5, armor = 0 }, [2] = { id = 2, hp = 5, armor = 0 } } }
    local b = { es = { [1] = { id = 1, hp = 5, armor = 0 }, [2] = { id = 2, hp = 6, armor = 0 } } }
    local base = s0:decode("S", s0:encode("S", a))
    assert.is_nil(base.es[1].armor)
    local d = s1:encode("S", b, { baseline = a })
    local got = assert(s1:decode("S", d, { baseline = base }))
    assert.same(b, got)
    -- the encoder counts a missing field as its default too: the baseline
    -- as the old schema decoded it gives the same delta
    assert.equal(d, s1:encode("S", b, { baseline = base }))
  end)

  it("drops fields the new schema lacks", function ()
    local base = s1:decode("S", s1:encode("S", { es = { [3] = { id = 3, hp = 1, armor = 7 } } }))
    local d = s0:encode("S", { es = { [3] = { id = 3, hp = 2 } } }, { baseline = base })
    assert.same({ es = { [3] = { id = 3, hp = 2 } } }, s0:decode("S", d, { baseline = base }))
  end)

  it("gives baseline where the baseline's value cannot be kept", function ()
    local narrow = bitwire.schema {
      E = { { "id", "int", min = 0, max = 99 }, { "hp", "int", min = 0, max = 3 } },
      S = { { "es", "sparse", of = "E", max = 8 } },
    }
    local base = s0:decode("S", s0:encode("S", { es = { [1] = { id = 1, hp = 8 } } }))
    local d = narrow:encode("S", { es = { [1] = { id = 1, hp = 3 } } },
      { baseline = { es = { [1] = { id = 1, hp = 3 } } } })
    fails("baseline", "baseline value does not fit", narrow:decode("S", d, { baseline = base }))
    local need = bitwire.schema {
      E = { { "id", "int", min = 0, max = 99 }, { "hp", "int", min = 0, max = 9 },
            { "mana", "int", min = 0, max = 9 } },
      S = { { "es", "sparse", of = "E", max = 8 } },
    }
    local v = { es = { [1] = { id = 1, hp = 8, mana = 1 } } }
    d = need:encode("S", v, { baseline = v })
    fails("baseline", "baseline value does not fit: [1].mana: missing",
      need:decode("S", d, { baseline = base }))
  end)

  it("checks only what the delta keeps of a sparse baseline", function ()
    -- hp's range shrank: the baseline's slot 1 no longer fits, but a delta
    -- that replaces or removes it keeps nothing of it
    local narrow = bitwire.schema {
      E = { { "id", "int", min = 0, max = 99 }, { "hp", "int", min = 0, max = 3 } },
      S = { { "es", "sparse", of = "E", max = 8 } },
    }
    local sent = { es = { [1] = { id = 1, hp = 8 }, [2] = { id = 2, hp = 1 } } }
    local base = s0:decode("S", s0:encode("S", sent))
    for _, v in ipairs {
      { es = { [1] = { id = 1, hp = 3 }, [2] = { id = 2, hp = 1 } } },  -- replaced
      { es = { [2] = { id = 2, hp = 1 } } },                            -- removed
      { es = { [2] = { id = 2, hp = 1 }, [5] = { id = 5, hp = 0 } } },  -- and added
    } do
      local d = narrow:encode("S", v, { baseline = sent })
      assert.same(v, assert(narrow:decode("S", d, { baseline = base })))
    end
    -- kept, it is checked alone, and named (the sender's copy fits)
    local fit = { es = { [1] = { id = 1, hp = 3 }, [2] = { id = 2, hp = 1 } } }
    local d = narrow:encode("S", { es = { [1] = { id = 1, hp = 3 }, [2] = { id = 2, hp = 2 } } },
      { baseline = fit })
    fails("baseline", "es[1]: baseline value does not fit: hp: 8 out of range [0, 3]",
      narrow:decode("S", d, { baseline = base }))
  end)

  it("keeps values of a baseline it did not decode as its own decode gives them", function ()
    -- the sender's delta keeps what the full encode would send: hp clamped
    -- to the new range, x on the new grid
    local old = bitwire.schema { R = { { "n", "int", min = 0, max = 9 },
      { "hp", "int", min = 0, max = 100 }, { "x", "float", min = -10, max = 10, res = 0.1 } } }
    local new = bitwire.schema { R = { { "n", "int", min = 0, max = 9 },
      { "hp", "int", min = 0, max = 50, clamp = true },
      { "x", "float", min = -10, max = 10, res = 0.5 } } }
    local sent = { n = 0, hp = 90, x = 0.3 }
    local base = old:decode("R", old:encode("R", sent))
    local v = { n = 1, hp = 90, x = 0.3 }
    local d = new:encode("R", v, { baseline = sent })
    assert.same(new:decode("R", new:encode("R", v)), assert(new:decode("R", d, { baseline = base })))
    -- a baseline built by hand: clamped, quantized, and of the number type
    -- a decode gives (an angle is a float)
    local s = bitwire.schema { R = { { "n", "int", min = 0, max = 9 },
      { "c", "int", min = -5, max = 5, clamp = true },
      { "f", "float", min = -1, max = 1, res = 0.1, clamp = true },
      { "q", "float", min = -1, max = 1, res = 0.1 },
      { "a", "angle", bits = 6, unit = "deg" },
      { "sp", "sparse", of = { "float", min = 0, max = 1, res = 0.25 }, max = 4 } } }
    local hand = { n = 0, c = 100, f = 1 / 0, q = 0.123, a = 360, sp = { [2] = 0.3, [3] = 0.6 } }
    local w = { n = 1, c = 100, f = 1 / 0, q = 0.123, a = 360, sp = { [2] = 0.3, [3] = 0.9 } }
    local got = assert(s:decode("R", s:encode("R", w, { baseline = hand }), { baseline = hand }))
    local want = s:decode("R", s:encode("R", w))
    assert.same(want, got)
    assert.equal(math.type(want.a), math.type(got.a))
  end)

  it("checks a baseline decoded as another type of the same schema", function ()
    local s = bitwire.schema {
      A = { { "x", "int", min = 0, max = 7 } },
      B = { { "x", "int", min = 0, max = 3 } },
    }
    local p = bitwire.protocol(s, { deltas = true })
    local _, a = p:decode(p:encode("A", { x = 6 }))
    local pk = p:encode("B", { x = 2 }, { baseline = { x = 2 }, baseline_id = 1 })
    fails("baseline", "x: baseline value does not fit", p:decode(pk, { baselines = { [1] = a } }))
    local _, b = p:decode(p:encode("B", { x = 2 }))
    assert.same({ x = 2 }, select(2, p:decode(pk, { baselines = { [1] = b } })))
  end)
end)

describe("arrays in deltas", function ()
  local s = bitwire.schema(load(defs())())

  local function roundtrip (a, b)
    local base = s:decode("Snapshot", s:encode("Snapshot", a))
    local d = s:encode("Snapshot", b, { baseline = a })
    local got = assert(s:decode("Snapshot", d, { baseline = base }))
    assert.same(s:decode("Snapshot", s:encode("Snapshot", b)), got)
    return d
  end

  it("sends only the elements that changed", function ()
    local a = snapshot(1, {})
    local full = s:encode("Snapshot", snapshot(2, { [3] = true, [30] = true }))
    local d = roundtrip(a, snapshot(2, { [3] = true, [30] = true }))
    assert.is_true(#d * 10 <= #full * 4, #d .. " vs " .. #full)
  end)

  it("sends the same delta when unchanged elements are the baseline's own tables", function ()
    local a = snapshot(1, {})
    local b = snapshot(2, { [4] = true })          -- slot 4 is not in 'others'
    local shared = { tick = b.tick, entities = {}, others = a.others, scores = a.scores }
    for i, e in ipairs(b.entities) do shared.entities[i] = i == 4 and e or a.entities[i] end
    assert.equal(s:encode("Snapshot", b, { baseline = a }),
      s:encode("Snapshot", shared, { baseline = a }))
    -- a snapshot against itself: four changed bits, all 0
    assert.equal(4, s:bits("Snapshot", a, { baseline = a }))
  end)

  it("writes the count, then a changed bit per element the baseline has", function ()
    local t = bitwire.schema { T = { { "v", "array", of = { "int", min = 0, max = 15 }, max = 7 } } }
    local b = { v = { 1, 2, 3 } }
    -- changed bit of v, count 4 in 3 bits, bits 0 0 1 + 4-bit 9, then 4-bit 5
    local d = t:encode("T", { v = { 1, 2, 9, 5 } }, { baseline = b })
    assert.equal(1 + 3 + 3 + 4 + 4, t:bits("T", { v = { 1, 2, 9, 5 } }, { baseline = b }))
    local w = bitwire.writer()
    w:bool(true) w:int(4, 0, 7) w:bool(false) w:bool(false) w:bool(true) w:int(9, 0, 15)
    w:int(5, 0, 15)
    assert.equal(w:tostring(), d)
    assert.same({ v = { 1, 2, 9, 5 } }, t:decode("T", d, { baseline = b }))
  end)

  it("handles arrays that grow, shrink and empty", function ()
    local a = snapshot(1, {})
    local b = snapshot(2, { [1] = true })
    for i = 20, 32 do b.entities[i] = nil end
    b.scores = { 1, 2, 3, 4, 5 }
    roundtrip(a, b)
    roundtrip(b, a)
    local c = snapshot(3, {})
    c.entities, c.scores = {}, {}
    roundtrip(a, c)
    roundtrip(c, a)
  end)

  it("refuses a count whose elements cannot fit in what is left", function ()
    local t = bitwire.schema { T = { { "v", "array", of = { "uint", bits = 30 }, max = 1000 } } }
    local b = { v = { 1 } }
    local w = bitwire.writer()
    w:bool(true) w:int(1000, 0, 1000) w:bool(false)
    fails("truncated", "count 1000 needs", t:decode("T", w:tostring(), { baseline = b }))
  end)
end)

describe("decode with share = true", function ()
  local s = bitwire.schema(load(defs())())

  local function decoded (v) return s:decode("Snapshot", s:encode("Snapshot", v)) end

  it("returns the baseline's own tables where the delta changed nothing", function ()
    local a = snapshot(1, {})
    local base = decoded(a)
    local b = snapshot(2, { [5] = true, [17] = true })
    local d = s:encode("Snapshot", b, { baseline = a })
    local got = assert(s:decode("Snapshot", d, { baseline = base, share = true }))
    assert.same(decoded(b), got)
    for i = 1, 32 do
      assert.equal(i ~= 5 and i ~= 17, rawequal(base.entities[i], got.entities[i]), i)
    end
    assert.is_false(rawequal(base, got))
    assert.is_false(rawequal(base.entities, got.entities))  -- an element changed
    assert.is_false(rawequal(base.others, got.others))      -- its slots are set in a copy
    assert.equal(base.others[3], got.others[3])
    assert.is_false(rawequal(base.others[17], got.others[17]))
    assert.equal(base.scores, got.scores)
    assert.same(decoded(a), base)  -- the baseline is left as it was
    -- the same delta without share copies every table
    local copy = assert(s:decode("Snapshot", d, { baseline = base }))
    assert.same(got, copy)
    for i = 1, 32 do assert.is_false(rawequal(base.entities[i], copy.entities[i])) end
    assert.is_false(rawequal(base.scores, copy.scores))
  end)

  it("chains: a shared result is the baseline of the next delta", function ()
    local a, b, c = snapshot(1, {}), snapshot(2, { [1] = true }), snapshot(3, { [1] = true, [2] = true })
    local base = decoded(a)
    local got = assert(s:decode("Snapshot", s:encode("Snapshot", b, { baseline = a }),
      { baseline = base, share = true }))
    local got2 = assert(s:decode("Snapshot", s:encode("Snapshot", c, { baseline = b }),
      { baseline = got, share = true }))
    assert.same(decoded(c), got2)
    assert.equal(base.entities[3], got2.entities[3])
    assert.same(decoded(b), got)
  end)

  it("copies from a baseline this schema did not decode, filling defaults", function ()
    local a = snapshot(1, {})
    local b = snapshot(2, { [5] = true })
    local d = s:encode("Snapshot", b, { baseline = a })
    local got = assert(s:decode("Snapshot", d, { baseline = a, share = true }))
    assert.same(s:decode("Snapshot", d, { baseline = a }), got)  -- a's values, unquantized
    for i = 1, 32 do assert.is_false(rawequal(a.entities[i], got.entities[i]), i) end
    -- a baseline decoded under definitions without 'armor'
    local s2 = bitwire.schema(load(defs('{"armor", "int", min = 0, max = 255, since = 0, default = 0},'))())
    local b2 = snapshot(2, { [5] = true }, { armor = 0 })
    got = assert(s2:decode("Snapshot", s2:encode("Snapshot", b2, { baseline = a }),
      { baseline = decoded(a), share = true }))
    for _, e in ipairs(got.entities) do assert.equal(0, e.armor) end
    assert.same(s2:decode("Snapshot", s2:encode("Snapshot", b2)), got)
  end)

  it("copies from a baseline decoded at another version", function ()
    local a = snapshot(1, {})
    local base = s:decode("Snapshot", s:encode("Snapshot", a, { version = 1 }), { version = 1 })
    local b = snapshot(2, { [5] = true })
    local d = s:encode("Snapshot", b, { baseline = a })
    local got = assert(s:decode("Snapshot", d, { baseline = base, share = true }))
    assert.same(decoded(b), got)
    for i = 1, 32 do assert.is_false(rawequal(base.entities[i], got.entities[i]), i) end
  end)

  it("leaves a full decode and a failed delta as they are", function ()
    local a = snapshot(1, {})
    local base = decoded(a)
    assert.same(base, s:decode("Snapshot", s:encode("Snapshot", a), { share = true }))
    local d = s:encode("Snapshot", snapshot(2, { [5] = true }), { baseline = a })
    fails("truncated", nil, s:decode("Snapshot", d:sub(1, 3), { baseline = base, share = true }))
    assert.same(decoded(a), base)
  end)
end)

describe("bitwire.protocol options", function ()
  local s = bitwire.schema(load(defs())())

  it("raises on unknown options, naming them", function ()
    contains("unknown option 'delta'", errorof(bitwire.protocol, s, { delta = true }))
    contains("unknown option 'versionbits'", errorof(bitwire.protocol, s, { versionbits = 8 }))
    local p = bitwire.protocol(s, { deltas = true })
    contains("unknown encode option 'base'", errorof(p.encode, p, "Chat", { text = "" }, { base = {} }))
    contains("unknown decode option 'baseline'", errorof(p.decode, p, "xxxxxxxx", { baseline = {} }))
  end)

  it("takes the version limits of the core, the one place they live", function ()
    local limits = require("bitwire.core").limits
    assert.equal(32, limits.version_bits)
    assert.equal(4294967294, limits.version)
    -- the widest version frame carries the highest version
    local p = bitwire.protocol(s, { versioned = true, version_bits = limits.version_bits })
    local f = p:encode("Chat", { text = "hi" }, { version = limits.version })
    local name, v = p:decode(f)
    assert.equal("Chat", name)
    assert.equal("hi", v.text)
    contains("'version_bits' must be an integer in [1, " .. limits.version_bits .. "]",
      errorof(bitwire.protocol, s, { versioned = true, version_bits = limits.version_bits + 1 }))
    contains("version out of range",
      errorof(s.encode, s, "Chat", { text = "" }, { version = limits.version + 1 }))
    contains("'version_bits' must be 0..32",
      errorof(s.frame_encode, s, 3, false, "Chat", { text = "" }, false,
        { version_bits = limits.version_bits + 1 }))
  end)

  it("raises on options of the wrong type", function ()
    contains("'deltas' must be a boolean", errorof(bitwire.protocol, s, { deltas = 1 }))
    contains("'version_bits' must be an integer in [1, 32]",
      errorof(bitwire.protocol, s, { versioned = true, version_bits = 33 }))
    contains("first argument must be a schema or a registry", errorof(bitwire.protocol, {}))
    contains("'version_bits' needs versioned = true",
      errorof(bitwire.protocol, s, { versioned = false, version_bits = 8 }))
    local reg = assert(bitwire.watch(tempdefs(defs())))
    contains("a registry protocol names its schema by tag",
      errorof(bitwire.protocol, reg, { fingerprint = true }))
    local p = bitwire.protocol(reg, { fingerprint = false })
    assert.equal("Chat", (p:decode(p:encode("Chat", { text = "a" }))))
    contains("'version' needs a versioned protocol", errorof(p.encode, p, "Chat", { text = "" },
      { version = 1 }))
    local v = bitwire.protocol(reg, { version_bits = 8 })   -- implies versioned
    contains("'version' comes from the packet", errorof(v.decode, v,
      v:encode("Chat", { text = "" }), { version = 1 }))
    cleanup()
  end)

  it("frame_encode and frame_decode raise on keys they do not take", function ()
    local hdr = { id = 7, deltas = true }
    local chat = { text = "hi" }
    contains("unknown header option 'chek' (known: check, deltas,",
      errorof(s.frame_encode, s, { id = 7, chek = false }, "Chat", chat))
    contains("unknown header option 'version_bit'",
      errorof(s.frame_decode, s, { version_bit = 8 }, s:frame_encode({}, "Chat", chat)))
    contains("unknown option 'basline' (known: baseline, baseline_id, strict, version)",
      errorof(s.frame_encode, s, hdr, "Chat", chat, { basline = chat, baseline_id = 1 }))
    contains("unknown option 'peer'", errorof(s.frame_encode, s, hdr, "Chat", chat, { peer = 1 }))
    local packet = s:frame_encode(hdr, "Chat", chat, { baseline = chat, baseline_id = 3 })
    contains("unknown option 'baseline' (known: baselines, into, max_values, share, version)",
      errorof(s.frame_decode, s, hdr, packet, { baseline = chat }))
    contains("'baselines' must be a table", errorof(s.frame_decode, s, hdr, packet, { baselines = 3 }))
    -- a full frame raises the same: misuse, whatever the packet holds
    contains("'baselines' must be a table",
      errorof(s.frame_decode, s, hdr, s:frame_encode(hdr, "Chat", chat), { baselines = 3 }))
    local name, v = s:frame_decode(hdr, packet, { baselines = { [3] = chat } })
    assert.equal("Chat", name)
    assert.same(chat, v)
    -- the positional form of earlier releases: its header keys are not the call's
    local old = s:frame_encode(7, true, "Chat", chat, true, { deltas = true })
    assert.equal(s:frame_encode(hdr, "Chat", chat), old)
    contains("unknown option 'delta'",
      errorof(s.frame_encode, s, 7, true, "Chat", chat, true, { delta = true }))
  end)

  it("encodes strictly on request, framed and over a protocol", function ()
    local chat = { text = "hi", txet = "ho" }
    contains("unknown key 'txet' (strict: Chat declares no such field)",
      errorof(s.frame_encode, s, {}, "Chat", chat, { strict = true }))
    assert.equal(s:frame_encode({}, "Chat", { text = "hi" }), s:frame_encode({}, "Chat", chat))
    for _, opts in ipairs({ {}, { deltas = true } }) do
      local p = bitwire.protocol(s, opts)
      contains("unknown key 'txet'", errorof(p.encode, p, "Chat", chat, { strict = true }))
      contains("unknown key 'txet'", errorof(p.encode, p, "Chat", chat, { strict = true, peer = 1 }))
      local name, v = p:decode(p:encode("Chat", chat, { peer = 1 }))
      assert.equal("Chat", name)
      assert.same({ text = "hi" }, v)
    end
  end)

  it("says what a CRC mismatch may mean", function ()
    local a = bitwire.protocol(s, { id = 1 })
    local b = bitwire.protocol(s, { id = 2 })
    fails("crc", "CRC32 mismatch: corrupt, or another protocol id or definitions",
      b:decode(a:encode("Chat", { text = "x" })))
    local other = bitwire.protocol(bitwire.schema(load(defs('{"x", "bool"},'))()), { id = 1 })
    fails("crc", "CRC32 mismatch: corrupt, or another protocol id or definitions",
      other:decode(a:encode("Chat", { text = "x" })))
  end)

  it("has a tostring naming what it runs over and its options", function ()
    local text = tostring(bitwire.protocol(s, { id = 3, deltas = true, versioned = true }))
    contains("bitwire.Protocol (schema " .. s:fingerprint(), text)
    contains("id 3, deltas, version in 16 bits, end check", text)
    local path = tempdefs(defs())
    local reg = assert(bitwire.watch(path))
    contains("registry " .. path, tostring(bitwire.protocol(reg, { check = false })))
    contains("no end check", tostring(bitwire.protocol(reg, { check = false })))
    cleanup()
  end)

  it("gives the id its CRC covers", function ()
    local p = bitwire.protocol(s, { id = 3 })
    assert.equal(bitwire.protocol(s, { id = 3, fingerprint = false }):wire_id(), 3)
    local q = bitwire.protocol(s, { id = p:wire_id(), fingerprint = false })
    local name, v = q:decode(p:encode("Chat", { text = "hi" }))
    assert.equal("Chat", name)
    assert.same({ text = "hi" }, v)
  end)
end)

describe("deltas of random values", function ()
  local s = bitwire.schema {
    P = { { "a", "int", min = 0, max = 3 }, { "b", "float", min = 0, max = 1, res = 0.1, optional = true } },
    T = { { "fixed", "array", of = { "int", min = 0, max = 7 }, count = 3 },
          { "nest", "array", of = { "array", of = "P", max = 3 }, max = 3 },
          { "opt", "P", optional = true },
          { "sp", "sparse", of = "P", max = 5 },
          { "xs", "array", of = "P", max = 4 } },
  }
  local rand = H.lcg(1234)   -- rand(n): 0 .. n - 1
  local function P ()
    return { a = rand(4), b = rand(2) == 1 and rand(11) / 10 or nil }
  end
  local function arr (n, f)
    local t = {}
    for i = 1, n do t[i] = f() end
    return t
  end
  local function T ()
    local t = { fixed = arr(3, function () return rand(8) end),
      nest = arr(rand(4), function () return arr(rand(4), P) end),
      sp = {}, xs = arr(rand(5), P), opt = rand(2) == 1 and P() or nil }
    for i = 1, 5 do if rand(5) < 2 then t.sp[i] = P() end end
    return t
  end

  it("decode to the full value against a decoded and a hand-built baseline", function ()
    for i = 1, 1500 do
      local a, b = T(), T()
      if i % 3 == 0 then b.xs, b.nest = a.xs, a.nest end     -- shared tables
      local base = s:decode("T", s:encode("T", a))
      local d = s:encode("T", b, { baseline = a })
      local want = s:decode("T", s:encode("T", b))
      assert.same(want, assert(s:decode("T", d, { baseline = base })))
      -- a hand-built baseline's kept floats stay as given: equal on the wire
      assert.equal(s:encode("T", want), s:encode("T", assert(s:decode("T", d, { baseline = a }))))
    end
  end)
end)

describe("s:frame_encode and s:frame_decode", function ()
  local s = bitwire.schema(load(defs())())

  it("take a header table, and still the positional form of earlier releases", function ()
    local hdr = { id = 7, check = true, message = true }
    local pk = s:frame_encode(hdr, "Chat", { text = "yo" })
    assert.equal(pk, s:frame_encode(7, true, "Chat", { text = "yo" }, true))
    local name, v, schema = s:frame_decode(hdr, pk)
    assert.same({ "Chat", { text = "yo" }, s }, { name, v, schema })
    name, v = s:frame_decode(pk, 7, true, nil, true)
    assert.same({ "Chat", { text = "yo" } }, { name, v })
    local one = s:frame_encode(3, false, "Chat", { text = "x" }, false, { version_bits = 8 })
    assert.same({ text = "x" }, s:frame_decode(one, 3, false, "Chat", false, { version_bits = 8 }))
    fails("crc", nil, s:frame_decode(one, 4, false, "Chat", false, { version_bits = 8 }))
  end)

  it("write an explicit tag, and refuse another one with code schema", function ()
    local pk = s:frame_encode({ id = 1, tag = 0xCAFEF00D }, "Chat", { text = "t" })
    assert.equal(0xCAFEF00D, string.unpack("<I4", pk, 5))
    assert.equal("Chat", (s:frame_decode({ id = 1, tag = 0xCAFEF00D }, pk)))
    fails("schema", "packet for schema cafef00d, this is cafef00e",
      s:frame_decode({ id = 1, tag = 0xCAFEF00E }, pk))
    local tagged = s:frame_encode({ tagged = true }, "Chat", { text = "t" })
    assert.equal(s:tag(), string.unpack("<I4", tagged, 5))
    assert.equal(tonumber(s:fingerprint():sub(1, 8), 16), s:tag())
  end)
end)

describe("a protocol over a schema with a messages list", function ()
  it("frames the message ids of the list, and refuses other types", function ()
    local s = bitwire.schema {
      messages = { "Move", "Chat" },
      Vec = { { "x", "int", min = 0, max = 7 } },
      Move = { { "to", "Vec" } },
      Chat = { { "text", "string", max = 8 } },
    }
    local p = bitwire.protocol(s, { id = 1, fingerprint = false, check = false })
    local pk = p:encode("Chat", { text = "" })
    -- CRC, then message id 1 in 1 bit, then the length 0 in 4 bits
    assert.equal(1, pk:byte(5))
    local name, v = p:decode(pk)
    assert.equal("Chat", name)
    assert.same({ text = "" }, v)
    name, v = p:decode(p:encode("Move", { to = { x = 3 } }))
    assert.equal("Move", name)
    assert.same({ to = { x = 3 } }, v)
    contains("'Vec' is not a message", errorof(p.encode, p, "Vec", { x = 1 }))
  end)
end)
