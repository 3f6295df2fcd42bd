/*
** lbw_tape.h - tapes: what the delta walks against them share (lbw_tape.c,
** lbw_tapeenc.c, lbw_tapedec.c)
** See LICENSE for copyright and terms.
*/

#ifndef lbw_tape_h
#define lbw_tape_h

#include <string.h>

#include "lbw_encvalue.h"

/* The userdata of a table's tape: its codes, and the raw values
** (fixedraw) of its scalars in the same order, one word each (a
** quaternion's four numbers, four), when the table's own values made it
** (an encode's or a baseline's). A delta encode against it compares a
** scalar's raw first: equal raws have equal codes, so an unchanged value is
** not range-checked or quantized again.
** Its words (codes, then raws) are in 's' when they fit in TAPEWORDS;
** else in 'nchunks' user values of TAPEWORDS words each, so that a tape
** seldom asks malloc for a large block: a large request makes glibc
** consolidate every small block freed since the last one, which cost a
** delta per call more than the rest of a decode's allocations. Then 's'
** holds the pieces' addresses (a userdata does not move, and its user
** value keeps it), so reading them takes no Lua call. */
typedef struct Tape {
  lua_Integer owner;  /* the id of the schema that wrote it (LSchema.id);
                         0: nobody's, its table changed since; -id: that
                         schema's, its table being refilled (trusted by
                         none, its memory that schema's to write again) */
  uint64_t bits;
  uint64_t nraws;    /* raws after the codes' words */
  uint32_t type, version;
  int      decoded;  /* its table is what a decode of S made (a type
                        id in the known table says the same) */
  int      raws;     /* 0: none (a decode's: it has no raws to keep) */
  uint32_t nchunks;
  uint64_t stamp;    /* new each time its words are written */
  uint64_t s[];      /* bits / 64 + 1 words of codes, then the raws; or
                        nchunks addresses of pieces (piece()) */
} Tape;

/* Words every tape has past its last, zeroed, for get. */
#define TAPEPAD  1

/* Words of a tape kept in one piece: a userdata of them stays under 1 KiB
** with its headers (glibc's smallest large request). A tape of more than
** MAXCHUNKS pieces (about 50 KB) is one block again: its user values would
** pass 1 KiB, and one large request is little next to its walk. */
#define TAPEWORDS  112
#define MAXCHUNKS  56

/* The 'k'-th piece of a tape in pieces. */
static INLINE uint64_t *piece (const Tape *tape, size_t k) {
  uint64_t *p;
  memcpy(&p, &tape->s[k], sizeof(p));
  return p;
}

enum { TAPEOK = 1, TAPENESTS = 2 };  /* Tapes.ok: tapes; and nested fields */

/* The most fields of a fused run (bw_Field.fuse): runs are at most
** BW_FUSEBITS wide, but zero-bit fields (min == max) take no width. */
#define MAXFUSE  255

void bw_tapegrow (Ctx *c, TapeBuf *b, size_t words);

/* Write the 'n' (<= 64) bits of 'v' (< 2^n) at bit 'pos' of 's', the
** end of what is written (room for two words there: the caller's). */
static INLINE void putat (uint64_t *s, uint64_t pos, uint64_t v, unsigned n) {
  size_t i = (size_t)(pos >> 6);
  unsigned off = (unsigned)(pos & 63);
  if (off == 0) s[i] = v;  /* the bits past 'pos' stay 0 */
  else {
    s[i] |= v << off;
    if (off + n > 64) s[i + 1] = v >> (64 - off);
  }
}

/* Append the 'n' (<= 64) bits of 'v' (< 2^n). */
static INLINE void put (Ctx *c, TapeBuf *b, uint64_t v, unsigned n) {
  size_t i = (size_t)(b->pos >> 6);
  if (i + 2 > b->cap) bw_tapegrow(c, b, i + 2);
  putat(b->s, b->pos, v, n);
  b->pos += n;
}

/* Up to 8 bytes at 'p' as the low bits of a word, first byte lowest: a
** string's piece on a tape; and the 'k' bytes of such a word back. */
static INLINE uint64_t chunk (const char *p, size_t k) {
  uint64_t v = 0;
  while (k-- > 0) v = v << 8 | (uint8_t)p[k];
  return v;
}

static INLINE void unchunk (char *p, uint64_t v, size_t k) {
  size_t i;
  for (i = 0; i < k; i++, v >>= 8) p[i] = (char)(v & 0xff);
}

/* The number of a raw. */
static INLINE double numof (uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof(x));
  return x;
}

/* The number a float32 or float64 field's code (ieeecode) decodes to. */
#define IEEEBITS(f)  ((f)->kind == BW_KFLOAT32 ? 32u : 64u)

static INLINE double ieeevalue (const bw_Field *f, uint64_t u) {
  if (f->kind == BW_KFLOAT32) {
    uint32_t v = (uint32_t)u;
    float y;
    memcpy(&y, &v, sizeof(y));
    return (double)y;
  }
  return numof(u);
}

