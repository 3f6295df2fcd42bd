-- Descriptions to compiled schemas. Every rule about a description lives in
-- the C compiler (core/bw_compile.c); bitwire.core.compile walks the tables
-- and reports errors as "bitwire.schema: Type.field: reason". This module
-- keeps a compiled description as text, for states that adopt the schema.
local core = require "bitwire.core"

local M = {}

local mtype, huge = math.type, math.huge

-- Compile 'desc' (options: {strict = true}); returns the schema.
function M.compile(desc, opts)
  local ok, s = pcall(core.compile, desc, opts)   -- its errors carry no position
  if not ok then error(s, 0) end
  core._setdesc(s, M.totext(desc))
  return s
end

-- The description as a Lua constructor (keys sorted, floats in hex so they
-- load back exactly), and back: a compiled schema keeps the text so a Lua
-- state that adopts it can still describe and diff it. Only compiled
-- descriptions get here: the compiler has bounded their size and depth.
local function totext(v, out)
  local tv = type(v)
  if tv == "table" then
    local keys = {}
    for k in next, v do keys[#keys + 1] = k end
    table.sort(keys, function (a, b)
      if type(a) == type(b) then return a < b end
      return type(a) == "number"
    end)
    out[#out + 1] = "{"
    for _, k in ipairs(keys) do
      out[#out + 1] = type(k) == "string" and string.format("[%q]=", k)
        or string.format("[%d]=", k)
      totext(v[k], out)
      out[#out + 1] = ","
    end
    out[#out + 1] = "}"
  elseif tv == "string" then out[#out + 1] = string.format("%q", v)
  elseif mtype(v) == "integer" then out[#out + 1] = string.format("%d", v)
  elseif v ~= v or v == huge or v == -huge then   -- no literal: the bits
    out[#out + 1] = string.format('F"%016x"', string.unpack("<i8", string.pack("<d", v)))
  elseif tv == "number" then out[#out + 1] = string.format("%a", v)
  else out[#out + 1] = tostring(v) end
end

function M.totext(norm)
  local out = {}
  totext(norm, out)
  return table.concat(out)
end

-- F"7ff0000000000000": the float with these bits (NaN payloads kept)
local function F(hex)
  return (string.unpack("<d", string.pack("<i8", tonumber(hex, 16))))
end

function M.fromtext(text)
  return assert(load("return " .. text, "=description", "t", { F = F }))()
end

return M
