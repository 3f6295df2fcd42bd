-- bench/shapes/snapshot.lua - the standard Snapshot of issue 7
-- (bench/message.lua) as a shape of the suite. Hand C: bench/handc.c.
local msg = require "bench.message"

return {
  name = "snapshot", type = "Snapshot", tol = 0.01,
  description = msg.description,
  data = function (seed, n) return msg.snapshot(seed, n) end,
  pack = require "bench.peers.stringpack",
  handc = false,  -- its own module, "handc"
}
