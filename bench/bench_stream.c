/*
** bench_stream.c - bw_writebits/bw_readbits throughput against memcpy
** See LICENSE for copyright and terms.
*/

/*
** Writes and reads NVALUES values whose widths cycle 1..32, each a
** deterministic pseudo-random number that fits its width, and times a memcpy
** of the same packet in the same run as the physical floor. The values come
** from a small table, so that the packet is the only large memory traffic,
** as it is for memcpy. Widths are not compile-time constants: every write
** and read takes its range and bounds checks. Each figure is the best of
** NREPS runs, so a stray interrupt does not count. The values read are
** compared with the ones written; a mismatch exits 1.
*/

#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bw.h"

#define NVALUES 10000000
#define NREPS   5
#define NTABLE  4000          /* values cycle through an L1-resident table */

#if NTABLE % 32 != 0 || NVALUES % NTABLE != 0
#error "NTABLE must be a multiple of 32 that divides NVALUES"
#endif

static double now (void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t xorshift (uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* width of value 'i': 1..32, cycling; NTABLE is a multiple of 32 that
** divides NVALUES, so value i is vals[i % NTABLE] and fits WIDTH(i) */
#define WIDTH(i)  ((unsigned)((i) & 31) + 1)

/* The timed loops live in their own functions so that their code layout
** does not shift with the rest of main. */
#if defined(__GNUC__)
#define NOINLINE  __attribute__((noinline))
#else
#define NOINLINE
#endif

static NOINLINE void writeall (bw_Writer *w, const uint32_t *vals) {
  size_t i, k;
  for (i = 0; i < NVALUES; i += NTABLE)
    for (k = 0; k < NTABLE; k++)
      bw_writebits(w, vals[k], WIDTH(k));
}

static NOINLINE uint64_t readall (bw_Reader *r, const uint32_t *vals) {
  uint64_t bad = 0;
  size_t i, k;
  for (i = 0; i < NVALUES; i += NTABLE)
    for (k = 0; k < NTABLE; k++)
      bad |= bw_readbits(r, WIDTH(k)) ^ vals[k];
  return bad;
}

static void *xmalloc (size_t n) {
  void *p = malloc(n);
  if (p == NULL) {
    fprintf(stderr, "bench_stream: out of memory\n");
    exit(1);
  }
  memset(p, 0, n);  /* fault the pages in before any timing */
  return p;
}

int main (void) {
  uint32_t vals[NTABLE];
  uint64_t seed = UINT64_C(0x9E3779B97F4A7C15), totalbits = 0;
  size_t i, cap, len = 0;
  uint8_t *buf, *copy;
  double best_w = 1e30, best_r = 1e30, best_m = 1e30;
  volatile uint8_t sink;
  int rep;

  for (i = 0; i < NTABLE; i++)
    vals[i] = (uint32_t)(xorshift(&seed) >> (64 - WIDTH(i)));
  for (i = 0; i < NVALUES; i++) totalbits += WIDTH(i);
  cap = (size_t)((totalbits + 7) / 8);
  buf = (uint8_t *)xmalloc(cap);
  copy = (uint8_t *)xmalloc(cap);

  for (rep = 0; rep < NREPS; rep++) {
    bw_Writer w;
    bw_Reader r;
    uint64_t bad;
    double t0, t1;

    bw_writerinit(&w, buf, cap);
    t0 = now();
    writeall(&w, vals);
    bw_writerdata(&w, &len);
    t1 = now();
    if (w.status != BW_OK || len != cap || bw_bitswritten(&w) != totalbits) {
      fprintf(stderr, "bench_stream: write failed: %s at bit %llu\n",
              bw_strerror(w.status), (unsigned long long)w.errpos);
      return 1;
    }
    if (t1 - t0 < best_w) best_w = t1 - t0;

    bw_readerinit(&r, buf, len);
    t0 = now();
    bad = readall(&r, vals);
    t1 = now();
    if (r.status != BW_OK || bad != 0 || r.pos != totalbits) {
      bw_readerinit(&r, buf, len);  /* name the first culprit */
      for (i = 0; i < NVALUES; i++) {
        uint64_t v = bw_readbits(&r, WIDTH(i));
        if (v != vals[i % NTABLE]) break;
      }
      fprintf(stderr, "bench_stream: read mismatch at value %zu (%s)\n",
              i, bw_strerror(r.status));
      return 1;
    }
    if (t1 - t0 < best_r) best_r = t1 - t0;

    t0 = now();
    memcpy(copy, buf, len);
    t1 = now();
    sink = copy[len / 2];
    (void)sink;
    if (t1 - t0 < best_m) best_m = t1 - t0;
  }
  if (memcmp(copy, buf, len) != 0) {
    fprintf(stderr, "bench_stream: memcpy copy differs\n");
    return 1;
  }

  printf("bench_stream: %d values, widths 1..32, %zu bytes, best of %d\n",
         NVALUES, len, NREPS);
  printf("  write  %6.3f ns/value  %6.2f GB/s\n",
         best_w * 1e9 / NVALUES, (double)len / best_w * 1e-9);
  printf("  read   %6.3f ns/value  %6.2f GB/s\n",
         best_r * 1e9 / NVALUES, (double)len / best_r * 1e-9);
  printf("  memcpy %6.3f ns/value  %6.2f GB/s  (same bytes)\n",
         best_m * 1e9 / NVALUES, (double)len / best_m * 1e-9);
  free(buf);
  free(copy);
  return 0;
}
