/*
** lbw_tape.c - deltas against tapes: the codes a baseline was sent or
** received as, so a delta reads each field from one table only
** See LICENSE for copyright and terms.
*/

#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"

#include "lbw_encvalue.h"

/* A delta against a baseline table reads every field twice, from the value
** and from the baseline, where a full encode reads it once; a delta decode
** fetches every kept field from the baseline. A tape holds what a table was
** sent or received as: each delta encode and decode leaves one for its
** value (UV_TAPES, weak-keyed by the table), and a baseline that has none
** gets one made from its table. A delta against a tape compares, or
** keeps, codes in C memory, with the same bits and values as the walks
** over baseline tables (lbw_encdelta.c, lbw_decdelta.c), which still take
** every type with fields a tape does not hold (tapeok), a baseline that is
** not a value of its type, and decode into, share or a baseline not
** decoded by the schema.
**
** A table is remembered as it was encoded or decoded, or as it was when
** first used as a baseline: the peer's copy does not change either.
**
** A tape is the value's codes packed as the wire packs them, for the
** fields of the tape's version, with no padding: a record its fields in
** order, an optional field a presence bit first, a fixed scalar its code,
** a string its length and bytes, an array its count and elements. */

typedef struct Tape {  /* the userdata of a table's tape */
  const bw_Schema *S;
  uint32_t type, version;
  uint64_t bits;
  uint64_t s[];  /* bits / 64 + 1 words */
} Tape;

/* {===================== which types take tapes ===================== */

enum { TUNKNOWN, TVISITING, TYES, TNO };
enum { TAPEOK = 1, TAPENESTS = 2 };  /* Tapes.ok: tapes; and nested fields */

/* The most fields of a fused run (bw_Field.fuse): runs are at most
** BW_FUSEBITS wide, but zero-bit fields (min == max) take no width. */
#define MAXFUSE  255

static int typeok (const bw_Schema *S, uint8_t *ok, uint32_t t);

static int fieldok (const bw_Schema *S, uint8_t *ok, const bw_Field *f) {
  if (f->relative) return 0;
  if (fixedscalar(f) || f->kind == BW_KSTRING) return 1;
  if (f->kind == BW_KSTRUCT) return typeok(S, ok, f->ref);
  if (f->kind == BW_KARRAY) {
    const bw_Field *e = &S->fields[f->ref];
    return !e->optional && e->kind != BW_KARRAY && fieldok(S, ok, e);
  }
  return 0;
}

static int typeok (const bw_Schema *S, uint8_t *ok, uint32_t t) {
  const bw_Type *ty = &S->types[t];
  uint32_t i;
  if (ok[t] != TUNKNOWN) return ok[t] == TYES;  /* TVISITING: a cycle */
  ok[t] = TVISITING;
  for (i = 0; i < ty->count; i++)
    if (S->fields[ty->first + i].name == BW_NONE  /* align, check */
        || !fieldok(S, ok, &S->fields[ty->first + i])) {
      ok[t] = TNO;
      return 0;
    }
  ok[t] = TYES;
  return 1;
}

void bw_tapesmake (Tapes *tp, const bw_Schema *S) {
  uint32_t t;
  memset(tp, 0, sizeof(*tp));
  tp->ok = (uint8_t *)calloc(S->ntypes > 0 ? S->ntypes : 1, 1);
  if (tp->ok == NULL) return;  /* no memory: every delta walks tables */
  for (t = 0; t < S->ntypes; t++) typeok(S, tp->ok, t);
  for (t = 0; t < S->ntypes; t++) {
    const bw_Type *ty = &S->types[t];
    uint32_t i;
    if (tp->ok[t] != TYES) {
      tp->ok[t] = 0;
      continue;
    }
    tp->ok[t] = TAPEOK;
    for (i = ty->first; i < ty->first + ty->count; i++)
      if (S->fields[i].kind == BW_KSTRUCT || S->fields[i].kind == BW_KARRAY)
        tp->ok[t] |= TAPENESTS;
  }
}

void bw_tapesfree (Tapes *tp) {
  free(tp->out.s);
  free(tp->base.s);
  free(tp->ok);
  memset(tp, 0, sizeof(*tp));
}

/* }========================================================== */


/* {===================== packing ===================== */

