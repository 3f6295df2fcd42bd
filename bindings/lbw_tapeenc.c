/*
** lbw_tapeenc.c - delta encode against a baseline's tape (lbw_tape.c): the
** bits of lbw_encdelta.c's walk, each field fetched from the value only
** See LICENSE for copyright and terms.
*/

#include <string.h>

#include "lauxlib.h"

#include "lbw_tape.h"

static int tapearray (Walk *w, const bw_Field *f, int idx, int bidx,
                      uint64_t *r);

/* A value sent whole where the baseline has none: its bits and its tape. */
static void sendwhole (Walk *w, const bw_Field *f, int v, int vt) {
  Ctx *c = w->c;
  bw_encvalue(c, f, v, vt);
  if (!bw_tapebuild(c, w->out, w->rout, f, v, vt))  /* it encoded: a value */
    bw_encerror(c, "value changed while encoded");
}

/* A changed scalar 'f': after the record's pending bits, its changed bit
** and an optional's presence bit; what it is follows. */
static INLINE void sendbits (Ctx *c, uint64_t *r, const bw_Field *f) {
  runflush(c, r);
  bw_writebits(c->w, f->optional ? 3 : 1, f->optional ? 2 : 1);
}

/* A changed scalar 'f' at 'v' (of Lua type 'vt'): after the record's
** pending bits, its changed bit (and an optional's presence bit) and its
** value, which raises where it is not one the field takes. */
static void sendleaf (Ctx *c, uint64_t *r, const bw_Field *f, int v, int vt) {
  sendbits(c, r, f);
  bw_encleaf(c, f, v, vt);
}

/* A changed relative scalar 'f' (a float or an angle): after the record's
** pending bits, its changed bit (and an optional's presence bit) and its
** code 'code' as a difference from the baseline's, 'base'. */
static void sendrel (Ctx *c, uint64_t *r, const bw_Field *f, uint64_t base,
                     uint64_t code) {
  sendbits(c, r, f);
  bw_writerelative(c, f, base, code, NULL, NULL);
}

/* A scalar's raw 'raw' (the walk keeps one for it) and its code 'code' of
** 'bits' bits on the value's tape. */
static INLINE void scalarput (Walk *w, uint64_t raw, uint64_t code,
                              unsigned bits) {
  rawput(w->c, w->rout, raw);
  w->rp++;
  put(w->c, w->out, code, bits);
}

/* The end of tapefield for a scalar compared whole ('same': unchanged):
** its changed bit, or sendleaf; then scalarput. Returns 1 if it changed. */
static INLINE int scalardone (Walk *w, uint64_t *r, const bw_Field *f, int v,
                              int vt, int same, uint64_t raw, uint64_t code,
                              unsigned bits) {
  if (same) runadd(w->c, r, 0, 1);
  else sendleaf(w->c, r, f, v, vt);  /* raises on what 'f' does not take */
  scalarput(w, raw, code, bits);
  return !same;
}

