/*
** lbw_tape.h - tapes: what the delta walks against them share (lbw_tape.c,
** lbw_tapeenc.c, lbw_tapedec.c)
** See LICENSE for copyright and terms.
*/

#ifndef lbw_tape_h
#define lbw_tape_h

#include "lbw_encvalue.h"

typedef struct Tape {  /* the userdata of a table's tape */
  const bw_Schema *S;
  uint32_t type, version;
  uint64_t bits;
  uint64_t s[];  /* bits / 64 + 1 words */
} Tape;

enum { TAPEOK = 1, TAPENESTS = 2 };  /* Tapes.ok: tapes; and nested fields */

/* The most fields of a fused run (bw_Field.fuse): runs are at most
** BW_FUSEBITS wide, but zero-bit fields (min == max) take no width. */
#define MAXFUSE  255

void bw_tapegrow (Ctx *c, TapeBuf *b, size_t words);

/* Append the 'n' (<= 64) bits of 'v' (< 2^n). */
static INLINE void put (Ctx *c, TapeBuf *b, uint64_t v, unsigned n) {
  size_t i = (size_t)(b->pos >> 6);
  unsigned off = (unsigned)(b->pos & 63);
  if (i + 2 > b->cap) bw_tapegrow(c, b, i + 2);
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

/* A walk against a baseline's tape: it reads 'in' along the schema, and
** writes the tape of the value it encodes or decodes. */
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

/* Append a string of field 'f'; 1 if the 'len' bytes at bit 'pos' of 's'
** are those at 'p'; copy the 'n' bits at bit 'pos' of 's'. */
void bw_tapeputstr (Ctx *c, TapeBuf *b, const bw_Field *f, const char *s,
                    size_t len);
int  bw_tapesamebytes (const uint64_t *s, uint64_t pos, const char *p,
                       size_t len);
void bw_tapeputbits (Ctx *c, TapeBuf *b, const uint64_t *s, uint64_t pos,
                     uint64_t n);
/* Append the tape of the value at 'v' (of Lua type 'vt', not nil) of field
** 'f'; 0 when it is not a value of the field (nothing raised). */
int  bw_tapebuild (Ctx *c, TapeBuf *b, const bw_Field *f, int v, int vt);
/* Step over, or copy to the value's tape, the baseline's value of 'f'. */
void bw_tapeskip (Walk *w, const bw_Field *f);
void bw_tapecopy (Walk *w, const bw_Field *f);

#define NONE  UINT64_MAX

/* Copy the baseline's bits from '*from' (unless NONE) to w->ip: values
** kept one after another. */
static INLINE void keepbits (Walk *w, uint64_t *from) {
  if (*from == NONE) return;
  bw_tapeputbits(w->c, w->out, w->in, *from, w->ip - *from);
  *from = NONE;
}

/* The walks: a record against the baseline's tape at w->ip, its bits
** gathered in 'r' (lbw_tapeenc.c); a record decoded against it, pushed
** (lbw_tapedec.c). */
int bw_tapeencstruct (Walk *w, uint32_t t, int idx, int bidx, uint64_t *r);
int bw_tapedecstruct (Walk *w, uint32_t t);

#endif
