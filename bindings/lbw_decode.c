/*
** lbw_decode.c - the decode walk: bits to Lua tables
** See LICENSE for copyright and terms.
*/

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"

#include "lbw_schema.h"


/* {===================== decode ===================== */

static int decvalue (Ctx *c, const bw_Field *f, int into);

/* Kinds whose old table a decode into refills. decvalue and bw_decstruct
** return 0 on failure, 1 when they pushed the value, and 2 when they
** refilled the table at 'into' in place and pushed nothing: no store back. */
#define REFILLS(k)  ((k) == BW_KSTRUCT || (k) == BW_KARRAY \
                     || (k) == BW_KSPARSE || (k) == BW_KQUAT)

int bw_decvaluesfail (Ctx *c) {
  return bw_decfail(c, BW_ERANGE, c->r.pos, "decode makes more values than "
                    "max_values allows");
}


/* {===================== tables refilled (Claims) ===================== */
/* A decode into the same tables as last time claims them in the same order:
** while this decode's claims repeat the last decode's sequence (whose
** tables were all distinct) a claim is one compare. From the first
** difference on, every table goes through a hash set of this decode's
** claims. Either way each claim is recorded, so the next decode can
** follow it. */

void bw_claimsstart (Claims *cl) {
  cl->prev = cl->done;  /* a decode that raised left no trusted sequence */
  cl->done = 0;
  cl->k = 0;
  cl->hashed = 0;
  cl->lost = 0;
  cl->n = 0;
  if (++cl->gen == 0) {  /* wrapped: no entry may look current */
    uint32_t i;
    for (i = 0; i < cl->cap; i++) cl->e[i].gen = 0;
    cl->gen = 1;
  }
}

void bw_claimsend (Claims *cl) {
  cl->done = cl->lost ? 0 : cl->k;
}

void bw_claimsfree (Claims *cl) {
  free(cl->e);
  free(cl->seq);
  memset(cl, 0, sizeof(*cl));
}

static INLINE uint32_t claimslot (const Claims *cl, const void *p) {
  uint64_t h = (uint64_t)(uintptr_t)p * UINT64_C(0x9E3779B97F4A7C15);
  return (uint32_t)(h >> 32) & (cl->cap - 1);
}

/* Double the set, keeping this decode's entries; 0 without memory. */
static int claimsgrow (Claims *cl) {
  uint32_t i, cap = cl->cap ? 2 * cl->cap : 256;
  Claim *old = cl->e, *e;
  if (cap == 0 || (e = (Claim *)calloc(cap, sizeof(Claim))) == NULL) return 0;
  cl->e = e;
  cl->cap = cap;
  for (i = 0; i < cap / 2 && old != NULL; i++)
    if (old[i].gen == cl->gen) {
      uint32_t h = claimslot(cl, old[i].p);
      while (e[h].gen == cl->gen) h = (h + 1) & (cap - 1);
      e[h] = old[i];
    }
  free(old);
  return 1;
}

/* Add 'p' to the hash set: 1, or 0 if it is there (or without memory). */
static int claimshash (Claims *cl, const void *p) {
  uint32_t h;
  if (cl->n >= cl->cap / 2 && !claimsgrow(cl)) return 0;
  h = claimslot(cl, p);
  while (cl->e[h].gen == cl->gen) {
    if (cl->e[h].p == p) return 0;
    h = (h + 1) & (cl->cap - 1);
  }
  cl->e[h].p = p;
  cl->e[h].gen = cl->gen;
  cl->n++;
  return 1;
}

/* Claim 'p' off the common path: the sequence differs from the last one
** (or has ended). */
static int claimslow (Claims *cl, const void *p) {
  if (!cl->hashed) {  /* the claims so far are distinct: hash them */
    uint32_t i;
    for (i = 0; i < cl->k; i++)
      if (!claimshash(cl, cl->seq[i])) return 0;
    cl->hashed = 1;
  }
  if (!claimshash(cl, p)) return 0;
  if (cl->k == cl->seqcap) {  /* record it for the next decode */
    uint32_t cap = cl->seqcap ? 2 * cl->seqcap : 256;
    const void **seq = cap == 0 ? NULL
      : (const void **)realloc((void *)cl->seq, cap * sizeof(*seq));
    if (seq == NULL) {
      cl->lost = 1;  /* this decode stays exact; the next one hashes */
      return 1;
    }
    cl->seq = seq;
    cl->seqcap = cap;
  }
  if (!cl->lost) cl->seq[cl->k++] = p;
  return 1;
}

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
  return claimslow(cl, p);
}

/* }========================================================== */

/* Read an n-bit offset and check it against [min, max]; '*v' gets min +
** offset. 'what' names the quantity for the message. */
/* The offset 'u' read at 'start' is past f's range: say what it was. */
static int rangefail (Ctx *c, const bw_Field *f, const char *what,
                      uint64_t u, uint64_t start) {
  uint64_t val = (uint64_t)f->min + u;
  if (f->min >= 0 && val < u)
    return bw_decfail(c, BW_ERANGE, start, "%s out of range [%" PRId64 ", %"
                   PRId64 "]", what, f->min, f->max);
  return bw_decfail(c, BW_ERANGE, start, "%s%s%" PRId64 " out of range [%"
                 PRId64 ", %" PRId64 "]", what, what[0] ? " " : "",
                 (int64_t)(f->min < 0 && val > (uint64_t)INT64_MAX
                   ? -(int64_t)(~val) - 1 : (int64_t)(val & INT64_MAX)),
                 f->min, f->max);
}

