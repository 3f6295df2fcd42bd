/*
** lbw_tapedec.c - delta decode against a baseline's tape (lbw_tape.c): the
** values of lbw_decdelta.c's walk, what is kept pushed from the tape
** See LICENSE for copyright and terms.
*/

#include "lauxlib.h"

#include "lbw_tape.h"
#include "lbw_decode.h"

/* Kinds whose old table a delta decoded into refills (a delta's sparse
** array is a new table, as lbw_decode.c's bw_decsparse makes it). */
#define REFILLED(k)  ((k) == BW_KSTRUCT || (k) == BW_KARRAY || (k) == BW_KQUAT)

/* Push the kept code 'u' of fixed scalar 'f'. */
static INLINE void keptfixed (Ctx *c, const bw_Field *f, uint64_t u) {
  pushcode(c, f, f->kind, u);
}

/* Set elements 1..n of the table on top to the 'n' kept codes of fixed
** scalar 'e' at w->ip: one loop per kind, the kind a constant in each. */
#define KEPTRUN(kind) \
  for (i = 1; i <= n; i++) { \
    pushcode(c, e, kind, take(w, bits)); \
    lua_rawseti(L, -2, i); \
  } \
  return

static INLINE void keptrun (Walk *w, const bw_Field *e, lua_Integer n) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  unsigned bits = fixedbits(e);
  lua_Integer i;
  switch (e->kind) {
    case BW_KBOOL: KEPTRUN(BW_KBOOL);
    case BW_KINT: KEPTRUN(BW_KINT);
    case BW_KFLOAT: KEPTRUN(BW_KFLOAT);
    default: KEPTRUN(e->kind);
  }
}

#undef KEPTRUN

static int pushfrom (Walk *w, const bw_Field *f);

/* Push the kept string or bytes of 'f' at w->ip. Out of pushfrom, which
** recurses: its buffer would widen each level's stack frame. */
static NOINLINE void keptstring (Walk *w, const bw_Field *f) {
  lua_State *L = w->c->L;
  size_t len = (size_t)(take(w, f->nbits) + (uint64_t)f->min), k;
  char s[64];
  char *p = s;
  luaL_Buffer B;
  if (len > sizeof(s)) p = luaL_buffinitsize(L, &B, len);
  for (k = 0; k + 8 <= len; k += 8) unchunk(p + k, take(w, 64), 8);
  if (k < len) unchunk(p + k, take(w, (unsigned)(len - k) * 8), len - k);
  if (p == s) lua_pushlstring(L, s, len);
  else luaL_pushresultsize(&B, len);
}

/* A delta decoded into a table refills it (below): 'had' and 'old' as
** tapedecvalue takes them. */
static int keptinto (Walk *w, const bw_Field *f, int had, int old);

/* A value filled in: pushed (1), or the table at 'old' (0: none) refilled
** in place (2); 0 with the failure. 'had': the baseline has one. */
typedef int (*Fill) (Walk *w, const bw_Field *f, int had, int old);

/* Field 'f' of the table at 'tbl', its key on top of the stack, by
** 'fill' (its old value the one refilled). */
static int intofield (Walk *w, const bw_Field *f, int tbl, Fill fill,
                      int had) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  int top = lua_gettop(L), ok;
  if (lua_rawget(L, tbl) != LUA_TTABLE) {
    lua_pop(L, 1);
    pushkey(c, f->name);
    if (!fill(w, f, had, 0)) return 0;
    lua_rawset(L, tbl);
    return 1;
  }
  if ((ok = fill(w, f, had, top)) == 0) return 0;
  if (ok == 1) {  /* a new one: stored under the key */
    lua_replace(L, top);
    pushkey(c, f->name);
    lua_insert(L, top);
    lua_rawset(L, tbl);
  }
  else lua_settop(L, top - 1);
  return 1;
}

/* keptrecord's modes: into a new table on top; onto the stack above the
** nil bw_openrecord pushed, then the table made; into an old table,
** refilled (a delta decoded into it). */
enum { KEPTNEW, KEPTDEFER, KEPTINTO };

