/*
** lbw_decode.c - the decode walk: bits to Lua tables, fresh or into old ones
** See LICENSE for copyright and terms.
*/

#include <inttypes.h>
#include <stdint.h>

#include "lbw_decode.h"


/* {===================== decode ===================== */

/* Kinds whose old table a decode into refills. bw_decvalue and bw_decstruct
** return 0 on failure, 1 when they pushed the value, and 2 when they
** refilled the table at 'into' in place and pushed nothing: no store back. */
#define REFILLS(k)  ((k) == BW_KSTRUCT || (k) == BW_KARRAY \
                     || (k) == BW_KSPARSE || (k) == BW_KQUAT)

int bw_decvaluesfail (Ctx *c) {
  return bw_decsay(c, BW_ERANGE, c->r.pos, W_VALUES, NULL, NULL, NULL);
}

/* The offset 'u' read at 'start' is past f's range: say what it was, the
** value it makes exactly (past 2^63 - 1 perhaps). */
int bw_rangefail (Ctx *c, const bw_Field *f, bw_Word what,
                  uint64_t u, uint64_t start) {
  char v[BW_NUMTEXT], lo[BW_NUMTEXT], hi[BW_NUMTEXT];
  return bw_decsay(c, BW_ERANGE, start, what, bw_sumtext(v, f->min, u),
                   bw_i64text(lo, f->min), bw_i64text(hi, f->max));
}

int bw_needfail (Ctx *c, uint64_t start, int64_t n, uint64_t need) {
  char t1[BW_NUMTEXT], t2[BW_NUMTEXT], t3[BW_NUMTEXT];
  return bw_decsay(c, BW_ETRUNC, start, W_NEED, bw_i64text(t1, n),
                   bw_u64text(t2, need),
                   bw_u64text(t3, bw_bitsremaining(&c->r)));
}

/* Read an n-bit offset and check it against [min, max]; '*v' gets min +
** offset. 'what' names the quantity for the message. */
int bw_readrange (Ctx *c, const bw_Field *f, bw_Word what,
                  int64_t *v) {
  uint64_t start = c->r.pos;
  uint64_t u = bw_readbits(&c->r, f->nbits);
  if (c->r.status != BW_OK) return bw_readfail(c);
  if (u > (uint64_t)f->max - (uint64_t)f->min)
    return bw_rangefail(c, f, what, u, start);
  *v = (int64_t)((uint64_t)f->min + u <= (uint64_t)INT64_MAX
                 ? (int64_t)((uint64_t)f->min + u)
                 : -(int64_t)(~((uint64_t)f->min + u)) - 1);
  return 1;
}

/* Decode slot 'i' of a sparse array into the table at 't'. Against a
** baseline 'bidx': a presence bit, then a delta when the baseline has a
** record there. */
static int decslot (Ctx *c, const bw_Field *e, int t, int reuse, int bidx,
                    lua_Integer i) {
  int old = 0;
  if (bidx == 0 && !bw_decspend(c, 1)) return 0;
  pushframe(c, BW_NONE, i);
  if (bidx != 0) {
    uint64_t present = bw_readbits(&c->r, 1);
    if (c->r.status != BW_OK) return bw_readfail(c);
    if (!present) lua_pushnil(c->L);  /* removed: no slot made */
    else {
      if (!bw_decspend(c, 1)) return 0;
      int ok;
      lua_rawgeti(c->L, bidx, i);
      ok = bw_decdeltavalue(c, e, lua_gettop(c->L));
      if (!ok) return 0;
      lua_remove(c->L, -2);
    }
  }
  else {
    int ok;
    if (reuse && REFILLS(e->kind)
        && lua_rawgeti(c->L, t, i) == LUA_TTABLE)
      old = lua_gettop(c->L);
    ok = e->kind == BW_KSTRUCT ? bw_decstruct(c, e->ref, old)
                               : bw_decvalue(c, e, old);
    if (!ok) return 0;
    if (ok == 2) {  /* refilled in place */
      lua_settop(c->L, old - 1);
      popframe(c);
      return 1;
    }
  }
  lua_rawseti(c->L, t, i);
  if (reuse && REFILLS(e->kind)) lua_pop(c->L, 1);  /* the old value */
  popframe(c);
  return 1;
}

