/*
** fuzz.h - shared helpers of the libFuzzer targets: input cursor, reference
** bit reader and UTF-8 check, counting allocator, seed file output
** See LICENSE for copyright and terms.
*/
#ifndef FUZZ_H
#define FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bw.h"

/* Assertions of the harness (never of the core): print and abort, so
** libFuzzer saves the input as a crash artifact. */
#define FCHECK(cond) do { \
    if (!(cond)) { \
      fprintf(stderr, "%s:%d: fuzz check failed: %s\n", \
              __FILE__, __LINE__, #cond); \
      abort(); \
    } \
  } while (0)


int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);


/* {===================== input cursor ===================== */

/* Reads past the end give zeros: every input is a valid script. */
typedef struct Src {
  const uint8_t *p;
  size_t n, i;
} Src;

static inline void srcinit (Src *s, const uint8_t *p, size_t n) {
  s->p = p;
  s->n = n;
  s->i = 0;
}

static inline size_t srcleft (const Src *s) {
  return s->n - s->i;
}

static inline unsigned getu8 (Src *s) {
  return s->i < s->n ? s->p[s->i++] : 0;
}

static inline uint32_t getu16 (Src *s) {
  uint32_t v = getu8(s);
  return v | (uint32_t)getu8(s) << 8;
}

static inline uint32_t getu32 (Src *s) {
  uint32_t v = getu16(s);
  return v | getu16(s) << 16;
}

static inline uint64_t getu64 (Src *s) {
  uint64_t v = getu32(s);
  return v | (uint64_t)getu32(s) << 32;
}

/* }========================================================== */


/* {===================== reference models ===================== */
/* Written the obvious way, independently of bw_stream.c, so that the
** targets compare the core against something other than itself. */

/* 'n' bits at bit 'pos' of 'd', LSB first, one bit at a time. */
static inline uint64_t refbits (const uint8_t *d, uint64_t pos,
                                unsigned n) {
  uint64_t v = 0;
  unsigned i;
  for (i = 0; i < n; i++, pos++)
    v |= (uint64_t)((d[pos >> 3] >> (pos & 7)) & 1) << i;
  return v;
}

static inline unsigned refbitsreq (int64_t min, int64_t max) {
  uint64_t d = (uint64_t)max - (uint64_t)min;
  unsigned n;
  for (n = 0; n < 64 && (d >> n) != 0; n++) ;
  return n;
}

static inline unsigned refpad (uint64_t pos) {
  return (unsigned)((8 - pos % 8) % 8);
}

static inline uint64_t mask64 (unsigned n) {
  return n >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1;
}

static inline int64_t refint64 (uint64_t u) {
  int64_t v;
  memcpy(&v, &u, 8);  /* two's complement on every target we fuzz on */
  return v;
}

/* Well-formed UTF-8 without NUL: lead byte by its leading ones, then
** overlong, surrogate and range checks on the decoded code point. */
static inline int refutf8 (const uint8_t *s, size_t n) {
  static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
  size_t i = 0, len, k;
  while (i < n) {
    uint32_t c = s[i], cp;
    if (c == 0) return 0;
    if (c < 0x80) { i++; continue; }
    if ((c >> 5) == 0x6) len = 2, cp = c & 0x1F;
    else if ((c >> 4) == 0xE) len = 3, cp = c & 0x0F;
    else if ((c >> 3) == 0x1E) len = 4, cp = c & 0x07;
    else return 0;
    if (len > n - i) return 0;
    for (k = 1; k < len; k++) {
      if ((s[i + k] >> 6) != 0x2) return 0;
      cp = cp << 6 | (s[i + k] & 0x3F);
    }
    if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return 0;
    i += len;
  }
  return 1;
}

/* Bits of 'ref' [0, nbits) equal to the bytes 'p' hold. */
static inline int samebits (const uint8_t *p, const uint8_t *ref,
                            uint64_t nbits) {
  size_t whole = (size_t)(nbits / 8);
  unsigned rest = (unsigned)(nbits % 8);
  if (memcmp(p, ref, whole) != 0) return 0;
  return rest == 0 || ((p[whole] ^ ref[whole]) & ((1u << rest) - 1)) == 0;
}

/* }========================================================== */


/* {===================== allocator ===================== */

/* bw_Alloc that checks 'osize', can fail on its 'failat'-th call and
** refuses blocks over 'limit', so huge claimed sizes end in BW_ENOMEM
** instead of an out-of-memory report. */
typedef struct Heap {
  size_t size;     /* bytes of the one live block */
  size_t limit;
  int calls, failat;  /* failat < 0: never fail */
} Heap;

static inline void heapinit (Heap *h, int failat) {
  h->size = 0;
  h->limit = (size_t)1 << 24;
  h->calls = 0;
  h->failat = failat;
}

static inline void *heapalloc (void *ud, void *ptr, size_t osize,
                               size_t nsize) {
  Heap *h = (Heap *)ud;
  void *p;
  FCHECK(ptr != NULL ? osize == h->size : h->size == 0);
  if (nsize == 0) {
    free(ptr);
    h->size = 0;
    return NULL;
  }
  if (h->failat >= 0 && h->calls++ >= h->failat) return NULL;
  if (nsize > h->limit) return NULL;
  p = realloc(ptr, nsize);
  if (p != NULL) h->size = nsize;
  return p;
}

/* }========================================================== */


/* {===================== seed generation ===================== */
/* Built with -DFUZZ_SEEDGEN (no libFuzzer), a target becomes a program
** that writes valid encodes into the corpus directory argv[1], running
** each through LLVMFuzzerTestOneInput first. */

#ifdef FUZZ_SEEDGEN
static uint64_t seedstate = UINT64_C(0x9E3779B97F4A7C15);

/* xorshift64*: a fixed seed, so every run writes the same corpus */
static inline uint32_t rnd (void) {
  seedstate ^= seedstate >> 12;
  seedstate ^= seedstate << 25;
  seedstate ^= seedstate >> 27;
  return (uint32_t)((seedstate * UINT64_C(0x2545F4914F6CDD1D)) >> 32);
}

static inline uint64_t rnd64 (void) {
  uint64_t v = rnd();
  return v << 32 | rnd();
}

static inline void *seedalloc (void *ud, void *ptr, size_t osize,
                               size_t nsize) {
  (void)ud; (void)osize;
  if (nsize == 0) { free(ptr); return NULL; }
  return realloc(ptr, nsize);
}

static inline int writeseed (const char *dir, int k, const uint8_t *p,
                             size_t n) {
  char name[4096];
  FILE *f;
  LLVMFuzzerTestOneInput(p, n);
  snprintf(name, sizeof(name), "%s/seed-%03d", dir, k);
  f = fopen(name, "wb");
  if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
    perror(name);
    return 1;
  }
  return 0;
}
#endif

/* }========================================================== */

#endif