/* The changed bit and what changed of the value at 'v' (of Lua type 'vt',
** not nil) of field 'f' (of a tapeok type; an optional one present in both)
** against the baseline's at w->ip, 'r' holding the record's pending bits;
** 'btab': the baseline's own table for it (not the value's), or 0.
** Returns 1 if it changed. The bits are those of lbw_encdelta.c's
** encdeltafield and encdeltafixed, failures raised at the same bit. */
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
      if (vt != LUA_TTABLE) bw_enctype(c, v, "a table");
      if (btab && ((f->kind == BW_KSTRUCT
                    && !(c->tapes->ok[f->ref] & TAPENESTS))
                   || lua_type(L, btab) != LUA_TTABLE))
        btab = 0;  /* a record with no records or arrays: not needed */
      changed = f->kind == BW_KSTRUCT ? bw_tapeencstruct(w, f->ref, v, btab, r)
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
    case BW_KSPARSE:
      return bw_tapeencsparse(w, r, f, v, vt,
                              btab && lua_type(L, btab) == LUA_TTABLE ? btab : 0);
    case BW_KANGLE: {  /* compared by code, as bw_equalopt compares */
      uint64_t base = take(w, f->nbits), code = 0;
      double x = vt == LUA_TNUMBER ? (double)lua_tonumber(L, v) : 0;
      int valid = vt == LUA_TNUMBER && anglecode(f, x, &code);
      if (valid && code != base && f->relative) {
        sendrel(c, r, f, base, code);
        scalarput(w, rawof(x), code, f->nbits);
        return 1;
      }
      return scalardone(w, r, f, v, vt, valid && code == base, rawof(x),
                        code, f->nbits);
    }
    case BW_KFLOAT32: case BW_KFLOAT64: {  /* compared by code, as
                                              bw_equalopt compares */
      unsigned n = IEEEBITS(f);
      uint64_t base = take(w, n);
      double x = vt == LUA_TNUMBER ? (double)lua_tonumber(L, v) : 0;
      return scalardone(w, r, f, v, vt, ieeesame(w, f, base, vt, x), rawof(x),
                        ieeecode(f, x), n);
    }
    case BW_KTIERED: {  /* compared by value, as the walk over tables
                           compares it; an int's code on the tape */
      uint64_t base = take(w, f->nbits), code = 0;
      lua_Integer x = 0;
      int same = toint(c, v, vt, 0, &x) && intcode(c, f, x, 0, &code)
                 && code == base;
      return scalardone(w, r, f, v, vt, same, (uint64_t)x, code, f->nbits);
    }
    case BW_KQUAT: {  /* compared as the walk over tables compares it
                         (bw_equalopt); checked when sent. Numbers whose
                         raws are the baseline's have its code. */
      uint32_t q[4], bq[4];
      double x[4];
      int k, same;
      takequat(w, f, bq);
      same = quatsame(w, f, v, bq, q, x);
      if (same) runadd(c, r, 0, 1);
      else if (f->relative) {  /* a difference from the baseline's code */
        sendbits(c, r, f);
        bw_quatcode(c, f, v, q);  /* raises on what is not a quaternion */
        bw_writerelative(c, f, 0, 0, bq, q);
      }
      else {
        sendleaf(c, r, f, v, vt);  /* raises on what is not a quaternion */
        bw_quatvalue(c, f, v, 1, q);
      }
      for (k = 0; k < 4; k++) rawput(c, w->rout, rawof(x[k]));
      w->rp += 4;
      putquat(c, w->out, f, q);
      return !same;
    }
    case BW_KSTRING: case BW_KBYTES: {
      size_t len = 0, blen = (size_t)(take(w, f->nbits) + (uint64_t)f->min);
      const char *s = vt == LUA_TSTRING ? lua_tolstring(L, v, &len) : NULL;
      int same = s != NULL && len == blen
                 && bw_tapesamebytes(w->in, w->ip, s, len);
      w->ip += (uint64_t)blen * 8;
      if (same) runadd(c, r, 0, 1);
      else sendleaf(c, r, f, v, vt);  /* raises on what is not a string */
      bw_tapeputstr(c, w->out, f, s, len);
      return !same;
    }
    default: {  /* a raw equal to the baseline's takes its code */
      unsigned bits = fixedbits(f);
      uint64_t raw = 0, code = 0, base = take(w, bits);
      if (!fixedraw(c, f, v, vt, 0, &raw)
          || !codeagainst(w, f, raw, base, &code)) {  /* raise where the */
        if (deltafixed(f)) fixedvalue(c, f, v, vt);  /* walk over tables */
        sendleaf(c, r, f, v, vt);                    /* does */
      }
      rawput(c, w->rout, raw);
      w->rp++;
      put(c, w->out, code, bits);
      if (code == base) {
        runadd(c, r, 0, 1);
        return 0;
      }
      if (f->relative) sendrel(c, r, f, base, code);
      else {
        runadd(c, r, f->optional ? 3 : 1, f->optional ? 2 : 1);
        runadd(c, r, code, bits);
      }
      return 1;
    }
  }
}

/* Room on the stack for 'n' values above 'top', made once a walk. */
static INLINE void walkroom (Walk *w, int top, int n) {
  if (top + n <= w->room) return;
  if (!lua_checkstack(w->c->L, n)) bw_encerror(w->c, "stack overflow");
  w->room = top + n;
}

