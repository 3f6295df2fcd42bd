-- The game-server loop of examples/game_server.lua and game_client.lua, and
-- of spec/05c-game_loop_spec.lua, without the sockets: a server that sends
-- each client snapshots as deltas against the last one it acked, and a
-- client that decodes them against the snapshots it kept, both over a
-- bitwire.watch registry whose definitions may be reloaded mid-run.
--
-- The transport is the caller's: server:packet_for(client) and
-- server:receive(client, packet) on one side, client:receive(packet) (which
-- returns the ack to send back) on the other. A module, not a script: run
-- it through examples/game_server.lua and game_client.lua.
local bitwire = require "bitwire"

local M = {}

M.PROTOCOL_ID = 0x6A4D
M.ENTITIES = 32          -- in the array; a few more live in the sparse one

-- The definitions file's text; 'armor' adds a defaulted field (the reload).
function M.definitions(armor)
  return ([[
return {
  Vec = {
    {"x", "float", min = -512, max = 512, res = 0.01},
    {"y", "float", min = -512, max = 512, res = 0.01},
  },
  Entity = {
    {"id", "int", min = 0, max = 4095},
    {"kind", "enum", values = {"player", "grunt", "crate"}},
    {"pos", "Vec"},
    {"health", "int", min = 0, max = 100},
    {"at_rest", "bool"},
    ARMOR
  },
  Snapshot = {
    {"tick", "uint", bits = 20},
    {"entities", "array", of = "Entity", max = 64},
    {"props", "sparse", of = "Entity", max = 256},
  },
  Hello = { {"name", "string", max = 16} },
  Ack = { {"tick", "uint", bits = 20} },
}
]]):gsub("ARMOR", armor and '{"armor", "int", min = 0, max = 255, default = 0},' or "")
end

-- Entity fields at each definition, to check that none is missing.
M.FIELDS = { "id", "kind", "pos", "health", "at_rest" }
M.FIELDS_ARMOR = { "id", "kind", "pos", "health", "at_rest", "armor" }

function M.write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- {===================== server =====================

local Server = {}
Server.__index = Server

-- M.server(registry) -> server: a world of M.ENTITIES entities in an array
-- and a few in a sparse array, of which 'moving' move each tick.
function M.server(reg, moving)
  local self = setmetatable({
    reg = reg,
    proto = bitwire.protocol(reg, { id = M.PROTOCOL_ID, deltas = true }),
    tick = 0, world = {}, props = {},
    sent = {},        -- tick -> snapshot value, kept while clients may ack it
    clients = {},
    moving = moving or { 3, 17 },
    stats = { full = 0, delta = 0, full_bytes = 0, delta_bytes = 0 },
  }, Server)
  for i = 1, M.ENTITIES do
    self.world[i] = { id = i, kind = i % 3 == 0 and "crate" or "grunt",
      pos = { x = i * 4.0, y = -i * 2.0 }, health = 100, at_rest = true, armor = 0 }
  end
  for _, slot in ipairs { 5, 80, 200 } do
    self.props[slot] = { id = 1000 + slot, kind = "crate",
      pos = { x = slot / 2, y = 0.0 }, health = 50, at_rest = true, armor = 0 }
  end
  return self
end

local function copy(v)
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = copy(x) end
  return t
end

-- Advance the world one tick and keep the snapshot of it. The world is
-- copy-on-write: a moving entity becomes a new table and the others stay the
-- tables earlier snapshots hold, so a delta against one of those skips them
-- without looking inside (README, Performance), and no snapshot kept in
-- 'sent' ever changes.
function Server:step()
  self.tick = self.tick + 1
  for _, i in ipairs(self.moving) do
    local e = copy(self.world[i])
    e.pos.x = (e.pos.x + 0.25) % 500
    e.at_rest = false
    self.world[i] = e
  end
  local props = {}
  for slot, e in pairs(self.props) do props[slot] = e end
  local snap = { tick = self.tick, entities = table.move(self.world, 1, #self.world, 1, {}),
                 props = props }
  self.sent[self.tick] = snap
  self.sent[self.tick - 64] = nil           -- older than any ack we take
  return snap
end

-- Change an entity of 'where' ("world" or "props") at 'i', the
-- copy-on-write way: never in place, since kept snapshots may hold it.
function Server:edit(where, i, changes)
  local e = copy(self[where][i])
  for k, x in pairs(changes) do e[k] = x end
  self[where][i] = e
end

function Server:connect(id)
  self.clients[id] = self.clients[id] or { acked = nil }
  return self.clients[id]
end

-- The packet of the current snapshot for 'client': a delta against the
-- last snapshot it acked while the server still has it, else in full.
function Server:packet_for(client)
  local snap = self.sent[self.tick]
  local base = client.acked and self.sent[client.acked]
  local packet
  if base then
    packet = self.proto:encode("Snapshot", snap, { baseline = base,
      baseline_id = client.acked & 0xFFFF, peer = client })
    self.stats.delta, self.stats.delta_bytes = self.stats.delta + 1,
      self.stats.delta_bytes + #packet
  else
    packet = self.proto:encode("Snapshot", snap, { peer = client })
    self.stats.full, self.stats.full_bytes = self.stats.full + 1,
      self.stats.full_bytes + #packet
  end
  return packet, snap
end

-- A packet from 'client' (Hello or Ack); nil, message for a bad one.
function Server:receive(client, packet)
  local name, v, err = self.proto:decode(packet)
  if not name then return nil, v, err end
  if name == "Ack" and (client.acked == nil or v.tick > client.acked) then
    client.acked = v.tick
  end
  return name, v
end

-- }=====================================================


-- {===================== client =====================

local Client = {}
Client.__index = Client

function M.client(reg)
  return setmetatable({
    reg = reg,
    proto = bitwire.protocol(reg, { id = M.PROTOCOL_ID, deltas = true }),
    kept = {},        -- baseline id -> decoded snapshot
    state = nil,      -- the latest snapshot
    received = 0,
  }, Client)
end

function Client:hello(name)
  return self.proto:encode("Hello", { name = name })
end

-- A packet from the server -> the ack to send back | nil, message, code.
function Client:receive(packet)
  -- the kept snapshots are never written to, so a delta may share the
  -- records it leaves unchanged with its baseline
  local name, v, code = self.proto:decode(packet, { baselines = self.kept, share = true })
  if not name then return nil, v, code end
  if name ~= "Snapshot" then return nil, "unexpected " .. name, "tag" end
  if self.state == nil or v.tick > self.state.tick then self.state = v end
  self.received = self.received + 1
  -- keep the last 64 ticks' snapshots, as the server keeps what it sent:
  -- swept by tick, since the packet of any one tick may never arrive
  local newest = self.state.tick
  if v.tick > newest - 64 then self.kept[v.tick & 0xFFFF] = v end
  for id, old in pairs(self.kept) do
    if old.tick <= newest - 64 then self.kept[id] = nil end
  end
  return self.proto:encode("Ack", { tick = v.tick })
end

-- }=====================================================

return M
