-- bitwire layout defs.lua Type: each field's wire form and size, and an
-- RFC 791-style drawing of the type's fixed-size prefix.
local util = require "bitwire.cliutil"

local M = {}

M.summary = "each field's wire form and bits, with a bit diagram"
M.usage = [[
usage: bitwire layout defs.lua Type [--sort] [--no-diagram]

One line per field (nested types indented, in wire order): its wire form,
its size in bits as min..max (a presence bit included), and its share of
the type's worst case. --sort lists the fields largest first, by their
worst case, with full paths. Then a diagram of the fixed-size prefix (the
fields from bit 0 up to the first one whose size varies), 32 bits a row,
drawn like RFC 791; bit numbers are stream bits (bit 0 is the least
significant bit of byte 0, see WIRE.md).
]]

local function num(v)
  if math.type(v) == "float" then return string.format("%.9g", v) end
  return tostring(v)
end

-- The wire form of field 'f', in words.
local function form(f)
  local k = f.kind
  if k == "int" then return string.format("int [%d, %d]", f.min, f.max)
  elseif k == "uint" then return string.format("uint %d bits", f.bits)
  elseif k == "float" then
    return string.format("float [%s, %s] in %s steps", num(f.fmin), num(f.fmax),
      num(f.qmax))
  elseif k == "enum" then
    return "enum {" .. table.concat(f.values, ", ") .. "}"
  elseif k == "string" then return string.format("string max %d", f.max)
  elseif k == "bytes" then
    if f.fixed then return string.format("bytes count %d", f.min) end
    return string.format("bytes [%d, %d]", f.min, f.max)
  elseif k == "array" then
    local of = f.of.kind == "struct" and f.of.type or form(f.of)
    if f.fixed then return string.format("array of %s count %d", of, f.min) end
    return string.format("array of %s [%d, %d]", of, f.min, f.max)
  elseif k == "sparse" then
    local of = f.of.kind == "struct" and f.of.type or form(f.of)
    return string.format("sparse of %s max %d (%s)", of, f.max, f.encoding)
  elseif k == "struct" then return f.type
  elseif k == "quat" then return string.format("quat %d bits a component", f.bits)
  elseif k == "tiered" then
    return string.format("tiered [%d, %d] tiers {%s}", f.min, f.max,
      table.concat(f.tiers, ", "))
  elseif k == "check" then return string.format("check 0x%08x", f.magic)
  elseif k == "angle" then
    return string.format("angle %d bits, period %s", f.bits, num(f.period))
  end
  return k
end
M.form = form

local function size(f)
  if not f.optional then return f.minbits, f.maxbits end
  return 1, f.maxbits and f.maxbits + 1 or nil
end

local function versions(f)
  if (f.since or 0) == 0 and f.removed == nil then return "" end
  return string.format(" v%d..%s", f.since or 0, f.removed and tostring(f.removed - 1) or "")
end

-- Rows for the fields of type 'ty': {path, depth, form, min, max}.
local function rows(p, ty, path, depth, out)
  for _, f in ipairs(ty.fields) do
    local name = f.name or ("(" .. f.kind .. ")")
    local full = path == "" and name or path .. "." .. name
    local mn, mx = size(f)
    out[#out + 1] = { path = full, name = name, depth = depth,
      form = form(f) .. (f.optional and " optional" or "")
        .. (f.relative and " (relative in deltas)" or "") .. versions(f),
      min = mn, max = mx, leaf = f.kind ~= "struct" }
    if f.kind == "struct" and depth < 16 then
      rows(p, p.byname[f.type], full, depth + 1, out)
    end
  end
  return out
end

