-- bitwire.gen: code generators read the compiled program. What the code
-- does on the wire is checked by tools/gen_cross.lua (make test-gen), which
-- compiles and runs it; these specs cover the Lua side.
local bitwire = require "bitwire"
local H = require "spec.helpers"

-- Write 'files' (name -> text) to a new directory, build them with the
-- command 'build' (DIR stands for the directory) into DIR/main, run it and
-- return its output.
local function runin(files, build)
  local dir = os.tmpname()
  os.remove(dir)
  assert.is_true(os.execute("mkdir -p " .. dir))
  for file, text in pairs(files) do
    local f = assert(io.open(dir .. "/" .. file, "w"))
    f:write(text)
    f:close()
  end
  local p = io.popen(build:gsub("DIR", function() return dir end) .. " 2>&1 && "
    .. dir .. "/main")
  local out = p:read("a")
  local ok = p:close()
  os.execute("rm -rf " .. dir)
  assert(ok, out)
  return out
end

-- Compile the C that gen.c writes for schema 's' (as 'name') at -Werror,
-- with 'main' (C source) against build/libbitwire.a; run it and return its
-- output.
local function runc(s, name, main)
  local c = bitwire.gen.c(s, { name = name })
  return runin({ [name .. ".h"] = c.header, [name .. ".c"] = c.source, ["main.c"] = main },
    string.format("%s -std=c99 -Wall -Wextra -Wpedantic -Wshadow -Werror -Icore -IDIR "
      .. "-o DIR/main DIR/main.c DIR/%s.c build/libbitwire.a -lz -lm",
      os.getenv("CC") or "cc", name))
end