static void grow (Ctx *c, TapeBuf *b, size_t words) {
  size_t cap = b->cap > 0 ? b->cap : 64;
  uint64_t *s;
  while (cap < words) {
    if (cap > ((size_t)-1 / sizeof(uint64_t)) / 2)
      luaL_error(c->L, "not enough memory");
    cap *= 2;
  }
  s = (uint64_t *)realloc(b->s, cap * sizeof(uint64_t));
  if (s == NULL) luaL_error(c->L, "not enough memory");
  b->s = s;
  b->cap = cap;
}

/* Append the 'n' (<= 64) bits of 'v' (< 2^n). */
static INLINE void put (Ctx *c, TapeBuf *b, uint64_t v, unsigned n) {
  size_t i = (size_t)(b->pos >> 6);
  unsigned off = (unsigned)(b->pos & 63);
  if (i + 2 > b->cap) grow(c, b, i + 2);
  if (off == 0) b->s[i] = v;  /* the bits past 'pos' stay 0 */
  else {
    b->s[i] |= v << off;
    if (off + n > 64) b->s[i + 1] = v >> (64 - off);
  }
  b->pos += n;
}

/* The 'n' (<= 64) bits at bit 'pos' of 's'. */
static INLINE uint64_t get (const uint64_t *s, uint64_t pos, unsigned n) {
  size_t i = (size_t)(pos >> 6);
  unsigned off = (unsigned)(pos & 63);
  uint64_t v = s[i] >> off;
  if (off + n > 64) v |= s[i + 1] << (64 - off);
  return n < 64 ? v & (((uint64_t)1 << n) - 1) : v;
}

/* Up to 8 bytes at 'p' as the low bits of a word, first byte lowest. */
static INLINE uint64_t chunk (const char *p, size_t k) {
  uint64_t v = 0;
  while (k-- > 0) v = v << 8 | (uint8_t)p[k];
  return v;
}

static void putstr (Ctx *c, TapeBuf *b, const bw_Field *f, const char *s,
                    size_t len) {
  put(c, b, (uint64_t)len, f->nbits);
  for (; len >= 8; len -= 8, s += 8) put(c, b, chunk(s, 8), 64);
  if (len > 0) put(c, b, chunk(s, len), (unsigned)len * 8);
}

/* 1 if the 'len' bytes at bit 'pos' of 's' are those at 'p'. */
static int samebytes (const uint64_t *s, uint64_t pos, const char *p,
                      size_t len) {
  for (; len >= 8; len -= 8, p += 8, pos += 64)
    if (get(s, pos, 64) != chunk(p, 8)) return 0;
  return len == 0 || get(s, pos, (unsigned)len * 8) == chunk(p, len);
}

/* Copy the 'n' bits at bit 'pos' of 's'. */
static void putbits (Ctx *c, TapeBuf *b, const uint64_t *s, uint64_t pos,
                     uint64_t n) {
  for (; n >= 64; n -= 64, pos += 64) put(c, b, get(s, pos, 64), 64);
  if (n > 0) put(c, b, get(s, pos, (unsigned)n), (unsigned)n);
}

/* }========================================================== */


/* {===================== tapes of tables ===================== */

static int buildstruct (Ctx *c, TapeBuf *b, uint32_t t, int idx);

/* Append the tape of the value at 'v' (of Lua type 'vt', not nil) of field
** 'f'; 0 when it is not a value of the field (nothing raised). */
static int buildvalue (Ctx *c, TapeBuf *b, const bw_Field *f, int v, int vt) {
  lua_State *L = c->L;
  switch (f->kind) {
    case BW_KSTRING: {
      size_t len;
      const char *s;
      if (vt != LUA_TSTRING) return 0;
      s = lua_tolstring(L, v, &len);
      if (len > (uint64_t)f->max || !bw_utf8valid(s, len)) return 0;
      putstr(c, b, f, s, len);
      return 1;
    }
    case BW_KSTRUCT: return vt == LUA_TTABLE && buildstruct(c, b, f->ref, v);
    case BW_KARRAY: {
      const bw_Field *e = &c->S->fields[f->ref];
      lua_Integer i, n;
      if (vt != LUA_TTABLE) return 0;
      n = (lua_Integer)lua_rawlen(L, v);
      if ((f->fixed && n != (lua_Integer)f->max) || n < (lua_Integer)f->min
          || (uint64_t)n > (uint64_t)f->max)
        return 0;
      put(c, b, (uint64_t)n - (uint64_t)f->min, f->nbits);
      for (i = 1; i <= n; i++) {
        int et = lua_rawgeti(L, v, i), ok;
        ok = et != LUA_TNIL && buildvalue(c, b, e, lua_gettop(L), et);
        lua_pop(L, 1);
        if (!ok) return 0;
      }
      return 1;
    }
    default: {
      uint64_t code;
      if (!fixedcode(c, f, v, vt, 0, &code)) return 0;
      put(c, b, code, fixedbits(f));
      return 1;
    }
  }
}