-- The fixed-size prefix: {name, bits} from bit 0 while sizes are known.
local function prefix(p, ty, path, pos, out, version)
  for _, f in ipairs(ty.fields) do
    if (f.since or 0) > version or (f.removed and version >= f.removed) then
      goto continue
    end
    local name = f.name or f.kind
    local full = path == "" and name or path .. "." .. name
    if f.kind == "align" or f.kind == "check" then
      local pad = (8 - pos % 8) % 8
      if pad > 0 then
        out[#out + 1] = { name = "(pad)", bits = pad }
        pos = pos + pad
      end
      if f.kind == "check" then
        out[#out + 1] = { name = "check", bits = 32 }
        pos = pos + 32
      end
    elseif f.kind == "array" and f.fixed and not f.optional and f.min <= 64
        and f.of.maxbits and f.of.minbits == f.of.maxbits and f.of.kind ~= "bytes"
        and f.of.kind ~= "string" and f.of.kind ~= "array" then
      for i = 1, f.min do   -- a fixed array of fixed elements: each element
        local el = full .. "[" .. i .. "]"
        if f.of.kind == "struct" then
          local done
          pos, done = prefix(p, p.byname[f.of.type], el, pos, out, version)
          if not done then return pos, false end
        elseif f.of.minbits > 0 then
          out[#out + 1] = { name = el, bits = f.of.minbits }
          pos = pos + f.of.minbits
        end
      end
    elseif f.optional or f.maxbits == nil or f.minbits ~= f.maxbits
        or f.kind == "string" or f.kind == "bytes" or f.kind == "array"
        or f.kind == "sparse" then
      return pos, false
    elseif f.kind == "struct" then
      local done
      pos, done = prefix(p, p.byname[f.type], full, pos, out, version)
      if not done then return pos, false end
    elseif f.minbits > 0 then
      out[#out + 1] = { name = full, bits = f.minbits }
      pos = pos + f.minbits
    end
    ::continue::
  end
  return pos, true
end

-- RFC 791-style drawing of 'cells' ({name, bits}), 'width' bits a row.
function M.diagram(cells, width)
  width = width or 32
  local lines = {}
  local function ruler(n)
    local tens, ones = {}, {}
    for b = 0, n - 1 do
      tens[#tens + 1] = (b % 10 == 0) and tostring(b // 10 % 10) or " "
      ones[#ones + 1] = tostring(b % 10)
    end
    lines[#lines + 1] = (" " .. table.concat(tens, " ")):gsub("%s+$", "")
    lines[#lines + 1] = " " .. table.concat(ones, " ")
  end
  local function border(n) return "+" .. string.rep("-+", n) end
  ruler(width)
  -- split cells at row ends
  local row, rowbits, rowsdone = {}, 0, {}
  for _, c in ipairs(cells) do
    local left, part = c.bits, 0
    while left > 0 do
      local take = math.min(left, width - rowbits)
      row[#row + 1] = { name = c.name .. (part > 0 and " (cont)" or ""), bits = take }
      rowbits, left, part = rowbits + take, left - take, part + 1
      if rowbits == width then
        rowsdone[#rowsdone + 1] = { cells = row, bits = rowbits }
        row, rowbits = {}, 0
      end
    end
  end
  if rowbits > 0 then rowsdone[#rowsdone + 1] = { cells = row, bits = rowbits } end
  lines[#lines + 1] = border(rowsdone[1] and rowsdone[1].bits or 0)
  for _, r in ipairs(rowsdone) do
    local parts = { "|" }
    for _, c in ipairs(r.cells) do
      local room = 2 * c.bits - 1
      local label = c.name
      if util.width(label) > room then
        label = room >= 2 and util.cut(label, room - 1) .. "~" or util.cut(label, room)
      end
      local lpad = (room - util.width(label)) // 2
      parts[#parts + 1] = string.rep(" ", lpad) .. util.pad(label, room - lpad) .. "|"
    end
    lines[#lines + 1] = table.concat(parts)
    lines[#lines + 1] = border(r.bits)
  end
  return table.concat(lines, "\n") .. "\n"
end

local function share(v, worst)
  if v == nil then return "  -" end
  if worst == nil or worst == 0 then return "  -" end
  return string.format("%5.1f%%", 100 * v / worst)
end

function M.run(args, io)
  local pos, opts = util.parse(args, { flags = { sort = true, ["no-diagram"] = true } },
    M.usage)
  local path = util.need(pos, 1, "definitions file", M.usage)
  local name = util.need(pos, 2, "type name", M.usage)
  util.nomore(pos, 2, M.usage)
  local s = util.loadschema(path)
  local p = s:program()
  local ty = util.checktype(s, name, path)
  local out = io.stdout
  out:write(string.format("%s: %s bits (%s), version %d\n", name,
    ty.minbits == ty.maxbits and tostring(ty.minbits)
      or ty.minbits .. ".." .. (ty.maxbits and tostring(ty.maxbits) or "unbounded"),
    ty.maxbits and string.format("worst case %d bytes", (ty.maxbits + 7) // 8)
      or "no worst case", p.version))
  local list = rows(p, ty, "", 0, {})
  if opts.sort then
    local leaves = {}
    for _, r in ipairs(list) do
      if r.leaf then leaves[#leaves + 1] = r end
    end
    table.sort(leaves, function (a, b)
      local ma, mb = a.max or math.huge, b.max or math.huge
      if ma ~= mb then return ma > mb end
      return a.path < b.path
    end)
    list = leaves
  end
  local w = 5
  for _, r in ipairs(list) do
    local label = opts.sort and r.path or string.rep("  ", r.depth) .. r.name
    w = math.max(w, util.width(label))
  end
  out:write(string.format("  %s  %-12s %6s  %s\n", util.pad("field", w), "bits",
    "share", "wire form"))
  for _, r in ipairs(list) do
    local label = opts.sort and r.path or string.rep("  ", r.depth) .. r.name
    local bits = r.min == r.max and tostring(r.min)
      or r.min .. ".." .. (r.max and tostring(r.max) or "inf")
    out:write(string.format("  %s  %-12s %6s  %s\n", util.pad(label, w), bits,
      share(r.max, ty.maxbits), r.form))
  end
  if not opts["no-diagram"] then
    local cells = {}
    local bits, whole = prefix(p, ty, "", 0, cells, p.version)
    if bits == 0 then
      out:write("\nno fixed-size prefix: the first field's size varies\n")
    else
      out:write(string.format("\n%s of %s (%d bits):\n\n",
        whole and "whole layout" or "fixed-size prefix", name, bits))
      out:write(M.diagram(cells))
    end
  end
  return 0
end

return M
