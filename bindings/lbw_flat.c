/*
** lbw_flat.c - flat records' decode plans, and the pass along one
** See LICENSE for copyright and terms.
*/

#include <stdint.h>
#include <stdlib.h>

#include "lbw_decode.h"


/* {===================== flat plans ===================== */

void bw_flatplanfree (FlatPlan *p) {
  free(p->first);
  free(p->spend);
  free(p->ops);
  p->first = p->spend = NULL;
  p->ops = NULL;
}

/* The op of fixed-width scalar 'f' (named, by markflat). */
static FlatOp flatop (const bw_Field *f) {
  FlatOp o;
  o.kind = f->kind;
  o.w = (uint8_t)fixedbits(f);
  o.n = 0;
  o.key = f->name;
  o.lim = f->kind == BW_KFLOAT ? (uint64_t)f->q.miv
        : f->kind == BW_KINT || f->kind == BW_KENUM
          ? (uint64_t)f->max - (uint64_t)f->min : ~UINT64_C(0);
  o.f = f;
  return o;
}

/* Plan every flat type of 'S'; left empty without memory. */
void bw_flatplanmake (FlatPlan *p, const bw_Schema *S) {
  size_t nops = 0;
  uint32_t t, k = 0;
  p->first = p->spend = NULL;
  p->ops = NULL;
  for (t = 0; t < S->ntypes; t++)  /* a scalar's op, two per other field */
    if (S->types[t].flat > 0)
      nops += (size_t)S->types[t].flat + 2 * (size_t)S->types[t].count;
  if (nops == 0 || nops > UINT32_MAX) return;
  p->first = (uint32_t *)malloc(((size_t)S->ntypes + 1) * sizeof(uint32_t));
  p->spend = (uint32_t *)calloc(S->ntypes, sizeof(uint32_t));
  p->ops = (FlatOp *)malloc(nops * sizeof(FlatOp));
  if (p->first == NULL || p->spend == NULL || p->ops == NULL) {
    bw_flatplanfree(p);
    return;
  }
  for (t = 0; t < S->ntypes; t++) {
    const bw_Type *ty = &S->types[t];
    const bw_Field *f = &S->fields[ty->first], *end = f + ty->count;
    p->first[t] = k;
    if (ty->flat == 0) continue;
    for (; f < end; f++) {
      if (f->kind == BW_KSTRUCT) {
        const bw_Type *st = &S->types[f->ref];
        const bw_Field *g = &S->fields[st->first], *gend = g + st->count;
        FlatOp *o = &p->ops[k++];
        o->kind = BW_KSTRUCT;
        o->w = g->fusebits;
        o->n = (uint16_t)st->count;  /* <= MAXFLAT */
        o->key = f->name;
        o->lim = 0;
        o->f = f;
        p->spend[t] += 1 + st->count;
        for (; g < gend; g++) p->ops[k++] = flatop(g);
      }
      else if (f->kind == BW_KARRAY) {  /* then its element's op */
        FlatOp *o = &p->ops[k++];
        o->kind = BW_KARRAY;
        o->w = (uint8_t)fixedbits(&S->fields[f->ref]);
        o->n = (uint16_t)f->min;  /* the count, <= MAXFLAT */
        o->key = f->name;
        o->lim = 0;
        o->f = f;
        p->spend[t] += 1 + (uint32_t)f->min;
        p->ops[k++] = flatop(&S->fields[f->ref]);
      }
      else if (f->kind == BW_KQUAT) {
        FlatOp *o = &p->ops[k++];
        o->kind = BW_KQUAT;
        o->w = (uint8_t)(2 + 3 * f->q.nbits);
        o->n = 4;
        o->key = f->name;
        o->lim = 0;
        o->f = f;
        p->spend[t] += 5;  /* as bw_pushquat */
      }
      else p->ops[k++] = flatop(f);
    }
  }
  p->first[t] = k;
}

