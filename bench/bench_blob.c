/*
** bench_blob.c - mapped blobs: validate + open, and accessor reads
** See LICENSE for copyright and terms.
*/

/*
** A 64 MiB blob of 1M records of 64 bytes (bench/blobgen.lua's Big) is
** written to build/bench/big.bin, mapped, and checked with the generated
** Big_blob_check (libbitwire's one-pass validator): GB/s is the file size
** over the best of several checks. Then one field of every record is summed
** through the generated accessors, and the same over a plain malloc'ed
** array of the same structs: ns per access, side by side.
*/

#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_blob.h"

#define NREC   (1u << 20)
#define FILE_  "build/bench/big.bin"
#define REPS   5

static double now (void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fill (Rec *r, uint32_t i) {
  memset(r, 0, sizeof(*r));
  r->id = i;
  r->pos.x = (float)i; r->pos.y = 1; r->pos.z = -1;
  r->vel.x = 0.5f; r->vel.y = 0; r->vel.z = 2;
  r->hp = (uint16_t)(i % 1001);
  r->kind = (uint8_t)(i % 4);
  r->alive = (uint8_t)(i & 1);
  r->team = (uint8_t)i;
  r->mass = i * 0.25;
  r->score = -1.0 * i;
  r->level = i * 7;
  r->ammo = (uint16_t)(i % 1000);
  r->flags = (uint16_t)i;
}

static size_t writeblob (void) {
  size_t recs = (BW_BLOBHEADER + sizeof(Big) + 7) & ~(size_t)7;
  size_t size = recs + (size_t)NREC * sizeof(Rec);
  uint8_t *b = (uint8_t *)calloc(1, size);
  bw_BlobHeader h;
  Big *root = (Big *)(b + BW_BLOBHEADER);
  uint32_t i, big = 0;
  FILE *f;
  while (strcmp(blob_types_[big].name, "Big") != 0) big++;
  for (i = 0; i < NREC; i++) fill((Rec *)(b + recs) + i, i);
  root->recs.offset = (int32_t)(recs - BW_BLOBHEADER);
  root->recs.count = NREC;
  h.magic = BW_BLOBMAGIC;
  h.format = BW_BLOBFORMAT;
  h.flags = BW_BLOBMAPPABLE;
  h.fingerprint = blob_types_[big].fingerprint;
  h.version = BLOB_VERSION;
  h.root = big;
  h.size = (uint32_t)size;
  h.reserved = 0;
  bw_blobputheader(b, &h);
  f = fopen(FILE_, "wb");
  if (f == NULL || fwrite(b, 1, size, f) != size || fclose(f) != 0) {
    perror(FILE_);
    exit(1);
  }
  free(b);
  return size;
}

int main (void) {
  size_t size = writeblob();
  int fd = open(FILE_, O_RDONLY), k;
  const void *blob;
  const Big *big;
  Rec *plain;
  bw_Error err;
  double best = 1e9, t, tacc = 1e9, tplain = 1e9;
  uint64_t sum = 0, sum2 = 0;
  uint32_t i;
  if (fd < 0) { perror(FILE_); return 1; }
  blob = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (blob == MAP_FAILED) { perror("mmap"); return 1; }
  for (k = 0; k < REPS; k++) {
    t = now();
    if (!Big_blob_check(blob, size, &err)) {
      fprintf(stderr, "check failed: %s at %s\n", bw_strerror(err.code),
              err.path);
      return 1;
    }
    t = now() - t;
    if (t < best) best = t;
  }
  big = Big_blob_root(blob);
  plain = (Rec *)malloc((size_t)NREC * sizeof(Rec));
  for (i = 0; i < NREC; i++) fill(&plain[i], i);
  for (k = 0; k < REPS; k++) {
    uint64_t s = 0;
    uint32_t n = Big_recs_count(big);
    t = now();
    for (i = 0; i < n; i++) s += Big_recs_at(big, i)->hp;
    t = now() - t;
    if (t < tacc) tacc = t;
    sum = s;
    s = 0;
    t = now();
    for (i = 0; i < NREC; i++) s += plain[i].hp;
    t = now() - t;
    if (t < tplain) tplain = t;
    sum2 = s;
  }
  printf("blob: validate+open %.1f MiB of %u records (%zu B each): "
         "%.2f ms, %.2f GB/s (target >= 1 GB/s)\n",
         size / 1048576.0, NREC, sizeof(Rec), best * 1e3, size / best / 1e9);
  printf("blob: read one field of each record: accessors %.2f ns, "
         "plain struct array %.2f ns per access (sums %s)\n",
         tacc / NREC * 1e9, tplain / NREC * 1e9,
         sum == sum2 ? "equal" : "DIFFER");
  munmap((void *)blob, size);
  free(plain);
  return sum == sum2 ? 0 : 1;
}
