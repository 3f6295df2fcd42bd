-- Delta forms of the generated C: T_write_delta(w, v, base) and
-- T_read_delta(r, v, base), the driver's delta wire (WIRE.md, "Delta
-- against a baseline"): per field on the wire a changed bit, then only what
-- changed; a record whose baseline holds one is sent as a delta again, a
-- sparse array as the slots that differ, a relative number as a difference
-- (the core's, bw_gen.h). Equality is on the wire: quantized fields compare
-- their quantized integers.
local ctypes = require "bitwire.gen.ctypes"

local M = {}
local fmt, concat = string.format, table.concat
local ident = ctypes.ident

local function elemowner(e, owner)
  return ctypes.compound(e) and owner .. "_item" or owner
end

-- {===== equality on the wire: an expression, or statements for loops

local eqexpr

-- Statements that 'return false' from an eq function when the values of
-- field 'f' at 'a' and 'b' (locations as in c.lua) differ.
local function eqstmts(G, out, ind, f, a, b, owner, depth)
  local k = f.kind
  local add = function(s, ...) out[#out + 1] = ind .. fmt(s, ...) end
  if k == "array" then
    local n = tostring(f.max)
    if not f.fixed then
      n = a.base .. a.name .. "_count"
      add("if (%s != %s%s_count) return false;", n, b.base, b.name)
      n = ctypes.countcap(n, f.max)
    end
    if f.max == 0 then return end   -- no elements (and no 'i < 0' to warn of)
    local i = "i" .. depth
    add("for (size_t %s = 0; %s < %s; %s++) {", i, i, n, i)
    local e = f.of
    local ea, eb = G.elem(a, e, i), G.elem(b, e, i)
    eqstmts(G, out, ind .. "  ", e, ea, eb, elemowner(e, owner), depth + 1)
    add("}")
  elseif k == "sparse" then
    local i = "i" .. depth
    local pa, pb = a.base .. a.name .. "_present", b.base .. b.name .. "_present"
    add("for (size_t %s = 0; %s < %d; %s++) {", i, i, f.max, i)
    add("  if (bw_genhas(%s, %s) != bw_genhas(%s, %s)) return false;", pa, i, pb, i)
    add("  if (!bw_genhas(%s, %s)) continue;", pa, i)
    local e = f.of
    eqstmts(G, out, ind .. "  ", e, G.elem(a, e, i), G.elem(b, e, i),
      elemowner(e, owner), depth + 1)
    add("}")
  else
    add("if (!(%s)) return false;", eqexpr(G, f, a, b, owner))
  end
end

-- An expression true when the scalar-like values at 'a' and 'b' are equal.
function eqexpr(G, f, a, b, owner)
  local k, x, y = f.kind, a.expr, b.expr
  if k == "float" then
    local q = G.c.qconst(G, f, owner)
    return fmt("bw_qfloatencode(&%s, %s) == bw_qfloatencode(&%s, %s)", q, x, q, y)
  elseif k == "angle" then   -- the same code on the wire
    local p = ctypes.double(f.period)
    return fmt("bw_angleencode(%s, %s, %d) == bw_angleencode(%s, %s, %d)", x, p,
      f.bits, y, p, f.bits)
  elseif k == "float32" or k == "float64" then   -- bits: -0.0, NaN payloads
    return fmt("memcmp(&%s, &%s, sizeof(%s)) == 0", x, y, x)
  elseif k == "bool" then
    return fmt("!%s == !%s", x, y)
  elseif k == "string" then
    return fmt("bw_genstreq(%s, %s, %d)", x, y, f.max)
  elseif k == "bytes" then
    if f.fixed then return fmt("memcmp(%s, %s, %d) == 0", x, y, f.max) end
    local n = a.base .. a.name .. "_count"
    local over = ctypes.countbad(n, 0, f.max)   -- nil where the C type stops at max
    return fmt("%s == %s%s_count && %smemcmp(%s, %s, %s) == 0", n,
      b.base, b.name, over and "!(" .. over .. ") && " or "", x, y, n)
  elseif k == "quat" then
    return fmt("bw_genquateq(&%s, %s, %s)", G.c.qconst(G, f, owner), x, y)
  elseif k == "struct" then
    return fmt("eq_%s(&%s, &%s)", G.N:typename(f.type), x, y)
  elseif k == "int" then   -- clamped values compare as sent
    return fmt("%s == %s", (ctypes.intsend(f, x)), (ctypes.intsend(f, y)))
  end
  return fmt("%s == %s", x, y)   -- uint, enum, tiered
end

-- }=====

-- A pointer to the struct that holds a location's members ("v->" -> "v",
-- "v->grid[i0]." -> "&v->grid[i0]").
local function holder(base)
  if base:sub(-2) == "->" then return base:sub(1, -3) end
  return "&" .. base:sub(1, -2)
end

-- The name of a helper comparing element/slot i of the array or sparse
-- field 'f' (member 'name' of struct type 'C'), registered once.
local function samefn(G, f, owner, C, name)
  if not G.same[owner] then
    G.same[owner] = G.N:ownclaim("same_" .. owner, owner)
    G.samelist[#G.samelist + 1] = { f = f, owner = owner, C = C, name = name }
  end
  return "same_" .. owner
end

local writedelta, readdelta

-- An array against its baseline's, element by element (the driver's
-- newer form): the count as usual, then for each element the baseline
-- also has a changed bit and a delta of it, the rest in full.
local function arraywrite(G, E, f, v, base, owner, C, depth)
  local e, i = f.of, "i" .. depth
  E:var(i, "size_t")
  local n, bn = tostring(f.max), tostring(f.max)
  if not f.fixed then
    n = v.base .. v.name .. "_count"
    local b = base.base .. base.name .. "_count"
    bn = ctypes.countcap(b, f.max)
    local bad = ctypes.countbad(n, f.min, f.max)
    if bad then E:line("if (%s) return bw_genrefuse(w, BW_ERANGE);", bad) end
    E:line("bw_writebits(w, (uint64_t)%s - %du, %d);", n, f.min, f.bits)
  end
  local same = samefn(G, f, owner, C, v.name)
  E:open("for (%s = 0; %s < %s; %s++)", i, i, n, i)
  local ev, eb = G.elem(v, e, i), G.elem(base, e, i)
  local eo = elemowner(e, owner)
  E:open("if (%s < %s)", i, bn)
  -- named per loop: an element's flag must not shadow its field's
  E:line("bool changed_%s = !%s(%s, %s, %s);", i, same, holder(v.base), holder(base.base), i)
  E:line("bw_writebits(w, changed_%s ? 1 : 0, 1);", i)
  E:open("if (changed_%s)", i)
  writedelta(G, E, e, ev, eb, eo, eo, depth + 1)
  E:close()
  E:close()
  E:open("else")
  E.depth = depth + 1
  G.writevalue(E, "write", e, ev, eo)
  E:close()
  E:close()
end

local function arrayread(G, E, f, v, base, owner, C, segs, depth)
  local e, i = f.of, "i" .. depth
  E:var(i, "size_t")
  local u, n = E:var("u", "uint64_t"), E:var("n" .. depth, "uint64_t")
  local FAIL = G.failstmt(segs)
  local inner = { table.unpack(segs) }
  inner[#inner + 1] = { index = i }
  local IFAIL = G.failstmt(inner)
  local bn = tostring(f.max)
  if not f.fixed then
    local b = base.base .. base.name .. "_count"
    bn = ctypes.countcap(b, f.max)
  end
  E:line("%s = %s;", E:var("start", "uint64_t"), "r->pos")
  if f.fixed then E:line("%s = %d;", n, f.max)
  else
    E:line("if (!bw_genspan(r, %d, %du, &%s)) %s", f.bits, f.max - f.min, u, FAIL)
    E:line("%s = %s + %du;", n, u, f.min)
  end
  E:line("if (!bw_gendeltacount(r, start, %s, %s, %s)) %s", n, bn,
    ctypes.uint(e.minbits), FAIL)
  samefn(G, f, owner, C, v.name)  -- the helper arraywrite calls
  E:open("for (%s = 0; %s < %s; %s++)", i, i, n, i)
  local ev, eb = G.elem(v, e, i), G.elem(base, e, i)
  local eo = elemowner(e, owner)
  E:open("if (%s < %s)", i, bn)
  E:line("%s = bw_readbits(r, 1);", u)
  E:line("if (r->status != BW_OK) %s", IFAIL)
  E:open("if (%s)", u)
  readdelta(G, E, e, ev, eb, eo, eo, inner, depth + 1)
  E:close()
  E:close()
  E:open("else")
  E.depth = depth + 1
  G.readvalue(E, e, ev, eo, inner)
  E:close()
  E:close()
  if not f.fixed then   -- 'v' may be 'base': the count once its is read
    E:line("%s%s_count = (%s)%s;", v.base, v.name, (ctypes.inttype(0, f.max)), n)
  end
end

-- delta = "relative": the value at 'v' as a difference from the baseline's
-- at 'base', by the core (bw_gen.h); it sends the value whole from a
-- baseline the driver would not start from.
local function relwrite(G, E, f, v, base, owner)
  local rel = G.c.relconst(G, f, owner)
  if f.kind == "quat" then
    E:line("if (!bw_genwritequatdiff(w, &%s, %s, %s)) return false;", rel, base.expr, v.expr)
    return
  end
  if f.kind == "float" then G.c.floatcheck(E, f, v.expr) end
  E:line("if (!bw_genwritediff(w, &%s, %s, %s)) return false;", rel, base.expr, v.expr)
end

local function relread(G, E, f, v, base, owner, segs)
  local rel, FAIL = G.c.relconst(G, f, owner), G.failstmt(segs)
  if f.kind == "quat" then
    E:line("if (!bw_genreadquatdiff(r, &%s, %s, %s)) %s", rel, base.expr, v.expr, FAIL)
    return
  end
  E:line("if (!bw_genreaddiff(r, &%s, %s, &%s)) %s", rel, base.expr,
    E:var("u", "uint64_t"), FAIL)
  E:line("%s = %s;", v.expr, G.c.numvalue(G, f, owner))
end

-- Write the changed value at 'v' against its baseline's at 'base' (both
-- there): records, and with element deltas arrays and sparse arrays, as
-- deltas again; relative numbers as differences; anything else in full.
-- 'C' is the struct type holding them.
function writedelta(G, E, f, v, base, owner, C, depth)
  if f.relative then
    relwrite(G, E, f, v, base, owner)
  elseif f.kind == "struct" then
    E:line("if (!write_delta_%s(w, &%s, &%s)) return false;", G.N:typename(f.type),
      v.expr, base.expr)
  elseif f.kind == "sparse" then
    M.sparsewrite(G, E, f, v, base, owner, C, depth)
  elseif f.kind == "array" and G.elemwise and f.max > 0 then   -- (else no elements)
    arraywrite(G, E, f, v, base, owner, C, depth)
  else
    E.depth = depth
    G.writevalue(E, "write", f, v, owner)
  end
end

-- Read a changed value into 'v' (which holds the baseline's, copied).
function readdelta(G, E, f, v, base, owner, C, segs, depth)
  if f.relative then
    relread(G, E, f, v, base, owner, segs)
  elseif f.kind == "struct" then
    E:line("if (!read_delta_%s(r, &%s, &%s, err)) %s", G.N:typename(f.type),
      v.expr, base.expr, G.failstmt(segs))
  elseif f.kind == "sparse" then
    M.sparseread(G, E, f, v, base, owner, segs, depth)
  elseif f.kind == "array" and G.elemwise and f.max > 0 then
    arrayread(G, E, f, v, base, owner, C, segs, depth)
  else
    E.depth = depth
    G.readvalue(E, f, v, owner, segs)
  end
end

-- The statements of one struct's eq / write_delta / read_delta.
local function typebodies(G, t)
  local T = G.N:typename(t.name)
  local fields = ctypes.fields(G.program, t)
  local eq = {}
  local wE, rE = G.emitter(G), G.emitter(G)
  for _, f in ipairs(fields) do
    local name = ident(f.name or "")
    local owner = G.N:owner(t, f)
    local a = G.fieldloc("a->", name)
    local b = G.fieldloc("b->", name)
    local v = G.fieldloc("v->", name)
    local base = G.fieldloc("base->", name)
    if f.name == nil then      -- align, check: as always
      wE:line("/* %s */", ctypes.wire(f))
      G.writevalue(wE, "write", f, v, owner)
      rE:line("/* %s */", ctypes.wire(f))
      G.readvalue(rE, f, v, owner, {})
    else
      -- equality
      if f.optional then
        eq[#eq + 1] = fmt("  if (a->has_%s != b->has_%s) return false;", name, name)
        eq[#eq + 1] = fmt("  if (a->has_%s) {", name)
        eqstmts(G, eq, "    ", f, a, b, owner, 0)
        eq[#eq + 1] = "  }"
      else
        eqstmts(G, eq, "  ", f, a, b, owner, 0)
      end
      -- write
      local has = f.optional and ("v->has_" .. name) or "true"
      local bhas = f.optional and ("base->has_" .. name) or "true"
      wE:line("/* %s: changed bit, then %s */", ctypes.comment(f.name), ctypes.wire(f))
      wE:open("")
      wE:line("bool changed = !eqf_%s(v, base);", owner)
      wE:line("bw_writebits(w, changed ? 1 : 0, 1);")
      wE:open("if (changed)")
      if f.optional then wE:line("bw_writebits(w, %s ? 1 : 0, 1);", has) end
      wE:open(f.optional and fmt("if (%s && %s)", has, bhas) or "")
      writedelta(G, wE, f, v, base, owner, T, 0)
      wE:close()
      if f.optional then
        wE:open("else if (%s)", has)
        wE.depth = 0
        G.writevalue(wE, "write", f, v, owner)
        wE:close()
      end
      wE:close()
      wE:close()
      G.N:ownclaim("eqf_" .. owner, owner)
      G.eqfuncs[#G.eqfuncs + 1] = { owner = owner, T = T, f = f, name = name }
      -- read
      local segs = { { name = f.name } }
      local FAIL = G.failstmt(segs)
      local u = rE:var("u", "uint64_t")
      rE:line("/* %s: changed bit, then %s */", ctypes.comment(f.name), ctypes.wire(f))
      rE:line("%s = bw_readbits(r, 1);", u)
      rE:line("if (r->status != BW_OK) %s", FAIL)
      rE:open("if (%s)", u)
      -- 'v' may be 'base': its flag is set once the baseline's is read
      if f.optional then
        rE:line("%s = bw_readbits(r, 1);", u)
        rE:line("if (r->status != BW_OK) %s", FAIL)
        rE:open("if (%s && %s)", u, bhas)
        rE:line("v->has_%s = true;", name)
      else
        rE:open("")
      end
      readdelta(G, rE, f, v, base, owner, T, segs, 0)
      rE:close()
      if f.optional then
        rE:open("else if (%s)", u)
        rE:line("v->has_%s = true;", name)
        rE.depth = 0
        G.readvalue(rE, f, v, owner, segs)
        rE:close()
        rE:line("else v->has_%s = false;", name)
      end
      rE:close()
    end
  end
  return eq, wE, rE
end

-- A sparse field against its baseline's: the slots that differ, each with
-- a presence bit and, where the baseline has the slot, a delta of it
-- (records only in the driver's older form).
function M.sparsewrite(G, E, f, v, base, owner, C, depth)
  local sp = G.c.sparseconst(G, f, owner, 1, "spd")
  local st = E:var("slots" .. depth, "bw_GenSlots")
  local i = E:var("i" .. depth, "size_t")
  local sent = G.N:ownclaim(fmt("sent_%s", owner), owner)
  local pv, pb = v.base .. v.name .. "_present", base.base .. base.name .. "_present"
  local e = f.of
  local same = samefn(G, f, owner, C, v.name)
  E:line("uint8_t %s[%d];", sent, (f.max + 7) // 8)
  E:line("memset(%s, 0, sizeof(%s));", sent, sent)
  E:open("for (%s = 0; %s < %d; %s++)", i, i, f.max, i)
  E:line("if (!%s(%s, %s, %s)) %s[%s >> 3] |= (uint8_t)(1u << (%s & 7));",
    same, holder(v.base), holder(base.base), i, sent, i, i)
  E:close()
  E:line("bw_genslotsbegin(w, &%s, %s, &%s);", sp, sent, st)
  E:open("for (%s = 0; %s < %d; %s++)", i, i, f.max, i)
  E:line("if (!bw_genhas(%s, %s)) continue;", sent, i)
  E:line("bw_genslot(w, &%s, &%s, %s + 1);", sp, st, i)
  E:line("bw_writebits(w, bw_genhas(%s, %s), 1);", pv, i)
  E:line("if (!bw_genhas(%s, %s)) continue;", pv, i)
  local ev, eb = G.elem(v, e, i), G.elem(base, e, i)
  local eo = elemowner(e, owner)
  if e.kind == "struct" or e.relative or G.elemwise then
    E:open("if (bw_genhas(%s, %s))", pb, i)
    writedelta(G, E, e, ev, eb, eo, eo, depth + 1)
    E:close()
    E:open("else")
  else
    E:open("")
  end
  E.depth = depth + 1
  G.writevalue(E, "write", e, ev, eo)
  E:close()
  E:close()
  E:line("bw_genslotsend(w, &%s, &%s);", sp, st)
end

function M.sparseread(G, E, f, v, base, owner, segs, depth)
  local sp = G.c.sparseconst(G, f, owner, 1, "spd")
  local st = E:var("slots" .. depth, "bw_GenSlots")
  local i = E:var("i" .. depth, "size_t")
  local more, slot = E:var("more", "int"), E:var("slot", "uint64_t")
  local pv, pb = v.base .. v.name .. "_present", base.base .. base.name .. "_present"
  local FAIL = G.failstmt(segs)
  local inner = { table.unpack(segs) }
  inner[#inner + 1] = { index = i }
  local IFAIL = G.failstmt(inner)
  local e = f.of
  E:line("if (!bw_genreadslotsbegin(r, &%s, &%s)) %s", sp, st, FAIL)
  E:open("while ((%s = bw_genreadslot(r, &%s, &%s, &%s)) > 0)", more, sp, st, slot)
  E:line("%s = (size_t)%s - 1;", i, slot)
  -- 'v' may be 'base': the slot is marked present once the baseline's is read
  local u = E:var("u", "uint64_t")
  E:line("%s = bw_readbits(r, 1);", u)
  E:line("if (r->status != BW_OK) %s", IFAIL)
  E:open("if (%s == 0)", u)
  E:line("%s[%s >> 3] &= (uint8_t)~(1u << (%s & 7));", pv, i, i)
  E:line("continue;")
  E:close()
  local ev, eb = G.elem(v, e, i), G.elem(base, e, i)
  local eo = elemowner(e, owner)
  if e.kind == "struct" or e.relative or G.elemwise then
    E:open("if (bw_genhas(%s, %s))", pb, i)
    readdelta(G, E, e, ev, eb, eo, eo, inner, depth + 1)
    E:close()
    E:open("else")
  else
    E:open("")
  end
  E.depth = depth + 1
  G.readvalue(E, e, ev, eo, inner)
  E:close()
  E:line("%s[%s >> 3] |= (uint8_t)(1u << (%s & 7));", pv, i, i)
  E:close()
  E:line("if (%s < 0) %s", more, FAIL)
end

-- Does the driver send arrays in a delta element by element? Asked of the
-- driver itself (a probe of its bits), so the code matches the engine it is
-- generated with while both forms are in use.
function M.elemwise()
  local bitwire = require "bitwire"
  local s = bitwire.schema { T = { { "a", "array", of = { "int", min = 0, max = 15 }, max = 7 } } }
  return s:bits("T", { a = { 1, 2, 9, 5 } }, { baseline = { a = { 1, 2, 3 } } }) == 15
end

function M.protos(G, t, p)
  local T = G.N:typename(t.name)
  p[#p + 1] = fmt("/* 1 when 'a' and 'b' send the same bits (floats compare quantized). */")
  p[#p + 1] = fmt("bool %s_equal (const %s *a, const %s *b);", T, T, T)
  p[#p + 1] = fmt("/* 'v' against 'base' (WIRE.md, delta): what changed. */")
  p[#p + 1] = fmt("bool %s_write_delta (bw_Writer *w, const %s *v, const %s *base);", T, T, T)
  p[#p + 1] = fmt("/* Read a delta against 'base' into 'v' ('v' may be 'base'); the\n"
    .. "** _err form fills 'err' as T_read_err does (when not NULL). */")
  p[#p + 1] = fmt("bool %s_read_delta (bw_Reader *r, %s *v, const %s *base);", T, T, T)
  p[#p + 1] = fmt("bool %s_read_delta_err (bw_Reader *r, %s *v, const %s *base,\n"
    .. "                         bw_Error *err);", T, T, T)
end

-- Every delta function of the program's types, in dependency order.
function M.all(G, out)
  G.eqfuncs, G.same, G.samelist = {}, {}, {}
  G.elemwise = M.elemwise()
  local decls, defs = {}, {}
  for _, t in ipairs(ctypes.order(G.program)) do
    local T = G.N:typename(t.name)
    decls[#decls + 1] = fmt("static bool eq_%s (const %s *a, const %s *b);\n"
      .. "static bool write_delta_%s (bw_Writer *w, const %s *v, const %s *base);\n"
      .. "static bool read_delta_%s (bw_Reader *r, %s *v, const %s *base, bw_Error *err);",
      T, T, T, T, T, T, T, T, T)
  end
  for _, t in ipairs(ctypes.order(G.program)) do
    local T = G.N:typename(t.name)
    local eq, wE, rE = typebodies(G, t)
    defs[#defs + 1] = fmt("static bool eq_%s (const %s *a, const %s *b) {\n"
      .. "  (void)a; (void)b;\n%s\n  return true;\n}\n", T, T, T, concat(eq, "\n"))
    defs[#defs + 1] = fmt("static bool write_delta_%s (bw_Writer *w, const %s *v, const %s *base) {\n"
      .. "%s  (void)v; (void)base;\n  return w->status == BW_OK;\n}\n", T, T, T, wE:body())
    defs[#defs + 1] = fmt("static bool read_delta_%s (bw_Reader *r, %s *v, const %s *base,\n"
      .. "                            bw_Error *err) {\n"
      .. "  if (v != base) *v = *base;  /* what is not sent is kept */\n"
      .. "%s  (void)r; (void)err;\n  return true;\n}\n", T, T, T, rE:body())
    defs[#defs + 1] = fmt([[
bool %s_equal (const %s *a, const %s *b) {
  return eq_%s(a, b);
}

bool %s_write_delta (bw_Writer *w, const %s *v, const %s *base) {
  return write_delta_%s(w, v, base);
}

bool %s_read_delta (bw_Reader *r, %s *v, const %s *base) {
  bw_Error err;
  err.path[0] = '\0';
  return read_delta_%s(r, v, base, &err);
}

bool %s_read_delta_err (bw_Reader *r, %s *v, const %s *base, bw_Error *err) {
  bw_Error scratch;
  if (err == NULL) err = &scratch;
  err->path[0] = '\0';
  if (read_delta_%s(r, v, base, err)) return true;
  return bw_generror(r, err);
}
]], T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, T)
  end
  -- per-field equality (a changed bit each) and per-slot sameness
  local helpers = {}
  for _, q in ipairs(G.eqfuncs) do
    local lines = {}
    local a, b = G.fieldloc("a->", q.name), G.fieldloc("b->", q.name)
    if q.f.optional then
      lines[#lines + 1] = fmt("  if (a->has_%s != b->has_%s) return false;", q.name, q.name)
      lines[#lines + 1] = fmt("  if (!a->has_%s) return true;", q.name)
    end
    eqstmts(G, lines, "  ", q.f, a, b, q.owner, 0)
    -- an array of no elements compares nothing: its loop, if any, is empty
    table.insert(lines, 1, "  (void)a; (void)b;")
    helpers[#helpers + 1] = fmt("static bool eqf_%s (const %s *a, const %s *b) {\n%s\n  return true;\n}\n",
      q.owner, q.T, q.T, concat(lines, "\n"))
  end
  for _, q in ipairs(G.samelist) do
    local lines, e = {}, q.f.of
    local a, b = G.fieldloc("a->", q.name), G.fieldloc("b->", q.name)
    if q.f.kind == "sparse" then
      local pa, pb = "a->" .. q.name .. "_present", "b->" .. q.name .. "_present"
      lines[#lines + 1] = fmt("  if (bw_genhas(%s, i) != bw_genhas(%s, i)) return false;", pa, pb)
      lines[#lines + 1] = fmt("  if (!bw_genhas(%s, i)) return true;", pa)
    end
    eqstmts(G, lines, "  ", e, G.elem(a, e, "i"), G.elem(b, e, "i"), elemowner(e, q.owner), 1)
    table.insert(lines, 1, "  (void)a; (void)b; (void)i;  /* elements may be of no elements */")
    helpers[#helpers + 1] = fmt("static bool same_%s (const %s *a, const %s *b, size_t i) {\n%s\n"
      .. "  return true;\n}\n", q.owner, q.C, q.C, concat(lines, "\n"))
  end
  out[#out + 1] = concat(decls, "\n") .. "\n"
  out[#out + 1] = concat(helpers, "\n")
  out[#out + 1] = concat(defs, "\n")
end

return M
