/*
** lbw_tape.c - deltas against tapes: the codes a baseline was sent or
** received as, so a delta reads each field from one table only
** See LICENSE for copyright and terms.
*/

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"

#include "lbw_tape.h"

/* {===================== which types take tapes ===================== */

enum { TUNKNOWN, TVISITING, TYES, TNO };

static int typeok (const bw_Schema *S, uint8_t *ok, uint32_t t);

/* Every kind takes a tape. A type that held itself would not (a cycle:
** the compiler refuses them). */
static int fieldok (const bw_Schema *S, uint8_t *ok, const bw_Field *f) {
  if (fixedscalar(f) || f->kind == BW_KSTRING || f->kind == BW_KBYTES
      || f->kind == BW_KQUAT
      || f->kind == BW_KANGLE || f->kind == BW_KFLOAT32
      || f->kind == BW_KFLOAT64 || f->kind == BW_KTIERED)
    return 1;
  if (f->kind == BW_KSTRUCT) return typeok(S, ok, f->ref);
  if (f->kind == BW_KARRAY || f->kind == BW_KSPARSE) {
    const bw_Field *e = &S->fields[f->ref];
    return !e->optional && fieldok(S, ok, e);
  }
  return 0;
}

static int typeok (const bw_Schema *S, uint8_t *ok, uint32_t t) {
  const bw_Type *ty = &S->types[t];
  uint32_t i;
  if (ok[t] != TUNKNOWN) return ok[t] == TYES;  /* TVISITING: a cycle */
  ok[t] = TVISITING;
  for (i = 0; i < ty->count; i++)
    if (S->fields[ty->first + i].name != BW_NONE  /* align, check: no value */
        && !fieldok(S, ok, &S->fields[ty->first + i])) {
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
      if (S->fields[i].kind == BW_KSTRUCT || S->fields[i].kind == BW_KARRAY
          || S->fields[i].kind == BW_KSPARSE)
        tp->ok[t] |= TAPENESTS;
  }
}

void bw_tapesfree (Tapes *tp) {
  free(tp->out.s);
  free(tp->base.s);
  free(tp->rout.s);
  free(tp->rbase.s);
  free(tp->in.s);
  free(tp->sout.s);
  free(tp->srout.s);
  free(tp->slots.s);
  free(tp->ok);
  memset(tp, 0, sizeof(*tp));
}

/* }========================================================== */


/* {===================== packing ===================== */

void bw_tapegrow (Ctx *c, TapeBuf *b, size_t words) {
  size_t cap = b->cap > 0 ? b->cap : 64, old = b->s != NULL ? b->cap : 0;
  uint64_t *s;
  while (cap < words) {
    if (cap > ((size_t)-1 / sizeof(uint64_t)) / 2)
      luaL_error(c->L, "not enough memory");
    cap *= 2;
  }
  s = (uint64_t *)realloc(b->s, (cap + TAPEPAD) * sizeof(uint64_t));
  if (s == NULL) luaL_error(c->L, "not enough memory");
  memset(s + old, 0, (cap + TAPEPAD - old) * sizeof(uint64_t));
  b->s = s;
  b->cap = cap;
}

void bw_tapeputstr (Ctx *c, TapeBuf *b, const bw_Field *f, const char *s,
                    size_t len) {
  put(c, b, (uint64_t)len - (uint64_t)f->min, f->nbits);
  for (; len >= 8; len -= 8, s += 8) put(c, b, chunk(s, 8), 64);
  if (len > 0) put(c, b, chunk(s, len), (unsigned)len * 8);
}

/* 1 if the 'len' bytes at bit 'pos' of 's' are those at 'p'. */
int bw_tapesamebytes (const uint64_t *s, uint64_t pos, const char *p,
                      size_t len) {
  for (; len >= 8; len -= 8, p += 8, pos += 64)
    if (get(s, pos, 64) != chunk(p, 8)) return 0;
  return len == 0 || get(s, pos, (unsigned)len * 8) == chunk(p, len);
}

