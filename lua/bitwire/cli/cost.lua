-- bitwire cost defs.lua Type value.json: where one value's bits go.
local util = require "bitwire.cliutil"

local M = {}

M.summary = "where the bits of one value go, largest first"
M.usage = [[
usage: bitwire cost defs.lua Type value.json [--by-field]

Encodes the value (JSON, mapped as in `bitwire encode --help`; - reads
stdin, json:{...} gives it inline) and lists every field path that costs
bits, largest first: its bits and share of the total. A field's presence,
count or index bits count to that field. The same as s:cost(Type, value).
--by-field adds up the elements of arrays and sparse arrays: entities[].pos.x
is the bits of every entity's pos.x.
]]

function M.run(args, io)
  local pos, opts = util.parse(args, { flags = { ["by-field"] = true } }, M.usage)
  local path = util.need(pos, 1, "definitions file", M.usage)
  local name = util.need(pos, 2, "type name", M.usage)
  local src = util.need(pos, 3, "value (JSON file, - or json:...)", M.usage)
  util.nomore(pos, 3, M.usage)
  local s = util.loadschema(path)
  util.checktype(s, name, path)
  local value = util.jsonvalue(s, name, src, io.stdin)
  -- rows keyed by the walk's steps, not by path text: a field named x[1]
  -- is not array x's element 1, nor a row of x[]
  local cost = opts["by-field"] and require("bitwire.dissect").cost_by_field or s.cost
  local ok, list, total = pcall(cost, s, name, value)
  if not ok then util.valuefail(src, name, list) end
  local w = 4
  for _, c in ipairs(list) do w = math.max(w, util.width(c.path)) end
  io.stdout:write(string.format("%s: %d bits, %d bytes\n", name, total, (total + 7) // 8))
  io.stdout:write(string.format("  %s %6s %7s\n", util.pad("path", w), "bits", "share"))
  for _, c in ipairs(list) do
    io.stdout:write(string.format("  %s %6d %6.1f%%\n", util.pad(c.path ~= "" and c.path or "(value)", w),
      c.bits, total > 0 and 100 * c.bits / total or 0))
  end
  return 0
end

return M
