/*
** lbw_encdelta.c - the encode walk against a baseline: per field a changed
** bit and only what changed
** See LICENSE for copyright and terms.
*/

#include "lauxlib.h"

#include "lbw_encvalue.h"


/* delta = "relative": the value at 'v' as a difference from the baseline
** value at 'b' (WIRE.md). Returns 0, writing nothing, when 'b' is not a
** value to start from: the caller sends the value whole. The decoder makes
** the same choice from its copy of the baseline. */
static int encrelative (Ctx *c, const bw_Field *f, int v, int b) {
  lua_State *L = c->L;
  uint32_t bq[4] = { 0, 0, 0, 0 };
  uint64_t base = 0;
  if (f->kind == BW_KQUAT ? !bw_quatof(f, L, b, bq)
      : lua_type(L, b) != LUA_TNUMBER
        || !bw_diffbase(f, (double)lua_tonumber(L, b), &base))
    return 0;
  bw_sendrelative(c, f, v, base, bq);
  return 1;
}

void bw_sendrelative (Ctx *c, const bw_Field *f, int v, uint64_t base,
                      const uint32_t bq[4]) {
  if (f->kind == BW_KQUAT) {
    uint32_t q[4];
    bw_quatcode(c, f, v, q);
    bw_writerelative(c, f, 0, 0, bq, q);
  }
  else bw_writerelative(c, f, base, bw_numcode(c, f, v, lua_type(c->L, v)),
                        NULL, NULL);
}

void bw_writerelative (Ctx *c, const bw_Field *f, uint64_t base,
                       uint64_t code, const uint32_t bq[4],
                       const uint32_t q[4]) {
  if (f->kind == BW_KQUAT) bw_writequatdiff(c->w, f, bq, q);
  else {
    bw_Diff d;
    bw_fielddiff(f, &d);
    bw_writediff(c->w, &d, base, code);
  }
  if (c->w->status != BW_OK)
    bw_encerror(c, "%s (packet over %I bytes)", bw_strerror(c->w->status),
             (lua_Integer)c->w->maxbytes);
}

/* Delta encoding walks the value and its baseline together, once: a record
** or an array is written optimistically after a changed bit of 1 and, when
** nothing in it changed, taken back (bw_writerrewind) for a 0. Int, uint,
** bool and float fields compare their numbers, then their codes
** (encdeltafixed); other scalars equal as Lua values are equal on the wire,
** and only the kinds whose distinct Lua values may still encode alike
** (quaternions, angles, float32/64 NaNs) take bw_equalopt. */

/* What an array baseline is (lbw_schema.h), which the decode walk and the
** tapes ask too. */
int bw_arraybase (lua_State *L, int idx, lua_Integer *n) {
  lua_Integer k = 0;
  if (!lua_istable(L, idx)) return 0;
  while (lua_rawgeti(L, idx, k + 1) != LUA_TNIL) {
    lua_pop(L, 1);
    k++;
  }
  lua_pop(L, 1);
  *n = k;
  return 1;
}

int bw_arrayclean (lua_State *L, int idx, lua_Integer n) {
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_isinteger(L, -1) && lua_tointeger(L, -1) > n) {
      lua_pop(L, 1);
      return 0;
    }
  }
  return 1;
}

static int encdelta (Ctx *c, const bw_Field *f, int idx, int bidx);
static int encdeltaarray (Ctx *c, const bw_Field *f, int idx, int bidx,
                          lua_Integer bn);
static int deltastruct (Ctx *c, uint32_t t, int idx, int bidx, int hasb);

/* The changed bit and bits of deltafixed 'f' (value at 'v' of Lua type
** 'vt', not nil; baseline value at 'b' of type 'bt'), added to 'r'.
** Returns 1 if it changed. */
static INLINE int encdeltafixed (Ctx *c, uint64_t *r, const bw_Field *f, int v,
                                 int vt, int b, int bt) {
  uint64_t code = 0;
  if (bw_fixedsame(c, f, v, vt, b, bt, 1, &code)) {
    runadd(c, r, 0, 1);
    return 0;
  }
  runadd(c, r, 1, 1);
  runadd(c, r, code, fixedbits(f));
  return 1;
}

