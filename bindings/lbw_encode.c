/*
** lbw_encode.c - the encode walk: Lua tables to bits
** See LICENSE for copyright and terms.
*/

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"

#include "lbw_schema.h"


/* {===================== encode ===================== */


void bw_pushdefault (Ctx *c, const bw_Field *f) {
  lua_State *L = c->L;
  switch (f->kind) {
    case BW_KBOOL: lua_pushboolean(L, (int)f->def.i); break;
    case BW_KFLOAT: case BW_KFLOAT32: case BW_KFLOAT64: case BW_KANGLE:
      lua_pushnumber(L, (lua_Number)f->def.d);
      break;
    case BW_KENUM: case BW_KSTRING: case BW_KBYTES:
      pushkey(c, f->def.s);
      break;
    default: lua_pushinteger(L, (lua_Integer)f->def.i); break;
  }
}

/* 1 if 'tt' is 'want'; else raises "expected <what>" when 'raise', or
** returns 0. */
static INLINE int wanttype (Ctx *c, int idx, int tt, int want,
                            const char *what, int raise) {
  if (tt == want) return 1;
  if (raise) bw_enctype(c, idx, what);
  return 0;
}

/* The integer at 'idx' (of Lua type 'tt') in '*v'; as wanttype when it is
** none. */
static INLINE int toint (Ctx *c, int idx, int tt, int raise, lua_Integer *v) {
  int ok = 0;
  if (tt == LUA_TNUMBER) *v = lua_tointegerx(c->L, idx, &ok);
  if (!ok) {  /* numeric strings are refused */
    if (!raise) return 0;
    if (tt == LUA_TNUMBER)
      bw_encerror(c, "expected an integer, got %s", lua_tostring(c->L, idx));
    bw_enctype(c, idx, "an integer");
  }
  return 1;
}

static INLINE lua_Integer checkint (Ctx *c, int idx, int tt) {
  lua_Integer v = 0;
  toint(c, idx, tt, 1, &v);
  return v;
}

static INLINE double checknum (Ctx *c, int idx, int tt) {
  wanttype(c, idx, tt, LUA_TNUMBER, "a number", 1);
  return (double)lua_tonumber(c->L, idx);
}

static const char *checkstr (Ctx *c, int idx, int tt, size_t *len) {
  wanttype(c, idx, tt, LUA_TSTRING, "a string", 1);
  return lua_tolstring(c->L, idx, len);
}

static void checklen (Ctx *c, const bw_Field *f, size_t n, const char *what) {
  if (f->fixed && n != (size_t)f->max)
    bw_encerror(c, "%s of %I must have exactly %I", what, (lua_Integer)n,
             (lua_Integer)f->max);
  if (n < (uint64_t)f->min || n > (uint64_t)f->max)
    bw_encerror(c, "%s %I out of range [%I, %I]", what, (lua_Integer)n,
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




static int encrelative (Ctx *c, const bw_Field *f, int v, int b);
static void encdeltavalue (Ctx *c, const bw_Field *f, int idx, int bidx);

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
  sent = !bw_equalopt(c, e, lua_gettop(L) - 1, lua_gettop(L));
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
    if (present) encdeltavalue(c, e, v, v + 1);
    lua_pop(L, 1);
  }
  else
    bw_encvalue(c, e, v, lua_type(L, v));
  lua_pop(L, 1);
  popframe(c);
}

#define MAPSLOTS 4096  /* sparse arrays this long map their slots */

/* The lowest set bit of 'm' (not 0). */
static INLINE unsigned lowbit (uint64_t m) {
#if defined(__GNUC__) || defined(__clang__)
  return (unsigned)__builtin_ctzll(m);
#else
  unsigned k = 0;
  for (; !(m & 1); m >>= 1) k++;
  return k;
#endif
}

/* Write 'z' bits of 0 and then, if 'one', a 1: the mask bits up to a
** present slot. Joined where the writer has room, so bits and failures
** are those of one write per bit. */
static INLINE void writegap (bw_Writer *w, uint64_t z, int one) {
  if (z < 63 && bw_writerhasroom(w)) {  /* the common case */
    bw_writebits(w, (uint64_t)one << z, (unsigned)z + (unsigned)one);
    return;
  }
  while (z + (unsigned)one > 0) {
    if (bw_writerhasroom(w)) {
      unsigned k = z >= 63 ? 63 : (unsigned)z;
      int last = k == z && one;
      bw_writebits(w, (uint64_t)last << k, k + (unsigned)last);
      z -= k;
      if (last) return;
    }
    else if (z > 0) {
      bw_writebits(w, 0, 1);
      z--;
    }
    else {
      bw_writebits(w, 1, 1);
      return;
    }
  }
}