/* Clear slot 'i' of a reused sparse table, if it has one. */
static void clearslot (Ctx *c, int t, lua_Integer i) {
  lua_State *L = c->L;
  int type = lua_rawgeti(L, t, i);
  bw_droptop(c);
  if (type == LUA_TNIL) return;
  lua_pushnil(L);
  lua_rawseti(L, t, i);
}

/* The old slots of a reused sparse table before slot 'i', the next one
** sent (after 'prev'): cleared one by one, or in a long array (one with a
** list of its old keys, 'old') its old keys from the cursor old->k on, so
** the work is the table's, not the array's length. */
typedef struct Old { const lua_Integer *keys; size_t n, k; } Old;

static void clearbefore (Ctx *c, int t, Old *old, lua_Integer prev,
                         lua_Integer i) {
  if (old->keys == NULL) {
    for (prev++; prev < i; prev++) clearslot(c, t, prev);
    return;
  }
  for (; old->k < old->n && old->keys[old->k] < i; old->k++)
    clearslot(c, t, old->keys[old->k]);
  if (old->k < old->n && old->keys[old->k] == i) old->k++;  /* refilled */
}

int bw_sparsestart (Ctx *c, const bw_Field *f, SparseIn *in,
                    uint64_t slotmin) {
  bw_Reader *r = &c->r;
  uint64_t start = r->pos;
  in->f = f;
  in->enc = f->encoding;
  in->n = (lua_Integer)f->max;
  in->prev = 0;
  in->count = -1;  /* the index encoding's, read with its first slot */
  in->ibits = SLOTBITS(f);
  in->slotmin = slotmin;
  if (in->enc == BW_SPAUTO) {
    in->enc = (int)bw_readbits(r, 2);
    if (r->status != BW_OK) return bw_readfail(c);
    if (in->enc == BW_SPAUTO)
      return bw_decsay(c, BW_ERANGE, start, W_ENCODING, "3", NULL, NULL);
  }
  return 1;
}

/* bw_sparsenext, inline in bw_decsparse's loop (a call a slot costs the
** full decode of a long mask) */
static INLINE int sparsenext (Ctx *c, SparseIn *in, lua_Integer *slot) {
  bw_Reader *r = &c->r;
  const bw_Field *f = in->f;
  lua_Integer n = in->n, i;
  uint64_t start = r->pos;
  if (in->enc == BW_SPMASK) {
    for (i = in->prev + 1; i <= n; i++) {
      uint64_t present = bw_readbits(r, 1);
      if (r->status != BW_OK) return bw_readfail(c) - 1;
      if (present) break;
    }
    if (i > n) return 0;
  }
  else if (in->enc == BW_SPINDEX) {
    if (in->count < 0) {
      in->count = (lua_Integer)bw_readbits(r, f->nbits);
      if (r->status != BW_OK) return bw_readfail(c) - 1;
      if (in->count > n)
        return bw_decsayi(c, BW_ERANGE, start, W_SLOTS, in->count, n, 0) - 1;
      /* a slot costs its index and its value, or against a baseline at
      ** least its index and a presence bit */
      if (in->ibits + in->slotmin > 0 && (uint64_t)in->count
          > bw_bitsremaining(r) / (in->ibits + in->slotmin))
        return bw_decsayi(c, BW_ETRUNC, start, W_SLOTBITS, in->count, 0, 0)
               - 1;
    }
    if (in->count == 0) return 0;
    in->count--;
    start = r->pos;
    i = (lua_Integer)bw_readbits(r, in->ibits) + 1;
    if (r->status != BW_OK) return bw_readfail(c) - 1;
    if (i <= in->prev || i > n)
      return bw_decsayi(c, BW_ERANGE, start, W_INDEX, i, in->prev + 1, n) - 1;
  }
  else {  /* relative: rising indices until the sentinel n + 1 */
    uint64_t cur;
    if (f->ntiers > 0)
      cur = (uint64_t)in->prev + bw_readtiered(r, 1, (uint64_t)n + 1,
                                               f->tierbits, f->ntiers);
    else
      cur = bw_readintrelative(r, (uint64_t)in->prev);
    if (r->status != BW_OK) return bw_readfail(c) - 1;
    if (cur == (uint64_t)n + 1) return 0;
    if (cur > (uint64_t)n)
      return bw_decsayi(c, BW_ERANGE, start, W_INDEXMAX, (int64_t)cur, n, 0)
             - 1;
    i = (lua_Integer)cur;
  }
  in->prev = *slot = i;
  return 1;
}

