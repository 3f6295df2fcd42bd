/*
** lbw_schema.c - schema compiler glue and the encode/decode driver
** See LICENSE for copyright and terms.
*/

/*
** bitwire.schema validates a description in Lua (bitwire/schema.lua) and
** hands the normalized tables to compile() here, which fills a bw_Schema.
** The driver then walks that flat program for every packet: encode reads Lua
** tables and writes bits, decode reads bits and builds tables. Field names
** are interned once per Lua state in a names array kept as a user value, so
** the hot path pushes keys with lua_rawgeti instead of hashing C strings.
**
** Encode raises on a value that does not fit (a programmer error). Decode
** never raises on bad bytes: it stops at the first failure, records the path
** and bit position, and returns nil, message, code. Nesting is bounded when
** the schema is sealed, so the C stack and the Lua stack are bounded too.
*/

#include <inttypes.h>
#include <math.h>
#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua.h"
#include "lauxlib.h"

#include "bw_schema.h"
#include "lbw.h"

#define MAXENCODE  ((size_t)64 << 20)  /* largest packet encode will make */
#define MAXFRAMES  (2 * BW_MAXDEPTH + 8)
#define MAXMSG     256

/* user values of a schema userdata */
enum { UV_NAMES = 1, UV_TYPES, NUV = UV_TYPES };

typedef struct LSchema {
  bw_Schema *S;
  bw_Writer  w;     /* reused by every encode */
} LSchema;

typedef struct Frame {
  uint32_t    name;   /* BW_NONE: an array element */
  lua_Integer index;
} Frame;

typedef struct Ctx {
  lua_State       *L;
  const bw_Schema *S;
  bw_Writer       *w;
  bw_Reader        r;
  int              names;    /* stack index of the names array */
  uint32_t         version;
  int              nframes;
  Frame            frames[MAXFRAMES];
  bw_Status        code;     /* decode failure */
  uint64_t         bitpos;
  char             msg[MAXMSG];
} Ctx;


/* {===================== paths and errors ===================== */

static void pushframe (Ctx *c, uint32_t name, lua_Integer index) {
  Frame *fr = &c->frames[c->nframes < MAXFRAMES ? c->nframes : MAXFRAMES - 1];
  fr->name = name;
  fr->index = index;
  c->nframes++;
}

#define popframe(c)  ((c)->nframes--)

/* Write the current field path into 'buf'; returns its length. */
static size_t formatpath (const Ctx *c, char *buf, size_t size) {
  size_t n = 0;
  int i;
  buf[0] = '\0';
  for (i = 0; i < c->nframes && i < MAXFRAMES && n < size; i++) {
    const Frame *fr = &c->frames[i];
    int k;
    if (fr->name == BW_NONE)
      k = snprintf(buf + n, size - n, "[%lld]", (long long)fr->index);
    else
      k = snprintf(buf + n, size - n, "%s%s", n > 0 ? "." : "",
                   c->S->names[fr->name]);
    if (k < 0) break;
    n += (size_t)k;
  }
  return n < size ? n : size - 1;
}

/* Raise "path: detail (bit N)" for a value that cannot be encoded. The
** format is lua_pushfstring's. */
static int encerror (Ctx *c, const char *fmt, ...) {
  char path[MAXMSG];
  const char *detail;
  va_list ap;
  formatpath(c, path, sizeof(path));
  va_start(ap, fmt);
  detail = lua_pushvfstring(c->L, fmt, ap);
  va_end(ap);
  return luaL_error(c->L, "%s%s%s (bit %I)", path, path[0] ? ": " : "",
                    detail, (lua_Integer)bw_bitswritten(c->w));
}

static int enctype (Ctx *c, int idx, const char *expected) {
  return encerror(c, "expected %s, got %s", expected,
                  lua_typename(c->L, lua_type(c->L, idx)));
}

/* Record the first decode failure: "path: detail (bit N)". Returns 0. */
static int decfail (Ctx *c, bw_Status code, uint64_t bitpos,
                    const char *fmt, ...) {
  char detail[MAXMSG];
  size_t n;
  va_list ap;
  if (c->code != BW_OK) return 0;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof(detail), fmt, ap);
  va_end(ap);
  n = formatpath(c, c->msg, sizeof(c->msg));
  snprintf(c->msg + n, sizeof(c->msg) - n, "%s%s (bit %" PRIu64 ")",
           n > 0 ? ": " : "", detail, bitpos);
  c->code = code;
  c->bitpos = bitpos;
  return 0;
}

/* A failure of the reader's own (truncation, padding, string checks). */
static int readfail (Ctx *c) {
  return decfail(c, c->r.status, c->r.errpos, "%s", bw_strerror(c->r.status));
}

/* }========================================================== */


/* {===================== encode ===================== */

static void encstruct (Ctx *c, uint32_t t, int idx);

