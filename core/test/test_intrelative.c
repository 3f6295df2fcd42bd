/*
** test_intrelative.c - int_relative: the tiers of serialize.h, sequences,
** errors
** See LICENSE for copyright and terms.
*/

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bw.h"
#include "check.h"
#include "streamcheck.h"


/* {===================== int_relative ===================== */

static void test_intrelative_tiers (void) {
  /* each tier's ends: difference and its cost in bits */
  static const struct { uint64_t d; unsigned bits; } ends[] = {
    {1, 1}, {2, 5}, {6, 5}, {7, 8}, {23, 8}, {24, 13}, {280, 13}, {281, 18},
    {4377, 18}, {4378, 23}, {69914, 23}, {69915, 38}, {1000000, 38},
  };
  static const uint64_t bases[] = {0, 1, 100, 65535, UINT64_C(4000000000)};
  size_t i, b;
  int bad = 0;
  for (b = 0; b < NELEMS(bases); b++)
    for (i = 0; i < NELEMS(ends); i++) {
      uint8_t buf[16];
      const uint8_t *data;
      size_t len;
      uint64_t prev = bases[b], cur = prev + ends[i].d;
      bw_Writer w;
      bw_Reader r;
      if (cur > UINT32_MAX) continue;
      bw_writerinit(&w, buf, sizeof(buf));
      bw_writebits(&w, 0, 3);
      bw_writeintrelative(&w, prev, cur);
      EXPECT(bad, w.status == BW_OK && bw_bitswritten(&w)
             == 3 + ends[i].bits, "prev=%llu d=%llu", ULL(prev),
             ULL(ends[i].d));
      data = bw_writerdata(&w, &len);
      bw_readerinit(&r, data, len);
      bw_readbits(&r, 3);
      EXPECT(bad, bw_readintrelative(&r, prev) == cur && r.status == BW_OK
             && r.pos == 3 + ends[i].bits, "prev=%llu d=%llu", ULL(prev),
             ULL(ends[i].d));
    }
  CHECK(bad == 0);
}

/* a run of rising indices, as a sparse array sends them */
static void test_intrelative_sequence (void) {
  static uint8_t buf[4096];
  uint64_t idx[300], prev = 0;
  const uint8_t *data;
  size_t i, len;
  bw_Writer w;
  bw_Reader r;
  int bad = 0;
  idx[0] = 0;
  for (i = 1; i < NELEMS(idx); i++)
    idx[i] = idx[i - 1] + 1 + (rng() % 4 == 0 ? rng() % 100000 : rng() % 30);
  bw_writerinit(&w, buf, sizeof(buf));
  for (i = 1; i < NELEMS(idx); i++)
    bw_writeintrelative(&w, idx[i - 1], idx[i]);
  data = bw_writerdata(&w, &len);
  CHECK(w.status == BW_OK);
  bw_readerinit(&r, data, len);
  for (i = 1; i < NELEMS(idx); i++) {
    prev = bw_readintrelative(&r, prev);
    EXPECT(bad, prev == idx[i], "index %zu", i);
  }
  CHECK(bad == 0 && r.status == BW_OK);
}

static void test_intrelative_errors (void) {
  static const struct { unsigned flags, bits; uint32_t over; } tiers[] = {
    {1, 3, 5}, {2, 5, 17}, {3, 9, 257}, {4, 13, 4097}, {5, 17, 65537},
  };
  uint8_t buf[16];
  const uint8_t *data;
  size_t i, len;
  bw_Writer w;
  bw_Reader r;
  /* the writer: not rising, or past 32 bits */
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writeintrelative(&w, 5, 5) == BW_ERANGE && w.errpos == 0);
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writeintrelative(&w, 6, 5) == BW_ERANGE);
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writeintrelative(&w, 5, UINT64_C(0x100000000)) == BW_ERANGE);
  CHECK(bw_bitswritten(&w) == 0);
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writeintrelative(&w, 0, UINT32_MAX) == BW_OK);
  /* the reader: a tier's payload past its range (serialize.h's int) */
  for (i = 0; i < NELEMS(tiers); i++) {
    bw_writerinit(&w, buf, sizeof(buf));
    bw_writebits(&w, 1, 1);
    bw_writebits(&w, 0, tiers[i].flags);      /* not +1, not earlier tiers */
    bw_writebits(&w, 1, 1);                   /* this tier */
    bw_writebits(&w, tiers[i].over, tiers[i].bits);
    data = bw_writerdata(&w, &len);
    bw_readerinit(&r, data, len);
    bw_readbits(&r, 1);
    CHECK(bw_readintrelative(&r, 10) == 0 && r.status == BW_ERANGE);
    CHECK(r.errpos == 1 && r.pos == 1);
    /* one less is the tier's top, and fine */
    bw_writerinit(&w, buf, sizeof(buf));
    bw_writebits(&w, 0, tiers[i].flags);
    bw_writebits(&w, 1, 1);
    bw_writebits(&w, tiers[i].over - 1, tiers[i].bits);
    data = bw_writerdata(&w, &len);
    bw_readerinit(&r, data, len);
    CHECK(bw_readintrelative(&r, 10) > 10 && r.status == BW_OK);
  }
  /* the last tier must still rise */
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, 0, 6);
  bw_writebits(&w, 1000, 32);
  data = bw_writerdata(&w, &len);
  bw_readerinit(&r, data, len);
  CHECK(bw_readintrelative(&r, 1000) == 0 && r.status == BW_ERANGE);
  CHECK(r.errpos == 0);
  bw_readerinit(&r, data, len);
  CHECK(bw_readintrelative(&r, 999) == 1000 && r.status == BW_OK);
  /* a previous index at the top: +1 is past 32 bits */
  buf[0] = 1;
  bw_readerinit(&r, buf, 1);
  CHECK(bw_readintrelative(&r, UINT32_MAX) == 0 && r.status == BW_ERANGE);
  bw_readerinit(&r, buf, 1);
  CHECK(bw_readintrelative(&r, UINT64_C(0x100000000)) == 0);
  CHECK(r.status == BW_EARG);
  /* truncated inside the flags and inside the payload */
  buf[0] = 0;
  bw_readerinit(&r, buf, 0);
  CHECK(bw_readintrelative(&r, 0) == 0 && r.status == BW_ETRUNC);
  bw_readerinit(&r, buf, 1);
  CHECK(bw_readintrelative(&r, 0) == 0 && r.status == BW_ETRUNC);
  CHECK(r.errpos == 6);
}

static void test_intrelativebits (void) {
  static const uint64_t diffs[] = {1, 2, 6, 7, 23, 24, 280, 281, 4377, 4378,
                                   69914, 69915, 1000000};
  size_t i;
  for (i = 0; i < sizeof(diffs) / sizeof(diffs[0]); i++) {
    uint8_t buf[16];
    bw_Writer w;
    bw_writerinit(&w, buf, sizeof(buf));
    CHECK(bw_writeintrelative(&w, 100, 100 + diffs[i]) == BW_OK);
    CHECK(bw_bitswritten(&w) == bw_intrelativebits(100, 100 + diffs[i]));
  }
}

/* }========================================================== */


int main (void) {
  test_intrelative_tiers();
  test_intrelative_sequence();
  test_intrelative_errors();
  test_intrelativebits();
  return check_summary("test_intrelative");
}
