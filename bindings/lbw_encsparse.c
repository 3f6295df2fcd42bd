/*
** lbw_encsparse.c - the encode walk of sparse arrays: slots 1..max in mask,
** index or relative-index form, in full or against a baseline
** See LICENSE for copyright and terms.
*/

#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"

#include "lbw_tape.h"


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

/* Append to 'k' (from k[*m], up to k[cap - 1]) the integer keys in
** [1, n] of the table at 'idx'; returns how many keys it has, of any
** kind, a slot past 'cap' (not listed) not counted. */
static lua_Integer keysof (lua_State *L, int idx, lua_Integer n,
                           lua_Integer *k, size_t *m, size_t cap) {
  lua_Integer all = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (bw_slotof(L, -1, n) == 0) all++;
    else if (*m < cap) {
      all++;
      k[(*m)++] = lua_tointeger(L, -1);
    }
  }
  return all;
}

int bw_sparseslotsonly (lua_State *L, int idx, lua_Integer n) {
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (bw_slotof(L, -1, n) == 0) {
      lua_pop(L, 1);
      return 0;
    }
  }
  return 1;
}

int bw_sparsebase (lua_State *L, const bw_Field *f, int bidx) {
  if (bidx == 0 || !lua_istable(L, bidx)
      || !bw_sparseslotsonly(L, bidx, (lua_Integer)f->max))
    return 0;
  return bidx;
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
  size_t cap = 0, now = nkeys(L, a) + nkeys(L, b), i, j;
  lua_Integer *k = NULL;
  int tries;
  /* the list's allocation may run a finalizer that adds keys to a or b
  ** (nothing else runs Lua code from here): count again and make a
  ** longer list, a few times; keys past the last are left out, never
  ** written past it */
  for (tries = 0; tries < 4 && now > cap; tries++) {
    if (k != NULL) lua_pop(L, 1);
    cap = now;
    k = (lua_Integer *)lua_newuserdatauv(L, (cap > 0 ? cap : 1)
                                         * sizeof(lua_Integer), 0);
    now = nkeys(L, a) + nkeys(L, b);
  }
  if (k == NULL)
    k = (lua_Integer *)lua_newuserdatauv(L, sizeof(lua_Integer), 0);
  *m = 0;
  *akeys = a != 0 ? keysof(L, a, n, k, m, cap) : 0;
  if (b != 0) keysof(L, b, n, k, m, cap);
  qsort(k, *m, sizeof(*k), keyorder);
  for (i = j = 0; i < *m; i++)  /* each once */
    if (j == 0 || k[i] != k[j - 1]) k[j++] = k[i];
  *m = j;
  return k;
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

/* Where sent slot 'i' is, after sent slot 'prev' (0: none), in encoding
** 'enc'. */
static void slotpos (Ctx *c, const bw_Field *f, int enc, lua_Integer prev,
                     lua_Integer i) {
  if (enc == BW_SPMASK) writegap(c->w, (uint64_t)(i - prev - 1), 1);
  else if (enc == BW_SPINDEX)
    bw_writebits(c->w, (uint64_t)i - 1, SLOTBITS(f));
  else writerel(c, f, (uint64_t)prev, (uint64_t)i);
}

/* Sent slot 'i': slotpos, then encslot (against the baseline at 'bidx', if
** not 0: not compared again). */
static void sendslot (Ctx *c, const bw_Field *f, int idx, int bidx, int enc,
                      lua_Integer prev, lua_Integer i) {
  slotpos(c, f, enc, prev, i);
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

/* After the slots are compared: the keys checked ('keys' of the value's
** table, 'want' of them its slots), then the encoding of the 'count' sent
** slots (the cheapest when 'auto', the relative one costing 'relc' bits)
** written, and the index encoding's count. Returns the encoding. */
static int sparsehead (Ctx *c, const bw_Field *f, lua_Integer keys,
                       lua_Integer want, lua_Integer count, uint64_t relc) {
  int enc = f->encoding;
  uint64_t cost[3];
  if (keys != want)
    bw_encerror(c, "sparse keys must be integers in [1, %I]",
                (lua_Integer)f->max);
  cost[BW_SPRELATIVE] = relc;
  cost[BW_SPMASK] = (uint64_t)f->max;
  cost[BW_SPINDEX] = f->nbits + (uint64_t)count * SLOTBITS(f);
  if (enc == BW_SPAUTO) {
    enc = cost[BW_SPINDEX] < cost[BW_SPMASK] ? BW_SPINDEX : BW_SPMASK;
    if (cost[BW_SPRELATIVE] < cost[enc]) enc = BW_SPRELATIVE;
    bw_writebits(c->w, (uint64_t)enc, 2);
  }
  if (enc == BW_SPINDEX) bw_writebits(c->w, (uint64_t)count, f->nbits);
  return enc;
}

/* A sparse array: the sent slots of 1..max, in the cheapest encoding when
** 'auto'. Keys other than 1..max are refused. */
void bw_encsparse (Ctx *c, const bw_Field *f, int idx, int bidx) {
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer i, n = (lua_Integer)f->max, prev = 0, count = 0, keys = 0;
  lua_Integer present = 0, *list = NULL;
  uint64_t relc = 0, map[MAPSLOTS / 64];
  size_t k, m = 0;
  int enc, mapped;
  if (!lua_istable(L, idx)) bw_enctype(c, idx, "a table");
  bidx = bw_sparsebase(L, f, bidx);
  mapped = n <= MAPSLOTS;
  if (mapped) memset(map, 0, (size_t)(n + 63) / 64 * sizeof(map[0]));
  else list = bw_sparsekeys(L, idx, bidx, n, &m, &keys);  /* pushed */
  for (i = 1, k = 0; mapped ? i <= n : k < m; i++, k++) {
    int has, sent;
    if (!mapped) i = list[k];
    sent = slotsent(c, e, idx, bidx, i, &has);
    present += has;
    if (sent) {
      count++;
      relc += relcost(f, (uint64_t)prev, (uint64_t)i);
      prev = i;
      if (mapped) map[(i - 1) / 64] |= UINT64_C(1) << ((i - 1) % 64);
      else list[count - 1] = i;  /* the sent slots, in place */
    }
  }
  if (mapped) keys = (lua_Integer)nkeys(L, idx);
  enc = sparsehead(c, f, keys, bidx != 0 ? present : count, count,
                   relc + relcost(f, (uint64_t)prev, (uint64_t)n + 1));
  if (mapped) encmapped(c, f, idx, bidx, enc, map);
  else {
    enclisted(c, f, idx, bidx, enc, list, (size_t)count);
    lua_pop(L, 1);  /* the list */
  }
}


/* {===================== against a baseline's tape ===================== */
/* The walk of lbw_tapeenc.c over a sparse array (its bits are
** bw_encsparse's against a baseline table; its tape, lbw_tape.h's
** putslot).
** Pass 1 writes the value's tape and compares each element's with the
** baseline's: equal codes are equal values on the wire; IEEE floats
** compare their raws first, then their codes (ieeesame), in an element
** and in its records, arrays and sparse arrays alike. It
** raises nothing, so pass 2, which writes the sent slots in the encoding
** their number picks, raises where the walk over tables does. */

/* Per sent slot, 4 words of Tapes.slots: the slot, its flags, and the
** baseline element's bit and raw when it has one. */
enum { SHAD = 1, SHAS = 2, SBROKEN = 4 };

static void addslot (Ctx *c, TapeBuf *sl, lua_Integer i, unsigned flags,
                     uint64_t bip, uint64_t brp) {
  uint64_t *p = rawroom(c, sl, 4);
  p[0] = (uint64_t)i;
  p[1] = flags;
  p[2] = bip;
  p[3] = brp;
  sl->pos += 4;
}

static int samestruct (Walk *w, uint32_t t, int idx, int *same);
static int samevalue (Walk *w, const bw_Field *f, int v, int vt, int *same);

/* samevalue's IEEE float 'x' of field 'f' (its value of Lua type 'vt'):
** compared as tapefield compares it (ieeesame); the tape keeps the
** value's own code. */
static INLINE int sameieee (Walk *w, const bw_Field *f, int vt, double x,
                            int *same) {
  unsigned bits = IEEEBITS(f);
  if (!ieeesame(w, f, take(w, bits), vt, x)) *same = 0;
  w->rp++;
  if (vt != LUA_TNUMBER) return 0;
  put(w->c, w->out, ieeecode(f, x), bits);
  rawput(w->c, w->rout, rawof(x));
  return 1;
}

/* samevalue's fixed scalar at 'v' (of Lua type 'vt') of field 'f': one
** code, as bw_tapebuild writes it; a raw equal to the baseline's has its
** code. */
static INLINE int samefixed (Walk *w, const bw_Field *f, int v, int vt,
                             int *same) {
  unsigned bits = fixedbits(f);
  uint64_t raw = 0, code = 0, base = take(w, bits);
  int ok = fixedraw(w->c, f, v, vt, 0, &raw)
           && codeagainst(w, f, raw, base, &code);
  w->rp++;
  if (!ok) return 0;
  if (code != base) *same = 0;
  put(w->c, w->out, code, bits);
  rawput(w->c, w->rout, raw);
  return 1;
}

/* 1 if samevalue compares an array or a sparse array of 'f' element by
** element: its elements may hold IEEE floats or are fixed scalars,
** compared by raw first (any other's bits are compared whole). */
static INLINE int eachelement (const bw_Schema *S, const bw_Field *f) {
  int k;
  if (f->kind != BW_KARRAY && f->kind != BW_KSPARSE) return 0;
  k = S->fields[f->ref].kind;
  return k == BW_KFLOAT32 || k == BW_KFLOAT64 || k == BW_KSTRUCT
         || k == BW_KARRAY || k == BW_KSPARSE
         || fixedscalar(&S->fields[f->ref]);
}

/* samevalue's sparse array at 'v' (a table) of field 'f' (eachelement):
** its present slots, as bw_tapebuild writes them, each compared as
** samevalue compares it with the baseline's slot of the same index; a
** slot either side lacks is a difference. */
static int samesparse (Walk *w, const bw_Field *f, int v, int *same) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer i, bi, n = (lua_Integer)f->max, *list = NULL, any;
  unsigned ibits = SLOTBITS(f);
  int top = lua_gettop(L), ok = 1;
  size_t k, m = 0;
  if (!lua_checkstack(L, 4)) luaL_error(L, "stack overflow");
  if (n > MAPSLOTS) list = bw_sparsekeys(L, v, 0, n, &m, &any);  /* pushed */
  bi = nextslot(w, ibits, n);
  for (i = 1, k = 0; ok && (list == NULL ? i <= n : k < m); i++, k++) {
    int et;
    if (list != NULL) i = list[k];
    for (; bi < i; bi = nextslot(w, ibits, n)) {  /* the baseline's only */
      *same = 0;
      bw_tapeskip(w, e);
    }
    et = lua_rawgeti(L, v, i);
    if (et != LUA_TNIL) putslot(c, w->out, i, ibits);
    if (bi == i) {
      if (et != LUA_TNIL) ok = samevalue(w, e, lua_gettop(L), et, same);
      else {
        *same = 0;
        bw_tapeskip(w, e);
      }
      bi = nextslot(w, ibits, n);
    }
    else if (et != LUA_TNIL) {  /* the value's only */
      *same = 0;
      ok = bw_tapebuild(c, w->out, w->rout, e, lua_gettop(L), et);
    }
    lua_pop(L, 1);
  }
  for (; ok && bi <= n; bi = nextslot(w, ibits, n)) {
    *same = 0;
    bw_tapeskip(w, e);
  }
  lua_settop(L, top);
  if (*same && !bw_sparseslotsonly(L, v, n)) *same = 0;  /* pass 2 raises */
  if (ok) putslotsend(c, w->out);
  return ok;
}

/* samevalue's array at 'v' (a table) of field 'f' (eachelement): its
** count, then each element as samevalue compares it; built whole when the
** counts differ. */
static int samearray (Walk *w, const bw_Field *f, int v, int *same) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  uint64_t bip = w->ip;
  lua_Integer i, n = (lua_Integer)lua_rawlen(L, v);
  int ok = 1;
  if ((uint64_t)n != take(w, f->nbits) + (uint64_t)f->min) {
    *same = 0;
    w->ip = bip;
    bw_tapeskip(w, f);
    return bw_tapebuild(c, w->out, w->rout, f, v, LUA_TTABLE);
  }
  if (!lenfits(c, f, (size_t)n, "count", 0)) return 0;
  put(c, w->out, (uint64_t)n - (uint64_t)f->min, f->nbits);
  if (e->kind == BW_KFLOAT32 || e->kind == BW_KFLOAT64) {  /* scalars: no
                                                             samevalue call
                                                             an element */
    for (i = 1; ok && i <= n; i++) {
      int et = lua_rawgeti(L, v, i);
      ok = sameieee(w, e, et, (double)lua_tonumber(L, -1), same);
      lua_pop(L, 1);
    }
    return ok;
  }
  if (fixedscalar(e)) {
    for (i = 1; ok && i <= n; i++) {
      int et = lua_rawgeti(L, v, i);
      ok = et != LUA_TNIL && samefixed(w, e, lua_gettop(L), et, same);
      lua_pop(L, 1);
    }
    return ok;
  }
  for (i = 1; ok && i <= n; i++) {
    int et = lua_rawgeti(L, v, i);
    ok = et != LUA_TNIL && samevalue(w, e, lua_gettop(L), et, same);
    lua_pop(L, 1);
  }
  return ok;
}