static void pushdefault (Ctx *c, const bw_Field *f) {
  lua_State *L = c->L;
  switch (f->kind) {
    case BW_KBOOL: lua_pushboolean(L, (int)f->def.i); break;
    case BW_KFLOAT: case BW_KFLOAT32: case BW_KFLOAT64:
      lua_pushnumber(L, (lua_Number)f->def.d);
      break;
    case BW_KENUM: case BW_KSTRING: case BW_KBYTES:
      lua_rawgeti(L, c->names, (lua_Integer)f->def.s + 1);
      break;
    default: lua_pushinteger(L, (lua_Integer)f->def.i); break;
  }
}

static lua_Integer checkint (Ctx *c, int idx) {
  int ok = 0;
  lua_Integer v = 0;
  if (lua_type(c->L, idx) == LUA_TNUMBER) v = lua_tointegerx(c->L, idx, &ok);
  if (!ok) {
    if (lua_type(c->L, idx) == LUA_TNUMBER)
      encerror(c, "expected an integer, got %s",
               lua_tostring(c->L, idx));
    enctype(c, idx, "an integer");
  }
  return v;
}

static double checknum (Ctx *c, int idx) {
  if (lua_type(c->L, idx) != LUA_TNUMBER) enctype(c, idx, "a number");
  return (double)lua_tonumber(c->L, idx);
}

static const char *checkstr (Ctx *c, int idx, size_t *len) {
  if (lua_type(c->L, idx) != LUA_TSTRING) enctype(c, idx, "a string");
  return lua_tolstring(c->L, idx, len);
}

static void checklen (Ctx *c, const bw_Field *f, size_t n, const char *what) {
  if (f->fixed && n != (size_t)f->max)
    encerror(c, "%s of %I must have exactly %I", what, (lua_Integer)n,
             (lua_Integer)f->max);
  if (n < (uint64_t)f->min || n > (uint64_t)f->max)
    encerror(c, "%s %I out of range [%I, %I]", what, (lua_Integer)n,
             (lua_Integer)f->min, (lua_Integer)f->max);
}

static void encvalue (Ctx *c, const bw_Field *f, int idx) {
  lua_State *L = c->L;
  bw_Writer *w = c->w;
  switch (f->kind) {
    case BW_KINT: {
      lua_Integer v = checkint(c, idx);
      if (v < f->min || v > f->max)
        encerror(c, "%I out of range [%I, %I]", v, (lua_Integer)f->min,
                 (lua_Integer)f->max);
      bw_writebits(w, (uint64_t)v - (uint64_t)f->min, f->nbits);
      break;
    }
    case BW_KUINT: {
      lua_Integer v = checkint(c, idx);
      if (f->nbits < 64 && (v < 0 || (uint64_t)v >> f->nbits != 0))
        encerror(c, "%I does not fit in %d bits", v, (int)f->nbits);
      bw_writebits(w, (uint64_t)v, f->nbits);
      break;
    }
    case BW_KBOOL:
      if (!lua_isboolean(L, idx)) enctype(c, idx, "a boolean");
      bw_writebits(w, (uint64_t)lua_toboolean(L, idx), 1);
      break;
    case BW_KFLOAT: {
      double x = checknum(c, idx);
      if (!(x >= f->dmin && x <= f->dmax) && !f->clamp)
        encerror(c, "%f out of range [%f, %f]", (lua_Number)x,
                 (lua_Number)f->dmin, (lua_Number)f->dmax);
      bw_writebits(w, bw_qfloatencode(&f->q, x), f->q.nbits);
      break;
    }
    case BW_KFLOAT32: {
      double x = checknum(c, idx);
      if (x > FLT_MAX && x < HUGE_VAL) x = HUGE_VAL;    /* no UB cast */
      if (x < -FLT_MAX && x > -HUGE_VAL) x = -HUGE_VAL;
      if (isfinite(x) && fabs(x) > FLT_MAX)
        encerror(c, "%s out of float32 range", lua_tostring(L, idx));
      bw_writefloat(w, (float)x);
      break;
    }
    case BW_KFLOAT64:
      bw_writedouble(w, checknum(c, idx));
      break;
    case BW_KENUM: {
      size_t len, i, n = (size_t)f->max + 1;
      const char *s = checkstr(c, idx, &len);
      for (i = 0; i < n; i++) {
        uint32_t nm = f->ref + (uint32_t)i;
        if (c->S->namelens[nm] == len && memcmp(c->S->names[nm], s, len) == 0)
          break;
      }
      if (i == n) encerror(c, "'%s' is not one of its enum values", s);
      bw_writebits(w, (uint64_t)i, f->nbits);
      break;
    }
    case BW_KSTRING: {
      size_t len;
      const char *s = checkstr(c, idx, &len);
      if (len > (uint64_t)f->max)
        encerror(c, "string of %I bytes longer than max %I",
                 (lua_Integer)len, (lua_Integer)f->max);
      if (!bw_utf8valid(s, len))
        encerror(c, "string with NUL or malformed UTF-8");
      bw_writebits(w, (uint64_t)len, f->nbits);
      bw_writebytes(w, s, len);
      break;
    }
    case BW_KBYTES: {
      size_t len;
      const char *s = checkstr(c, idx, &len);
      checklen(c, f, len, "length");
      bw_writebits(w, (uint64_t)len - (uint64_t)f->min, f->nbits);
      bw_writebytes(w, s, len);
      break;
    }
    case BW_KARRAY: {
      const bw_Field *e = &c->S->fields[f->ref];
      lua_Integer i, n;
      if (!lua_istable(L, idx)) enctype(c, idx, "a table");
      n = (lua_Integer)lua_rawlen(L, idx);
      checklen(c, f, (size_t)n, "count");
      bw_writebits(w, (uint64_t)n - (uint64_t)f->min, f->nbits);
      for (i = 1; i <= n; i++) {
        pushframe(c, BW_NONE, i);
        lua_rawgeti(L, idx, i);
        if (lua_isnil(L, -1)) encerror(c, "missing");
        encvalue(c, e, lua_gettop(L));
        lua_pop(L, 1);
        popframe(c);
      }
      break;
    }
    case BW_KSTRUCT:
      encstruct(c, f->ref, idx);
      break;
    case BW_KALIGN: bw_writealign(w); break;
    case BW_KCHECK: bw_writecheck(w, f->magic); break;
    default:
      encerror(c, "field kind %d not supported", (int)f->kind);
  }
  if (w->status != BW_OK)
    encerror(c, "%s (packet over %I bytes)", bw_strerror(w->status),
             (lua_Integer)w->maxbytes);
}

