-- bitwire.diff(old, new): what replacing schema 'old' with 'new' changes, type
-- by type, read from their compiled programs (s:program()), so "changes the
-- wire" means exactly "changes the fingerprint": each field's program carries
-- the hash of what its bits depend on (names and defaults left out).
--
-- The report is a table an operator tool can walk, and prints as text:
--   report.types_added, report.types_removed    lists of type names
--   report.changes    list of { type =, op =, field =, old =, new =, what =,
--                             wire = }
--     op "add"      field added        (new: its text, new_field: program field)
--     op "remove"   field removed      (old: its text, old_field)
--     op "change"   field changed      (old, new texts; what: the attributes)
--     op "rename"   field renamed      (old, new: the names), found as a
--                   field removed and one alike added at the same place
--     op "default"  default changed    (old, new values)
--     op "order"    fields reordered   (old, new: lists of field names)
--     op "ids"      message id moved   (old, new: the ids, nil when not a
--                   message)
--     op "id_bits"  (type = nil) the width of every message id changed
--     op "ids_listed" (type = nil) a messages list or message_bits given
--                   (new = true) or dropped (new = false): the fingerprint
--                   covers listed ids, so the wire changes with the same ids
--   every change has 'wire': whether the field's wire hash differs (false
--   for renames, defaults, new names of as many enum values, clamp, a float
--   bound that quantizes to the same float32 steps)
--   report.wire       true when the fingerprints differ
--   report:empty()    true when nothing at all differs
--   report:text(), tostring(report)   one line per item, e.g.
--     Entity: + armor int [0, 255]
--     Entity: ~ health int [0, 100] -> [0, 200]
local M = {}

local Report = {}
Report.__index = Report

-- a definitions file's text (a default) that no terminal acts on
local function quote(s) return require("bitwire.cliutil").quote(s) end

local function num(v)
  if math.type(v) == "float" then return string.format("%.14g", v) end
  return tostring(v)
end

local function list(t, q)
  local out = {}
  for i, v in ipairs(t) do out[i] = q and quote(v) or num(v) end
  return "{" .. table.concat(out, ", ") .. "}"
end

local same

-- Readable text of a program field (without its name); 'deftiers': the
-- default tiers of a relative delta, not shown.
local function fieldtext(f, deftiers)
  local k, s = f.kind
  if k == "struct" then s = f.type
  elseif k == "int" then s = string.format("int [%s, %s]", num(f.min), num(f.max))
  elseif k == "uint" or k == "quat" then s = string.format("%s %d bits", k, f.bits)
  elseif k == "angle" then s = string.format("angle %d bits %s", f.bits, f.unit)
  elseif k == "float" then
    s = string.format("float [%s, %s] res %s", num(f.fmin), num(f.fmax), num(f.res))
  elseif k == "enum" then s = "enum " .. list(f.values)
  elseif k == "string" then s = "string max " .. num(f.max)
  elseif k == "bytes" or k == "array" then
    s = k
    if k == "array" then s = s .. " of " .. fieldtext(f.of, deftiers) end
    if f.fixed then s = s .. " count " .. num(f.max)
    elseif (f.min or 0) ~= 0 then s = s .. string.format(" [%s, %s]", num(f.min), num(f.max))
    else s = s .. " max " .. num(f.max) end
  elseif k == "check" then s = string.format("check 0x%08x", f.magic)
  elseif k == "sparse" then
    s = string.format("sparse of %s max %s %s", fieldtext(f.of, deftiers),
      num(f.max), f.encoding)
    if #f.tiers > 0 then s = s .. " tiers " .. list(f.tiers) end
  elseif k == "tiered" then
    s = string.format("tiered %s [%s, %s]", list(f.tiers), num(f.min), num(f.max))
  else s = k end
  if f.clamp then s = s .. " clamp" end
  if f.relative then
    s = s .. " delta relative"
    if not same(f.tiers, deftiers) then s = s .. " tiers " .. list(f.tiers) end
  end
  if f.optional then s = s .. " optional" end
  if f.since ~= 0 then s = s .. " since " .. f.since end
  if f.removed then s = s .. " removed " .. f.removed end
  return s
end
M.fieldtext = fieldtext