/* Elements 1..m of the array at 'idx' of fixed scalars 'e', each against
** the baseline's (tapefield's bits): a raw equal to the baseline's takes
** its code. In blocks whose tape room is made once, the loop keeping its
** positions and pending bits in locals (the Lua calls between would make
** the compiler reload them from memory); an element missing or refused
** goes by tapefield, which raises at its bit. Returns 1 if any changed. */
static int tapescalars (Walk *w, const bw_Field *e, int idx, lua_Integer m,
                        uint64_t *r) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  TapeBuf *out = w->out;
  const uint64_t *in = w->in, *rin = w->rin;
  unsigned bits = fixedbits(e);
  int changed = 0, top = lua_gettop(L);
  lua_Integer i = 1;
  Frame *fr;
  pushframe(c, BW_NONE, 1);
  fr = &c->frames[c->nframes - 1 < MAXFRAMES ? c->nframes - 1 : MAXFRAMES - 1];
  walkroom(w, top, 64);
  while (i <= m) {
    lua_Integer end = m - i < 63 ? m : i + 63, s0 = i, stop, k;
    int v = top, same = rin != NULL, bad = 0;
    uint64_t need = ((out->pos + (uint64_t)(end - i + 1) * bits) >> 6) + 2;
    uint64_t ip = w->ip, rp = w->rp, op, acc = *r, *os, rv[64];
    unsigned pend = c->pending;
    int et = LUA_TNIL;
    if (need > out->cap) bw_tapegrow(c, out, (size_t)need);
    for (; i <= end; i++) {  /* the raws; popped once a run: settop per
                                value costs */
      et = lua_rawgeti(L, idx, i);
      if (et == LUA_TNIL || !fixedraw(c, e, ++v, et, 0, &rv[i - s0])) break;
      if (same) same = rv[i - s0] == rin[rp + (uint64_t)(i - s0)];
    }
    stop = i;  /* [s0, stop) fetched; 'stop' (on top) missing or refused */
    os = out->s;
    op = out->pos;
    if (same && stop > s0) {  /* the baseline's raws: its codes, copied */
      uint64_t n = (uint64_t)(stop - s0) * bits, b;
      for (; n > 0; n -= b, ip += b, op += b) {
        b = n < 64 ? (unsigned)n : 64;
        putat(os, op, get(in, ip, (unsigned)b), (unsigned)b);
      }
      for (k = stop - s0; k > 0; k -= 32)  /* a changed bit of 0 each */
        runaddto(c, &acc, &pend, 0, k < 32 ? (unsigned)k : 32);
    }
    else for (k = s0; k < stop; k++) {
      uint64_t raw = rv[k - s0], code = 0, base = get(in, ip, bits);
      if (rin != NULL && raw == rin[rp + (uint64_t)(k - s0)]) code = base;
      else if (!rawcode(c, e, raw, 0, &code)) {  /* out of range: raised */
        stop = k;                                /* at its own bit */
        bad = 1;
        break;
      }
      ip += bits;
      putat(os, op, code, bits);  /* in the room made above */
      op += bits;
      if (code == base) runaddto(c, &acc, &pend, 0, 1);
      else {
        runaddto(c, &acc, &pend, 1, 1);
        runaddto(c, &acc, &pend, code, bits);
        changed = 1;
      }
    }
    if (w->rout != NULL) {
      memcpy(rawroom(c, w->rout, (size_t)(stop - s0)), rv,
             (size_t)(stop - s0) * sizeof(rv[0]));
      w->rout->pos += (uint64_t)(stop - s0);
    }
    w->ip = ip;
    w->rp = rp + (uint64_t)(stop - s0);
    out->pos = op;
    *r = acc;
    c->pending = pend;
    if (bad || stop <= end) {  /* element 'stop' missing or refused */
      fr->index = stop;
      if (!bad && et == LUA_TNIL) bw_encerror(c, "missing");
      changed |= tapefield(w, r, e, top + 1 + (int)(stop - s0),
                           bad ? lua_type(L, top + 1 + (int)(stop - s0)) : et, 0);
      i = stop + 1;
    }
    lua_settop(L, top);
  }
  popframe(c);
  return changed;
}

