-- bitwire.gen.serialize_h(schema, opts): a C++ header of
-- `template <typename Stream> bool serialize(Stream &stream, T &value)`
-- functions that call serialize.h's macros (mas-bandwidth/serialize 1.11)
-- in field order, so a C++ peer reads and writes a schema's bytes. Read from
-- the compiled program (s:program()); the structs are the ones gen.c
-- declares. Kinds serialize.h has no macro for get generated helpers.
local ctypes = require "bitwire.gen.ctypes"

local M = {}
local fmt, concat = string.format, table.concat
local ident = ctypes.ident

local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end

-- A float32 'res' for which serialize.h's setup gives back 'qmax' steps
-- over the range: f32(delta / res) rounded up is qmax.
local function resolution(f)
  local delta = f.qdelta
  local function steps(res)
    local v = f32(delta / res)
    if v < 1 then v = 1 end
    if v > 4294967040 then v = 4294967040 end
    return math.ceil(v)
  end
  local res = f32(delta / f.qmax)
  for _ = 1, 64 do
    local n = steps(res)
    if n == f.qmax then return res end
    -- nudge by one float32 ulp toward the right count
    local bits = string.unpack("<I4", string.pack("<f", res))
    bits = n > f.qmax and bits + 1 or bits - 1
    res = string.unpack("<f", string.pack("<I4", bits))
  end
  error(fmt("bitwire.gen.serialize_h: no float32 resolution gives %d steps",
    f.qmax), 0)
end

local ENC = { mask = "BW_SPMASK", index = "BW_SPINDEX",
              relative = "BW_SPRELATIVE", auto = "BW_SPAUTO" }

local function int32ok(lo, hi)
  return lo < hi and lo >= -0x80000000 and hi <= 0x7fffffff
end

local serval