/* Append the tape of the record at 'idx' of type 't' (a tapeok type), as
** the walks over tables read a baseline: a missing field takes its
** default. 0 when the table is not a value of the type. */
static int buildstruct (Ctx *c, TapeBuf *b, uint32_t t, int idx) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first], *end = f + ty->count;
  for (; f < end; f++) {
    int vt, ok;
    if (ty->versioned && !bw_fieldpresent(f, c->version)) continue;
    pushkey(c, f->name);
    vt = lua_rawget(L, idx);
    if (vt == LUA_TNIL) {
      lua_pop(L, 1);
      if (f->optional) {
        put(c, b, 0, 1);
        continue;
      }
      if (!f->hasdefault) return 0;
      bw_pushdefault(c, f);
      vt = lua_type(L, -1);
    }
    else if (f->optional) put(c, b, 1, 1);
    ok = buildvalue(c, b, f, lua_gettop(L), vt);
    lua_pop(L, 1);
    if (!ok) return 0;
  }
  return 1;
}

/* }========================================================== */


/* {===================== reading a baseline's tape ===================== */

typedef struct Walk {
  Ctx            *c;
  TapeBuf        *out;  /* the value's tape */
  const uint64_t *in;   /* the baseline's */
  uint64_t        ip;   /* the next bit of 'in' */
} Walk;

static INLINE uint64_t take (Walk *w, unsigned n) {
  uint64_t v = get(w->in, w->ip, n);
  w->ip += n;
  return v;
}

/* Step over the baseline's value of 'f' (past an optional's presence). */
static void skipvalue (Walk *w, const bw_Field *f) {
  const bw_Schema *S = w->c->S;
  switch (f->kind) {
    case BW_KSTRING:
      w->ip += take(w, f->nbits) * 8;
      return;
    case BW_KSTRUCT: {
      const bw_Type *ty = &S->types[f->ref];
      const bw_Field *g = &S->fields[ty->first], *end = g + ty->count;
      for (; g < end; g++) {
        if (g->fuse > 1) {  /* fixed scalars, unversioned: one step */
          w->ip += g->fusebits;
          g += g->fuse - 1;
          continue;
        }
        if (ty->versioned && !bw_fieldpresent(g, w->c->version)) continue;
        if (g->optional && !take(w, 1)) continue;
        skipvalue(w, g);
      }
      return;
    }
    case BW_KARRAY: {
      const bw_Field *e = &S->fields[f->ref];
      uint64_t n = take(w, f->nbits) + (uint64_t)f->min;
      if (fixedscalar(e)) w->ip += n * fixedbits(e);
      else while (n-- > 0) skipvalue(w, e);
      return;
    }
    default:
      w->ip += fixedbits(f);
  }
}

/* Copy the baseline's value of 'f', unchanged, to the value's tape. */
static void copyvalue (Walk *w, const bw_Field *f) {
  uint64_t start = w->ip;
  skipvalue(w, f);
  putbits(w->c, w->out, w->in, start, w->ip - start);
}

#define NONE  UINT64_MAX

/* Copy the baseline's bits from '*from' (unless NONE) to w->ip: values
** kept one after another. */
static INLINE void keepbits (Walk *w, uint64_t *from) {
  if (*from == NONE) return;
  putbits(w->c, w->out, w->in, *from, w->ip - *from);
  *from = NONE;
}

/* }========================================================== */


/* {===================== encode against a tape ===================== */

static int tapestruct (Walk *w, uint32_t t, int idx, int bidx, uint64_t *r);
static int tapearray (Walk *w, const bw_Field *f, int idx, int bidx,
                      uint64_t *r);

/* A value sent whole where the baseline has none: its bits and its tape. */
static void sendwhole (Walk *w, const bw_Field *f, int v, int vt) {
  Ctx *c = w->c;
  bw_encvalue(c, f, v, vt);
  if (!buildvalue(c, w->out, f, v, vt))  /* it encoded, so it is a value */
    bw_encerror(c, "value changed while encoded");
}

