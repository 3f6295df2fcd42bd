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

local function int32ok(lo, hi)
  return lo < hi and lo >= -0x80000000 and hi <= 0x7fffffff
end

local serval

-- int(x, lo, hi): serialize_int when serialize.h's int32 form fits, else
-- the generated bitwire_serialize_wide (pieces of serialize_bits).
local function intfield(out, ind, x, lo, hi, cast)
  if int32ok(lo, hi) and not cast then
    out[#out + 1] = fmt("%sserialize_int(stream, %s, %s, %s);", ind, x, ctypes.int(lo), ctypes.int(hi))
  elseif int32ok(lo, hi) then
    out[#out + 1] = fmt("%s{", ind)
    out[#out + 1] = fmt("%s  int32_t e = (int32_t)%s;", ind, x)
    out[#out + 1] = fmt("%s  serialize_int(stream, e, %s, %s);", ind, ctypes.int(lo), ctypes.int(hi))
    out[#out + 1] = fmt("%s  %s = (%s)e;", ind, x, cast)
    out[#out + 1] = fmt("%s}", ind)
  else
    out[#out + 1] = fmt("%sif (!bitwire_serialize_wide(stream, %s, %s, %s)) return false;",
      ind, x, ctypes.int(lo), ctypes.int(hi))
  end
end

function serval(G, out, ind, f, x, base, name, depth, owner)
  local k = f.kind
  local add = function(s, ...) out[#out + 1] = ind .. fmt(s, ...) end
  if k == "int" then intfield(out, ind, x, f.min, f.max)
  elseif k == "enum" then intfield(out, ind, x, 0, #f.values - 1, G.N:scalartype(f, owner))
  elseif k == "uint" then
    if f.bits <= 32 then add("serialize_bits(stream, %s, %d);", x, f.bits)
    else add("if (!bitwire_serialize_wide(stream, %s, 0, %s)) return false;", x,
      f.bits == 64 and "-1" or ctypes.int((1 << f.bits) - 1)) end
  elseif k == "bool" then add("serialize_bool(stream, %s);", x)
  elseif k == "float" then
    add("serialize_compressed_float(stream, %s, %s, %s, %s);", x, ctypes.float(f.fmin),
      ctypes.float(f.fmax), ctypes.float(resolution(f)))
  elseif k == "float32" then add("serialize_float(stream, %s);", x)
  elseif k == "float64" then add("serialize_double(stream, %s);", x)
  elseif k == "string" then add("serialize_string(stream, %s, %d);", x, f.max + 1)
  elseif k == "bytes" then
    if f.fixed then add("serialize_bytes(stream, %s, %d);", x, f.max)
    else
      intfield(out, ind, base .. name .. "_count", f.min, f.max)
      add("serialize_bytes(stream, %s, %s%s_count);", x, base, name)
    end
  elseif k == "struct" then
    add("if (!serialize(stream, %s)) return false;", x)
  elseif k == "array" then
    local n = tostring(f.max)
    if not f.fixed then
      n = base .. name .. "_count"
      intfield(out, ind, n, f.min, f.max)
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

// check(magic) with a magic other than serialize_check's.
template <typename Stream>
bool bitwire_serialize_check (Stream &stream, uint32_t magic) {
  uint32_t v = magic;
  serialize_align(stream);
  serialize_bits(stream, v, 32);
  return v == magic;
}
]]

-- bitwire.gen.serialize_h(schema, opts) -> the header text.
function M.generate(schema, opts)
  opts = opts or {}
  local program = schema:program()
  local name = opts.name or "messages"
  local G = { program = program, N = ctypes.new(program, opts.prefix) }
  local guard = ident(name):upper() .. "_HPP"
  local out = {}
  out[#out + 1] = fmt([[
// %s.hpp - generated by `bitwire gen serialize-h` from a bitwire schema;
// do not edit. Schema fingerprint %s, version %d.
// One serialize function per type, for serialize.h 1.11
// (mas-bandwidth/serialize): include serialize.h first. See WIRE.md,
// "Generated code".
#ifndef %s
#define %s

#include <stdint.h>
#include <string.h>

namespace %s {

]], name, program.fingerprint, program.version, guard, guard, ident(name))
  out[#out + 1] = G.N:declarations()
  out[#out + 1] = HELPERS
  local protos, bodies = {}, {}
  for _, t in ipairs(ctypes.order(program)) do
    local T = G.N:typename(t.name)
    protos[#protos + 1] = fmt("template <typename Stream> bool serialize (Stream &stream, %s &value);", T)
    local b = {}
    for _, f in ipairs(ctypes.fields(program, t)) do
      local fname = ident(f.name or "")
      local x = "value." .. fname
      b[#b + 1] = fmt("  // %s%s", f.name and (f.name .. ": ") or "", ctypes.wire(f))
      local ind = "  "
      if f.optional then
        b[#b + 1] = fmt("  serialize_bool(stream, value.has_%s);", fname)
        b[#b + 1] = fmt("  if (value.has_%s) {", fname)
        ind = "    "
      end
      serval(G, b, ind, f, x, "value.", fname, 0, T .. "_" .. fname)
      if f.optional then b[#b + 1] = "  }" end
    end
    bodies[#bodies + 1] = fmt("template <typename Stream> bool serialize (Stream &stream, %s &value) {\n"
      .. "  (void)stream; (void)value;\n%s\n  return true;\n}\n", T, concat(b, "\n"))
  end
  out[#out + 1] = concat(protos, "\n") .. "\n"
  out[#out + 1] = concat(bodies, "\n")
  out[#out + 1] = fmt("\n} // namespace %s\n\n#endif\n", ident(name))
  return concat(out)
end

setmetatable(M, { __call = function(_, ...) return M.generate(...) end })

return M