/* Push the value of a flat op's raw bits 'u', checked against o->lim;
** 'kind' is o->kind, a constant where a loop per kind inlines it. */
static INLINE void pushflatk (Ctx *c, const FlatOp *o, int kind,
                              uint64_t u) {
  lua_State *L = c->L;
  switch (kind) {
    case BW_KFLOAT:
      lua_pushnumber(L, (lua_Number)bw_qfloatdecode(&o->f->q, (uint32_t)u));
      break;
    case BW_KINT: {
      uint64_t val = (uint64_t)o->f->min + u;
      lua_pushinteger(L, (lua_Integer)(val <= (uint64_t)INT64_MAX
                                       ? (int64_t)val : -(int64_t)(~val) - 1));
      break;
    }
    case BW_KBOOL:
      lua_pushboolean(L, (int)u);
      break;
    case BW_KENUM:
      pushkey(c, o->f->ref + (uint32_t)u);
      break;
    default:  /* BW_KUINT */
      lua_pushinteger(L, (lua_Integer)(u <= (uint64_t)INT64_MAX ? (int64_t)u
                                       : -(int64_t)(~u) - 1));
  }
}

#define pushflat(c, o, u)  pushflatk((c), (o), (o)->kind, (u))

/* Elements i, i + 1, ... of an array on top: the 'k' in 'u', 'w' bits
** each, of element op 'e' of kind 'kind' (e->kind). 0 when one is out of
** range. */
static INLINE int flatrun (Ctx *c, const FlatOp *e, int kind, unsigned w,
                           lua_Integer i, unsigned k, uint64_t u) {
  uint64_t mask = w < 64 ? (UINT64_C(1) << w) - 1 : ~UINT64_C(0);
  for (; k > 0; k--, i++) {
    uint64_t v = u & mask;
    if (v > e->lim) return 0;
    pushflatk(c, e, kind, v);
    lua_rawseti(c->L, -2, i);
    if (w < 64) u >>= w;
  }
  return 1;
}

/* With the key of op 'o' on top, push the table it fills: the old one at
** that key in the record at 'tbl' when 'reuse' finds one it may claim
** (returns 1: refilled in place), else a new one sized 'narr', 'nrec'. */
static INLINE int openchild (Ctx *c, const FlatOp *o, int tbl, int top,
                             int reuse, int narr, int nrec) {
  lua_State *L = c->L;
  if (reuse && lua_rawget(L, tbl) == LUA_TTABLE && claim(c, top + 1))
    return 1;
  if (reuse) {
    lua_pop(L, 1);
    pushkey(c, o->key);
  }
  lua_createtable(L, narr, nrec);
  return 0;
}

/* Done with the table openchild pushed: left as refilled, or stored. */
static INLINE void closechild (lua_State *L, int tbl, int top, int inplace) {
  if (inplace) lua_settop(L, top);
  else lua_rawset(L, tbl);
}

/* A flat array op 'o' (its element's op follows) of the record at 'tbl':
** as many elements a read as fit, into its old table (refilled, trimmed)
** or a new one. 0 when an element is out of range. */
static int flatarray (Ctx *c, const FlatOp *o, int tbl, int top, int reuse,
                      int fast) {
  lua_State *L = c->L;
  const FlatOp *e = o + 1;
  unsigned w = o->w, per = w == 0 ? o->n : w <= BW_FUSEBITS
                                           ? BW_FUSEBITS / w : 1;
  lua_Integer i = 1, n = (lua_Integer)o->n, oldn = 0;
  int inplace = openchild(c, o, tbl, top, reuse, (int)n, 0);
  if (inplace) oldn = (lua_Integer)lua_rawlen(L, top + 1);
  while (i <= n) {
    unsigned k = n - i + 1 < (lua_Integer)per ? (unsigned)(n - i + 1) : per;
    uint64_t u = fast ? bw_readbitsfast(&c->r, k * w)
                      : bw_readbits(&c->r, k * w);
    int ok;
    switch (e->kind) {
      case BW_KBOOL: ok = flatrun(c, e, BW_KBOOL, w, i, k, u); break;
      case BW_KINT: ok = flatrun(c, e, BW_KINT, w, i, k, u); break;
      case BW_KUINT: ok = flatrun(c, e, BW_KUINT, w, i, k, u); break;
      default: ok = flatrun(c, e, e->kind, w, i, k, u); break;
    }
    if (!ok) return 0;
    i += k;
  }
  for (; oldn > n; oldn--) {  /* trim an array that was longer */
    lua_pushnil(L);
    lua_rawseti(L, -2, oldn);
  }
  closechild(L, tbl, top, inplace);
  return 1;
}