/* encsparse's slots without a baseline, from the map of the present ones
** (slot i is bit i - 1): only those are fetched again. */
static void encmapped (Ctx *c, const bw_Field *f, int idx, int enc,
                       const uint64_t *map) {
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer i, n = (lua_Integer)f->max, prev = 0, wd;
  unsigned ibits = bw_bitsrequired(0, (int64_t)n - 1);
  for (wd = 0; wd * 64 < n; wd++) {
    uint64_t m = map[wd];
    for (; m != 0; m &= m - 1) {
      int tt;
      i = wd * 64 + (lua_Integer)lowbit(m) + 1;
      if (enc == BW_SPMASK) writegap(c->w, (uint64_t)(i - prev - 1), 1);
      else if (enc == BW_SPINDEX) bw_writebits(c->w, (uint64_t)i - 1, ibits);
      else writerel(c, f, (uint64_t)prev, (uint64_t)i);
      tt = lua_rawgeti(L, idx, i);
      pushframe(c, BW_NONE, i);
      if (e->kind == BW_KSTRUCT) bw_encstruct(c, e->ref, lua_gettop(L));
      else bw_encvalue(c, e, lua_gettop(L), tt);
      popframe(c);
      lua_pop(L, 1);
      prev = i;
    }
  }
  if (enc == BW_SPMASK) writegap(c->w, (uint64_t)(n - prev), 0);
  else if (enc == BW_SPRELATIVE)
    writerel(c, f, (uint64_t)prev, (uint64_t)n + 1);
}

/* A sparse array: the sent slots of 1..max, in the cheapest encoding when
** 'auto'. Keys other than 1..max are refused. */
static void encsparse (Ctx *c, const bw_Field *f, int idx, int bidx) {
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer i, n = (lua_Integer)f->max, prev = 0, count = 0, keys = 0;
  lua_Integer present = 0;
  unsigned ibits = bw_bitsrequired(0, (int64_t)n - 1);
  uint64_t cost[3], map[MAPSLOTS / 64];
  int enc = f->encoding, mapped;
  if (!lua_istable(L, idx)) bw_enctype(c, idx, "a table");
  if (bidx != 0 && !lua_istable(L, bidx)) bidx = 0;
  mapped = bidx == 0 && n <= MAPSLOTS;
  if (mapped) memset(map, 0, (size_t)(n + 63) / 64 * sizeof(map[0]));
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
      if (mapped) map[(i - 1) / 64] |= UINT64_C(1) << ((i - 1) % 64);
    }
  }
  cost[BW_SPRELATIVE] += relcost(f, (uint64_t)prev, (uint64_t)n + 1);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    keys++;
    lua_pop(L, 1);
  }
  if (keys != (bidx != 0 ? present : count))
    bw_encerror(c, "sparse keys must be integers in [1, %I]", n);
  cost[BW_SPMASK] = (uint64_t)n;
  cost[BW_SPINDEX] = f->nbits + (uint64_t)count * ibits;
  if (enc == BW_SPAUTO) {
    enc = cost[BW_SPINDEX] < cost[BW_SPMASK] ? BW_SPINDEX : BW_SPMASK;
    if (cost[BW_SPRELATIVE] < cost[enc]) enc = BW_SPRELATIVE;
    bw_writebits(c->w, (uint64_t)enc, 2);
  }
  if (enc == BW_SPINDEX) bw_writebits(c->w, (uint64_t)count, f->nbits);
  if (mapped) {
    encmapped(c, f, idx, enc, map);
    return;
  }
  prev = 0;
  for (i = 1; i <= n; i++) {
    int sent;
    if (bidx == 0) {  /* each slot fetched once, encoded from there */
      int tt = lua_rawgeti(L, idx, i);
      if (enc == BW_SPMASK) bw_writebits(c->w, (uint64_t)(tt != LUA_TNIL), 1);
      if (tt != LUA_TNIL) {
        if (enc == BW_SPINDEX) bw_writebits(c->w, (uint64_t)i - 1, ibits);
        else if (enc == BW_SPRELATIVE)
          writerel(c, f, (uint64_t)prev, (uint64_t)i);
        pushframe(c, BW_NONE, i);
        if (e->kind == BW_KSTRUCT) bw_encstruct(c, e->ref, lua_gettop(L));
        else bw_encvalue(c, e, lua_gettop(L), tt);
        popframe(c);
        prev = i;
      }
      lua_pop(L, 1);
      continue;
    }
    sent = slotsent(c, e, idx, bidx, i);
    if (enc == BW_SPMASK) bw_writebits(c->w, (uint64_t)sent, 1);
    if (!sent) continue;
    if (enc == BW_SPINDEX) bw_writebits(c->w, (uint64_t)i - 1, ibits);
    else if (enc == BW_SPRELATIVE) writerel(c, f, (uint64_t)prev, (uint64_t)i);
    encslot(c, e, idx, bidx, i);
    prev = i;
  }
  if (enc == BW_SPRELATIVE) writerel(c, f, (uint64_t)prev, (uint64_t)n + 1);
}

