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

/* the per-field helpers of the hot loops, inlined into them */
#if defined(__GNUC__) || defined(__clang__)
#define INLINE  inline __attribute__((always_inline))
#else
#define INLINE  inline
#endif
#define STACKKEYS  64   /* schemas with this many names keep them on the stack */
#define BATCH      32   /* fields a record fetches before encoding them */

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
  int              keys;     /* stack index of the first name, or 0 */
  int              checked;  /* > 0 inside a baseline keepbaseline checked */
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

/* A record's frame: entered once, its field set as the loop goes. */
static Frame *enterframe (Ctx *c) {
  Frame *fr = &c->frames[c->nframes < MAXFRAMES ? c->nframes : MAXFRAMES - 1];
  fr->name = BW_NONE;
  fr->index = -1;  /* no field yet: left out of paths */
  c->nframes++;
  return fr;
}

static void setframe (Frame *fr, const bw_Field *f) {
  fr->name = f->name;
  fr->index = f->name == BW_NONE ? -1 : 0;  /* align, check: no name */
}

/* Push the interned name 'nm' (a field name, enum value or type name):
** from the stack copies initctx made, else from the names array. */
static void pushkey (Ctx *c, uint32_t nm) {
  if (c->keys) lua_pushvalue(c->L, c->keys + (int)nm);
  else lua_rawgeti(c->L, c->names, (lua_Integer)nm + 1);
}

/* Write the current field path into 'buf'; returns its length. */
static size_t formatpath (const Ctx *c, char *buf, size_t size) {
  size_t n = 0;
  int i;
  buf[0] = '\0';
  for (i = 0; i < c->nframes && i < MAXFRAMES && n < size; i++) {
    const Frame *fr = &c->frames[i];
    int k;
    if (fr->name == BW_NONE && fr->index < 0) continue;
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


/* {===================== equality on the wire ===================== */
/* Two values are equal when they would encode to the same bits: quantized
** fields compare their quantized integers. Used by delta encoding. */

static int equalvalue (Ctx *c, const bw_Field *f, int a, int b);

static int equalopt (Ctx *c, const bw_Field *f, int a, int b) {
  int na = lua_isnil(c->L, a), nb = lua_isnil(c->L, b);
  if (na || nb) return na && nb;
  return equalvalue(c, f, a, b);
}

static int equalstruct (Ctx *c, uint32_t t, int a, int b) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first], *end = f + ty->count;
  if (!lua_istable(L, a) || !lua_istable(L, b)) return 0;
  for (; f < end; f++) {
    int eq;
    if (f->name == BW_NONE || !bw_fieldpresent(f, c->version)) continue;
    pushkey(c, f->name);
    lua_pushvalue(L, -1);
    lua_rawget(L, a);
    lua_insert(L, -2);
    lua_rawget(L, b);
    eq = equalopt(c, f, lua_gettop(L) - 1, lua_gettop(L));
    lua_pop(L, 2);
    if (!eq) return 0;
  }
  return 1;
}

/* Compare slots 1..n (or elements of equal-length arrays). */
static int equalslots (Ctx *c, const bw_Field *e, int a, int b,
                       lua_Integer n, int holes) {
  lua_State *L = c->L;
  lua_Integer i;
  for (i = 1; i <= n; i++) {
    int eq;
    lua_rawgeti(L, a, i);
    lua_rawgeti(L, b, i);
    eq = holes ? equalopt(c, e, lua_gettop(L) - 1, lua_gettop(L))
               : equalvalue(c, e, lua_gettop(L) - 1, lua_gettop(L));
    lua_pop(L, 2);
    if (!eq) return 0;
  }
  return 1;
}

static int quatof (const bw_Field *f, lua_State *L, int idx, uint32_t q[4]) {
  double v[4];
  int i;
  if (!lua_istable(L, idx)) return 0;
  for (i = 0; i < 4; i++) {
    lua_rawgeti(L, idx, i + 1);
    v[i] = (double)lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  return bw_quatencode(&f->q, v, q);
}

static int equalvalue (Ctx *c, const bw_Field *f, int a, int b) {
  lua_State *L = c->L;
  int ta = lua_type(L, a);
  if (ta != lua_type(L, b)) return 0;
  switch (f->kind) {
    case BW_KFLOAT:
      return ta == LUA_TNUMBER
        && bw_qfloatencode(&f->q, (double)lua_tonumber(L, a))
           == bw_qfloatencode(&f->q, (double)lua_tonumber(L, b));
    case BW_KFLOAT32: case BW_KFLOAT64: {
      double x = (double)lua_tonumber(L, a), y = (double)lua_tonumber(L, b);
      return ta == LUA_TNUMBER && (x == y || (x != x && y != y));
    }
    case BW_KQUAT: {
      uint32_t qa[4], qb[4];
      return quatof(f, L, a, qa) && quatof(f, L, b, qb)
        && memcmp(qa, qb, sizeof(qa)) == 0;
    }
    case BW_KARRAY: {
      lua_Integer n;
      if (ta != LUA_TTABLE) return 0;
      n = (lua_Integer)lua_rawlen(L, a);
      return n == (lua_Integer)lua_rawlen(L, b)
        && equalslots(c, &c->S->fields[f->ref], a, b, n, 0);
    }
    case BW_KSPARSE:
      return ta == LUA_TTABLE
        && equalslots(c, &c->S->fields[f->ref], a, b, (lua_Integer)f->max, 1);
    case BW_KSTRUCT:
      return equalstruct(c, f->ref, a, b);
    default:
      return lua_rawequal(L, a, b);
  }
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
      pushkey(c, f->def.s);
      break;
    default: lua_pushinteger(L, (lua_Integer)f->def.i); break;
  }
}

static lua_Integer checkint (Ctx *c, int idx, int tt) {
  int ok = 0;
  lua_Integer v = 0;
  if (tt == LUA_TNUMBER) v = lua_tointegerx(c->L, idx, &ok);
  if (!ok) {  /* numeric strings are refused */
    if (tt == LUA_TNUMBER)
      encerror(c, "expected an integer, got %s", lua_tostring(c->L, idx));
    enctype(c, idx, "an integer");
  }
  return v;
}

static double checknum (Ctx *c, int idx, int tt) {
  if (tt != LUA_TNUMBER) enctype(c, idx, "a number");
  return (double)lua_tonumber(c->L, idx);
}