static void encstruct (Ctx *c, uint32_t t, int idx) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first];
  const bw_Field *end = f + ty->count;
  if (!lua_istable(L, idx)) enctype(c, idx, "a table");
  for (; f < end; f++) {
    if (!bw_fieldpresent(f, c->version)) continue;
    if (f->name == BW_NONE) {  /* align or check */
      encvalue(c, f, 0);
      continue;
    }
    pushframe(c, f->name, 0);
    lua_rawgeti(L, c->names, (lua_Integer)f->name + 1);
    lua_rawget(L, idx);
    if (f->optional) {
      int present = !lua_isnil(L, -1);
      bw_writebits(c->w, (uint64_t)present, 1);
      if (!present) {
        lua_pop(L, 1);
        popframe(c);
        continue;
      }
    }
    else if (lua_isnil(L, -1)) {
      if (!f->hasdefault) encerror(c, "missing");
      lua_pop(L, 1);
      pushdefault(c, f);
    }
    encvalue(c, f, lua_gettop(L));
    lua_pop(L, 1);
    popframe(c);
  }
}

/* }========================================================== */


/* {===================== decode ===================== */

static int decstruct (Ctx *c, uint32_t t, int into);

/* Read an n-bit offset and check it against [min, max]; '*v' gets min +
** offset. 'what' names the quantity for the message. */
static int readrange (Ctx *c, const bw_Field *f, const char *what,
                      int64_t *v) {
  uint64_t start = c->r.pos;
  uint64_t u = bw_readbits(&c->r, f->nbits);
  if (c->r.status != BW_OK) return readfail(c);
  if (u > (uint64_t)f->max - (uint64_t)f->min) {
    uint64_t val = (uint64_t)f->min + u;
    if (f->min >= 0 && val < u)
      return decfail(c, BW_ERANGE, start, "%s out of range [%" PRId64 ", %"
                     PRId64 "]", what, f->min, f->max);
    return decfail(c, BW_ERANGE, start, "%s%s%" PRId64 " out of range [%"
                   PRId64 ", %" PRId64 "]", what, what[0] ? " " : "",
                   (int64_t)(f->min < 0 && val > (uint64_t)INT64_MAX
                     ? -(int64_t)(~val) - 1 : (int64_t)(val & INT64_MAX)),
                   f->min, f->max);
  }
  *v = (int64_t)((uint64_t)f->min + u <= (uint64_t)INT64_MAX
                 ? (int64_t)((uint64_t)f->min + u)
                 : -(int64_t)(~((uint64_t)f->min + u)) - 1);
  return 1;
}

