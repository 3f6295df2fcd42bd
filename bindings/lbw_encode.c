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

#include "lbw_encvalue.h"

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

static const char *checkstr (Ctx *c, int idx, int tt, size_t *len) {
  wanttype(c, idx, tt, LUA_TSTRING, "a string", 1);
  return lua_tolstring(c->L, idx, len);
}

void bw_checklen (Ctx *c, const bw_Field *f, size_t n, const char *what) {
  lenfits(c, f, n, what, 1);
}

int bw_quatvalue (Ctx *c, const bw_Field *f, int idx, int raise,
                  uint32_t q[4]) {
  lua_State *L = c->L;
  double v[4];
  int i;
  if (!lua_istable(L, idx)) {
    if (raise) bw_enctype(c, idx, "a table {x, y, z, w}");
    return 0;
  }
  if (lua_rawlen(L, idx) != 4)
    REFUSE(c, raise, "quaternion needs 4 components, got %I",
           (lua_Integer)lua_rawlen(L, idx));
  for (i = 0; i < 4; i++) {
    int tt = lua_rawgeti(L, idx, i + 1);
    v[i] = (double)lua_tonumber(L, -1);
    lua_pop(L, 1);
    if (tt != LUA_TNUMBER)
      REFUSE(c, raise, "quaternion component %d is not a number", i + 1);
  }
  if (!bw_quatencode(&f->q, v, q))
    REFUSE(c, raise, "quaternion has no length (or is not finite)");
  return 1;
}

void bw_quatcode (Ctx *c, const bw_Field *f, int idx, uint32_t q[4]) {
  bw_quatvalue(c, f, idx, 1, q);
}

static void encquat (Ctx *c, const bw_Field *f, int idx) {
  uint32_t q[4];
  bw_quatcode(c, f, idx, q);
  bw_writequat(c->w, &f->q, q);
}

/* The code of a FLOAT or ANGLE value at 'idx' (of Lua type 'tt'). */
uint32_t bw_numcode (Ctx *c, const bw_Field *f, int idx, int tt) {
  double x;
  uint64_t u = 0;
  if (f->kind != BW_KANGLE) {
    fixedcode(c, f, idx, tt, 1, &u);
    return (uint32_t)u;
  }
  x = checknum(c, idx, tt);
  if (!anglecode(f, x, &u))
    bw_encerror(c, "angle %f is not finite", (lua_Number)x);
  return (uint32_t)u;
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
      bw_writebits(w, bw_numcode(c, f, idx, tt), f->nbits);
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
      strfits(c, f, s, len, 1);
      bw_writebits(w, (uint64_t)len, f->nbits);
      bw_writebytes(w, s, len);
      break;
    }
    case BW_KBYTES: {
      size_t len;
      const char *s = checkstr(c, idx, tt, &len);
      bw_checklen(c, f, len, "length");
      bw_writebits(w, (uint64_t)len - (uint64_t)f->min, f->nbits);
      bw_writebytes(w, s, len);
      break;
    }
    case BW_KALIGN: bw_writealign(w); break;
    case BW_KCHECK: bw_writecheck(w, f->magic); break;
    case BW_KQUAT: encquat(c, f, idx); break;
    case BW_KTIERED: {  /* an int's code (tiered takes no clamp) */
      uint64_t u = 0;
      intcode(c, f, checkint(c, idx, tt), 1, &u);
      bw_writetiered(w, u, 0, (uint64_t)f->max - (uint64_t)f->min,
                     f->tierbits, f->ntiers);
      break;
    }
    default:
      bw_encerror(c, "field kind %d not supported", (int)f->kind);
  }
  if (w->status != BW_OK)
    bw_encerror(c, "%s (packet over %I bytes)", bw_strerror(w->status),
             (lua_Integer)w->maxbytes);
}

/* encleaf for the other walks; static above so the loops here inline it */
void bw_encleaf (Ctx *c, const bw_Field *f, int idx, int tt) {
  encleaf(c, f, idx, tt);
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
  luaL_checkstack(L, (int)per, "array");
  while (i <= n) {
    uint64_t acc = 0;
    unsigned k = n - i + 1 < (lua_Integer)per ? (unsigned)(n - i + 1) : per;
    int v = top;
    c->pending = 0;
    for (; k > 0; k--, i++) {  /* popped once a run: settop per value costs */
      int tt = lua_rawgeti(L, idx, i);
      fr->index = i;
      if (tt == LUA_TNIL) bw_encerror(c, "missing");
      acc |= fixedvalue(c, e, ++v, tt) << c->pending;  /* < 64 */
      c->pending += w;
    }
    lua_settop(L, top);
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
      bw_checklen(c, f, (size_t)n, "count");
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
    case BW_KSPARSE: bw_encsparse(c, f, idx, 0); break;
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
  uint64_t acc = 0;
  unsigned bits;
  c->pending = 0;
  for (; f < gend; f++, v++, tt++) {
    int vt = *tt;
    setframe(fr, f);
    if (vt == LUA_TNIL) vt = fielddefault(c, f, v);
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
  endrecord(c, fr, t, idx);
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
        vt = fielddefault(c, f, v);
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
  endrecord(c, fr, t, idx);
}
