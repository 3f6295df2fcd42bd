/*
** lbw_encvalue.h - the checks a Lua value passes to be encoded as a field,
** inline in the walks of lbw_encode.c, lbw_encdelta.c, lbw_tape.c and in
** lbw_equal.c
** See LICENSE for copyright and terms.
*/

#ifndef lbw_encvalue_h
#define lbw_encvalue_h

#include <math.h>
#include <string.h>

#include "lbw_schema.h"

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

/* 1 if count or length 'n' fits array or bytes field 'f' ('what' names
** it); else as REFUSE. */
static INLINE int lenfits (Ctx *c, const bw_Field *f, size_t n,
                           const char *what, int raise) {
  if (f->fixed && n != (size_t)f->max)
    REFUSE(c, raise, "%s of %I must have exactly %I", what, (lua_Integer)n,
           (lua_Integer)f->max);
  if (n < (uint64_t)f->min || n > (uint64_t)f->max)
    REFUSE(c, raise, "%s %I out of range [%I, %I]", what, (lua_Integer)n,
           (lua_Integer)f->min, (lua_Integer)f->max);
  return 1;
}

/* 1 if string field 'f' takes the 'len' bytes at 's'; else as REFUSE. */
static INLINE int strfits (Ctx *c, const bw_Field *f, const char *s,
                           size_t len, int raise) {
  if (len > (uint64_t)f->max)
    REFUSE(c, raise, "string of %I bytes longer than max %I",
           (lua_Integer)len, (lua_Integer)f->max);
  if (!bw_utf8valid(s, len))
    REFUSE(c, raise, "string with NUL or malformed UTF-8");
  return 1;
}

/* 1 if string or bytes field 'f' takes the 'len' bytes at 's' (nothing
** raised). */
static INLINE int bytesfit (Ctx *c, const bw_Field *f, const char *s,
                            size_t len) {
  return f->kind == BW_KSTRING ? strfits(c, f, s, len, 0)
                               : lenfits(c, f, len, "length", 0);
}

/* Record field 'f', missing from its table: its default in slot 'v', its
** Lua type returned; raises "missing" when it has none. */
static INLINE int fielddefault (Ctx *c, const bw_Field *f, int v) {
  if (!f->hasdefault) bw_encerror(c, "missing");
  bw_pushdefault(c, f);
  lua_replace(c->L, v);
  return lua_type(c->L, v);
}

/* 1 if float field 'f' takes 'x' (its range, or clamp); else as REFUSE. */
static INLINE int floatok (Ctx *c, const bw_Field *f, double x, int raise) {
  if (!(x >= f->dmin && x <= f->dmax) && !f->clamp)
    REFUSE(c, raise, "%f out of range [%f, %f]", (lua_Number)x,
           (lua_Number)f->dmin, (lua_Number)f->dmax);
  return 1;
}

/* The index of the enum value at 'idx' of Lua type 'tt' of field 'f', in
** '*out'; as wanttype or REFUSE when it is none. */
static INLINE int enumcode (Ctx *c, const bw_Field *f, int idx, int tt,
                            int raise, uint64_t *out) {
  size_t len = 0;
  uint32_t i;
  const char *s;
  if (!wanttype(c, idx, tt, LUA_TSTRING, "a string", raise)) return 0;
  s = lua_tolstring(c->L, idx, &len);
  i = bw_enumvalue(c->S, f, s, len);
  if (i == BW_NONE) REFUSE(c, raise, "'%s' is not one of its enum values", s);
  *out = (uint64_t)i;
  return 1;
}

/* The code of number 'x' as angle field 'f' in '*code'; 0 when it is not
** finite (no angle). */
static INLINE int anglecode (const bw_Field *f, double x, uint64_t *code) {
  if (!isfinite(x)) return 0;
  *code = bw_angleencode(x, f->dmax, f->nbits);
  return 1;
}

/* The raw of a number: its bits. */
static INLINE uint64_t rawof (double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof(u));
  return u;
}

/* 1 if the values at 'a' and 'b' are the same Lua value, and so encode
** alike as field 'f': not for float32 and float64, whose equal numbers may
** differ in bits (ieeecode). */
static INLINE int rawsame (lua_State *L, const bw_Field *f, int a, int b) {
  return f->kind != BW_KFLOAT32 && f->kind != BW_KFLOAT64
         && lua_rawequal(L, a, b);
}

/* A float32 or float64 field's code: the IEEE bits the encoder writes
** for number 'x' (a float32 rounded as bw_tofloat32). Two numbers are
** alike to a delta when their codes are: -0.0 is not 0.0, and NaNs keep
** their payloads, as a full encode sends them. */
static INLINE uint64_t ieeecode (const bw_Field *f, double x) {
  if (f->kind == BW_KFLOAT32) {
    float y = bw_tofloat32(x);
    uint32_t u;
    memcpy(&u, &y, sizeof(u));
    return u;
  }
  return rawof(x);
}

/* The bits of number 'x' as float field 'f', in '*out'; as REFUSE. */
static INLINE int floatcode (Ctx *c, const bw_Field *f, double x, int raise,
                             uint64_t *out) {
  if (!floatok(c, f, x, raise)) return 0;
  *out = bw_qfloatencode(&f->q, x);
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
    case BW_KFLOAT:
      if (!wanttype(c, idx, tt, LUA_TNUMBER, "a number", raise)) return 0;
      return floatcode(c, f, (double)lua_tonumber(c->L, idx), raise, out);
    default:  /* BW_KENUM */
      return enumcode(c, f, idx, tt, raise, out);
  }
}