static const char *checkstr (Ctx *c, int idx, int tt, size_t *len) {
  if (tt != LUA_TSTRING) enctype(c, idx, "a string");
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

/* Bits the relative encoding spends to go from 'prev' to 'cur'. */
static uint64_t relcost (const bw_Field *f, uint64_t prev, uint64_t cur) {
  if (f->ntiers > 0)
    return bw_tieredbits(cur - prev, 1, (uint64_t)f->max + 1, f->tierbits,
                         f->ntiers);
  return bw_intrelativebits(prev, cur);
}

static void writerel (Ctx *c, const bw_Field *f, uint64_t prev, uint64_t cur) {
  if (f->ntiers > 0)
    bw_writetiered(c->w, cur - prev, 1, (uint64_t)f->max + 1, f->tierbits,
                   f->ntiers);
  else
    bw_writeintrelative(c->w, prev, cur);
}

static void encvalue (Ctx *c, const bw_Field *f, int idx, int tt);


static void encdeltastruct (Ctx *c, uint32_t t, int idx, int bidx);

/* Is slot 'i' sent? Present, or with a baseline at 'bidx', different. */
static int slotsent (Ctx *c, const bw_Field *e, int idx, int bidx,
                     lua_Integer i) {
  lua_State *L = c->L;
  int sent;
  if (bidx == 0) {
    sent = lua_rawgeti(L, idx, i) != LUA_TNIL;
    lua_pop(L, 1);
    return sent;
  }
  lua_rawgeti(L, idx, i);
  lua_rawgeti(L, bidx, i);
  sent = !equalopt(c, e, lua_gettop(L) - 1, lua_gettop(L));
  lua_pop(L, 2);
  return sent;
}

/* Slot 'i': its value; against a baseline, a presence bit first and a
** delta when both have a record there. */
static void encslot (Ctx *c, const bw_Field *e, int idx, int bidx,
                     lua_Integer i) {
  lua_State *L = c->L;
  int v;
  pushframe(c, BW_NONE, i);
  lua_rawgeti(L, idx, i);
  v = lua_gettop(L);
  if (bidx != 0) {
    int present = !lua_isnil(L, v);
    bw_writebits(c->w, (uint64_t)present, 1);
    lua_rawgeti(L, bidx, i);
    if (present && e->kind == BW_KSTRUCT && lua_istable(L, -1))
      encdeltastruct(c, e->ref, v, v + 1);
    else if (present)
      encvalue(c, e, v, lua_type(L, v));
    lua_pop(L, 1);
  }
  else
    encvalue(c, e, v, lua_type(L, v));
  lua_pop(L, 1);
  popframe(c);
}

/* A sparse array: the sent slots of 1..max, in the cheapest encoding when
** 'auto'. Keys other than 1..max are refused. */
static void encsparse (Ctx *c, const bw_Field *f, int idx, int bidx) {
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer i, n = (lua_Integer)f->max, prev = 0, count = 0, keys = 0;
  lua_Integer present = 0;
  unsigned ibits = bw_bitsrequired(0, (int64_t)n - 1);
  uint64_t cost[3];
  int enc = f->encoding;
  if (!lua_istable(L, idx)) enctype(c, idx, "a table");
  if (bidx != 0 && !lua_istable(L, bidx)) bidx = 0;
  cost[BW_SPRELATIVE] = 0;
  for (i = 1; i <= n; i++) {
    if (bidx != 0) {
      present += lua_rawgeti(L, idx, i) != LUA_TNIL;
      lua_pop(L, 1);
    }
    if (slotsent(c, e, idx, bidx, i)) {
      count++;
      cost[BW_SPRELATIVE] += relcost(f, (uint64_t)prev, (uint64_t)i);
      prev = i;
    }
  }
  cost[BW_SPRELATIVE] += relcost(f, (uint64_t)prev, (uint64_t)n + 1);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    keys++;
    lua_pop(L, 1);
  }
  if (keys != (bidx != 0 ? present : count))
    encerror(c, "sparse keys must be integers in [1, %I]", n);
  cost[BW_SPMASK] = (uint64_t)n;
  cost[BW_SPINDEX] = f->nbits + (uint64_t)count * ibits;
  if (enc == BW_SPAUTO) {
    enc = cost[BW_SPINDEX] < cost[BW_SPMASK] ? BW_SPINDEX : BW_SPMASK;
    if (cost[BW_SPRELATIVE] < cost[enc]) enc = BW_SPRELATIVE;
    bw_writebits(c->w, (uint64_t)enc, 2);
  }
  if (enc == BW_SPINDEX) bw_writebits(c->w, (uint64_t)count, f->nbits);
  prev = 0;
  for (i = 1; i <= n; i++) {
    int sent = slotsent(c, e, idx, bidx, i);
    if (enc == BW_SPMASK) bw_writebits(c->w, (uint64_t)sent, 1);
    if (!sent) continue;
    if (enc == BW_SPINDEX) bw_writebits(c->w, (uint64_t)i - 1, ibits);
    else if (enc == BW_SPRELATIVE) writerel(c, f, (uint64_t)prev, (uint64_t)i);
    encslot(c, e, idx, bidx, i);
    prev = i;
  }
  if (enc == BW_SPRELATIVE) writerel(c, f, (uint64_t)prev, (uint64_t)n + 1);
}