int bw_tapesamebits (const uint64_t *a, uint64_t pa, const uint64_t *b,
                     uint64_t pb, uint64_t n) {
  for (; n >= 64; n -= 64, pa += 64, pb += 64)
    if (get(a, pa, 64) != get(b, pb, 64)) return 0;
  return n == 0 || get(a, pa, (unsigned)n) == get(b, pb, (unsigned)n);
}

/* Copy the 'n' bits at bit 'pos' of 's': room made once, then a word at
** a time (a run of kept elements is many words). */
void bw_tapeputbits (Ctx *c, TapeBuf *b, const uint64_t *s, uint64_t pos,
                     uint64_t n) {
  size_t i = (size_t)(b->pos >> 6), words = (size_t)(n >> 6);
  unsigned off = (unsigned)(b->pos & 63), soff = (unsigned)(pos & 63);
  const uint64_t *p = s + (pos >> 6);
  size_t k;
  if (i + words + 2 > b->cap) bw_tapegrow(c, b, i + words + 2);
  for (k = 0; k < words; k++, i++, p++) {
    uint64_t v = soff == 0 ? p[0] : p[0] >> soff | p[1] << (64 - soff);
    if (off == 0) b->s[i] = v;  /* the bits past 'pos' stay 0 */
    else {
      b->s[i] |= v << off;
      b->s[i + 1] = v >> (64 - off);
    }
  }
  b->pos += (uint64_t)words * 64;
  pos += (uint64_t)words * 64;
  n &= 63;
  if (n > 0) put(c, b, get(s, pos, (unsigned)n), (unsigned)n);
}

/* }========================================================== */


/* {===================== tapes of tables ===================== */

static int buildstruct (Ctx *c, TapeBuf *b, TapeBuf *r, uint32_t t, int idx);

/* Append the tape of the sparse array at 'v' (a table) of field 'f': its
** present slots (see lbw_encsparse.c). A key that is no slot makes it no
** value of the field, as the encoder refuses it. */
static int buildsparse (Ctx *c, TapeBuf *b, TapeBuf *r, const bw_Field *f,
                        int v) {
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  lua_Integer i, n = (lua_Integer)f->max, *list = NULL, any;
  unsigned ibits = SLOTBITS(f);
  int top = lua_gettop(L), ok = 1;
  int mine = c->tapes->asbase == TAPEOFDECODE;  /* other keys: the caller's */
  size_t k, m = 0;
  if (!lua_checkstack(L, 4)) luaL_error(L, "stack overflow");
  if (n > MAPSLOTS) {
    list = bw_sparsekeys(L, v, 0, n, &m, &any);
    ok = mine || (size_t)any == m;
  }
  else ok = mine || bw_sparseslotsonly(L, v, n);
  for (i = 1, k = 0; ok && (list == NULL ? i <= n : k < m); i++, k++) {
    int et;
    if (list != NULL) i = list[k];
    et = lua_rawgeti(L, v, i);
    if (et != LUA_TNIL) {
      putslot(c, b, i, ibits);
      ok = bw_tapebuild(c, b, r, e, lua_gettop(L), et);
    }
    lua_pop(L, 1);
  }
  lua_settop(L, top);
  putslotsend(c, b);
  return ok;
}