/* The code of the quaternion at 'idx'. */
static void quatcode (Ctx *c, const bw_Field *f, int idx, uint32_t q[4]) {
  lua_State *L = c->L;
  double v[4];
  int i;
  if (!lua_istable(L, idx)) bw_enctype(c, idx, "a table {x, y, z, w}");
  if (lua_rawlen(L, idx) != 4)
    bw_encerror(c, "quaternion needs 4 components, got %I",
             (lua_Integer)lua_rawlen(L, idx));
  for (i = 0; i < 4; i++) {
    if (lua_rawgeti(L, idx, i + 1) != LUA_TNUMBER)
      bw_encerror(c, "quaternion component %d is not a number", i + 1);
    v[i] = (double)lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  if (!bw_quatencode(&f->q, v, q))
    bw_encerror(c, "quaternion has no length (or is not finite)");
}

static void encquat (Ctx *c, const bw_Field *f, int idx) {
  uint32_t q[4];
  quatcode(c, f, idx, q);
  bw_writequat(c->w, &f->q, q);
}

static INLINE int fixedcode (Ctx *c, const bw_Field *f, int idx, int tt,
                             int raise, uint64_t *out);

/* The code of a FLOAT or ANGLE value at 'idx' (of Lua type 'tt'). */
static uint32_t numcode (Ctx *c, const bw_Field *f, int idx, int tt) {
  double x;
  uint64_t u = 0;
  if (f->kind != BW_KANGLE) {
    fixedcode(c, f, idx, tt, 1, &u);
    return (uint32_t)u;
  }
  x = checknum(c, idx, tt);
  if (!isfinite(x)) bw_encerror(c, "angle %f is not finite", (lua_Number)x);
  return bw_angleencode(x, f->dmax, f->nbits);
}

/* delta = "relative": the value at 'v' as a difference from the baseline
** value at 'b' (WIRE.md). Returns 0, writing nothing, when 'b' is not a
** value to start from: the caller sends the value whole. The decoder makes
** the same choice from its copy of the baseline. */
static int encrelative (Ctx *c, const bw_Field *f, int v, int b) {
  lua_State *L = c->L;
  if (f->kind == BW_KQUAT) {
    uint32_t base[4], code[4];
    if (!bw_quatof(f, L, b, base)) return 0;
    quatcode(c, f, v, code);
    bw_writequatdiff(c->w, f, base, code);
  }
  else {
    bw_Diff d;
    uint64_t base;
    if (lua_type(L, b) != LUA_TNUMBER
        || !bw_diffbase(f, (double)lua_tonumber(L, b), &base))
      return 0;
    bw_fielddiff(f, &d);
    bw_writediff(c->w, &d, base, numcode(c, f, v, lua_type(L, v)));
  }
  if (c->w->status != BW_OK)
    bw_encerror(c, "%s (packet over %I bytes)", bw_strerror(c->w->status),
             (lua_Integer)c->w->maxbytes);
  return 1;
}

/* Refuse the value: raise with the message when 'raise', else return 0. */
#define REFUSE(c, raise, ...)  \
  do { if (!(raise)) return 0; bw_encerror(c, __VA_ARGS__); } while (0)

/* The bits of integer 'v' as int or uint field 'f', in '*out'; as REFUSE
** when it cannot take it. */
static INLINE int intcode (Ctx *c, const bw_Field *f, lua_Integer v,
                           int raise, uint64_t *out) {
  if (f->kind == BW_KUINT) {
    if (f->nbits < 64 && (v < 0 || (uint64_t)v >> f->nbits != 0))
      REFUSE(c, raise, "%I does not fit in %d bits", v, (int)f->nbits);
    *out = (uint64_t)v;
    return 1;
  }
  if (v < f->min || v > f->max) {
    if (!f->clamp)
      REFUSE(c, raise, "%I out of range [%I, %I]", v, (lua_Integer)f->min,
             (lua_Integer)f->max);
    v = v < f->min ? f->min : f->max;
  }
  *out = (uint64_t)v - (uint64_t)f->min;
  return 1;
}

/* 1 if float field 'f' takes 'x' (its range, or clamp); else as REFUSE. */
static INLINE int floatok (Ctx *c, const bw_Field *f, double x, int raise) {
  if (!(x >= f->dmin && x <= f->dmax) && !f->clamp)
    REFUSE(c, raise, "%f out of range [%f, %f]", (lua_Number)x,
           (lua_Number)f->dmin, (lua_Number)f->dmax);
  return 1;
}

/* The bits of fixed-width scalar 'f' (fixedscalar) for the value at 'idx'
** of Lua type 'tt', in '*out'. A value it cannot take raises when 'raise',
** else returns 0 (a delta's baseline: it then differs from any value). */
static INLINE int fixedcode (Ctx *c, const bw_Field *f, int idx, int tt,
                             int raise, uint64_t *out) {
  switch (f->kind) {
    case BW_KINT: case BW_KUINT: {
      lua_Integer v = 0;
      return toint(c, idx, tt, raise, &v) && intcode(c, f, v, raise, out);
    }
    case BW_KBOOL:
      if (!wanttype(c, idx, tt, LUA_TBOOLEAN, "a boolean", raise)) return 0;
      *out = (uint64_t)lua_toboolean(c->L, idx);
      return 1;
    case BW_KFLOAT: {
      double x;
      if (!wanttype(c, idx, tt, LUA_TNUMBER, "a number", raise)) return 0;
      x = (double)lua_tonumber(c->L, idx);
      if (!floatok(c, f, x, raise)) return 0;
      *out = bw_qfloatencode(&f->q, x);
      return 1;
    }
    default: {  /* BW_KENUM */
      size_t len = 0, i, n = (size_t)f->max + 1;
      const char *s;
      if (!wanttype(c, idx, tt, LUA_TSTRING, "a string", raise)) return 0;
      s = lua_tolstring(c->L, idx, &len);
      for (i = 0; i < n; i++) {
        uint32_t nm = f->ref + (uint32_t)i;
        if (c->S->namelens[nm] == len && memcmp(c->S->names[nm], s, len) == 0)
          break;
      }
      if (i == n) REFUSE(c, raise, "'%s' is not one of its enum values", s);
      *out = (uint64_t)i;
      return 1;
    }
  }
}

/* The bits of fixed-width scalar 'f' for the value at 'idx' of Lua type
** 'tt'; raises when it does not fit. */
static INLINE uint64_t fixedvalue (Ctx *c, const bw_Field *f, int idx,
                                   int tt) {
  uint64_t u = 0;
  fixedcode(c, f, idx, tt, 1, &u);
  return u;
}

/* Write a scalar (a kind other than array, struct or sparse). Not
** recursive, so the compiler can inline it into the loops over fields. */
static void encleaf (Ctx *c, const bw_Field *f, int idx, int tt) {
  bw_Writer *w = c->w;
  switch (f->kind) {
    case BW_KINT: case BW_KUINT: case BW_KBOOL: case BW_KFLOAT: case BW_KENUM:
      bw_writebits(w, fixedvalue(c, f, idx, tt), fixedbits(f));
      break;
    case BW_KANGLE:
      bw_writebits(w, numcode(c, f, idx, tt), f->nbits);
      break;
    case BW_KFLOAT32:  /* as w:float: beyond float32's range, infinity */
      bw_writefloat(w, bw_tofloat32(checknum(c, idx, tt)));
      break;
    case BW_KFLOAT64:
      bw_writedouble(w, checknum(c, idx, tt));
      break;
    case BW_KSTRING: {
      size_t len;
      const char *s = checkstr(c, idx, tt, &len);
      if (len > (uint64_t)f->max)
        bw_encerror(c, "string of %I bytes longer than max %I",
                 (lua_Integer)len, (lua_Integer)f->max);
      if (!bw_utf8valid(s, len))
        bw_encerror(c, "string with NUL or malformed UTF-8");
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
        bw_encerror(c, "%I out of range [%I, %I]", v, (lua_Integer)f->min,
                 (lua_Integer)f->max);
      bw_writetiered(w, (uint64_t)v - (uint64_t)f->min, 0,
                     (uint64_t)f->max - (uint64_t)f->min, f->tierbits,
                     f->ntiers);
      break;
    }
    default:
      bw_encerror(c, "field kind %d not supported", (int)f->kind);
  }
  if (w->status != BW_OK)
    bw_encerror(c, "%s (packet over %I bytes)", bw_strerror(w->status),
             (lua_Integer)w->maxbytes);
}

/* Elements 1..n of the array at 'idx' of fixed-width scalars 'e': as many
** as fit in BW_FUSEBITS gathered into one write. */
static void encscalars (Ctx *c, const bw_Field *e, int idx, lua_Integer n) {
  lua_State *L = c->L;
  unsigned w = fixedbits(e), per = w > 0 && w <= BW_FUSEBITS ? BW_FUSEBITS / w : 1;
  int top = lua_gettop(L);
  lua_Integer i = 1;
  Frame *fr;
  pushframe(c, BW_NONE, 1);
  fr = &c->frames[c->nframes - 1 < MAXFRAMES ? c->nframes - 1 : MAXFRAMES - 1];
  while (i <= n) {
    uint64_t acc = 0;
    unsigned k = n - i + 1 < (lua_Integer)per ? (unsigned)(n - i + 1) : per;
    c->pending = 0;
    for (; k > 0; k--, i++) {
      int tt = lua_rawgeti(L, idx, i);
      fr->index = i;
      if (tt == LUA_TNIL) bw_encerror(c, "missing");
      acc |= fixedvalue(c, e, top + 1, tt) << c->pending;  /* < 64 */
      c->pending += w;
      lua_settop(L, top);
    }
    k = c->pending;
    c->pending = 0;
    bw_writebits(c->w, acc, k);
  }
  if (c->w->status != BW_OK)
    bw_encerror(c, "%s (packet over %I bytes)", bw_strerror(c->w->status),
             (lua_Integer)c->w->maxbytes);
  popframe(c);
}

/* Write the value at 'idx' (of Lua type 'tt') as field 'f'. */
void bw_encvalue (Ctx *c, const bw_Field *f, int idx, int tt) {
  lua_State *L = c->L;
  bw_Writer *w = c->w;
  switch (f->kind) {
    case BW_KARRAY: {
      const bw_Field *e = &c->S->fields[f->ref];
      lua_Integer i, n;
      if (!lua_istable(L, idx)) bw_enctype(c, idx, "a table");
      n = (lua_Integer)lua_rawlen(L, idx);
      checklen(c, f, (size_t)n, "count");
      bw_writebits(w, (uint64_t)n - (uint64_t)f->min, f->nbits);
      if (fixedscalar(e)) {
        encscalars(c, e, idx, n);
        break;
      }
      for (i = 1; i <= n; i++) {
        pushframe(c, BW_NONE, i);
        int et = lua_rawgeti(L, idx, i);
        if (et == LUA_TNIL) bw_encerror(c, "missing");
        bw_encvalue(c, e, lua_gettop(L), et);
        lua_pop(L, 1);
        popframe(c);
      }
      break;
    }
    case BW_KSTRUCT:
      bw_encstruct(c, f->ref, idx);
      break;
    case BW_KSPARSE: encsparse(c, f, idx, 0); break;
    default:
      encleaf(c, f, idx, tt);
      return;
  }
  if (w->status != BW_OK)
    bw_encerror(c, "%s (packet over %I bytes)", bw_strerror(w->status),
             (lua_Integer)w->maxbytes);
}

/* The fused run of fixed-width fields [f, gend), their values at 'v',
** v + 1, ... of Lua types tt[0], tt[1], ...: one write. */
static void encrun (Ctx *c, Frame *fr, const bw_Field *f,
                    const bw_Field *gend, int v, const int *tt) {
  lua_State *L = c->L;
  uint64_t acc = 0;
  unsigned bits;
  c->pending = 0;
  for (; f < gend; f++, v++, tt++) {
    int vt = *tt;
    setframe(fr, f);
    if (vt == LUA_TNIL) {
      if (!f->hasdefault) bw_encerror(c, "missing");
      bw_pushdefault(c, f);
      lua_replace(L, v);
      vt = lua_type(L, v);
    }
    acc |= fixedvalue(c, f, v, vt) << c->pending;  /* < BW_FUSEBITS */
    c->pending += fixedbits(f);
  }
  bits = c->pending;
  c->pending = 0;
  bw_writebits(c->w, acc, bits);
}

#define RUNFIELDS 4  /* bw_encstruct's stack has room for these above it */

/* 1 if record field 'f' has a type of one fused run of at most RUNFIELDS
** fields (Vec3s and the like), which encrunrecord writes. */
static INLINE int runrecord (const bw_Schema *S, const bw_Field *f) {
  const bw_Type *st = &S->types[f->ref];
  return st->count > 1 && st->count <= RUNFIELDS
         && S->fields[st->first].fuse == st->count;
}

/* The record at 'idx' of a type 't' that runrecord accepts, as bw_encstruct
** writes it (the same checks, paths and bits), without its batches. */
static void encrunrecord (Ctx *c, uint32_t t, int idx) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first];
  int top = lua_gettop(L), tt[RUNFIELDS], k;
  Frame *fr;
  if (!lua_istable(L, idx)) bw_enctype(c, idx, "a table");
  fr = enterframe(c);
  for (k = 0; k < (int)ty->count; k++) {
    pushkey(c, f[k].name);
    tt[k] = lua_rawget(L, idx);
  }
  encrun(c, fr, f, f + ty->count, top + 1, tt);
  lua_settop(L, top);
  if (c->strict) {
    fr->name = BW_NONE;  /* the path of the record itself */
    fr->index = -1;
    bw_strictcheck(c, t, idx);
  }
  if (c->w->status != BW_OK)
    bw_encerror(c, "%s (packet over %I bytes)", bw_strerror(c->w->status),
             (lua_Integer)c->w->maxbytes);
  c->nframes--;
}

