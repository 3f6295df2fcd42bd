-- The messages of examples/c_server: prototyped in Lua (client.lua), then
-- served from C with code generated from this file:
--   bitwire gen c examples/c_server/defs.lua -o DIR --name game
return {
  Vec3 = {
    {"x", "float", min = -256, max = 256, res = 0.01},
    {"y", "float", min = -256, max = 256, res = 0.01},
    {"z", "float", min = -256, max = 256, res = 0.01},
  },
  Hello = {
    {"name", "string", max = 16},
    {"team", "enum", values = {"red", "blue"}},
  },
  Input = {
    {"tick", "uint", bits = 16},
    {"move", "Vec3"},
    {"fire", "bool"},
  },
  Welcome = {
    {"player", "int", min = 0, max = 63},
    {"greeting", "string", max = 32},
    {"spawn", "Vec3"},
  },
  Ack = {
    {"tick", "uint", bits = 16},
    {"pos", "Vec3"},
  },
  Bye = {
    {"reason", "string", max = 16, optional = true},
  },
}