function same(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then return a == b end
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- attributes of a program field that describe it, as a change names them;
-- 'range' is min and max (derived from bits for uint, from values for enum),
-- 'bits' is a parameter of uint, quat and angle only (elsewhere derived)
local ATTRS = { "kind", "type", "range", "bits", "fmin", "fmax", "res",
  "clamp", "fixed", "values", "magic", "encoding", "tiers", "relative",
  "period", "optional", "since", "removed", "of" }
local BITS = { uint = true, quat = true, angle = true }
local DERIVED = { uint = true, enum = true }

-- names of the attributes that differ between program fields 'a' and 'b'
local function wirediff(a, b, deftiers)
  local what = {}
  for _, key in ipairs(ATTRS) do
    local differ
    if key == "tiers" and a.relative ~= b.relative then
      differ = false   -- the tiers come and go with the delta mode
    elseif key == "range" then
      differ = not (DERIVED[a.kind] and DERIVED[b.kind])
        and (a.min ~= b.min or a.max ~= b.max)
    elseif key == "bits" then
      differ = (BITS[a.kind] or BITS[b.kind]) and a.bits ~= b.bits
    elseif key == "of" then
      local x, y = a.of, b.of
      differ = (x == nil) ~= (y == nil)
        or (x and (fieldtext(x, deftiers) ~= fieldtext(y, deftiers)
                   or x.hash ~= y.hash))
    else
      differ = not same(a[key], b[key])
    end
    if differ then
      what[#what + 1] = (key == "fmin" or key == "fmax") and key:sub(2) or key
    end
  end
  if #what == 0 and a.hash ~= b.hash then what[1] = "wire" end
  return what
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

-- the compiled program of a schema, or of a description (compiled here)
local function describe(x, which)
  local ok, p
  if type(x) == "table" then
    ok, p = pcall(function() return require("bitwire.schema").compile(x):program() end)
  else
    ok, p = pcall(function() return x:program() end)
  end
  if not ok or type(p) ~= "table" then
    error("bitwire.diff: " .. which .. " must be a schema or a description, got "
      .. tostring(x) .. (type(x) == "table" and ": " .. tostring(p) or ""), 3)
  end
  return p
end


-- Defaults alike as the values encode sends for a missing field: a NaN is
-- its own (not ~= itself), and -0.0 is not 0.0 to a float32 or float64.
local function samedefault(a, b)
  if math.type(a) == "float" and math.type(b) == "float" then
    return string.pack("<d", a) == string.pack("<d", b)
  end
  return a == b
end

local function difftype(report, name, old, new, dt)
  local changes = report.changes
  local okeys, obyname = keyed(old.fields)
  local nkeys, nbyname = keyed(new.fields)
  -- a field removed and one added at the same place, alike: a rename
  local renamed, renamedto = {}, {}
  for i, k in ipairs(okeys) do
    local nk = nkeys[i]
    if not nbyname[k] and nk and not obyname[nk]
        and obyname[k].hash == nbyname[nk].hash
        and fieldtext(obyname[k], dt) == fieldtext(nbyname[nk], dt) then
      renamed[k], renamedto[nk] = nk, k
    end
  end
  for _, k in ipairs(okeys) do
    if not nbyname[k] and not renamed[k] then
      local f = obyname[k]
      changes[#changes + 1] = { type = name, op = "remove", field = k,
        old = fieldtext(f, dt), old_field = f, wire = true }
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
        new = fieldtext(b, dt), new_field = b, wire = true }
    else
      local what = wirediff(a, b, dt)
      if #what > 0 then
        changes[#changes + 1] = { type = name, op = "change", field = k,
          old = fieldtext(a, dt), new = fieldtext(b, dt), what = what,
          old_field = a, new_field = b, wire = a.hash ~= b.hash }
      end
      if not samedefault(a.default, b.default) then
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

-- bitwire.diff(old, new) -> report
function M.diff(old, new)
  local op, np = describe(old, "old"), describe(new, "new")
  local report = setmetatable({ types_added = {}, types_removed = {},
    changes = {}, old_fingerprint = op.fingerprint,
    new_fingerprint = np.fingerprint }, Report)
  for _, t in ipairs(op.types) do
    if not np.byname[t.name] then report.types_removed[#report.types_removed + 1] = t.name end
  end
  for _, t in ipairs(np.types) do
    local o = op.byname[t.name]
    if not o then
      report.types_added[#report.types_added + 1] = t.name
    else
      difftype(report, t.name, o, t, np.relative_tiers)
      if o.message_id ~= t.message_id then
        report.changes[#report.changes + 1] = { type = t.name, op = "ids",
          old = o.message_id, new = t.message_id, wire = true }
      end
    end
  end
  if op.typebits ~= np.typebits then
    report.changes[#report.changes + 1] = { op = "id_bits", old = op.typebits,
      new = np.typebits, wire = true }
  end
  if op.explicit_ids ~= np.explicit_ids then
    report.changes[#report.changes + 1] = { op = "ids_listed",
      old = op.explicit_ids, new = np.explicit_ids, wire = true }
  end
  report.wire = op.fingerprint ~= np.fingerprint
  return report
end

-- Nothing differs: no change listed and the same fingerprint (a change of
-- the wire that no line names would still not be empty).
function Report:empty()
  return #self.types_added == 0 and #self.types_removed == 0
    and #self.changes == 0 and not self.wire
end

local function value(v)
  if type(v) == "string" then return quote(v) end
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
      l = string.format("%s: ~ message type id %s -> %s", c.type,
        c.old or "none", c.new or "none")
    elseif c.op == "id_bits" then
      l = string.format("~ message type ids take %d -> %d bits", c.old, c.new)
    elseif c.op == "ids_listed" then
      l = c.new and "~ message ids now listed (messages or message_bits)"
        or "~ message ids no longer listed (every type numbered by name)"
    end
    lines[#lines + 1] = l
  end
  return table.concat(lines, "\n")
end

Report.__tostring = Report.text

return M
