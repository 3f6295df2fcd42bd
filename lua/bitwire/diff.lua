-- bitwire.diff(old, new): what replacing schema 'old' with 'new' changes, type
-- by type, from their normalized descriptions (s:description()).
--
-- The report is a table an operator tool can walk, and prints as text:
--   report.types_added, report.types_removed    lists of type names
--   report.changes    list of { type =, op =, field =, old =, new =, what =,
--                             wire = }
--     op "add"      field added        (new: its text, new_field: normalized)
--     op "remove"   field removed      (old: its text, old_field)
--     op "change"   field changed      (old, new texts; what: the attributes)
--     op "rename"   field renamed      (old, new: the names), found as a
--                   field removed and one alike added at the same place
--     op "default"  default changed    (old, new values)
--     op "order"    fields reordered   (old, new: lists of field names)
--     op "ids"      message type id moved (old, new: the ids), because type
--                   ids are the sorted positions of the type names
--     op "id_bits"  (type = nil) the width of every message type id changed
--   every change has 'wire': false for renames, defaults and new names of
--   as many enum values, which leave every bit as it was
--   report.wire       true when the wire form differs (fingerprints differ)
--   report:empty()    true when nothing at all differs
--   report:text(), tostring(report)   one line per item, e.g.
--     Entity: + armor int [0, 255]
--     Entity: ~ health int [0, 100] -> [0, 200]
local M = {}

local Report = {}
Report.__index = Report

-- attributes of a normalized field that decide its wire form
local WIRE_KEYS = { "kind", "typename", "min", "max", "bits", "fmin", "fmax",
  "res", "clamp", "fixed", "values", "magic", "encoding", "tiers", "optional",
  "since", "removed", "of", "period", "relative" }

local ENCODINGS = { [0] = "mask", "index", "relative", "auto" }

local function num(v)
  if math.type(v) == "float" then return string.format("%.14g", v) end
  return tostring(v)
end

local function list(t, q)
  local out = {}
  for i, v in ipairs(t) do out[i] = q and string.format("%q", v) or num(v) end
  return "{" .. table.concat(out, ", ") .. "}"
end

-- Readable text of a normalized field (without its name).
local function fieldtext(f)
  local k, s = f.kind
  if k == "struct" then s = f.typename
  elseif k == "int" then s = string.format("int [%s, %s]", num(f.min), num(f.max))
  elseif k == "uint" or k == "quat" then s = string.format("%s %d bits", k, f.bits)
  elseif k == "float" then
    s = string.format("float [%s, %s] res %s%s", num(f.fmin), num(f.fmax),
      num(f.res), f.clamp and " clamp" or "")
  elseif k == "enum" then s = "enum " .. list(f.values)
  elseif k == "string" then s = "string max " .. num(f.max)
  elseif k == "bytes" or k == "array" then
    s = k
    if k == "array" then s = s .. " of " .. fieldtext(f.of) end
    if f.fixed then s = s .. " count " .. num(f.max)
    elseif (f.min or 0) ~= 0 then s = s .. string.format(" [%s, %s]", num(f.min), num(f.max))
    else s = s .. " max " .. num(f.max) end
  elseif k == "check" then s = string.format("check 0x%08x", f.magic)
  elseif k == "sparse" then
    s = string.format("sparse of %s max %s %s", fieldtext(f.of), num(f.max),
      ENCODINGS[f.encoding] or tostring(f.encoding))
    if f.tiers then s = s .. " tiers " .. list(f.tiers) end
  elseif k == "tiered" then
    s = string.format("tiered %s [%s, %s]", list(f.tiers), num(f.min), num(f.max))
  elseif k == "angle" then s = string.format("angle %d bits %s", f.bits, f.unit)
  else s = k end
  if f.relative then
    s = s .. " delta relative" .. (f.tiers and " tiers " .. list(f.tiers) or "")
  end
  if f.optional then s = s .. " optional" end
  if f.since then s = s .. " since " .. f.since end
  if f.removed then s = s .. " removed " .. f.removed end
  return s