/* Pass 1's value at 'v' (of Lua type 'vt', not nil) of field 'f': its
** tape written as bw_tapebuild writes it, compared with the baseline's at
** w->ip, which it steps over. Returns 0 when it is no value of the field
** (its tape unfinished); else 1, '*same' cleared if a code differs. A
** record, and an array or sparse array of eachelement, is compared part
** by part ('rec'). */
static int samevalue (Walk *w, const bw_Field *f, int v, int vt, int *same) {
  TapeBuf *out = w->out;
  uint64_t p0 = out->pos, bip = w->ip, brp = w->rp;
  int rec = f->kind == BW_KSTRUCT || eachelement(w->c->S, f), ok;
  if (fixedscalar(f)) return samefixed(w, f, v, vt, same);
  if (f->kind == BW_KFLOAT32 || f->kind == BW_KFLOAT64)
    return sameieee(w, f, vt, (double)lua_tonumber(w->c->L, v), same);
  if (f->kind == BW_KSTRING || f->kind == BW_KBYTES) {  /* its bytes
                                                          compared in place */
    size_t len = 0, blen = (size_t)(take(w, f->nbits) + (uint64_t)f->min);
    const char *s = vt == LUA_TSTRING ? lua_tolstring(w->c->L, v, &len) : NULL;
    ok = s != NULL && bytesfit(w->c, f, s, len);
    if (ok && !(len == blen && bw_tapesamebytes(w->in, w->ip, s, len)))
      *same = 0;
    w->ip += (uint64_t)blen * 8;
    if (ok) bw_tapeputstr(w->c, out, f, s, len);
    return ok;
  }
  if (f->kind == BW_KQUAT) {  /* compared as tapefield compares it */
    double x[4];
    uint32_t q[4], bq[4];
    int k;
    takequat(w, f, bq);
    if (!quatsame(w, f, v, bq, q, x)) {
      *same = 0;
      ok = bw_quatvalue(w->c, f, v, 0, q);
    }
    else ok = 1;
    if (ok) {
      putquat(w->c, out, f, q);
      for (k = 0; k < 4; k++) rawput(w->c, w->rout, rawof(x[k]));
      w->rp += 4;
      return 1;
    }
  }
  else if (rec) ok = vt == LUA_TTABLE
                     && (f->kind == BW_KSTRUCT ? samestruct(w, f->ref, v, same)
                         : f->kind == BW_KARRAY ? samearray(w, f, v, same)
                         : samesparse(w, f, v, same));
  else ok = bw_tapebuild(w->c, out, w->rout, f, v, vt);
  if (rec && ok) return 1;
  w->ip = bip;
  w->rp = brp;
  bw_tapeskip(w, f);
  if (ok && !(w->ip - bip == out->pos - p0
              && bw_tapesamebits(w->in, bip, out->s, p0, w->ip - bip)))
    *same = 0;
  return ok;
}

