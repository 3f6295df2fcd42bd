/*
** lbw_decode.h - what the decode files share (lbw_decode.c, lbw_decdelta.c,
** lbw_tapedec.c, lbw_flat.c, lbw_claims.c); each is described where it
** is defined
** See LICENSE for copyright and terms.
*/

#ifndef LBW_DECODE_H
#define LBW_DECODE_H

#include "lbw_schema.h"

/* {===================== between the decode files ===================== */
/* What the decode files share; each is described where it is defined. */

/* lbw_claims.c */
int  bw_claimslow (Claims *cl, const void *p);
/* 1 if the table at 'idx' (every 'into' of the walk is a table or 0) has
** not been refilled by this decode yet, now taken; 0 if it has (aliased):
** make a fresh one instead. Only for decodes into a table
** (bw_claimsstart). */
static INLINE int claim (Ctx *c, int idx) {
  Claims *cl = c->claims;
  const void *p = lua_topointer(c->L, idx);
  if (!cl->hashed && cl->k < cl->prev && cl->seq[cl->k] == p) {
    cl->k++;  /* as last time */
    return 1;
  }
  return bw_claimslow(cl, p);
}

/* Pop the value on top, which a decode into clears from its place: a
** table is claimed, so one the caller also put in another place is
** refilled there only if the walk meets it nowhere else, and one it met
** already is cleared of another type's keys at the end (bw_decodetop). */
static INLINE void bw_droptop (Ctx *c) {
  if (lua_type(c->L, -1) == LUA_TTABLE) (void)claim(c, lua_gettop(c->L));
  lua_pop(c->L, 1);
}

/* lbw_flat.c */
int  bw_decflat (Ctx *c, uint32_t t, int tbl, int reuse);

/* lbw_decode.c */
/* Clear elements past 'n' of the array at 't', refilled in place, that
** held 'oldn' (its first border): an array that got shorter, and those
** past a hole (bw_droptop). */
void bw_trimlist (Ctx *c, int t, int64_t n, int64_t oldn);
int  bw_rangefail (Ctx *c, const bw_Field *f, bw_Word what, uint64_t u,
                   uint64_t start);
int  bw_readrange (Ctx *c, const bw_Field *f, bw_Word what, int64_t *v);
/* An array's count 'n' read at 'start' needs 'need' bits, more than are
** left: truncated before anything is made. */
int  bw_needfail (Ctx *c, uint64_t start, int64_t n, uint64_t need);
int  bw_decleaf (Ctx *c, const bw_Field *f);
int  bw_decvalue (Ctx *c, const bw_Field *f, int into);
int  bw_decsparse (Ctx *c, const bw_Field *f, int into, int bidx);
/* The sent slots of a sparse array, as the reader takes them: its
** encoding (read by bw_sparsestart), then each slot (bw_sparsenext: 1 with
** it in '*slot', 0 past the last, -1 with the failure), checked rising and
** in [1, max]; 'slotmin' bounds an index encoding's count by the bits
** left. bw_sparsestart returns 0 with the failure. */
typedef struct SparseIn {
  const bw_Field *f;
  lua_Integer n, prev, count;
  uint64_t slotmin;
  unsigned ibits;
  int enc;
} SparseIn;
int  bw_sparsestart (Ctx *c, const bw_Field *f, SparseIn *in,
                     uint64_t slotmin);