int bw_sparsenext (Ctx *c, SparseIn *in, lua_Integer *slot) {
  return sparsenext(c, in, slot);
}

/* Keep the baseline's slots listed in 'kept' (at 'k', up to 'end') in the
** table at 't': of a baseline not known to be this schema's own, each
** checked (and pushed as decoded) alone. */
static int keepslots (Ctx *c, const bw_Field *e, int t, int bidx,
                      const lua_Integer *kept, size_t k, size_t end) {
  for (; k < end; k++) {
    if (!bw_decspend(c, 1)) return 0;  /* a slot, as decslot spends */
    pushframe(c, BW_NONE, kept[k]);
    lua_rawgeti(c->L, bidx, kept[k]);
    if (!bw_keep(c, e, lua_gettop(c->L))) return 0;
    lua_rawseti(c->L, t, kept[k]);
    lua_pop(c->L, 1);
    popframe(c);
  }
  return 1;
}

/* A sparse array; against a baseline 'bidx' the result holds the
** baseline's slots and the sent slots change them: a copy of a baseline of
** this schema's own decode; of any other, the slots it keeps one by one,
** so the slots sent in their place are not checked. */
int bw_decsparse (Ctx *c, const bw_Field *f, int into, int bidx) {
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer n = (lua_Integer)f->max, prev = 0, i = 0, *kept = NULL;
  int t, got, reuse = into != 0 && claim(c, into), oldidx = 0, copy;
  size_t nkept = 0, k = 0;
  SparseIn in;
  Old old = { NULL, 0, 0 };
  copy = bidx != 0 && c->checked > 0;  /* the copy spends its own */
  if (!copy) bidx = bw_sparsebase(L, f, bidx);  /* as the encoder took it */
  if (!copy && !bw_decspend(c, 1)) return 0;
  if (!bw_sparsestart(c, f, &in, bidx != 0 ? 1 : e->minbits)) return 0;
  if (bidx != 0) reuse = 0;  /* a delta's result is a new table */
  if (copy) {
    if (!bw_pushkept(c, f, bidx)) return 0;
  }
  else if (!reuse) lua_createtable(L, 0, 0);
  t = reuse ? into : lua_gettop(L);
  if (bidx != 0 && !copy) {  /* the baseline's slots, rising */
    lua_Integer any;
    kept = bw_sparsekeys(L, bidx, 0, n, &nkept, &any);
    oldidx = lua_gettop(L);
  }
  if (reuse && in.enc != BW_SPMASK && n > MAPSLOTS) {  /* its old keys */
    lua_Integer any;
    old.keys = bw_sparsekeys(L, t, 0, n, &old.n, &any);
    oldidx = lua_gettop(L);
  }
  while ((got = sparsenext(c, &in, &i)) > 0) {
    if (reuse) clearbefore(c, t, &old, prev, i);
    if (kept != NULL) {
      size_t from = k;
      while (k < nkept && kept[k] < i) k++;
      if (!keepslots(c, e, t, bidx, kept, from, k)) return 0;
      if (k < nkept && kept[k] == i) k++;  /* sent: a delta of it */
    }
    if (!decslot(c, e, t, reuse, bidx, i)) return 0;
    prev = i;
  }
  if (got < 0) return 0;
  if (kept != NULL && !keepslots(c, e, t, bidx, kept, k, nkept)) return 0;
  if (reuse) clearbefore(c, t, &old, prev, n + 1);
  if (oldidx != 0) lua_remove(L, oldidx);
  return reuse ? 2 : 1;
}