/* The fields of a kept record of type 'ty' at w->ip by 'mode' (a constant
** in each call: three loops from one); KEPTINTO's table is at 'tbl'.
** Returns 0 when max_values runs out. */
static INLINE int keptrecord (Walk *w, const bw_Type *ty, int mode, int tbl) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  const bw_Field *g = &c->S->fields[ty->first], *end = g + ty->count;
  int defer = mode == KEPTDEFER;
  if (mode != KEPTINTO) tbl = lua_gettop(L);
  for (; g < end; g++) {
    if (g->name == BW_NONE) continue;  /* align, check: no value */
    if (g->fuse > 1) {  /* fixed scalars, unversioned: one read */
      const bw_Field *gend = g + g->fuse;
      uint64_t u = take(w, g->fusebits);
      for (; g < gend; g++) {
        unsigned b = fixedbits(g);
        pushkey(c, g->name);
        keptfixed(c, g, b < 64 ? u & (((uint64_t)1 << b) - 1) : u);
        if (!defer) lua_rawset(L, tbl);
        u = b < 64 ? u >> b : 0;
      }
      g--;
      continue;
    }
    if (ty->versioned && !bw_fieldpresent(g, c->version)) {
      if (mode == KEPTINTO) bw_refillabsent(c, g, tbl, 1);
      else if (bw_pushabsent(c, g) && !defer) lua_rawset(L, tbl);
      continue;
    }
    if (g->optional && !take(w, 1)) {
      if (mode == KEPTINTO) bw_refillabsent(c, g, tbl, 0);
      continue;
    }
    pushkey(c, g->name);
    if (mode == KEPTINTO && REFILLED(g->kind)) {
      if (!intofield(w, g, tbl, keptinto, 1)) return 0;
      continue;
    }
    if (!pushfrom(w, g)) return 0;
    if (!defer) lua_rawset(L, tbl);
  }
  if (defer) bw_closerecord(L, tbl);
  return 1;
}

/* Push the baseline's value of 'f' at w->ip (its codes are in range), as
** bw_pushkept copies a baseline's value: a record's versioned-out fields
** take their default. Its tables count against max_values as a full
** decode counts them: returns 0 when they run out. */
static int pushfrom (Walk *w, const bw_Field *f) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  if (f->kind == BW_KSTRUCT) {  /* most kept values: a branch, not the
                                   switch's jump (a walk mispredicts it) */
    const bw_Type *ty = &c->S->types[f->ref];
    if (!bw_decspendrecord(c, ty)) return 0;
    if (bw_openrecord(L, ty)) return keptrecord(w, ty, KEPTDEFER, 0);
    return keptrecord(w, ty, KEPTNEW, 0);
  }
  switch (f->kind) {
    case BW_KSTRING: case BW_KBYTES:
      keptstring(w, f);
      return 1;
    case BW_KARRAY: {
      const bw_Field *e = &c->S->fields[f->ref];
      lua_Integer i, n = (lua_Integer)(take(w, f->nbits) + (uint64_t)f->min);
      int tbl;
      if (!bw_decspendlist(c, n)) return 0;
      lua_createtable(L, (int)n, 0);
      if (fixedscalar(e)) {
        keptrun(w, e, n);
        return 1;
      }
      tbl = lua_gettop(L);
      for (i = 1; i <= n; i++) {
        if (!pushfrom(w, e)) return 0;
        lua_rawseti(L, tbl, i);
      }
      return 1;
    }
    case BW_KSPARSE: {
      const bw_Field *e = &c->S->fields[f->ref];
      unsigned ibits = SLOTBITS(f);
      lua_Integer i, n = (lua_Integer)f->max;
      int tbl;
      if (!bw_decspend(c, 1)) return 0;
      lua_createtable(L, 0, 0);
      tbl = lua_gettop(L);
      while ((i = nextslot(w, ibits, n)) <= n) {
        if (!bw_decspend(c, 1) || !pushfrom(w, e)) return 0;
        lua_rawseti(L, tbl, i);
      }
      return 1;
    }
    case BW_KQUAT: {
      uint32_t q[4];
      if (!bw_decspendquat(c)) return 0;
      takequat(w, f, q);
      bw_newquat(c, f, q);
      return 1;
    }
    case BW_KFLOAT32: case BW_KFLOAT64:
      lua_pushnumber(L, (lua_Number)ieeevalue(f, take(w, IEEEBITS(f))));
      return 1;
    case BW_KTIERED:  /* an int's code */
      pushcode(c, f, BW_KINT, take(w, f->nbits));
      return 1;
    default:
      keptfixed(c, f, take(w, fixedbits(f)));
      return 1;
  }
}