/* A field of samestruct's record at 'idx' (not a fused run). */
static int samefield (Walk *w, const bw_Field *f, int idx, int *same) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  int top = lua_gettop(L), vt, ok = 1, had = 1;
  pushkey(c, f->name);
  vt = lua_rawget(L, idx);
  if (f->optional) {
    had = (int)take(w, 1);
    put(c, w->out, vt != LUA_TNIL, 1);
    if (had != (vt != LUA_TNIL)) *same = 0;
  }
  else if (vt == LUA_TNIL) {  /* missing: its default */
    if (!f->hasdefault) ok = 0;
    else {
      bw_pushdefault(c, f);
      vt = lua_type(L, -1);
    }
  }
  if (ok && vt != LUA_TNIL)
    ok = had ? samevalue(w, f, lua_gettop(L), vt, same)
             : bw_tapebuild(c, w->out, w->rout, f, lua_gettop(L), vt);
  else if (ok && had) bw_tapeskip(w, f);  /* an optional gone */
  lua_settop(L, top);
  return ok;
}

/* samevalue's record at 'idx' of type 't' (tapeok). A fused run whose
** raws are the baseline's has its codes, as in the walk's taperun. */
static int samestruct (Walk *w, uint32_t t, int idx, int *same) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first], *end = f + ty->count;
  int top = lua_gettop(L);
  uint64_t raw[MAXFUSE];
  for (; f < end; f++) {
    unsigned k = f->fuse, j, sh = 0;
    uint64_t acc = 0, base, diff = 0, code;
    if (f->name == BW_NONE  /* align, check: on the wire only */
        || (ty->versioned && !bw_fieldpresent(f, c->version)))
      continue;
    if (k <= 1) {
      if (!samefield(w, f, idx, same)) return 0;
      continue;
    }
    if (!lua_checkstack(L, (int)k)) luaL_error(L, "stack overflow");
    for (j = 0; j < k; j++) {  /* fixed scalars, unversioned */
      int tt;
      pushkey(c, f[j].name);
      tt = lua_rawget(L, idx);
      if (tt == LUA_TNIL || !fixedraw(c, &f[j], top + 1 + (int)j, tt, 0,
                                      &raw[j]))
        break;
    }
    lua_settop(L, top);
    if (j < k) {  /* a value missing or refused: field by field */
      for (j = 0; j < k; j++)
        if (!samefield(w, &f[j], idx, same)) return 0;
      f += k - 1;
      continue;
    }
    if (w->rin != NULL)
      for (j = 0; j < k; j++) diff |= raw[j] ^ w->rin[w->rp + j];
    base = take(w, f->fusebits);
    if (w->rin == NULL || diff != 0) {
      for (j = 0; j < k; j++) {
        if (!rawcode(c, &f[j], raw[j], 0, &code)) return 0;
        acc |= code << sh;
        sh += fixedbits(&f[j]);
      }
    }
    else acc = base;  /* the baseline's raws: its codes */
    put(c, w->out, acc, f->fusebits);
    if (w->rout != NULL) {
      memcpy(rawroom(c, w->rout, k), raw, k * sizeof(raw[0]));
      w->rout->pos += k;
    }
    w->rp += k;
    if (acc != base) *same = 0;
    f += k - 1;
  }
  return 1;
}