int bw_tapebuild (Ctx *c, TapeBuf *b, TapeBuf *r, const bw_Field *f, int v,
                  int vt) {
  lua_State *L = c->L;
  switch (f->kind) {
    case BW_KSTRING: case BW_KBYTES: {
      size_t len;
      const char *s;
      if (vt != LUA_TSTRING) return 0;
      s = lua_tolstring(L, v, &len);
      if (!bytesfit(c, f, s, len)) return 0;
      bw_tapeputstr(c, b, f, s, len);
      return 1;
    }
    case BW_KSTRUCT:
      return vt == LUA_TTABLE && buildstruct(c, b, r, f->ref, v);
    case BW_KSPARSE:
      return vt == LUA_TTABLE && buildsparse(c, b, r, f, v);
    case BW_KANGLE: {  /* its number as its raw */
      double x = (double)lua_tonumber(L, v);
      uint64_t code;
      if (vt != LUA_TNUMBER || !anglecode(f, x, &code)) return 0;
      put(c, b, code, f->nbits);
      rawput(c, r, rawof(x));
      return 1;
    }
    case BW_KFLOAT32: case BW_KFLOAT64: {  /* its number as its raw */
      double x = (double)lua_tonumber(L, v);
      if (vt != LUA_TNUMBER) return 0;
      put(c, b, ieeecode(f, x), IEEEBITS(f));
      rawput(c, r, rawof(x));
      return 1;
    }
    case BW_KTIERED: {  /* an int's code (tiered takes no clamp); the
                           integer as its raw */
      lua_Integer x = 0;
      uint64_t code;
      if (!toint(c, v, vt, 0, &x) || !intcode(c, f, x, 0, &code)) return 0;
      put(c, b, code, f->nbits);
      rawput(c, r, (uint64_t)x);
      return 1;
    }
    case BW_KQUAT: {  /* its four numbers as its raws; a value only as
                         the encoder takes it (four numbers, a length) */
      uint32_t q[4];
      double x[4];
      int k;
      if (!bw_quatvalue(c, f, v, 0, q)) return 0;
      bw_quatnums(L, v, x);
      putquat(c, b, f, q);
      for (k = 0; k < 4; k++) rawput(c, r, rawof(x[k]));
      return 1;
    }
    case BW_KARRAY: {
      const bw_Field *e = &c->S->fields[f->ref];
      lua_Integer i, n;
      if (vt != LUA_TTABLE) return 0;
      if (c->tapes->asbase == TAPEOFVALUE) n = (lua_Integer)lua_rawlen(L, v);
      else if (!bw_arraybase(L, v, &n)
               || (c->tapes->asbase == TAPEOFBASE && !bw_arrayclean(L, v, n)))
        return 0;  /* a baseline's, with holes: the walk over tables */
      if (!lenfits(c, f, (size_t)n, "count", 0)) return 0;
      put(c, b, (uint64_t)n - (uint64_t)f->min, f->nbits);
      for (i = 1; i <= n; i++) {
        int et = lua_rawgeti(L, v, i), ok;
        ok = et != LUA_TNIL && bw_tapebuild(c, b, r, e, lua_gettop(L), et);
        lua_pop(L, 1);
        if (!ok) return 0;
      }
      return 1;
    }
    default: {
      uint64_t raw, code;
      if (!fixedraw(c, f, v, vt, 0, &raw) || !rawcode(c, f, raw, 0, &code))
        return 0;
      put(c, b, code, fixedbits(f));
      rawput(c, r, raw);
      return 1;
    }
  }
}

/* Append the tape of the record at 'idx' of type 't' (a tapeok type), as
** the walks over tables read a baseline: a missing field takes its
** default. 0 when the table is not a value of the type. */
static int buildstruct (Ctx *c, TapeBuf *b, TapeBuf *r, uint32_t t, int idx) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first], *end = f + ty->count;
  for (; f < end; f++) {
    int vt, ok;
    if (f->name == BW_NONE  /* align, check: on the wire only */
        || (ty->versioned && !bw_fieldpresent(f, c->version)))
      continue;
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
    ok = bw_tapebuild(c, b, r, f, lua_gettop(L), vt);
    lua_pop(L, 1);
    if (!ok) return 0;
  }
  return 1;
}

/* }========================================================== */


/* {===================== reading a baseline's tape ===================== */