void bw_encstruct (Ctx *c, uint32_t t, int idx) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first];
  const bw_Field *end = f + ty->count;
  int top = lua_gettop(L);
  Frame *fr;
  if (!lua_istable(L, idx)) bw_enctype(c, idx, "a table");
  if (!lua_checkstack(L, BATCH + 8)) bw_encerror(c, "stack overflow");
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
      if (f->fuse > 1 && f + f->fuse <= stop) {  /* fixed fields: one write */
        encrun(c, fr, f, f + f->fuse, slot + 1, &tt[k]);
        slot += f->fuse;
        k += f->fuse - 1;
        f += f->fuse - 1;
        continue;
      }
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
        if (!f->hasdefault) bw_encerror(c, "missing");
        bw_pushdefault(c, f);
        lua_replace(L, v);
        vt = lua_type(L, v);
      }
      else if (f->optional)
        bw_writebits(c->w, 1, 1);
      if (f->kind < BW_KARRAY)  /* most fields */
        encleaf(c, f, v, vt);
      else if (f->kind == BW_KSTRUCT && runrecord(c->S, f))
        encrunrecord(c, f->ref, v);
      else if (f->kind == BW_KARRAY || f->kind == BW_KSTRUCT
               || f->kind == BW_KSPARSE)
        bw_encvalue(c, f, v, vt);
      else
        encleaf(c, f, v, vt);
    }
    lua_settop(L, top);
  }
  if (c->strict) {
    fr->name = BW_NONE;  /* the path of the record itself */
    fr->index = -1;
    bw_strictcheck(c, t, idx);
  }
  if (c->w->status != BW_OK)
    bw_encerror(c, "%s (packet over %I bytes)", bw_strerror(c->w->status),
             (lua_Integer)c->w->maxbytes);
  c->nframes--;
}