/* An array (a table: tapefield checks) against the baseline's (see
** lbw_encdelta.c's encdeltaarray); returns 1 if anything changed. */
static int tapearray (Walk *w, const bw_Field *f, int idx, int bidx,
                      uint64_t *r) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer i, n, bn = (lua_Integer)(take(w, f->nbits) + (uint64_t)f->min);
  int changed, top = lua_gettop(L), tables = e->kind == BW_KSTRUCT && bidx;
  Kept kept = { NONE, 0 };
  lua_Integer probe = 1;  /* the next element checked for sharing */
  int hits = 0, btab;
  n = (lua_Integer)lua_rawlen(L, idx);
  bw_checklen(c, f, (size_t)n, "count");
  runadd(c, r, (uint64_t)n - (uint64_t)f->min, f->nbits);
  put(c, w->out, (uint64_t)n - (uint64_t)f->min, f->nbits);
  changed = n != bn;
  i = 1;
  if (fixedscalar(e) && !e->relative) {  /* no sharing to look for: the
                                            tight loop */
    i = n < bn ? n : bn;
    changed |= tapescalars(w, e, idx, i, r);
    i++;
  }
  for (; i <= n; i++) {
    int et;
    pushframe(c, BW_NONE, i);
    et = lua_rawgeti(L, idx, i);
    if (et == LUA_TNIL) bw_encerror(c, "missing");
    if (i <= bn) {
      int shared = 0;
      btab = 0;
      if (tables && i >= probe) {
        /* an array of fresh tables shares none: until one element is, only
        ** every PROBE-th is checked (the others are compared: same bits) */
        lua_rawgeti(L, bidx, i);
        btab = top + 2;
        shared = et == LUA_TTABLE && !c->strict  /* strict walks it */
                 && lua_topointer(L, top + 1) == lua_topointer(L, btab);
        hits |= shared;
        probe = hits ? i + 1 : i + PROBE;
      }
      if (shared) {
        /* shared with the baseline: unchanged; the bits of a run of them
        ** are copied at once */
        runadd(c, r, 0, 1);
        keepfrom(w, &kept);
        bw_tapeskip(w, e);
      }
      else {
        keepbits(w, &kept);
        changed |= tapefield(w, r, e, top + 1, et, btab);
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
  for (; i <= bn; i++) bw_tapeskip(w, e);  /* the baseline's past 'n' */
  return changed;
}

int bw_tapeencarray (Walk *w, const bw_Field *f, int idx, int bidx,
                     uint64_t *r) {
  return tapearray(w, f, idx, bidx, r);
}

/* taperun's fields one by one, when a value is missing or refused: a
** failure raises at its own bit. */
static NOINLINE int runfields (Walk *w, uint64_t *r, Frame *fr,
                               const bw_Field *f, int v, const int *tt) {
  unsigned j;
  int changed = 0;
  for (j = 0; j < f->fuse; j++) {
    int vt = tt[j];
    fr->name = f[j].name;
    if (vt == LUA_TNIL) vt = fielddefault(w->c, &f[j], v + (int)j);
    changed |= tapefield(w, r, &f[j], v + (int)j, vt, 0);
  }
  return changed;
}

/* Push the values of the fused run at 'f' in the record at 'idx' from
** its 'j'-th field on, their Lua types in tt[j], tt[j + 1], ... */
static INLINE void fetchrun (Ctx *c, const bw_Field *f, int idx, int *tt,
                             unsigned j) {
  for (; j < f->fuse; j++) {
    pushkey(c, f[j].name);
    tt[j] = lua_rawget(c->L, idx);
  }
}

/* runfields, once taperun has fetched the values before the 'j'-th. */
static NOINLINE int runrest (Walk *w, uint64_t *r, Frame *fr,
                             const bw_Field *f, int idx, int v, int *tt,
                             unsigned j) {
  fetchrun(w->c, f, idx, tt, j);
  return runfields(w, r, fr, f, v, tt);
}

/* The changed bits and changed codes of taperun's fields, their codes in
** 'acc', the baseline's in 'base' (which differ). */
static NOINLINE void runchanges (Ctx *c, uint64_t *r, const bw_Field *f,
                                 uint64_t acc, uint64_t base) {
  unsigned j, sh = 0;
  for (j = 0; j < f->fuse; j++) {
    unsigned b = fixedbits(&f[j]);
    uint64_t m = b < 64 ? ((uint64_t)1 << b) - 1 : ~(uint64_t)0;
    uint64_t cj = (acc >> sh) & m, bj = (base >> sh) & m;
    if (cj == bj) runadd(c, r, 0, 1);
    else if (f[j].relative) sendrel(c, r, &f[j], bj, cj);
    else {
      runadd(c, r, 1, 1);
      runadd(c, r, cj, b);
    }
    sh += b;
  }
}

/* The fused run [f, f + f->fuse) of fixed scalars of the record at 'idx',
** its values pushed to 'v', v + 1, ...: compared as one code with the
** baseline's when every value is one the fields take; else field by field.
** Against a baseline's raws, a run whose raws are all the baseline's has
** its codes: nothing is range-checked or quantized. Returns 1 if any
** changed. The slow paths stay out of line, so the loop keeps its code in
** registers. */
static INLINE int taperun (Walk *w, uint64_t *r, Frame *fr, const bw_Field *f,
                           int idx, int v) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  unsigned k = f->fuse, bits = f->fusebits, j, sh = 0;
  uint64_t acc = 0, base, diff = 1, *raw = NULL;
  int tt[MAXFUSE];
  if (w->rin != NULL) {  /* each value fetched and compared in turn */
    const uint64_t *braw = w->rin + w->rp;
    raw = rawroom(c, w->rout, k);
    for (j = 0, diff = 0; j < k; j++) {
      pushkey(c, f[j].name);
      tt[j] = lua_rawget(L, idx);
      if (tt[j] == LUA_TNIL
          || !fixedraw(c, &f[j], v + (int)j, tt[j], 0, &raw[j]))
        return runrest(w, r, fr, f, idx, v, tt, j + 1);
      diff |= raw[j] ^ braw[j];
    }
  }
  else fetchrun(c, f, idx, tt, 0);
  for (j = 0; diff != 0 && j < k; j++) {  /* the codes, unless the raws
                                             are the baseline's */
    uint64_t code;
    if (raw != NULL ? !rawcode(c, &f[j], raw[j], 0, &code)
        : tt[j] == LUA_TNIL
          || !fixedcode(c, &f[j], v + (int)j, tt[j], 0, &code))
      return runfields(w, r, fr, f, v, tt);
    acc |= code << sh;
    sh += fixedbits(&f[j]);
  }
  if (raw != NULL) {
    w->rp += k;
    w->rout->pos += k;
  }
  base = take(w, bits);
  if (diff == 0) acc = base;  /* the baseline's raws: its codes */
  put(c, w->out, acc, bits);
  if (acc != base) {
    runchanges(c, r, f, acc, base);
    return 1;
  }
  for (; k > 0; k -= j) {  /* k changed bits of 0 (zero-bit fields: k may
                              pass 64) */
    j = k < 32 ? k : 32;
    runadd(c, r, 0, j);
  }
  return 0;
}

/* A record against the baseline's tape (see lbw_encdelta.c's deltastruct;
** the same bits), at 'idx' (a table: the callers know its type); 'bidx':
** the baseline's table, or 0. Returns 1 if any field changed. */
int bw_tapeencstruct (Walk *w, uint32_t t, int idx, int bidx, uint64_t *r) {
  Ctx *c = w->c;
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first];
  const bw_Field *end = f + ty->count;
  int top = lua_gettop(L), changed = 0, v = top + 1;
  Frame *fr;
  walkroom(w, top, 2 * BATCH + MAXFUSE + 8);  /* once per array */
  fr = enterframe(c);
  fr->index = 0;
  for (; f < end; f++) {
    int vt, btab = 0;
    if (ty->versioned && !bw_fieldpresent(f, c->version)) continue;
    fr->name = f->name;
    if (f->name == BW_NONE) {  /* align or check: written in place, as the
                                  walk over tables writes it */
      runflush(c, r);
      setframe(fr, f);
      bw_encleaf(c, f, 0, LUA_TNONE);
      fr->index = 0;
      continue;
    }
    if (v > top + 2 * BATCH) {  /* the stack holds BATCH fields at most */
      lua_settop(L, top);
      v = top + 1;
    }
    if (f->fuse > 1) {  /* fixed scalars, unversioned, none optional */
      changed |= taperun(w, r, fr, f, idx, v);
      v += f->fuse;
      f += f->fuse - 1;
      continue;
    }
    pushkey(c, f->name);
    vt = lua_rawget(L, idx);
    if (vt == LUA_TNIL && !f->optional) vt = fielddefault(c, f, v);
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
        if (vt == LUA_TNIL) bw_tapeskip(w, f);
        else sendwhole(w, f, v - 1, vt);
        changed = 1;
        continue;
      }
    }
    if (bidx && (f->kind == BW_KSTRUCT || f->kind == BW_KARRAY
                 || f->kind == BW_KSPARSE)) {
      pushkey(c, f->name);
      lua_rawget(L, bidx);
      btab = v + 1;
      if (vt == LUA_TTABLE && !c->strict  /* strict walks it */
          && lua_topointer(L, v) == lua_topointer(L, btab)) {
        runadd(c, r, 0, 1);  /* shared with the baseline: unchanged */
        bw_tapecopy(w, f);
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