/* A quaternion's code, in its wire order (bw_writequat). */
static INLINE void putquat (Ctx *c, TapeBuf *b, const bw_Field *f,
                            const uint32_t q[4]) {
  put(c, b, q[0], 2);
  put(c, b, q[1], f->q.nbits);
  put(c, b, q[2], f->q.nbits);
  put(c, b, q[3], f->q.nbits);
}

#define QUATBITS(f)  (2 + 3 * (uint64_t)(f)->q.nbits)

/* The 'n' (<= 64) bits at bit 'pos' of 's'. The word after the one 'pos'
** is in is always read: every tape has a word past its last (TAPEPAD), so
** there is no branch on where the bits fall, which a walk could not
** predict. */
static INLINE uint64_t get (const uint64_t *s, uint64_t pos, unsigned n) {
  size_t i = (size_t)(pos >> 6);
  unsigned off = (unsigned)(pos & 63);
  uint64_t v = s[i] >> off | (s[i + 1] << 1) << (63 - off);
  return n < 64 ? v & (((uint64_t)1 << n) - 1) : v;
}

/* A walk against a baseline's tape: it reads 'in' along the schema, and
** writes the tape of the value it encodes or decodes. */
typedef struct Walk {
  Ctx            *c;
  TapeBuf        *out;  /* the value's tape */
  const uint64_t *in;   /* the baseline's */
  uint64_t        ip;   /* the next bit of 'in' */
  const uint64_t *rin;  /* the baseline's raws (an encode's), or NULL */
  uint64_t        rp;   /* the next raw of 'rin' */
  TapeBuf        *rout; /* the value's raws: NULL when 'rin' is */
  int             room; /* the stack has room up to this index (a walk
                           runs in one C call: lua_checkstack's room stays) */
} Walk;

/* Room for 'n' more raws in 'b': where they go. */
static INLINE uint64_t *rawroom (Ctx *c, TapeBuf *b, size_t n) {
  if (b->pos + n > b->cap) bw_tapegrow(c, b, (size_t)b->pos + n);
  return b->s + b->pos;
}

/* Append raw 'raw' to 'b' (NULL: the tape keeps no raws). */
static INLINE void rawput (Ctx *c, TapeBuf *b, uint64_t raw) {
  if (b == NULL) return;
  *rawroom(c, b, 1) = raw;
  b->pos++;
}

static INLINE uint64_t take (Walk *w, unsigned n) {
  uint64_t v = get(w->in, w->ip, n);
  w->ip += n;
  return v;
}

/* The code of raw 'raw' of fixed scalar 'f' against the baseline's code
** 'base' (its raw at w->rp, when the walk has raws): the baseline's when
** the raws are equal, nothing range-checked or quantized again; else as
** rawcode, 0 where 'f' does not take it. */
static INLINE int codeagainst (Walk *w, const bw_Field *f, uint64_t raw,
                               uint64_t base, uint64_t *code) {
  if (w->rin != NULL && raw == w->rin[w->rp]) {
    *code = base;
    return 1;
  }
  return rawcode(w->c, f, raw, 0, code);
}

/* 1 if the quaternion at 'v' has the baseline's code 'bq' (at w->ip,
** its raws at w->rp), as a delta compares it (bw_equalopt): numbers whose
** raws are the baseline's have its code, else their code ('q', with the
** numbers in 'x', non-numbers 0) is compared; 'q' is the code when 1. */
static INLINE int quatsame (Walk *w, const bw_Field *f, int v,
                            const uint32_t bq[4], uint32_t q[4],
                            double x[4]) {
  int k, nums;
  x[0] = x[1] = x[2] = x[3] = 0;
  nums = bw_quatnums(w->c->L, v, x);
  for (k = 0; nums && w->rin != NULL && k < 4; k++)
    if (rawof(x[k]) != w->rin[w->rp + (uint64_t)k]) break;
  if (k == 4) {
    memcpy(q, bq, 4 * sizeof(q[0]));
    return 1;
  }
  return nums && bw_quatencode(&f->q, x, q) && memcmp(q, bq, 4 * sizeof(q[0])) == 0;
}

/* 1 if number 'x' (of a value of Lua type 'vt') of IEEE field 'f' has
** the baseline's code 'base', as bw_equalopt compares: its raw at w->rp,
** when the walk has raws, is the baseline's without rounding again. */
static INLINE int ieeesame (const Walk *w, const bw_Field *f, uint64_t base,
                            int vt, double x) {
  return vt == LUA_TNUMBER
         && ((w->rin != NULL && rawof(x) == w->rin[w->rp])
             || ieeecode(f, x) == base);
}