/* A flat quaternion op 'o' of the record at 'tbl': bw_readquat's code,
** checked, into its old table (refilled) or a new one. 0 when the code is
** refused (the reader is left as it was). */
static int flatquat (Ctx *c, const FlatOp *o, int tbl, int top, int reuse) {
  lua_State *L = c->L;
  uint32_t code[4];
  double q[4];
  int j, inplace;
  if (!bw_readquatdecode(&c->r, &o->f->q, code, q)) {
    c->r.status = BW_OK;  /* the general walk reports it */
    return 0;
  }
  inplace = openchild(c, o, tbl, top, reuse, 4, 0);
  for (j = 0; j < 4; j++) {
    lua_pushnumber(L, (lua_Number)q[j]);
    lua_rawseti(L, -2, j + 1);
  }
  if (inplace) bw_trimquat(L, top + 1);
  closechild(L, tbl, top, inplace);
  return 1;
}

/* A flat record (bw_Type.flat) of type 't' whose bits are all there, into
** the table at 'tbl' (0: on top; 'reuse': refill it and the tables of its
** records), along its plan, in one pass. 0 when its records would pass
** max_values (checked before anything is claimed) or a value is out of
** range, with the reader, max_values and the stack as they were: the
** general walk then reports it, with its path (the records refilled
** before it are claimed, so it makes fresh ones: a failed decode into
** leaves its table partly refilled). */
int bw_decflat (Ctx *c, uint32_t t, int tbl, int reuse) {
  lua_State *L = c->L;
  const FlatOp *o = &c->plan->ops[c->plan->first[t]];
  const FlatOp *oend = &c->plan->ops[c->plan->first[t + 1]];
  uint64_t pos = c->r.pos;
  /* away from the end of the input, reads need no checks */
  int top = lua_gettop(L), fast = c->r.status == BW_OK
        && bw_bitsremaining(&c->r) >= c->S->types[t].minbits + 72;
#define FLATREAD(w) (fast ? bw_readbitsfast(&c->r, (w)) \
                          : bw_readbits(&c->r, (w)))
  if (c->r.status != BW_OK || c->plan->spend[t] > c->values)
    return 0;  /* before any claim */
  c->values -= c->plan->spend[t];
  if (tbl == 0) tbl = top;
  for (; o < oend; o++) {
    pushkey(c, o->key);
    if (o->kind == BW_KSTRUCT) {  /* one read for its scalars */
      const FlatOp *gend = o + 1 + o->n;
      uint64_t u = FLATREAD(o->w);
      int inplace = openchild(c, o, tbl, top, reuse, 0, (int)o->n);
      for (o++; o < gend; o++) {
        uint64_t v = u & ((UINT64_C(1) << o->w) - 1);  /* w < BW_FUSEBITS */
        if (v > o->lim) goto refused;
        pushkey(c, o->key);
        pushflat(c, o, v);
        lua_rawset(L, -3);
        u >>= o->w;
      }
      o--;
      closechild(L, tbl, top, inplace);
    }
    else if (o->kind == BW_KARRAY) {
      if (!flatarray(c, o++, tbl, top, reuse, fast)) goto refused;
    }
    else if (o->kind == BW_KQUAT) {
      if (!flatquat(c, o, tbl, top, reuse)) goto refused;
    }
    else {
      uint64_t v = FLATREAD(o->w);
      if (v > o->lim) goto refused;
      pushflat(c, o, v);
      lua_rawset(L, tbl);
    }
  }
#undef FLATREAD
  return 1;
refused:
  lua_settop(L, top);
  c->r.pos = pos;
  c->values += c->plan->spend[t];
  return 0;
}

/* }========================================================== */