static void encquat (Ctx *c, const bw_Field *f, int idx) {
  lua_State *L = c->L;
  double v[4];
  uint32_t q[4];
  int i;
  if (!lua_istable(L, idx)) enctype(c, idx, "a table {x, y, z, w}");
  if (lua_rawlen(L, idx) != 4)
    encerror(c, "quaternion needs 4 components, got %I",
             (lua_Integer)lua_rawlen(L, idx));
  for (i = 0; i < 4; i++) {
    if (lua_rawgeti(L, idx, i + 1) != LUA_TNUMBER)
      encerror(c, "quaternion component %d is not a number", i + 1);
    v[i] = (double)lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  if (!bw_quatencode(&f->q, v, q))
    encerror(c, "quaternion has no length (or is not finite)");
  bw_writebits(c->w, q[0], 2);
  for (i = 1; i < 4; i++) bw_writebits(c->w, q[i], f->nbits);
}

/* Write a scalar (a kind other than array, struct or sparse). Not
** recursive, so the compiler can inline it into the loops over fields. */
static void encleaf (Ctx *c, const bw_Field *f, int idx, int tt) {
  lua_State *L = c->L;
  bw_Writer *w = c->w;
  switch (f->kind) {
    case BW_KINT: {
      lua_Integer v = checkint(c, idx, tt);
      if (v < f->min || v > f->max)
        encerror(c, "%I out of range [%I, %I]", v, (lua_Integer)f->min,
                 (lua_Integer)f->max);
      bw_writebits(w, (uint64_t)v - (uint64_t)f->min, f->nbits);
      break;
    }
    case BW_KUINT: {
      lua_Integer v = checkint(c, idx, tt);
      if (f->nbits < 64 && (v < 0 || (uint64_t)v >> f->nbits != 0))
        encerror(c, "%I does not fit in %d bits", v, (int)f->nbits);
      bw_writebits(w, (uint64_t)v, f->nbits);
      break;
    }
    case BW_KBOOL:
      if (tt != LUA_TBOOLEAN) enctype(c, idx, "a boolean");
      bw_writebits(w, (uint64_t)lua_toboolean(L, idx), 1);
      break;
    case BW_KFLOAT: {
      double x = checknum(c, idx, tt);
      if (!(x >= f->dmin && x <= f->dmax) && !f->clamp)
        encerror(c, "%f out of range [%f, %f]", (lua_Number)x,
                 (lua_Number)f->dmin, (lua_Number)f->dmax);
      bw_writebits(w, bw_qfloatencode(&f->q, x), f->q.nbits);
      break;
    }
    case BW_KFLOAT32:  /* as w:float: beyond float32's range, infinity */
      bw_writefloat(w, bw_tofloat32(checknum(c, idx, tt)));
      break;
    case BW_KFLOAT64:
      bw_writedouble(w, checknum(c, idx, tt));
      break;
    case BW_KENUM: {
      size_t len, i, n = (size_t)f->max + 1;
      const char *s = checkstr(c, idx, tt, &len);
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
      const char *s = checkstr(c, idx, tt, &len);
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
      const char *s = checkstr(c, idx, tt, &len);
      checklen(c, f, len, "length");
      bw_writebits(w, (uint64_t)len - (uint64_t)f->min, f->nbits);
      bw_writebytes(w, s, len);
      break;
    }
    case BW_KALIGN: bw_writealign(w); break;
    case BW_KCHECK: bw_writecheck(w, f->magic); break;
    case BW_KQUAT: encquat(c, f, idx); break;
    case BW_KTIERED: {
      lua_Integer v = checkint(c, idx, tt);
      if (v < f->min || v > f->max)
        encerror(c, "%I out of range [%I, %I]", v, (lua_Integer)f->min,
                 (lua_Integer)f->max);
      bw_writetiered(w, (uint64_t)v - (uint64_t)f->min, 0,
                     (uint64_t)f->max - (uint64_t)f->min, f->tierbits,
                     f->ntiers);
      break;
    }
    default:
      encerror(c, "field kind %d not supported", (int)f->kind);
  }
  if (w->status != BW_OK)
    encerror(c, "%s (packet over %I bytes)", bw_strerror(w->status),
             (lua_Integer)w->maxbytes);
}

/* Write the value at 'idx' (of Lua type 'tt') as field 'f'. */
static void encvalue (Ctx *c, const bw_Field *f, int idx, int tt) {
  lua_State *L = c->L;
  bw_Writer *w = c->w;
  switch (f->kind) {
    case BW_KARRAY: {
      const bw_Field *e = &c->S->fields[f->ref];
      lua_Integer i, n;
      if (!lua_istable(L, idx)) enctype(c, idx, "a table");
      n = (lua_Integer)lua_rawlen(L, idx);
      checklen(c, f, (size_t)n, "count");
      bw_writebits(w, (uint64_t)n - (uint64_t)f->min, f->nbits);
      for (i = 1; i <= n; i++) {
        pushframe(c, BW_NONE, i);
        int et = lua_rawgeti(L, idx, i);
        if (et == LUA_TNIL) encerror(c, "missing");
        encvalue(c, e, lua_gettop(L), et);
        lua_pop(L, 1);
        popframe(c);
      }
      break;
    }
    case BW_KSTRUCT:
      encstruct(c, f->ref, idx);
      break;
    case BW_KSPARSE: encsparse(c, f, idx, 0); break;
    default:
      encleaf(c, f, idx, tt);
      return;
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
  int top = lua_gettop(L);
  Frame *fr;
  if (!lua_istable(L, idx)) enctype(c, idx, "a table");
  if (!lua_checkstack(L, BATCH + 8)) encerror(c, "stack overflow");
  fr = enterframe(c);
  while (f < end) {  /* BATCH fields at a time: fetch all, then encode */
    const bw_Field *chunk = f, *stop = end - f > BATCH ? f + BATCH : end;
    int tt[BATCH], k, slot = top;
    for (k = 0; f < stop; f++, k++)
      if (f->name != BW_NONE && (!ty->versioned
                                 || bw_fieldpresent(f, c->version))) {
        pushkey(c, f->name);
        tt[k] = lua_rawget(L, idx);
      }
    for (f = chunk, k = 0; f < stop; f++, k++) {
      int v, vt;
      if (ty->versioned && !bw_fieldpresent(f, c->version)) continue;
      setframe(fr, f);
      if (f->name == BW_NONE) {  /* align or check */
        encleaf(c, f, 0, LUA_TNONE);
        continue;
      }
      v = ++slot;
      vt = tt[k];
      if (vt == LUA_TNIL) {
        if (f->optional) {
          bw_writebits(c->w, 0, 1);
          continue;
        }
        if (!f->hasdefault) encerror(c, "missing");
        pushdefault(c, f);
        lua_replace(L, v);
        vt = lua_type(L, v);
      }
      else if (f->optional)
        bw_writebits(c->w, 1, 1);
      if (f->kind == BW_KARRAY || f->kind == BW_KSTRUCT
          || f->kind == BW_KSPARSE)
        encvalue(c, f, v, vt);
      else
        encleaf(c, f, v, vt);
    }
    lua_settop(L, top);
  }
  c->nframes--;
}

/* A record against its baseline at 'bidx': per field a changed bit, then
** only what changed (nested records and sparse slots as deltas again). */
static void encdeltastruct (Ctx *c, uint32_t t, int idx, int bidx) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first];
  const bw_Field *end = f + ty->count;
  if (!lua_istable(L, idx)) enctype(c, idx, "a table");
  for (; f < end; f++) {
    int v, b, changed;
    if (!bw_fieldpresent(f, c->version)) continue;
    if (f->name == BW_NONE) {
      encvalue(c, f, 0, LUA_TNONE);
      continue;
    }
    pushframe(c, f->name, 0);
    pushkey(c, f->name);
    lua_pushvalue(L, -1);
    lua_rawget(L, idx);
    if (lua_isnil(L, -1) && !f->optional) {
      if (!f->hasdefault) encerror(c, "missing");
      lua_pop(L, 1);
      pushdefault(c, f);
    }
    lua_pushvalue(L, -2);  /* stack: key, value, key */
    if (lua_istable(L, bidx)) lua_rawget(L, bidx);
    else {
      lua_pop(L, 1);
      lua_pushnil(L);
    }
    b = lua_gettop(L);
    v = b - 1;
    changed = !equalopt(c, f, v, b);
    bw_writebits(c->w, (uint64_t)changed, 1);
    if (changed) {
      int present = !lua_isnil(L, v);
      if (f->optional) bw_writebits(c->w, (uint64_t)present, 1);
      if (present && !lua_isnil(L, b) && f->kind == BW_KSTRUCT)
        encdeltastruct(c, f->ref, v, b);
      else if (present && lua_istable(L, b) && f->kind == BW_KSPARSE)
        encsparse(c, f, v, b);
      else if (present)
        encvalue(c, f, v, lua_type(L, v));
    }
    lua_pop(L, 3);
    popframe(c);
  }
}

/* }========================================================== */


/* {===================== decode ===================== */

static int decstruct (Ctx *c, uint32_t t, int into);
static int decvalue (Ctx *c, const bw_Field *f, int into);

