-- bitwire.gen.c(schema, opts): C code for a schema's types, from its
-- compiled program (s:program()), so it cannot drift from the driver.
-- Returns { header = "...", source = "...", name = NAME }: NAME.h declares a
-- struct per type and T_write / T_read / T_bits (and delta forms), NAME.c
-- defines them on top of the core (bw.h, bw_gen.h). The bits, the failure
-- codes, positions and field paths are the Lua driver's; WIRE.md, "Schemas".
local ctypes = require "bitwire.gen.ctypes"
local delta = require "bitwire.gen.c_delta"

local M = {}
local fmt, concat = string.format, table.concat
local ident, cuint = ctypes.ident, ctypes.uint

local bitlen = ctypes.bitlen

local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end

-- {===== the emitter: lines, indentation and the locals a function uses

local Emit = {}
Emit.__index = Emit

local function emitter(G)
  return setmetatable({ G = G, lines = {}, ind = "  ", locals = {},
                        order = {}, depth = 0 }, Emit)
end

-- Lines past 80 columns are split: "if (c) { a; return b; }" into a block,
-- "if (c) return x;" with the return on its own line.
function Emit:line(s, ...)
  local l, out = self.ind .. fmt(s, ...), self.lines
  if #l > 80 then
    local ind, head, body = l:match("^(%s*)(.-%b())%s+{ (.+) }$")
    if ind then
      out[#out + 1] = ind .. head .. " {"
      local rest = body
      while true do   -- statements end in "; " before the next one's word
        local i = rest:find("; %a")
        if not i then break end
        out[#out + 1] = ind .. "  " .. rest:sub(1, i)
        rest = rest:sub(i + 2)
      end
      out[#out + 1] = ind .. "  " .. rest
      out[#out + 1] = ind .. "}"
      return
    end
    local ind2, cond, ret = l:match("^(%s*)(if %b())%s+(return .+)$")
    if ind2 then
      out[#out + 1] = ind2 .. cond
      out[#out + 1] = ind2 .. "  " .. ret
      return
    end
  end
  out[#out + 1] = l
end

function Emit:open(s, ...)
  self:line(s .. " {", ...)
  self.ind = self.ind .. "  "
end

function Emit:close(s)
  self.ind = self.ind:sub(3)
  self:line("}" .. (s or ""))
end

-- Declare local 'name' of C type 'ctype' (once) and return its name.
function Emit:var(name, ctype)
  if not self.locals[name] then
    self.locals[name] = ctype
    self.order[#self.order + 1] = name
  end
  return name
end

function Emit:body()
  local decl = {}
  for _, n in ipairs(self.order) do
    decl[#decl + 1] = fmt("  %s %s;\n", self.locals[n], n)
  end
  return concat(decl) .. concat(self.lines, "\n") .. "\n"
end

-- }=====

-- Where a value lives: 'expr' is the value; fields also have 'base' and
-- 'name' for their siblings (name_count, name_present, has_name).
local function fieldloc(base, name)
  return { expr = base .. name, base = base, name = name }
end

local function count(loc) return loc.base .. loc.name .. "_count" end
local function present(loc) return loc.base .. loc.name .. "_present" end

-- The name of element 'e''s constants and types (as ctypes names them).
local function elemowner(e, owner)
  return ctypes.compound(e) and owner .. "_item" or owner
end

-- The location of element 'i' of the array at 'loc' (element field 'e').
local function elemloc(loc, e, i)
  local x = fmt("%s[%s]", loc.expr, i)
  if ctypes.compound(e) then return fieldloc(x .. ".", "v") end
  return { expr = x }
end

-- {===== per-field constants: quantizers, tiers, sparse specs

function M.qconst(G, f, owner)
  local name = "q_" .. owner
  if not G.consts[name] then
    G.consts[name] = G.N:ownclaim(name, owner)
    G.constlines[#G.constlines + 1] = fmt(
      "static const bw_QFloat %s = { %s, %s, %s, %d };", name,
      ctypes.float(f.qmin), ctypes.float(f.qdelta), cuint(f.qmax),
      bitlen(f.qmax))
  end
  return name
end

-- 'prefix' tells a sparse field's index tiers ("sptiers") from its tiered
-- elements' value tiers ("tiers"): both have the field as owner.
local function tiersconst(G, tiers, owner, prefix)
  local name = (prefix or "tiers") .. "_" .. owner
  if not G.consts[name] then
    G.consts[name] = G.N:ownclaim(name, owner)
    G.constlines[#G.constlines + 1] = fmt("static const uint8_t %s[] = { %s };",
      name, concat(tiers, ", "))
  end
  return name
end

local ENC = { mask = "BW_SPMASK", index = "BW_SPINDEX",
              relative = "BW_SPRELATIVE", auto = "BW_SPAUTO" }

-- The bw_GenSparse of sparse field 'f'; 'slotmin' is the least a slot
-- costs (its value, or against a baseline its presence bit, then 'kind'
-- "spd" tells the two apart; a suffix could meet another field's name).
function M.sparseconst(G, f, owner, slotmin, kind)
  local name = (kind or "sp") .. "_" .. owner
  if not G.consts[name] then
    G.consts[name] = G.N:ownclaim(name, owner)
    local tiers = f.tiers and #f.tiers > 0 and tiersconst(G, f.tiers, owner, "sptiers")
    G.constlines[#G.constlines + 1] = fmt(
      "static const bw_GenSparse %s = { %s, %d, %s, %s, %d, %s };", name,
      cuint(f.max), f.bits, ENC[f.encoding], tiers or "NULL",
      tiers and #f.tiers or 0, cuint(slotmin))
  end
  return name
end

-- The bw_Field of a relative float, angle or quat (delta = "relative"):
-- what the core's bw_fielddiff and quaternion differences read of it.
function M.relconst(G, f, owner)
  local name = "rel_" .. owner
  if not G.consts[name] then
    G.consts[name] = G.N:ownclaim(name, owner)
    local what = fmt(".nbits = %d, .dmax = %s", f.bits, ctypes.double(f.period or 0))
    if f.kind ~= "angle" then
      what = fmt(".q = { %s, %s, %s, %d }", ctypes.float(f.qmin),
        ctypes.float(f.qdelta), cuint(f.qmax), bitlen(f.qmax))
    end
    G.constlines[#G.constlines + 1] = fmt(
      "static const bw_Field %s = { .kind = BW_K%s,\n  %s,\n"
      .. "  .ntiers = %d, .tierbits = { %s } };", name, f.kind:upper(), what,
      #f.tiers, concat(f.tiers, ", "))
  end
  return name
end

-- The float range encode accepts: the declared one widened to the values
-- decode gives at both ends (as the driver does), unless 'clamp'.
local function floatrange(f)
  return math.min(f.fmin, f.qmin), math.max(f.fmax, f32(f.qmin + f.qdelta))
end

-- Refuse float 'x' outside that range.
function M.floatcheck(E, f, x)
  if f.clamp then return end
  local lo, hi = floatrange(f)
  E:line("if (!(%s >= %s && %s <= %s)) return bw_genrefuse(w, BW_ERANGE);",
    x, ctypes.double(lo), x, ctypes.double(hi))
end

-- The value of float or angle 'f' from its code in local 'u'.
function M.numvalue(G, f, owner)
  if f.kind == "angle" then
    return fmt("bw_angledecode((uint32_t)u, %s, %d)", ctypes.double(f.period), f.bits)
  end
  return fmt("bw_qfloatdecode(&%s, (uint32_t)u)", M.qconst(G, f, owner))
end

-- }=====

-- {===== write and bits

-- Refuse the value (BW_ERANGE) when C condition 'bad' holds.
local function refuse(E, bad)
  if bad then E:line("if (%s) return bw_genrefuse(w, BW_ERANGE);", bad) end
end

-- Refuse count 'n' of array or bytes field 'f' out of [min, max].
local function countcheck(E, n, f)
  refuse(E, ctypes.countbad(n, f.min, f.max))
end

local function offset(x, min)
  if min == 0 then return fmt("(uint64_t)%s", x) end
  return fmt("(uint64_t)%s - %s", x, cuint(min))
end

local writevalue

-- Write (mode "write") or count (mode "bits", into local 'pos') the
-- value of field 'f' at 'loc'; 'owner' names its constants.
function writevalue(E, mode, f, loc, owner)
  local G, k, x = E.G, f.kind, loc.expr
  local W = mode == "write"
  if k == "int" or k == "tiered" then
    local bad
    x, bad = ctypes.intsend(f, x)
    if W then refuse(E, bad) end
    local span = cuint(f.max - f.min)
    if k == "int" then
      if W then E:line("bw_writebits(w, %s, %d);", offset(x, f.min), f.bits)
      else E:line("pos += %d;", f.bits) end
    else
      local t = tiersconst(G, f.tiers, owner)
      if W then
        E:line("bw_writetiered(w, %s, 0, %s, %s, %d);", offset(x, f.min), span, t, #f.tiers)
      else
        E:line("pos += bw_tieredbits(%s, 0, %s, %s, %d);", offset(x, f.min), span, t, #f.tiers)
      end
    end
  elseif k == "uint" then
    if W then
      refuse(E, select(2, ctypes.intsend(f, x)))
      E:line("bw_writebits(w, (uint64_t)%s, %d);", x, f.bits)
    else E:line("pos += %d;", f.bits) end
  elseif k == "bool" then
    if W then E:line("bw_writebits(w, %s ? 1 : 0, 1);", x) else E:line("pos += 1;") end
  elseif k == "enum" then
    if W then
      refuse(E, select(2, ctypes.intsend(f, x)))
      E:line("bw_writebits(w, (uint64_t)%s, %d);", x, f.bits)
    else E:line("pos += %d;", f.bits) end
  elseif k == "float" then
    local q, nb = M.qconst(G, f, owner), bitlen(f.qmax)
    if W then
      M.floatcheck(E, f, x)
      E:line("bw_writebits(w, bw_qfloatencode(&%s, %s), %d);", q, x, nb)
    else E:line("pos += %d;", nb) end
  elseif k == "angle" then
    if W then
      E:line("if (!bw_genwriteangle(w, %s, %s, %d)) return false;", x,
        ctypes.double(f.period), f.bits)
    else E:line("pos += %d;", f.bits) end
  elseif k == "float32" then
    if W then E:line("bw_writefloat(w, %s);", x) else E:line("pos += 32;") end
  elseif k == "float64" then
    if W then E:line("bw_writedouble(w, %s);", x) else E:line("pos += 64;") end
  elseif k == "string" then
    if W then
      E:line("if (!bw_genwritestring(w, %s, %d)) return false;", x, f.max)
    else
      E:line("pos = BW_GENALIGN(pos + %d) + 8 * bw_genstrlen(%s, %d);", f.bits, x, f.max)
    end
  elseif k == "bytes" then
    if f.fixed then
      if W then E:line("bw_writebytes(w, %s, %d);", x, f.max)
      else E:line("pos = BW_GENALIGN(pos) + %d;", 8 * f.max) end
    else
      local n = count(loc)
      if W then
        countcheck(E, n, f)
        E:line("bw_writebits(w, %s, %d);", offset(n, f.min), f.bits)
        E:line("bw_writebytes(w, %s, %s);", x, n)
      else
        E:line("pos = BW_GENALIGN(pos + %d) + 8 * (uint64_t)%s;", f.bits, n)
      end
    end
  elseif k == "quat" then
    local q = M.qconst(G, f, owner)
    if W then E:line("if (!bw_genwritequat(w, &%s, %s)) return false;", q, x)
    else E:line("pos += %d;", 2 + 3 * f.bits) end
  elseif k == "struct" then
    local t = G.N:typename(f.type)
    if W then E:line("if (!write_%s(w, &%s)) return false;", t, x)
    else E:line("pos = bits_%s(&%s, pos);", t, x) end
  elseif k == "array" then
    local n = tostring(f.max)
    if not f.fixed then
      n = count(loc)
      if W then
        countcheck(E, n, f)
        E:line("bw_writebits(w, %s, %d);", offset(n, f.min), f.bits)
      else
        E:line("pos += %d;", f.bits)
        n = ctypes.countcap(n, f.max)
      end
    end
    if f.max == 0 then return end   -- no elements (and no 'i < 0' to warn of)
    local i = E:var("i" .. E.depth, "size_t")
    E:open("for (%s = 0; %s < %s; %s++)", i, i, n, i)
    E.depth = E.depth + 1
    writevalue(E, mode, f.of, elemloc(loc, f.of, i), elemowner(f.of, owner))
    E.depth = E.depth - 1
    E:close()
  elseif k == "sparse" then
    local sp = M.sparseconst(G, f, owner, f.of.minbits)
    local st = E:var("slots" .. E.depth, "bw_GenSlots")
    local i = E:var("i" .. E.depth, "size_t")
    local wr = W and "w" or "NULL"
    local acc = W and "" or "pos += "
    E:line("%sbw_genslotsbegin(%s, &%s, %s, &%s);", acc, wr, sp, present(loc), st)
    E:open("for (%s = 0; %s < %d; %s++)", i, i, f.max, i)
    E:line("if (!bw_genhas(%s, %s)) continue;", present(loc), i)
    E:line("%sbw_genslot(%s, &%s, &%s, %s + 1);", acc, wr, sp, st, i)
    E.depth = E.depth + 1
    writevalue(E, mode, f.of, elemloc(loc, f.of, i), elemowner(f.of, owner))
    E.depth = E.depth - 1
    E:close()
    E:line("%sbw_genslotsend(%s, &%s, &%s);", acc, wr, sp, st)
  elseif k == "align" then
    if W then E:line("bw_writealign(w);") else E:line("pos = BW_GENALIGN(pos);") end
  elseif k == "check" then
    if W then E:line("bw_writecheck(w, %s);", cuint(f.magic))
    else E:line("pos = BW_GENALIGN(pos) + 32;") end
  else
    error(fmt("bitwire.gen.c: field kind '%s' is not supported", k), 0)
  end
end

-- A field of a struct: its presence bit when optional, then its value.
local function writefield(E, mode, f, owner)
  local name = ident(f.name or "")
  local loc = fieldloc("v->", name)
  E:line("/* %s%s */", f.name and (ctypes.comment(f.name) .. ": ") or "", ctypes.wire(f))
  if f.optional then
    local has = "v->has_" .. name
    if mode == "write" then E:line("bw_writebits(w, %s ? 1 : 0, 1);", has)
    else E:line("pos += 1;") end
    E:open("if (%s)", has)
    writevalue(E, mode, f, loc, owner)
    E:close()
  else
    writevalue(E, mode, f, loc, owner)
  end
end

-- }=====

-- {===== read

-- The statement that leaves a failed read: the path segments of 'segs'
-- (outermost first) are prepended innermost first.
local function failstmt(segs)
  if #segs == 0 then return "return false;" end
  local parts = {}
  for j = #segs, 2, -1 do
    local s = segs[j]
    parts[#parts + 1] = s.index and fmt("bw_genindex(err, %s + 1);", s.index)
      or fmt("bw_genpath(err, %s);", ctypes.cstring(s.name))
  end
  local s = segs[1]
  parts[#parts + 1] = "return " .. (s.index and fmt("bw_genindex(err, %s + 1);", s.index)
    or fmt("bw_genpath(err, %s);", ctypes.cstring(s.name)))
  if #parts == 1 then return parts[1] end
  return "{ " .. concat(parts, " ") .. " }"
end

local readvalue

local function toint(f, u, ctype)
  if f.min == 0 then return fmt("(%s)%s", ctype, u) end
  if f.min > 0 then return fmt("(%s)(%s + %s)", ctype, u, cuint(f.min)) end
  return fmt("(%s)bw_gensigned(%s + %s)", ctype, u, cuint(f.min))
end

function readvalue(E, f, loc, owner, segs)
  local G, k, x = E.G, f.kind, loc.expr
  local FAIL = failstmt(segs)
  local function u() return E:var("u", "uint64_t") end
  if k == "int" or k == "enum" then
    E:line("if (!bw_genspan(r, %d, %s, &%s)) %s", f.bits, cuint(f.max - f.min), u(), FAIL)
    E:line("%s = %s;", x, toint(f, "u", G.N:scalartype(f, owner)))
  elseif k == "tiered" then
    E:line("%s = bw_readtiered(r, 0, %s, %s, %d);", u(), cuint(f.max - f.min),
      tiersconst(G, f.tiers, owner), #f.tiers)
    E:line("if (r->status != BW_OK) %s", FAIL)
    E:line("%s = %s;", x, toint(f, "u", G.N:scalartype(f, owner)))
  elseif k == "uint" then
    E:line("%s = (%s)bw_readbits(r, %d);", x, G.N:scalartype(f, owner), f.bits)
    E:line("if (r->status != BW_OK) %s", FAIL)
  elseif k == "bool" then
    E:line("%s = bw_readbits(r, 1) != 0;", x)
    E:line("if (r->status != BW_OK) %s", FAIL)
  elseif k == "float" then
    E:line("if (!bw_genspan(r, %d, %s, &%s)) %s", bitlen(f.qmax), cuint(f.qmax), u(), FAIL)
    E:line("%s = %s;", x, M.numvalue(G, f, owner))
  elseif k == "angle" then
    E:line("%s = bw_angledecode((uint32_t)bw_readbits(r, %d), %s, %d);", x, f.bits,
      ctypes.double(f.period), f.bits)
    E:line("if (r->status != BW_OK) %s", FAIL)
  elseif k == "float32" or k == "float64" then
    E:line("%s = bw_read%s(r);", x, k == "float32" and "float" or "double")
    E:line("if (r->status != BW_OK) %s", FAIL)
  elseif k == "string" then
    E:line("if (!bw_genreadstring(r, %s, %d)) %s", x, f.max, FAIL)
  elseif k == "bytes" then
    local n = f.fixed and tostring(f.max) or count(loc)
    E:line("if (!bw_gencount(r, %d, %s, %s, 0, &%s)) %s", f.bits, cuint(f.min),
      cuint(f.max), u(), FAIL)
    if not f.fixed then E:line("%s = (%s)u;", n, (ctypes.inttype(0, f.max))) end
    E:line("if (!bw_genreadbytes(r, %s, (size_t)u)) %s", x, FAIL)
  elseif k == "quat" then
    E:line("if (!bw_genreadquat(r, &%s, %s)) %s", M.qconst(G, f, owner), x, FAIL)
  elseif k == "struct" then
    E:line("if (!read_%s(r, &%s, err)) %s", G.N:typename(f.type), x, FAIL)
  elseif k == "array" then
    local n = f.fixed and tostring(f.max) or count(loc)
    E:line("if (!bw_gencount(r, %d, %s, %s, %s, &%s)) %s", f.bits, cuint(f.min),
      cuint(f.max), cuint(f.of.minbits), u(), FAIL)
    if not f.fixed then E:line("%s = (%s)u;", n, (ctypes.inttype(0, f.max))) end
    if f.max == 0 then return end   -- as in writevalue
    local i = E:var("i" .. E.depth, "size_t")
    E:open("for (%s = 0; %s < %s; %s++)", i, i, n, i)
    E.depth = E.depth + 1
    local inner = { table.unpack(segs) }
    inner[#inner + 1] = { index = i }
    readvalue(E, f.of, elemloc(loc, f.of, i), elemowner(f.of, owner), inner)
    E.depth = E.depth - 1
    E:close()
  elseif k == "sparse" then
    local sp = M.sparseconst(G, f, owner, f.of.minbits)
    local st = E:var("slots" .. E.depth, "bw_GenSlots")
    local i = E:var("i" .. E.depth, "size_t")
    local more = E:var("more", "int")
    local slot = E:var("slot", "uint64_t")
    E:line("if (!bw_genreadslotsbegin(r, &%s, &%s)) %s", sp, st, FAIL)
    E:line("memset(%s, 0, sizeof(%s));", present(loc), present(loc))
    E:open("while ((%s = bw_genreadslot(r, &%s, &%s, &%s)) > 0)", more, sp, st, slot)
    E:line("%s = (size_t)%s - 1;", i, slot)
    E:line("%s[%s >> 3] |= (uint8_t)(1u << (%s & 7));", present(loc), i, i)
    E.depth = E.depth + 1
    local inner = { table.unpack(segs) }
    inner[#inner + 1] = { index = i }
    readvalue(E, f.of, elemloc(loc, f.of, i), elemowner(f.of, owner), inner)
    E.depth = E.depth - 1
    E:close()
    E:line("if (%s < 0) %s", more, FAIL)
  elseif k == "align" then
    E:line("bw_readalign(r);")
    E:line("if (r->status != BW_OK) %s", FAIL)
  elseif k == "check" then
    E:line("bw_readcheck(r, %s);", cuint(f.magic))
    E:line("if (r->status != BW_OK) %s", FAIL)
  else
    error(fmt("bitwire.gen.c: field kind '%s' is not supported", k), 0)
  end
end

local function readfield(E, f, owner)
  local name = ident(f.name or "")
  local loc = fieldloc("v->", name)
  local segs = f.name and { { name = f.name } } or {}
  E:line("/* %s%s */", f.name and (ctypes.comment(f.name) .. ": ") or "", ctypes.wire(f))
  if f.optional then
    local has = "v->has_" .. name
    E:line("%s = bw_readbits(r, 1) != 0;", has)
    E:line("if (r->status != BW_OK) %s", failstmt(segs))
    E:open("if (%s)", has)
    readvalue(E, f, loc, owner, segs)
    E:close()
  else
    readvalue(E, f, loc, owner, segs)
  end
end

-- }=====

-- {===== files

local function typefuncs(G, t, out)
  local T = G.N:typename(t.name)
  local fields = ctypes.fields(G.program, t)
  local function owner(f) return G.N:owner(t, f) end
  -- write
  local E = emitter(G)
  for _, f in ipairs(fields) do writefield(E, "write", f, owner(f)) end
  -- (void): a record of no fields, or only align and check, uses none
  out[#out + 1] = fmt("static bool write_%s (bw_Writer *w, const %s *v) {\n%s"
    .. "  (void)v;\n  return w->status == BW_OK;\n}\n", T, T, E:body())
  -- bits
  E = emitter(G)
  for _, f in ipairs(fields) do writefield(E, "bits", f, owner(f)) end
  out[#out + 1] = fmt("static uint64_t bits_%s (const %s *v, uint64_t pos) {\n%s"
    .. "  (void)v;\n  return pos;\n}\n", T, T, E:body())
  -- read
  E = emitter(G)
  for _, f in ipairs(fields) do readfield(E, f, owner(f)) end
  out[#out + 1] = fmt("static bool read_%s (bw_Reader *r, %s *v, bw_Error *err) {\n%s"
    .. "  (void)r; (void)v; (void)err;\n  return true;\n}\n", T, T, E:body())
end

local function protos(G, t)
  local T = G.N:typename(t.name)
  local p = {}
  local id = ctypes.msgid(G.program, t)
  p[#p + 1] = fmt("/* %s: %s, %s bits */", T,
    id and fmt("message id %d", id) or "not a message",
    t.maxbits and fmt("%d..%d", t.minbits, t.maxbits) or fmt(">= %d", t.minbits))
  if t.maxbits then p[#p + 1] = fmt("#define %s_MAXBITS %s", T, cuint(t.maxbits)) end
  p[#p + 1] = fmt("#define %s_MINBITS %s", T, cuint(t.minbits))
  if id then p[#p + 1] = fmt("#define %s_ID %d", T, id) end
  p[#p + 1] = fmt("/* Write 'v'; false when a value does not fit its field (BW_ERANGE,\n"
    .. "** BW_EUTF8) or the writer is full: w->status says which. */")
  p[#p + 1] = fmt("bool %s_write (bw_Writer *w, const %s *v);", T, T)
  p[#p + 1] = fmt("/* Read into 'v'; false on bad bytes (r->status, r->errpos say why).\n"
    .. "** %s_read_err also fills 'err' (when not NULL) with the code, bit\n"
    .. "** position and field path the Lua driver reports. Absent optionals,\n"
    .. "** unset sparse slots and array entries past the count keep what they\n"
    .. "** held. */", T)
  p[#p + 1] = fmt("bool %s_read (bw_Reader *r, %s *v);", T, T)
  p[#p + 1] = fmt("bool %s_read_err (bw_Reader *r, %s *v, bw_Error *err);", T, T)
  p[#p + 1] = fmt("/* Bits %s_write spends on 'v' (a valid value) from bit 0. */", T)
  p[#p + 1] = fmt("size_t %s_bits (const %s *v);", T, T)
  if id then
    p[#p + 1] = fmt("/* The message: %s_ID in %s_TYPEBITS bits, then 'v'. */", T, G.NAME)
    p[#p + 1] = fmt("bool %s_write_message (bw_Writer *w, const %s *v);", T, T)
  end
  delta.protos(G, t, p)
  return concat(p, "\n") .. "\n"
end

local function publicfuncs(G, t, out)
  local T = G.N:typename(t.name)
  out[#out + 1] = fmt([[
bool %s_write (bw_Writer *w, const %s *v) {
  return write_%s(w, v);
}

bool %s_read (bw_Reader *r, %s *v) {
  bw_Error err;
  err.path[0] = '\0';
  return read_%s(r, v, &err);
}

bool %s_read_err (bw_Reader *r, %s *v, bw_Error *err) {
  bw_Error scratch;
  if (err == NULL) err = &scratch;
  err->path[0] = '\0';
  if (read_%s(r, v, err)) return true;
  return bw_generror(r, err);
}

size_t %s_bits (const %s *v) {
  return (size_t)bits_%s(v, 0);
}
]], T, T, T, T, T, T, T, T, T, T, T, T)
  if ctypes.msgid(G.program, t) then
    out[#out + 1] = fmt([[
bool %s_write_message (bw_Writer *w, const %s *v) {
  bw_writebits(w, %s_ID, %s_TYPEBITS);
  return write_%s(w, v);
}
]], T, T, T, G.NAME, T)
  end
end

-- The file-scope names made of each type's C name, and the parameter names
-- of the functions that take its struct: no type may be called those.
local PERTYPE = { "%s_write", "%s_read", "%s_read_err", "%s_bits", "%s_MAXBITS",
  "%s_MINBITS", "%s_ID", "%s_write_message", "%s_equal", "%s_write_delta",
  "%s_read_delta", "%s_read_delta_err", "write_%s", "bits_%s", "read_%s", "eq_%s",
  "write_delta_%s", "read_delta_%s", "any_write_%s", "any_read_%s", "any_bits_%s",
  "any_write_delta_%s", "any_read_delta_%s" }
local PARAMS = { "w", "r", "v", "a", "b", "base", "err", "pos" }
-- Their locals, which -Wshadow would report over a type of that name; the
-- loop locals are numbered by depth, below the core's nesting limit.
local LOCALS = { "u", "more", "slot", "scratch", "start", "id", "i", "changed" }
for d = 0, 32 do
  for _, l in ipairs { "i%d", "n%d", "slots%d", "changed_i%d" } do LOCALS[#LOCALS + 1] = fmt(l, d) end
end

-- bitwire.gen.c(schema, opts): opts.name (default "messages") names the
-- files and the schema-wide constants, opts.prefix goes before type names,
-- opts.version picks the version spoken (default: the current one).
local OPTIONS = { name = true, prefix = true, version = true }

function M.generate(schema, opts)
  opts = ctypes.checkopts(opts, OPTIONS, "bitwire.gen.c")
  local program = ctypes.program(schema, opts.version)
  local name = opts.name or "messages"
  local G = { program = program, name = name, NAME = ident(name):upper(),
              id = ident(name),
              N = ctypes.new(program, opts.prefix), consts = {},
              constlines = {} }
  local NAME = G.NAME
  for _, p in ipairs(PARAMS) do G.N.claim(p, "a parameter of the generated functions") end
  for _, l in ipairs(LOCALS) do G.N.claim(l, "a local of the generated functions") end
  for _, n in ipairs { "%s_read_id", "%s_Type", "%s_types", "%s_message_type" } do
    G.N.claim(fmt(n, G.id), fmt("a name made of --name '%s'", name))
  end
  for _, n in ipairs { "%s_FINGERPRINT", "%s_FINGERPRINT64", "%s_VERSION", "%s_TYPEBITS",
                       "%s_NMESSAGES", "%s_NTYPES", "%s_H" } do
    G.N.claim(fmt(n, NAME), fmt("a name made of --name '%s'", name))
  end
  for _, t in ipairs(program.types) do
    for _, n in ipairs(PERTYPE) do
      G.N.claim(fmt(n, G.N:typename(t.name)), fmt("type '%s'", t.name))
    end
  end
  local h = {}
  h[#h + 1] = fmt([[
/*
** %s.h - generated by `bitwire gen c` from a bitwire schema; do not edit.
** Schema fingerprint %s, version %d. Wire format: WIRE.md, "Schemas".
*/
#ifndef %s_H
#define %s_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bw.h"

#ifdef __cplusplus
extern "C" {
#endif

#define %s_FINGERPRINT "%s"
#define %s_FINGERPRINT64 UINT64_C(0x%s)
#define %s_VERSION %d
#define %s_TYPEBITS %d  /* width of a message's id */
#define %s_NMESSAGES %d
#define %s_NTYPES %d
]], name, program.fingerprint, program.version, NAME, NAME, NAME,
    program.fingerprint, NAME, program.fingerprint, NAME, program.version,
    NAME, program.typebits, NAME, ctypes.nmessages(program), NAME, #program.types)
  h[#h + 1] = G.N:declarations()
  for _, t in ipairs(program.types) do h[#h + 1] = protos(G, t) end
  h[#h + 1] = fmt([[
/* A message's id (the T_ID of its type); an id past the last message
** fails with BW_ETAG. */
bool %s_read_id (bw_Reader *r, unsigned *id, bw_Error *err);

/* Every type by id, for code that dispatches on a message's type. */
typedef struct %s_Type {
  const char *name;
  size_t size;    /* sizeof the struct */
  bool (*write) (bw_Writer *w, const void *v);
  bool (*read) (bw_Reader *r, void *v, bw_Error *err);
  size_t (*bits) (const void *v);
  bool (*write_delta) (bw_Writer *w, const void *v, const void *base);
  bool (*read_delta) (bw_Reader *r, void *v, const void *base, bw_Error *err);
} %s_Type;
extern const %s_Type %s_types[%s_NTYPES];
/* The index in %s_types of each message id's type. */
extern const unsigned %s_message_type[%s_NMESSAGES];

#ifdef __cplusplus
}
#endif

#endif
]], G.id, G.id, G.id, G.id, G.id, NAME, G.id, G.id, NAME)
  local body = {}
  for _, t in ipairs(ctypes.order(program)) do
    local decl = G.N:typename(t.name)
    body[#body + 1] = fmt("static bool write_%s (bw_Writer *w, const %s *v);\n"
      .. "static uint64_t bits_%s (const %s *v, uint64_t pos);\n"
      .. "static bool read_%s (bw_Reader *r, %s *v, bw_Error *err);",
      decl, decl, decl, decl, decl, decl)
  end
  body[#body + 1] = ""
  for _, t in ipairs(ctypes.order(program)) do typefuncs(G, t, body) end
  G.emitter, G.fieldloc, G.elem, G.c = emitter, fieldloc, elemloc, M
  G.writevalue, G.readvalue, G.failstmt = writevalue, readvalue, failstmt
  delta.all(G, body)
  for _, t in ipairs(program.types) do publicfuncs(G, t, body) end
  local tab, wrap, msgtype = {}, {}, {}
  for _, t in ipairs(program.types) do
    local id = ctypes.msgid(program, t)
    if id then msgtype[id + 1] = tostring(t.id) end
  end
  for _, t in ipairs(program.types) do
    local T = G.N:typename(t.name)
    wrap[#wrap + 1] = fmt([[
static bool any_write_%s (bw_Writer *w, const void *v) {
  return %s_write(w, (const %s *)v);
}
static bool any_read_%s (bw_Reader *r, void *v, bw_Error *err) {
  return %s_read_err(r, (%s *)v, err);
}
static size_t any_bits_%s (const void *v) {
  return %s_bits((const %s *)v);
}
static bool any_write_delta_%s (bw_Writer *w, const void *v, const void *base) {
  return %s_write_delta(w, (const %s *)v, (const %s *)base);
}
static bool any_read_delta_%s (bw_Reader *r, void *v, const void *base,
                               bw_Error *err) {
  return %s_read_delta_err(r, (%s *)v, (const %s *)base, err);
}
]], T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, T)
    tab[#tab + 1] = fmt("  { %s, sizeof(%s), any_write_%s, any_read_%s, any_bits_%s,\n"
      .. "    any_write_delta_%s, any_read_delta_%s }", ctypes.cstring(t.name), T, T, T, T, T, T)
  end
  body[#body + 1] = concat(wrap, "\n")
  body[#body + 1] = fmt([[
bool %s_read_id (bw_Reader *r, unsigned *id, bw_Error *err) {
  bw_Error scratch;
  uint64_t start = r->pos, u = bw_readbits(r, %s_TYPEBITS);
  if (err == NULL) err = &scratch;
  err->path[0] = '\0';
  if (r->status == BW_OK && u >= %s_NMESSAGES) bw_genfail(r, BW_ETAG, start);
  if (r->status != BW_OK) return bw_generror(r, err);
  *id = (unsigned)u;
  return true;
}

const %s_Type %s_types[%s_NTYPES] = {
%s
};

const unsigned %s_message_type[%s_NMESSAGES] = { %s };
]], G.id, NAME, NAME, G.id, G.id, NAME, concat(tab, ",\n"), G.id, NAME, concat(msgtype, ", "))
  local src = fmt([[
/*
** %s.c - generated by `bitwire gen c` from a bitwire schema; do not edit.
*/
#include <string.h>

#include "bw_gen.h"
#include "%s.h"

%s

%s]], name, name, concat(G.constlines, "\n"), concat(body, "\n"))
  return { name = name, header = concat(h, "\n"), source = src }
end

setmetatable(M, { __call = function(_, ...) return M.generate(...) end })

return M