/* Delta encoding walks the value and its baseline together, once: a record
** or an array is written optimistically after a changed bit of 1 and, when
** nothing in it changed, taken back (bw_writerrewind) for a 0. Int, uint,
** bool and float fields compare their numbers, then their codes
** (encdeltafixed); other scalars equal as Lua values are equal on the wire,
** and only the kinds whose distinct Lua values may still encode alike
** (quaternions, float32/64 NaNs) take bw_equalopt. */

static int encdelta (Ctx *c, const bw_Field *f, int idx, int bidx);
static int encdeltaarray (Ctx *c, const bw_Field *f, int idx, int bidx);
static int deltastruct (Ctx *c, uint32_t t, int idx, int bidx, int hasb);

/* 1 if the values at 'v' and 'b' of field 'f' differ on the wire (neither
** is a table the delta walk handles). */
static INLINE int scalarchanged (Ctx *c, const bw_Field *f, int v, int b) {
  if (lua_rawequal(c->L, v, b)) return 0;
  switch (f->kind) {
    case BW_KFLOAT: case BW_KFLOAT32: case BW_KFLOAT64: case BW_KQUAT:
    case BW_KSPARSE: case BW_KARRAY: case BW_KSTRUCT:
      return !bw_equalopt(c, f, v, b);
    default:
      return 1;
  }
}