/* Push the value of field 'f'. 'into' is the stack index of the old value
** to reuse (tables only), or 0. Returns 0 on failure. */
static int decvalue (Ctx *c, const bw_Field *f, int into) {
  lua_State *L = c->L;
  bw_Reader *r = &c->r;
  int64_t v;
  switch (f->kind) {
    case BW_KINT: case BW_KENUM:
      if (!readrange(c, f, "", &v)) return 0;
      if (f->kind == BW_KINT) lua_pushinteger(L, (lua_Integer)v);
      else lua_rawgeti(L, c->names, (lua_Integer)f->ref + v + 1);
      return 1;
    case BW_KUINT: {
      uint64_t u = bw_readbits(r, f->nbits);
      if (r->status != BW_OK) return readfail(c);
      lua_pushinteger(L, (lua_Integer)(u <= (uint64_t)INT64_MAX ? (int64_t)u
                                       : -(int64_t)(~u) - 1));
      return 1;
    }
    case BW_KBOOL: {
      uint64_t u = bw_readbits(r, 1);
      if (r->status != BW_OK) return readfail(c);
      lua_pushboolean(L, (int)u);
      return 1;
    }
    case BW_KFLOAT: {
      uint64_t start = r->pos, u = bw_readbits(r, f->q.nbits);
      if (r->status != BW_OK) return readfail(c);
      if (u > f->q.miv)
        return decfail(c, BW_ERANGE, start, "quantized %" PRIu64
                       " out of range [0, %" PRIu32 "]", u, f->q.miv);
      lua_pushnumber(L, (lua_Number)bw_qfloatdecode(&f->q, (uint32_t)u));
      return 1;
    }
    case BW_KFLOAT32: {
      float x = bw_readfloat(r);
      if (r->status != BW_OK) return readfail(c);
      lua_pushnumber(L, (lua_Number)x);
      return 1;
    }
    case BW_KFLOAT64: {
      double x = bw_readdouble(r);
      if (r->status != BW_OK) return readfail(c);
      lua_pushnumber(L, (lua_Number)x);
      return 1;
    }
    case BW_KSTRING: case BW_KBYTES: {
      const uint8_t *p;
      uint64_t start;
      if (!readrange(c, f, "length", &v)) return 0;
      start = r->pos;
      p = bw_readbytes(r, (size_t)v);
      if (p == NULL) return readfail(c);
      if (f->kind == BW_KSTRING && !bw_utf8valid((const char *)p, (size_t)v))
        return decfail(c, BW_EUTF8, start,
                       "string with NUL or malformed UTF-8");
      lua_pushlstring(L, (const char *)p, (size_t)v);
      return 1;
    }
    case BW_KARRAY: {
      const bw_Field *e = &c->S->fields[f->ref];
      int64_t i, n, oldn = 0;
      int t, reuse = into != 0 && lua_istable(L, into);
      uint64_t start = r->pos;
      if (!readrange(c, f, "count", &n)) return 0;
      /* every element costs at least minbits: refuse before allocating */
      if (e->minbits > 0 && (uint64_t)n > bw_bitsremaining(r) / e->minbits)
        return decfail(c, BW_ETRUNC, start, "count %" PRId64 " needs %"
                       PRIu64 " bits or more, %" PRIu64 " left", n,
                       (uint64_t)n * e->minbits, bw_bitsremaining(r));
      if (reuse) {
        lua_pushvalue(L, into);
        oldn = (int64_t)lua_rawlen(L, into);
      }
      else
        lua_createtable(L, (int)(n < 1 << 20 ? n : 1 << 20), 0);
      t = lua_gettop(L);
      for (i = 1; i <= n; i++) {
        int old = 0;
        pushframe(c, BW_NONE, (lua_Integer)i);
        if (reuse && i <= oldn && (e->kind == BW_KSTRUCT
                                   || e->kind == BW_KARRAY)) {
          lua_rawgeti(L, t, (lua_Integer)i);
          old = lua_gettop(L);
        }
        if (!decvalue(c, e, old)) return 0;
        lua_rawseti(L, t, (lua_Integer)i);
        if (old) lua_pop(L, 1);
        popframe(c);
      }
      for (i = oldn; i > n; i--) {  /* trim an array that got shorter */
        lua_pushnil(L);
        lua_rawseti(L, t, (lua_Integer)i);
      }
      return 1;
    }
    case BW_KSTRUCT:
      return decstruct(c, f->ref, into);
    case BW_KALIGN:
      bw_readalign(r);
      return r->status == BW_OK ? 1 : readfail(c);
    case BW_KCHECK:
      bw_readcheck(r, f->magic);
      return r->status == BW_OK ? 1 : readfail(c);
    default:
      return decfail(c, BW_ESCHEMA, r->pos, "field kind %d not supported",
                     (int)f->kind);
  }
}

static int decstruct (Ctx *c, uint32_t t, int into) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first];
  const bw_Field *end = f + ty->count;
  int tbl, reuse = into != 0 && lua_istable(L, into);
  if (reuse) lua_pushvalue(L, into);
  else lua_createtable(L, 0, (int)ty->count);
  tbl = lua_gettop(L);
  for (; f < end; f++) {
    if (f->name == BW_NONE) {  /* align or check */
      if (bw_fieldpresent(f, c->version) && !decvalue(c, f, 0)) return 0;
      continue;
    }
    lua_rawgeti(L, c->names, (lua_Integer)f->name + 1);
    if (!bw_fieldpresent(f, c->version)) {
      if (f->hasdefault) pushdefault(c, f);
      else if (reuse) lua_pushnil(L);
      else {
        lua_pop(L, 1);
        continue;
      }
      lua_rawset(L, tbl);
      continue;
    }
    pushframe(c, f->name, 0);
    if (f->optional) {
      uint64_t present = bw_readbits(&c->r, 1);
      if (c->r.status != BW_OK) return readfail(c);
      if (!present) {
        popframe(c);
        if (reuse) {
          lua_pushnil(L);
          lua_rawset(L, tbl);
        }
        else lua_pop(L, 1);
        continue;
      }
    }
    if (reuse && (f->kind == BW_KSTRUCT || f->kind == BW_KARRAY)) {
      lua_pushvalue(L, -1);
      lua_rawget(L, tbl);
      if (!decvalue(c, f, lua_gettop(L))) return 0;
      lua_replace(L, -2);
    }
    else if (!decvalue(c, f, 0)) return 0;
    lua_rawset(L, tbl);
    popframe(c);
  }
  return 1;
}