/* The changed bit and what changed of the value at 'v' (of Lua type 'vt',
** not nil) of field 'f' (of a tapeok type; an optional one present in both)
** against the baseline's at w->ip, 'r' holding the record's pending bits;
** 'btab': the baseline's own table for it (not the value's), or 0.
** Returns 1 if it changed. The bits are those of lbw_encdelta.c's encdeltafield and encdeltafixed,
** failures raised at the same bit. */
static INLINE int tapefield (Walk *w, uint64_t *r, const bw_Field *f, int v,
                             int vt, int btab) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  switch (f->kind) {
    case BW_KSTRUCT: case BW_KARRAY: {
      uint64_t acc = *r, start = bw_bitswritten(c->w);
      unsigned pending = c->pending;
      int changed;
      /* written after a changed bit of 1, and when nothing in it changed,
      ** taken back for a 0: dropped from 'r' while it holds all of it */
      runadd(c, r, f->optional ? 3 : 1, f->optional ? 2 : 1);
      if (btab && ((f->kind == BW_KSTRUCT && !(w->c->tapes->ok[f->ref] & TAPENESTS))
                   || lua_type(L, btab) != LUA_TTABLE))
        btab = 0;  /* a record with no records or arrays: not needed */
      changed = f->kind == BW_KSTRUCT ? tapestruct(w, f->ref, v, btab, r)
                                      : tapearray(w, f, v, btab, r);
      if (!changed) {
        if (bw_bitswritten(c->w) == start) {
          *r = acc;
          c->pending = pending;
        }
        else {
          runflush(c, r);
          bw_writerrewind(c->w, start + pending);
        }
        runadd(c, r, 0, 1);
      }
      return changed;
    }
    case BW_KSTRING: {
      size_t len = 0, blen = (size_t)take(w, f->nbits);
      const char *s = vt == LUA_TSTRING ? lua_tolstring(L, v, &len) : NULL;
      int same = s != NULL && len == blen && samebytes(w->in, w->ip, s, len);
      w->ip += (uint64_t)blen * 8;
      if (same) runadd(c, r, 0, 1);
      else {
        runflush(c, r);
        bw_writebits(c->w, f->optional ? 3 : 1, f->optional ? 2 : 1);
        bw_encleaf(c, f, v, vt);  /* raises on what is not a string */
      }
      putstr(c, w->out, f, s, len);
      return !same;
    }
    default: {
      uint64_t code = 0;
      unsigned bits = fixedbits(f);
      if (!fixedcode(c, f, v, vt, 0, &code)) {  /* raise where the walk */
        if (deltafixed(f)) fixedvalue(c, f, v, vt);  /* over tables does */
        runflush(c, r);
        bw_writebits(c->w, f->optional ? 3 : 1, f->optional ? 2 : 1);
        bw_encleaf(c, f, v, vt);
      }
      put(c, w->out, code, bits);
      if (code == take(w, bits)) {
        runadd(c, r, 0, 1);
        return 0;
      }
      runadd(c, r, f->optional ? 3 : 1, f->optional ? 2 : 1);
      runadd(c, r, code, bits);
      return 1;
    }
  }
}

/* An array against the baseline's (see lbw_encdelta.c's encdeltaarray);
** returns 1 if anything changed. */
static int tapearray (Walk *w, const bw_Field *f, int idx, int bidx,
                      uint64_t *r) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer i, n, bn = (lua_Integer)(take(w, f->nbits) + (uint64_t)f->min);
  int changed, top = lua_gettop(L), tables = e->kind == BW_KSTRUCT && bidx;
  uint64_t kept = NONE;
  if (!lua_istable(L, idx)) bw_enctype(c, idx, "a table");
  n = (lua_Integer)lua_rawlen(L, idx);
  bw_checklen(c, f, (size_t)n, "count");
  runadd(c, r, (uint64_t)n - (uint64_t)f->min, f->nbits);
  put(c, w->out, (uint64_t)n - (uint64_t)f->min, f->nbits);
  changed = n != bn;
  for (i = 1; i <= n; i++) {
    int et;
    pushframe(c, BW_NONE, i);
    et = lua_rawgeti(L, idx, i);
    if (et == LUA_TNIL) bw_encerror(c, "missing");
    if (i <= bn) {
      if (tables && (lua_rawgeti(L, bidx, i), et == LUA_TTABLE)
          && lua_topointer(L, top + 1) == lua_topointer(L, top + 2)) {
        runadd(c, r, 0, 1);  /* shared with the baseline: unchanged; the */
        if (kept == NONE) kept = w->ip;  /* bits of a run of them copied */
        skipvalue(w, e);                 /* at once */
      }
      else {
        keepbits(w, &kept);
        changed |= tapefield(w, r, e, top + 1, et, tables ? top + 2 : 0);
      }
    }
    else {
      keepbits(w, &kept);
      runflush(c, r);
      sendwhole(w, e, top + 1, et);
    }
    lua_settop(L, top);
    popframe(c);
  }
  keepbits(w, &kept);
  for (; i <= bn; i++) skipvalue(w, e);  /* the baseline's past 'n' */
  return changed;
}

