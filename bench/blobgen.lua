-- Writes build/bench/bench_blob.h: bitwire.gen.blob's header for the blob
-- benchmark's records (64 bytes each). usage: lua5.4 bench/blobgen.lua OUT
local bitwire = require "bitwire"
local s = bitwire.schema {
  Vec3 = { { "x", "float32" }, { "y", "float32" }, { "z", "float32" } },
  Rec = {
    { "id", "uint", bits = 32 }, { "pos", "Vec3" }, { "vel", "Vec3" },
    { "hp", "int", min = 0, max = 1000 },
    { "kind", "enum", values = { "a", "b", "c", "d" } }, { "alive", "bool" },
    { "team", "uint", bits = 8 }, { "mass", "float64" }, { "score", "float64" },
    { "level", "uint", bits = 32 }, { "ammo", "int", min = 0, max = 999 },
    { "flags", "uint", bits = 16 },
  },
  Big = { { "recs", "array", of = "Rec", max = 1 << 20 } },
}
local f = assert(io.open(assert(arg[1], "usage: blobgen.lua OUT"), "wb"))
f:write(require("bitwire.gen.blob")(s))
f:close()
