/*
** lbw_equal.c - equality on the wire, for delta encoding
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


/* {===================== equality on the wire ===================== */
/* Two values are equal when they would encode to the same bits: quantized
** fields compare their quantized integers. Used by delta encoding. */

/* The walks pass each value's Lua type, which the fetch that pushed it
** returned, so a compare asks for none. */
static int equalvalue (Ctx *c, const bw_Field *f, int a, int ta, int b,
                       int tb);

/* As equalvalue, but nil (an absent optional) equals nil. */
static int equalopt (Ctx *c, const bw_Field *f, int a, int ta, int b,
                     int tb) {
  if (ta == LUA_TNIL || tb == LUA_TNIL) return ta == tb;
  return equalvalue(c, f, a, ta, b, tb);
}

int bw_equalopt (Ctx *c, const bw_Field *f, int a, int b) {
  return equalopt(c, f, a, lua_type(c->L, a), b, lua_type(c->L, b));
}

static int equalstruct (Ctx *c, uint32_t t, int a, int b) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first], *end = f + ty->count;
  int top = lua_gettop(L);
  for (; f < end; f++) {
    int eq, ta, tb;
    if (f->name == BW_NONE || !bw_fieldpresent(f, c->version)) continue;
    pushkey(c, f->name);
    ta = lua_rawget(L, a);
    pushkey(c, f->name);
    tb = lua_rawget(L, b);
    if (!f->optional && f->hasdefault) {  /* missing: the default, as */
      if (ta == LUA_TNIL) {               /* encode sends it */
        bw_pushdefault(c, f);
        lua_replace(L, top + 1);
        ta = lua_type(L, top + 1);
      }
      if (tb == LUA_TNIL) {
        bw_pushdefault(c, f);
        lua_replace(L, top + 2);
        tb = lua_type(L, top + 2);
      }
    }
    eq = equalopt(c, f, top + 1, ta, top + 2, tb);
    lua_settop(L, top);
    if (!eq) return 0;
  }
  return 1;
}

/* Compare slots 1..n (or elements of equal-length arrays). */
static int equalslots (Ctx *c, const bw_Field *e, int a, int b,
                       lua_Integer n, int holes) {
  lua_State *L = c->L;
  int base = lua_gettop(L), top, eq = 1;
  lua_Integer i, *list = NULL, akeys;
  size_t k, m = 0;
  if (holes && n > MAPSLOTS)  /* a long sparse array: the keys of both */
    list = bw_sparsekeys(L, a, b, n, &m, &akeys);
  top = lua_gettop(L);
  for (i = 1, k = 0; eq && (list == NULL ? i <= n : k < m); i++, k++) {
    int ta, tb;
    if (list != NULL) i = list[k];
    ta = lua_rawgeti(L, a, i);
    tb = lua_rawgeti(L, b, i);
    eq = holes ? equalopt(c, e, top + 1, ta, top + 2, tb)
               : equalvalue(c, e, top + 1, ta, top + 2, tb);
    lua_settop(L, top);
  }
  lua_settop(L, base);
  return eq;
}

int bw_quatnums (lua_State *L, int idx, double v[4]) {
  int i, nums = 1;
  if (!lua_istable(L, idx)) return 0;
  for (i = 0; i < 4; i++) {
    nums &= lua_rawgeti(L, idx, i + 1) == LUA_TNUMBER;
    v[i] = (double)lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  return nums && lua_rawlen(L, idx) == 4;  /* as the encoder takes one */
}

int bw_quatof (const bw_Field *f, lua_State *L, int idx, uint32_t q[4]) {
  double v[4];
  return bw_quatnums(L, idx, v) && bw_quatencode(&f->q, v, q);
}

/* 1 if the quaternions at 'a' and 'b' (tables) hold the same numbers,
** those of 'a' in 'v': then their codes are the same, and quantizing
** either is no longer needed. Both must be quaternions as the encoder
** takes one (bw_quatnums): a baseline of five components is no value to
** keep, however its first four compare. */
static int samequat (lua_State *L, int a, int b, double v[4]) {
  int i;
  if (lua_rawlen(L, a) != 4 || lua_rawlen(L, b) != 4) return 0;
  for (i = 0; i < 4; i++) {
    int same;
    lua_rawgeti(L, a, i + 1);
    lua_rawgeti(L, b, i + 1);
    same = lua_rawequal(L, -1, -2);
    v[i] = (double)lua_tonumber(L, -2);
    lua_pop(L, 2);
    if (!same) return 0;
  }
  return 1;
}

static int equalvalue (Ctx *c, const bw_Field *f, int a, int ta, int b,
                       int tb) {
  lua_State *L = c->L;
  if (ta != tb) return 0;
  switch (f->kind) {
    case BW_KINT: case BW_KUINT: case BW_KBOOL: case BW_KFLOAT: {
      uint64_t code;  /* as the delta walk compares them */
      return bw_fixedsame(c, f, a, ta, b, tb, 0, &code);
    }
    case BW_KANGLE: {
      double x = (double)lua_tonumber(L, a), y = (double)lua_tonumber(L, b);
      uint64_t cx, cy;
      return ta == LUA_TNUMBER && anglecode(f, x, &cx) && anglecode(f, y, &cy)
        && cx == cy;
    }
    case BW_KFLOAT32: case BW_KFLOAT64: {
      double x = (double)lua_tonumber(L, a), y = (double)lua_tonumber(L, b);
      return ta == LUA_TNUMBER && ieeecode(f, x) == ieeecode(f, y);
    }
    case BW_KQUAT: {
      uint32_t qa[4], qb[4];
      double v[4];
      if (ta == LUA_TTABLE && samequat(L, a, b, v)) return bw_quatvalid(v);
      return bw_quatof(f, L, a, qa) && bw_quatof(f, L, b, qb)
        && memcmp(qa, qb, sizeof(qa)) == 0;
    }
    case BW_KARRAY: {  /* the baseline's length: bw_arraybase's */
      lua_Integer n, bn;
      if (ta != LUA_TTABLE || !bw_arraybase(L, b, &bn)
          || !bw_arrayclean(L, b, bn))
        return 0;
      n = (lua_Integer)lua_rawlen(L, a);
      return n == bn && equalslots(c, &c->S->fields[f->ref], a, b, n, 0);
    }
    case BW_KSPARSE:  /* a baseline with keys that are no slots is none */
      return ta == LUA_TTABLE && bw_sparseslotsonly(L, a, (lua_Integer)f->max)
        && bw_sparsebase(L, f, b) != 0
        && equalslots(c, &c->S->fields[f->ref], a, b, (lua_Integer)f->max, 1);
    case BW_KSTRUCT:
      return ta == LUA_TTABLE && equalstruct(c, f->ref, a, b);
    default:
      return lua_rawequal(L, a, b);
  }
}

/* }========================================================== */