/* The fused run [f, f + f->fuse) of fixed scalars, their values at 'v',
** v + 1, ... of Lua types tt[0], tt[1], ...: compared as one code with the
** baseline's when every value is one the fields take; else field by field,
** so a failure raises at its own bit. Returns 1 if any changed. */
static int taperun (Walk *w, uint64_t *r, Frame *fr, const bw_Field *f, int v,
                    const int *tt) {
  Ctx *c = w->c;
  unsigned k = f->fuse, bits = f->fusebits, j, sh = 0;
  uint64_t acc = 0, base;
  int changed = 0;
  for (j = 0; j < k; j++) {
    uint64_t code;
    if (tt[j] == LUA_TNIL || !fixedcode(c, &f[j], v + (int)j, tt[j], 0, &code))
      break;
    acc |= code << sh;
    sh += fixedbits(&f[j]);
  }
  if (j < k) {  /* a value missing or refused */
    for (j = 0; j < k; j++) {
      int vt = tt[j];
      fr->name = f[j].name;
      if (vt == LUA_TNIL) {
        if (!f[j].hasdefault) bw_encerror(c, "missing");
        bw_pushdefault(c, &f[j]);
        lua_replace(c->L, v + (int)j);
        vt = lua_type(c->L, v + (int)j);
      }
      changed |= tapefield(w, r, &f[j], v + (int)j, vt, 0);
    }
    return changed;
  }
  base = take(w, bits);
  put(c, w->out, acc, bits);
  if (acc == base) {  /* k changed bits of 0 (zero-bit fields: k may pass 64) */
    for (; k > 0; k -= j) {
      j = k < 32 ? k : 32;
      runadd(c, r, 0, j);
    }
    return 0;
  }
  for (j = 0, sh = 0; j < k; j++) {
    unsigned b = fixedbits(&f[j]);
    uint64_t m = b < 64 ? ((uint64_t)1 << b) - 1 : ~(uint64_t)0;
    uint64_t cj = (acc >> sh) & m;
    if (cj == ((base >> sh) & m)) runadd(c, r, 0, 1);
    else {
      runadd(c, r, 1, 1);
      runadd(c, r, cj, b);
      changed = 1;
    }
    sh += b;
  }
  return changed;
}

/* A record against the baseline's tape (see lbw_encdelta.c's deltastruct;
** the same bits); 'bidx': the baseline's table, or 0. Returns 1 if any
** field changed. */
static int tapestruct (Walk *w, uint32_t t, int idx, int bidx, uint64_t *r) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first];
  const bw_Field *end = f + ty->count;
  int top = lua_gettop(L), changed = 0, v = top + 1;
  Frame *fr;
  if (!lua_istable(L, idx)) bw_enctype(c, idx, "a table");
  if (!lua_checkstack(L, 2 * BATCH + MAXFUSE + 8))
    bw_encerror(c, "stack overflow");
  fr = enterframe(c);
  fr->index = 0;
  for (; f < end; f++) {
    int vt, btab = 0;
    if (ty->versioned && !bw_fieldpresent(f, c->version)) continue;
    fr->name = f->name;
    if (v > top + 2 * BATCH) {  /* the stack holds BATCH fields at most */
      lua_settop(L, top);
      v = top + 1;
    }
    if (f->fuse > 1) {  /* fixed scalars, unversioned, none optional */
      int tt[MAXFUSE], j;
      for (j = 0; j < f->fuse; j++) {
        pushkey(c, f[j].name);
        tt[j] = lua_rawget(L, idx);
      }
      changed |= taperun(w, r, fr, f, v, tt);
      v += f->fuse;
      f += f->fuse - 1;
      continue;
    }
    pushkey(c, f->name);
    vt = lua_rawget(L, idx);
    if (vt == LUA_TNIL && !f->optional) {
      if (!f->hasdefault) bw_encerror(c, "missing");
      bw_pushdefault(c, f);
      lua_replace(L, v);
      vt = lua_type(L, v);
    }
    if (f->optional) {
      int had = (int)take(w, 1);
      put(c, w->out, vt != LUA_TNIL, 1);
      if (vt == LUA_TNIL || !had) {
        v++;
        if (vt == LUA_TNIL && !had) {
          runadd(c, r, 0, 1);
          continue;
        }
        runflush(c, r);
        bw_writebits(c->w, vt == LUA_TNIL ? 1 : 3, 2);  /* changed, present? */
        if (vt == LUA_TNIL) skipvalue(w, f);
        else sendwhole(w, f, v - 1, vt);
        changed = 1;
        continue;
      }
    }
    if (bidx && (f->kind == BW_KSTRUCT || f->kind == BW_KARRAY)) {
      pushkey(c, f->name);
      lua_rawget(L, bidx);
      btab = v + 1;
      if (vt == LUA_TTABLE && lua_topointer(L, v) == lua_topointer(L, btab)) {
        runadd(c, r, 0, 1);  /* shared with the baseline: unchanged */
        copyvalue(w, f);
        v += 2;
        continue;
      }
    }
    changed |= tapefield(w, r, f, v, vt, btab);
    v += btab ? 2 : 1;
  }
  lua_settop(L, top);
  endrecord(c, fr, t, idx);
  return changed;
}