/* Push the kept value of 'f' at w->ip, and copy its bits; 0 when
** max_values runs out. */
static INLINE int pushkept (Walk *w, const bw_Field *f) {
  uint64_t start = w->ip;
  if (fixedscalar(f)) {  /* a record's unchanged scalar: one code */
    unsigned bits = fixedbits(f);
    uint64_t u = take(w, bits);
    put(w->c, w->out, u, bits);
    keptfixed(w->c, f, u);
    return 1;
  }
  if (!pushfrom(w, f)) return 0;
  bw_tapeputbits(w->c, w->out, w->in, start, w->ip - start);
  return 1;
}

/* {===== refilled in place: a delta decoded into a table =====
** The old tables of records, arrays and quaternions are refilled, as a
** full decode into refills them (lbw_decode.c): every field and element
** written, what the value lacks cleared. A table reached twice (claim)
** is made anew. Each returns 2 when it refilled the table at 'old', 1
** with a new value pushed, 0 with the failure. */

/* Element 'i' of the array at 't' (of 'oldn' old elements) as 'fill' of
** (w, e, old index or 0) gives it. */
static INLINE int intoelement (Walk *w, const bw_Field *e, int t, int64_t i,
                               int64_t oldn, Fill fill) {
  lua_State *L = w->c->L;
  int top = lua_gettop(L), ok;
  if (REFILLED(e->kind) && i <= oldn
      && lua_rawgeti(L, t, (lua_Integer)i) == LUA_TTABLE) {
    if ((ok = fill(w, e, 1, top + 1)) == 0) return 0;
    if (ok == 1) lua_rawseti(L, t, (lua_Integer)i);
    lua_settop(L, top);
    return 1;
  }
  lua_settop(L, top);
  if (!fill(w, e, 1, 0)) return 0;
  lua_rawseti(L, t, (lua_Integer)i);
  return 1;
}

/* The kept value of 'f' at w->ip into the table at 'old' (0: none); the
** baseline has one ('had'). */
static int keptinto (Walk *w, const bw_Field *f, int had, int old) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  (void)had;
  if (f->kind == BW_KQUAT) {  /* bw_pushquat claims 'old' itself */
    uint32_t q[4];
    takequat(w, f, q);
    return bw_pushquat(c, f, q, old);
  }
  if (old == 0 || !claim(c, old)) return pushfrom(w, f);
  luaL_checkstack(L, 8, "nesting of a delta decoded into");
  if (f->kind == BW_KSTRUCT) {
    const bw_Type *ty = &c->S->types[f->ref];
    if (!bw_decspendrecord(c, ty)) return 0;
    return keptrecord(w, ty, KEPTINTO, old) ? 2 : 0;
  }
  else {  /* an array */
    const bw_Field *e = &c->S->fields[f->ref];
    int64_t i, n = (int64_t)(take(w, f->nbits) + (uint64_t)f->min);
    int64_t oldn = (int64_t)lua_rawlen(L, old);
    if (!bw_decspendlist(c, n)) return 0;
    if (fixedscalar(e)) {
      lua_pushvalue(L, old);
      keptrun(w, e, n);
      lua_pop(L, 1);
    }
    else
      for (i = 1; i <= n; i++)
        if (!intoelement(w, e, old, i, oldn, keptinto)) return 0;
    bw_trimlist(c, old, n, oldn);
    return 2;
  }
}

/* }===== */

static int tapedecarray (Walk *w, const bw_Field *f, int into);
static int tapedecsparse (Walk *w, const bw_Field *f);

/* Append the tape of the value of 'f' at 'v' that a full decode just made
** or refilled in place: a refill keeps keys the caller added to the table,
** which the tape, of what was decoded, leaves out. */
static int decodedtape (Walk *w, const bw_Field *f, int v) {
  Ctx *c = w->c;
  int ok;
  c->tapes->asbase = TAPEOFDECODE;
  ok = bw_tapebuild(c, w->out, NULL, f, v, lua_type(c->L, v));
  c->tapes->asbase = TAPEOFVALUE;
  if (!ok) return bw_decfail(c, BW_ESCHEMA, c->r.pos, "decoded value refused");
  return 1;
}