/* Read an n-bit offset and check it against [min, max]; '*v' gets min +
** offset. 'what' names the quantity for the message. */
/* The offset 'u' read at 'start' is past f's range: say what it was. */
static int rangefail (Ctx *c, const bw_Field *f, const char *what,
                      uint64_t u, uint64_t start) {
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

static int readrange (Ctx *c, const bw_Field *f, const char *what,
                      int64_t *v) {
  uint64_t start = c->r.pos;
  uint64_t u = bw_readbits(&c->r, f->nbits);
  if (c->r.status != BW_OK) return readfail(c);
  if (u > (uint64_t)f->max - (uint64_t)f->min)
    return rangefail(c, f, what, u, start);
  *v = (int64_t)((uint64_t)f->min + u <= (uint64_t)INT64_MAX
                 ? (int64_t)((uint64_t)f->min + u)
                 : -(int64_t)(~((uint64_t)f->min + u)) - 1);
  return 1;
}

static int decdeltastruct (Ctx *c, uint32_t t, int bidx);
static void pushkept (Ctx *c, const bw_Field *f, int idx);
static LSchema *checkschema (lua_State *L, int arg);
static void initctx (lua_State *L, Ctx *c, LSchema *ls, uint32_t version,
                     int stackkeys);

/* Protected call (schema, field index, value, version): encode the value
** as that field into the schema's writer, raising where it does not fit. */
static int encodefield (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  Ctx c;
  initctx(L, &c, ls, (uint32_t)lua_tointeger(L, 4), 0);  /* one field */
  bw_writerreset(c.w);
  encvalue(&c, &ls->S->fields[lua_tointeger(L, 2)], 3, lua_type(L, 3));
  return 0;
}

/* A delta keeps from its baseline what it does not send, and the packet
** picks the message type and the version: what it keeps (the value at 'v',
** for field 'f') must be a value of that field, or the result would not be
** a value of its type. Checked by encoding it; the schema is at index 1. */
static int keepbaseline (Ctx *c, const bw_Field *f, int v) {
  lua_State *L = c->L;
  const char *msg, *p;
  size_t len;
  int st;
  if (c->checked > 0) return 1;  /* part of a baseline checked whole */
  if (lua_isnil(L, v)) {
    if (f->optional) return 1;
    return decfail(c, BW_EBASELINE, c->r.pos, "unchanged, but the baseline "
                   "has no value");
  }
  lua_pushcfunction(L, encodefield);
  lua_pushvalue(L, 1);
  lua_pushinteger(L, (lua_Integer)(f - c->S->fields));
  lua_pushvalue(L, v);
  lua_pushinteger(L, (lua_Integer)c->version);
  st = lua_pcall(L, 4, 0, 0);
  if (st == LUA_OK) return 1;
  if (st == LUA_ERRMEM) lua_error(L);
  msg = lua_tostring(L, -1);
  if (msg == NULL) msg = "?";
  len = strlen(msg);
  for (p = msg; (p = strstr(p, " (bit ")) != NULL; p++)
    len = (size_t)(p - msg);  /* cut the encoder's bit position */
  decfail(c, BW_EBASELINE, c->r.pos, "baseline value does not fit: %.*s",
          (int)len, msg);
  lua_pop(L, 1);
  return 0;
}

/* Decode slot 'i' of a sparse array into the table at 't'. Against a
** baseline 'bidx': a presence bit, then a delta when the baseline has a
** record there. */
static int decslot (Ctx *c, const bw_Field *e, int t, int reuse, int bidx,
                    lua_Integer i) {
  int old = 0;
  pushframe(c, BW_NONE, i);
  if (bidx != 0) {
    uint64_t present = bw_readbits(&c->r, 1);
    if (c->r.status != BW_OK) return readfail(c);
    if (!present) lua_pushnil(c->L);
    else {
      int ok;
      lua_rawgeti(c->L, bidx, i);
      if (e->kind == BW_KSTRUCT && lua_istable(c->L, -1))
        ok = decdeltastruct(c, e->ref, lua_gettop(c->L));
      else
        ok = decvalue(c, e, 0);
      if (!ok) return 0;
      lua_remove(c->L, -2);
    }
  }
  else {
    if (reuse && (e->kind == BW_KSTRUCT || e->kind == BW_KARRAY
                  || e->kind == BW_KSPARSE)) {
      lua_rawgeti(c->L, t, i);
      old = lua_gettop(c->L);
    }
    if (!decvalue(c, e, old)) return 0;
  }
  lua_rawseti(c->L, t, i);
  if (old) lua_pop(c->L, 1);
  popframe(c);
  return 1;
}

/* Clear slots [from, to] of a reused sparse table. */
static void clearslots (lua_State *L, int t, lua_Integer from, lua_Integer to) {
  for (; from <= to; from++) {
    lua_pushnil(L);
    lua_rawseti(L, t, from);
  }
}

/* A sparse array; against a baseline 'bidx' the result starts as a copy of
** the baseline and the sent slots change it. */
static int decsparse (Ctx *c, const bw_Field *f, int into, int bidx) {
  lua_State *L = c->L;
  bw_Reader *r = &c->r;
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer n = (lua_Integer)f->max, prev = 0, i;
  unsigned ibits = bw_bitsrequired(0, (int64_t)n - 1);
  int t, enc = f->encoding, reuse = into != 0 && lua_istable(L, into);
  uint64_t start = r->pos, slotmin = bidx != 0 ? 1 : e->minbits;
  if (enc == BW_SPAUTO) {
    enc = (int)bw_readbits(r, 2);
    if (r->status != BW_OK) return readfail(c);
    if (enc == BW_SPAUTO)
      return decfail(c, BW_ERANGE, start, "unknown sparse encoding 3");
  }
  if (bidx != 0) {
    reuse = 0;
    if (!keepbaseline(c, f, bidx)) return 0;
    pushkept(c, f, bidx);
    c->checked++;  /* the slots' records are checked with the whole */
  }
  else if (reuse) lua_pushvalue(L, into);
  else lua_createtable(L, 0, 0);
  t = lua_gettop(L);
  if (enc == BW_SPMASK) {
    for (i = 1; i <= n; i++) {
      uint64_t present = bw_readbits(r, 1);
      if (r->status != BW_OK) return readfail(c);
      if (present) {
        if (!decslot(c, e, t, reuse, bidx, i)) return 0;
      }
      else if (reuse) clearslots(L, t, i, i);
    }
    c->checked -= bidx != 0;
    return 1;
  }
  if (enc == BW_SPINDEX) {
    lua_Integer count, k;
    start = r->pos;
    count = (lua_Integer)bw_readbits(r, f->nbits);
    if (r->status != BW_OK) return readfail(c);
    if (count > n)
      return decfail(c, BW_ERANGE, start, "count %lld above max %lld",
                     (long long)count, (long long)n);
    /* a slot costs its index and its value, or against a baseline at
    ** least its index and a presence bit */
    if (ibits + slotmin > 0
        && (uint64_t)count > bw_bitsremaining(r) / (ibits + slotmin))
      return decfail(c, BW_ETRUNC, start, "count %lld needs more bits "
                     "than are left", (long long)count);
    for (k = 0; k < count; k++) {
      start = r->pos;
      i = (lua_Integer)bw_readbits(r, ibits) + 1;
      if (r->status != BW_OK) return readfail(c);
      if (i <= prev || i > n)
        return decfail(c, BW_ERANGE, start, "index %lld not in [%lld, %lld]",
                       (long long)i, (long long)prev + 1, (long long)n);
      if (reuse) clearslots(L, t, prev + 1, i - 1);
      if (!decslot(c, e, t, reuse, bidx, i)) return 0;
      prev = i;
    }
  }
  else {  /* relative: rising indices until the sentinel n + 1 */
    for (;;) {
      uint64_t cur;
      start = r->pos;
      if (f->ntiers > 0)
        cur = (uint64_t)prev + bw_readtiered(r, 1, (uint64_t)n + 1,
                                             f->tierbits, f->ntiers);
      else
        cur = bw_readintrelative(r, (uint64_t)prev);
      if (r->status != BW_OK) return readfail(c);
      if (cur == (uint64_t)n + 1) break;
      if (cur > (uint64_t)n)
        return decfail(c, BW_ERANGE, start, "index %llu above max %lld",
                       (unsigned long long)cur, (long long)n);
      i = (lua_Integer)cur;
      if (reuse) clearslots(L, t, prev + 1, i - 1);
      if (!decslot(c, e, t, reuse, bidx, i)) return 0;
      prev = i;
    }
  }
  if (reuse) clearslots(L, t, prev + 1, n);
  c->checked -= bidx != 0;
  return 1;
}

static int decquat (Ctx *c, const bw_Field *f) {
  uint32_t q[4];
  double v[4];
  int i;
  q[0] = (uint32_t)bw_readbits(&c->r, 2);
  for (i = 1; i < 4; i++) q[i] = (uint32_t)bw_readbits(&c->r, f->nbits);
  if (c->r.status != BW_OK) return readfail(c);
  bw_quatdecode(&f->q, q, v);
  lua_createtable(c->L, 4, 0);
  for (i = 0; i < 4; i++) {
    lua_pushnumber(c->L, (lua_Number)v[i]);
    lua_rawseti(c->L, -2, i + 1);
  }
  return 1;
}

/* Push the value of field 'f'. 'into' is the stack index of the old value
** to reuse (tables only), or 0. Returns 0 on failure. */
/* Push a scalar (a kind below BW_KARRAY). Not recursive, so the compiler
** can inline it into the loops over fields. Returns 0 on failure. */
/* Check and push the raw bits 'u' of fixed-width field 'f' (read at bit
** 'start'). Returns 0 on a value out of range. */
static INLINE int pushfixed (Ctx *c, const bw_Field *f, uint64_t u,
                             uint64_t start) {
  lua_State *L = c->L;
  switch (f->kind) {
    case BW_KINT: case BW_KENUM: {
      uint64_t val = (uint64_t)f->min + u;
      if (u > (uint64_t)f->max - (uint64_t)f->min)
        return rangefail(c, f, "", u, start);
      if (f->kind == BW_KENUM) pushkey(c, f->ref + (uint32_t)u);
      else lua_pushinteger(L, (lua_Integer)(val <= (uint64_t)INT64_MAX
                                            ? (int64_t)val
                                            : -(int64_t)(~val) - 1));
      return 1;
    }
    case BW_KUINT:
      lua_pushinteger(L, (lua_Integer)(u <= (uint64_t)INT64_MAX ? (int64_t)u
                                       : -(int64_t)(~u) - 1));
      return 1;
    case BW_KBOOL:
      lua_pushboolean(L, (int)u);
      return 1;
    default:  /* BW_KFLOAT */
      if (u > f->q.miv)
        return decfail(c, BW_ERANGE, start, "quantized %" PRIu64
                       " out of range [0, %" PRIu32 "]", u, f->q.miv);
      lua_pushnumber(L, (lua_Number)bw_qfloatdecode(&f->q, (uint32_t)u));
      return 1;
  }
}

/* Push a scalar (a kind below BW_KARRAY). Not recursive, so the compiler
** can inline it into the loops over fields. Returns 0 on failure. */
static int decleaf (Ctx *c, const bw_Field *f) {
  lua_State *L = c->L;
  bw_Reader *r = &c->r;
  int64_t v;
  switch (f->kind) {
    case BW_KINT: case BW_KENUM: case BW_KUINT: case BW_KBOOL: case BW_KFLOAT: {
      uint64_t start = r->pos;
      uint64_t u = bw_readbits(r, f->kind == BW_KFLOAT ? f->q.nbits
                                  : f->kind == BW_KBOOL ? 1 : f->nbits);
      if (r->status != BW_OK) return readfail(c);
      return pushfixed(c, f, u, start);
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

static int decvalue (Ctx *c, const bw_Field *f, int into) {
  lua_State *L = c->L;
  bw_Reader *r = &c->r;
  switch (f->kind) {
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
      reuse = reuse && (e->kind == BW_KSTRUCT || e->kind == BW_KARRAY
                        || e->kind == BW_KSPARSE);
      for (i = 1; i <= n; i++) {
        pushframe(c, BW_NONE, (lua_Integer)i);
        /* an old element table is refilled in place: nothing to store */
        if (reuse && i <= oldn
            && lua_rawgeti(L, t, (lua_Integer)i) == LUA_TTABLE) {
          int ok = e->kind == BW_KSTRUCT ? decstruct(c, e->ref, t + 1)
                                         : decvalue(c, e, t + 1);
          if (!ok) return 0;
          lua_settop(L, t);
        }
        else {
          if (reuse && i <= oldn) lua_pop(L, 1);
          if (!(e->kind < BW_KARRAY ? decleaf(c, e)
                : e->kind == BW_KSTRUCT ? decstruct(c, e->ref, 0)
                : decvalue(c, e, 0)))
            return 0;
          lua_rawseti(L, t, (lua_Integer)i);
        }
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
    case BW_KSPARSE:
      return decsparse(c, f, into, 0);
    case BW_KQUAT:
      return decquat(c, f);
    case BW_KTIERED: {
      uint64_t u = bw_readtiered(r, 0, (uint64_t)f->max - (uint64_t)f->min,
                                 f->tierbits, f->ntiers);
      if (r->status != BW_OK) return readfail(c);
      u += (uint64_t)f->min;
      lua_pushinteger(L, (lua_Integer)(u <= (uint64_t)INT64_MAX ? (int64_t)u
                                       : -(int64_t)(~u) - 1));
      return 1;
    }
    default:
      return decleaf(c, f);
  }
}

static int decstruct (Ctx *c, uint32_t t, int into) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first];
  const bw_Field *end = f + ty->count;
  const bw_Field *slow = f;  /* fields before it are read one by one */
  int tbl, reuse = into != 0 && lua_istable(L, into);
  Frame *fr = enterframe(c);
  if (reuse) lua_pushvalue(L, into);
  else lua_createtable(L, 0, (int)ty->count);
  tbl = lua_gettop(L);
  for (; f < end; f++) {
    if (f->fuse > 1 && f >= slow) {  /* a run of fixed fields: one read */
      const bw_Field *g = f, *gend = f + f->fuse;
      uint64_t start = c->r.pos, u = bw_readbits(&c->r, f->fusebits);
      if (c->r.status != BW_OK) {  /* find the field that ran out */
        c->r.status = BW_OK;
        c->r.pos = start;
        slow = gend;
      }
      else {
        for (; g < gend; g++) {
          unsigned w = g->kind == BW_KFLOAT ? g->q.nbits
                     : g->kind == BW_KBOOL ? 1 : g->nbits;
          setframe(fr, g);
          pushkey(c, g->name);
          if (!pushfixed(c, g, w < 64 ? u & ((UINT64_C(1) << w) - 1) : u,
                         start))
            return 0;
          lua_rawset(L, tbl);
          u >>= w;  /* w <= BW_FUSEBITS < 64 */
          start += w;
        }
        f = gend - 1;
        continue;
      }
    }
    setframe(fr, f);
    if (ty->versioned && !bw_fieldpresent(f, c->version)) {
      if (f->name == BW_NONE) continue;
      pushkey(c, f->name);
      if (f->hasdefault) pushdefault(c, f);
      else if (reuse) lua_pushnil(L);
      else {
        lua_pop(L, 1);
        continue;
      }
      lua_rawset(L, tbl);
      continue;
    }
    if (f->name == BW_NONE) {  /* align or check */
      if (!decleaf(c, f)) return 0;
      continue;
    }
    pushkey(c, f->name);
    if (f->optional) {
      uint64_t present = bw_readbits(&c->r, 1);
      if (c->r.status != BW_OK) return readfail(c);
      if (!present) {
        if (reuse) {
          lua_pushnil(L);
          lua_rawset(L, tbl);
        }
        else lua_pop(L, 1);
        continue;
      }
    }
    if (f->kind < BW_KARRAY) {
      if (!decleaf(c, f)) return 0;
    }
    else if (reuse && (f->kind == BW_KSTRUCT || f->kind == BW_KARRAY
                       || f->kind == BW_KSPARSE)) {
      lua_pushvalue(L, -1);
      lua_rawget(L, tbl);
      if (!decvalue(c, f, lua_gettop(L))) return 0;
      lua_replace(L, -2);
    }
    else if (!decvalue(c, f, 0)) return 0;
    lua_rawset(L, tbl);
  }
  c->nframes--;
  return 1;
}

/* Push a copy of the value at 'idx' of field 'f', which keepbaseline has
** checked: tables are copied along the schema (sized as decode sizes them),
** so a decoded value never shares a table with its baseline. */
static void pushkept (Ctx *c, const bw_Field *f, int idx) {
  lua_State *L = c->L;
  int t;
  if (lua_type(L, idx) != LUA_TTABLE) {  /* scalars, absent optionals */
    lua_pushvalue(L, idx);
    return;
  }
  switch (f->kind) {
    case BW_KSTRUCT: {
      const bw_Type *ty = &c->S->types[f->ref];
      const bw_Field *g = &c->S->fields[ty->first], *end = g + ty->count;
      lua_createtable(L, 0, (int)ty->count);
      t = lua_gettop(L);
      for (; g < end; g++) {
        if (g->name == BW_NONE) continue;
        pushkey(c, g->name);
        lua_pushvalue(L, -1);
        if (lua_rawget(L, idx) == LUA_TNIL) {
          lua_pop(L, 2);
          continue;
        }
        pushkept(c, g, lua_gettop(L));
        lua_remove(L, -2);
        lua_rawset(L, t);
      }
      return;
    }
    case BW_KARRAY: case BW_KQUAT: {  /* a quat is {x, y, z, w} */
      const bw_Field *e = f->kind == BW_KARRAY ? &c->S->fields[f->ref] : f;
      lua_Integer i, n = (lua_Integer)lua_rawlen(L, idx);
      lua_createtable(L, (int)n, 0);
      t = lua_gettop(L);
      for (i = 1; i <= n; i++) {
        int et = lua_rawgeti(L, idx, i);
        if (et == LUA_TTABLE && e != f) {
          pushkept(c, e, lua_gettop(L));
          lua_remove(L, -2);
        }
        lua_rawseti(L, t, i);
      }
      return;
    }
    case BW_KSPARSE: {  /* keys are integers in [1, max]: checked */
      const bw_Field *e = &c->S->fields[f->ref];
      lua_createtable(L, (int)lua_rawlen(L, idx), 0);
      t = lua_gettop(L);
      lua_pushnil(L);
      while (lua_next(L, idx)) {
        lua_pushvalue(L, -2);
        if (lua_type(L, -2) == LUA_TTABLE) pushkept(c, e, lua_gettop(L) - 1);
        else lua_pushvalue(L, -2);
        lua_rawset(L, t);
        lua_pop(L, 1);
      }
      return;
    }
    default:
      lua_pushvalue(L, idx);
  }
}

/* A record against its baseline at 'bidx' (see encdeltastruct). */
static int decdeltastruct (Ctx *c, uint32_t t, int bidx) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first];
  const bw_Field *end = f + ty->count;
  int tbl;
  lua_createtable(L, 0, (int)ty->count);
  tbl = lua_gettop(L);
  for (; f < end; f++) {
    uint64_t changed;
    int b;
    if (f->name == BW_NONE) {
      if (bw_fieldpresent(f, c->version) && !decvalue(c, f, 0)) return 0;
      continue;
    }
    pushkey(c, f->name);
    if (!bw_fieldpresent(f, c->version)) {
      if (!f->hasdefault) {
        lua_pop(L, 1);
        continue;
      }
      pushdefault(c, f);
      lua_rawset(L, tbl);
      continue;
    }
    pushframe(c, f->name, 0);
    lua_pushvalue(L, -1);
    if (lua_istable(L, bidx)) lua_rawget(L, bidx);
    else {
      lua_pop(L, 1);
      lua_pushnil(L);
    }
    b = lua_gettop(L);  /* stack: key, baseline value */
    changed = bw_readbits(&c->r, 1);
    if (c->r.status != BW_OK) return readfail(c);
    if (!changed) {
      if (!keepbaseline(c, f, b)) return 0;
      pushkept(c, f, b);
    }
    else {
      uint64_t present = 1;
      if (f->optional) {
        present = bw_readbits(&c->r, 1);
        if (c->r.status != BW_OK) return readfail(c);
      }
      if (!present) lua_pushnil(L);
      else if (!lua_isnil(L, b) && f->kind == BW_KSTRUCT) {
        if (!decdeltastruct(c, f->ref, b)) return 0;
      }
      else if (lua_istable(L, b) && f->kind == BW_KSPARSE) {
        if (!decsparse(c, f, 0, b)) return 0;
      }
      else if (!decvalue(c, f, 0)) return 0;
    }
    lua_remove(L, b);
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
      /* decoded values are float32: let them encode again at the ends */
      f->dmin = fmin(f->dmin, (double)bw_qfloatdecode(&f->q, 0));
      f->dmax = fmax(f->dmax, (double)bw_qfloatdecode(&f->q, f->q.miv));
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
    case BW_KQUAT:
      bw_quatinit(&f->q, (unsigned)optint(L, t, "bits", 9));
      f->nbits = f->q.nbits;
      break;
    case BW_KTIERED: case BW_KSPARSE: {
      lua_Integer i, n;
      lua_getfield(L, t, "tiers");
      n = lua_istable(L, -1) ? (lua_Integer)lua_rawlen(L, -1) : 0;
      luaL_argcheck(L, n < BW_MAXTIERS, 1, "too many tiers");
      for (i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, i);
        f->tierbits[i - 1] = (uint8_t)lua_tointeger(L, -1);
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
      /* sparse tiers end in a catch-all up to the sentinel */
      if (kind == BW_KSPARSE && n > 0) f->tierbits[n++] = 63;
      f->ntiers = (uint8_t)n;
      if (kind == BW_KTIERED) break;
      f->encoding = (uint8_t)optint(L, t, "encoding", BW_SPAUTO);
      f->min = 0;
    }
    /* FALLTHROUGH */
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
      && kind != BW_KALIGN && kind != BW_KCHECK && kind != BW_KQUAT)
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

/* core.compile(normalized [, text]) -> schema. The argument comes from
** bitwire/schema.lua's normalize, which has validated it; 'text' is the
** same description as a Lua constructor, kept for states that adopt it. */
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
  if (lua_type(L, 2) == LUA_TSTRING) {
    size_t len;
    const char *d = lua_tolstring(L, 2, &len);
    if (!bw_schemasetdesc(S, d, len)) return luaL_error(L, "not enough memory");
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

/* Integer field 'k' of the options table at 'arg', or 'def' when nil; an
** error names the option (luaL_optinteger would name stack index -1). */
static lua_Integer optfield (lua_State *L, int arg, const char *k,
                             lua_Integer def) {
  lua_Integer v = def;
  int isnum = 1;
  if (lua_getfield(L, arg, k) != LUA_TNIL) v = lua_tointegerx(L, -1, &isnum);
  lua_pop(L, 1);
  if (!isnum)
    luaL_argerror(L, arg, lua_pushfstring(L, "'%s' must be an integer", k));
  return v;
}

/* Options table at 'arg': version. */
static uint32_t optversion (lua_State *L, int arg, const bw_Schema *S) {
  lua_Integer v;
  if (lua_isnoneornil(L, arg)) return S->version;
  luaL_checktype(L, arg, LUA_TTABLE);
  v = optfield(L, arg, "version", (lua_Integer)S->version);
  luaL_argcheck(L, v >= 0 && v < UINT32_MAX, arg, "version out of range");
  return (uint32_t)v;
}

static void initctx (lua_State *L, Ctx *c, LSchema *ls, uint32_t version,
                     int stackkeys) {
  c->L = L;
  c->S = ls->S;
  c->w = &ls->w;
  c->version = version;
  c->nframes = 0;
  c->code = BW_OK;
  c->msg[0] = '\0';
  lua_getiuservalue(L, 1, UV_NAMES);
  c->names = lua_gettop(L);
  c->keys = 0;
  c->checked = 0;
  /* nesting is bounded by BW_MAXDEPTH: reserve the stack once */
  luaL_checkstack(L, 4 * BW_MAXDEPTH + 16 + STACKKEYS, "schema nesting");
  if (stackkeys && c->S->nnames <= STACKKEYS) {  /* a few names: copies on the stack are
                                       the cheapest keys to push */
    uint32_t i;
    for (i = 0; i < c->S->nnames; i++)
      lua_rawgeti(L, c->names, (lua_Integer)i + 1);
    c->keys = c->names + 1;
  }
}

/* Stack index of opts.baseline (a table), or 0. */
static int optbaseline (lua_State *L, int arg) {
  if (!lua_istable(L, arg)) return 0;
  lua_getfield(L, arg, "baseline");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return 0;
  }
  luaL_argcheck(L, lua_istable(L, -1), arg, "'baseline' must be a table");
  return lua_gettop(L);
}

/* The record at 'v' as type 't', as a delta when 'b' (a baseline) is set. */
static void encodebody (Ctx *c, uint32_t t, int v, int b) {
  if (b) encdeltastruct(c, t, v, b);
  else encstruct(c, t, v);
}

/* Encode value at 'v' as type 't' (and its id first if 'msg'). */
static void encodeinto (Ctx *c, uint32_t t, int v, int msg, int opts) {
  int b = optbaseline(c->L, opts);
  bw_writerreset(c->w);
  if (msg) bw_writebits(c->w, t, c->S->typebits);
  encodebody(c, t, v, b);
}

static int pushencoded (lua_State *L, bw_Writer *w) {
  size_t len;
  const uint8_t *p = bw_writerdata(w, &len);
  lua_pushlstring(L, len ? (const char *)p : "", len);
  return 1;
}

/* The common part of encode, bits and encode_message: arguments (self,
** name, value [, opts]); returns the writer holding the packet. */
static bw_Writer *encodeargs (lua_State *L, int msg) {
  LSchema *ls = checkschema(L, 1);
  uint32_t t = checktype(L, 2);
  Ctx c;
  lua_settop(L, 4);  /* an omitted value is nil, not the names array */
  initctx(L, &c, ls, optversion(L, 4, ls->S), 1);
  encodeinto(&c, t, 3, msg, 4);
  return c.w;
}

/* s:encode(name, value [, opts]) -> bytes */
static int schema_encode (lua_State *L) {
  return pushencoded(L, encodeargs(L, 0));
}

/* s:bits(name, value [, opts]) -> exact size in bits */
static int schema_bits (lua_State *L) {
  lua_pushinteger(L, (lua_Integer)bw_bitswritten(encodeargs(L, 0)));
  return 1;
}

/* s:encode_message(name, value [, opts]) -> bytes, with the type id */
static int schema_encodemessage (lua_State *L) {
  return pushencoded(L, encodeargs(L, 1));
}

static int pushdecodeerror (lua_State *L, Ctx *c) {
  lua_pushnil(L);
  lua_pushstring(L, c->msg);
  lua_pushstring(L, bw_codename(c->code));
  return 3;
}

/* Decode type 't' from c->r, against the baseline at 'b' if set; pushes
** the value or returns 0. */
static int decodefrom (Ctx *c, uint32_t t, int into, int b) {
  if (b ? decdeltastruct(c, t, b) : decstruct(c, t, into)) return 1;
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

/* opts.into and opts.baseline of the options at 'arg'. */
static void optdecode (lua_State *L, int arg, int *into, int *b) {
  *into = optinto(L, arg);
  *b = optbaseline(L, arg);
  luaL_argcheck(L, !(*into && *b), arg, "'into' and 'baseline' together");
}


/* s:decode(name, bytes [, opts]) -> value | nil, message, code */
static int schema_decode (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  uint32_t t = checktype(L, 2);
  size_t len;
  const char *s = luaL_checklstring(L, 3, &len);
  uint32_t version = optversion(L, 4, ls->S);
  int into, b;
  Ctx c;
  optdecode(L, 4, &into, &b);
  initctx(L, &c, ls, version, 1);
  bw_readerinit(&c.r, s, len);
  if (!decodefrom(&c, t, into, b)) return pushdecodeerror(L, &c);
  return 1;
}

/* s:decode_message(bytes [, opts]) -> name, value | nil, message, code */
static int schema_decodemessage (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  uint32_t version = optversion(L, 3, ls->S);
  int into, b;
  uint64_t t;
  Ctx c;
  optdecode(L, 3, &into, &b);
  initctx(L, &c, ls, version, 1);
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
  if (!decodefrom(&c, (uint32_t)t, into, b)) return pushdecodeerror(L, &c);
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

/* Frame header options: 'tag' (32 bits naming the schema) and
** 'version_bits' (the version travels in that many bits). */
typedef struct FrameOpts {
  int      hastag;
  uint32_t tag;
  unsigned versionbits;
  int      deltas;      /* frames say whether they are deltas, and of what */
} FrameOpts;

#define BASELINEBITS 16   /* width of a baseline id in a frame */

static void optframe (lua_State *L, int arg, FrameOpts *fo) {
  lua_Integer v;
  memset(fo, 0, sizeof(*fo));
  if (!lua_istable(L, arg)) return;
  lua_getfield(L, arg, "tag");
  if (!lua_isnil(L, -1)) {
    v = optfield(L, arg, "tag", 0);
    luaL_argcheck(L, v >= 0 && v <= 0xFFFFFFFF, arg, "'tag' must fit 32 bits");
    fo->hastag = 1;
    fo->tag = (uint32_t)v;
  }
  lua_pop(L, 1);
  v = optfield(L, arg, "version_bits", 0);
  luaL_argcheck(L, v >= 0 && v <= 32, arg, "'version_bits' must be 0..32");
  fo->versionbits = (unsigned)v;
  lua_getfield(L, arg, "deltas");
  fo->deltas = lua_toboolean(L, -1);
  lua_pop(L, 1);
}

/* s:frame_encode(id, endcheck, name, value, message [, opts]) -> packet.
** Layout: CRC32, [tag], [version], [type id], value, [check]. */
static int schema_frameencode (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  uint64_t id = checkid(L, 2);
  int endcheck = lua_toboolean(L, 3);
  uint32_t t = checktype(L, 4);
  int msg = lua_toboolean(L, 6);
  FrameOpts fo;
  Ctx c;
  int b;
  lua_Integer bid = 0;
  optframe(L, 7, &fo);
  b = optbaseline(L, 7);
  if (b) {
    luaL_argcheck(L, fo.deltas, 7, "a baseline needs a protocol with deltas");
    lua_getfield(L, 7, "baseline_id");
    bid = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : -1;
    luaL_argcheck(L, bid >= 0 && bid < (1 << BASELINEBITS), 7,
                  "'baseline_id' must be an integer in [0, 65535]");
    lua_pop(L, 1);
  }
  initctx(L, &c, ls, optversion(L, 7, ls->S), 1);
  if (fo.versionbits < 32 && (uint64_t)c.version >> fo.versionbits != 0
      && fo.versionbits > 0)
    return luaL_error(L, "version %d does not fit in %d bits",
                      (int)c.version, (int)fo.versionbits);
  bw_writerreset(c.w);
  bw_framebegin(c.w);
  if (fo.hastag) bw_writebits(c.w, fo.tag, 32);
  if (fo.versionbits) bw_writebits(c.w, c.version, fo.versionbits);
  if (fo.deltas) {
    bw_writebits(c.w, b != 0, 1);
    if (b) bw_writebits(c.w, (uint64_t)bid, BASELINEBITS);
  }
  if (msg) bw_writebits(c.w, t, ls->S->typebits);
  encodebody(&c, t, 5, b);
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
  int into = optinto(L, 7), b = 0, baselines = 0;
  uint64_t t = msg ? 0 : checktype(L, 5);
  FrameOpts fo;
  Ctx c;
  optframe(L, 7, &fo);
  if (fo.deltas && lua_istable(L, 7)) {
    lua_getfield(L, 7, "baselines");
    baselines = lua_istable(L, -1) ? lua_gettop(L) : 0;
  }
  initctx(L, &c, ls, version, 1);
  if (bw_frameopen(&c.r, s, len, id, endcheck) != BW_OK) {
    readfail(&c);
    return pushdecodeerror(L, &c);
  }
  if (fo.hastag) {
    uint64_t tag = bw_readbits(&c.r, 32);
    if (c.r.status != BW_OK) {
      readfail(&c);
      return pushdecodeerror(L, &c);
    }
    if (tag != fo.tag) {
      decfail(&c, BW_ESCHEMA, 32, "packet for schema %08" PRIx64
              ", this is %08" PRIx32, tag, fo.tag);
      return pushdecodeerror(L, &c);
    }
  }
  if (fo.versionbits) {
    uint64_t start = c.r.pos;
    c.version = (uint32_t)bw_readbits(&c.r, fo.versionbits);
    if (c.r.status != BW_OK) {
      readfail(&c);
      return pushdecodeerror(L, &c);
    }
    if (c.version == UINT32_MAX) {  /* no encode writes it (optversion) */
      decfail(&c, BW_ERANGE, start, "version %" PRIu32 " out of range [0, %"
              PRIu32 "]", c.version, UINT32_MAX - 1);
      return pushdecodeerror(L, &c);
    }
  }
  if (fo.deltas && bw_readbits(&c.r, 1)) {
    uint64_t start = c.r.pos;
    lua_Integer bid = (lua_Integer)bw_readbits(&c.r, BASELINEBITS);
    if (c.r.status != BW_OK) {
      readfail(&c);
      return pushdecodeerror(L, &c);
    }
    if (baselines == 0 || lua_rawgeti(L, baselines, bid) != LUA_TTABLE) {
      decfail(&c, BW_EBASELINE, start, "unknown baseline %lld",
              (long long)bid);
      return pushdecodeerror(L, &c);
    }
    b = lua_gettop(L);
    into = 0;
  }
  if (c.r.status != BW_OK) {
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
  if (!decodefrom(&c, (uint32_t)t, into, b)) return pushdecodeerror(L, &c);
  return msg ? 2 : 1;
}

/* s:share() -> handle: a light userdata holding one more reference, for
** core.adopt in another lua_State of this process. */
static int schema_share (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  bw_schemashare(ls->S);
  lua_pushlightuserdata(L, ls->S);
  return 1;
}

/* The schema of the handle at argument 1, taking the handle's share. */
static bw_Schema *takehandle (lua_State *L) {
  bw_Schema *S;
  luaL_checktype(L, 1, LUA_TLIGHTUSERDATA);
  S = (bw_Schema *)lua_touserdata(L, 1);
  /* catches foreign and released handles; a handle must still be live */
  luaL_argcheck(L, S != NULL && S->magic == BW_SCHEMAMAGIC && S->sealed, 1,
                "not a live schema handle");
  luaL_argcheck(L, bw_schematake(S), 1, "schema handle already adopted");
  return S;
}

/* core.adopt(handle) -> schema: takes over the reference a share() made.
** Each handle must be adopted exactly once (or dropped with core.unshare). */
static int schema_adopt (lua_State *L) {
  pushschema(L, takehandle(L));
  return 1;
}

/* s:_desc() -> the description's text kept by compile (nil if none), for
** states that adopted the schema. */
static int schema_desc (lua_State *L) {
  LSchema *ls = checkschema(L, 1);
  if (ls->S->desc == NULL) lua_pushnil(L);
  else lua_pushlstring(L, ls->S->desc, ls->S->desclen);
  return 1;
}

/* core.unshare(handle): drop a handle's reference without adopting it. */
static int schema_unshare (lua_State *L) {
  bw_schemarelease(takehandle(L));
  return 0;
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
  {"share", schema_share},
  {"_desc", schema_desc},
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
  lua_pushcfunction(L, schema_adopt);
  lua_setfield(L, -2, "adopt");
  lua_pushcfunction(L, schema_unshare);
  lua_setfield(L, -2, "unshare");
}