/* A quaternion the reader refused: truncated, or a code no encoder makes
** (so every decoded quaternion encodes back to its own bits). */
int bw_quatfail (Ctx *c) {
  if (c->r.status != BW_ERANGE) return bw_readfail(c);
  return bw_decsay(c, BW_ERANGE, c->r.errpos, W_QUAT, NULL, NULL, NULL);
}

/* Push the quaternion of code 'q', or refill the table at 'into' with it
** (returns 2). */
int bw_pushquat (Ctx *c, const bw_Field *f, const uint32_t q[4],
                 int into) {
  double v[4];
  int i;
  if (!bw_decspendquat(c)) return 0;
  if (into != 0 && claim(c, into)) {
    bw_quatdecode(&f->q, q, v);
    for (i = 0; i < 4; i++) {
      lua_pushnumber(c->L, (lua_Number)v[i]);
      lua_rawseti(c->L, into, i + 1);
    }
    bw_trimquat(c->L, into);
    return 2;
  }
  bw_newquat(c, f, q);
  return 1;
}

void bw_newquat (Ctx *c, const bw_Field *f, const uint32_t q[4]) {
  double v[4];
  int i;
  bw_quatdecode(&f->q, q, v);
  lua_createtable(c->L, 4, 0);
  for (i = 0; i < 4; i++) {
    lua_pushnumber(c->L, (lua_Number)v[i]);
    lua_rawseti(c->L, -2, i + 1);
  }
}

static int decquat (Ctx *c, const bw_Field *f, int into) {
  uint32_t q[4];
  if (!bw_readquat(&c->r, &f->q, q)) return bw_quatfail(c);
  return bw_pushquat(c, f, q, into);
}

/* Push a scalar (a kind below BW_KARRAY). Not recursive, so the compiler
** can inline it into the loops over fields. Returns 0 on failure. */
int bw_decleaf (Ctx *c, const bw_Field *f) {
  lua_State *L = c->L;
  bw_Reader *r = &c->r;
  int64_t v;
  switch (f->kind) {
    case BW_KINT: case BW_KENUM: case BW_KUINT: case BW_KBOOL: case BW_KFLOAT:
    case BW_KANGLE: {
      uint64_t u;
      return bw_readfixed(c, f, &u);
    }
    case BW_KFLOAT32: {
      float x = bw_readfloat(r);
      if (r->status != BW_OK) return bw_readfail(c);
      lua_pushnumber(L, (lua_Number)x);
      return 1;
    }
    case BW_KFLOAT64: {
      double x = bw_readdouble(r);
      if (r->status != BW_OK) return bw_readfail(c);
      lua_pushnumber(L, (lua_Number)x);
      return 1;
    }
    case BW_KSTRING: case BW_KBYTES: {
      const uint8_t *p;
      uint64_t start;
      if (!bw_readrange(c, f, W_LENGTH, &v)) return 0;
      start = r->pos;
      p = bw_readbytes(r, (size_t)v);
      if (p == NULL) return bw_readfail(c);
      if (f->kind == BW_KSTRING && !bw_utf8valid((const char *)p, (size_t)v))
        return bw_decfail(c, BW_EUTF8, start, bw_strerror(BW_EUTF8));
      lua_pushlstring(L, (const char *)p, (size_t)v);
      return 1;
    }
    case BW_KALIGN:
      bw_readalign(r);
      return r->status == BW_OK ? 1 : bw_readfail(c);
    case BW_KCHECK:
      bw_readcheck(r, f->magic);
      return r->status == BW_OK ? 1 : bw_readfail(c);
    default:
      return bw_decfail(c, BW_ESCHEMA, r->pos, "field kind %d not supported",
                     (int)f->kind);
  }
}