static int readrange (Ctx *c, const bw_Field *f, const char *what,
                      int64_t *v) {
  uint64_t start = c->r.pos;
  uint64_t u = bw_readbits(&c->r, f->nbits);
  if (c->r.status != BW_OK) return bw_readfail(c);
  if (u > (uint64_t)f->max - (uint64_t)f->min)
    return rangefail(c, f, what, u, start);
  *v = (int64_t)((uint64_t)f->min + u <= (uint64_t)INT64_MAX
                 ? (int64_t)((uint64_t)f->min + u)
                 : -(int64_t)(~((uint64_t)f->min + u)) - 1);
  return 1;
}

static void pushkept (Ctx *c, const bw_Field *f, int idx);
static int decrelative (Ctx *c, const bw_Field *f, int b);

/* Protected call (schema, field index, value, version): encode the value
** as that field into the schema's writer, raising where it does not fit. */
static int encodefield (lua_State *L) {
  LSchema *ls = bw_checkschema(L, 1);
  Ctx c;
  bw_initctx(L, &c, ls, (uint32_t)lua_tointeger(L, 4), 0);  /* one field */
  bw_writerreset(c.w);
  bw_encvalue(&c, &ls->S->fields[lua_tointeger(L, 2)], 3, lua_type(L, 3));
  return 0;
}

/* A delta keeps from its baseline what it does not send, and the packet
** picks the message type and the version: what it keeps (the value at 'v',
** for field 'f') must be a value of that field, or the result would not be
** a value of its type. Checked by encoding it; the schema is at index 1. */
static int keepbaseline (Ctx *c, const bw_Field *f, int v) {
  lua_State *L = c->L;
  const char *msg, *p;
  size_t len;
  int st;
  if (c->checked > 0) return 1;  /* part of a baseline checked whole */
  if (lua_isnil(L, v)) {
    if (f->optional) return 1;
    return bw_decfail(c, BW_EBASELINE, c->r.pos, "unchanged, but the baseline "
                   "has no value");
  }
  lua_pushcfunction(L, encodefield);
  lua_pushvalue(L, 1);
  lua_pushinteger(L, (lua_Integer)(f - c->S->fields));
  lua_pushvalue(L, v);
  lua_pushinteger(L, (lua_Integer)c->version);
  st = lua_pcall(L, 4, 0, 0);
  if (st == LUA_OK) return 1;
  if (st == LUA_ERRMEM) lua_error(L);
  msg = lua_tostring(L, -1);
  if (msg == NULL) msg = "?";
  len = strlen(msg);
  for (p = msg; (p = strstr(p, " (bit ")) != NULL; p++)
    len = (size_t)(p - msg);  /* cut the encoder's bit position */
  bw_decfail(c, BW_EBASELINE, c->r.pos, "baseline value does not fit: %.*s",
          (int)len, msg);
  lua_pop(L, 1);
  return 0;
}

/* Push what a delta keeps of the baseline value at 'v' for field 'f': a
** missing value takes the field's default (a baseline decoded under
** definitions that lacked the field), a value of a baseline not known to be
** this schema's own is checked first. Returns 0 with the failure. */
static int keep (Ctx *c, const bw_Field *f, int v) {
  if (lua_isnil(c->L, v) && !f->optional) {
    if (f->hasdefault) {
      bw_pushdefault(c, f);
      return 1;
    }
    return bw_decfail(c, BW_EBASELINE, c->r.pos, "unchanged, but the "
                      "baseline has no value");
  }
  if (!keepbaseline(c, f, v)) return 0;
  pushkept(c, f, v);
  return 1;
}

static int decdeltavalue (Ctx *c, const bw_Field *f, int bidx);