/* The changed bit and value of 'f' (value at 'v' of Lua type 'vt',
** baseline value at 'b' of type 'bt', either may be nil); returns 1 if it
** changed. */
static int encdeltafield (Ctx *c, const bw_Field *f, int v, int vt, int b,
                          int bt) {
  bw_Writer *w = c->w;
  int changed;
  if (vt == LUA_TTABLE && bt == LUA_TTABLE
      && (f->kind == BW_KSTRUCT || f->kind == BW_KARRAY)) {
    uint64_t start = bw_bitswritten(w);
    if (lua_topointer(c->L, v) == lua_topointer(c->L, b)) {  /* shared */
      bw_writebits(w, 0, 1);
      return 0;
    }
    bw_writebits(w, 1, 1);
    if (f->optional) bw_writebits(w, 1, 1);
    if (f->kind == BW_KSTRUCT ? deltastruct(c, f->ref, v, b, 2)
                              : encdeltaarray(c, f, v, b))
      return 1;
    bw_writerrewind(w, start);  /* nothing in it changed */
    bw_writebits(w, 0, 1);
    return 0;
  }
  if (vt == LUA_TNIL || bt == LUA_TNIL) changed = vt != bt;
  else if (vt != bt) changed = 1;
  else changed = scalarchanged(c, f, v, b);
  bw_writebits(w, (uint64_t)changed, 1);
  if (changed) {
    if (f->optional) bw_writebits(w, vt != LUA_TNIL, 1);
    if (vt != LUA_TNIL) {
      if (bt == LUA_TTABLE || f->relative) encdelta(c, f, v, b);
      else if (f->kind < BW_KARRAY) encleaf(c, f, v, vt);
      else bw_encvalue(c, f, v, vt);
    }
  }
  return changed;
}

