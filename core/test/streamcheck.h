/*
** streamcheck.h - what the C tests of the streams share: a deterministic
** generator, a bit-at-a-time reference order, exact-size copies for ASan,
** bit casts and a counting allocator
** See LICENSE for copyright and terms.
*/
#ifndef STREAMCHECK_H
#define STREAMCHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bw.h"

/* A check inside a loop: counts failures in 'bad' and names the first few;
** the caller then does CHECK(bad == 0) once. */
#define EXPECT(bad, cond, ...) do { \
    if (!(cond) && (bad)++ < 5) { \
      fprintf(stderr, "%s:%d: EXPECT failed: %s: ", __FILE__, __LINE__, \
              #cond); \
      fprintf(stderr, __VA_ARGS__); \
      fputc('\n', stderr); \
    } \
  } while (0)

#define ULL(x)  ((unsigned long long)(x))
#define NELEMS(a)  (sizeof(a) / sizeof((a)[0]))

static uint64_t rngstate = UINT64_C(0x853C49E6748FEA9B);

static inline uint64_t rng (void) {  /* splitmix64: deterministic runs */
  uint64_t z = (rngstate += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static inline uint64_t lowmask (unsigned n) {
  return n >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1;
}

/* the reference bit order: bit i of 'v' goes to stream bit pos + i, and
** stream bit b is bit b % 8 of byte b / 8 ('buf' starts zeroed) */
static inline void refput (uint8_t *buf, uint64_t *pos, uint64_t v,
                           unsigned n) {
  unsigned i;
  for (i = 0; i < n; i++, (*pos)++)
    if ((v >> i) & 1) buf[*pos / 8] |= (uint8_t)(1u << (*pos % 8));
}

static inline uint64_t refget (const uint8_t *buf, uint64_t pos, unsigned n) {
  uint64_t v = 0;
  unsigned i;
  for (i = 0; i < n; i++, pos++)
    v |= (uint64_t)((buf[pos / 8] >> (pos % 8)) & 1) << i;
  return v;
}

/* 'n' random widths (0..64) and values in 'widths' and 'vals', written to
** 'w' and, in the reference order, to 'ref' from bit '*pos' */
static inline void randomwrites (bw_Writer *w, uint8_t *ref, uint64_t *pos,
                                 unsigned *widths, uint64_t *vals, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    widths[i] = (unsigned)(rng() % 65);
    vals[i] = rng() & lowmask(widths[i]);
    refput(ref, pos, vals[i], widths[i]);
    bw_writebits(w, vals[i], widths[i]);
  }
}

static inline void tohex (const uint8_t *p, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  size_t i;
  for (i = 0; i < n; i++) {
    out[2 * i] = digits[p[i] >> 4];
    out[2 * i + 1] = digits[p[i] & 15];
  }
  out[2 * n] = '\0';
}

static inline size_t fromhex (const char *hex, uint8_t *out) {
  size_t i, n = strlen(hex) / 2;
  for (i = 0; i < n; i++) {
    unsigned b;
    sscanf(hex + 2 * i, "%2x", &b);
    out[i] = (uint8_t)b;
  }
  return n;
}

/* a copy of 'p' at the very end of a block of exactly 'n' bytes, so ASan
** reports a read of even one byte past it; free with free() */
static inline uint8_t *tightcopy (const void *p, size_t n) {
  uint8_t *q = (uint8_t *)malloc(n > 0 ? n : 1);
  if (q == NULL) {
    fprintf(stderr, "tightcopy: out of memory\n");
    exit(2);
  }
  if (p != NULL && n > 0) memcpy(q, p, n);
  return q;
}

/* bit casts: f2u, u2f, d2u, u2d */
#define BITCAST(name, from, to) \
  static inline to name (from x) { to y; memcpy(&y, &x, sizeof y); return y; }
BITCAST(f2u, float, uint32_t)
BITCAST(u2f, uint32_t, float)
BITCAST(d2u, double, uint64_t)
BITCAST(u2d, uint64_t, double)

/* a realloc-based bw_Alloc that counts, and fails on request */
typedef struct Heap {
  size_t calls;      /* allocations and resizes */
  size_t live;       /* bytes held */
  size_t failat;     /* fail the call with this number (1-based); 0: never */
} Heap;

static inline void *heapalloc (void *ud, void *ptr, size_t osize,
                               size_t nsize) {
  Heap *h = (Heap *)ud;
  void *p;
  if (nsize == 0) {
    if (ptr != NULL) h->live -= osize;
    free(ptr);
    return NULL;
  }
  h->calls++;
  if (h->failat != 0 && h->calls == h->failat) return NULL;
  p = realloc(ptr, nsize);
  if (p != NULL) h->live += nsize - (ptr != NULL ? osize : 0);
  return p;
}


#endif