/* }========================================================== */


/* {===================== decode against a tape ===================== */

/* Push the baseline's value of 'f' at w->ip (its codes are in range), as
** bw_pushkept copies a baseline's value: a record's versioned-out fields
** take their default. */
static void pushfrom (Walk *w, const bw_Field *f) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  switch (f->kind) {
    case BW_KSTRING: {
      size_t len = (size_t)take(w, f->nbits), k;
      luaL_Buffer B;
      char *p = luaL_buffinitsize(L, &B, len);
      for (k = 0; k < len; k++) p[k] = (char)take(w, 8);
      luaL_pushresultsize(&B, len);
      return;
    }
    case BW_KSTRUCT: {
      const bw_Type *ty = &c->S->types[f->ref];
      const bw_Field *g = &c->S->fields[ty->first], *end = g + ty->count;
      int tbl;
      lua_createtable(L, 0, (int)ty->count);
      tbl = lua_gettop(L);
      for (; g < end; g++) {
        if (g->fuse > 1) {  /* fixed scalars, unversioned: one read */
          const bw_Field *gend = g + g->fuse;
          uint64_t u = take(w, g->fusebits);
          for (; g < gend; g++) {
            unsigned b = fixedbits(g);
            pushkey(c, g->name);
            pushfixed(c, g, b < 64 ? u & (((uint64_t)1 << b) - 1) : u, 0);
            lua_rawset(L, tbl);
            u = b < 64 ? u >> b : 0;
          }
          g--;
          continue;
        }
        if (ty->versioned && !bw_fieldpresent(g, c->version)) {
          bw_setabsent(c, g, tbl);
          continue;
        }
        if (g->optional && !take(w, 1)) continue;
        pushkey(c, g->name);
        pushfrom(w, g);
        lua_rawset(L, tbl);
      }
      return;
    }
    case BW_KARRAY: {
      const bw_Field *e = &c->S->fields[f->ref];
      lua_Integer i, n = (lua_Integer)(take(w, f->nbits) + (uint64_t)f->min);
      int tbl;
      lua_createtable(L, (int)n, 0);
      tbl = lua_gettop(L);
      for (i = 1; i <= n; i++) {
        pushfrom(w, e);
        lua_rawseti(L, tbl, i);
      }
      return;
    }
    default:
      pushfixed(c, f, take(w, fixedbits(f)), 0);
  }
}

/* Push the kept value of 'f' at w->ip, and copy its bits. */
static INLINE void pushkept (Walk *w, const bw_Field *f) {
  uint64_t start = w->ip;
  pushfrom(w, f);
  putbits(w->c, w->out, w->in, start, w->ip - start);
}

static int tapedecstruct (Walk *w, uint32_t t);
static int tapedecarray (Walk *w, const bw_Field *f);