/* fixedcode in two steps. The raw value, in '*raw', is what the code is a
** function of (the integer, the number's bits, the boolean, the enum
** value's index): equal raws have equal codes, so a delta against a tape
** does not range-check or quantize what its baseline had (lbw_tapeenc.c).
** A value of the wrong type is refused here, one out of range by rawcode. */
static INLINE int fixedraw (Ctx *c, const bw_Field *f, int idx, int tt,
                            int raise, uint64_t *raw) {
  switch (f->kind) {
    case BW_KINT: case BW_KUINT: {
      lua_Integer v = 0;
      if (!toint(c, idx, tt, raise, &v)) return 0;
      memcpy(raw, &v, sizeof(v));
      return 1;
    }
    case BW_KFLOAT: {
      double x;
      if (!wanttype(c, idx, tt, LUA_TNUMBER, "a number", raise)) return 0;
      x = (double)lua_tonumber(c->L, idx);
      memcpy(raw, &x, sizeof(x));
      return 1;
    }
    default:  /* BW_KBOOL, BW_KENUM: the raw is the code */
      return fixedcode(c, f, idx, tt, raise, raw);
  }
}

static INLINE int rawcode (Ctx *c, const bw_Field *f, uint64_t raw,
                           int raise, uint64_t *out) {
  switch (f->kind) {
    case BW_KINT: case BW_KUINT: {
      lua_Integer v;
      memcpy(&v, &raw, sizeof(v));
      return intcode(c, f, v, raise, out);
    }
    case BW_KFLOAT: {
      double x;
      memcpy(&x, &raw, sizeof(x));
      return floatcode(c, f, x, raise, out);
    }
    default:
      *out = raw;
      return 1;
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

/* A fixed scalar sent whole when it changed: the delta walk compares its
** bits, not its Lua values. */
static INLINE int deltafixed (const bw_Field *f) {
  return f->kind <= BW_KFLOAT && !f->optional && !f->relative;
}

/* 1 if the value at 'v' (of Lua type 'vt', not nil) of deltafixed field
** 'f' is the same on the wire as its baseline value at 'b' (of type 'bt');
** else 0 with the value's bits in '*code'. The value is checked as a full
** encode checks it: one it cannot take raises when 'raise', else differs
** (with no code: its encode then raises). Equal numbers are not
** quantized; a baseline value the field cannot take differs from any.
** A delta's records, arrays and sparse slots compare fixed scalars here. */
static INLINE int bw_fixedsame (Ctx *c, const bw_Field *f, int v, int vt,
                                int b, int bt, int raise, uint64_t *code) {
  lua_State *L = c->L;
  uint64_t base;
  switch (f->kind) {
    case BW_KFLOAT: {
      double x, y = 0;
      if (!wanttype(c, v, vt, LUA_TNUMBER, "a number", raise)) return 0;
      x = (double)lua_tonumber(L, v);
      if (!floatok(c, f, x, raise)) return 0;
      if (bt == LUA_TNUMBER && (y = (double)lua_tonumber(L, b)) == x)
        return 1;
      *code = bw_qfloatencode(&f->q, x);
      return bt == LUA_TNUMBER && floatok(c, f, y, 0)
             && bw_qfloatencode(&f->q, y) == *code;
    }
    case BW_KBOOL:
      if (!wanttype(c, v, vt, LUA_TBOOLEAN, "a boolean", raise)) return 0;
      *code = (uint64_t)lua_toboolean(L, v);
      return bt == LUA_TBOOLEAN && (uint64_t)lua_toboolean(L, b) == *code;
    default: {  /* BW_KINT, BW_KUINT */
      lua_Integer x = 0, y = 0;
      if (!toint(c, v, vt, raise, &x) || !intcode(c, f, x, raise, code))
        return 0;
      return toint(c, b, bt, 0, &y)
             && (y == x || (intcode(c, f, y, 0, &base) && base == *code));
    }
  }
}

/* Bits a delta record gathers before writing them: its changed bits and
** changed fixed scalars, one bw_writebits per run instead of per field;
** c->pending counts them, for the bit offsets of errors (the delta walks
** of lbw_encdelta.c and lbw_tape.c). */
static INLINE void runaddto (Ctx *c, uint64_t *acc, unsigned *pending,
                             uint64_t v, unsigned n) {
  if (*pending + n >= 64) {  /* a run never fills its word: pending stays
                                under 64, so a zero-bit add shifts by less */
    bw_writebits(c->w, *acc, *pending);
    *acc = 0;
    *pending = 0;
    if (n == 64) {  /* only a changed 64-bit uint's code: write it */
      bw_writebits(c->w, v, n);
      return;
    }
  }
  *acc |= v << *pending;  /* pending + n < 64: no overflow */
  *pending += n;
}

/* runaddto on c->pending; a loop between Lua calls may hold the count in a
** local instead (lbw_tapeenc.c's tapescalars). */
static INLINE void runadd (Ctx *c, uint64_t *acc, uint64_t v, unsigned n) {
  runaddto(c, acc, &c->pending, v, n);
}

static INLINE void runflush (Ctx *c, uint64_t *acc) {
  if (c->pending > 0) bw_writebits(c->w, *acc, c->pending);
  *acc = 0;
  c->pending = 0;
}

/* The end of record 't' at 'idx', whose frame is 'fr': the strict check
** of its keys, the writer's status, its frame left. */
static INLINE void endrecord (Ctx *c, Frame *fr, uint32_t t, int idx) {
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

#endif
