-- bitwire.gen: code generators that read a schema's compiled program.
-- bitwire.gen.c(schema, opts), bitwire.gen.serialize_h(schema, opts),
-- bitwire.gen.blob(schema, opts); each is loaded on first use.
local M = {}

local modules = { c = "bitwire.gen.c", serialize_h = "bitwire.gen.serialize_h",
                  blob = "bitwire.gen.blob" }

return setmetatable(M, { __index = function(t, k)
  local name = modules[k]
  if name == nil then return nil end
  local mod = require(name)
  rawset(t, k, mod)
  return mod
end })