-- Writing returns false where C condition 'bad' (if any) holds: the driver
-- refuses that value, and serialize.h would only assert.
local function refuse(out, ind, bad)
  if bad then out[#out + 1] = fmt("%sif (Stream::IsWriting && (%s)) return false;", ind, bad) end
end

-- int(x, lo, hi): serialize_int when serialize.h's int32 form fits, else
-- the generated bitwire_serialize_wide (pieces of serialize_bits). Writing
-- sends 'v' (default 'x'; ctypes.intsend), refusing it where 'bad' holds. A
-- value sent as another expression, or 'x' of a type the macro cannot read
-- into (an enum), goes through a copy of C type 'ctype' read back into 'x'.
local function intfield(out, ind, x, lo, hi, ctype, v, bad)
  local add = function(s, ...) out[#out + 1] = ind .. fmt(s, ...) end
  local L, H = ctypes.int(lo), ctypes.int(hi)
  refuse(out, ind, bad)
  if (v or x) == x and not ctype then
    if int32ok(lo, hi) then add("serialize_int(stream, %s, %s, %s);", x, L, H)
    else add("if (!bitwire_serialize_wide(stream, %s, %s, %s)) return false;", x, L, H) end
    return
  end
  local et = int32ok(lo, hi) and "int32_t" or ctype
  add("{")
  add("  %s e = %s;", et, et == "int32_t" and "0" or "(" .. et .. ")0")
  add("  if (Stream::IsWriting) e = (%s)%s;", et, v or x)
  if int32ok(lo, hi) then add("  serialize_int(stream, e, %s, %s);", L, H)
  else add("  if (!bitwire_serialize_wide(stream, e, %s, %s)) return false;", L, H) end
  add("  if (Stream::IsReading) %s = (%s)e;", x, ctype)
  add("}")
end

-- A count of array or bytes field 'f' ('n'), refused out of [min, max].
local function countfield(out, ind, n, f)
  local _, bad = ctypes.intsend({ kind = "int", min = 0, max = f.max }, n, f.min, f.max)
  intfield(out, ind, n, f.min, f.max, nil, nil, bad)
end

function serval(G, out, ind, f, x, base, name, depth, owner)
  local k = f.kind
  local add = function(s, ...) out[#out + 1] = ind .. fmt(s, ...) end
  if k == "int" then
    local v, bad = ctypes.intsend(f, x)
    intfield(out, ind, x, f.min, f.max, v ~= x and G.N:scalartype(f, owner) or nil, v, bad)
  elseif k == "enum" then
    intfield(out, ind, x, 0, #f.values - 1, G.N:scalartype(f, owner), x,
      select(2, ctypes.intsend(f, x)))
  elseif k == "uint" then
    refuse(out, ind, select(2, ctypes.intsend(f, x)))
    if f.bits <= 32 then add("serialize_bits(stream, %s, %d);", x, f.bits)
    else add("if (!bitwire_serialize_wide(stream, %s, 0, %s)) return false;", x,
      f.bits == 64 and "-1" or ctypes.int((1 << f.bits) - 1)) end
  elseif k == "bool" then add("serialize_bool(stream, %s);", x)
  elseif k == "float" then
    add("serialize_compressed_float(stream, %s, %s, %s, %s);", x, ctypes.float(f.fmin),
      ctypes.float(f.fmax), ctypes.float(resolution(f)))
  elseif k == "float32" then add("serialize_float(stream, %s);", x)
  elseif k == "float64" then add("serialize_double(stream, %s);", x)
  elseif k == "angle" then
    add("if (!bitwire_serialize_angle(stream, %s, %s, %d)) return false;", x,
      ctypes.double(f.period), f.bits)
  elseif k == "string" and f.max == 0 then
    -- serialize_string's length is a serialize_int(0, max), which asserts
    -- min < max: the same wire, its length of no bits, then the align
    add("if (Stream::IsWriting && %s[0] != '\\0') return false;", x)
    add("serialize_align(stream);")
    add("if (Stream::IsReading) %s[0] = '\\0';", x)
  elseif k == "string" then add("serialize_string(stream, %s, %d);", x, f.max + 1)
  elseif k == "bytes" then
    if f.fixed then add("serialize_bytes(stream, %s, %d);", x, f.max)
    else
      countfield(out, ind, base .. name .. "_count", f)
      add("serialize_bytes(stream, %s, %s%s_count);", x, base, name)
    end
  elseif k == "struct" then
    add("if (!serialize(stream, %s)) return false;", x)
  elseif k == "array" then
    local n = tostring(f.max)
    if not f.fixed then
      n = base .. name .. "_count"
      countfield(out, ind, n, f)
    end
    local i = "i" .. depth
    add("for (int %s = 0; %s < (int)%s; %s++) {", i, i, n, i)
    local e = f.of
    local ex = fmt("%s[%s]", x, i)
    local eb, en = nil, nil
    if ctypes.compound(e) then eb, en, ex = ex .. ".", "v", ex .. ".v" end
    serval(G, out, ind .. "  ", e, ex, eb, en, depth + 1,
      ctypes.compound(e) and owner .. "_item" or owner)
    add("}")
  elseif k == "quat" then
    add("if (!bitwire_serialize_quat(stream, %s, %d)) return false;", x, f.bits)
  elseif k == "tiered" then
    local t = G.consts(f, owner)
    refuse(out, ind, select(2, ctypes.intsend(f, x)))
    add("{")
    add("  uint64_t t = (uint64_t)%s - (uint64_t)%s;", x, ctypes.int(f.min))
    add("  if (!bitwire_serialize_tiered(stream, t, 0, %s, %s, %d)) return false;",
      ctypes.uint(f.max - f.min), t, #f.tiers)
    add("  %s = (%s)(int64_t)(t + (uint64_t)%s);", x, G.N:scalartype(f, owner), ctypes.int(f.min))
    add("}")
  elseif k == "sparse" then
    local sp = G.sparse(f, owner)
    local e = f.of
    local slot = "slot" .. depth
    local ex = fmt("%s[%s]", x, slot)
    local eb, en = nil, nil
    if ctypes.compound(e) then eb, en, ex = ex .. ".", "v", ex .. ".v" end
    add("if (!bitwire_serialize_sparse(stream, %s%s_present, %s,", base, name, sp)
    -- the stream is the captured one: a named parameter would shadow it
    add("    [&](Stream &, size_t %s) -> bool {", slot)
    local inner = {}
    serval(G, inner, ind .. "      ", e, ex, eb, en, depth + 1,
      ctypes.compound(e) and owner .. "_item" or owner)
    for _, l in ipairs(inner) do out[#out + 1] = l end
    add("      return true;")
    add("    }))")
    add("  return false;")
  elseif k == "align" then add("serialize_align(stream);")
  elseif k == "check" then
    if f.magic == 0x12345678 then add("serialize_check(stream);")
    else add("if (!bitwire_serialize_check(stream, %su)) return false;", f.magic) end
  else
    error(fmt("bitwire.gen.serialize_h: field kind '%s' is not supported yet", k), 0)
  end
end

local HELPERS = [[
// int(v, min, max) for ranges serialize_int cannot take (wider than int32,
// or a single value): the offset in bits_required(min, max) bits, sent as
// serialize_bits pieces of at most 32 bits, low first (WIRE.md, int).
template <typename Stream, typename T>
bool bitwire_serialize_wide (Stream &stream, T &value, int64_t min, int64_t max) {
  uint64_t span = (uint64_t)max - (uint64_t)min, u = 0;
  int bits = 0;
  while (bits < 64 && (span >> bits) != 0) bits++;
  if (Stream::IsWriting) u = (uint64_t)(int64_t)value - (uint64_t)min;
  for (int at = 0; at < bits; at += 32) {
    uint32_t piece = (uint32_t)(u >> at);
    int n = bits - at < 32 ? bits - at : 32;
    serialize_bits(stream, piece, n);
    if (Stream::IsReading) u |= (uint64_t)piece << at;
  }
  if (Stream::IsReading) {
    if (u > span) return false;
    value = (T)(int64_t)(u + (uint64_t)min);
  }
  return true;
}

// Bits needed for values 0..v.
inline int bitwire_bits (uint64_t v) {
  int n = 0;
  while (n < 64 && (v >> n) != 0) n++;
  return n;
}

// A tiered integer in [min, max] (WIRE.md, tiered): tier i is announced by
// i zero bits and a one (the last by its zeros alone), then the offset in
// the tier. The tiers' ranges come from the core (bw_tierhi).
template <typename Stream>
bool bitwire_serialize_tiered (Stream &stream, uint64_t &v, uint64_t min,
                               uint64_t max, const uint8_t *tiers, unsigned n) {
  uint64_t lo = min;
  for (unsigned i = 0; i < n; i++) {
    if (lo > max) return false;
    uint64_t hi = bw_tierhi(lo, max, tiers, i, n);
    bool here = Stream::IsWriting && v <= hi;
    if (i + 1 < n) serialize_bool(stream, here);
    if (here || i + 1 == n) {
      uint64_t u = Stream::IsWriting ? v - lo : 0;
      if (!bitwire_serialize_wide(stream, u, 0, (int64_t)(hi - lo))) return false;
      if (Stream::IsReading) v = lo + u;
      return true;
    }
    lo = hi + 1;
  }
  return false;
}

// An angle (WIRE.md, angle) by the core's bw_angleencode/bw_angledecode, so
// the rounding is the driver's; a non-finite one is refused as it does.
template <typename Stream>
bool bitwire_serialize_angle (Stream &stream, double &v, double period, unsigned bits) {
  uint32_t u = 0;
  if (Stream::IsWriting) {
    if (!std::isfinite(v)) return false;
    u = bw_angleencode(v, period, bits);
  }
  serialize_bits(stream, u, (int)bits);
  if (Stream::IsReading) v = bw_angledecode(u, period, bits);
  return true;
}

// A quaternion (x, y, z, w) by smallest three (WIRE.md, quat): the largest
// component's index in 2 bits, then the other three in 'bits' bits each.
template <typename Stream>
bool bitwire_serialize_quat (Stream &stream, float v[4], unsigned bits) {
  bw_QFloat q;
  uint32_t c[4] = { 0, 0, 0, 0 };
  bw_quatinit(&q, bits);
  if (Stream::IsWriting) {
    double in[4] = { v[0], v[1], v[2], v[3] };
    if (!bw_quatencode(&q, in, c)) return false;
  }
  serialize_bits(stream, c[0], 2);
  for (int i = 1; i < 4; i++) serialize_bits(stream, c[i], (int)bits);
  if (Stream::IsReading) {
    double out[4];
    for (int i = 1; i < 4; i++) if (c[i] > q.miv) return false;
    if (q.nbits <= BW_QUATEXACT && !bw_quatcanonical(&q, c)) return false;
    bw_quatdecode(&q, c, out);
    for (int i = 0; i < 4; i++) v[i] = (float)out[i];
  }
  return true;
}

// A sparse array's slots (WIRE.md, sparse); 'element(stream, i)' does slot
// i + 1's value. Writing picks the encoding as the core does
// (bw_genslotsbegin).
template <typename Stream, typename F>
bool bitwire_serialize_sparse (Stream &stream, uint8_t *mask,
                               const bw_GenSparse &sp, F element) {
  bw_GenSlots st;
  uint32_t enc = (uint32_t)sp.encoding;
  uint64_t count = 0, prev = 0;
  if (Stream::IsWriting) {
    bw_genslotsbegin(NULL, &sp, mask, &st);
    enc = (uint32_t)st.encoding;
    count = st.left;
  }
  else memset(mask, 0, (size_t)((sp.n + 7) / 8));
  if (sp.encoding == BW_SPAUTO) {
    serialize_bits(stream, enc, 2);
    if (enc == BW_SPAUTO) return false;
  }
  if (enc == BW_SPMASK) {
    for (uint64_t i = 0; i < sp.n; i++) {
      bool present = Stream::IsWriting && bw_genhas(mask, i);
      serialize_bool(stream, present);
      if (!present) continue;
      mask[i >> 3] |= (uint8_t)(1u << (i & 7));
      if (!element(stream, (size_t)i)) return false;
    }
    return true;
  }
  if (enc == BW_SPINDEX) {
    if (!bitwire_serialize_wide(stream, count, 0, (int64_t)sp.n)) return false;
    for (uint64_t k = 0, i = 0; k < count; k++, i++) {
      if (Stream::IsWriting) while (!bw_genhas(mask, i)) i++;
      uint64_t at = i;
      if (!bitwire_serialize_wide(stream, at, 0, (int64_t)sp.n - 1)) return false;
      if (Stream::IsReading) {
        if (k > 0 && at < i) return false;   // indices must rise
        i = at;
      }
      mask[i >> 3] |= (uint8_t)(1u << (i & 7));
      if (!element(stream, (size_t)i)) return false;
    }
    return true;
  }
  for (uint64_t i = 0;; i++) {   // relative: rising slots, then n + 1
    uint64_t cur = sp.n + 1;
    if (Stream::IsWriting) {
      while (i < sp.n && !bw_genhas(mask, i)) i++;
      if (i < sp.n) cur = i + 1;
    }
    if (sp.ntiers > 0) {
      uint64_t d = cur - prev;
      if (!bitwire_serialize_tiered(stream, d, 1, sp.n + 1, sp.tiers, sp.ntiers))
        return false;
      cur = prev + d;
    }
    else {
      uint32_t c = (uint32_t)cur;
      serialize_int_relative(stream, (uint32_t)prev, c);
      cur = c;
    }
    if (cur == sp.n + 1) return true;
    if (cur > sp.n || cur <= prev) return false;
    i = cur - 1;
    prev = cur;
    mask[i >> 3] |= (uint8_t)(1u << (i & 7));
    if (!element(stream, (size_t)i)) return false;
  }
}

// A message's id in %s_TYPEBITS bits; an id past the last message fails.
template <typename Stream>
bool serialize_message_id (Stream &stream, uint32_t &id) {
  if (%s_TYPEBITS > 0) serialize_bits(stream, id, %s_TYPEBITS);
  else id = 0;
  return id < %s_NMESSAGES;
}

// check(magic) with a magic other than serialize_check's.
template <typename Stream>
bool bitwire_serialize_check (Stream &stream, uint32_t magic) {
  uint32_t v = magic;
  serialize_align(stream);
  serialize_bits(stream, v, 32);
  return v == magic;
}
]]

-- The names HELPERS and the serialize functions declare, with their
-- parameters and locals (loop ones numbered by depth, below the core's
-- nesting limit): a type of one of these names would be redeclared, or
-- shadowed under -Wshadow.
local OWN = { "serialize", "Stream", "bitwire_serialize_wide", "bitwire_bits",
  "bitwire_serialize_tiered", "bitwire_serialize_angle", "bitwire_serialize_quat",
  "bitwire_serialize_sparse", "bitwire_serialize_check", "serialize_message_id",
  "stream", "value", "min", "max", "span", "u", "bits", "at", "piece", "n", "v",
  "tiers", "lo", "i", "hi", "here", "period", "q", "c", "in", "out", "miv",
  "nbits", "mask", "sp", "element", "st", "enc", "encoding", "count", "prev",
  "present", "k", "cur", "ntiers", "d", "id", "magic", "e", "t", "std" }
for d = 0, 32 do OWN[#OWN + 1] = fmt("i%d", d); OWN[#OWN + 1] = fmt("slot%d", d) end

-- bitwire.gen.serialize_h(schema, opts) -> the header text.
local OPTIONS = { name = true, prefix = true, version = true }

function M.generate(schema, opts)
  opts = ctypes.checkopts(opts, OPTIONS, "bitwire.gen.serialize_h")
  local program = ctypes.program(schema, opts.version)
  local name = opts.name or "messages"
  local G = { program = program, N = ctypes.new(program, opts.prefix) }
  for _, n in ipairs(OWN) do G.N.claim(n, "a name of the generated functions") end
  for _, n in ipairs { "%s_TYPEBITS", "%s_NMESSAGES", "%s_NTYPES" } do
    G.N.claim(fmt(n, ident(name):upper()), fmt("a name made of --name '%s'", name))
  end
  local consts, seen = {}, {}
  -- a sparse field's index tiers ("sptiers") and its tiered elements'
  -- value tiers ("tiers") have the same owner
  function G.consts(f, owner, prefix)
    local n = (prefix or "tiers") .. "_" .. owner
    if not seen[n] then
      seen[n] = G.N:ownclaim(n, owner)
      consts[#consts + 1] = fmt("static const uint8_t %s[] = { %s };", n,
        concat(f.tiers, ", "))
    end
    return n
  end
  function G.sparse(f, owner)
    local n = "sp_" .. owner
    if not seen[n] then
      seen[n] = G.N:ownclaim(n, owner)
      local tiers = f.tiers and #f.tiers > 0 and G.consts(f, owner, "sptiers")
      consts[#consts + 1] = fmt(
        "static const bw_GenSparse %s = { %s, %d, %s, %s, %d, %s };", n,
        ctypes.uint(f.max), f.bits, ENC[f.encoding], tiers or "NULL",
        tiers and #f.tiers or 0, ctypes.uint(f.of.minbits))
    end
    return n
  end
  local NAME = ident(name):upper()
  local guard = NAME .. "_HPP"
  local out = {}
  out[#out + 1] = fmt([[
// %s.hpp - generated by `bitwire gen serialize-h` from a bitwire schema;
// do not edit. Schema fingerprint %s, version %d.
// One serialize function per type, for serialize.h 1.11
// (mas-bandwidth/serialize): include serialize.h first. See WIRE.md,
// "Generated code".
#ifndef %s
#define %s

#include <cmath>
#include <stdint.h>
#include <string.h>

#include "bw_gen.h"

namespace %s {

enum { %s_TYPEBITS = %d, %s_NMESSAGES = %d, %s_NTYPES = %d };

]], name, program.fingerprint, program.version, guard, guard, ident(name),
    NAME, program.typebits, NAME, ctypes.nmessages(program), NAME, #program.types)
  out[#out + 1] = G.N:declarations()
  out[#out + 1] = fmt(HELPERS, NAME, NAME, NAME, NAME)
  local protos, bodies = {}, {}
  for _, t in ipairs(ctypes.order(program)) do
    local T = G.N:typename(t.name)
    protos[#protos + 1] = fmt("template <typename Stream> bool serialize (Stream &stream, %s &value);", T)
    local b = {}
    for _, f in ipairs(ctypes.fields(program, t)) do
      local fname = ident(f.name or "")
      local x = "value." .. fname
      b[#b + 1] = fmt("  // %s%s", f.name and (ctypes.comment(f.name) .. ": ") or "", ctypes.wire(f))
      local ind = "  "
      if f.optional then
        b[#b + 1] = fmt("  serialize_bool(stream, value.has_%s);", fname)
        b[#b + 1] = fmt("  if (value.has_%s) {", fname)
        ind = "    "
      end
      serval(G, b, ind, f, x, "value.", fname, 0, G.N:owner(t, f))
      if f.optional then b[#b + 1] = "  }" end
    end
    bodies[#bodies + 1] = fmt("template <typename Stream> bool serialize (Stream &stream, %s &value) {\n"
      .. "  (void)stream; (void)value;\n%s\n  return true;\n}\n", T, concat(b, "\n"))
  end
  out[#out + 1] = concat(consts, "\n") .. "\n\n"
  out[#out + 1] = concat(protos, "\n") .. "\n"
  out[#out + 1] = concat(bodies, "\n")
  out[#out + 1] = fmt("\n} // namespace %s\n\n#endif\n", ident(name))
  return concat(out)
end

setmetatable(M, { __call = function(_, ...) return M.generate(...) end })

return M