/* A sparse array on a tape: each present slot 'i', rising, as a 1 and
** i - 1 in 'ibits' bits (bits_required(0, max - 1)), then its element's
** tape; after the last, a 0. putslot and putslotsend write it; nextslot
** reads the next slot at w->ip (then past its index), or n + 1 past the
** last. */
static INLINE void putslot (Ctx *c, TapeBuf *b, lua_Integer i,
                            unsigned ibits) {
  put(c, b, 1, 1);
  put(c, b, (uint64_t)i - 1, ibits);
}

#define putslotsend(c, b)  put(c, b, 0, 1)

static INLINE lua_Integer nextslot (Walk *w, unsigned ibits, lua_Integer n) {
  return take(w, 1) ? (lua_Integer)take(w, ibits) + 1 : n + 1;
}

static INLINE void takequat (Walk *w, const bw_Field *f, uint32_t q[4]) {
  q[0] = (uint32_t)take(w, 2);
  q[1] = (uint32_t)take(w, f->q.nbits);
  q[2] = (uint32_t)take(w, f->q.nbits);
  q[3] = (uint32_t)take(w, f->q.nbits);
}

/* Append a string of field 'f' (a string or bytes: its length less the
** field's min, then its bytes); 1 if the 'len' bytes at bit 'pos' of 's'
** are those at 'p'; copy the 'n' bits at bit 'pos' of 's'. */
void bw_tapeputstr (Ctx *c, TapeBuf *b, const bw_Field *f, const char *s,
                    size_t len);
int  bw_tapesamebytes (const uint64_t *s, uint64_t pos, const char *p,
                       size_t len);
void bw_tapeputbits (Ctx *c, TapeBuf *b, const uint64_t *s, uint64_t pos,
                     uint64_t n);
/* 1 if the 'n' bits at bit 'pa' of 'a' are those at bit 'pb' of 'b'. */
int  bw_tapesamebits (const uint64_t *a, uint64_t pa, const uint64_t *b,
                      uint64_t pb, uint64_t n);
/* Append the tape of the value at 'v' (of Lua type 'vt', not nil) of field
** 'f', its raws to 'r' (NULL: none kept); 0 when it is not a value of the
** field (nothing raised). */
int  bw_tapebuild (Ctx *c, TapeBuf *b, TapeBuf *r, const bw_Field *f, int v,
                   int vt);
/* Step over, or copy to the value's tape, the baseline's value of 'f'. */
void bw_tapeskip (Walk *w, const bw_Field *f);
void bw_tapecopy (Walk *w, const bw_Field *f);

#define NONE  UINT64_MAX

/* Copy the baseline's raws from 'from' to w->rp, when the walk keeps
** them. */
static INLINE void keepraws (Walk *w, uint64_t from) {
  if (w->rout == NULL || w->rp == from) return;
  memcpy(rawroom(w->c, w->rout, (size_t)(w->rp - from)), w->rin + from,
         (size_t)(w->rp - from) * sizeof(uint64_t));
  w->rout->pos += w->rp - from;
}

/* Where a run of kept values starts: a bit of 'in' (NONE: no run), and a
** raw of 'rin'. */
typedef struct Kept { uint64_t ip, rp; } Kept;

static INLINE void keepfrom (Walk *w, Kept *k) {
  if (k->ip != NONE) return;
  k->ip = w->ip;
  k->rp = w->rp;
}

/* Copy the baseline's bits and raws from the start of run 'k' (if any)
** to w->ip: values kept one after another. */
static INLINE void keepbits (Walk *w, Kept *k) {
  if (k->ip == NONE) return;
  bw_tapeputbits(w->c, w->out, w->in, k->ip, w->ip - k->ip);
  keepraws(w, k->rp);
  k->ip = NONE;
}

/* The walks: a record against the baseline's tape at w->ip, its bits
** gathered in 'r' (lbw_tapeenc.c); a record decoded against it, pushed
** (lbw_tapedec.c). */
int bw_tapeencstruct (Walk *w, uint32_t t, int idx, int bidx, uint64_t *r);
/* An array at 'idx' (a table) against the baseline's tape at w->ip, as
** lbw_encdelta.c's encdeltaarray writes it (no changed bit before it);
** 'bidx': the baseline's table, or 0. Returns 1 if anything changed. */
int bw_tapeencarray (Walk *w, const bw_Field *f, int idx, int bidx,
                     uint64_t *r);
/* A sparse array at 'v' (of Lua type 'vt'; present in both) as tapefield
** sends it: its changed bit and, when a slot changed, the delta
** (lbw_encsparse.c); 'btab': the baseline's table, or 0. Returns 1 if it
** changed. */
int bw_tapeencsparse (Walk *w, uint64_t *r, const bw_Field *f, int v,
                      int vt, int btab);

/* Fresh tables share none with the baseline: until one is found shared,
** a walk checks every PROBE-th of them (the others are compared: the same
** bits, the baseline being read-only). */
#define PROBE  8
/* Returns 2 when it refilled the table at 'into' (0: none) in place. */
int bw_tapedecstruct (Walk *w, uint32_t t, int into);

#endif