/* Push the changed value of field 'f' (present) read from the packet, its
** tape appended; 'had': the baseline has one, at w->ip. Returns 0 with the
** failure. */
static int tapedecvalue (Walk *w, const bw_Field *f, int had) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  switch (f->kind) {
    case BW_KSTRUCT: case BW_KARRAY:
      if (had)
        return f->kind == BW_KSTRUCT ? tapedecstruct(w, f->ref)
                                     : tapedecarray(w, f);
      if (!bw_decvalue(c, f, 0)) return 0;
      if (!buildvalue(c, w->out, f, lua_gettop(L), LUA_TTABLE))
        return bw_decfail(c, BW_ESCHEMA, c->r.pos, "decoded value refused");
      return 1;
    case BW_KSTRING: {
      size_t len;
      const char *s;
      if (!bw_decleaf(c, f)) return 0;
      s = lua_tolstring(L, -1, &len);
      putstr(c, w->out, f, s, len);
      break;
    }
    default: {
      unsigned bits = fixedbits(f);
      uint64_t start = c->r.pos, u = bw_readbits(&c->r, bits);
      if (c->r.status != BW_OK) return bw_readfail(c);
      if (!pushfixed(c, f, u, start)) return 0;
      put(c, w->out, u, bits);
      break;
    }
  }
  if (had) skipvalue(w, f);
  return 1;
}

/* An array against the baseline's tape (see lbw_decdelta.c's
** decdeltaarray: the same checks and failures). */
static int tapedecarray (Walk *w, const bw_Field *f) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  int64_t i, n, bn = (int64_t)(take(w, f->nbits) + (uint64_t)f->min);
  uint64_t kept = NONE;
  int t;
  if (!bw_decdeltacount(c, f, bn, &n)) return 0;
  t = lua_gettop(L);
  put(c, w->out, (uint64_t)n - (uint64_t)f->min, f->nbits);
  for (i = 1; i <= n; i++) {
    pushframe(c, BW_NONE, (lua_Integer)i);
    if (i <= bn) {
      uint64_t changed = bw_readbits(&c->r, 1);
      if (c->r.status != BW_OK) return bw_readfail(c);
      if (!changed) {  /* consecutive kept elements: their bits copied once */
        if (kept == NONE) kept = w->ip;
        pushfrom(w, e);
      }
      else {
        keepbits(w, &kept);
        if (!tapedecvalue(w, e, 1)) return 0;
      }
    }
    else {
      keepbits(w, &kept);
      if (!bw_decvalue(c, e, 0)) return 0;
      if (!buildvalue(c, w->out, e, t + 1, lua_type(L, t + 1)))
        return bw_decfail(c, BW_ESCHEMA, c->r.pos, "decoded value refused");
    }
    lua_rawseti(L, t, (lua_Integer)i);
    popframe(c);
  }
  keepbits(w, &kept);
  for (; i <= bn; i++) skipvalue(w, e);  /* the baseline's past 'n' */
  return 1;
}

/* A record against the baseline's tape (see lbw_decdelta.c's
** bw_decdeltastruct: the same bits, checks and failures). */
static int tapedecstruct (Walk *w, uint32_t t) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first];
  const bw_Field *end = f + ty->count;
  int tbl;
  Frame *fr;
  if (!bw_decspend(c, 1 + (uint64_t)ty->count)) return 0;
  fr = enterframe(c);
  lua_createtable(L, 0, (int)ty->count);
  tbl = lua_gettop(L);
  for (; f < end; f++) {
    uint64_t changed, present;
    int had = 1;
    if (ty->versioned && !bw_fieldpresent(f, c->version)) {
      bw_setabsent(c, f, tbl);
      continue;
    }
    setframe(fr, f);
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
      if (had) skipvalue(w, f);
      continue;
    }
    pushkey(c, f->name);
    if (!changed) pushkept(w, f);
    else if (!tapedecvalue(w, f, had)) return 0;
    lua_rawset(L, tbl);
  }
  c->nframes--;
  return 1;
}

/* }========================================================== */


static const Tape *basetape (Ctx *c, uint32_t t, int bidx);

#define pushtapes(L)  bw_pushweakuv(L, UV_TAPES)