/* Store elements i.. of the k fixed-width scalars 'e' of kind 'kind'
** (e->kind) packed in 'u', read at bit 'start', in the table at 't'. */
static INLINE int scalarrun (Ctx *c, const bw_Field *e, int kind, int t,
                             Frame *fr, int64_t i, unsigned k, uint64_t u,
                             uint64_t start) {
  lua_State *L = c->L;
  unsigned w = fixedbits(e);
  uint64_t mask = w < 64 ? (UINT64_C(1) << w) - 1 : ~UINT64_C(0);
  for (; k > 0; k--, i++) {
    fr->index = (lua_Integer)i;
    if (!pushfixedk(c, e, kind, u & mask, start)) return 0;
    lua_rawseti(L, t, (lua_Integer)i);
    if (w < 64) u >>= w;
    start += w;
  }
  return 1;
}

/* Elements 1..n of an array of fixed-width scalars 'e' into the table at
** 't': as many as fit in BW_FUSEBITS read at once, one by one near the end
** of the input, so a truncation still names the element that ran out. A
** loop per common kind, without the switch per element. */
static int decscalars (Ctx *c, const bw_Field *e, int t, int64_t n) {
  bw_Reader *r = &c->r;
  unsigned w = fixedbits(e), per = w > 0 && w <= BW_FUSEBITS ? BW_FUSEBITS / w : 1;
  Frame *fr;
  int64_t i = 1;
  pushframe(c, BW_NONE, 1);
  fr = &c->frames[c->nframes - 1 < MAXFRAMES ? c->nframes - 1 : MAXFRAMES - 1];
  while (i <= n) {
    unsigned k = n - i + 1 < (int64_t)per ? (unsigned)(n - i + 1) : per;
    uint64_t start = r->pos, u = bw_readbits(r, k * w);
    int ok;
    if (r->status != BW_OK) {
      if (k == 1) {
        fr->index = (lua_Integer)i;
        return bw_readfail(c);
      }
      r->status = BW_OK;  /* retry one at a time */
      r->pos = start;
      per = 1;
      continue;
    }
    switch (e->kind) {
      case BW_KBOOL: ok = scalarrun(c, e, BW_KBOOL, t, fr, i, k, u, start); break;
      case BW_KINT: ok = scalarrun(c, e, BW_KINT, t, fr, i, k, u, start); break;
      case BW_KUINT: ok = scalarrun(c, e, BW_KUINT, t, fr, i, k, u, start); break;
      default: ok = scalarrun(c, e, e->kind, t, fr, i, k, u, start); break;
    }
    if (!ok) return 0;
    i += k;
  }
  popframe(c);
  return 1;
}

void bw_trimlist (Ctx *c, int t, int64_t n, int64_t oldn) {
  lua_State *L = c->L;
  int64_t i;
  for (i = oldn; i > n; i--) {  /* an array that got shorter */
    lua_rawgeti(L, t, (lua_Integer)i);
    bw_droptop(c);
    lua_pushnil(L);
    lua_rawseti(L, t, (lua_Integer)i);
  }
  /* and elements past a hole '#' stopped at: n is its first border */
  for (i = (oldn > n ? oldn : n) + 1;
       lua_rawgeti(L, t, (lua_Integer)i) != LUA_TNIL; i++) {
    bw_droptop(c);
    lua_pushnil(L);
    lua_rawseti(L, t, (lua_Integer)i);
  }
  lua_pop(L, 1);
}