end
M.fieldtext = fieldtext

local function same(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then return a == b end
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- names of the wire attributes that differ between fields 'a' and 'b'
local function wirediff(a, b)
  local what = {}
  for _, key in ipairs(WIRE_KEYS) do
    local x, y = a[key], b[key]
    local differ
    if key == "of" then
      differ = (x == nil) ~= (y == nil) or (x and fieldtext(x) ~= fieldtext(y))
    elseif key == "min" or key == "max" then
      differ = (x or 0) ~= (y or 0)
    else
      differ = not same(x, y)
    end
    if differ then
      what[#what + 1] = (key == "fmin" or key == "fmax") and key:sub(2) or key
    end
  end
  -- min and max as range when both are ints, fmin/fmax as range of floats
  local out, seen = {}, {}
  for _, w in ipairs(what) do
    local name = (w == "min" or w == "max") and "range" or w
    if not seen[name] then seen[name] = true; out[#out + 1] = name end
  end
  return out
end

-- a key for each field: its name, or "align#2" for the 2nd unnamed align
local function keyed(fields)
  local keys, byname, count = {}, {}, {}
  for i, f in ipairs(fields) do
    local key = f.name
    if not key then
      count[f.kind] = (count[f.kind] or 0) + 1
      key = f.kind .. "#" .. count[f.kind]
    end
    keys[i], byname[key] = key, f
  end
  return keys, byname
end

local function describe(x, which)
  if type(x) == "table" and type(x.types) == "table" then return x, nil end
  local ok, d = pcall(function() return x:description() end)
  if not ok or type(d) ~= "table" then
    error("bitwire.diff: " .. which .. " must be a schema compiled in this "
      .. "state (or its description), got " .. tostring(x), 3)
  end
  local fp
  pcall(function() fp = x:fingerprint() end)
  return d, fp
end

-- what[] names only enum value names, with as many values: same bits
local function namesonly(what, a, b)
  return #what == 1 and what[1] == "values" and #a.values == #b.values
end

local function difftype(report, name, old, new)
  local changes = report.changes
  local okeys, obyname = keyed(old.fields)
  local nkeys, nbyname = keyed(new.fields)
  -- a field removed and one added at the same place, alike: a rename
  local renamed, renamedto = {}, {}
  for i, k in ipairs(okeys) do
    local nk = nkeys[i]
    if not nbyname[k] and nk and not obyname[nk]
        and fieldtext(obyname[k]) == fieldtext(nbyname[nk]) then
      renamed[k], renamedto[nk] = nk, k
    end
  end
  for _, k in ipairs(okeys) do
    if not nbyname[k] and not renamed[k] then
      local f = obyname[k]
      changes[#changes + 1] = { type = name, op = "remove", field = k,
        old = fieldtext(f), old_field = f, wire = true }
    end
  end
  for _, k in ipairs(nkeys) do
    local a, b = obyname[k] or obyname[renamedto[k]], nbyname[k]
    if renamedto[k] then
      changes[#changes + 1] = { type = name, op = "rename", field = k,
        old = renamedto[k], new = k, wire = false }
    end
    if not a then
      changes[#changes + 1] = { type = name, op = "add", field = k,
        new = fieldtext(b), new_field = b, wire = true }
    else
      local what = wirediff(a, b)
      if #what > 0 then
        changes[#changes + 1] = { type = name, op = "change", field = k,
          old = fieldtext(a), new = fieldtext(b), what = what,
          old_field = a, new_field = b, wire = not namesonly(what, a, b) }
      end
      if a.default ~= b.default then
        changes[#changes + 1] = { type = name, op = "default", field = k,
          old = a.default, new = b.default, wire = false }
      end
    end
  end
  -- the fields both have, in each order
  local ocommon, ncommon = {}, {}
  for _, k in ipairs(okeys) do
    if nbyname[k] or renamed[k] then ocommon[#ocommon + 1] = renamed[k] or k end
  end
  for _, k in ipairs(nkeys) do
    if obyname[k] or renamedto[k] then ncommon[#ncommon + 1] = k end
  end
  if not same(ocommon, ncommon) then
    changes[#changes + 1] = { type = name, op = "order", old = ocommon,
      new = ncommon, wire = true }
  end
end

-- bits of a message type id among 'n' types (bits_required(0, n - 1))
local function idbits(n)
  local b = 0
  while n - 1 >= 1 << b do b = b + 1 end
  return b
end

-- bitwire.diff(old, new) -> report
function M.diff(old, new)
  local od, ofp = describe(old, "old")
  local nd, nfp = describe(new, "new")
  local report = setmetatable({ types_added = {}, types_removed = {},
    changes = {}, old_fingerprint = ofp, new_fingerprint = nfp }, Report)
  local otypes, ntypes, oid, nid = {}, {}, {}, {}
  for i, t in ipairs(od.types) do otypes[t.name], oid[t.name] = t, i - 1 end
  for i, t in ipairs(nd.types) do ntypes[t.name], nid[t.name] = t, i - 1 end
  for _, t in ipairs(od.types) do
    if not ntypes[t.name] then report.types_removed[#report.types_removed + 1] = t.name end
  end
  for _, t in ipairs(nd.types) do
    if not otypes[t.name] then
      report.types_added[#report.types_added + 1] = t.name
    else
      difftype(report, t.name, otypes[t.name], t)
      if oid[t.name] ~= nid[t.name] then
        report.changes[#report.changes + 1] = { type = t.name, op = "ids",
          old = oid[t.name], new = nid[t.name], wire = true }
      end
    end
  end
  local obits, nbits = idbits(#od.types), idbits(#nd.types)
  if obits ~= nbits then
    report.changes[#report.changes + 1] = { op = "id_bits", old = obits,
      new = nbits, wire = true }
  end
  if ofp and nfp then
    report.wire = ofp ~= nfp
  else
    report.wire = #report.types_added + #report.types_removed > 0
    for _, c in ipairs(report.changes) do
      if c.wire then report.wire = true end
    end
  end
  return report
end

function Report:empty()
  return #self.types_added == 0 and #self.types_removed == 0 and #self.changes == 0
end

local function value(v)
  if type(v) == "string" then return string.format("%q", v) end
  return v == nil and "none" or num(v)
end

function Report:text()
  local lines = {}
  for _, n in ipairs(self.types_added) do lines[#lines + 1] = "+ type " .. n end
  for _, n in ipairs(self.types_removed) do lines[#lines + 1] = "- type " .. n end
  for _, c in ipairs(self.changes) do
    local l
    if c.op == "add" then l = string.format("%s: + %s %s", c.type, c.field, c.new)
    elseif c.op == "remove" then l = string.format("%s: - %s %s", c.type, c.field, c.old)
    elseif c.op == "change" then
      -- "int [0, 100] -> [0, 200]" when the kind stays
      local kind = c.old:match("^(%S+) ")
      local new = c.new
      if kind and kind ~= "array" and new:sub(1, #kind + 1) == kind .. " " then
        new = new:sub(#kind + 2)
      end
      l = string.format("%s: ~ %s %s -> %s%s", c.type, c.field, c.old, new,
        c.wire and "" or " (names only, not on the wire)")
    elseif c.op == "rename" then
      l = string.format("%s: ~ %s renamed %s (not on the wire)", c.type, c.old, c.new)
    elseif c.op == "default" then
      l = string.format("%s: ~ %s default %s -> %s (not on the wire)", c.type,
        c.field, value(c.old), value(c.new))
    elseif c.op == "order" then
      l = string.format("%s: ~ field order %s -> %s", c.type,
        table.concat(c.old, ", "), table.concat(c.new, ", "))
    elseif c.op == "ids" then
      l = string.format("%s: ~ message type id %d -> %d", c.type, c.old, c.new)
    elseif c.op == "id_bits" then
      l = string.format("~ message type ids take %d -> %d bits", c.old, c.new)
    end
    lines[#lines + 1] = l
  end
  return table.concat(lines, "\n")
end

Report.__tostring = Report.text

return M
