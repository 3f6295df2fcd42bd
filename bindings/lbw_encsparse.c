/*
** lbw_encsparse.c - the encode walk of sparse arrays: slots 1..max in mask,
** index or relative-index form, in full or against a baseline
** See LICENSE for copyright and terms.
*/

#include <string.h>

#include "lauxlib.h"

#include "lbw_schema.h"


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

/* Is slot 'i' sent? Present, or with a baseline at 'bidx', different.
** '*present': the value has slot 'i'. */
static int slotsent (Ctx *c, const bw_Field *e, int idx, int bidx,
                     lua_Integer i, int *present) {
  lua_State *L = c->L;
  int sent;
  *present = lua_rawgeti(L, idx, i) != LUA_TNIL;
  if (bidx == 0) {
    lua_pop(L, 1);
    return *present;
  }
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
  int v, tt;
  pushframe(c, BW_NONE, i);
  tt = lua_rawgeti(L, idx, i);
  v = lua_gettop(L);
  if (bidx != 0) {
    int present = !lua_isnil(L, v);
    bw_writebits(c->w, (uint64_t)present, 1);
    lua_rawgeti(L, bidx, i);
    if (present) bw_encdeltavalue(c, e, v, v + 1);
    lua_pop(L, 1);
  }
  else if (e->kind == BW_KSTRUCT) bw_encstruct(c, e->ref, v);  /* most */
  else bw_encvalue(c, e, v, tt);
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

/* encsparse's slots from the map of the sent ones (slot i is bit i - 1):
** only those are fetched again, each by encslot (against the baseline at
** 'bidx', if not 0: not compared again). */
static void encmapped (Ctx *c, const bw_Field *f, int idx, int bidx,
                       int enc, const uint64_t *map) {
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer i, n = (lua_Integer)f->max, prev = 0, wd;
  unsigned ibits = bw_bitsrequired(0, (int64_t)n - 1);
  for (wd = 0; wd * 64 < n; wd++) {
    uint64_t m = map[wd];
    for (; m != 0; m &= m - 1) {
      i = wd * 64 + (lua_Integer)lowbit(m) + 1;
      if (enc == BW_SPMASK) writegap(c->w, (uint64_t)(i - prev - 1), 1);
      else if (enc == BW_SPINDEX) bw_writebits(c->w, (uint64_t)i - 1, ibits);
      else writerel(c, f, (uint64_t)prev, (uint64_t)i);
      prev = i;
      encslot(c, e, idx, bidx, i);
    }
  }
  if (enc == BW_SPMASK) writegap(c->w, (uint64_t)(n - prev), 0);
  else if (enc == BW_SPRELATIVE)
    writerel(c, f, (uint64_t)prev, (uint64_t)n + 1);
}

/* A sparse array: the sent slots of 1..max, in the cheapest encoding when
** 'auto'. Keys other than 1..max are refused. */
void bw_encsparse (Ctx *c, const bw_Field *f, int idx, int bidx) {
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer i, n = (lua_Integer)f->max, prev = 0, count = 0, keys = 0;
  lua_Integer present = 0;
  unsigned ibits = bw_bitsrequired(0, (int64_t)n - 1);
  uint64_t cost[3], map[MAPSLOTS / 64];
  int enc = f->encoding, mapped;
  if (!lua_istable(L, idx)) bw_enctype(c, idx, "a table");
  if (bidx != 0 && !lua_istable(L, bidx)) bidx = 0;
  mapped = n <= MAPSLOTS;
  if (mapped) memset(map, 0, (size_t)(n + 63) / 64 * sizeof(map[0]));
  cost[BW_SPRELATIVE] = 0;
  for (i = 1; i <= n; i++) {
    int has;
    int sent = slotsent(c, e, idx, bidx, i, &has);
    present += has;
    if (sent) {
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
    encmapped(c, f, idx, bidx, enc, map);
    return;
  }
  prev = 0;
  for (i = 1; i <= n; i++) {
    int sent, has;
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
    sent = slotsent(c, e, idx, bidx, i, &has);
    if (enc == BW_SPMASK) bw_writebits(c->w, (uint64_t)sent, 1);
    if (!sent) continue;
    if (enc == BW_SPINDEX) bw_writebits(c->w, (uint64_t)i - 1, ibits);
    else if (enc == BW_SPRELATIVE) writerel(c, f, (uint64_t)prev, (uint64_t)i);
    encslot(c, e, idx, bidx, i);
    prev = i;
  }
  if (enc == BW_SPRELATIVE) writerel(c, f, (uint64_t)prev, (uint64_t)n + 1);
}