static int tapesparse (Walk *w, uint64_t *r, const bw_Field *f, int v,
                       int btab, int bit);

/* Pass 2's present element at 'v' (of Lua type 'vt') of slot entry 'p':
** as encslot writes it against a baseline slot. A record, array or sparse
** array the baseline has is a delta against its tape; its tape goes to a
** scratch buffer (pass 1 wrote the value's). */
static void tapeslot (Walk *w, const bw_Field *e, int v, int vt,
                      const uint64_t *p, int btab) {
  Ctx *c = w->c;
  Tapes *tp = c->tapes;
  TapeBuf *out = w->out, *rout = w->rout;
  uint64_t run = 0;
  int bidx = 0;
  if ((p[1] & SHAD) && e->relative) {  /* a difference from the baseline
                                          slot's code */
    uint32_t bq[4] = { 0, 0, 0, 0 };
    uint64_t base = 0;
    w->ip = p[2];
    if (e->kind == BW_KQUAT) takequat(w, e, bq);
    else base = take(w, fixedbits(e));
    bw_sendrelative(c, e, v, base, bq);
    return;
  }
  if (!(p[1] & SHAD) || (e->kind != BW_KSTRUCT && e->kind != BW_KARRAY
                          && e->kind != BW_KSPARSE)) {
    bw_encvalue(c, e, v, vt);  /* whole */
    return;
  }
  if (vt != LUA_TTABLE) bw_enctype(c, v, "a table");
  if (btab && lua_rawgeti(c->L, btab, (lua_Integer)p[0]) == LUA_TTABLE
      && (e->kind != BW_KSTRUCT || (c->tapes->ok[e->ref] & TAPENESTS)))
    bidx = lua_gettop(c->L);  /* its records shared with the baseline's */
  if (out != &tp->sout) {  /* nested ones write on */
    tp->sout.pos = tp->srout.pos = 0;
    w->out = &tp->sout;
    if (rout != NULL) w->rout = &tp->srout;
  }
  w->ip = p[2];
  w->rp = p[3];
  if (e->kind == BW_KSTRUCT) bw_tapeencstruct(w, e->ref, v, bidx, &run);
  else if (e->kind == BW_KARRAY) bw_tapeencarray(w, e, v, bidx, &run);
  else tapesparse(w, &run, e, v, bidx, 0);
  runflush(c, &run);
  w->out = out;
  w->rout = rout;
  if (btab) lua_pop(c->L, 1);
}