/* }========================================================== */


/* {===================== compile ===================== */

static const char *const kindnames[] = {
  "int", "uint", "bool", "float", "float32", "float64", "enum", "string",
  "bytes", "array", "struct", "align", "check", "sparse", "quat", "tiered",
  NULL
};

static LSchema *checkschema (lua_State *L, int arg) {
  LSchema *ls = (LSchema *)luaL_checkudata(L, arg, SCHEMA_MT);
  if (ls->S == NULL) luaL_error(L, "schema has been released");
  return ls;
}

static int schema_gc (lua_State *L) {
  LSchema *ls = (LSchema *)luaL_checkudata(L, 1, SCHEMA_MT);
  bw_writerfree(&ls->w);
  bw_schemarelease(ls->S);
  ls->S = NULL;
  return 0;
}

static void *plainalloc (void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud; (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

static uint32_t addname (lua_State *L, bw_Schema *S, int idx) {
  size_t len;
  const char *s = luaL_checklstring(L, idx, &len);
  uint32_t i = bw_schemaaddname(S, s, len);
  if (i == BW_NONE) luaL_error(L, "not enough memory");
  return i;
}

static lua_Integer optint (lua_State *L, int t, const char *k,
                           lua_Integer def) {
  lua_Integer v;
  lua_getfield(L, t, k);
  v = luaL_optinteger(L, -1, def);
  lua_pop(L, 1);
  return v;
}

static double optnum (lua_State *L, int t, const char *k) {
  double v;
  lua_getfield(L, t, k);
  v = (double)luaL_optnumber(L, -1, 0);
  lua_pop(L, 1);
  return v;
}

static int optbool (lua_State *L, int t, const char *k) {
  int v;
  lua_getfield(L, t, k);
  v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

/* Fill S->fields[fi] from the normalized field table at stack index 't'. */
static void fillfield (lua_State *L, bw_Schema *S, uint32_t fi, int t) {
  bw_Field *f = &S->fields[fi];
  int kind;
  lua_getfield(L, t, "kind");
  kind = luaL_checkoption(L, -1, NULL, kindnames);
  lua_pop(L, 1);
  f->kind = (uint8_t)kind;
  f->optional = (uint8_t)optbool(L, t, "optional");
  f->fixed = (uint8_t)optbool(L, t, "fixed");
  f->clamp = (uint8_t)optbool(L, t, "clamp");
  f->since = (uint32_t)optint(L, t, "since", 0);
  f->removed = (uint32_t)optint(L, t, "removed", UINT32_MAX);
  f->min = (int64_t)optint(L, t, "min", 0);
  f->max = (int64_t)optint(L, t, "max", 0);
  lua_getfield(L, t, "name");
  if (!lua_isnil(L, -1)) {
    uint32_t nm = addname(L, S, -1);
    S->fields[fi].name = nm;
  }
  lua_pop(L, 1);
  f = &S->fields[fi];
  switch (kind) {
    case BW_KUINT:
      f->nbits = (unsigned)optint(L, t, "bits", 1);
      f->min = 0;
      f->max = f->nbits < 64 ? (int64_t)((UINT64_C(1) << f->nbits) - 1)
                             : INT64_MAX;
      break;
    case BW_KFLOAT:
      f->dmin = optnum(L, t, "fmin");
      f->dmax = optnum(L, t, "fmax");
      if (bw_qfloatinit(&f->q, f->dmin, f->dmax, optnum(L, t, "res")) != BW_OK)
        luaL_error(L, "bad float range");
      break;
    case BW_KENUM: {
      lua_Integer i, n;
      lua_getfield(L, t, "values");
      n = (lua_Integer)lua_rawlen(L, -1);
      for (i = 1; i <= n; i++) {
        uint32_t nm;
        lua_rawgeti(L, -1, i);
        nm = addname(L, S, -1);
        lua_pop(L, 1);
        if (i == 1) S->fields[fi].ref = nm;
      }
      lua_pop(L, 1);
      f = &S->fields[fi];
      f->min = 0;
      f->max = (int64_t)n - 1;
      break;
    }
    case BW_KSTRING: f->min = 0; break;
    case BW_KSTRUCT:
      f->ref = (uint32_t)optint(L, t, "type", 0);
      break;
    case BW_KCHECK:
      f->magic = (uint32_t)optint(L, t, "magic", BW_CHECKMAGIC);
      break;
    case BW_KARRAY: {
      uint32_t e = bw_schemaaddfields(S, 1);
      if (e == BW_NONE) luaL_error(L, "not enough memory");
      lua_getfield(L, t, "of");
      fillfield(L, S, e, lua_gettop(L));
      lua_pop(L, 1);
      S->fields[fi].ref = e;
      break;
    }
    default: break;
  }
  f = &S->fields[fi];
  if (kind != BW_KUINT && kind != BW_KFLOAT && kind != BW_KFLOAT32
      && kind != BW_KFLOAT64 && kind != BW_KBOOL && kind != BW_KSTRUCT
      && kind != BW_KALIGN && kind != BW_KCHECK)
    f->nbits = bw_bitsrequired(f->min, f->max);
  lua_getfield(L, t, "default");
  if (!lua_isnil(L, -1)) {
    f->hasdefault = 1;
    switch (kind) {
      case BW_KBOOL: f->def.i = lua_toboolean(L, -1); break;
      case BW_KFLOAT: case BW_KFLOAT32: case BW_KFLOAT64:
        f->def.d = (double)lua_tonumber(L, -1);
        break;
      case BW_KENUM:
        f->def.s = f->ref + (uint32_t)lua_tointeger(L, -1);
        break;
      case BW_KSTRING: case BW_KBYTES: {
        uint32_t nm = addname(L, S, -1);
        S->fields[fi].def.s = nm;
        break;
      }
      default: f->def.i = (int64_t)lua_tointeger(L, -1); break;
    }
  }
  lua_pop(L, 1);
}

/* Push a fresh userdata for 'S' (taking over one reference) with the
** per-state caches: the names array and the type index. */
static void pushschema (lua_State *L, bw_Schema *S) {
  LSchema *ls;
  uint32_t i;
  ls = (LSchema *)lua_newuserdatauv(L, sizeof(LSchema), NUV);
  ls->S = S;
  bw_writerinitgrow(&ls->w, plainalloc, NULL, MAXENCODE);
  luaL_setmetatable(L, SCHEMA_MT);
  lua_createtable(L, (int)S->nnames, 0);
  for (i = 0; i < S->nnames; i++) {
    lua_pushlstring(L, S->names[i], S->namelens[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setiuservalue(L, -2, UV_NAMES);
  lua_createtable(L, 0, (int)S->ntypes);
  for (i = 0; i < S->ntypes; i++) {
    lua_pushlstring(L, S->names[S->types[i].name],
                    S->namelens[S->types[i].name]);
    lua_pushinteger(L, (lua_Integer)i);
    lua_rawset(L, -3);
  }
  lua_setiuservalue(L, -2, UV_TYPES);
}

/* core.compile(normalized) -> schema. The argument comes from
** bitwire/schema.lua's normalize, which has validated it. */
static int schema_compile (lua_State *L) {
  LSchema *holder;
  bw_Schema *S;
  lua_Integer ti, nt;
  char msg[MAXMSG];
  luaL_checktype(L, 1, LUA_TTABLE);
  S = bw_schemanew();
  if (S == NULL) return luaL_error(L, "not enough memory");
  /* a holder owns S until sealing, so a Lua error cannot leak it */
  holder = (LSchema *)lua_newuserdatauv(L, sizeof(LSchema), 0);
  holder->S = S;
  bw_writerinit(&holder->w, NULL, 0);
  luaL_setmetatable(L, SCHEMA_MT);
  lua_getfield(L, 1, "types");
  luaL_checktype(L, -1, LUA_TTABLE);
  nt = (lua_Integer)lua_rawlen(L, -1);
  for (ti = 1; ti <= nt; ti++) {  /* types first: fields refer to them */
    uint32_t nm;
    lua_rawgeti(L, -1, ti);
    lua_getfield(L, -1, "name");
    nm = addname(L, S, -1);
    if (bw_schemaaddtype(S, nm) == BW_NONE)
      return luaL_error(L, "not enough memory");
    lua_pop(L, 2);
  }
  for (ti = 1; ti <= nt; ti++) {
    lua_Integer fj, nf;
    uint32_t first;
    lua_rawgeti(L, -1, ti);
    lua_getfield(L, -1, "fields");
    nf = (lua_Integer)lua_rawlen(L, -1);
    first = bw_schemaaddfields(S, (uint32_t)nf);
    if (first == BW_NONE) return luaL_error(L, "not enough memory");
    S->types[ti - 1].first = first;
    S->types[ti - 1].count = (uint32_t)nf;
    for (fj = 1; fj <= nf; fj++) {
      lua_rawgeti(L, -1, fj);
      fillfield(L, S, first + (uint32_t)fj - 1, lua_gettop(L));
      lua_pop(L, 1);
    }
    lua_pop(L, 2);
  }
  if (bw_schemaseal(S, msg, sizeof(msg)) != BW_OK)
    return luaL_error(L, "bitwire.schema: %s", msg);
  holder->S = NULL;  /* hand the reference to the real userdata */
  pushschema(L, S);
  return 1;
}

/* }========================================================== */


/* {===================== schema methods ===================== */

static uint32_t checktype (lua_State *L, int arg) {
  uint32_t t;
  lua_getiuservalue(L, 1, UV_TYPES);
  lua_pushvalue(L, arg);
  lua_rawget(L, -2);
  if (!lua_isinteger(L, -1)) {
    luaL_checkstring(L, arg);
    luaL_error(L, "unknown type '%s'", lua_tostring(L, arg));
  }
  t = (uint32_t)lua_tointeger(L, -1);
  lua_pop(L, 2);
  return t;
}

/* Options table at 'arg': version, into. */
static uint32_t optversion (lua_State *L, int arg, const bw_Schema *S) {
  lua_Integer v;
  if (lua_isnoneornil(L, arg)) return S->version;
  luaL_checktype(L, arg, LUA_TTABLE);
  lua_getfield(L, arg, "version");
  v = luaL_optinteger(L, -1, (lua_Integer)S->version);
  lua_pop(L, 1);
  luaL_argcheck(L, v >= 0 && v < UINT32_MAX, arg, "version out of range");
  return (uint32_t)v;
}

static void initctx (lua_State *L, Ctx *c, LSchema *ls, uint32_t version) {
  c->L = L;
  c->S = ls->S;
  c->w = &ls->w;
  c->version = version;
  c->nframes = 0;
  c->code = BW_OK;
  c->msg[0] = '\0';
  lua_getiuservalue(L, 1, UV_NAMES);
  c->names = lua_gettop(L);
  /* nesting is bounded by BW_MAXDEPTH: reserve the stack once */
  luaL_checkstack(L, 4 * BW_MAXDEPTH + 16, "schema nesting");
}

/* Encode value at 'v' as type 't' (and its id first if 'msg'). */
static void encodeinto (Ctx *c, uint32_t t, int v, int msg) {
  bw_writerreset(c->w);
  if (msg) bw_writebits(c->w, t, c->S->typebits);
  encstruct(c, t, v);
}

static int pushencoded (lua_State *L, bw_Writer *w) {
  size_t len;
  const uint8_t *p = bw_writerdata(w, &len);
  lua_pushlstring(L, len ? (const char *)p : "", len);
  return 1;
}

/* s:encode(name, value [, opts]) -> bytes */
static int schema_encode (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  uint32_t t = checktype(L, 2);
  Ctx c;
  initctx(L, &c, ls, optversion(L, 4, ls->S));
  encodeinto(&c, t, 3, 0);
  return pushencoded(L, c.w);
}

/* s:bits(name, value [, opts]) -> exact size in bits */
static int schema_bits (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  uint32_t t = checktype(L, 2);
  Ctx c;
  initctx(L, &c, ls, optversion(L, 4, ls->S));
  encodeinto(&c, t, 3, 0);
  lua_pushinteger(L, (lua_Integer)bw_bitswritten(c.w));
  return 1;
}

/* s:encode_message(name, value [, opts]) -> bytes, with the type id */
static int schema_encodemessage (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  uint32_t t = checktype(L, 2);
  Ctx c;
  initctx(L, &c, ls, optversion(L, 4, ls->S));
  encodeinto(&c, t, 3, 1);
  return pushencoded(L, c.w);
}

static int pushdecodeerror (lua_State *L, Ctx *c) {
  lua_pushnil(L);
  lua_pushstring(L, c->msg);
  lua_pushstring(L, bw_codename(c->code));
  return 3;
}

/* Decode type 't' from c->r; pushes the value or returns 0. */
static int decodefrom (Ctx *c, uint32_t t, int into) {
  if (decstruct(c, t, into)) return 1;
  if (c->code == BW_OK) readfail(c);
  return 0;
}

static int optinto (lua_State *L, int arg) {
  int into = 0;
  if (lua_istable(L, arg)) {
    lua_getfield(L, arg, "into");
    if (!lua_isnil(L, -1)) {
      luaL_argcheck(L, lua_istable(L, -1), arg, "'into' must be a table");
      into = lua_gettop(L);
    }
    else lua_pop(L, 1);
  }
  return into;
}

/* s:decode(name, bytes [, opts]) -> value | nil, message, code */
static int schema_decode (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  uint32_t t = checktype(L, 2);
  size_t len;
  const char *s = luaL_checklstring(L, 3, &len);
  uint32_t version = optversion(L, 4, ls->S);
  int into = optinto(L, 4);
  Ctx c;
  initctx(L, &c, ls, version);
  bw_readerinit(&c.r, s, len);
  if (!decodefrom(&c, t, into)) return pushdecodeerror(L, &c);
  return 1;
}

/* s:decode_message(bytes [, opts]) -> name, value | nil, message, code */
static int schema_decodemessage (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  uint32_t version = optversion(L, 3, ls->S);
  int into = optinto(L, 3);
  uint64_t t;
  Ctx c;
  initctx(L, &c, ls, version);
  bw_readerinit(&c.r, s, len);
  t = bw_readbits(&c.r, ls->S->typebits);
  if (c.r.status != BW_OK) {
    readfail(&c);
    return pushdecodeerror(L, &c);
  }
  if (t >= ls->S->ntypes) {
    decfail(&c, BW_ETAG, 0, "message type %" PRIu64 " out of range [0, %"
            PRIu32 "]", t, ls->S->ntypes - 1);
    return pushdecodeerror(L, &c);
  }
  lua_rawgeti(L, c.names, (lua_Integer)ls->S->types[t].name + 1);
  if (!decodefrom(&c, (uint32_t)t, into)) return pushdecodeerror(L, &c);
  return 2;
}

/* s:maxbits(name) -> worst-case bits, or nil when too large to count */
static int schema_maxbits (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  uint32_t t = checktype(L, 2);
  uint64_t m = ls->S->types[t].maxbits;
  if (m == BW_UNBOUNDED || m > (uint64_t)INT64_MAX) lua_pushnil(L);
  else lua_pushinteger(L, (lua_Integer)m);
  return 1;
}

/* s:fingerprint() -> 16 hex digits of the wire form's hash */
static int schema_fingerprint (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  char buf[17];
  snprintf(buf, sizeof(buf), "%016" PRIx64, ls->S->fingerprint);
  lua_pushstring(L, buf);
  return 1;
}

/* s:types() -> sorted list of type names */
static int schema_types (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  uint32_t i;
  lua_createtable(L, (int)ls->S->ntypes, 0);
  for (i = 0; i < ls->S->ntypes; i++) {
    uint32_t nm = ls->S->types[i].name;
    lua_pushlstring(L, ls->S->names[nm], ls->S->namelens[nm]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static int schema_version (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  lua_pushinteger(L, (lua_Integer)ls->S->version);
  return 1;
}

static int schema_tostring (lua_State *L) {
  LSchema *ls = (LSchema *)luaL_checkudata(L, 1, SCHEMA_MT);
  if (ls->S == NULL) lua_pushstring(L, "bitwire.Schema (released)");
  else lua_pushfstring(L, "bitwire.Schema (%s types, %p)",
                       lua_pushfstring(L, "%d", (int)ls->S->ntypes),
                       (void *)ls->S);
  return 1;
}

/* }========================================================== */


/* {===================== framed packets ===================== */

static uint64_t checkid (lua_State *L, int arg) {
  return (uint64_t)luaL_checkinteger(L, arg);
}

/* s:frame_encode(id, endcheck, name, value, message [, opts]) -> packet.
** A message carries its type id first. */
static int schema_frameencode (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  uint64_t id = checkid(L, 2);
  int endcheck = lua_toboolean(L, 3);
  uint32_t t = checktype(L, 4);
  int msg = lua_toboolean(L, 6);
  Ctx c;
  initctx(L, &c, ls, optversion(L, 7, ls->S));
  bw_writerreset(c.w);
  bw_framebegin(c.w);
  if (msg) bw_writebits(c.w, t, ls->S->typebits);
  encstruct(&c, t, 5);
  if (bw_frameend(c.w, id, endcheck) != BW_OK)
    return encerror(&c, "%s", bw_strerror(c.w->status));
  return pushencoded(L, c.w);
}

/* s:frame_decode(packet, id, endcheck, name, message [, opts]) ->
** value, or name, value for a message | nil, message, code */
static int schema_framedecode (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  uint64_t id = checkid(L, 3);
  int endcheck = lua_toboolean(L, 4);
  int msg = lua_toboolean(L, 6);
  uint32_t version = optversion(L, 7, ls->S);
  int into = optinto(L, 7);
  uint64_t t = msg ? 0 : checktype(L, 5);
  Ctx c;
  initctx(L, &c, ls, version);
  if (bw_frameopen(&c.r, s, len, id, endcheck) != BW_OK) {
    readfail(&c);
    return pushdecodeerror(L, &c);
  }
  if (msg) {
    uint64_t start = c.r.pos;
    t = bw_readbits(&c.r, ls->S->typebits);
    if (c.r.status != BW_OK) {
      readfail(&c);
      return pushdecodeerror(L, &c);
    }
    if (t >= ls->S->ntypes) {
      decfail(&c, BW_ETAG, start, "message type %" PRIu64
              " out of range [0, %" PRIu32 "]", t, ls->S->ntypes - 1);
      return pushdecodeerror(L, &c);
    }
    lua_rawgeti(L, c.names, (lua_Integer)ls->S->types[t].name + 1);
  }
  if (!decodefrom(&c, (uint32_t)t, into)) return pushdecodeerror(L, &c);
  return msg ? 2 : 1;
}

/* }========================================================== */


static const luaL_Reg schema_methods[] = {
  {"encode", schema_encode},
  {"decode", schema_decode},
  {"encode_message", schema_encodemessage},
  {"decode_message", schema_decodemessage},
  {"bits", schema_bits},
  {"maxbits", schema_maxbits},
  {"fingerprint", schema_fingerprint},
  {"types", schema_types},
  {"version", schema_version},
  {"frame_encode", schema_frameencode},
  {"frame_decode", schema_framedecode},
  {NULL, NULL}
};

void bw_openschema (lua_State *L) {
  if (luaL_newmetatable(L, SCHEMA_MT)) {
    luaL_newlib(L, schema_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, schema_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, schema_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
  lua_pushcfunction(L, schema_compile);
  lua_setfield(L, -2, "compile");
}
