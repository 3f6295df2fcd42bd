/*
** bench_gen.c - the 64-entity snapshot of bench/message.lua as a C struct
** through the code `bitwire gen c` writes: ns per snapshot and per value,
** encode and decode, into a caller's buffer (no allocation per message).
** Run by `make bench` next to bench_stream, whose ns/value it is read
** against.
*/
#define _POSIX_C_SOURCE 199309L  /* clock_gettime */

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "snapshot.h"

#define NSNAP  2000
#define NREPS  7

static double now (void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static Snapshot snaps[8], back;
static uint8_t buf[8][Snapshot_MAXBITS / 8 + 8];
static size_t lens[8];

/* deterministic data: one entity in eight has a name */
static void fill (Snapshot *s, unsigned seed) {
  unsigned i;
  s->tick = 1000 + seed;
  s->ack = (uint16_t)(seed * 7);
  s->entities_count = 64;
  for (i = 0; i < 64; i++) {
    Entity *e = &s->entities[i];
    unsigned k = seed * 131 + i * 17;
    e->id = (uint16_t)((i * 61 + seed) % 4096);
    e->kind = (uint8_t)(k % 8);
    e->x = (float)((int)(k % 102400) - 51200) / 100.0f;
    e->y = (float)((int)((k * 3) % 102400) - 51200) / 100.0f;
    e->z = (float)((int)((k * 7) % 102400) - 51200) / 100.0f;
    e->yaw = (float)(k % 628) / 100.0f;
    e->health = (uint8_t)(k % 101);
    e->f1 = k & 1; e->f2 = (k >> 1) & 1; e->f3 = (k >> 2) & 1;
    e->f4 = (k >> 3) & 1;
    e->has_name = i % 8 == 0;
    if (e->has_name) snprintf(e->name, sizeof(e->name), "player%u", i);
  }
}

/* primitive fields on the wire: tick, ack, count, then per entity 11
** fields and the name's presence bit, and its length + bytes if present */
static unsigned values (const Snapshot *s) {
  unsigned n = 3, i;
  for (i = 0; i < s->entities_count; i++)
    n += 12 + (s->entities[i].has_name ? 1 : 0);
  return n;
}

/* The same bits by raw core calls, no checks: what the generated code is
** measured against. */
static bw_QFloat qpos, qyaw;

static void rawwrite (bw_Writer *w, const Snapshot *s) {
  unsigned i;
  bw_writebits(w, s->tick, 20);
  bw_writebits(w, s->ack, 16);
  bw_writebits(w, s->entities_count, 7);
  for (i = 0; i < s->entities_count; i++) {
    const Entity *e = &s->entities[i];
    bw_writebits(w, e->id, 12);
    bw_writebits(w, e->kind, 3);
    bw_writebits(w, bw_qfloatencode(&qpos, e->x), qpos.nbits);
    bw_writebits(w, bw_qfloatencode(&qpos, e->y), qpos.nbits);
    bw_writebits(w, bw_qfloatencode(&qpos, e->z), qpos.nbits);
    bw_writebits(w, bw_qfloatencode(&qyaw, e->yaw), qyaw.nbits);
    bw_writebits(w, e->health, 7);
    bw_writebits(w, e->f1, 1);
    bw_writebits(w, e->f2, 1);
    bw_writebits(w, e->f3, 1);
    bw_writebits(w, e->f4, 1);
    bw_writebits(w, e->has_name, 1);
    if (e->has_name) bw_writestring(w, e->name, strlen(e->name), 16);
  }
}

int main (void) {
  double best_w = 1e9, best_r = 1e9, best_raw = 1e9;
  unsigned rep, k, nvals = 0;
  for (k = 0; k < 8; k++) {
    fill(&snaps[k], k);
    nvals += values(&snaps[k]);
  }
  bw_qfloatinit(&qpos, -512, 512, 0.01);
  bw_qfloatinit(&qyaw, 0, 2 * 3.14159265358979323846, 0.35 * 3.14159265358979323846 / 180);
  for (rep = 0; rep < NREPS; rep++) {
    double t0 = now(), t1;
    unsigned n;
    for (n = 0; n < NSNAP; n++) {
      bw_Writer w;
      bw_writerinit(&w, buf[n & 7], sizeof(buf[0]));
      if (!Snapshot_write(&w, &snaps[n & 7])) {
        fprintf(stderr, "bench_gen: write failed (%s)\n", bw_strerror(w.status));
        return 1;
      }
      bw_writerdata(&w, &lens[n & 7]);
    }
    t1 = now();
    if (t1 - t0 < best_w) best_w = t1 - t0;
    t0 = now();
    for (n = 0; n < NSNAP; n++) {
      bw_Reader r;
      bw_readerinit(&r, buf[n & 7], lens[n & 7]);
      if (!Snapshot_read(&r, &back)) {
        fprintf(stderr, "bench_gen: read failed at bit %llu\n",
                (unsigned long long)r.errpos);
        return 1;
      }
    }
    t1 = now();
    if (t1 - t0 < best_r) best_r = t1 - t0;
    t0 = now();
    for (n = 0; n < NSNAP; n++) {
      bw_Writer w;
      size_t len;
      bw_writerinit(&w, buf[n & 7], sizeof(buf[0]));
      rawwrite(&w, &snaps[n & 7]);
      bw_writerdata(&w, &len);
      if (len != lens[n & 7]) {
        fprintf(stderr, "bench_gen: raw calls wrote %zu bytes, not %zu\n",
                len, lens[n & 7]);
        return 1;
      }
    }
    t1 = now();
    if (t1 - t0 < best_raw) best_raw = t1 - t0;
  }
  {  /* the last decode must write back to the same bytes */
    uint8_t again[sizeof(buf[0])];
    bw_Writer w;
    size_t len;
    const uint8_t *p;
    bw_writerinit(&w, again, sizeof(again));
    Snapshot_write(&w, &back);
    p = bw_writerdata(&w, &len);
    if (len != lens[(NSNAP - 1) & 7] || memcmp(p, buf[(NSNAP - 1) & 7], len)) {
      fprintf(stderr, "bench_gen: decode did not round-trip\n");
      return 1;
    }
  }
  {
    double per = (double)nvals / 8.0;
    printf("bench_gen: 64-entity snapshot through generated C, %zu bytes, "
           "%.0f values, best of %d\n", lens[0], per, NREPS);
    printf("  encode %8.1f ns/snapshot  %6.3f ns/value\n",
           best_w / NSNAP * 1e9, best_w / NSNAP * 1e9 / per);
    printf("  decode %8.1f ns/snapshot  %6.3f ns/value\n",
           best_r / NSNAP * 1e9, best_r / NSNAP * 1e9 / per);
    printf("  raw bw_writebits calls, same bits: %8.1f ns/snapshot  %6.3f "
           "ns/value (generated encode: %.2fx)\n", best_raw / NSNAP * 1e9,
           best_raw / NSNAP * 1e9 / per, best_w / best_raw);
  }
  return 0;
}