/* Keep the tape in 'b' for the table at 'idx', in the tapes table at
** 'tapes'; returns the kept tape (a userdata left on the stack). */
static Tape *keeptape (Ctx *c, int tapes, int idx, uint32_t t,
                       const TapeBuf *b, int again) {
  lua_State *L = c->L;
  size_t words = (size_t)(b->pos >> 6) + 1;  /* + 1: get reads a word past */
  size_t size = sizeof(Tape) + words * sizeof(uint64_t);
  Tape *tape;
  if (again) {  /* a table encoded again (to each peer against its own
                   baseline): its tape's memory, when it is large enough */
    lua_pushvalue(L, idx);
    if (lua_rawget(L, tapes) == LUA_TUSERDATA && lua_rawlen(L, -1) >= size) {
      tape = (Tape *)lua_touserdata(L, -1);
      tape->S = c->S;
      tape->type = t;
      tape->version = c->version;
      tape->bits = b->pos;
      memcpy(tape->s, b->s, (size_t)((b->pos + 63) >> 6) * sizeof(uint64_t));
      if ((b->pos & 63) == 0) tape->s[words - 1] = 0;
      return tape;
    }
    lua_pop(L, 1);
  }
  tape = (Tape *)lua_newuserdatauv(L, size, 0);
  tape->S = c->S;
  tape->type = t;
  tape->version = c->version;
  tape->bits = b->pos;
  memcpy(tape->s, b->s, (size_t)((b->pos + 63) >> 6) * sizeof(uint64_t));
  if ((b->pos & 63) == 0) tape->s[words - 1] = 0;
  lua_pushvalue(L, idx);
  lua_pushvalue(L, -2);
  lua_rawset(L, tapes);
  return tape;
}

int bw_enctape (Ctx *c, uint32_t t, int idx, int bidx) {
  lua_State *L = c->L;
  Tapes *tp = c->tapes;
  const Tape *base;
  int top = lua_gettop(L);
  uint64_t run = 0;
  Walk w;
  if (tp->ok == NULL || !tp->ok[t] || !lua_istable(L, idx)) return 0;
  base = basetape(c, t, bidx);
  if (base == NULL) {
    lua_settop(L, top);
    return 0;
  }
  w.c = c;
  w.out = &tp->out;
  w.in = base->s;
  w.ip = 0;
  tp->out.pos = 0;
  c->pending = 0;
  tapestruct(&w, t, idx, bidx, &run);
  runflush(c, &run);
  if (c->w->status != BW_OK)
    bw_encerror(c, "%s (packet over %I bytes)", bw_strerror(c->w->status),
                (lua_Integer)c->w->maxbytes);
  keeptape(c, top + 1, idx, t, &tp->out, 1);
  lua_settop(L, top);
  return 1;
}

/* Look up, or make from its table, the tape of baseline 'bidx' for type
** 't'; pushes the tapes table and the tape. NULL (with them pushed) when
** the baseline is not a value of the type. */
static const Tape *basetape (Ctx *c, uint32_t t, int bidx) {
  lua_State *L = c->L;
  Tapes *tp = c->tapes;
  const Tape *base = NULL;
  int tapes;
  pushtapes(L);
  tapes = lua_gettop(L);
  lua_pushvalue(L, bidx);
  if (lua_rawget(L, tapes) == LUA_TUSERDATA) {
    base = (const Tape *)lua_touserdata(L, -1);
    if (base->S == c->S && base->type == t && base->version == c->version)
      return base;
  }
  lua_pop(L, 1);
  tp->base.pos = 0;  /* a baseline this schema has not sent: from its table */
  if (!buildstruct(c, &tp->base, t, bidx)) return NULL;
  return keeptape(c, tapes, bidx, t, &tp->base, 0);
}

int bw_dectape (Ctx *c, uint32_t t, int bidx) {
  lua_State *L = c->L;
  Tapes *tp = c->tapes;
  const Tape *base;
  int top = lua_gettop(L), tapes = top + 1;
  Walk w;
  if (tp->ok == NULL || !tp->ok[t]) return -1;
  base = basetape(c, t, bidx);
  if (base == NULL) {
    lua_settop(L, top);
    return -1;
  }
  w.c = c;
  w.out = &tp->out;
  w.in = base->s;
  w.ip = 0;
  tp->out.pos = 0;
  if (!tapedecstruct(&w, t)) return 0;
  keeptape(c, tapes, lua_gettop(L), t, &tp->out, 0);
  lua_pop(L, 1);
  lua_replace(L, tapes);  /* the value, where the tapes table was */
  lua_settop(L, tapes);
  return 1;
}

void bw_tapedrop (lua_State *L, int idx) {
  if (lua_getiuservalue(L, 1, UV_TAPES) == LUA_TTABLE) {
    lua_pushvalue(L, idx);
    lua_pushnil(L);
    lua_rawset(L, -3);
  }
  lua_pop(L, 1);
}