int  bw_sparsenext (Ctx *c, SparseIn *in, lua_Integer *slot);
int  bw_quatfail (Ctx *c);
int  bw_pushquat (Ctx *c, const bw_Field *f, const uint32_t q[4], int into);
/* A new table of the quaternion of code 'q', no budget spent (a value a
** delta keeps, as the walk over tables copies one). */
void bw_newquat (Ctx *c, const bw_Field *f, const uint32_t q[4]);
/* A quaternion table refilled at 'idx' keeps 4 elements: a longer one
** would not encode again. */
static inline void bw_trimquat (lua_State *L, int idx) {
  lua_Integer n;
  while ((n = (lua_Integer)lua_rawlen(L, idx)) > 4) {
    lua_pushnil(L);
    lua_rawseti(L, idx, n);
  }
}
/* Push the raw bits 'u' of fixed-width field 'f' of kind 'kind' (f->kind;
** a constant where a loop per kind inlines it), read at bit 'start',
** checked when 'check' (a constant in each caller). Returns 0 on a value
** out of range. */
static INLINE int fixedpush (Ctx *c, const bw_Field *f, int kind,
                             uint64_t u, uint64_t start, int check) {
  lua_State *L = c->L;
  switch (kind) {
    case BW_KINT: case BW_KENUM: {
      uint64_t val = (uint64_t)f->min + u;
      if (check && u > (uint64_t)f->max - (uint64_t)f->min)
        return bw_rangefail(c, f, W_VALUE, u, start);
      if (kind == BW_KENUM) pushkey(c, f->ref + (uint32_t)u);
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
    case BW_KANGLE:
      lua_pushnumber(L, (lua_Number)bw_angledecode((uint32_t)u, f->dmax,
                                                   f->nbits));
      return 1;
    default:  /* BW_KFLOAT */
      if (check && u > f->q.miv)
        return bw_decsayi(c, BW_ERANGE, start, W_QUANTIZED, (int64_t)u,
                          (int64_t)f->q.miv, 0);
      lua_pushnumber(L, (lua_Number)bw_qfloatdecode(&f->q, (uint32_t)u));
      return 1;
  }
}

/* Check and push the raw bits 'u' of 'f' read at bit 'start'. */
static INLINE int pushfixedk (Ctx *c, const bw_Field *f, int kind,
                              uint64_t u, uint64_t start) {
  return fixedpush(c, f, kind, u, start, 1);
}

/* Push the code 'u' of 'f' that a tape holds: tapes hold checked codes
** only (the encoder's, or a decode's), so it is not checked again. */
static INLINE void pushcode (Ctx *c, const bw_Field *f, int kind,
                             uint64_t u) {
  (void)fixedpush(c, f, kind, u, 0, 0);
}

static INLINE int pushfixed (Ctx *c, const bw_Field *f, uint64_t u,
                             uint64_t start) {
  return pushfixedk(c, f, f->kind, u, start);
}

/* Read, check and push fixed-width field 'f' (fixedscalar, or an angle),
** its bits in '*u'. Returns 0 on failure. */
static INLINE int bw_readfixed (Ctx *c, const bw_Field *f, uint64_t *u) {
  uint64_t start = c->r.pos;
  *u = bw_readbits(&c->r, fixedbits(f));
  if (c->r.status != BW_OK) return bw_readfail(c);
  return pushfixed(c, f, *u, start);
}

/* Open a record of type 'ty' that a delta decode makes: its values spent,
** its frame entered, its table pushed. Returns the table's index, or 0
** when max_values runs out. */
static INLINE int bw_opendeltarecord (Ctx *c, const bw_Type *ty, Frame **fr) {
  if (!bw_decspendrecord(c, ty)) return 0;
  *fr = enterframe(c);
  lua_createtable(c->L, 0, (int)ty->count);
  return lua_gettop(c->L);
}

/* lbw_decdelta.c */
/* Push the value of relative field 'f' read as a difference from the
** baseline's code ('base', or a quaternion's 'bq'), its code in '*code'
** (or 'q'). Returns 0 with the failure. */
int  bw_readrelative (Ctx *c, const bw_Field *f, uint64_t base,
                      const uint32_t bq[4], uint64_t *code, uint32_t q[4]);
int  bw_keepbaseline (Ctx *c, const bw_Field *f, int v);
/* Push what a delta keeps of the baseline value at 'v' for field 'f': a
** missing one takes the field's default (a baseline decoded under
** definitions that lacked the field); one of a baseline not known to be
** this schema's own decode is checked, then pushed as a full decode of it
** would give it (quantized, clamped, of the field's number type). Returns
** 0 with the failure. */
int  bw_keep (Ctx *c, const bw_Field *f, int v);
int  bw_pushkept (Ctx *c, const bw_Field *f, int idx);
int  bw_decdeltavalue (Ctx *c, const bw_Field *f, int bidx);

/* }========================================================== */

#endif