/* Push the value of field 'f'. 'into' is the stack index of the old value
** to reuse (tables only), or 0. Returns 0 on failure. */
int bw_decvalue (Ctx *c, const bw_Field *f, int into) {
  lua_State *L = c->L;
  bw_Reader *r = &c->r;
  switch (f->kind) {
    case BW_KARRAY: {
      const bw_Field *e = &c->S->fields[f->ref];
      int64_t i, n, oldn = 0;
      int t, reuse = into != 0 && claim(c, into);
      uint64_t start = r->pos;
      if (f->nbits == 0) n = f->min;  /* a fixed count: nothing sent */
      else if (!bw_readrange(c, f, W_COUNT, &n)) return 0;
      /* every element costs at least minbits: refuse before allocating */
      if (!bw_countfits((uint64_t)n, 0, e->minbits, bw_bitsremaining(r)))
        return bw_needfail(c, start, n, bw_countbits((uint64_t)n, 0,
                                                     e->minbits));
      if (!bw_decspendlist(c, n)) return 0;
      if (reuse) {
        t = into;
        oldn = (int64_t)lua_rawlen(L, into);
      }
      else {
        bw_newlist(L, n);
        t = lua_gettop(L);
      }
      if (fixedscalar(e)) {
        if (!decscalars(c, e, t, n)) return 0;
      }
      else {
        int refill = reuse && REFILLS(e->kind), top = lua_gettop(L);
        pushframe(c, BW_NONE, 1);
        for (i = 1; i <= n; i++) {
          c->frames[c->nframes - 1 < MAXFRAMES ? c->nframes - 1
                                               : MAXFRAMES - 1].index = i;
          /* an old element table is refilled in place: nothing to store,
          ** unless it was refilled already (aliased) and a fresh one made */
          if (refill && i <= oldn
              && lua_rawgeti(L, t, (lua_Integer)i) == LUA_TTABLE) {
            int ok = e->kind == BW_KSTRUCT ? bw_decstruct(c, e->ref, top + 1)
                                           : bw_decvalue(c, e, top + 1);
            if (!ok) return 0;
            if (ok == 1) lua_rawseti(L, t, (lua_Integer)i);
            lua_settop(L, top);
          }
          else {
            if (refill && i <= oldn) lua_pop(L, 1);
            if (!(e->kind < BW_KARRAY ? bw_decleaf(c, e)
                  : e->kind == BW_KSTRUCT ? bw_decstruct(c, e->ref, 0)
                  : bw_decvalue(c, e, 0)))
              return 0;
            lua_rawseti(L, t, (lua_Integer)i);
          }
        }
        popframe(c);
      }
      if (!reuse) return 1;
      bw_trimlist(c, t, n, oldn);
      return 2;
    }
    case BW_KSTRUCT:
      return bw_decstruct(c, f->ref, into);
    case BW_KSPARSE:
      return bw_decsparse(c, f, into, 0);
    case BW_KQUAT:
      return decquat(c, f, into);
    case BW_KTIERED: {
      uint64_t u = bw_readtiered(r, 0, (uint64_t)f->max - (uint64_t)f->min,
                                 f->tierbits, f->ntiers);
      if (r->status != BW_OK) return bw_readfail(c);
      u += (uint64_t)f->min;
      lua_pushinteger(L, (lua_Integer)(u <= (uint64_t)INT64_MAX ? (int64_t)u
                                       : -(int64_t)(~u) - 1));
      return 1;
    }
    default:
      return bw_decleaf(c, f);
  }
}

/* Push the fields [g, gend) of a fused run read as 'u' (at bit 'start'),
** each stored in the table at 'tbl', or left on the stack when 'tbl' is 0
** (a deferred record). */
static INLINE int pushrun (Ctx *c, Frame *fr, const bw_Field *g,
                           const bw_Field *gend, uint64_t u, uint64_t start,
                           int tbl) {
  for (; g < gend; g++) {
    unsigned w = fixedbits(g);
    setframe(fr, g);
    pushkey(c, g->name);
    if (!pushfixed(c, g, w < 64 ? u & ((UINT64_C(1) << w) - 1) : u, start))
      return 0;
    if (tbl) lua_rawset(c->L, tbl);
    u >>= w;  /* w <= BW_FUSEBITS < 64 */
    start += w;
  }
  return 1;
}