/* An array against the baseline array at 'bidx' (see decdeltaarray);
** returns 1 if anything changed. */
static int encdeltaarray (Ctx *c, const bw_Field *f, int idx, int bidx) {
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer i, n, bn = (lua_Integer)lua_rawlen(L, bidx);
  int changed, top = lua_gettop(L);
  if (!lua_istable(L, idx)) bw_enctype(c, idx, "a table");
  n = (lua_Integer)lua_rawlen(L, idx);
  checklen(c, f, (size_t)n, "count");
  bw_writebits(c->w, (uint64_t)n - (uint64_t)f->min, f->nbits);
  changed = n != bn;
  for (i = 1; i <= n; i++) {
    int v = top + 1, et;
    pushframe(c, BW_NONE, i);
    et = lua_rawgeti(L, idx, i);
    if (et == LUA_TNIL) bw_encerror(c, "missing");
    if (i <= bn) {
      int bt = lua_rawgeti(L, bidx, i);
      changed |= encdeltafield(c, e, v, et, v + 1, bt);
    }
    else bw_encvalue(c, e, v, et);
    lua_settop(L, top);
    popframe(c);
  }
  return changed;
}

/* A changed value at 'idx' of field 'f' against its baseline value at
** 'bidx': records, arrays and sparse arrays as deltas when the baseline has
** one, anything else in full. */
static void encdeltavalue (Ctx *c, const bw_Field *f, int idx, int bidx) {
  encdelta(c, f, idx, bidx);
}

/* encdeltavalue's work; returns 0 for a record or an array in which
** nothing changed (anything else: 1). */
static int encdelta (Ctx *c, const bw_Field *f, int idx, int bidx) {
  if (f->relative && encrelative(c, f, idx, bidx)) return 1;
  if (lua_istable(c->L, bidx)) {
    switch (f->kind) {
      case BW_KSTRUCT: return deltastruct(c, f->ref, idx, bidx, 1);
      case BW_KSPARSE: encsparse(c, f, idx, bidx); return 1;
      case BW_KARRAY: return encdeltaarray(c, f, idx, bidx);
      default: break;
    }
  }
  bw_encvalue(c, f, idx, lua_type(c->L, idx));
  return 1;
}

/* A fixed scalar sent whole when it changed: the delta walk compares its
** bits, not its Lua values. */
static INLINE int deltafixed (const bw_Field *f) {
  return f->kind <= BW_KFLOAT && !f->optional && !f->relative;
}

/* Bits a delta record gathers before writing them: its changed bits and
** changed fixed scalars, one bw_writebits per run instead of per field;
** c->pending counts them, for the bit offsets of errors. */
static INLINE void runadd (Ctx *c, uint64_t *acc, uint64_t v, unsigned n) {
  if (c->pending + n > 64) {
    bw_writebits(c->w, *acc, c->pending);
    *acc = 0;
    c->pending = 0;
    if (n == 64) {  /* only a changed 64-bit uint's code: write it */
      bw_writebits(c->w, v, n);
      return;
    }
  }
  *acc |= v << c->pending;  /* pending + n <= 64 and n < 64: no overflow */
  c->pending += n;
}

static INLINE void runflush (Ctx *c, uint64_t *acc) {
  if (c->pending > 0) bw_writebits(c->w, *acc, c->pending);
  *acc = 0;
  c->pending = 0;
}