int bw_tapeencsparse (Walk *w, uint64_t *r, const bw_Field *f, int v,
                      int vt, int btab) {
  if (vt != LUA_TTABLE) {  /* changed; then refused, as bw_encsparse does */
    runadd(w->c, r, f->optional ? 3 : 1, f->optional ? 2 : 1);
    runflush(w->c, r);
    bw_enctype(w->c, v, "a table");
  }
  if (w->c->strict) {  /* all of it, kept or sent, shared or not, before
                          its changed bit, as encdeltafield checks it */
    runflush(w->c, r);
    bw_strictvalue(w->c, f, v);
  }
  return tapesparse(w, r, f, v, btab, 1);
}

/* bw_tapeencsparse's sparse array at 'v' (a table), with its changed bit
** when 'bit'; without, as a slot's element is sent (bw_encsparse against
** the baseline slot: all of it, though no slot in it changed). */
static int tapesparse (Walk *w, uint64_t *r, const bw_Field *f, int v,
                       int btab, int bit) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  TapeBuf *sl = &c->tapes->slots;
  lua_Integer n = (lua_Integer)f->max, i = 0, bi, prev = 0, count = 0;
  lua_Integer keys = 0, present = 0, *list = NULL;
  unsigned ibits = SLOTBITS(f);
  uint64_t base = sl->pos, relc = 0, endip, endrp, k;
  size_t m = 0, j = 0, both = 0, probe = 0;
  int top = lua_gettop(L), enc, hits = 0;
  if (!lua_checkstack(L, 8)) bw_encerror(c, "stack overflow");
  if (n > MAPSLOTS) list = bw_sparsekeys(L, v, 0, n, &m, &keys);  /* pushed */
  bi = nextslot(w, ibits, n);
  for (;;) {  /* pass 1: the slots either side has, rising */
    uint64_t bip = w->ip, brp = w->rp;
    unsigned flags;
    int et, ok = 1, same = 1;
    if (list == NULL) i++;
    else i = j < m && list[j] < bi ? list[j] : bi;
    if (i > n) break;
    if (list != NULL && j < m && list[j] == i) j++;
    et = lua_rawgeti(L, v, i);
    flags = (et != LUA_TNIL ? SHAS : 0) | (bi == i ? SHAD : 0);
    if (flags == 0) {
      lua_pop(L, 1);
      continue;
    }
    if (flags & SHAS) {
      putslot(c, w->out, i, ibits);
      present++;
    }
    if (flags == (SHAS | SHAD) && btab && et == LUA_TTABLE && !c->strict
        && both++ >= probe) {  /* shared with the baseline: kept, as in
                                  tapearray (fresh ones, every PROBE-th) */
      int shared = lua_rawgeti(L, btab, i) == LUA_TTABLE
                   && lua_topointer(L, -1) == lua_topointer(L, -2);
      lua_pop(L, 1);
      hits |= shared;
      probe = hits ? both : both + PROBE - 1;
      if (shared) {
        Kept kept = { NONE, 0 };
        keepfrom(w, &kept);
        bw_tapeskip(w, e);
        keepbits(w, &kept);
        lua_pop(L, 1);
        bi = nextslot(w, ibits, n);
        continue;
      }
    }
    if (flags == (SHAS | SHAD)) {
      ok = samevalue(w, e, lua_gettop(L), et, &same);
    }
    else if (flags & SHAS)
      ok = bw_tapebuild(c, w->out, w->rout, e, lua_gettop(L), et);
    else bw_tapeskip(w, e);
    if (!ok) flags |= SBROKEN;  /* pass 2 raises on it */
    lua_pop(L, 1);
    if (flags & SHAD) bi = nextslot(w, ibits, n);
    if (flags == (SHAS | SHAD) && same) continue;  /* kept */
    addslot(c, sl, i, flags, bip, brp);
    count++;
    relc += relcost(f, (uint64_t)prev, (uint64_t)i);
    prev = i;
  }
  putslotsend(c, w->out);
  if (list == NULL) keys = (lua_Integer)nkeys(L, v);
  if (count == 0 && bit && keys == present) {  /* other keys: refused */
    runadd(c, r, 0, 1);
    lua_settop(L, top);
    return 0;
  }
  endip = w->ip;  /* pass 2: the sent slots */
  endrp = w->rp;
  if (bit) runadd(c, r, f->optional ? 3 : 1, f->optional ? 2 : 1);
  runflush(c, r);
  enc = sparsehead(c, f, keys, present, count,
                   relc + relcost(f, (uint64_t)prev, (uint64_t)n + 1));
  for (k = base, prev = 0; k < base + (uint64_t)count * 4; k += 4) {
    const uint64_t *p = sl->s + k;  /* again after each slot: it may grow */
    i = (lua_Integer)p[0];
    slotpos(c, f, enc, prev, i);
    pushframe(c, BW_NONE, i);
    bw_writebits(c->w, (p[1] & SHAS) != 0, 1);
    if (p[1] & SHAS) {
      int et = lua_rawgeti(L, v, i);
      tapeslot(w, e, lua_gettop(L), et, sl->s + k, btab);
      if (sl->s[k + 1] & SBROKEN) bw_encerror(c, "value changed while encoded");
      lua_pop(L, 1);
    }
    popframe(c);
    prev = i;
  }
  endslots(c, f, enc, prev);
  w->ip = endip;
  w->rp = endrp;
  sl->pos = base;
  lua_settop(L, top);
  return 1;
}

/* }========================================================== */
