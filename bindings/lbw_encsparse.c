/*
** lbw_encsparse.c - the encode walk of sparse arrays: slots 1..max in mask,
** index or relative-index form, in full or against a baseline
** See LICENSE for copyright and terms.
*/

#include <stdlib.h>
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

static int keyorder (const void *a, const void *b) {
  lua_Integer x = *(const lua_Integer *)a, y = *(const lua_Integer *)b;
  return (x > y) - (x < y);
}

/* Append to 'k' (from k[*m]) the integer keys in [1, n] of the table at
** 'idx'; returns how many keys it has, of any kind. */
static lua_Integer keysof (lua_State *L, int idx, lua_Integer n,
                           lua_Integer *k, size_t *m) {
  lua_Integer all = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    all++;
    if (lua_isinteger(L, -1)) {
      lua_Integer i = lua_tointeger(L, -1);
      if (i >= 1 && i <= n) k[(*m)++] = i;
    }
  }
  return all;
}

/* Count the keys of the table at 'idx' (0: none there). */
static size_t nkeys (lua_State *L, int idx) {
  size_t m = 0;
  if (idx == 0) return 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    m++;
  }
  return m;
}

lua_Integer *bw_sparsekeys (lua_State *L, int a, int b, lua_Integer n,
                            size_t *m, lua_Integer *akeys) {
  size_t cap = nkeys(L, a) + nkeys(L, b), i, j;
  lua_Integer *k = (lua_Integer *)lua_newuserdatauv(L, (cap > 0 ? cap : 1)
                                                    * sizeof(lua_Integer), 0);
  *m = 0;
  *akeys = a != 0 ? keysof(L, a, n, k, m) : 0;
  if (b != 0) keysof(L, b, n, k, m);
  qsort(k, *m, sizeof(*k), keyorder);
  for (i = j = 0; i < *m; i++)  /* each once */
    if (j == 0 || k[i] != k[j - 1]) k[j++] = k[i];
  *m = j;
  return k;
}

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
    if (w->status != BW_OK) return;  /* full: the rest would fail too */
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

/* Sent slot 'i' after sent slot 'prev' (0: none): where it is, in
** encoding 'enc', then encslot (against the baseline at 'bidx', if not 0:
** not compared again). */
static void sendslot (Ctx *c, const bw_Field *f, int idx, int bidx, int enc,
                      lua_Integer prev, lua_Integer i) {
  if (enc == BW_SPMASK) writegap(c->w, (uint64_t)(i - prev - 1), 1);
  else if (enc == BW_SPINDEX)
    bw_writebits(c->w, (uint64_t)i - 1,
                 bw_bitsrequired(0, (int64_t)f->max - 1));
  else writerel(c, f, (uint64_t)prev, (uint64_t)i);
  encslot(c, &c->S->fields[f->ref], idx, bidx, i);
}

/* The end of the slots, after sent slot 'prev'. */
static void endslots (Ctx *c, const bw_Field *f, int enc, lua_Integer prev) {
  if (enc == BW_SPMASK)
    writegap(c->w, (uint64_t)((lua_Integer)f->max - prev), 0);
  else if (enc == BW_SPRELATIVE)
    writerel(c, f, (uint64_t)prev, (uint64_t)f->max + 1);
}

/* encsparse's slots from the map of the sent ones (slot i is bit i - 1),
** or from the list of them (a longer array): only those are fetched
** again. */
static void encmapped (Ctx *c, const bw_Field *f, int idx, int bidx,
                       int enc, const uint64_t *map) {
  lua_Integer i, n = (lua_Integer)f->max, prev = 0, wd;
  for (wd = 0; wd * 64 < n; wd++) {
    uint64_t m = map[wd];
    for (; m != 0; m &= m - 1) {
      i = wd * 64 + (lua_Integer)lowbit(m) + 1;
      sendslot(c, f, idx, bidx, enc, prev, i);
      prev = i;
    }
  }
  endslots(c, f, enc, prev);
}

static void enclisted (Ctx *c, const bw_Field *f, int idx, int bidx,
                       int enc, const lua_Integer *sent, size_t count) {
  lua_Integer prev = 0;
  size_t k;
  for (k = 0; k < count; k++) {
    sendslot(c, f, idx, bidx, enc, prev, sent[k]);
    prev = sent[k];
  }
  endslots(c, f, enc, prev);
}

/* A sparse array: the sent slots of 1..max, in the cheapest encoding when
** 'auto'. Keys other than 1..max are refused. */
void bw_encsparse (Ctx *c, const bw_Field *f, int idx, int bidx) {
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer i, n = (lua_Integer)f->max, prev = 0, count = 0, keys = 0;
  lua_Integer present = 0, *list = NULL;
  unsigned ibits = bw_bitsrequired(0, (int64_t)n - 1);
  uint64_t cost[3], map[MAPSLOTS / 64];
  size_t k, m = 0;
  int enc = f->encoding, mapped;
  if (!lua_istable(L, idx)) bw_enctype(c, idx, "a table");
  if (bidx != 0 && !lua_istable(L, bidx)) bidx = 0;
  mapped = n <= MAPSLOTS;
  if (mapped) memset(map, 0, (size_t)(n + 63) / 64 * sizeof(map[0]));
  else list = bw_sparsekeys(L, idx, bidx, n, &m, &keys);  /* pushed */
  cost[BW_SPRELATIVE] = 0;
  for (i = 1, k = 0; mapped ? i <= n : k < m; i++, k++) {
    int has, sent;
    if (!mapped) i = list[k];
    sent = slotsent(c, e, idx, bidx, i, &has);
    present += has;
    if (sent) {
      count++;
      cost[BW_SPRELATIVE] += relcost(f, (uint64_t)prev, (uint64_t)i);
      prev = i;
      if (mapped) map[(i - 1) / 64] |= UINT64_C(1) << ((i - 1) % 64);
      else list[count - 1] = i;  /* the sent slots, in place */
    }
  }
  cost[BW_SPRELATIVE] += relcost(f, (uint64_t)prev, (uint64_t)n + 1);
  if (mapped) {
    lua_pushnil(L);
    while (lua_next(L, idx)) {
      keys++;
      lua_pop(L, 1);
    }
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
  if (mapped) encmapped(c, f, idx, bidx, enc, map);
  else {
    enclisted(c, f, idx, bidx, enc, list, (size_t)count);
    lua_pop(L, 1);  /* the list */
  }
}
