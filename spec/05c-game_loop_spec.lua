-- The game-server loop end to end, in one process: a registry protocol
-- with deltas against acked snapshots, an array and a sparse array of
-- entities, and a reload that adds a defaulted field mid-run
-- (examples/game_loop.lua); then the UDP examples themselves.
local bitwire = require "bitwire"
if not package.path:find("./examples/?.lua", 1, true) then
  package.path = "./examples/?.lua;" .. package.path
end
local G = require "game_loop"

local function has_all(e, fields)
  for _, k in ipairs(fields) do
    if e[k] == nil then return false, k end
  end
  return true
end

describe("the game loop", function ()
  local path
  before_each(function ()
    path = os.tmpname()
    G.write(path, G.definitions(false))
  end)
  after_each(function () os.remove(path) end)

  -- A server and a client, each watching the definitions, and the
  -- client's connection on the server.
  local function connected()
    local sreg, creg = assert(bitwire.watch(path)), assert(bitwire.watch(path))
    local server, client = G.server(sreg), G.client(creg)
    return server, client, server:connect("c1"), sreg, creg
  end

  it("sends deltas of at most 40% of a full frame, across a reload, with no field missing", function ()
    local server, client, c, sreg, creg = connected()
    assert.equal("Hello", (server:receive(c, client:hello("ann"))))
    local ack
    local ratios = { before = {}, after = {} }
    local reloaded, across = false, nil
    for tick = 1, 120 do
      if tick == 60 then
        G.write(path, G.definitions(true))
        assert.is_true(sreg:poll())
        assert.is_true(creg:poll())
        reloaded = true
        server:edit("world", 7, { armor = 9 })
      end
      if tick % 10 == 0 then server:edit("props", 80, { health = tick % 100 }) end
      server:step()
      if tick > 1 then
        -- copy-on-write: unmoved entities are the last snapshot's tables,
        -- which a delta encode skips without looking inside
        local prev, cur = server.sent[tick - 1].entities, server.sent[tick].entities
        assert.is_true(rawequal(prev[1], cur[1]))
        assert.is_false(rawequal(prev[3], cur[3]))    -- entity 3 moves
      end
      if ack then server:receive(c, ack) end          -- acks arrive a tick late
      local packet, snap = server:packet_for(c)
      local full = server.proto:encode("Snapshot", snap)
      local delta = c.acked ~= nil
      if delta then
        local r = ratios[reloaded and "after" or "before"]
        r[#r + 1] = #packet / #full
        if reloaded and across == nil then
          -- the first delta after the reload: its baseline was decoded by
          -- the client under the old definitions
          across = c.acked
          assert.is_nil(client.kept[c.acked & 0xFFFF].entities[1].armor)
        end
      end
      local base = delta and client.kept[c.acked & 0xFFFF]
      ack = assert(client:receive(packet))
      if delta and c.acked ~= across then
        -- the client decodes with share: the entities that did not move
        -- are its baseline's own tables (not across the reload: copied)
        local shared = 0
        for i, e in ipairs(client.state.entities) do
          if rawequal(e, base.entities[i]) then shared = shared + 1 end
        end
        assert.is_true(shared >= 20, shared .. " shared")
      end
      -- the client's state is what a full decode of the snapshot gives
      local _, want = server.proto:decode(full)
      assert.same(want, client.state)
      local fields = reloaded and G.FIELDS_ARMOR or G.FIELDS
      for i, e in ipairs(client.state.entities) do
        assert(has_all(e, fields), "entity " .. i .. " misses a field")
      end
      for slot, e in pairs(client.state.props) do
        assert(has_all(e, fields), "prop " .. slot .. " misses a field")
      end
      if reloaded then assert.equal(9, client.state.entities[7].armor) end
    end
    assert.is_number(across)
    for _, when in ipairs { "before", "after" } do
      assert.is_true(#ratios[when] > 40, when)
      for _, r in ipairs(ratios[when]) do
        assert.is_true(r <= 0.4, string.format("%s: delta %.0f%% of full", when, r * 100))
      end
    end
    assert.equal(1, server.stats.full)
    assert.equal(119, server.stats.delta)
    assert.equal(120, client.received)
  end)

  it("falls back to full frames when the client's ack is too old, and loses nothing", function ()
    local server, client, c = connected()
    for _ = 1, 5 do
      server:step()
      server:receive(c, assert(client:receive((server:packet_for(c)))))
    end
    for _ = 1, 70 do server:step() end               -- the client hears nothing
    local packet, snap = server:packet_for(c)
    assert.is_nil(server.sent[c.acked])
    assert.equal(#server.proto:encode("Snapshot", snap), #packet)
    assert(client:receive(packet))
    assert.same(select(2, server.proto:decode(packet)), client.state)
  end)

  it("refuses a delta against a snapshot the client does not have, with code baseline", function ()
    local server, client, c = connected()
    server:step()
    server:receive(c, assert(client:receive((server:packet_for(c)))))
    server:step()
    client.kept = {}
    local ok, err, code = client:receive((server:packet_for(c)))
    assert.is_nil(ok)
    assert.equal("baseline", code)
    assert.matches("unknown baseline 1", err)
  end)

  it("keeps at most 64 snapshots on the client when packets are lost", function ()
    local server, client, c = connected()
    for tick = 1, 300 do
      server:step()
      local packet = server:packet_for(c)
      if tick % 5 ~= 0 then                    -- every fifth packet is lost
        server:receive(c, assert(client:receive(packet)))
      end
    end
    local n = 0
    for _, snap in pairs(client.kept) do
      n = n + 1
      assert.is_true(snap.tick > client.state.tick - 64, snap.tick .. " kept")
    end
    assert.is_true(n <= 64, n .. " kept")
  end)
end)

describe("examples/game_server.lua and game_client.lua", function ()
  it("run over UDP on 127.0.0.1, stop by themselves and agree", function ()
    local ok, socket = pcall(require, "socket")
    if not ok then
      pending("lua-socket is not installed (make deps installs it)")
      return
    end
    local defs = os.tmpname()
    -- a port the system has free, not one from the clock: make test runs
    -- the specs twice at once (plain and under valgrind)
    local probe = assert(socket.udp())
    assert(probe:setsockname("127.0.0.1", 0))
    local _, port = probe:getsockname()
    probe:close()
    local env = 'LUA_PATH="./lua/?.lua;./lua/?/init.lua;./examples/?.lua;;" LUA_CPATH="./build/?.so;;" '
    local server = assert(io.popen(env .. "lua5.4 examples/game_server.lua " .. port
      .. " " .. defs .. " 1.5 2>&1", "r"))
    local client = assert(io.popen(env .. "lua5.4 examples/game_client.lua " .. port
      .. " " .. defs .. " 2>&1", "r"))
    local cout, sout = client:read("a"), server:read("a")
    local cok, sok = client:close(), server:close()
    os.remove(defs)
    assert.is_true(cok, cout)
    assert.is_true(sok, sout)
    local received = tonumber(cout:match("received (%d+) snapshots"))
    assert.is_true(received and received > 20, cout)
    assert.matches("reloaded", sout)
    assert.matches("deltas: %d+ of at most", sout)
    assert.matches("armor seen", cout)
  end)
end)