/* Push the changed value of field 'f' (present) read from the packet, or
** refill the table at 'old' (0: none) with it, its tape appended; 'had':
** the baseline has one, at w->ip. Returns 0 with the failure. */
static int tapedecvalue (Walk *w, const bw_Field *f, int had, int old) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  int ok = 1;
  if (f->relative && had) {  /* a difference from the baseline's code */
    uint32_t bq[4] = { 0, 0, 0, 0 }, q[4];
    uint64_t base = 0, u = 0;
    if (f->kind == BW_KQUAT) takequat(w, f, bq);
    else base = take(w, fixedbits(f));
    if (!bw_readrelative(c, f, base, bq, &u, q)) return 0;
    if (f->kind == BW_KQUAT) putquat(c, w->out, f, q);
    else put(c, w->out, u, fixedbits(f));
    return 1;
  }
  if (f->kind == BW_KSTRUCT && had)  /* as pushfrom: a branch first */
    return bw_tapedecstruct(w, f->ref, old);
  switch (f->kind) {
    case BW_KSTRUCT: case BW_KARRAY: case BW_KSPARSE:
      if (had)  /* a record the baseline has went above */
        return f->kind == BW_KARRAY ? tapedecarray(w, f, old)
               : tapedecsparse(w, f);
      if ((ok = bw_decvalue(c, f, old)) == 0) return 0;  /* in full */
      return decodedtape(w, f, ok == 2 ? old : lua_gettop(L)) ? ok : 0;
    case BW_KQUAT: {
      uint32_t q[4];
      if (!bw_readquat(&c->r, &f->q, q)) return bw_quatfail(c);
      if ((ok = bw_pushquat(c, f, q, old)) == 0) return 0;
      putquat(c, w->out, f, q);
      break;
    }
    case BW_KTIERED: {  /* an int's code, as the tapes of values hold */
      uint64_t u = 0;
      if (!bw_decvalue(c, f, 0)) return 0;
      intcode(c, f, lua_tointeger(L, -1), 0, &u);  /* decoded: in range */
      put(c, w->out, u, f->nbits);
      break;
    }
    case BW_KFLOAT32: case BW_KFLOAT64:
      if (!bw_decleaf(c, f)) return 0;
      put(c, w->out, ieeecode(f, (double)lua_tonumber(L, -1)), IEEEBITS(f));
      break;
    case BW_KSTRING: case BW_KBYTES: {
      size_t len;
      const char *s;
      if (!bw_decleaf(c, f)) return 0;
      s = lua_tolstring(L, -1, &len);
      bw_tapeputstr(c, w->out, f, s, len);
      break;
    }
    default: {
      uint64_t u;
      if (!bw_readfixed(c, f, &u)) return 0;
      put(c, w->out, u, fixedbits(f));
      break;
    }
  }
  if (had) bw_tapeskip(w, f);
  return ok;
}

/* How many of the next bits, at most 'max' (> 0), are 0, those read: the
** changed bits of a run of kept elements, at once. 0 when the next is a 1
** or none is left (read one by one, to fail where it fails). */
static INLINE uint64_t zerorun (bw_Reader *r, uint64_t max) {
  uint64_t left = bw_bitsremaining(r), k = max < 57 ? max : 57, v, z;
  if (k > left) k = left;
  if (k == 0 || r->status != BW_OK) return 0;
  v = bw_readbits(r, (unsigned)k);
  z = v == 0 ? k : lowbit(v);
  r->pos -= k - z;  /* what follows the zeros is read again */
  return z;
}