-- The same for the C++ gen.serialize_h writes, 'main' (C++ source) over
-- spec/fixtures/serialize_compat.h (serialize.h's macros on the core).
local function runcxx(s, name, main)
  return runin({ [name .. ".hpp"] = bitwire.gen.serialize_h(s, { name = name }),
                 ["main.cc"] = main },
    string.format("%s -std=c++11 -Wall -Wextra -Wpedantic -Wshadow -Werror -Icore "
      .. "-Ispec/fixtures -IDIR -o DIR/main DIR/main.cc build/libbitwire.a -lz -lm",
      os.getenv("CXX") or "c++"))
end

-- The head of a test program for generated header NAME: show(w, ok)
-- prints what 'w' holds in hex, or what refused it.

-- A C main that writes the value fill() makes as type 'T', shows the
-- bytes, reads them back and prints the bits read and whether they equal.
local function roundtripmain (T)
  return ([[
int main (void) {
  T v, back;
  uint8_t buf[64];
  bw_Writer w;
  bw_Reader r;
  const uint8_t *d;
  size_t n;
  fill(&v);
  bw_writerinit(&w, buf, sizeof(buf));
  show(&w, T_write(&w, &v));
  d = bw_writerdata(&w, &n);
  bw_readerinit(&r, d, n);
  n = T_read(&r, &back);
  printf("%d %d\n", (int)n, T_equal(&v, &back));
  return 0;
}
]]):gsub("%f[%w_]T%f[^%w_]", T):gsub("%f[%w_]T_", T .. "_")
end

local SHOW = [[
#include <stdio.h>
#include "NAME.h"
static void show (bw_Writer *w, int ok) {
  size_t n, i;
  const uint8_t *d;
  if (!ok) {
    printf("refused: %s\n", bw_codename(w->status));
    return;
  }
  d = bw_writerdata(w, &n);
  for (i = 0; i < n; i++) printf("%02x", d[i]);
  printf("\n");
}
]]

-- The same for C++ (namespace NAME): show(ws, ok).
local SHOWCXX = [[
#include <cstdio>
#include <cstring>
#include "serialize_compat.h"
#include "NAME.hpp"
static void show (serialize::WriteStream &ws, bool ok) {
  if (!ok) {
    std::printf("refused\n");
    return;
  }
  size_t n;
  const uint8_t *d = ws.GetData(&n);
  for (size_t i = 0; i < n; i++) std::printf("%02x", d[i]);
  std::printf("\n");
}
]]

local defs = {
  Vec3 = { {"x", "float", min = -1, max = 1, res = 0.01} },
  Thing = {
    {"int", "int", min = -5, max = 5},
    {"kind", "enum", values = {"door-2", "window"}},
    {"pos", "Vec3"},
    {"tags", "array", of = {"string", max = 4}, max = 3},
    {"name", "string", max = 8, optional = true},
  },
}

describe("bitwire.gen.c", function()
  local s = bitwire.schema(defs)
  local out = bitwire.gen.c(s, { name = "things" })

  it("returns the header and the source, named", function()
    assert.equal("things", out.name)
    assert.matches("#ifndef THINGS_H", out.header, 1, true)
    assert.matches('#include "things.h"', out.source, 1, true)
  end)

  it("states the fingerprint, the message ids and each type's bounds", function()
    assert.matches('THINGS_FINGERPRINT "' .. s:fingerprint() .. '"', out.header, 1, true)
    for i, name in ipairs(s:types()) do
      assert.matches(string.format("#define %s_ID %d", name, i - 1), out.header, 1, true)
      assert.matches(string.format("#define %s_MAXBITS %du", name, s:maxbits(name)),
        out.header, 1, true)
    end
  end)

  it("declares a struct per type with C names for every field", function()
    assert.matches("typedef struct Thing {", out.header, 1, true)
    assert.matches("int8_t int_;", out.header, 1, true)          -- keyword
    assert.matches("Thing_kind_door_2 = 0", out.header, 1, true) -- not an identifier
    assert.matches("char tags[3][5];", out.header, 1, true)
    assert.matches("bool has_name;", out.header, 1, true)
    assert.matches("Vec3 pos;", out.header, 1, true)
  end)

  it("declares the read, write, size and delta functions of each type", function()
    for _, f in ipairs { "bool Thing_write (bw_Writer *w, const Thing *v);",
                         "bool Thing_read (bw_Reader *r, Thing *v);",
                         "size_t Thing_bits (const Thing *v);",
                         "bool Thing_write_delta (bw_Writer *w, const Thing *v, const Thing *base);",
                         "bool Thing_read_delta (bw_Reader *r, Thing *v, const Thing *base);" } do
      assert.matches(f, out.header, 1, true)
    end
  end)

  it("reports read failures with the driver's field names", function()
    assert.matches('bw_genpath(err, "int")', out.source, 1, true)
    assert.matches('bw_genpath(err, "tags")', out.source, 1, true)
  end)

  it("refuses a field kind it does not know, naming it", function()
    local program = s:program()
    program.types[1].fields[1].kind = "hologram"
    local fake = { program = function() return program end }
    local ok, err = pcall(bitwire.gen.c, fake)
    assert.is_false(ok)
    assert.matches("hologram", err)
  end)

  it("holds an angle as the double the driver decodes, coded by the core", function()
    local a = bitwire.schema { Aim = { {"yaw", "angle", bits = 10, unit = "deg"} } }
    local c = bitwire.gen.c(a, { name = "aim" })
    assert.matches("double yaw;", c.header, 1, true)
    assert.matches("bw_genwriteangle(w, v->yaw, 360.0, 10)", c.source, 1, true)
    assert.matches("bw_angledecode((uint32_t)bw_readbits(r, 10), 360.0, 10)", c.source, 1, true)
    assert.matches("bitwire_serialize_angle(stream, value.yaw, 360.0, 10)",
      bitwire.gen.serialize_h(a), 1, true)
  end)

  it("sends relative fields in a delta by the core's differences, with their tiers",
    function()
    local m = bitwire.schema { Mover = {
      {"x", "float", min = -8, max = 8, res = 1 / 64, delta = "relative", tiers = {2, 6}},
      {"yaw", "angle", bits = 10, delta = "relative"},
      {"rot", "quat", bits = 9, delta = "relative", optional = true},
      {"xs", "sparse", of = {"float", min = 0, max = 1, res = 1 / 32, delta = "relative"},
       max = 4},
    } }
    local c = bitwire.gen.c(m, { name = "mover" })
    assert.matches("bw_genwritediff(w, &rel_Mover_x, base->x, v->x)", c.source, 1, true)
    assert.matches("bw_genreaddiff(r, &rel_Mover_yaw, base->yaw, &u)", c.source, 1, true)
    assert.matches("bw_genwritequatdiff(w, &rel_Mover_rot, base->rot, v->rot)", c.source, 1, true)
    assert.matches("bw_genreaddiff(r, &rel_Mover_xs, base->xs[i0], &u)", c.source, 1, true)
    assert.matches(".ntiers = 2, .tierbits = { 2, 6 }", c.source, 1, true)
    assert.matches(".ntiers = 4, .tierbits = { 3, 5, 7, 9 }", c.source, 1, true)
    assert.matches("delta relative, tiers {2, 6}", c.header, 1, true)
    -- the tier layout is the core's: no tier loop in the generated code
    assert.is_nil(c.source:find("bw_writediff", 1, true))
    -- serialize.h has no deltas: the values go whole as before
    assert.matches("serialize_compressed_float(stream, value.x", bitwire.gen.serialize_h(m),
      1, true)
  end)

  it("reads a delta into its own baseline ('v' may be 'base') as into another", function()
    -- the baseline lacks the optional record, has fewer elements and
    -- other slots: its flag, count and presence mask must be read before
    -- the delta's overwrite them
    local c = bitwire.schema {
      Pos = { { "x", "int", min = 0, max = 255 } },
      T = { { "p", "Pos", optional = true },
            { "a", "array", of = "Pos", max = 4 },
            { "s", "sparse", of = "Pos", max = 8 } },
    }
    local base = { a = { { x = 1 } }, s = { [2] = { x = 3 } } }
    local v = { p = { x = 7 }, a = { { x = 1 }, { x = 9 }, { x = 10 } },
                s = { [2] = { x = 3 }, [5] = { x = 4 } } }
    local function bytes(str)
      return (str:gsub(".", function (ch) return string.byte(ch) .. ", " end))
    end
    local got = runc(c, "inplace", SHOW:gsub("NAME", "inplace") .. string.format([[
int main (void) {
  static const uint8_t b[] = { %s }, d[] = { %s };
  static T base, v;
  uint8_t buf[64];
  bw_Reader r;
  bw_Writer w;
  bw_readerinit(&r, b, sizeof(b));
  if (!T_read(&r, &base)) return 1;
  bw_readerinit(&r, d, sizeof(d));
  if (!T_read_delta(&r, &v, &base)) return 1;
  bw_writerinit(&w, buf, sizeof(buf));
  show(&w, T_write(&w, &v));
  bw_readerinit(&r, d, sizeof(d));
  if (!T_read_delta(&r, &base, &base)) return 1;
  bw_writerinit(&w, buf, sizeof(buf));
  show(&w, T_write(&w, &base));
  return 0;
}
]], bytes(c:encode("T", base)), bytes(c:encode("T", v, { baseline = base }))))
    local want = H.tohex(c:encode("T", v))
    assert.equal(want .. "\n" .. want .. "\n", got)
  end)

  it("takes a NULL err in every reader that has one, as nullerr_read_id does", function()
    -- the dispatch table's read and read_delta pass err through to them
    local c = bitwire.schema { T = { { "x", "int", min = 0, max = 1000 },
                                     { "s", "string", max = 8 } } }
    local bytes = c:encode("T", { x = 7, s = "abc" })
    local got = runc(c, "nullerr", string.format([[
#include <stdio.h>
#include "nullerr.h"
int main (void) {
  static const uint8_t bytes[] = { %s };
  T v, base;
  bw_Reader r;
  unsigned id;
  memset(&base, 0, sizeof(base));
  bw_readerinit(&r, bytes, sizeof(bytes));
  printf("%%d", T_read_err(&r, &v, NULL));
  bw_readerinit(&r, bytes, 2);   /* cut short */
  printf(" %%d", T_read_err(&r, &v, NULL));
  printf(" %%d", (int)r.status);
  bw_readerinit(&r, bytes, 1);
  printf(" %%d", nullerr_types[0].read(&r, &v, NULL));
  bw_readerinit(&r, bytes, 0);
  printf(" %%d", T_read_delta_err(&r, &v, &base, NULL));
  bw_readerinit(&r, bytes, 0);
  printf(" %%d", nullerr_types[0].read_delta(&r, &v, &base, NULL));
  bw_readerinit(&r, bytes, 0);   /* one message: its id takes no bits */
  printf(" %%d\n", nullerr_read_id(&r, &id, NULL));
  return 0;
}
]], (bytes:gsub(".", function (ch) return string.byte(ch) .. ", " end))))
    assert.equal("1 0 1 0 0 0 1\n", got)
  end)

  it("clamps an int with clamp = true to the nearest end, as the driver does", function()
    local c = bitwire.schema { T = {
      { "hp", "int", min = 0, max = 100, clamp = true },
      { "d", "int", min = -5, max = 5, clamp = true },
      { "lo", "int", min = 10, max = 20, clamp = true },
      { "a", "array", of = { "int", min = -3, max = 3, clamp = true }, max = 4 },
      { "o", "int", min = 0, max = 9, clamp = true, optional = true } } }
    local v = { hp = 200, d = -100, lo = 3, a = { -100, 100, 2 }, o = 250 }
    local base = { hp = 100, d = -5, lo = 10, a = { -3, 3, 2 }, o = 9 }
    local got = runc(c, "clamp", SHOW:gsub("NAME", "clamp") .. [[
static void put (const T *v, const T *base) {
  uint8_t buf[64];
  bw_Writer w;
  bw_writerinit(&w, buf, sizeof(buf));
  show(&w, base ? T_write_delta(&w, v, base) : T_write(&w, v));
}
int main (void) {
  T v = { 200, -100, 3, 3, { -100, 100, 2, 0 }, true, 250 };
  T base = { 100, -5, 10, 3, { -3, 3, 2, 0 }, true, 9 };
  put(&v, NULL);
  put(&v, &base);
  printf("%d\n", T_equal(&v, &base));
  return 0;
}
]])
    assert.equal(H.tohex(c:encode("T", v)) .. "\n"
      .. H.tohex(c:encode("T", v, { baseline = base })) .. "\n1\n", got)
  end)

  it("sends a float32 or float64 in a delta when its bits change, as the driver", function()
    local c = bitwire.schema { T = { {"f", "float32"}, {"d", "float64"},
                                     {"a", "array", of = {"float32"}, count = 2} } }
    local v, base = { f = -0.0, d = 0.0, a = { 1.5, -0.0 } }, { f = 0.0, d = -0.0, a = { 1.5, 0.0 } }
    local got = runc(c, "ieee", SHOW:gsub("NAME", "ieee") .. [[
int main (void) {
  T v = { -0.0f, 0.0, { 1.5f, -0.0f } }, base = { 0.0f, -0.0, { 1.5f, 0.0f } };
  uint8_t buf[64];
  bw_Writer w;
  bw_writerinit(&w, buf, sizeof(buf));
  show(&w, T_write_delta(&w, &v, &base));
  printf("%d\n", T_equal(&v, &base));
  return 0;
}
]])
    assert.equal(H.tohex(c:encode("T", v, { baseline = base })) .. "\n0\n", got)
  end)

  it("checks and clamps an int up to 2^63 - 1 held in a uint64_t", function()
    -- [0, 2^63 - 1] and [5, 2^63 - 1] are uint64_t in C, which holds more
    local c = bitwire.schema { T = {
      { "n", "int", min = 0, max = math.maxinteger },
      { "m", "int", min = 5, max = math.maxinteger, clamp = true } } }
    local got = runc(c, "top", SHOW:gsub("NAME", "top") .. [[
static void put (const T *v) {
  uint8_t buf[32];
  bw_Writer w;
  bw_writerinit(&w, buf, sizeof(buf));
  show(&w, T_write(&w, v));
}
int main (void) {
  T past = { UINT64_C(1) << 63, 7 };
  T top = { 1, UINT64_MAX };
  put(&past);
  put(&top);
  return 0;
}
]])
    assert.equal("refused: range\n"
      .. H.tohex(c:encode("T", { n = 1, m = math.maxinteger })) .. "\n", got)
  end)

  it("refuses names that would meet in C, naming both sources", function()
    local T = function(fields) return { T = fields } end
    for _, case in ipairs {
      { T { {"weapon", "int", min = 0, max = 3, optional = true}, {"has_weapon", "bool"} },
        "field 'T.weapon' and field 'T.has_weapon' both become the C name 'has_weapon' in struct T" },
      { T { {"items", "array", of = {"bool"}, max = 3}, {"items_count", "int", min = 0, max = 3} },
        "field 'T.items' and field 'T.items_count' both become the C name 'items_count' in struct T" },
      { T { {"a-b", "bool"}, {"a_b", "bool"} },
        "field 'T.a-b' and field 'T.a_b' both become the C name 'a_b' in struct T" },
      { T { {"kind", "enum", values = {"a-b", "a_b"}} },
        "value 'a-b' of field 'T.kind' and value 'a_b' of field 'T.kind' both become the C name 'T_kind_a_b'" },
      { T { {"kind", "enum", values = {"a_b"}}, {"kind_a", "enum", values = {"b"}} },
        "value 'a_b' of field 'T.kind' and value 'b' of field 'T.kind_a' both become the C name 'T_kind_a_b'" },
      { { T = { {"kind", "enum", values = {"x"}} }, T_kind = { {"y", "bool"} } },
        "type 'T_kind' and the enum of field 'T.kind' both become the C name 'T_kind'" },
      { T { {"write", "enum", values = {"x"}} },
        "type 'T' and the enum of field 'T.write' both become the C name 'T_write'" },
      { { X = { {"y", "bool"} }, write_X = { {"y", "bool"} } },
        "type 'X' and type 'write_X' both become the C name 'write_X'" },
      { { v = { {"y", "bool"} } },
        "a parameter of the generated functions and type 'v' both become the C name 'v'" },
    } do
      local ok, err = pcall(bitwire.gen.c, bitwire.schema(case[1]))
      assert.is_false(ok)
      assert.equal("bitwire.gen: " .. case[2], err)
    end
  end)

  -- A record of one bool field, by type name.
  local function one(tname, fname) return { [tname] = { { fname or "y", "bool" } } } end

  it("refuses names that C, its headers or the runtime hold, saying why", function()
    local lib, std = "a C library name", "names C reserves (__ or _ and a capital letter)"
    local rt = "the generated code's runtime (bw_ and BW_ names)"
    for _, case in ipairs {
      { one "size_t", "type 'size_t' clashes with " .. lib .. " ('size_t')" },
      { one "uint32_t", "type 'uint32_t' clashes with " .. lib .. " ('uint32_t')" },
      { one "int64_t", "type 'int64_t' clashes with " .. lib .. " ('int64_t')" },
      { one "int_fast8_t", "type 'int_fast8_t' clashes with " .. lib .. " ('int_fast8_t')" },
      { one "FILE", "type 'FILE' clashes with " .. lib .. " ('FILE')" },
      { one "NULL", "type 'NULL' clashes with " .. lib .. " ('NULL')" },
      { one "INT32_MAX", "type 'INT32_MAX' clashes with " .. lib .. " ('INT32_MAX')" },
      { one "memcpy", "type 'memcpy' clashes with " .. lib .. " ('memcpy')" },
      -- the headers a program beside the generated code is bound to include
      { one "exit", "type 'exit' clashes with " .. lib .. " ('exit')" },
      { one "malloc", "type 'malloc' clashes with " .. lib .. " ('malloc')" },
      { one "printf", "type 'printf' clashes with " .. lib .. " ('printf')" },
      { one "bw_Writer", "type 'bw_Writer' clashes with " .. rt .. " ('bw_Writer')" },
      { one "BW_OK", "type 'BW_OK' clashes with " .. rt .. " ('BW_OK')" },
      { one "bw", "type 'bw' clashes with " .. rt .. " ('bw_write')" },
      { one "_Pos", "type '_Pos' clashes with " .. std .. " ('_Pos')" },
      { one "__pos", "type '__pos' clashes with " .. std .. " ('__pos')" },
      { one("T", "NULL"), "field 'T.NULL' clashes with " .. lib .. " ('NULL' in struct T)" },
      { one("T", "errno"), "field 'T.errno' clashes with " .. lib .. " ('errno' in struct T)" },
      { one("T", "stdin"), "field 'T.stdin' clashes with " .. lib .. " ('stdin' in struct T)" },
      { one("T", "size_t"), "field 'T.size_t' clashes with " .. lib .. " ('size_t' in struct T)" },
      { one("T", "EOF"), "field 'T.EOF' clashes with " .. lib .. " ('EOF' in struct T)" },
      { one("T", "BW_MAXPATH"), "field 'T.BW_MAXPATH' clashes with " .. rt
        .. " ('BW_MAXPATH' in struct T)" },
      { one("T", "_Bool"), "field 'T._Bool' clashes with " .. std .. " ('_Bool' in struct T)" },
      -- a name of other bytes: how it became a reserved one
      { one("T", "été"), "field 'T.été' clashes with " .. std .. " ('__t__' in struct T); in C,"
        .. " bytes other than letters, digits and _ become _" },
      { one "u", "a local of the generated functions and type 'u' both become the C name 'u'" },
      { one "i0", "a local of the generated functions and type 'i0' both become the C name 'i0'" },
      -- the delta writer's flags and sparse masks (-Wshadow over a type)
      { one "changed", "a local of the generated functions and type 'changed' both become"
        .. " the C name 'changed'" },
      { one "changed_i0", "a local of the generated functions and type 'changed_i0' both"
        .. " become the C name 'changed_i0'" },
      { { T = { { "s", "sparse", of = { "bool" }, max = 3 } }, sent_T_s = { { "y", "bool" } } },
        "type 'sent_T_s' and field 'T.s' both become the C name 'sent_T_s'" },
    } do
      local ok, err = pcall(bitwire.gen.c, bitwire.schema(case[1]))
      assert.is_false(ok)
      assert.equal("bitwire.gen: " .. case[2], err)
    end
    -- what a prefix makes is checked as any name
    local ok, err = pcall(bitwire.gen.c, bitwire.schema(one "t"), { prefix = "size_" })
    assert.is_false(ok)
    assert.equal("bitwire.gen: type 't' clashes with " .. lib .. " ('size_t')", err)
    ok, err = pcall(bitwire.gen.c, bitwire.schema(one "Pos"), { prefix = "bw_" })
    assert.is_false(ok)
    assert.equal("bitwire.gen: type 'Pos' clashes with " .. rt .. " ('bw_Pos')", err)
    ok, err = pcall(bitwire.gen.c, bitwire.schema(one "Pos"), { name = "bw" })
    assert.is_false(ok)
    assert.matches("a name made of --name 'bw' clashes with " .. rt, err, 1, true)
  end)

  it("refuses a prefix that is not a C identifier", function()
    local t = bitwire.schema(one "T")
    for _, bad in ipairs { "9x", "a-b", "a b", "x.", 5 } do
      for _, gen in ipairs { bitwire.gen.c, bitwire.gen.serialize_h,
                             require("bitwire.gen.blob").generate } do
        local ok, err = pcall(gen, t, { prefix = bad })
        assert.is_false(ok)
        assert.equal("bitwire.gen: prefix '" .. tostring(bad) .. "' is not a C identifier"
          .. " (letters, digits and _, not starting with a digit)", err)
      end
    end
    assert.matches("typedef struct _9T {", bitwire.gen.c(t, { prefix = "_9" }).header, 1, true)
  end)

  it("builds at -Werror, beside the usual headers, with names near the reserved ones", function()
    -- near library, runtime and keyword names; fields may be library
    -- functions (members are not file scope)
    local near = bitwire.schema {
      size = { {"memcpy", "int", min = 0, max = 9}, {"index", "bool"}, {"bw", "bool"},
               {"size", "uint", bits = 3}, {"errno_x", "bool"}, {"_x", "bool"},
               {"exit", "bool"}, {"printf", "bool"} },
      Writer = { {"file", "size"}, {"NULL_", "bool"}, {"double", "bool"},
                 {"bwx", "enum", values = {"BW_OK", "NULL", "size_t"}} },
      Reader = { {"w", "Writer"}, {"log", "float", min = 0, max = 1, res = 0.5} },
      bwt = { {"t", "bool"} },
    }
    local v = { w = { file = { memcpy = 7, index = true, bw = false, size = 5, errno_x = true,
      _x = false, exit = true, printf = false }, NULL_ = true, double = false, bwx = "size_t" }, log = 0.5 }
    assert.equal(H.tohex(near:encode("Reader", v)) .. "\n", runc(near, "near",
      "#include <errno.h>\n#include <limits.h>\n#include <math.h>\n#include <stdlib.h>\n"
      .. SHOW:gsub("NAME", "near") .. [[
#include <string.h>
int main (void) {
  Reader v;
  uint8_t buf[32];
  bw_Writer w;
  memset(&v, 0, sizeof(v));
  v.w.file.memcpy = 7;
  v.w.file.index = true;
  v.w.file.size = 5;
  v.w.file.errno_x = true;
  v.w.file.exit = true;
  v.w.NULL_ = true;
  v.w.bwx = Writer_bwx_size_t;
  v.log = 0.5f;
  bw_writerinit(&w, buf, sizeof(buf));
  show(&w, Reader_write(&w, &v));
  return 0;
}
]]))
  end)

  it("renames what C11's headers, C++ or GNU C make macros or keywords", function()
    -- static_assert (assert.h), alignof (stdalign.h), and/not (iso646.h),
    -- linux and unix (GNU C predefines them as 1) get a trailing _ as
    -- keywords do; 'std' is serialize-h's own
    local k = bitwire.schema {
      unix = { {"static_assert", "int", min = 0, max = 9}, {"alignof", "bool"},
               {"linux", "bool"}, {"and", "bool"}, {"not", "bool"} },
    }
    local c = bitwire.gen.c(k, { name = "kw" })
    assert.matches("typedef struct unix_ {", c.header, 1, true)
    assert.equal(H.tohex(k:encode("unix", { static_assert = 7, alignof = true, linux = false,
      ["and"] = true, ["not"] = false })) .. "\n", runin({ ["kw.h"] = c.header,
      ["kw.c"] = c.source, ["main.c"] = "#include <assert.h>\n#include <stdalign.h>\n"
      .. "#include <iso646.h>\n" .. SHOW:gsub("NAME", "kw") .. [[
#include <string.h>
int main (void) {
  unix_ v;
  uint8_t buf[8];
  bw_Writer w;
  memset(&v, 0, sizeof(v));
  v.static_assert_ = 7;
  v.alignof_ = true;
  v.and_ = true;
  bw_writerinit(&w, buf, sizeof(buf));
  show(&w, unix__write(&w, &v));
  return 0;
}
]] }, string.format("%s -std=gnu11 -Wall -Wextra -Wpedantic -Wshadow -Werror -Icore -IDIR "
      .. "-o DIR/main DIR/main.c DIR/kw.c build/libbitwire.a -lz -lm", os.getenv("CC") or "cc")))
    local ok, err = pcall(bitwire.gen.serialize_h,
      bitwire.schema { std = { {"x", "bool"} } }, { name = "s" })
    assert.is_false(ok)
    assert.matches("type 'std'", err, 1, true)
  end)

  it("renames C++'s casts and C++20's and C23's keywords", function()
    -- the header of gen c and of blobs is C++ too: a member named as a
    -- keyword there does not compile
    local words = { "static_cast", "const_cast", "dynamic_cast", "reinterpret_cast",
                    "concept", "requires", "co_await", "co_yield", "co_return",
                    "consteval", "constinit", "typeof_unqual" }
    local d = { T = {} }
    for i, w in ipairs(words) do d.T[i] = { w, "int", min = 0, max = 9 } end
    local k = bitwire.schema(d)
    local c = bitwire.gen.c(k, { name = "kw" })
    for _, w in ipairs(words) do assert.matches(" " .. w .. "_;", c.header, 1, true) end
    assert.equal("ok\n", runin({ ["kw.h"] = c.header, ["kw_blob.h"] = bitwire.gen.blob(k,
      { prefix = "b_" }), ["main.cc"] = [[
#include <stdio.h>
#include "kw.h"
#include "kw_blob.h"
int main (void) {
  T v;
  b_T r;
  v.static_cast_ = 1;
  r.co_await_ = 2;
  printf("%s\n", v.static_cast_ + r.co_await_ == 3 ? "ok" : "no");
  return 0;
}
]] }, string.format("%s -std=c++20 -Wall -Wextra -Wpedantic -Werror -Icore -IDIR "
      .. "-o DIR/main DIR/main.cc", os.getenv("CXX") or "c++")))
  end)

  it("compiles deltas of fixed arrays whose elements hold no elements", function()
    -- the equality helpers of such a field compare nothing: their
    -- parameters must still count as used under -Wextra -Werror
    local z = bitwire.schema { T = { { "g", "array", count = 2, of = { "array", count = 0, of = "bool" } },
                                     { "n", "int", min = 0, max = 9 } } }
    assert.equal(H.tohex(z:encode("T", { g = { {}, {} }, n = 7 })) .. "\n",
      runc(z, "zero", SHOW:gsub("NAME", "zero") .. [[
#include <string.h>
int main (void) {
  T v;
  uint8_t buf[8];
  bw_Writer w;
  memset(&v, 0, sizeof(v));
  v.n = 7;
  bw_writerinit(&w, buf, sizeof(buf));
  show(&w, T_write(&w, &v));
  return 0;
}
]]))
  end)

  it("declares members by tag, so C++ takes a member named like its type", function()
    -- C++ refuses "Pos Pos;" in a struct (the member changes what Pos
    -- means there); "struct Pos Pos;" is the same C and valid C++
    local m = bitwire.schema {
      Pos = { {"x", "int", min = 0, max = 9} },
      Thing = { {"Pos", "Pos"}, {"kind", "enum", values = {"a", "b"}},
                {"Thing_kind", "int", min = 0, max = 3},
                {"Pos_list", "array", of = "Pos", max = 3},
                {"Thing_grid_item", "int", min = 0, max = 1},
                {"grid", "array", of = {"array", of = "bool", max = 2}, max = 2} },
    }
    local c = bitwire.gen.c(m, { name = "tagged" })
    assert.matches("struct Pos Pos;", c.header, 1, true)
    assert.matches("enum Thing_kind kind;", c.header, 1, true)
    local v = { Pos = { x = 7 }, kind = "b", Thing_kind = 2, Pos_list = { { x = 1 } },
                Thing_grid_item = 1, grid = { { true } } }
    assert.equal(H.tohex(m:encode("Thing", v)) .. "\n", runin({ ["tagged.h"] = c.header,
      ["tagged.c"] = c.source, ["main.cc"] = SHOW:gsub("NAME", "tagged") .. [[
#include <string.h>
int main (void) {
  Thing v;
  uint8_t buf[16];
  bw_Writer w;
  memset(&v, 0, sizeof(v));
  v.Pos.x = 7;
  v.kind = Thing_kind_b;
  v.Thing_kind = 2;
  v.Pos_list_count = 1;
  v.Pos_list[0].x = 1;
  v.Thing_grid_item = 1;
  v.grid_count = 1;
  v.grid[0].v_count = 1;
  v.grid[0].v[0] = true;
  bw_writerinit(&w, buf, sizeof(buf));
  show(&w, Thing_write(&w, &v));
  return 0;
}
]] }, string.format("%s -std=c99 -Wall -Wextra -Wpedantic -Werror -Icore -IDIR -c "
      .. "-o DIR/tagged.o DIR/tagged.c && %s -std=c++11 -Wall -Wextra -Wpedantic -Wshadow "
      .. "-Werror -Icore -IDIR -o DIR/main DIR/main.cc DIR/tagged.o build/libbitwire.a -lz -lm",
      os.getenv("CC") or "cc", os.getenv("CXX") or "c++")))
  end)

  it("names an element array's enum apart from the element struct", function()
    local n = bitwire.schema { T = {
      {"grid", "array", of = {"array", of = {"enum", values = {"a", "b"}}, max = 2}, max = 2},
      {"s", "sparse", of = {"array", of = {"enum", values = {"a"}}, max = 2}, max = 3} } }
    local c = bitwire.gen.c(n, { name = "grid" })
    assert.matches("typedef struct T_grid_item {", c.header, 1, true)
    assert.matches("T_grid_item_enum_b = 1", c.header, 1, true)
    local v = { grid = { { "b", "a" }, {} }, s = { [2] = { "a" } } }
    assert.equal(H.tohex(n:encode("T", v)) .. "\n", runc(n, "grid", SHOW:gsub("NAME", "grid") .. [[
#include <string.h>
int main (void) {
  T v;
  uint8_t buf[32];
  bw_Writer w;
  memset(&v, 0, sizeof(v));
  v.grid_count = 2;
  v.grid[0].v_count = 2;
  v.grid[0].v[0] = T_grid_item_enum_b;
  v.grid[0].v[1] = T_grid_item_enum_a;
  v.s_present[0] = 2;
  v.s[1].v_count = 1;
  bw_writerinit(&w, buf, sizeof(buf));
  show(&w, T_write(&w, &v));
  return 0;
}
]]))
  end)

  it("writes and reads arrays of fixed-count arrays, of records and of scalars", function()
    local g = bitwire.schema { P = { {"x", "int", min = 0, max = 9} }, M = {
      {"grid", "array", of = {"array", of = "P", count = 2}, count = 3},
      {"cells", "array", of = {"array", of = {"int", min = 0, max = 3}, count = 2}, max = 3},
      {"s", "sparse", of = {"array", of = {"bool"}, count = 2}, max = 4} } }
    local want = H.tohex(g:encode("M", {
      grid = { { {x = 1}, {x = 2} }, { {x = 3}, {x = 4} }, { {x = 5}, {x = 6} } },
      cells = { {1, 2}, {3, 0} }, s = { [3] = { true, false } } })) .. "\n"
    -- element i of an array of arrays is x[i].v[...], fixed or not
    local fill = [[
static void fill (M *v) {
  int i, j;
  memset(v, 0, sizeof(*v));
  for (i = 0; i < 3; i++)
    for (j = 0; j < 2; j++) v->grid[i].v[j].x = (uint8_t)(2 * i + j + 1);
  v->cells_count = 2;
  v->cells[0].v[0] = 1;
  v->cells[0].v[1] = 2;
  v->cells[1].v[0] = 3;
  v->s_present[0] = 4;  /* slot 3 */
  v->s[2].v[0] = true;
}
]]
    local c = bitwire.gen.c(g, { name = "grids" })
    assert.matches("typedef struct M_grid_item {\n  /* array of 2 P */\n  struct P v[2];",
      c.header, 1, true)
    assert.equal(want .. "1 1\n", runc(g, "grids", SHOW:gsub("NAME", "grids")
      .. "#include <string.h>\n" .. fill .. roundtripmain("M")))
    -- serialize.h: written, then read back and written again
    assert.equal(want .. want, runcxx(g, "grids", SHOWCXX:gsub("NAME", "grids")
      .. "using namespace grids;\n" .. fill .. [[
int main () {
  static M v, back;
  static uint8_t buf[64], again[64];
  size_t n;
  fill(&v);
  serialize::WriteStream ws(buf, sizeof(buf));
  show(ws, grids::serialize(ws, v));
  const uint8_t *d = ws.GetData(&n);
  serialize::ReadStream rs(d, n);
  if (!grids::serialize(rs, back)) return 1;
  serialize::WriteStream ws2(again, sizeof(again));
  show(ws2, grids::serialize(ws2, back));
  return 0;
}
]]))
  end)

  it("keeps a sparse field's index tiers apart from its tiered elements' tiers", function()
    -- both tables are the field's: one name for both sent the elements
    -- in the index tiers
    local g = bitwire.schema { T = {
      {"k", "sparse", of = {"tiered", min = 0, max = 600, tiers = {1, 3, 6, 10}}, max = 5,
       encoding = "index", tiers = "article"} } }
    local want = H.tohex(g:encode("T", { k = { [2] = 500, [4] = 7 } })) .. "\n"
    local fill = [[
static void fill (T *v) {
  memset(v, 0, sizeof(*v));
  v->k_present[0] = 10;  /* slots 2 and 4 */
  v->k[1] = 500;
  v->k[3] = 7;
}
]]
    assert.equal(want .. "1 1\n", runc(g, "sptiers", SHOW:gsub("NAME", "sptiers")
      .. "#include <string.h>\n" .. fill .. roundtripmain("T")))
    assert.equal(want, runcxx(g, "sptiers", SHOWCXX:gsub("NAME", "sptiers")
      .. "using namespace sptiers;\n" .. fill .. [[
int main () {
  static T v;
  static uint8_t buf[64];
  fill(&v);
  serialize::WriteStream ws(buf, sizeof(buf));
  show(ws, sptiers::serialize(ws, v));
  return 0;
}
]]))
  end)

  it("builds at -Werror for empty records, align or check alone, and arrays of 0", function()
    local e = bitwire.schema(dofile("spec/fixtures/gen/empty.lua"))
    local want = {}
    for _, name in ipairs(e:types()) do   -- a zeroed struct: counts 0, optionals absent
      local v = name == "Zero" and { b = "", a = {}, bv = "", av = {}, s = "", k = {}, p = {},
        ps = {} } or {}
      want[#want + 1] = H.tohex(e:encode(name, v)) .. "\n"
    end
    assert.equal(table.concat(want), runc(e, "empty", SHOW:gsub("NAME", "empty") .. [[
int main (void) {
  static uint8_t zero[1024];
  size_t t;
  for (t = 0; t < EMPTY_NTYPES; t++) {
    uint8_t buf[64];
    bw_Writer w;
    bw_writerinit(&w, buf, sizeof(buf));
    if (empty_types[t].size > sizeof(zero)) return 1;
    show(&w, empty_types[t].write(&w, zero));
  }
  return 0;
}
]]))
  end)

  -- a uint8_t count of max 255 is never past it: a test that it is, or a
  -- cap to it, is one -Wtype-limits (in -Wextra) warns of
  it("builds at -Werror for counts whose C type stops at their max", function()
    local c = bitwire.schema { W = {
      { "a", "array", of = { "bool" }, max = 255 },
      { "b", "bytes", max = 65535 },
      { "c", "array", of = { "array", of = { "int", min = 0, max = 3 }, max = 255 }, max = 2 },
      { "d", "array", of = { "bytes", max = 255 }, max = 1 },
      { "e", "string", max = 255 } } }
    local want = H.tohex(c:encode("W", { a = {}, b = "", c = {}, d = {}, e = "" })) .. "\n"
    assert.equal(want .. "1\n", runc(c, "capped", SHOW:gsub("NAME", "capped") .. [[
int main (void) {
  static W v, back;
  uint8_t buf[64];
  bw_Writer w;
  bw_Reader r;
  bw_writerinit(&w, buf, sizeof(buf));
  show(&w, W_write_delta(&w, &v, &back));
  bw_writerinit(&w, buf, sizeof(buf));
  show(&w, W_write(&w, &v));
  bw_readerinit(&r, buf, sizeof(buf));
  printf("%d\n", W_read(&r, &back) && W_equal(&v, &back));
  return 0;
}
]]):match("\n(.*)$"))
  end)

  it("refuses a struct too large for C, before a length wraps", function()
    -- a string of max 2^63 - 1 once made "char s[-9223372036854775808]";
    -- fields and nesting that add up past a C object are refused as well
    local function refused(desc, field)
      local sc = bitwire.schema(desc)
      for _, g in ipairs { bitwire.gen.c, bitwire.gen.serialize_h } do
        local ok, err = pcall(g, sc, { name = "big" })
        assert.is_false(ok)
        assert.matches("field '" .. field .. "' can make struct T larger than 2147483647 bytes",
          err, 1, true)
      end
    end
    refused({ T = { { "s", "string", max = math.maxinteger } } }, "T.s")
    refused({ T = { { "b", "bytes", max = 1 << 40 } } }, "T.b")
    refused({ T = { { "a", "string", max = 1 << 30 }, { "b", "string", max = 1 << 30 } } }, "T.b")
    refused({ U = { { "a", "array", count = 1 << 20, of = "bool" } },
              T = { { "u", "array", max = 1 << 12, of = { "array", count = 2, of = "U" } } } },
            "T.u")
    refused({ T = { { "sp", "sparse", max = 4294967294, of = { "bool" } } } }, "T.sp")
    -- a large struct below the bound is written
    local ok = pcall(bitwire.gen.c, bitwire.schema { T = { { "s", "string", max = 1 << 24 } } },
      { name = "big" })
    assert.is_true(ok)
  end)

  it("writes code for the version asked for", function()
    local v3 = bitwire.schema(dofile("spec/fixtures/defs/game_v3.lua"))
    local now = bitwire.gen.c(v3).header
    local old = bitwire.gen.c(v3, { version = 1 }).header
    assert.matches("uint8_t shield;", now, 1, true)
    assert.is_nil(now:find("legacy", 1, true))
    assert.matches("bool legacy;", old, 1, true)
    assert.is_nil(old:find("shield", 1, true))
    -- past the highest version a field names, the layout is that one's,
    -- as s:encode takes it; the code says the version it speaks
    local later = bitwire.gen.c(v3, { version = 9 }).header
    assert.matches("#define MESSAGES_VERSION 9\n", later, 1, true)
    assert.equal(now, (later:gsub("VERSION 9", "VERSION 3"):gsub("version 9%.", "version 3.")))
    local max = require("bitwire.core").limits.version
    for _, bad in ipairs { -1, max + 1, 1.5, "2" } do
      local ok, err = pcall(bitwire.gen.c, v3, { version = bad })
      assert.is_false(ok)
      assert.matches("version must be an integer in [0, " .. max .. "]", err, 1, true)
    end
  end)

  it("refuses an option it does not take, as every options table is checked", function()
    local blob = require "bitwire.gen.blob"
    for who, gen in pairs { ["bitwire.gen.c"] = bitwire.gen.c,
                            ["bitwire.gen.serialize_h"] = bitwire.gen.serialize_h,
                            ["bitwire.gen.blob"] = blob } do
      local ok, err = pcall(function () local text = gen(s, { nam = "x" }); return text end)
      assert.is_false(ok)
      assert.matches("11%-gen_spec%.lua:%d+: " .. who:gsub("%.", "%%.") .. ": unknown option 'nam'", err)
      assert.has_error(function () gen(s, 5) end, who .. ": options must be a table, got number")
    end
    assert.truthy(bitwire.gen.c(s, { name = "x", prefix = "p", version = 0 }).header)
    assert.truthy(blob(s, { prefix = "p", version = 0, guard = "G_H" }))
  end)

  it("adds nothing to _G", function()
    local before = {}
    for k in pairs(_G) do before[k] = true end
    bitwire.gen.c(s)
    bitwire.gen.serialize_h(s)
    for k in pairs(_G) do assert.is_true(before[k], k) end
  end)
end)

describe("bitwire.gen.serialize_h", function()
  local s = bitwire.schema(defs)
  local hpp = bitwire.gen.serialize_h(s, { name = "things" })

  it("writes serialize.h calls in field order", function()
    local body = hpp:match("bool serialize %(Stream &stream, Thing &value%) {(.-)\n}")
    local a = body:find("bitwire_serialize_wide(stream, value.int_", 1, true)
      or body:find("serialize_int(stream, value.int_", 1, true)
    local b = body:find("value.kind", 1, true)
    local c = body:find("serialize(stream, value.pos)", 1, true)
    local d = body:find("serialize_string(stream, value.tags[i0], 5)", 1, true)
    local e = body:find("serialize_bool(stream, value.has_name)", 1, true)
    assert.truthy(a and b and c and d and e)
    assert.is_true(a < b and b < c and c < d and d < e)
  end)

  it("clamps an int with clamp = true, and refuses one out of range without, as the driver",
    function()
    local c = bitwire.schema {
      T = { {"hp", "int", min = 0, max = 100, clamp = true},
            {"d", "int", min = -5, max = 5, clamp = true},
            {"w", "int", min = -(1 << 40), max = 1 << 40, clamp = true},   -- not int32
            {"a", "array", of = {"int", min = -3, max = 3, clamp = true}, max = 4},
            {"s", "sparse", of = {"int", min = 10, max = 20, clamp = true}, max = 3},
            {"o", "int", min = 0, max = 9, clamp = true, optional = true} },
      N = { {"n", "int", min = 0, max = 100} },
      W = { {"big", "int", min = 0, max = 1 << 40} } }
    local v = { hp = 200, d = -100, w = -(1 << 41), a = { -100, 100, 2 }, s = { [2] = 3 },
                o = 250 }
    assert.equal(H.tohex(c:encode("T", v)) .. "\nrefused\nrefused\n",
      runcxx(c, "clamp", SHOWCXX:gsub("NAME", "clamp") .. [[
template <typename V> static void put (V &v) {
  static uint8_t buf[64];
  serialize::WriteStream ws(buf, sizeof(buf));
  show(ws, clamp::serialize(ws, v));
}
int main () {
  static clamp::T t;
  static clamp::N n;
  static clamp::W w;
  t.hp = 200;
  t.d = -100;
  t.w = -(INT64_C(1) << 41);
  t.a_count = 3;
  t.a[0] = -100;
  t.a[1] = 100;
  t.a[2] = 2;
  t.s_present[0] = 2;  /* slot 2 */
  t.s[1] = 3;
  t.has_o = true;
  t.o = 250;
  put(t);
  n.n = 200;
  put(n);
  w.big = (UINT64_C(1) << 40) + 7;  /* fits its 41 bits, past max */
  put(w);
  return 0;
}
]]))
  end)

  it("gives serialize_compressed_float a resolution with the same steps", function()
    assert.matches("serialize_compressed_float(stream, value.x, -1.0f, 1.0f, ", hpp, 1, true)
  end)

  it("refuses the names of its own functions and C's, and builds beside them", function()
    for _, case in ipairs {
      { "serialize", "a name of the generated functions and type 'serialize' both become"
        .. " the C name 'serialize'" },
      { "stream", "a name of the generated functions and type 'stream' both become"
        .. " the C name 'stream'" },
      { "bitwire_bits", "a name of the generated functions and type 'bitwire_bits' both"
        .. " become the C name 'bitwire_bits'" },
      { "Stream", "a name of the generated functions and type 'Stream' both become"
        .. " the C name 'Stream'" },
      { "uint8_t", "type 'uint8_t' clashes with a C library name ('uint8_t')" },
    } do
      local ok, err = pcall(bitwire.gen.serialize_h, bitwire.schema { [case[1]] = {
        {"y", "bool"} } })
      assert.is_false(ok)
      assert.equal("bitwire.gen: " .. case[2], err)
    end
    local near = bitwire.schema { Writer = { {"size", "int", min = 0, max = 9},
      {"memcpy", "bool"} }, size = { {"s", "Writer"} } }
    assert.equal(H.tohex(near:encode("size", { s = { size = 3, memcpy = true } })) .. "\n",
      runcxx(near, "near", SHOWCXX:gsub("NAME", "near") .. [[
int main () {
  near::size v;
  uint8_t buf[16];
  std::memset(&v, 0, sizeof(v));
  v.s.size = 3;
  v.s.memcpy = true;
  serialize::WriteStream ws(buf, sizeof(buf));
  show(ws, near::serialize(ws, v));
  return 0;
}
]]))
  end)
end)

describe("names of any bytes", function()
  -- field names may hold any printable UTF-8 (control characters are the
  -- compiler's to refuse: spec/02): each must come out of every generator
  -- as it is, never ending a string or a comment early (payloads that
  -- would stop the compile if they did)
  local names = { 'q"uote', "end */ int injected_ = ; /* x", 'tri??/", 1 }; #error injected',
                  "back\\", "e\195\169", "sp ace" }
  local odd = { T = {} }
  local wide = { T = {} }
  for i, n in ipairs(names) do
    odd.T[i] = { n, "int", min = 0, max = 2 }
    wide.T[i] = { n, "int", min = 0, max = 3 }
  end
  local s, sw = bitwire.schema(odd), bitwire.schema(wide)

  it("gen c says them in its error paths and comments", function()
    local c = bitwire.gen.c(s, { name = "nm" })
    local main = {}
    for i = 1, #names do
      local v = {}
      for j, n in ipairs(names) do v[n] = j == i and 3 or 1 end
      local bytes = sw:encode("T", v)
      local cbytes = {}
      for k = 1, #bytes do cbytes[k] = string.format("0x%02x", bytes:byte(k)) end
      main[#main + 1] = string.format("  { static const uint8_t p[] = { %s }; show(p, sizeof(p)); }",
        table.concat(cbytes, ", "))
    end
    local out = runin({ ["nm.h"] = c.header, ["nm.c"] = c.source, ["main.c"] = [[
#include <stdio.h>
#include <string.h>
#include "nm.h"
static void show (const uint8_t *p, size_t n) {
  T v;
  bw_Reader r;
  bw_Error err;
  size_t i;
  memset(&err, 0, sizeof(err));
  bw_readerinit(&r, p, n);
  if (T_read_err(&r, &v, &err)) { printf("read\n"); return; }
  for (i = 0; err.path[i] != '\0'; i++) printf("%02x", (unsigned char)err.path[i]);
  printf("\n");
}
int main (void) {
]] .. table.concat(main, "\n") .. "\n  return 0;\n}\n" }, string.format(
      "%s -std=c99 -Wall -Wextra -Wpedantic -Werror -Icore -IDIR -o DIR/main DIR/main.c "
      .. "DIR/nm.c build/libbitwire.a -lz -lm", os.getenv("CC") or "cc"))
    local want = {}
    for i, n in ipairs(names) do want[i] = H.tohex(n) end
    assert.equal(table.concat(want, "\n") .. "\n", out)
    local ok, err = pcall(runcxx, s, "nm", '#include "serialize_compat.h"\n#include "nm.hpp"\n'
      .. "int main () { return 0; }\n")
    assert.is_true(ok, err)
  end)

  it("the blob header keeps them in its layout", function()
    local h = require("bitwire.gen.blob")(s, { prefix = "" })
    local out = runin({ ["nm_blob.h"] = h, ["main.c"] = [[
#include <stdio.h>
#include "nm_blob.h"
int main (void) {
  size_t i, k;
  for (i = 0; i < sizeof(blob_fields_) / sizeof(blob_fields_[0]); i++) {
    for (k = 0; blob_fields_[i].name[k] != '\0'; k++)
      printf("%02x", (unsigned char)blob_fields_[i].name[k]);
    printf("\n");
  }
  return 0;
}
]] }, string.format("%s -std=c11 -Wall -Wextra -Wpedantic -Werror -Icore -IDIR "
      .. "-o DIR/main DIR/main.c build/libbitwire.a -lz -lm", os.getenv("CC") or "cc"))
    local want = {}
    for i, n in ipairs(names) do want[i] = H.tohex(n) end
    assert.equal(table.concat(want, "\n") .. "\n", out)
  end)
end)

describe("bitwire.gen.blob", function()
  it("gives the blob header the C names gen c gives, and refuses the same clashes", function()
    local genblob = require "bitwire.gen.blob"
    local b = genblob(bitwire.schema { T = {
      {"default", "int", min = 0, max = 3}, {"1st", "string", max = 4} } })
    assert.matches("#ifndef BWBLOB_H\n", b, 1, true)
    assert.matches("uint8_t default_;", b, 1, true)
    assert.matches("T_x1st (const T *r)", b, 1, true)
    for _, case in ipairs {
      { { T = { {"weapon", "int", min = 0, max = 3, optional = true}, {"has_weapon", "bool"} } },
        "field 'T.weapon' and field 'T.has_weapon' both become the C name 'has_weapon' in struct T" },
      { { T = { {"x", "array", of = {"bool"}, max = 4}, {"x_at", "string", max = 3} } },
        "field 'T.x' and field 'T.x_at' both become the C name 'T_x_at'" },
      { { T = { {"kind", "enum", values = {"a-b", "a_b"}} } },
        "value 'a-b' of field 'T.kind' and value 'a_b' of field 'T.kind' both become the C name 'T_kind_a_b'" },
    } do
      local ok, err = pcall(genblob, bitwire.schema(case[1]))
      assert.is_false(ok)
      assert.equal("bitwire.gen: " .. case[2], err)
    end
  end)

  it("refuses library and runtime names, as gen c does", function()
    local genblob = require "bitwire.gen.blob"
    for _, case in ipairs {
      { { FILE = { {"y", "bool"} } }, {}, "type 'FILE' clashes with a C library name ('FILE')" },
      { { T = { {"NULL", "bool"} } }, {},
        "field 'T.NULL' clashes with a C library name ('NULL' in struct T)" },
      { { T = { {"y", "bool"} } }, { prefix = "bw_" },
        "a name the header defines clashes with the generated code's runtime (bw_ and BW_"
        .. " names) ('BW_BLOB_VERSION')" },
      { { size = { {"y", "bool"} } }, {},
        "a parameter of the generated functions and type 'size' both become the C name 'size'" },
    } do
      local ok, err = pcall(genblob, bitwire.schema(case[1]), case[2])
      assert.is_false(ok)
      assert.equal("bitwire.gen: " .. case[3], err)
    end
  end)

  it("compiles as C99 and C++11, not only C11, and checks a blob there", function()
    -- the header spelled its layout checks _Static_assert and _Alignof, and
    -- a quantized float's range as a hex float: C++ (and C99 -Wpedantic)
    -- refused it
    local genblob = require "bitwire.gen.blob"
    local s = bitwire.schema {
      P = { { "x", "float", min = -10, max = 10, res = 0.01 }, { "k", "float64" } },
      T = { { "p", "P" }, { "name", "string", max = 8 }, { "o", "P", optional = true } } }
    local blob = s:blob("T", { p = { x = 2.5, k = 1 }, name = "hi", o = { x = -3, k = 0 } })
    local hex = {}
    for i = 1, #blob do hex[i] = string.format("0x%02x", blob:byte(i)) end
    local main = [[
#include <stdio.h>
#include <stdlib.h>
#include "c_blob.h"
static const unsigned char bytes[] = { ]] .. table.concat(hex, ", ") .. [[ };
int main (void) {
  void *b = malloc(sizeof(bytes));
  const T *t;
  if (b == NULL) return 1;
  memcpy(b, bytes, sizeof(bytes));
  if (!T_blob_check(b, sizeof(bytes), NULL)) return 1;
  t = T_blob_root(b);
  printf("%g %s %g", (double)t->p.x, T_name(t), (double)T_o(t)->x);
  free(b);
  return 0;
}
]]
    local h = genblob(s, { prefix = "" })
    local cc, cxx = os.getenv("CC") or "cc", os.getenv("CXX") or "c++"
    for _, build in ipairs {
      cc .. " -std=c99 -Wall -Wextra -Wpedantic -Wshadow -Werror -Icore -IDIR "
        .. "-o DIR/main DIR/main.c build/libbitwire.a -lz -lm",
      cxx .. " -std=c++11 -Wall -Wextra -Wpedantic -Wshadow -Werror -Icore -IDIR "
        .. "-o DIR/main -x c++ DIR/main.c -x none build/libbitwire.a -lz -lm" } do
      assert.equal("2.5 hi -3", runin({ ["c_blob.h"] = h, ["main.c"] = main }, build))
    end
  end)

  it("refuses in C, in unblob's words, a header version its fingerprint was not laid out at", function()
    -- the C check compared only the fingerprint: a blob written at 1 whose
    -- header said 0 passed Save_blob_check, and unblob refused it
    local genblob = require "bitwire.gen.blob"
    local s = bitwire.schema {
      Item = { { "id", "int", min = 0, max = 99 },
               { "mana", "int", min = 0, max = 50, since = 1, default = 10 } },
      Save = { { "items", "array", of = "Item", max = 8 } },
      Other = { { "x", "bool" }, { "y", "bool", since = 2 } } }
    local good = s:blob("Save", { items = { { id = 3, mana = 5 } } })
    local lay = s:blob_layout()
    local save
    for _, t in ipairs(lay.types) do if t.name == "Save" then save = t end end
    local blobs, want = {}, {}
    for i, v in ipairs { 0, 1, 2, 9 } do
      local b = good:sub(1, 16) .. string.pack("<I4", v) .. good:sub(21)
      local hex = {}
      for k = 1, #b do hex[k] = string.format("0x%02x", b:byte(k)) end
      blobs[i] = "{ " .. table.concat(hex, ", ") .. " }"
      local ok, err, code = s:unblob("Save", b)
      want[i] = ok and "ok" or err .. " " .. code
    end
    assert.equal("fingerprint does not match the description at this version (byte 8) schema", want[1])
    local main = [[
#include <stdio.h>
#include <stdlib.h>
#include "s_blob.h"
static const unsigned char blobs[][]] .. #good .. [[] = { ]] .. table.concat(blobs, ", ") .. [[ };
int main (void) {
  size_t i;
  for (i = 0; i < sizeof(blobs) / sizeof(blobs[0]); i++) {
    void *b = malloc(sizeof(blobs[i]));
    bw_Error e;
    const char *why = NULL;
    if (b == NULL) return 1;
    memcpy(b, blobs[i], sizeof(blobs[i]));
    if (bw_blobcheck(b, sizeof(blobs[i]), &blob_layout_, ]] .. save.id .. [[, &e, &why) == BW_OK)
      printf("%s\n", Save_blob_check(b, sizeof(blobs[i]), NULL) ? "ok" : "differs");
    else
      printf("%s (byte %u) %s\n", why, (unsigned)(e.bitpos / 8), bw_codename(e.code));
    free(b);
  }
  return 0;
}
]]
    local out = runin({ ["s_blob.h"] = genblob(s, { prefix = "" }), ["main.c"] = main },
      (os.getenv("CC") or "cc") .. " -std=c99 -Wall -Wextra -Wpedantic -Wshadow -Werror -Icore -IDIR "
        .. "-o DIR/main DIR/main.c build/libbitwire.a -lz -lm")
    assert.equal(table.concat(want, "\n") .. "\n", out)
    assert.same({ 1, 0xFFFFFFFF }, { save.vmin, save.vmax })  -- Other's change is not Save's
  end)

  it("lays out fields of no bytes with no alignment, as C, which declares none", function()
    -- a count-0 array of doubles aligned its place to 8 in the layout, and
    -- the header's struct (without the member) came out smaller
    local genblob = require "bitwire.gen.blob"
    local s = bitwire.schema {
      T = { { "a", "bool" }, { "z", "array", of = "float64", count = 0 }, { "b", "bool" } },
      V = { { "c", "bool" }, { "v", "vector", count = 0, min = 0, max = 1, res = 0.5,
                                optional = true }, { "d", "bool" } },
      W = { { "q", "array", of = { "quat", bits = 9 }, count = 0 } } }
    local lay = s:blob_layout()
    local size = {}
    for _, t in ipairs(lay.types) do size[t.name] = t.size end
    assert.same({ T = 2, V = 3, W = 1 }, size)
    local out = runin({ ["z_blob.h"] = genblob(s, { prefix = "" }), ["main.c"] = [[
#include <stdio.h>
#include "z_blob.h"
int main (void) {
  printf("%u %u %u", (unsigned)sizeof(T), (unsigned)sizeof(V), (unsigned)sizeof(W));
  return 0;
}
]] }, string.format("%s -std=c11 -Wall -Wextra -Wpedantic -Werror -Icore -IDIR "
      .. "-o DIR/main DIR/main.c build/libbitwire.a -lz -lm", os.getenv("CC") or "cc"))
    assert.equal("2 3 1", out)
    assert.same({ a = true, b = false, z = {} }, s:unblob("T", s:blob("T", { a = true, b = false, z = {} })))
  end)

  it("declares arrays of elements of no bytes by their count alone", function()
    -- ISO C has no type of no bytes: such elements get no typedef and no
    -- _at accessor; a sparse array's entries keep their slot index
    local genblob = require "bitwire.gen.blob"
    local s = bitwire.schema { T = {
      { "g", "array", of = { "array", of = "bool", count = 0 }, max = 4 },
      { "sp", "sparse", of = { "array", of = "float64", count = 0 }, max = 5 },
      { "k", "array", of = { "bytes", count = 0 }, max = 4 }, { "n", "bool" } } }
    local blob = s:blob("T", { g = { {}, {} }, sp = { [2] = {}, [5] = {} }, k = { "", "", "" },
                               n = true })
    local hex = {}
    for i = 1, #blob do hex[i] = string.format("0x%02x", blob:byte(i)) end
    local out = runin({ ["e_blob.h"] = genblob(s, { prefix = "" }), ["main.c"] = [[
#include <stdio.h>
#include "e_blob.h"
static const _Alignas(8) uint8_t blob[] = { ]] .. table.concat(hex, ", ") .. [[ };
int main (void) {
  const T *r;
  if (!T_blob_check(blob, sizeof(blob), NULL)) return 1;
  r = T_blob_root(blob);
  printf("%u %u %u %u %u %d", T_g_count(r), T_sp_count(r), T_sp_at(r, 0)->index,
         T_sp_at(r, 1)->index, T_k_count(r), r->n);
  return 0;
}
]] }, string.format("%s -std=c11 -Wall -Wextra -Wpedantic -Werror -Icore -IDIR "
      .. "-o DIR/main DIR/main.c build/libbitwire.a -lz -lm", os.getenv("CC") or "cc"))
    assert.equal("2 2 1 4 3 1", out)
  end)

  it("leaves out fields of no bytes (count 0), which ISO C cannot declare", function()
    local genblob = require "bitwire.gen.blob"
    local i9 = { "int", min = 0, max = 9 }
    local s = bitwire.schema {
      R = { { "a", "int", min = 0, max = 9 }, { "z", "array", of = i9, count = 0, optional = true },
            { "g", "array", of = { "array", of = i9, count = 0 }, count = 3 },
            { "zb", "bytes", count = 0 } },
      E = { { "z", "array", of = i9, count = 0 } } }
    local h = genblob(s, { prefix = "" })
    assert.is_nil(h:find("[0]", 1, true))
    assert.matches("/* g: array of no bytes (count 0), no member */", h, 1, true)
    local out = runin({ ["g_blob.h"] = h, ["main.c"] = [[
#include <stdio.h>
#include "g_blob.h"
int main (void) { printf("%u %u", (unsigned)sizeof(R), (unsigned)sizeof(E)); return 0; }
]] }, string.format("%s -std=c11 -Wall -Wextra -Wpedantic -Werror -Icore -IDIR "
      .. "-o DIR/main DIR/main.c build/libbitwire.a -lz -lm", os.getenv("CC") or "cc"))
    assert.equal("2 1", out)
  end)
end)

-- A stand-in for the dispatcher's stdout: what is written, in .text.
local function sink()
  local t = { text = "" }
  function t.write(self, ...)
    for _, v in ipairs { ... } do self.text = self.text .. v end
    return self
  end
  return t
end

describe("bitwire gen (command)", function()
  -- A new directory holding defs.lua of 'text': its path, and the file's.
  local function defsdir(text)
    local dir = os.tmpname()
    os.remove(dir)
    assert.is_true(os.execute("mkdir -p " .. dir) == true)
    local f = assert(io.open(dir .. "/defs.lua", "w"))
    f:write(text)
    f:close()
    return dir, dir .. "/defs.lua"
  end

  local cli = require "bitwire.cli.gen"

  it("has a summary, a usage and a run function", function()
    assert.is_string(cli.summary)
    assert.is_string(cli.usage)
    assert.is_function(cli.run)
  end)

  it("raises its usage on bad arguments", function()
    for _, args in ipairs { {}, {"java", "x.lua"}, {"c"}, {"c", "a.lua", "b.lua"},
                            {"c", "x.lua", "--bogus"} } do
      local ok, err = pcall(cli.run, args)
      assert.is_false(ok)
      assert.is_string(err)
    end
  end)

  -- a bad command line raised the usage alone, saying nothing of the problem
  it("says in its first line what is wrong with the arguments", function()
    for _, c in ipairs {
      { {}, "missing generator (c or serialize-h)" },
      { { "java", "x.lua" }, "unknown generator 'java' (c or serialize-h)" },
      { { "c" }, "missing definitions file" },
      { { "c", "a.lua", "b.lua" }, "unexpected argument 'b.lua'" },
    } do
      local ok, err = pcall(cli.run, c[1])
      assert.is_false(ok)
      assert.equal(c[2] .. "\n" .. cli.usage, err)
    end
  end)

  -- a definitions file not named *.lua gave NAME "messages", not its own
  -- name as the usage says; a bad default was blamed on a --name not given
  it("names the files after the definitions file, whatever its extension", function()
    local dir = defsdir("return {}\n")
    local text = 'return { P = { {"x", "bool"} } }\n'
    for _, c in ipairs { { "game.defs", "game" }, { "game.lua", "game" }, { "a.b.lua", "a.b" },
                         { "noext", "noext" } } do
      local defsfile = dir .. "/" .. c[1]
      local f = assert(io.open(defsfile, "w"))
      f:write(text)
      f:close()
      local log = sink()
      assert(pcall(cli.run, { "c", defsfile, "-o", dir }, { stdout = log }))
      assert.equal("wrote " .. dir .. "/" .. c[2] .. ".h\nwrote " .. dir .. "/" .. c[2]
        .. ".c\n", log.text)
    end
    local defsfile = dir .. "/my game.lua"
    local f = assert(io.open(defsfile, "w"))
    f:write(text)
    f:close()
    local ok, err = pcall(cli.run, { "c", defsfile, "-o", dir })
    assert.is_false(ok)
    assert.equal("NAME 'my game' is no file name (letters, digits, _, . and -, not starting "
      .. "with . or -); it comes from " .. defsfile .. ": give --name", err)
    os.execute("rm -rf '" .. dir .. "'")
    -- the usage says so, and where the files go
    local usage = cli.usage:gsub("%s+", " ")
    assert.matches("NAME defaults to the definitions file's name without its extension", usage,
      1, true)
    assert.matches("written in DIR (serialize-h: the current directory without -o)", usage,
      1, true)
  end)

  -- -o "" made the directory "", and the files /NAME.h and /NAME.c
  it("refuses -o '' and -o -, writing nothing", function()
    local _, defsfile = defsdir('return { P = { {"x", "bool"} } }\n')
    local name = "bitwire_gen_spec_" .. tostring(os.time())
    for _, what in ipairs { "c", "serialize-h" } do
      for _, dir in ipairs { "", "-" } do
        local ok, err = pcall(cli.run, { what, defsfile, "-o", dir, "--name", name }, { stdout = sink() })
        local made = {}
        for _, ext in ipairs { ".h", ".c", ".hpp" } do
          local at = (dir == "" and "/" or "-/") .. name .. ext
          if os.remove(at) then made[#made + 1] = at end
        end
        assert.same({}, made)
        assert.is_false(ok)
        assert.equal("-o takes a directory, not '" .. dir .. "'\n" .. cli.usage, err)
      end
    end
  end)

  it("fails, writing nothing, when names would meet in C", function()
    local dir, defsfile = defsdir(
      'return { T = { {"items", "array", of = {"bool"}, max = 3}, {"items_count", "bool"} } }\n')
    local ok, err = pcall(cli.run, { "c", defsfile, "-o", dir, "--name", "p" })
    assert.is_false(ok)
    assert.matches("field 'T.items' and field 'T.items_count' both become the C name", err, 1, true)
    assert.is_nil(io.open(dir .. "/p.h"))
    os.execute("rm -rf " .. dir)
  end)

  it("fails in one line, exit status 1, writing nothing, on a bad name or --prefix", function()
    local dir, defsfile = defsdir('return { size_t = { {"y", "bool"} } }\n')
    for _, case in ipairs {
      { {}, "type 'size_t' clashes with a C library name ('size_t')" },
      { { "--prefix", "9x" }, "prefix '9x' is not a C identifier" },
      { { "--prefix", "a-b" }, "prefix 'a-b' is not a C identifier" },
    } do
      for _, what in ipairs { "c", "serialize-h" } do
        local args = { "gen", what, defsfile, "-o", dir, "--name", "p", table.unpack(case[1]) }
        local out, err = { text = "" }, { text = "" }
        local function put(b, s) b.text = b.text .. s; return b end
        out.write, err.write = put, put
        assert.equal(1, require("bitwire.cli").main(args, { stdout = out, stderr = err }))
        assert.equal(1, select(2, err.text:gsub("\n", "")), err.text)
        -- the definitions file named, as the schema's own errors name it
        assert.equal("bitwire gen: " .. defsfile .. ": bitwire.gen: ", err.text:sub(1, #defsfile + 28))
        assert.matches(case[2], err.text, 1, true)
        assert.is_nil(err.text:find("traceback", 1, true))
      end
    end
    assert.is_nil(io.open(dir .. "/p.h"))
    assert.is_nil(io.open(dir .. "/p.hpp"))
    os.execute("rm -rf " .. dir)
  end)

  it("refuses a --name that is no file name in DIR, writing nothing", function()
    local dir, defsfile = defsdir('return { P = { {"x", "bool"} } }\n')
    os.execute("mkdir -p " .. dir .. "/sub")
    for _, name in ipairs { "", "../p", "sub/p", ".p", "-p" } do
      for _, what in ipairs { "c", "serialize-h" } do
        local ok, err = pcall(cli.run, { what, defsfile, "-o", dir .. "/sub", "--name", name })
        assert.is_false(ok, name)
        assert.matches("--name '" .. name .. "' is no file name", err, 1, true)
      end
    end
    assert.is_nil(io.open(dir .. "/p.h"))
    assert.is_nil(io.open(dir .. "/sub/.h"))
    assert.is_nil(io.open(dir .. "/sub/.p.h"))
    os.execute("rm -rf " .. dir)
  end)

  it("refuses --blob off gen c, writing nothing", function()
    local dir, defsfile = defsdir('return { P = { {"x", "bool"} } }\n')
    local ok, err = pcall(cli.run, { "serialize-h", defsfile, "-o", dir, "--blob" })
    assert.is_false(ok)
    assert.equal("--blob is an option of gen c\n" .. cli.usage, err)
    assert.is_nil(io.open(dir .. "/defs.hpp"))
    assert.matches("[--blob]", cli.usage, 1, true)
    os.execute("rm -rf " .. dir)
  end)

  it("writes NAME_blob.h for gen c --blob", function()
    local dir, defsfile = defsdir('return { P = { {"hp", "int", min = 0, max = 100} } }\n')
    local log = sink()
    local ok, err = pcall(cli.run, { "c", defsfile, "-o", dir, "--name", "p", "--blob" },
      { stdout = log })
    assert.is_true(ok, err)
    assert.equal("wrote " .. dir .. "/p_blob.h\n", log.text)
    assert.matches("#ifndef P_BLOB_H\n", assert(io.open(dir .. "/p_blob.h")):read("a"), 1, true)
    assert.matches("P_blob_check", assert(io.open(dir .. "/p_blob.h")):read("a"), 1, true)
    os.execute("rm -rf " .. dir)
  end)

  it("guards NAME_blob.h by a macro name when NAME starts with a digit", function()
    local dir, defsfile = defsdir('return { P = { {"hp", "int", min = 0, max = 100} } }\n')
    local ok, err = pcall(cli.run, { "c", defsfile, "-o", dir, "--name", "3d-x", "--blob" },
      { stdout = sink() })
    assert.is_true(ok, err)
    local h = assert(io.open(dir .. "/3d-x_blob.h")):read("a")
    assert.matches("#ifndef X3D_X_BLOB_H\n#define X3D_X_BLOB_H\n", h, 1, true)
    os.execute("rm -rf " .. dir)
  end)

  it("writes NAME.h and NAME.c for gen c", function()
    local dir, defsfile = defsdir('return { P = { {"hp", "int", min = 0, max = 100} } }\n')
    local log = sink()
    local ok, err = pcall(cli.run, { "c", defsfile, "-o", dir, "--name", "p" }, { stdout = log })
    assert.is_true(ok, err)
    assert.equal("wrote " .. dir .. "/p.h\nwrote " .. dir .. "/p.c\n", log.text)
    local h = assert(io.open(dir .. "/p.h")):read("a")
    assert.matches("bool P_write", h, 1, true)
    assert.truthy(io.open(dir .. "/p.c"))
    os.execute("rm -rf " .. dir)
  end)

  it("writes gen c's files whole or not at all", function()
    local dir, defsfile = defsdir('return { P = { {"hp", "int", min = 0, max = 100} } }\n')
    local f = assert(io.open(dir .. "/p.h", "w"))
    f:write("old\n")
    f:close()
    os.execute("mkdir " .. dir .. "/p.c " .. dir .. "/p.c.tmp")   -- p.c cannot be written
    local log = sink()
    local ok = pcall(cli.run, { "c", defsfile, "-o", dir, "--name", "p" }, { stdout = log })
    assert.is_false(ok)
    assert.equal("", log.text)
    assert.equal("old\n", assert(io.open(dir .. "/p.h")):read("a"))   -- untouched
    assert.is_nil(io.open(dir .. "/p.h.tmp"))
    os.execute("rm -rf " .. dir)
  end)

  it("fails, and moves nothing in, when a file's last bytes cannot be written", function()
    -- a small file is written at close: a full disk fails only there
    if not io.open("/dev/full", "w") then return end
    local dir, defsfile = defsdir('return { P = { {"hp", "int", min = 0, max = 100} } }\n')
    os.execute("ln -s /dev/full " .. dir .. "/p_blob.h.tmp")
    local log = sink()
    local ok, err = pcall(cli.run, { "c", defsfile, "-o", dir, "--name", "p", "--blob" },
      { stdout = log })
    assert.is_false(ok)
    -- named as the file asked for, as when the temporary cannot be opened
    assert.matches(dir .. "/p_blob.h: ", err, 1, true)
    assert.equal("", log.text)
    assert.is_nil(io.open(dir .. "/p_blob.h"))
    os.execute("rm -rf " .. dir)
  end)
end)

describe("bitwire.gen.blob", function()
  it("is listed by bitwire.gen, as gen.c and gen.serialize_h are", function()
    local s = bitwire.schema(defs)
    assert.equal(require "bitwire.gen.blob", bitwire.gen.blob)
    assert.equal(require("bitwire.gen.blob")(s, { prefix = "P_" }),
      bitwire.gen.blob(s, { prefix = "P_" }))
  end)
end)

describe("tools/gen_random.lua (the cross test's values)", function()
  it("draws a tiered value near a min close to the largest integer", function()
    local gen_random = dofile("tools/gen_random.lua")
    local s = bitwire.schema({ T = { { "t", "tiered", tiers = { 0, 2 },
      min = math.maxinteger - 2, max = math.maxinteger } } })
    local prog = s:program()
    math.randomseed(7)
    for _ = 1, 200 do
      local v = gen_random.value(prog, prog.byname.T)
      assert.is_true(v.t >= math.maxinteger - 2, tostring(v.t))
      assert.is_truthy(s:encode("T", v))
    end
  end)
end)