/* Step over the baseline's value of 'f' (past an optional's presence),
** and its raws. */
void bw_tapeskip (Walk *w, const bw_Field *f) {
  const bw_Schema *S = w->c->S;
  switch (f->kind) {
    case BW_KSTRING: case BW_KBYTES:
      w->ip += (take(w, f->nbits) + (uint64_t)f->min) * 8;
      return;
    case BW_KQUAT:
      w->ip += QUATBITS(f);
      w->rp += 4;
      return;
    case BW_KFLOAT32: case BW_KFLOAT64:
      w->ip += IEEEBITS(f);
      w->rp++;
      return;
    case BW_KSTRUCT: {
      const bw_Type *ty = &S->types[f->ref];
      const bw_Field *g = &S->fields[ty->first], *end = g + ty->count;
      for (; g < end; g++) {
        if (g->fuse > 1) {  /* fixed scalars, unversioned: one step */
          w->ip += g->fusebits;
          w->rp += g->fuse;
          g += g->fuse - 1;
          continue;
        }
        if (g->name == BW_NONE  /* align, check */
            || (ty->versioned && !bw_fieldpresent(g, w->c->version)))
          continue;
        if (g->optional && !take(w, 1)) continue;
        bw_tapeskip(w, g);
      }
      return;
    }
    case BW_KARRAY: {
      const bw_Field *e = &S->fields[f->ref];
      uint64_t n = take(w, f->nbits) + (uint64_t)f->min;
      if (fixedscalar(e)) {
        w->ip += n * fixedbits(e);
        w->rp += n;
      }
      else while (n-- > 0) bw_tapeskip(w, e);
      return;
    }
    case BW_KSPARSE: {
      const bw_Field *e = &S->fields[f->ref];
      unsigned ibits = SLOTBITS(f);
      lua_Integer n = (lua_Integer)f->max;
      while (nextslot(w, ibits, n) <= n) bw_tapeskip(w, e);
      return;
    }
    default:
      w->ip += fixedbits(f);
      w->rp++;
  }
}

/* Copy the baseline's value of 'f', unchanged, to the value's tape. */
void bw_tapecopy (Walk *w, const bw_Field *f) {
  Kept k = { NONE, 0 };
  keepfrom(w, &k);
  bw_tapeskip(w, f);
  keepbits(w, &k);
}

/* }========================================================== */


static const Tape *basetape (Ctx *c, uint32_t t, int bidx,
                             const uint64_t **in, int raws);

/* The Lua state keeps one weak-keyed table of what its schemas know of
** tables, an entry a table, the last schema's to decode or encode it: a
** table a decode returned, when it decoded at the schema's own version,
** maps to the schema's id and its type (knownmark); a table with a tape
** maps to the tape, which says the same in 'owner' and 'decoded'. A delta against a table decoded as its
** type keeps its values unchecked (they are values of the type already);
** any other baseline (built by hand, of another type, decoded under other
** definitions or at another version) has each kept value checked, the
** fields it lacks take their default and the fields the type lacks are
** dropped (lbw_decdelta.c). A baseline is taken as it was decoded: a table
** changed by hand afterwards is the caller's to keep valid. One table
** makes one entry per decoded value, and one lookup per baseline. */

/* The entry of a table this schema decoded as type 't'; -1 (no entry is)
** for a type id too large for it. */
static lua_Integer knownmark (const Ctx *c, uint32_t t) {
  if (t >> KNOWNTYPEBITS != 0) return -1;
  return c->self << KNOWNTYPEBITS | (lua_Integer)t;
}

/* 1 if the known entry on top (a type id or a tape) says its table is
** what a decode of this schema made as type 't'. */
static int decodedentry (Ctx *c, uint32_t t, int type) {
  lua_State *L = c->L;
  if (type == LUA_TNUMBER) return lua_tointeger(L, -1) == knownmark(c, t);
  if (type == LUA_TUSERDATA) {
    const Tape *tape = (const Tape *)lua_touserdata(L, -1);
    return tape->decoded && tape->owner == c->self && tape->type == t
           && tape->version == c->S->version;
  }
  return 0;
}

int bw_decodedas (Ctx *c, uint32_t t, int b, const Tape **tape, int hold) {
  lua_State *L = c->L;
  int ok, type;
  *tape = NULL;
  if (c->version != c->S->version) return 0;
  bw_pushknown(L);
  lua_pushvalue(L, b);
  type = lua_rawget(L, -2);
  ok = decodedentry(c, t, type);
  /* its key, 'b', keeps the tape while its entry stays; the slot 'hold',
  ** whatever another schema's call makes of the entry */
  if (ok && type == LUA_TUSERDATA) {
    *tape = (const Tape *)lua_touserdata(L, -1);
    if (hold != 0) lua_copy(L, -1, hold);
  }
  lua_pop(L, 2);
  return ok;
}