/* 1 if the values at 'v' and 'b' of field 'f' differ on the wire (neither
** is a table the delta walk handles). */
static INLINE int scalarchanged (Ctx *c, const bw_Field *f, int v, int b) {
  if (rawsame(c->L, f, v, b)) return 0;
  switch (f->kind) {
    case BW_KINT: case BW_KUINT: case BW_KBOOL:  /* optional: by code too */
    case BW_KFLOAT: case BW_KFLOAT32: case BW_KFLOAT64: case BW_KQUAT:
    case BW_KANGLE:
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
    lua_Integer bn = 0;
    if (lua_topointer(c->L, v) == lua_topointer(c->L, b)
        && !c->strict) {  /* shared; strict walks it, as the tape walk */
      bw_writebits(w, 0, 1);
      return 0;
    }
    bw_writebits(w, 1, 1);
    if (f->optional) bw_writebits(w, 1, 1);
    if (f->kind == BW_KSTRUCT) changed = deltastruct(c, f->ref, v, b, 2);
    else {
      bw_arraybase(c->L, b, &bn);  /* with holes: never kept */
      changed = encdeltaarray(c, f, v, b, bn) || !bw_arrayclean(c->L, b, bn);
    }
    if (changed) return 1;
    bw_writerrewind(w, start);  /* nothing in it changed */
    bw_writebits(w, 0, 1);
    return 0;
  }
  if (vt == LUA_TNIL || bt == LUA_TNIL) changed = vt != bt;
  else if (vt != bt) changed = 1;
  else changed = scalarchanged(c, f, v, b);
  if (c->strict && vt == LUA_TTABLE && f->kind == BW_KSPARSE)
    bw_strictvalue(c, f, v);  /* all of it, kept or sent, shared or not,
                                    before its changed bit (as the tape walk) */
  bw_writebits(w, (uint64_t)changed, 1);
  if (changed) {
    if (f->optional) bw_writebits(w, vt != LUA_TNIL, 1);
    if (vt != LUA_TNIL) {
      if (bt == LUA_TTABLE || f->relative) encdelta(c, f, v, b);
      else if (f->kind < BW_KARRAY) bw_encleaf(c, f, v, vt);
      else bw_encvalue(c, f, v, vt);
    }
  }
  return changed;
}

/* An array against the baseline array at 'bidx' (see decdeltaarray);
** returns 1 if anything changed. */
static int encdeltaarray (Ctx *c, const bw_Field *f, int idx, int bidx,
                          lua_Integer bn) {
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer i, n;
  int changed, top = lua_gettop(L), fixed = deltafixed(e);
  uint64_t run = 0;
  if (!lua_istable(L, idx)) bw_enctype(c, idx, "a table");
  n = (lua_Integer)lua_rawlen(L, idx);
  bw_checklen(c, f, (size_t)n, "count");
  bw_writebits(c->w, (uint64_t)n - (uint64_t)f->min, f->nbits);
  changed = n != bn;
  for (i = 1; i <= n; i++) {
    int v = top + 1, et;
    pushframe(c, BW_NONE, i);
    et = lua_rawgeti(L, idx, i);
    if (et == LUA_TNIL) bw_encerror(c, "missing");
    if (i <= bn) {
      int bt = lua_rawgeti(L, bidx, i);
      if (fixed) changed |= encdeltafixed(c, &run, e, v, et, v + 1, bt);
      else changed |= encdeltafield(c, e, v, et, v + 1, bt);
    }
    else {
      runflush(c, &run);
      bw_encvalue(c, e, v, et);
    }
    lua_settop(L, top);
    popframe(c);
  }
  runflush(c, &run);
  return changed;
}

/* A changed value at 'idx' of field 'f' against its baseline value at
** 'bidx': records, arrays and sparse arrays as deltas when the baseline has
** one, anything else in full. */
void bw_encdeltavalue (Ctx *c, const bw_Field *f, int idx, int bidx) {
  encdelta(c, f, idx, bidx);
}

/* encdeltavalue's work; returns 0 for a record or an array in which
** nothing changed (anything else: 1). */
static int encdelta (Ctx *c, const bw_Field *f, int idx, int bidx) {
  lua_Integer bn;
  if (f->relative && encrelative(c, f, idx, bidx)) return 1;
  if (lua_istable(c->L, bidx)) {
    switch (f->kind) {
      case BW_KSTRUCT: return deltastruct(c, f->ref, idx, bidx, 1);
      case BW_KSPARSE: bw_encsparse(c, f, idx, bidx); return 1;
      case BW_KARRAY:
        bw_arraybase(c->L, bidx, &bn);  /* a table: always */
        return encdeltaarray(c, f, idx, bidx, bn);
      default: break;
    }
  }
  bw_encvalue(c, f, idx, lua_type(c->L, idx));
  return 1;
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
      bw_encleaf(c, f, 0, LUA_TNONE);
      fr->index = 0;
      continue;
    }
    if (v > top + 2 * BATCH) {  /* the stack holds BATCH pairs at most */
      lua_settop(L, top);
      v = top + 1;
    }
    pushkey(c, f->name);
    vt = lua_rawget(L, idx);
    bt = bw_pushbasefield(c, f, bidx, hasb);
    if (vt == LUA_TNIL && !f->optional) vt = fielddefault(c, f, v);
    if (deltafixed(f))
      changed |= encdeltafixed(c, &run, f, v, vt, v + 1, bt);
    else if (vt == bt && vt != LUA_TNIL && rawsame(L, f, v, v + 1)
             && !(c->strict && vt == LUA_TTABLE))  /* strict walks it */
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
  endrecord(c, fr, t, idx);
  return changed;
}
