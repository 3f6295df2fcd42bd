/*
** fuzz_stream.h - what the parts of the fuzz_stream target share: the op
** script (fuzz_stream.c parses it) and the two passes over it
** (fuzz_streamread.c, fuzz_streamtrip.c)
** See LICENSE for copyright and terms.
*/
#ifndef FUZZ_STREAM_H
#define FUZZ_STREAM_H

#include "fuzz.h"


typedef char needs64bit[sizeof(size_t) == 8 ? 1 : -1];

#define MAXOPS  96

enum { K_BITS, K_BOOL, K_INT, K_FLOAT, K_DOUBLE, K_CFLOAT, K_ALIGN,
       K_BYTES, K_STRING, K_INTREL, K_CHECK, NKINDS };

typedef struct Op {
  int kind;
  unsigned n;          /* K_BITS: width */
  int64_t min, max;    /* K_INT */
  int q;               /* K_CFLOAT: index in 'qtab' */
  size_t len;          /* K_BYTES: length; K_STRING: maxlen */
  int lenmode;         /* K_BYTES: 0 'len', 1 the bytes left, 2 one more */
  uint64_t prev;       /* K_INTREL */
  uint32_t magic;      /* K_CHECK */
} Op;


/* Quantizers of K_CFLOAT: the first NQVALID valid, the rest refused. */
#define NQ       21
#define NQVALID  13
extern const struct QEntry {
  double min, max, res;
  uint32_t miv;
  unsigned nbits;
} qtab[NQ];
extern bw_QFloat qf[NQ];  /* initialized by qtabinit */

void qtabinit (void);
void parseop (Src *s, Op *op);
/* int_relative's tiers from DESIGN.md: difference range and payload bits;
** the bits for difference 'd' */
#define NTIER 5
extern const struct RelTier { uint64_t lo, hi; unsigned bits; } reltier[NTIER];
unsigned relbits (uint64_t d);

/* Pass 1: the stream as hostile bytes, read along the script. */
void hostile (const uint8_t *script, size_t nscript, const uint8_t *data,
              size_t n);
/* Pass 2: values from the stream, written and read back. */
void roundtrip (unsigned flags, const uint8_t *script, size_t nscript,
                const uint8_t *vals, size_t nvals);

#ifdef FUZZ_SEEDGEN
extern long seedops, seedread;  /* how deep the seeds get (pass 1) */
#endif

#endif