void bw_setdecoded (Ctx *c, uint32_t t, int tbl, int ok) {
  lua_State *L = c->L;
  lua_Integer mark = knownmark(c, t);
  bw_pushknown(L);
  lua_pushvalue(L, tbl);
  if (ok && c->version == c->S->version && mark >= 0) lua_pushinteger(L, mark);
  else lua_pushnil(L);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

/* Copy the 'n' words at 'src' to word 'at' of 'tape' (NULL 'src':
** zeros). */
static void tapefill (Tape *tape, size_t at, const uint64_t *src, size_t n) {
  while (n > 0) {
    size_t off = at % TAPEWORDS;
    size_t m = tape->nchunks == 0 || n < TAPEWORDS - off ? n
               : TAPEWORDS - off;
    uint64_t *p = tape->nchunks > 0 ? piece(tape, at / TAPEWORDS) + off
                                    : tape->s + at;
    if (src != NULL) memcpy(p, src, m * sizeof(uint64_t));
    else memset(p, 0, m * sizeof(uint64_t));
    if (src != NULL) src += m;
    at += m;
    n -= m;
  }
}

/* The words of 'tape': its own, or its pieces gathered in c->tapes->in
** (valid until the next gather), which a baseline sent to several peers
** in turn finds gathered already. */
static const uint64_t *tapewords (Ctx *c, const Tape *tape) {
  Tapes *tp = c->tapes;
  TapeBuf *in = &tp->in;
  size_t words = (size_t)(tape->bits >> 6) + 1 + (size_t)tape->nraws, k;
  if (tape->nchunks == 0) return tape->s;
  if (tape->stamp == tp->instamp) return in->s;
  tp->instamp = 0;  /* until gathered */
  if (words > in->cap) bw_tapegrow(c, in, words);
  for (k = 0; k < tape->nchunks; k++) {
    size_t n = words - k * TAPEWORDS;
    memcpy(in->s + k * TAPEWORDS, piece(tape, k),
           (n < TAPEWORDS ? n : TAPEWORDS) * sizeof(uint64_t));
  }
  tp->instamp = tape->stamp;
  return in->s;
}

/* keeptape's 'again': a new tape; or the memory of the table's own tape
** (when the same shape) written again, 'decoded' what its entry said (a
** table encoded again) or as given (a delta decoded into the table). */
enum { KEEPNEW, KEEPAGAIN, KEEPINTO };

/* Keep the tape in 'b' and its raws in 'r' (NULL: none) for the table at
** 'idx', in the known table at 'tapes'; 'decoded': a decode of this schema
** made the table (with KEEPAGAIN, what its entry said; decodedentry alone
** asks for the schema's version, which the tape records). Returns the kept
** tape (a userdata left on the stack). */
static Tape *keeptape (Ctx *c, int tapes, int idx, uint32_t t,
                       const TapeBuf *b, const TapeBuf *r, int again,
                       int decoded) {
  lua_State *L = c->L;
  size_t words = (size_t)(b->pos >> 6) + 1;  /* the codes' words, as
                                               tapewords counts them */
  size_t nraws = r != NULL ? (size_t)r->pos : 0, n, size, k;
  uint32_t nchunks;
  Tape *tape = NULL;
  if (nraws > (size_t)-1 / sizeof(uint64_t) - words - TAPEWORDS)
    luaL_error(L, "not enough memory");
  n = words + nraws + TAPEPAD;
  nchunks = n <= TAPEWORDS || n > TAPEWORDS * MAXCHUNKS
            ? 0 : (uint32_t)((n + TAPEWORDS - 1) / TAPEWORDS);
  size = sizeof(Tape) + (nchunks > 0 ? nchunks : n) * sizeof(uint64_t);
  if (again != KEEPNEW) {  /* a table encoded again (to each peer against
                             its own baseline), or decoded into: its tape's
                             memory, when it is the same shape */
    int type;
    lua_Integer owner;
    lua_pushvalue(L, idx);
    type = lua_rawget(L, tapes);
    if (again == KEEPAGAIN) decoded = decodedentry(c, t, type);
    owner = type == LUA_TUSERDATA ? ((Tape *)lua_touserdata(L, -1))->owner : 0;
    if (type == LUA_TUSERDATA  /* its own: another schema's call may be
                                  walking the tape it made */
        && (owner == c->self || (again == KEEPINTO && owner == -c->self))
        && ((Tape *)lua_touserdata(L, -1))->nchunks == nchunks
        && (nchunks > 0 || lua_rawlen(L, -1) >= size))
      tape = (Tape *)lua_touserdata(L, -1);
    else lua_pop(L, 1);
  }
  if (tape == NULL) {
    tape = (Tape *)lua_newuserdatauv(L, size, (int)nchunks);
    for (k = 0; k < nchunks; k++) {
      void *p = lua_newuserdatauv(L, TAPEWORDS * sizeof(uint64_t), 0);
      memcpy(&tape->s[k], &p, sizeof(p));
      lua_setiuservalue(L, -2, (int)k + 1);
    }
    tape->nchunks = nchunks;
    lua_pushvalue(L, idx);
    lua_pushvalue(L, -2);
    lua_rawset(L, tapes);
  }
  tape->owner = c->self;
  tape->type = t;
  tape->version = c->version;
  tape->decoded = decoded;
  tape->bits = b->pos;
  tape->nraws = nraws;
  tape->raws = r != NULL;
  tape->stamp = ++c->tapes->stamps;
  tapefill(tape, 0, b->s, (size_t)((b->pos + 63) >> 6));
  if ((b->pos & 63) == 0) tapefill(tape, words - 1, NULL, 1);
  if (nraws > 0) tapefill(tape, words, r->s, nraws);
  tapefill(tape, n - TAPEPAD, NULL, TAPEPAD);
  return tape;
}

/* A walk against 'base' (its words at 'in'), writing the value's tape from
** its start, and its raws when 'raws' and the baseline has them. */
static void startwalk (Walk *w, Ctx *c, const Tape *base,
                       const uint64_t *in, int raws) {
  w->c = c;
  w->out = &c->tapes->out;
  w->in = in;
  w->ip = 0;
  w->out->pos = 0;
  c->tapes->asbase = TAPEOFVALUE;  /* the walk's are values' */
  w->room = 0;
  w->rp = 0;
  c->tapes->slots.pos = 0;
  w->rin = NULL;
  w->rout = NULL;
  if (raws && base->raws) {
    w->rin = in + (size_t)(base->bits >> 6) + 1;
    w->rout = &c->tapes->rout;
    w->rout->pos = 0;
  }
}

int bw_tapevalue (Ctx *c, uint32_t t, int idx) {
  Tapes *tp = c->tapes;
  tp->base.pos = 0;
  tp->asbase = TAPEOFVALUE;  /* one a raise left set is reset here */
  return buildstruct(c, &tp->base, NULL, t, idx);
}

int bw_enctape (Ctx *c, uint32_t t, int idx, int bidx) {
  lua_State *L = c->L;
  Tapes *tp = c->tapes;
  const Tape *base;
  const uint64_t *in;
  int top = lua_gettop(L);
  uint64_t run = 0;
  Walk w;
  if (!lua_istable(L, idx)) return 0;  /* the walk over tables raises */
  if (tp->ok == NULL || !tp->ok[t]) return -1;
  base = basetape(c, t, bidx, &in, 1);
  if (base == NULL) {
    lua_settop(L, top);
    return -2;
  }
  startwalk(&w, c, base, in, 1);
  c->pending = 0;
  bw_tapeencstruct(&w, t, idx, bidx, &run);
  runflush(c, &run);
  if (c->w->status != BW_OK)
    bw_encerror(c, "%s (packet over %I bytes)", bw_strerror(c->w->status),
                (lua_Integer)c->w->maxbytes);
  keeptape(c, top + 1, idx, t, &tp->out, w.rout, KEEPAGAIN, 0);
  lua_settop(L, top);
  return 1;
}

/* Look up, or make from its table, the tape of baseline 'bidx' for type
** 't', its words in '*in'; pushes the tapes table and the tape. NULL
** (with them pushed) when the baseline is not a value of the type. One
** made has the table's raws when 'raws' (an encode compares them first);
** a decode reads codes only, and a tape without raws (a word per number)
** is several times smaller: it stays in one piece longer. */
static const Tape *basetape (Ctx *c, uint32_t t, int bidx,
                             const uint64_t **in, int raws) {
  lua_State *L = c->L;
  Tapes *tp = c->tapes;
  const Tape *base = NULL;
  int tapes, type, decoded, ok;
  bw_pushknown(L);
  tapes = lua_gettop(L);
  lua_pushvalue(L, bidx);
  type = lua_rawget(L, tapes);
  if (type == LUA_TUSERDATA) {
    base = (const Tape *)lua_touserdata(L, -1);
    if (base->owner == c->self && base->type == t
        && base->version == c->version) {
      *in = tapewords(c, base);
      return base;
    }
  }
  decoded = decodedentry(c, t, type);
  lua_pop(L, 1);
  tp->base.pos = 0;  /* a baseline this schema has not sent: from its table */
  tp->rbase.pos = 0;
  tp->asbase = TAPEOFBASE;
  ok = buildstruct(c, &tp->base, raws ? &tp->rbase : NULL, t, bidx);
  tp->asbase = TAPEOFVALUE;
  if (!ok) return NULL;
  base = keeptape(c, tapes, bidx, t, &tp->base, raws ? &tp->rbase : NULL, KEEPNEW,
                  decoded);
  *in = tapewords(c, base);
  return base;
}

/* Ready the table at 'into' (in the known table at 'tapes') for the walk
** to refill in place, in one lookup: cleared as bw_intoclean clears it,
** and its tape, if it has one, no longer trusted as describing it until
** keeptape writes it again: a raise (a memory error) that stops the walk
** partway leaves a mix of old and new values. */
static void intoready (Ctx *c, uint32_t t, int tapes, int into) {
  lua_State *L = c->L;
  int type, known;
  lua_pushvalue(L, into);
  type = lua_rawget(L, tapes);
  known = c->version == c->S->version && decodedentry(c, t, type);
  if (type == LUA_TUSERDATA) {  /* trusted by none while refilled; ours
                                  to write again if it was ours */
    Tape *tape = (Tape *)lua_touserdata(L, -1);
    tape->owner = tape->owner == c->self ? -c->self : 0;
  }
  lua_pop(L, 1);
  bw_intoclean(c, t, into, known);
}

int bw_dectape (Ctx *c, uint32_t t, int bidx, const Tape *tape, int into) {
  lua_State *L = c->L;
  Tapes *tp = c->tapes;
  const Tape *base = tape;
  const uint64_t *in = NULL;
  int top = lua_gettop(L), tapes = top + 1, ok;
  Walk w;
  if (tp->ok == NULL || !tp->ok[t]) return -1;
  if (base != NULL) {  /* held in the caller's slot (bw_decodedas) while
                          the walk reads it: a finalizer's call on another
                          schema may give the baseline a new entry */
    bw_pushknown(L);
    in = tapewords(c, base);
  }
  else base = basetape(c, t, bidx, &in, 0);
  if (base == NULL) {
    lua_settop(L, top);
    return -1;
  }
  if (into != 0) intoready(c, t, tapes, into);  /* the baseline's tape made */
  startwalk(&w, c, base, in, 0);
  if ((ok = bw_tapedecstruct(&w, t, into)) == 0) return 0;
  if (ok == 2)  /* refilled in place: its old tape (bw_intoprepare kept
                   it) rewritten */
    keeptape(c, tapes, into, t, &tp->out, NULL, KEEPINTO, 1);
  else keeptape(c, tapes, lua_gettop(L), t, &tp->out, NULL, KEEPNEW, 1);
  lua_pop(L, 1);
  if (ok == 2) {  /* refilled in place: nothing pushed */
    lua_settop(L, top);
    return 2;
  }
  lua_replace(L, tapes);  /* the value, where the tapes table was */
  lua_settop(L, tapes);
  return 1;
}

void bw_tapemove (lua_State *L, int from, int to) {
  int top = lua_gettop(L);
  bw_pushknown(L);
  lua_pushvalue(L, to);
  lua_pushvalue(L, from);
  lua_rawget(L, top + 1);
  lua_rawset(L, top + 1);
  lua_settop(L, top);
}

void bw_tapedrop (lua_State *L, int idx) {
  bw_pushknown(L);
  lua_pushvalue(L, idx);
  lua_pushnil(L);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}