/* An array against the baseline's tape (see lbw_decdelta.c's
** decdeltaarray: the same checks and failures), into the table at 'into'
** (0: none). */
static int tapedecarray (Walk *w, const bw_Field *f, int into) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  int64_t i, n, oldn = 0, bn = (int64_t)(take(w, f->nbits) + (uint64_t)f->min);
  Kept kept = { NONE, 0 };
  int t, scan = 1, reuse;
  if (!bw_decdeltacount(c, f, bn, &n)) return 0;
  if ((reuse = into != 0 && claim(c, into)) != 0) {
    t = into;
    oldn = (int64_t)lua_rawlen(L, into);
    luaL_checkstack(L, 8, "nesting of a delta decoded into");
  }
  else {
    bw_newlist(L, n);
    t = lua_gettop(L);
  }
  put(c, w->out, (uint64_t)n - (uint64_t)f->min, f->nbits);
  for (i = 1; i <= n; i++) {
    if (scan && i <= bn) {  /* kept elements up to the next changed one (after
                               a kept one: changes come in runs too), pushed
                               from the tape: only max_values fails them */
      uint64_t z = zerorun(&c->r, (uint64_t)((n < bn ? n : bn) - i + 1));
      if (z > 0) {
        keepfrom(w, &kept);
        for (; z > 0; z--, i++) {
          if (reuse) {
            if (!intoelement(w, e, t, i, oldn, keptinto)) return 0;
            continue;
          }
          if (!pushfrom(w, e)) return 0;
          lua_rawseti(L, t, (lua_Integer)i);
        }
        if (i > n) break;
      }
    }
    pushframe(c, BW_NONE, (lua_Integer)i);
    if (i <= bn) {
      uint64_t changed = bw_readbits(&c->r, 1);
      if (c->r.status != BW_OK) return bw_readfail(c);
      scan = !changed;
      if (changed) keepbits(w, &kept);
      else keepfrom(w, &kept);  /* consecutive kept elements: their bits
                                   copied once */
      if (reuse) {
        if (!intoelement(w, e, t, i, oldn, changed ? tapedecvalue : keptinto))
          return 0;
        popframe(c);
        continue;
      }
      if (!(changed ? tapedecvalue(w, e, 1, 0) : pushfrom(w, e))) return 0;
    }
    else {  /* past the baseline's: in full, into the old one if any */
      int top = lua_gettop(L), v = 0, ok;
      keepbits(w, &kept);
      if (reuse && i <= oldn) {
        if (lua_rawgeti(L, t, (lua_Integer)i) == LUA_TTABLE) v = top + 1;
        else lua_pop(L, 1);
      }
      if ((ok = bw_decvalue(c, e, v)) == 0) return 0;
      v = ok == 2 ? v : lua_gettop(L);
      if (!decodedtape(w, e, v)) return 0;
      if (ok == 1) lua_rawseti(L, t, (lua_Integer)i);
      lua_settop(L, top);
      popframe(c);
      continue;
    }
    lua_rawseti(L, t, (lua_Integer)i);
    popframe(c);
  }
  keepbits(w, &kept);
  for (; i <= bn; i++) bw_tapeskip(w, e);  /* the baseline's past 'n' */
  if (!reuse) return 1;
  bw_trimlist(c, t, n, oldn);
  return 2;
}

/* A sparse array against the baseline's tape (see lbw_decode.c's
** bw_decsparse against a baseline: the same reads, checks and failures):
** the baseline's slots before each sent one kept, the bits of a run of
** them copied at once; 'mark': where the baseline's next slot, 'bi',
** starts. */
static int tapedecsparse (Walk *w, const bw_Field *f) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer i, bi, n = (lua_Integer)f->max;
  uint64_t mark, kept = NONE;
  SparseIn in;
  int t, got;
  if (!bw_decspend(c, 1) || !bw_sparsestart(c, f, &in, 1)) return 0;
  lua_createtable(L, 0, 0);
  t = lua_gettop(L);
  c->checked++;  /* as bw_decsparse */
  mark = w->ip;
  bi = nextslot(w, in.ibits, n);
  for (;;) {
    int had;
    uint64_t present;
    if ((got = bw_sparsenext(c, &in, &i)) < 0) return 0;
    if (got == 0) i = n + 1;
    for (; bi < i; bi = nextslot(w, in.ibits, n)) {  /* kept */
      if (kept == NONE) kept = mark;
      if (!bw_decspend(c, 1) || !pushfrom(w, e)) return 0;
      lua_rawseti(L, t, bi);
      mark = w->ip;
    }
    if (kept != NONE) {
      bw_tapeputbits(c, w->out, w->in, kept, mark - kept);
      kept = NONE;
    }
    if (got == 0) break;
    had = bi == i;  /* slot i sent: as decslot reads it */
    pushframe(c, BW_NONE, i);
    present = bw_readbits(&c->r, 1);
    if (c->r.status != BW_OK) return bw_readfail(c);
    if (present) {  /* a slot made; a removed one makes none */
      if (!bw_decspend(c, 1)) return 0;
      putslot(c, w->out, i, in.ibits);
      if (!tapedecvalue(w, e, had, 0)) return 0;
      lua_rawseti(L, t, i);
    }
    else if (had) bw_tapeskip(w, e);
    if (had) {
      mark = w->ip;
      bi = nextslot(w, in.ibits, n);
    }
    popframe(c);
  }
  putslotsend(c, w->out);
  c->checked--;
  return 1;
}