/* A record field whose type is one fused run, with the bits for it left:
** decoded here, without a call of bw_decstruct (nested Vec3s and the
** like). Returns 2 when it refilled the old table at key in place, else
** 1 with the key and a new table pushed; 0 on failure. */
static int decrunrecord (Ctx *c, const bw_Field *f, int tbl, int reuse) {
  lua_State *L = c->L;
  const bw_Type *st = &c->S->types[f->ref];
  const bw_Field *g = &c->S->fields[st->first];
  uint64_t start;
  int top = lua_gettop(L), inplace = 0;
  if (!bw_decspendrecord(c, st)) return 0;
  pushkey(c, f->name);
  if (reuse) {
    if (lua_rawget(L, tbl) == LUA_TTABLE && claim(c, top + 1)) inplace = 1;
    else {
      lua_pop(L, 1);
      pushkey(c, f->name);
    }
  }
  if (!inplace) lua_createtable(L, 0, (int)st->count);
  start = c->r.pos;
  if (!pushrun(c, enterframe(c), g, g + st->count,
               bw_readbits(&c->r, g->fusebits), start, lua_gettop(L)))
    return 0;
  c->nframes--;
  if (!inplace) return 1;
  lua_settop(L, top);
  return 2;
}

#define MAXSCALARS 64  /* fields of a record read before its table is made */

/* 0 if pushfixed would refuse the bits 'u' of field 'f'. */
static INLINE int fixedfits (const bw_Field *f, uint64_t u) {
  return f->kind == BW_KFLOAT ? u <= f->q.miv
       : (f->kind != BW_KINT && f->kind != BW_KENUM)
         || u <= (uint64_t)f->max - (uint64_t)f->min;
}

/* A record of at most MAXSCALARS fixed-width scalar fields, some
** optional: every field is read first, then the table is made with the
** exact count and filled, or the table at 'into' (0: none) refilled, an
** absent field cleared. Reads and range checks in bw_decstruct's order,
** so a failure is the one it would report, and the table is left as it
** was. */
static int decscalarrecord (Ctx *c, const bw_Type *ty, Frame *fr,
                            int into) {
  lua_State *L = c->L;
  const bw_Field *f = &c->S->fields[ty->first], *end = f + ty->count;
  uint64_t val[MAXSCALARS], at[MAXSCALARS];
  uint64_t present = 0;
  int k, n = 0, fresh = into == 0;
  for (k = 0; f < end; f++, k++) {
    if (f->optional) {
      uint64_t p = bw_readbits(&c->r, 1);
      if (c->r.status != BW_OK) {
        setframe(fr, f);
        return bw_readfail(c);
      }
      if (!p) continue;
    }
    at[k] = c->r.pos;
    val[k] = bw_readbits(&c->r, fixedbits(f));
    if (c->r.status != BW_OK) {
      setframe(fr, f);
      return bw_readfail(c);
    }
    if (!fixedfits(f, val[k])) {
      setframe(fr, f);
      return pushfixed(c, f, val[k], at[k]);
    }
    present |= UINT64_C(1) << k;
    n++;
  }
  if (fresh) {
    lua_createtable(L, 0, n);
    into = lua_gettop(L);
  }
  for (f -= ty->count, k = 0; f < end; f++, k++) {
    int has = (int)(present >> k & 1);
    if (!has && fresh) continue;
    setframe(fr, f);
    pushkey(c, f->name);
    if (!has) lua_pushnil(L);  /* refilled: what the value lacks cleared */
    else if (!pushfixed(c, f, val[k], at[k])) return 0;
    lua_rawset(L, into);
  }
  c->nframes--;
  return 1;
}

/* Store the key and value on top in the record (deferred: leave them). */
#define SETFIELD()  do { if (!defer) lua_rawset(L, tbl); } while (0)

