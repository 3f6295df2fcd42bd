/*
** test_gen.c - C tests of the runtime support of generated code (bw_gen.c)
** See LICENSE for copyright and terms.
*/

#include <math.h>
#include <string.h>

#include "bw_gen.h"
#include "check.h"

/* paths are built innermost first, in the driver's syntax */
static void test_paths (void) {
  bw_Error err;
  memset(&err, 0, sizeof(err));
  CHECK(bw_genpath(&err, "x") == 0);
  bw_genpath(&err, "pos");
  bw_genindex(&err, 3);
  bw_genpath(&err, "entities");
  CHECK(strcmp(err.path, "entities[3].pos.x") == 0);
  err.path[0] = '\0';
  bw_genindex(&err, 2);
  bw_genindex(&err, 1);
  bw_genpath(&err, "grid");
  CHECK(strcmp(err.path, "grid[1][2]") == 0);
}

/* a path longer than BW_MAXPATH keeps its first BW_MAXPATH - 1 bytes */
static void test_path_truncated (void) {
  bw_Error err;
  char want[512] = "";
  int i;
  memset(&err, 0, sizeof(err));
  for (i = 0; i < 40; i++) bw_genpath(&err, "abcdefgh");
  for (i = 0; i < 40; i++) strcat(want, i ? ".abcdefgh" : "abcdefgh");
  CHECK(strlen(err.path) == BW_MAXPATH - 1);
  CHECK(strncmp(err.path, want, BW_MAXPATH - 1) == 0);
  bw_genindex(&err, 12345);
  CHECK(strncmp(err.path, "[12345].abcdefgh", 16) == 0);
  CHECK(strlen(err.path) == BW_MAXPATH - 1);
}

/* counts: a range failure and a count the bits left cannot hold both
** point at the count's first bit */
static void test_count (void) {
  uint8_t buf[4] = { 0x05, 0, 0, 0 };  /* 3 bits: 5 */
  bw_Reader r;
  uint64_t n;
  bw_readerinit(&r, buf, 4);
  CHECK(bw_gencount(&r, 3, 0, 7, 1, &n) && n == 5);
  bw_readerinit(&r, buf, 4);
  CHECK(!bw_gencount(&r, 3, 0, 4, 0, &n));
  CHECK(r.status == BW_ERANGE && r.errpos == 0);
  bw_readerinit(&r, buf, 1);   /* 5 bits left after the count */
  CHECK(!bw_gencount(&r, 3, 0, 7, 2, &n));
  CHECK(r.status == BW_ETRUNC && r.errpos == 0);
  bw_readerinit(&r, buf, 4);
  CHECK(bw_gencount(&r, 3, 2, 9, 0, &n) && n == 7);   /* min + offset */
}

/* a delta's array: kept elements cost a bit each, new ones minbits */
static void test_deltacount (void) {
  uint8_t buf[2] = { 0, 0 };  /* 16 bits */
  bw_Reader r;
  bw_readerinit(&r, buf, 2);
  CHECK(bw_gendeltacount(&r, 0, 16, 20, 9));      /* 16 kept: 16 bits */
  CHECK(!bw_gendeltacount(&r, 3, 17, 20, 9));     /* 17 kept */
  CHECK(r.status == BW_ETRUNC && r.errpos == 3);
  bw_readerinit(&r, buf, 2);
  CHECK(bw_gendeltacount(&r, 0, 4, 2, 7));        /* 2 + 2 x 7 */
  CHECK(!bw_gendeltacount(&r, 0, 5, 2, 7));       /* 2 + 3 x 7 */
  bw_readerinit(&r, buf, 2);
  CHECK(!bw_gendeltacount(&r, 0, UINT64_MAX, 0, UINT64_MAX));  /* no wrap */
}

static void test_strings (void) {
  char s[4] = { 'a', 'b', 'c', 'd' };
  uint8_t buf[16];
  bw_Writer w;
  CHECK(bw_genstrlen(s, 3) == 4);   /* no NUL within max + 1 */
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(!bw_genwritestring(&w, s, 3) && w.status == BW_ERANGE);
  CHECK(bw_genstreq("ab", "ab", 4) && !bw_genstreq("ab", "abc", 4));
}

/* each encoding of the same slots reads back the same slots */
static void test_sparse_roundtrip (void) {
  static const uint8_t tiers[] = { 1, 3, 63 };
  int enc, tiered;
  for (enc = BW_SPMASK; enc <= BW_SPAUTO; enc++)
    for (tiered = 0; tiered < 2; tiered++) {
      bw_GenSparse sp = { 50, 6, 0, NULL, 0, 0 };
      uint8_t mask[7] = { 0x81, 0, 0x10, 0, 0, 0, 0x02 }, buf[64];
      uint64_t slots[8] = { 0 }, slot, bits, i;
      size_t len, nslots = 0, k = 0;
      bw_GenSlots st;
      bw_Writer w;
      bw_Reader r;
      int more;
      sp.encoding = enc;
      if (tiered) { sp.tiers = tiers; sp.ntiers = 3; }
      bw_writerinit(&w, buf, sizeof(buf));
      bits = bw_genslotsbegin(&w, &sp, mask, &st);
      for (i = 0; i < 50; i++)
        if (bw_genhas(mask, i)) {
          bits += bw_genslot(&w, &sp, &st, i + 1);
          slots[nslots++] = i + 1;
        }
      bits += bw_genslotsend(&w, &sp, &st);
      CHECK(w.status == BW_OK && bits == bw_bitswritten(&w));
      bw_writerdata(&w, &len);
      bw_readerinit(&r, buf, len);
      CHECK(bw_genreadslotsbegin(&r, &sp, &st));
      while ((more = bw_genreadslot(&r, &sp, &st, &slot)) > 0)
        CHECK(k < nslots && slots[k++] == slot);
      CHECK(more == 0 && k == nslots && r.pos == bits);
    }
}