/* Decode slot 'i' of a sparse array into the table at 't'. Against a
** baseline 'bidx': a presence bit, then a delta when the baseline has a
** record there. */
static int decslot (Ctx *c, const bw_Field *e, int t, int reuse, int bidx,
                    lua_Integer i) {
  int old = 0;
  if (!bw_decspend(c, 1)) return 0;
  pushframe(c, BW_NONE, i);
  if (bidx != 0) {
    uint64_t present = bw_readbits(&c->r, 1);
    if (c->r.status != BW_OK) return bw_readfail(c);
    if (!present) lua_pushnil(c->L);
    else {
      int ok;
      lua_rawgeti(c->L, bidx, i);
      ok = decdeltavalue(c, e, lua_gettop(c->L));
      if (!ok) return 0;
      lua_remove(c->L, -2);
    }
  }
  else {
    int ok;
    if (reuse && REFILLS(e->kind)
        && lua_rawgeti(c->L, t, i) == LUA_TTABLE)
      old = lua_gettop(c->L);
    ok = decvalue(c, e, old);
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

/* Clear slots [from, to] of a reused sparse table. */
static void clearslots (lua_State *L, int t, lua_Integer from, lua_Integer to) {
  for (; from <= to; from++) {
    lua_pushnil(L);
    lua_rawseti(L, t, from);
  }
}

/* A sparse array; against a baseline 'bidx' the result starts as a copy of
** the baseline and the sent slots change it. */
static int decsparse (Ctx *c, const bw_Field *f, int into, int bidx) {
  lua_State *L = c->L;
  bw_Reader *r = &c->r;
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer n = (lua_Integer)f->max, prev = 0, i;
  unsigned ibits = bw_bitsrequired(0, (int64_t)n - 1);
  int t, enc = f->encoding, reuse = into != 0 && claim(c, into);
  uint64_t start = r->pos, slotmin = bidx != 0 ? 1 : e->minbits;
  if (!bw_decspend(c, 1)) return 0;
  if (enc == BW_SPAUTO) {
    enc = (int)bw_readbits(r, 2);
    if (r->status != BW_OK) return bw_readfail(c);
    if (enc == BW_SPAUTO)
      return bw_decfail(c, BW_ERANGE, start, "unknown sparse encoding 3");
  }
  if (bidx != 0) {
    reuse = 0;
    if (!keepbaseline(c, f, bidx)) return 0;
    pushkept(c, f, bidx);
    c->checked++;  /* the slots' records are checked with the whole */
  }
  else if (!reuse) lua_createtable(L, 0, 0);
  t = reuse ? into : lua_gettop(L);
  if (enc == BW_SPMASK) {
    for (i = 1; i <= n; i++) {
      uint64_t present = bw_readbits(r, 1);
      if (r->status != BW_OK) return bw_readfail(c);
      if (present) {
        if (!decslot(c, e, t, reuse, bidx, i)) return 0;
      }
      else if (reuse) clearslots(L, t, i, i);
    }
    c->checked -= bidx != 0;
    return reuse ? 2 : 1;
  }
  if (enc == BW_SPINDEX) {
    lua_Integer count, k;
    start = r->pos;
    count = (lua_Integer)bw_readbits(r, f->nbits);
    if (r->status != BW_OK) return bw_readfail(c);
    if (count > n)
      return bw_decfail(c, BW_ERANGE, start, "count %lld above max %lld",
                     (long long)count, (long long)n);
    /* a slot costs its index and its value, or against a baseline at
    ** least its index and a presence bit */
    if (ibits + slotmin > 0
        && (uint64_t)count > bw_bitsremaining(r) / (ibits + slotmin))
      return bw_decfail(c, BW_ETRUNC, start, "count %lld needs more bits "
                     "than are left", (long long)count);
    for (k = 0; k < count; k++) {
      start = r->pos;
      i = (lua_Integer)bw_readbits(r, ibits) + 1;
      if (r->status != BW_OK) return bw_readfail(c);
      if (i <= prev || i > n)
        return bw_decfail(c, BW_ERANGE, start, "index %lld not in [%lld, %lld]",
                       (long long)i, (long long)prev + 1, (long long)n);
      if (reuse) clearslots(L, t, prev + 1, i - 1);
      if (!decslot(c, e, t, reuse, bidx, i)) return 0;
      prev = i;
    }
  }
  else {  /* relative: rising indices until the sentinel n + 1 */
    for (;;) {
      uint64_t cur;
      start = r->pos;
      if (f->ntiers > 0)
        cur = (uint64_t)prev + bw_readtiered(r, 1, (uint64_t)n + 1,
                                             f->tierbits, f->ntiers);
      else
        cur = bw_readintrelative(r, (uint64_t)prev);
      if (r->status != BW_OK) return bw_readfail(c);
      if (cur == (uint64_t)n + 1) break;
      if (cur > (uint64_t)n)
        return bw_decfail(c, BW_ERANGE, start, "index %llu above max %lld",
                       (unsigned long long)cur, (long long)n);
      i = (lua_Integer)cur;
      if (reuse) clearslots(L, t, prev + 1, i - 1);
      if (!decslot(c, e, t, reuse, bidx, i)) return 0;
      prev = i;
    }
  }
  if (reuse) clearslots(L, t, prev + 1, n);
  c->checked -= bidx != 0;
  return reuse ? 2 : 1;
}

/* A quaternion the reader refused: truncated, or a code no encoder makes
** (so every decoded quaternion encodes back to its own bits). */
static int quatfail (Ctx *c) {
  if (c->r.status != BW_ERANGE) return bw_readfail(c);
  return bw_decfail(c, BW_ERANGE, c->r.errpos, "quaternion code not in "
                    "canonical form");
}

/* Push the quaternion of code 'q', or refill the table at 'into' with it
** (returns 2). */
static int pushquat (Ctx *c, const bw_Field *f, const uint32_t q[4],
                     int into) {
  double v[4];
  int i;
  if (!bw_decspend(c, 5)) return 0;
  bw_quatdecode(&f->q, q, v);
  if (into != 0 && claim(c, into)) {
    for (i = 0; i < 4; i++) {
      lua_pushnumber(c->L, (lua_Number)v[i]);
      lua_rawseti(c->L, into, i + 1);
    }
    return 2;
  }
  lua_createtable(c->L, 4, 0);
  for (i = 0; i < 4; i++) {
    lua_pushnumber(c->L, (lua_Number)v[i]);
    lua_rawseti(c->L, -2, i + 1);
  }
  return 1;
}

static int decquat (Ctx *c, const bw_Field *f, int into) {
  uint32_t q[4];
  if (!bw_readquat(&c->r, &f->q, q)) return quatfail(c);
  return pushquat(c, f, q, into);
}

/* Push the value of field 'f'. 'into' is the stack index of the old value
** to reuse (tables only), or 0. Returns 0 on failure. */
/* Push a scalar (a kind below BW_KARRAY). Not recursive, so the compiler
** can inline it into the loops over fields. Returns 0 on failure. */
/* Check and push the raw bits 'u' of fixed-width field 'f' (read at bit
** 'start'). Returns 0 on a value out of range. */
static INLINE int pushfixed (Ctx *c, const bw_Field *f, uint64_t u,
                             uint64_t start) {
  lua_State *L = c->L;
  switch (f->kind) {
    case BW_KINT: case BW_KENUM: {
      uint64_t val = (uint64_t)f->min + u;
      if (u > (uint64_t)f->max - (uint64_t)f->min)
        return rangefail(c, f, "", u, start);
      if (f->kind == BW_KENUM) pushkey(c, f->ref + (uint32_t)u);
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
      if (u > f->q.miv)
        return bw_decfail(c, BW_ERANGE, start, "quantized %" PRIu64
                       " out of range [0, %" PRIu32 "]", u, f->q.miv);
      lua_pushnumber(L, (lua_Number)bw_qfloatdecode(&f->q, (uint32_t)u));
      return 1;
  }
}

/* Push a scalar (a kind below BW_KARRAY). Not recursive, so the compiler
** can inline it into the loops over fields. Returns 0 on failure. */
static int decleaf (Ctx *c, const bw_Field *f) {
  lua_State *L = c->L;
  bw_Reader *r = &c->r;
  int64_t v;
  switch (f->kind) {
    case BW_KINT: case BW_KENUM: case BW_KUINT: case BW_KBOOL: case BW_KFLOAT:
    case BW_KANGLE: {
      uint64_t start = r->pos;
      uint64_t u = bw_readbits(r, f->kind == BW_KFLOAT ? f->q.nbits
                                  : f->kind == BW_KBOOL ? 1 : f->nbits);
      if (r->status != BW_OK) return bw_readfail(c);
      return pushfixed(c, f, u, start);
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
      if (!readrange(c, f, "length", &v)) return 0;
      start = r->pos;
      p = bw_readbytes(r, (size_t)v);
      if (p == NULL) return bw_readfail(c);
      if (f->kind == BW_KSTRING && !bw_utf8valid((const char *)p, (size_t)v))
        return bw_decfail(c, BW_EUTF8, start,
                       "string with NUL or malformed UTF-8");
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

/* Elements 1..n of an array of fixed-width scalars 'e' into the table at
** 't': as many as fit in BW_FUSEBITS read at once, one by one near the end
** of the input, so a truncation still names the element that ran out. */
static int decscalars (Ctx *c, const bw_Field *e, int t, int64_t n) {
  lua_State *L = c->L;
  bw_Reader *r = &c->r;
  unsigned w = fixedbits(e), per = w > 0 && w <= BW_FUSEBITS ? BW_FUSEBITS / w : 1;
  uint64_t mask = w < 64 ? (UINT64_C(1) << w) - 1 : ~UINT64_C(0);
  Frame *fr;
  int64_t i = 1;
  pushframe(c, BW_NONE, 1);
  fr = &c->frames[c->nframes - 1 < MAXFRAMES ? c->nframes - 1 : MAXFRAMES - 1];
  while (i <= n) {
    unsigned k = n - i + 1 < (int64_t)per ? (unsigned)(n - i + 1) : per;
    uint64_t start = r->pos, u = bw_readbits(r, k * w);
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
    for (; k > 0; k--, i++) {
      fr->index = (lua_Integer)i;
      if (!pushfixed(c, e, u & mask, start)) return 0;
      lua_rawseti(L, t, (lua_Integer)i);
      if (w < 64) u >>= w;
      start += w;
    }
  }
  popframe(c);
  return 1;
}

static int decvalue (Ctx *c, const bw_Field *f, int into) {
  lua_State *L = c->L;
  bw_Reader *r = &c->r;
  switch (f->kind) {
    case BW_KARRAY: {
      const bw_Field *e = &c->S->fields[f->ref];
      int64_t i, n, oldn = 0;
      int t, reuse = into != 0 && claim(c, into);
      uint64_t start = r->pos;
      if (f->nbits == 0) n = f->min;  /* a fixed count: nothing sent */
      else if (!readrange(c, f, "count", &n)) return 0;
      /* every element costs at least minbits: refuse before allocating */
      if (e->minbits > 0 && (uint64_t)n > bw_bitsremaining(r) / e->minbits)
        return bw_decfail(c, BW_ETRUNC, start, "count %" PRId64 " needs %"
                       PRIu64 " bits or more, %" PRIu64 " left", n,
                       (uint64_t)n * e->minbits, bw_bitsremaining(r));
      if (!bw_decspend(c, 1 + (uint64_t)n)) return 0;
      if (reuse) {
        t = into;
        oldn = (int64_t)lua_rawlen(L, into);
      }
      else {
        lua_createtable(L, (int)(n < 1 << 20 ? n : 1 << 20), 0);
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
                                           : decvalue(c, e, top + 1);
            if (!ok) return 0;
            if (ok == 1) lua_rawseti(L, t, (lua_Integer)i);
            lua_settop(L, top);
          }
          else {
            if (refill && i <= oldn) lua_pop(L, 1);
            if (!(e->kind < BW_KARRAY ? decleaf(c, e)
                  : e->kind == BW_KSTRUCT ? bw_decstruct(c, e->ref, 0)
                  : decvalue(c, e, 0)))
              return 0;
            lua_rawseti(L, t, (lua_Integer)i);
          }
        }
        popframe(c);
      }
      for (i = oldn; i > n; i--) {  /* trim an array that got shorter */
        lua_pushnil(L);
        lua_rawseti(L, t, (lua_Integer)i);
      }
      return reuse ? 2 : 1;
    }
    case BW_KSTRUCT:
      return bw_decstruct(c, f->ref, into);
    case BW_KSPARSE:
      return decsparse(c, f, into, 0);
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
      return decleaf(c, f);
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
  if (!bw_decspend(c, 1 + (uint64_t)st->count)) return 0;
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
  for (t = 0; t < S->ntypes; t++)  /* at most a record op per scalar */
    if (S->types[t].flat > 0) nops += 2 * (size_t)S->types[t].flat;
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
      else p->ops[k++] = flatop(f);
    }
  }
  p->first[t] = k;
}

/* }========================================================== */

/* Push the value of a flat op's raw bits 'u', checked against o->lim. */
static INLINE void pushflat (Ctx *c, const FlatOp *o, uint64_t u) {
  lua_State *L = c->L;
  switch (o->kind) {
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

/* A flat record (bw_Type.flat) of type 't' whose bits are all there, into
** the table at 'tbl' (0: on top; 'reuse': refill it and the tables of its
** records), along its plan, in one pass. 0 when its records would pass
** max_values (checked before anything is claimed) or a value is out of
** range, with the reader, max_values and the stack as they were: the
** general walk then reports it, with its path (the records refilled
** before it are claimed, so it makes fresh ones: a failed decode into
** leaves its table partly refilled). */
static int decflat (Ctx *c, uint32_t t, int tbl, int reuse) {
  lua_State *L = c->L;
  const FlatOp *o = &c->plan->ops[c->plan->first[t]];
  const FlatOp *oend = &c->plan->ops[c->plan->first[t + 1]];
  uint64_t pos = c->r.pos;
  /* away from the end of the input, reads need no checks */
  int top = lua_gettop(L), fast = c->r.status == BW_OK
        && bw_bitsremaining(&c->r) >= c->S->types[t].minbits + 72;
#define FLATREAD(w) (fast ? bw_readbitsfast(&c->r, (w)) \
                          : bw_readbits(&c->r, (w)))
  if (c->plan->spend[t] > c->values) return 0;  /* before any claim */
  c->values -= c->plan->spend[t];
  if (tbl == 0) tbl = top;
  for (; o < oend; o++) {
    pushkey(c, o->key);
    if (o->kind == BW_KSTRUCT) {  /* one read for its scalars */
      const FlatOp *gend = o + 1 + o->n;
      uint64_t u = FLATREAD(o->w);
      int inplace = reuse && lua_rawget(L, tbl) == LUA_TTABLE
                    && claim(c, top + 1);
      if (!inplace) {
        if (reuse) {
          lua_pop(L, 1);
          pushkey(c, o->key);
        }
        lua_createtable(L, 0, (int)o->n);
      }
      for (o++; o < gend; o++) {
        uint64_t v = u & ((UINT64_C(1) << o->w) - 1);  /* w < BW_FUSEBITS */
        if (v > o->lim) goto refused;
        pushkey(c, o->key);
        pushflat(c, o, v);
        lua_rawset(L, -3);
        u >>= o->w;
      }
      o--;
      if (inplace) lua_settop(L, top);
      else lua_rawset(L, tbl);
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

/* A fresh record of at most MAXSCALARS fixed-width scalar fields, some
** optional: every field is read first, then the table is made with the
** exact count and filled. Reads and range checks in bw_decstruct's order,
** so a failure is the one it would report. */
static int decscalarrecord (Ctx *c, const bw_Type *ty, Frame *fr) {
  lua_State *L = c->L;
  const bw_Field *f = &c->S->fields[ty->first], *end = f + ty->count;
  uint64_t val[MAXSCALARS], at[MAXSCALARS];
  uint64_t present = 0;
  int k, n = 0;
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
  lua_createtable(L, 0, n);
  for (f -= ty->count, k = 0; f < end; f++, k++) {
    if (!(present >> k & 1)) continue;
    setframe(fr, f);
    pushkey(c, f->name);
    if (!pushfixed(c, f, val[k], at[k])) return 0;
    lua_rawset(L, -3);
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
  /* a fresh record with optional fields keeps its fields on the stack and
  ** makes its table at the end, sized by what came */
  defer = !reuse && ty->noptional > 0
          && lua_checkstack(L, 2 * (int)ty->count + 8);
  fr = enterframe(c);
  if (defer && ty->scalars && ty->count <= MAXSCALARS)
    return decscalarrecord(c, ty, fr);
  if (reuse) tbl = into;  /* refilled in place: nothing pushed */
  else if (!defer) lua_createtable(L, 0, (int)ty->count);
  else lua_pushnil(L);  /* where the table will be */
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
      if (f->name == BW_NONE) continue;
      pushkey(c, f->name);
      if (f->hasdefault) bw_pushdefault(c, f);
      else if (reuse) lua_pushnil(L);
      else {
        lua_pop(L, 1);
        continue;
      }
      SETFIELD();
      continue;
    }
    if (f->name == BW_NONE) {  /* align or check */
      if (!decleaf(c, f)) return 0;
      continue;
    }
    if (f->optional) {
      uint64_t present = bw_readbits(&c->r, 1);
      if (c->r.status != BW_OK) return bw_readfail(c);
      if (!present) {
        if (reuse) {
          pushkey(c, f->name);
          lua_pushnil(L);
          SETFIELD();
        }
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
      if (!decleaf(c, f)) return 0;
    }
    else if (reuse && REFILLS(f->kind)) {
      /* the key on top becomes the old value, at base + 1 */
      int ok = decvalue(c, f, lua_rawget(L, tbl) == LUA_TTABLE ? base + 1 : 0);
      if (!ok) return 0;
      if (ok == 2) {  /* refilled in place: nothing to store */
        lua_settop(L, base);
        continue;
      }
      lua_replace(L, base + 1);  /* a fresh table: store it */
      pushkey(c, f->name);
      lua_insert(L, base + 1);
    }
    else if (!decvalue(c, f, 0)) return 0;
    SETFIELD();
  }
  if (defer) {
    int n = (lua_gettop(L) - base) / 2;
    lua_createtable(L, 0, n);
    lua_replace(L, base);
    while (n-- > 0) lua_rawset(L, base);
  }
  c->nframes--;
  return reuse ? 2 : 1;
}

#undef SETFIELD

int bw_decstruct (Ctx *c, uint32_t t, int into) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  int reuse;
  if (!bw_decspend(c, 1 + (uint64_t)ty->count)) return 0;
  reuse = into != 0 && claim(c, into);
  if (ty->flat && c->plan->ops != NULL
      && bw_bitsremaining(&c->r) >= ty->minbits) {
    /* none optional: nothing deferred; no frame, decflat cannot fail */
    if (!reuse) lua_createtable(L, 0, (int)ty->count);
    if (decflat(c, t, reuse ? into : 0, reuse)) return reuse ? 2 : 1;
    if (!reuse) lua_pop(L, 1);  /* the general walk says what is wrong */
  }
  return decrecord(c, t, into, reuse);
}


/* Push a copy of the value at 'idx' of field 'f', which keepbaseline has
** checked: tables are copied along the schema (sized as decode sizes them),
** so a decoded value never shares a table with its baseline; unless the
** call asked to share them and the baseline is this schema's decode
** (c->share == 2), when the value itself is pushed. A sparse array is
** still copied then (its slots are set in the copy), its records not. */
static void pushkept (Ctx *c, const bw_Field *f, int idx) {
  lua_State *L = c->L;
  int t;
  if (lua_type(L, idx) != LUA_TTABLE  /* scalars, absent optionals */
      || (c->share == 2 && f->kind != BW_KSPARSE)) {
    lua_pushvalue(L, idx);
    return;
  }
  switch (f->kind) {
    case BW_KSTRUCT: {
      const bw_Type *ty = &c->S->types[f->ref];
      const bw_Field *g = &c->S->fields[ty->first], *end = g + ty->count;
      lua_createtable(L, 0, (int)ty->count);
      t = lua_gettop(L);
      for (; g < end; g++) {
        int tt;
        if (g->name == BW_NONE) continue;
        if (ty->versioned && !bw_fieldpresent(g, c->version)) {
          if (g->hasdefault) {  /* as decode leaves it */
            pushkey(c, g->name);
            bw_pushdefault(c, g);
            lua_rawset(L, t);
          }
          continue;
        }
        pushkey(c, g->name);
        pushkey(c, g->name);
        tt = lua_rawget(L, idx);  /* stack: key, value */
        if (tt == LUA_TTABLE) {
          pushkept(c, g, lua_gettop(L));
          lua_replace(L, -2);
        }
        else if (tt == LUA_TNIL) {
          lua_pop(L, 1);
          if (g->optional || !g->hasdefault) {  /* checked: optional */
            lua_pop(L, 1);
            continue;
          }
          bw_pushdefault(c, g);  /* a field the baseline's schema lacked */
        }
        lua_rawset(L, t);
      }
      return;
    }
    case BW_KARRAY: case BW_KQUAT: {  /* a quat is {x, y, z, w} */
      const bw_Field *e = f->kind == BW_KARRAY ? &c->S->fields[f->ref] : f;
      lua_Integer i, n = (lua_Integer)lua_rawlen(L, idx);
      lua_createtable(L, (int)n, 0);
      t = lua_gettop(L);
      for (i = 1; i <= n; i++) {
        int et = lua_rawgeti(L, idx, i);
        if (et == LUA_TTABLE && e != f) {
          pushkept(c, e, lua_gettop(L));
          lua_remove(L, -2);
        }
        lua_rawseti(L, t, i);
      }
      return;
    }
    case BW_KSPARSE: {  /* keys are integers in [1, max]: checked */
      const bw_Field *e = &c->S->fields[f->ref];
      lua_createtable(L, (int)lua_rawlen(L, idx), 0);
      t = lua_gettop(L);
      lua_pushnil(L);
      while (lua_next(L, idx)) {
        lua_pushvalue(L, -2);
        if (lua_type(L, -2) == LUA_TTABLE) pushkept(c, e, lua_gettop(L) - 1);
        else lua_pushvalue(L, -2);
        lua_rawset(L, t);
        lua_pop(L, 1);
      }
      return;
    }
    default:
      lua_pushvalue(L, idx);
  }
}

/* An array against the baseline array at 'bidx': its count, then for each
** element the baseline also has, bool(changed) and what changed; the
** elements past the baseline's length in full. */
static int decdeltaarray (Ctx *c, const bw_Field *f, int bidx) {
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  int64_t i, n, bn = (int64_t)lua_rawlen(L, bidx);
  uint64_t start = c->r.pos, need;
  int t;
  if (!readrange(c, f, "count", &n)) return 0;
  if (!bw_decspend(c, 1 + (uint64_t)n)) return 0;
  /* a kept element costs a bit, a new one minbits: refuse before
  ** allocating */
  need = (uint64_t)(n < bn ? n : bn) + (n > bn ? (uint64_t)(n - bn)
                                                  * e->minbits : 0);
  if (need > bw_bitsremaining(&c->r))
    return bw_decfail(c, BW_ETRUNC, start, "count %" PRId64 " needs %"
                      PRIu64 " bits or more, %" PRIu64 " left", n, need,
                      bw_bitsremaining(&c->r));
  lua_createtable(L, (int)(n < 1 << 20 ? n : 1 << 20), 0);
  t = lua_gettop(L);
  for (i = 1; i <= n; i++) {
    pushframe(c, BW_NONE, (lua_Integer)i);
    if (i <= bn) {
      uint64_t changed = bw_readbits(&c->r, 1);
      if (c->r.status != BW_OK) return bw_readfail(c);
      if (lua_rawgeti(L, bidx, (lua_Integer)i) == LUA_TTABLE && !changed
          && c->checked > 0)
        pushkept(c, e, t + 1);  /* the common case: a trusted element */
      else if (!(changed ? decdeltavalue(c, e, t + 1) : keep(c, e, t + 1)))
        return 0;
      lua_remove(L, t + 1);
    }
    else if (!decvalue(c, e, 0)) return 0;
    lua_rawseti(L, t, (lua_Integer)i);
    popframe(c);
  }
  return 1;
}

/* delta = "relative" (see encrelative): push the value sent as a difference
** from the baseline value at 'b'. Returns 1, 0 on failure, or -1 when 'b'
** is no value to start from and the value comes whole. */
static int decrelative (Ctx *c, const bw_Field *f, int b) {
  lua_State *L = c->L;
  uint64_t start = c->r.pos;
  if (f->kind == BW_KQUAT) {
    uint32_t base[4], code[4];
    if (!bw_quatof(f, L, b, base)) return -1;
    if (!bw_readquatdiff(&c->r, f, base, code)) return quatfail(c);
    return pushquat(c, f, code, 0);
  }
  else {
    bw_Diff d;
    double bx = (double)lua_tonumber(L, b);
    uint64_t u;
    if (lua_type(L, b) != LUA_TNUMBER
        || (f->kind == BW_KANGLE && !isfinite(bx)))
      return -1;
    bw_fielddiff(f, &d);
    u = bw_readdiff(&c->r, &d, f->kind == BW_KANGLE
                    ? bw_angleencode(bx, f->dmax, f->nbits)
                    : bw_qfloatencode(&f->q, bx));
    if (c->r.status == BW_ERANGE)
      return bw_decfail(c, BW_ERANGE, start, "difference from the baseline "
                        "leaves the range");
    if (c->r.status != BW_OK) return bw_readfail(c);
    return pushfixed(c, f, u, start);
  }
}

/* A changed value of field 'f' against its baseline value at 'bidx':
** records, arrays and sparse arrays as deltas when the baseline has one,
** anything else in full. */
static int decdeltavalue (Ctx *c, const bw_Field *f, int bidx) {
  if (f->relative) {  /* a difference from the baseline value, if usable */
    int rel = decrelative(c, f, bidx);
    if (rel >= 0) return rel;
  }
  if (lua_istable(c->L, bidx)) {
    switch (f->kind) {
      case BW_KSTRUCT: return bw_decdeltastruct(c, f->ref, bidx);
      case BW_KSPARSE: return decsparse(c, f, 0, bidx);
      case BW_KARRAY: return decdeltaarray(c, f, bidx);
      default: break;
    }
  }
  return decvalue(c, f, 0);
}

/* A record against its baseline at 'bidx' (see bw_encdeltastruct). The
** changed bit comes first, so the baseline's value is fetched only where it
** is needed: to keep it, or to decode a delta of it. */
int bw_decdeltastruct (Ctx *c, uint32_t t, int bidx) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first];
  const bw_Field *end = f + ty->count;
  int tbl, hasb = lua_istable(L, bidx);
  Frame *fr;
  if (!bw_decspend(c, 1 + (uint64_t)ty->count)) return 0;
  fr = enterframe(c);
  lua_createtable(L, 0, (int)ty->count);
  tbl = lua_gettop(L);
  for (; f < end; f++) {
    uint64_t changed;
    if (ty->versioned && !bw_fieldpresent(f, c->version)) {
      if (f->name != BW_NONE && f->hasdefault) {
        pushkey(c, f->name);
        bw_pushdefault(c, f);
        lua_rawset(L, tbl);
      }
      continue;
    }
    setframe(fr, f);
    if (f->name == BW_NONE) {  /* align or check */
      if (!decleaf(c, f)) return 0;
      continue;
    }
    changed = bw_readbits(&c->r, 1);
    if (c->r.status != BW_OK) return bw_readfail(c);
    pushkey(c, f->name);
    if (!changed) {
      int tt = LUA_TNIL;
      if (hasb) {
        pushkey(c, f->name);
        tt = lua_rawget(L, bidx);
      }
      else lua_pushnil(L);
      /* a scalar of a baseline this schema decoded is kept as it is */
      if (tt == LUA_TTABLE || tt == LUA_TNIL || c->checked == 0) {
        if (!keep(c, f, tbl + 2)) return 0;
        lua_replace(L, tbl + 2);
      }
    }
    else {
      uint64_t present = 1;
      if (f->optional) {
        present = bw_readbits(&c->r, 1);
        if (c->r.status != BW_OK) return bw_readfail(c);
      }
      if (!present) lua_pushnil(L);
      else if (f->kind < BW_KARRAY && !f->relative) {  /* no baseline needed */
        if (!decleaf(c, f)) return 0;
      }
      else {
        if (hasb) {
          pushkey(c, f->name);
          lua_rawget(L, bidx);
        }
        else lua_pushnil(L);
        if (!decdeltavalue(c, f, tbl + 2)) return 0;
        lua_remove(L, tbl + 2);
      }
    }
    lua_rawset(L, tbl);
  }
  c->nframes--;
  return 1;
}

/* }========================================================== */


/* {===================== decoded values and their schema ===================== */
/* Each schema keeps a weak-keyed table (a user value) from the tables its
** decode returned to their type id, when it decoded at the schema's own
** version. A delta against such a baseline, for the same type, keeps its
** values unchecked (they are values of the type already); any other
** baseline (built by hand, of another type, decoded under other definitions
** or at another version) has each kept value checked, the fields it lacks
** take their default and the fields the type lacks are dropped. A baseline
** is taken as it was decoded: a table changed by hand afterwards is the
** caller's to keep valid. */

/* Push the origins table of the schema at index 1. */
static void pushorigins (lua_State *L) {
  if (lua_getiuservalue(L, 1, UV_ORIGINS) == LUA_TTABLE) return;
  lua_pop(L, 1);
  lua_createtable(L, 0, 0);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_setiuservalue(L, 1, UV_ORIGINS);
}

/* 1 if the table at 'b' was decoded as type 't' by the schema at index 1
** at the version of 'c'. */
static int trusted (Ctx *c, uint32_t t, int b) {
  lua_State *L = c->L;
  int ok;
  if (c->version != c->S->version) return 0;
  pushorigins(L);
  lua_pushvalue(L, b);
  ok = lua_rawget(L, -2) == LUA_TNUMBER && lua_tointeger(L, -1) == (lua_Integer)t;
  lua_pop(L, 2);
  return ok;
}

/* Record (or, 'ok' == 0, forget) that the table at 'tbl' is a 't'. */
static void setorigin (Ctx *c, uint32_t t, int tbl, int ok) {
  lua_State *L = c->L;
  pushorigins(L);
  lua_pushvalue(L, tbl);
  if (ok && c->version == c->S->version) lua_pushinteger(L, (lua_Integer)t);
  else lua_pushnil(L);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

/* Make the table at 'into' hold the keys of the table on top, and put it
** on top instead: a delta decoded 'into' a table. */
static void moveinto (lua_State *L, int into) {
  int top = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, into)) {  /* clearing fields while traversing is
                                  allowed */
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    lua_pushnil(L);
    lua_rawset(L, into);
  }
  lua_pushnil(L);
  while (lua_next(L, top)) {
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, into);
  }
  lua_pushvalue(L, into);
  lua_replace(L, top);
}

/* Pushes the value (1) or returns 0 with the failure in 'c'. */
int bw_decodetop (Ctx *c, uint32_t t, int into, int b) {
  int ok;
  if (b) {
    c->checked = trusted(c, t, b);
    if (c->share && c->checked) c->share = 2;
    ok = bw_decdeltastruct(c, t, b);
    c->checked = 0;
    if (ok && into) moveinto(c->L, into);
  }
  else ok = bw_decstruct(c, t, into);
  if (ok == 2) lua_pushvalue(c->L, into);  /* refilled in place */
  if (ok) setorigin(c, t, lua_gettop(c->L), 1);
  else if (into) setorigin(c, t, into, 0);
  return ok != 0;
}

/* }========================================================== */