/* bw_decstruct's general walk: 'reuse' when the table at 'into' is
** claimed. */
static int decrecord (Ctx *c, uint32_t t, int into, int reuse) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first];
  const bw_Field *end = f + ty->count;
  const bw_Field *slow = f;  /* fields before it are read one by one */
  int tbl, base, defer;
  Frame *fr;
  fr = enterframe(c);
  /* a record of optional scalars reads them first; any other fresh one is
  ** opened as bw_openrecord opens it */
  if (ty->noptional > 0 && ty->scalars && ty->count <= MAXSCALARS
      && lua_checkstack(L, 8)) {
    if (!decscalarrecord(c, ty, fr, reuse ? into : 0)) return 0;
    return reuse ? 2 : 1;
  }
  defer = 0;
  if (reuse) tbl = into;  /* refilled in place: nothing pushed */
  else defer = bw_openrecord(L, ty);
  base = lua_gettop(L);  /* the stack between fields */
  if (!reuse) tbl = base;
  for (; f < end; f++) {
    if (f->fuse > 1 && f >= slow) {  /* a run of fixed fields: one read */
      const bw_Field *g = f, *gend = f + f->fuse;
      uint64_t start = c->r.pos, u = bw_readbits(&c->r, f->fusebits);
      if (c->r.status != BW_OK) {  /* find the field that ran out */
        c->r.status = BW_OK;
        c->r.pos = start;
        slow = gend;
      }
      else {
        if (!pushrun(c, fr, g, gend, u, start, defer ? 0 : tbl)) return 0;
        f = gend - 1;
        continue;
      }
    }
    setframe(fr, f);
    if (ty->versioned && !bw_fieldpresent(f, c->version)) {
      if (reuse) bw_refillabsent(c, f, tbl, 1);
      else if (bw_pushabsent(c, f)) SETFIELD();
      continue;
    }
    if (f->name == BW_NONE) {  /* align or check */
      if (!bw_decleaf(c, f)) return 0;
      continue;
    }
    if (f->optional) {
      uint64_t present = bw_readbits(&c->r, 1);
      if (c->r.status != BW_OK) return bw_readfail(c);
      if (!present) {
        if (reuse) bw_refillabsent(c, f, tbl, 0);
        continue;
      }
    }
    if (f->kind == BW_KSTRUCT) {  /* one fused run, all there: inline */
      const bw_Type *st = &c->S->types[f->ref];
      const bw_Field *g = &c->S->fields[st->first];
      if (st->count > 1 && g->fuse == st->count
          && bw_bitsremaining(&c->r) >= g->fusebits) {
        int ok = decrunrecord(c, f, tbl, reuse);
        if (!ok) return 0;
        if (ok == 1) SETFIELD();
        continue;
      }
    }
    pushkey(c, f->name);
    if (fixedscalar(f)) {  /* inline: most fields */
      uint64_t start = c->r.pos, u = bw_readbits(&c->r, fixedbits(f));
      if (c->r.status != BW_OK) return bw_readfail(c);
      if (!pushfixed(c, f, u, start)) return 0;
    }
    else if (f->kind < BW_KARRAY) {
      if (!bw_decleaf(c, f)) return 0;
    }
    else if (reuse && REFILLS(f->kind)) {
      /* the key on top becomes the old value, at base + 1 */
      int ok = bw_decvalue(c, f, lua_rawget(L, tbl) == LUA_TTABLE ? base + 1 : 0);
      if (!ok) return 0;
      if (ok == 2) {  /* refilled in place: nothing to store */
        lua_settop(L, base);
        continue;
      }
      lua_replace(L, base + 1);  /* a fresh table: store it */
      pushkey(c, f->name);
      lua_insert(L, base + 1);
    }
    else if (!bw_decvalue(c, f, 0)) return 0;
    SETFIELD();
  }
  if (defer) bw_closerecord(L, base);
  c->nframes--;
  return reuse ? 2 : 1;
}

#undef SETFIELD

int bw_decstruct (Ctx *c, uint32_t t, int into) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  int reuse;
  if (!bw_decspendrecord(c, ty)) return 0;
  reuse = into != 0 && claim(c, into);
  if (ty->flat && c->plan->ops != NULL
      && bw_bitsremaining(&c->r) >= ty->minbits) {
    /* none optional: nothing deferred; no frame, bw_decflat cannot fail */
    if (!reuse) lua_createtable(L, 0, (int)ty->count);
    if (bw_decflat(c, t, reuse ? into : 0, reuse)) return reuse ? 2 : 1;
    if (!reuse) lua_pop(L, 1);  /* the general walk says what is wrong */
  }
  return decrecord(c, t, into, reuse);
}

/* }========================================================== */