/* hostile slot headers fail where the driver fails */
static void test_sparse_hostile (void) {
  bw_GenSparse sp = { 10, 4, BW_SPAUTO, NULL, 0, 1 };
  uint8_t three[1] = { 0x03 }, count[2] = { 0x01 | 0x0b << 2, 0 };
  /* bits: 01 (index), 0010 (count 2), 0101 (slot 6), 0000 (slot 1) */
  uint8_t falling[2] = { 0x49, 0x01 };
  bw_GenSlots st;
  bw_Reader r;
  uint64_t slot;
  bw_readerinit(&r, three, 1);   /* encoding 3 */
  CHECK(!bw_genreadslotsbegin(&r, &sp, &st) && r.status == BW_ERANGE && r.errpos == 0);
  bw_readerinit(&r, count, 2);   /* index, count 11 > 10 */
  CHECK(!bw_genreadslotsbegin(&r, &sp, &st) && r.status == BW_ERANGE && r.errpos == 2);
  bw_readerinit(&r, falling, 2); /* index, count 2, slot 6, then slot 1 */
  CHECK(bw_genreadslotsbegin(&r, &sp, &st));
  CHECK(bw_genreadslot(&r, &sp, &st, &slot) == 1 && slot == 6);
  CHECK(bw_genreadslot(&r, &sp, &st, &slot) == -1 && r.status == BW_ERANGE);
}

/* Relative fields as generated code describes them (WIRE.md examples). */
static const bw_Field yaw10 = { .kind = BW_KANGLE, .nbits = 10,
  .dmax = 360.0, .ntiers = 4, .tierbits = { 3, 5, 7, 9 } };

/* from step 1023 to step 1 is +2 the short way: z = 4, bits(1, 1) bits(4, 3) */
static void test_diff_angle (void) {
  uint8_t buf[8];
  const uint8_t *out;
  size_t len;
  uint64_t u;
  bw_Writer w;
  bw_Reader r;
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_genwritediff(&w, &yaw10, 1023 * 360.0 / 1024, 1 * 360.0 / 1024));
  CHECK(bw_bitswritten(&w) == 4);
  out = bw_writerdata(&w, &len);
  CHECK(len == 1 && out[0] == (1 | 4 << 1));
  bw_readerinit(&r, out, len);
  CHECK(bw_genreaddiff(&r, &yaw10, 1023 * 360.0 / 1024, &u) && u == 1);
  /* a non-finite value is refused, as the driver raises */
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(!bw_genwritediff(&w, &yaw10, 0.0, NAN) && w.status == BW_ERANGE);
}

/* a baseline the driver would not start from: the value goes whole, read
** whole, bit for bit what the plain writers send */
static void test_diff_whole (void) {
  static const bw_Field rot9 = { .kind = BW_KQUAT,
    .q = { -0.707106769f, 1.41421354f, 511u, 9 }, .ntiers = 4,
    .tierbits = { 3, 5, 7, 9 } };
  const float zero[4] = { 0, 0, 0, 0 }, q[4] = { 0.1f, -0.5f, 0.2f, 0.8f };
  uint8_t a[16], b[16];
  const uint8_t *pa, *pb;
  size_t la, lb;
  uint64_t u;
  float back[4];
  bw_Writer wa, wb;
  bw_Reader r;
  bw_writerinit(&wa, a, sizeof(a));
  bw_writerinit(&wb, b, sizeof(b));
  CHECK(bw_genwritediff(&wa, &yaw10, INFINITY, 90.0));
  CHECK(bw_genwriteangle(&wb, 90.0, 360.0, 10));
  CHECK(bw_genwritequatdiff(&wa, &rot9, zero, q));
  CHECK(bw_genwritequat(&wb, &rot9.q, q));
  pa = bw_writerdata(&wa, &la);
  pb = bw_writerdata(&wb, &lb);
  CHECK(la == lb && memcmp(pa, pb, la) == 0 && bw_bitswritten(&wa) == 10 + 29);
  bw_readerinit(&r, pa, la);
  CHECK(bw_genreaddiff(&r, &yaw10, NAN, &u) && u == 256);
  CHECK(bw_genreadquatdiff(&r, &rot9, zero, back) && r.pos == 39);
  /* a quaternion with no length is refused against a usable baseline */
  bw_writerinit(&wa, a, sizeof(a));
  CHECK(!bw_genwritequatdiff(&wa, &rot9, q, zero) && wa.status == BW_ERANGE);
}

/* a difference that leaves [0, top] fails with range at its first bit */
static void test_diff_range (void) {
  static const bw_Field x = { .kind = BW_KFLOAT,
    .q = { 0.0f, 1.0f, 16u, 5 }, .ntiers = 1, .tierbits = { 3 } };
  uint8_t buf[2] = { 0x01 | 0x07 << 1, 0 };  /* tier 0, z = 7: d = -4 */
  uint64_t u;
  bw_Reader r;
  bw_readerinit(&r, buf, 2);
  CHECK(!bw_genreaddiff(&r, &x, 2.0 / 16, &u));
  CHECK(r.status == BW_ERANGE && r.errpos == 0);
  bw_readerinit(&r, buf, 2);
  CHECK(bw_genreaddiff(&r, &x, 5.0 / 16, &u) && u == 1);
}

int main (void) {
  test_paths();
  test_path_truncated();
  test_count();
  test_deltacount();
  test_strings();
  test_sparse_roundtrip();
  test_sparse_hostile();
  test_diff_angle();
  test_diff_whole();
  test_diff_range();
  return check_summary("test_gen");
}