/* The fused run of fixed scalars at 'f' of a changed record into the
** table at 'tbl': each field a changed bit and, when set, its value (a
** relative one as a difference from the baseline's code), as
** bw_tapedecstruct reads one field. Returns 0 with the failure. */
static INLINE int fusedrun (Walk *w, Frame *fr, const bw_Field *f, int tbl) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  const bw_Field *end = f + f->fuse;
  unsigned bits = f->fusebits, sh = 0;
  uint64_t u = take(w, bits), out = 0;  /* fuse > 1: each field < 64 bits */
  for (; f < end; f++) {
    unsigned b = fixedbits(f);
    uint64_t code = u & (((uint64_t)1 << b) - 1), changed;
    u >>= b;
    setframe(fr, f);
    changed = bw_readbits(&c->r, 1);
    if (c->r.status != BW_OK) return bw_readfail(c);
    pushkey(c, f->name);
    if (!changed) keptfixed(c, f, code);
    else if (f->relative) {  /* from the baseline's code, now 'code' */
      uint32_t bq[4] = { 0, 0, 0, 0 }, q[4];
      if (!bw_readrelative(c, f, code, bq, &code, q)) return 0;
    }
    else if (!bw_readfixed(c, f, &code)) return 0;
    out |= code << sh;
    sh += b;
    lua_rawset(L, tbl);
  }
  put(c, w->out, out, bits);
  return 1;
}

/* keptinto for a field of a record: the kept bits copied, as pushkept
** copies them. */
static int keptcopy (Walk *w, const bw_Field *f, int had, int old) {
  uint64_t start = w->ip;
  int ok = keptinto(w, f, had, old);
  if (ok) bw_tapeputbits(w->c, w->out, w->in, start, w->ip - start);
  return ok;
}

/* A record against the baseline's tape (see lbw_decdelta.c's
** bw_decdeltastruct: the same bits, checks and failures), into the table
** at 'into' (0: none). */
int bw_tapedecstruct (Walk *w, uint32_t t, int into) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first];
  const bw_Field *end = f + ty->count;
  int tbl, reuse = into != 0 && claim(c, into);
  Frame *fr;
  if (!reuse) tbl = bw_opendeltarecord(c, ty, &fr);
  else if ((tbl = bw_decspendrecord(c, ty) ? into : 0) != 0) {
    luaL_checkstack(L, 8, "nesting of a delta decoded into");
    fr = enterframe(c);
  }
  if (tbl == 0) return 0;
  for (; f < end; f++) {
    uint64_t changed, present;
    int had = 1;
    if (f->fuse > 1) {  /* fixed scalars, unversioned: the baseline's codes
                           taken, and the value's put, at once */
      if (!fusedrun(w, fr, f, tbl)) return 0;
      f += f->fuse - 1;
      continue;
    }
    if (ty->versioned && !bw_fieldpresent(f, c->version)) {
      if (reuse) bw_refillabsent(c, f, tbl, 1);
      else bw_setabsent(c, f, tbl);
      continue;
    }
    setframe(fr, f);
    if (f->name == BW_NONE) {  /* align or check */
      if (!bw_decleaf(c, f)) return 0;
      continue;
    }
    changed = bw_readbits(&c->r, 1);
    if (c->r.status != BW_OK) return bw_readfail(c);
    if (f->optional) had = (int)take(w, 1);
    if (changed && f->optional) {
      present = bw_readbits(&c->r, 1);
      if (c->r.status != BW_OK) return bw_readfail(c);
    }
    else present = changed || had;
    if (f->optional) put(c, w->out, present, 1);
    if (!present) {
      if (had) bw_tapeskip(w, f);
      if (reuse) bw_refillabsent(c, f, tbl, 0);
      continue;
    }
    pushkey(c, f->name);
    if (reuse && REFILLED(f->kind)) {
      if (!intofield(w, f, tbl, changed ? tapedecvalue : keptcopy, had))
        return 0;
      continue;
    }
    if (!(changed ? tapedecvalue(w, f, had, 0) : pushkept(w, f))) return 0;
    lua_rawset(L, tbl);
  }
  c->nframes--;
  return reuse ? 2 : 1;
}