/* The changed bit and bits of deltafixed 'f' (value at 'v' of Lua type
** 'vt', not nil; baseline value at 'b' of type 'bt'), added to 'r'. The
** value is checked as a full encode checks it; equal numbers are not
** quantized; a baseline value the field cannot take differs from any.
** Returns 1 if it changed. */
static INLINE int encdeltafixed (Ctx *c, uint64_t *r, const bw_Field *f, int v,
                                 int vt, int b, int bt) {
  lua_State *L = c->L;
  uint64_t code, base;
  switch (f->kind) {
    case BW_KFLOAT: {
      double x = checknum(c, v, vt), y = 0;
      floatok(c, f, x, 1);
      if (bt == LUA_TNUMBER && (y = (double)lua_tonumber(L, b)) == x)
        goto same;
      code = bw_qfloatencode(&f->q, x);
      if (bt == LUA_TNUMBER && floatok(c, f, y, 0)
          && bw_qfloatencode(&f->q, y) == code)
        goto same;
      break;
    }
    case BW_KBOOL:
      wanttype(c, v, vt, LUA_TBOOLEAN, "a boolean", 1);
      code = (uint64_t)lua_toboolean(L, v);
      if (bt == LUA_TBOOLEAN && (uint64_t)lua_toboolean(L, b) == code)
        goto same;
      break;
    default: {  /* BW_KINT, BW_KUINT */
      lua_Integer x = checkint(c, v, vt), y;
      intcode(c, f, x, 1, &code);
      if (toint(c, b, bt, 0, &y)
          && (y == x || (intcode(c, f, y, 0, &base) && base == code)))
        goto same;
      break;
    }
  }
  runadd(c, r, 1, 1);
  runadd(c, r, code, fixedbits(f));
  return 1;
same:
  runadd(c, r, 0, 1);
  return 0;
}

/* A record against its baseline at 'bidx': per field a changed bit, then
** only what changed (nested records, arrays and sparse slots as deltas
** again), each field fetched from both tables. Returns 1 if any field
** changed. */
int bw_encdeltastruct (Ctx *c, uint32_t t, int idx, int bidx) {
  return deltastruct(c, t, idx, bidx, lua_istable(c->L, bidx));
}

/* bw_encdeltastruct's work; 'hasb': the baseline is a table (2: and so is
** the value). */
static int deltastruct (Ctx *c, uint32_t t, int idx, int bidx, int hasb) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first];
  const bw_Field *end = f + ty->count;
  int top = lua_gettop(L), changed = 0;
  int versioned = ty->versioned, v = top + 1;
  uint64_t run = 0;
  Frame *fr;
  if (hasb < 2 && !lua_istable(L, idx)) bw_enctype(c, idx, "a table");
  if (!lua_checkstack(L, 2 * BATCH + 8)) bw_encerror(c, "stack overflow");
  fr = enterframe(c);
  fr->index = 0;
  for (; f < end; f++) {
    int vt, bt;
    if (versioned && !bw_fieldpresent(f, c->version)) continue;
    fr->name = f->name;  /* fr->index stays 0: a named field */
    if (f->name == BW_NONE) {  /* align or check */
      runflush(c, &run);
      setframe(fr, f);
      encleaf(c, f, 0, LUA_TNONE);
      fr->index = 0;
      continue;
    }
    if (v > top + 2 * BATCH) {  /* the stack holds BATCH pairs at most */
      lua_settop(L, top);
      v = top + 1;
    }
    pushkey(c, f->name);
    vt = lua_rawget(L, idx);
    if (hasb) {
      pushkey(c, f->name);
      bt = lua_rawget(L, bidx);
    }
    else {
      lua_pushnil(L);
      bt = LUA_TNIL;
    }
    if (vt == LUA_TNIL && !f->optional) {
      if (!f->hasdefault) bw_encerror(c, "missing");
      bw_pushdefault(c, f);
      lua_replace(L, v);
      vt = lua_type(L, v);
    }
    if (bt == LUA_TNIL && !f->optional && f->hasdefault) {
      bw_pushdefault(c, f);   /* a baseline of definitions that lacked */
      lua_replace(L, v + 1);  /* the field: its default, as decode gives */
      bt = lua_type(L, v + 1);
    }
    if (deltafixed(f))
      changed |= encdeltafixed(c, &run, f, v, vt, v + 1, bt);
    else if (vt == bt && vt != LUA_TNIL && lua_rawequal(L, v, v + 1))
      runadd(c, &run, 0, 1);  /* the common case, inline; a table */
                              /* shared with the baseline is unchanged */
    else {
      runflush(c, &run);
      changed |= encdeltafield(c, f, v, vt, v + 1, bt);
    }
    v += 2;
  }
  lua_settop(L, top);
  runflush(c, &run);
  if (c->w->status != BW_OK)
    bw_encerror(c, "%s (packet over %I bytes)", bw_strerror(c->w->status),
             (lua_Integer)c->w->maxbytes);
  if (c->strict) {
    fr->name = BW_NONE;  /* the path of the record itself */
    fr->index = -1;
    bw_strictcheck(c, t, idx);
  }
  c->nframes--;
  return changed;
}
