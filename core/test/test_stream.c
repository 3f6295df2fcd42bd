/*
** test_stream.c - unit tests of the bit streams and their primitives:
** bits, bools, integers, floats, alignment, bytes and checks
** See LICENSE for copyright and terms.
*/

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bw.h"
#include "check.h"
#include "streamcheck.h"


/*
** A bit-at-a-time reference writer and reader (streamcheck.h) pin the bit
** order at every width and offset; test_vectors.c pins the wire format to
** serialize.h's bytes. Inputs copied to the end of a malloc'd block of
** exactly their size let ASan (`make sanitize`) catch any read past them.
*/

/* {===================== bits ===================== */

static void test_bitsrequired (void) {
  CHECK(bw_bitsrequired(0, 0) == 0);
  CHECK(bw_bitsrequired(-5, -5) == 0);
  CHECK(bw_bitsrequired(INT64_MIN, INT64_MIN) == 0);
  CHECK(bw_bitsrequired(0, 1) == 1);
  CHECK(bw_bitsrequired(-1, 0) == 1);
  CHECK(bw_bitsrequired(0, 255) == 8);
  CHECK(bw_bitsrequired(0, 256) == 9);
  CHECK(bw_bitsrequired(-100, 100) == 8);
  CHECK(bw_bitsrequired(-100, -50) == 6);
  CHECK(bw_bitsrequired(INT64_MIN, -1) == 63);
  CHECK(bw_bitsrequired(0, INT64_MAX) == 63);
  CHECK(bw_bitsrequired(-1, INT64_MAX) == 64);
  CHECK(bw_bitsrequired(INT64_MIN, INT64_MAX) == 64);
  CHECK(bw_bitsrequired(INT64_MAX - 1, INT64_MAX) == 1);
}

/* every width 0..64 at every offset 0..64, four value patterns, against the
** reference bit order; then read back */
static void test_bits_widths_offsets (void) {
  unsigned n, k, pat;
  int bad = 0;
  for (n = 0; n <= 64; n++)
    for (k = 0; k <= 64; k++)
      for (pat = 0; pat < 4; pat++) {
        uint8_t buf[24], ref[24];
        uint64_t pos = 0, prefix = rng() & lowmask(k), v;
        const uint8_t *data;
        size_t len;
        bw_Writer w;
        bw_Reader r;
        switch (pat) {
          case 0: v = lowmask(n); break;                       /* all ones */
          case 1: v = n ? UINT64_C(1) << (n - 1) : 0; break;   /* high bit */
          case 2: v = UINT64_C(0x5555555555555555) & lowmask(n); break;
          default: v = rng() & lowmask(n); break;
        }
        memset(ref, 0, sizeof(ref));
        refput(ref, &pos, prefix, k);
        refput(ref, &pos, v, n);
        refput(ref, &pos, 0x5, 3);  /* something after it */
        bw_writerinit(&w, buf, sizeof(buf));
        bw_writebits(&w, prefix, k);
        bw_writebits(&w, v, n);
        bw_writebits(&w, 0x5, 3);
        data = bw_writerdata(&w, &len);
        EXPECT(bad, w.status == BW_OK && bw_bitswritten(&w) == pos
               && len == (pos + 7) / 8 && memcmp(data, ref, len) == 0,
               "write n=%u k=%u pat=%u", n, k, pat);
        bw_readerinit(&r, ref, (size_t)((pos + 7) / 8));
        EXPECT(bad, bw_readbits(&r, k) == prefix && bw_readbits(&r, n) == v
               && bw_readbits(&r, 3) == 0x5 && r.status == BW_OK
               && r.pos == pos, "read n=%u k=%u pat=%u", n, k, pat);
      }
  CHECK(bad == 0);
}

/* a long random sequence of widths and values, the reference alongside */
static void test_bits_random_sequence (void) {
  enum { NVAL = 4000 };
  static uint64_t vals[NVAL];
  static unsigned widths[NVAL];
  static uint8_t buf[NVAL * 8 + 8], ref[NVAL * 8 + 8];
  uint64_t pos = 0;
  const uint8_t *data;
  size_t i, len;
  bw_Writer w;
  bw_Reader r;
  int bad = 0;
  memset(ref, 0, sizeof(ref));
  bw_writerinit(&w, buf, sizeof(buf));
  randomwrites(&w, ref, &pos, widths, vals, NVAL);
  data = bw_writerdata(&w, &len);
  CHECK(w.status == BW_OK);
  CHECK(bw_bitswritten(&w) == pos);
  CHECK(len == (pos + 7) / 8 && memcmp(data, ref, len) == 0);
  bw_readerinit(&r, ref, len);
  for (i = 0; i < NVAL; i++)
    EXPECT(bad, bw_readbits(&r, widths[i]) == vals[i], "value %zu", i);
  CHECK(bad == 0);
  CHECK(r.status == BW_OK && r.pos == pos);
  CHECK(bw_bitsremaining(&r) == len * 8 - pos);
}

static void test_bits_errors (void) {
  uint8_t buf[16];
  bw_Writer w;
  bw_Reader r;
  unsigned n;
  int bad = 0;
  for (n = 0; n < 64; n++) {  /* one bit too many for the width */
    bw_writerinit(&w, buf, sizeof(buf));
    bw_writebits(&w, 1, 3);
    EXPECT(bad, bw_writebits(&w, UINT64_C(1) << n, n) == BW_ERANGE
           && w.errpos == 3 && bw_bitswritten(&w) == 3, "n=%u", n);
  }
  CHECK(bad == 0);
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writebits(&w, 0, 0) == BW_OK && bw_bitswritten(&w) == 0);
  CHECK(bw_writebits(&w, ~UINT64_C(0), 64) == BW_OK);
  CHECK(bw_writebits(&w, 0, 65) == BW_EARG);   /* a width over 64 */
  CHECK(w.errpos == 64 && bw_bitswritten(&w) == 64);
  bw_readerinit(&r, buf, sizeof(buf));
  CHECK(bw_readbits(&r, 65) == 0 && r.status == BW_EARG && r.errpos == 0);
  bw_readerinit(&r, buf, sizeof(buf));
  CHECK(bw_readbits(&r, 0) == 0 && r.status == BW_OK && r.pos == 0);
  CHECK(bw_readbits(&r, 64) == ~UINT64_C(0) && r.status == BW_OK);
}

static void test_bool (void) {
  uint8_t buf[4];
  const uint8_t *data;
  size_t len;
  bw_Writer w;
  bw_Reader r;
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebool(&w, 1);
  bw_writebool(&w, 0);
  bw_writebool(&w, 2);    /* any non-zero is true */
  bw_writebool(&w, -1);
  bw_writebool(&w, 0);
  data = bw_writerdata(&w, &len);
  CHECK(w.status == BW_OK && bw_bitswritten(&w) == 5);
  CHECK(len == 1 && data[0] == 0x0d);
  bw_readerinit(&r, data, len);
  CHECK(bw_readbool(&r) == 1);
  CHECK(bw_readbool(&r) == 0);
  CHECK(bw_readbool(&r) == 1);
  CHECK(bw_readbool(&r) == 1);
  CHECK(bw_readbool(&r) == 0);
  CHECK(r.status == BW_OK && r.pos == 5);
}

/* }========================================================== */


/* {===================== int ===================== */

static void test_int_equal_bounds (void) {
  uint8_t buf[8];
  bw_Writer w;
  bw_Reader r;
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writeint(&w, 5, 5, 5) == BW_OK && bw_bitswritten(&w) == 0);
  CHECK(bw_writeint(&w, INT64_MIN, INT64_MIN, INT64_MIN) == BW_OK);
  CHECK(bw_writeint(&w, INT64_MAX, INT64_MAX, INT64_MAX) == BW_OK);
  CHECK(bw_bitswritten(&w) == 0);
  CHECK(bw_writeint(&w, 6, 5, 5) == BW_ERANGE && bw_bitswritten(&w) == 0);
  bw_readerinit(&r, NULL, 0);  /* zero bits: nothing to read, nothing read */
  CHECK(bw_readint(&r, 5, 5) == 5);
  CHECK(bw_readint(&r, INT64_MIN, INT64_MIN) == INT64_MIN);
  CHECK(bw_readint(&r, -7, -7) == -7);
  CHECK(r.status == BW_OK && r.pos == 0);
}

static void test_int_ranges (void) {
  static const struct { int64_t min, max; unsigned bits; } ranges[] = {
    {0, 1, 1}, {-1, 0, 1}, {-100, 100, 8}, {-100, -50, 6}, {0, 255, 8},
    {0, 256, 9}, {INT64_MIN, -1, 63}, {0, INT64_MAX, 63},
    {-1, INT64_MAX, 64}, {INT64_MIN, INT64_MAX, 64},
    {INT64_MIN, INT64_MIN + 1, 1}, {INT64_MAX - 1, INT64_MAX, 1},
    {-2000000000, 2000000000, 32}, {-(INT64_C(1) << 40), INT64_C(1) << 40, 42},
  };
  size_t i;
  int bad = 0;
  for (i = 0; i < NELEMS(ranges); i++) {
    int64_t min = ranges[i].min, max = ranges[i].max;
    uint64_t span = (uint64_t)max - (uint64_t)min;
    int64_t vals[5];
    uint8_t buf[64];
    const uint8_t *data;
    size_t len, k;
    bw_Writer w;
    bw_Reader r;
    vals[0] = min;
    vals[1] = max;
    vals[2] = (int64_t)((uint64_t)min + span / 2);  /* no overflow: < 2^63 */
    vals[3] = (int64_t)((uint64_t)min + span / 3);
    vals[4] = min <= 0 && 0 <= max ? 0 : min;
    EXPECT(bad, bw_bitsrequired(min, max) == ranges[i].bits, "range %zu", i);
    bw_writerinit(&w, buf, sizeof(buf));
    for (k = 0; k < 5; k++) bw_writeint(&w, vals[k], min, max);
    EXPECT(bad, w.status == BW_OK && bw_bitswritten(&w) == 5 * ranges[i].bits,
           "range %zu", i);
    /* one past either end fails and writes nothing */
    if (min > INT64_MIN)
      EXPECT(bad, bw_writeint(&w, min - 1, min, max) == BW_ERANGE
             && w.errpos == 5 * ranges[i].bits, "range %zu", i);
    w.status = BW_OK;
    if (max < INT64_MAX)
      EXPECT(bad, bw_writeint(&w, max + 1, min, max) == BW_ERANGE,
             "range %zu", i);
    w.status = BW_OK;
    EXPECT(bad, bw_bitswritten(&w) == 5 * ranges[i].bits, "range %zu", i);
    data = bw_writerdata(&w, &len);
    bw_readerinit(&r, data, len);
    for (k = 0; k < 5; k++)
      EXPECT(bad, bw_readint(&r, min, max) == vals[k], "range %zu val %zu",
             i, k);
    EXPECT(bad, r.status == BW_OK, "range %zu", i);
  }
  CHECK(bad == 0);
}

static void test_int_errors (void) {
  uint8_t buf[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  bw_Writer w;
  bw_Reader r;
  /* the writer refuses min > max */
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writeint(&w, 0, 1, 0) == BW_ERANGE && w.errpos == 0);
  /* the reader calls min > max a bad argument */
  bw_readerinit(&r, buf, sizeof(buf));
  CHECK(bw_readint(&r, 1, 0) == 0 && r.status == BW_EARG);
  /* an offset over max - min: [-100, -50] is 6 bits, 63 > 50 */
  bw_readerinit(&r, buf, sizeof(buf));
  bw_readbits(&r, 5);
  CHECK(bw_readint(&r, -100, -50) == 0);
  CHECK(r.status == BW_ERANGE && r.errpos == 5 && r.pos == 5);
  /* an offset that is exactly max - min is fine */
  buf[0] = 50;
  bw_readerinit(&r, buf, sizeof(buf));
  CHECK(bw_readint(&r, -100, -50) == -50 && r.status == BW_OK);
  /* too few bits left */
  bw_readerinit(&r, buf, 1);
  CHECK(bw_readint(&r, 0, 511) == 0 && r.status == BW_ETRUNC);
  CHECK(r.errpos == 0);
}

/* }========================================================== */


/* {===================== float and double ===================== */

static void test_float_patterns (void) {
  static const uint32_t pats[] = {
    0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000,
    0x7fc00000, 0xffc00000, 0x7fc12345, 0xffbfffff, 0x7f800001, /* NaNs */
    0x00000001, 0x807fffff, 0x7f7fffff, 0x00800000, 0xdeadbeef,
  };
  static const uint64_t dpats[] = {
    UINT64_C(0), UINT64_C(0x8000000000000000), UINT64_C(0x3ff0000000000000),
    UINT64_C(0x7ff0000000000000), UINT64_C(0xfff0000000000000),
    UINT64_C(0x7ff8000000000000), UINT64_C(0xfff8000000000001),
    UINT64_C(0x7ff0000000000001), UINT64_C(0x7ff7ffffffffffff), /* NaNs */
    UINT64_C(1), UINT64_C(0x800fffffffffffff), UINT64_C(0x7fefffffffffffff),
    UINT64_C(0x0123456789abcdef),
  };
  size_t i;
  int bad = 0;
  for (i = 0; i < NELEMS(pats); i++) {
    uint8_t buf[16], ref[16];
    uint64_t pos = 0;
    bw_Writer w;
    bw_Reader r;
    const uint8_t *data;
    size_t len;
    memset(ref, 0, sizeof(ref));
    refput(ref, &pos, 3, 3);
    refput(ref, &pos, pats[i], 32);
    bw_writerinit(&w, buf, sizeof(buf));
    bw_writebits(&w, 3, 3);  /* off the byte grid */
    bw_writefloat(&w, u2f(pats[i]));
    data = bw_writerdata(&w, &len);
    EXPECT(bad, w.status == BW_OK && len == 5 && memcmp(data, ref, 5) == 0,
           "float %08lx", (unsigned long)pats[i]);
    bw_readerinit(&r, data, len);
    bw_readbits(&r, 3);
    EXPECT(bad, f2u(bw_readfloat(&r)) == pats[i] && r.status == BW_OK,
           "float %08lx", (unsigned long)pats[i]);
  }
  for (i = 0; i < NELEMS(dpats); i++) {
    uint8_t buf[16], ref[16];
    uint64_t pos = 0;
    bw_Writer w;
    bw_Reader r;
    const uint8_t *data;
    size_t len;
    memset(ref, 0, sizeof(ref));
    refput(ref, &pos, 5, 5);
    refput(ref, &pos, dpats[i], 64);
    bw_writerinit(&w, buf, sizeof(buf));
    bw_writebits(&w, 5, 5);
    bw_writedouble(&w, u2d(dpats[i]));
    data = bw_writerdata(&w, &len);
    EXPECT(bad, w.status == BW_OK && len == 9 && memcmp(data, ref, 9) == 0,
           "double %016llx", ULL(dpats[i]));
    bw_readerinit(&r, data, len);
    bw_readbits(&r, 5);
    EXPECT(bad, d2u(bw_readdouble(&r)) == dpats[i] && r.status == BW_OK,
           "double %016llx", ULL(dpats[i]));
  }
  CHECK(bad == 0);
}

/* }========================================================== */


/* {===================== compressed float ===================== */

/* serialize.h's algorithm written out step by step in float32, plus our
** clamp of q to miv; an independent statement of WIRE.md */
static uint32_t refquantize (float min, float max, float res, float x,
                             uint32_t *miv) {
  volatile float delta = max - min;
  volatile float values = delta / res;
  volatile float norm, scaled, rounded;
  uint32_t q;
  if (!(values >= 1.0f)) values = 1.0f;
  if (values > 4294967040.0f) values = 4294967040.0f;
  *miv = (uint32_t)ceilf(values);
  norm = (x - min) / delta;
  if (!(norm >= 0.0f)) norm = 0.0f;
  if (norm > 1.0f) norm = 1.0f;
  scaled = norm * (float)*miv;
  rounded = floorf(scaled + 0.5f);
  q = (uint32_t)rounded;
  return q > *miv ? *miv : q;
}

static float refdequantize (float min, float max, uint32_t miv, uint32_t q) {
  volatile float delta = max - min;
  volatile float norm = (float)q / (float)miv;
  volatile float scaled = norm * delta;
  return scaled + min;
}

static void test_cfloat_init (void) {
  bw_QFloat q;
  CHECK(bw_qfloatinit(&q, 0, 1, 0.1) == BW_OK);
  CHECK(q.miv == 10 && q.nbits == 4);
  CHECK(bw_qfloatinit(&q, 1, 1, 0.1) == BW_EARG);       /* min == max */
  CHECK(bw_qfloatinit(&q, 2, 1, 0.1) == BW_EARG);       /* min > max */
  CHECK(bw_qfloatinit(&q, 0, 1, 0) == BW_EARG);         /* res 0 */
  CHECK(bw_qfloatinit(&q, 0, 1, -0.5) == BW_EARG);      /* res < 0 */
  CHECK(bw_qfloatinit(&q, NAN, 1, 0.1) == BW_EARG);
  CHECK(bw_qfloatinit(&q, 0, INFINITY, 0.1) == BW_EARG);
  CHECK(bw_qfloatinit(&q, 0, 1, NAN) == BW_EARG);
  CHECK(bw_qfloatinit(&q, -1e39, 0, 1) == BW_EARG);     /* -inf as float32 */
  CHECK(bw_qfloatinit(&q, -3e38, 3e38, 1) == BW_EARG);  /* delta overflows */
  CHECK(bw_qfloatinit(&q, 0, 1, 1e-50) == BW_EARG);     /* res is 0 in f32 */
  /* 1 + 2^-30 and 1 are the same float32: an empty range */
  CHECK(bw_qfloatinit(&q, 1.0, 1.0 + 0x1p-30, 0.1) == BW_EARG);
  /* values clamp to [1, 4294967040] */
  CHECK(bw_qfloatinit(&q, 0, 1, 5) == BW_OK && q.miv == 1 && q.nbits == 1);
  CHECK(bw_qfloatinit(&q, 0, 1e10, 1) == BW_OK);
  CHECK(q.miv == UINT32_C(4294967040) && q.nbits == 32);
  /* values is rounded up: 10 / 3 in float32 -> 4 */
  CHECK(bw_qfloatinit(&q, 0, 10, 3) == BW_OK && q.miv == 4 && q.nbits == 3);
}

static void test_cfloat_encode (void) {
  bw_QFloat q;
  uint32_t miv, unclamped;
  volatile float one = 1.0f, half = 0.5f;
  CHECK(bw_qfloatinit(&q, -10, 10, 0.01) == BW_OK);
  CHECK(q.miv == 2000 && q.nbits == 11);
  CHECK(bw_qfloatencode(&q, -10) == 0);
  CHECK(bw_qfloatencode(&q, 10) == 2000);
  CHECK(bw_qfloatencode(&q, 0) == 1000);
  CHECK(bw_qfloatencode(&q, -11) == 0);          /* clamped */
  CHECK(bw_qfloatencode(&q, 1e30) == 2000);
  CHECK(bw_qfloatencode(&q, 1e300) == 2000);     /* inf as float32 */
  CHECK(bw_qfloatencode(&q, -1e300) == 0);
  CHECK(bw_qfloatencode(&q, INFINITY) == 2000);
  CHECK(bw_qfloatencode(&q, -INFINITY) == 0);
  CHECK(bw_qfloatencode(&q, NAN) == 0);          /* NaN -> min */
  CHECK(bw_qfloatdecode(&q, 0) == -10.0f);
  CHECK(bw_qfloatdecode(&q, 2000) == 10.0f);
  /* the clamp serialize.h lacks: miv = 2^23 + 1 is odd, so miv + 0.5 ties
  ** to the even miv + 1, one past the largest integer the field holds */
  CHECK(bw_qfloatinit(&q, 0, 8388609, 1) == BW_OK);
  CHECK(q.miv == 8388609 && q.nbits == 24);
  unclamped = (uint32_t)floorf(one * (float)q.miv + half);
  CHECK(unclamped == 8388610);                   /* what serialize.h sends */
  CHECK(bw_qfloatencode(&q, 8388609) == 8388609);
  CHECK(refquantize(0, 8388609, 1, 8388609, &miv) == 8388609);
  CHECK(bw_qfloatdecode(&q, q.miv) == 8388609.0f);
}

static void test_cfloat_reference (void) {
  static const float ranges[][3] = {
    {-10, 10, 0.01f}, {0, 10, 0.01f}, {-512, 512, 0.001f}, {0, 1, 1.0f / 3},
    {-1e6f, 1e6f, 0.1f}, {0, 8388609, 1}, {-1, 1, 1e-9f}, {3, 7, 0.5f},
  };
  size_t i;
  int k, bad = 0;
  for (i = 0; i < NELEMS(ranges); i++) {
    float min = ranges[i][0], max = ranges[i][1], res = ranges[i][2];
    bw_QFloat q;
    uint32_t miv;
    refquantize(min, max, res, 0, &miv);
    EXPECT(bad, bw_qfloatinit(&q, min, max, res) == BW_OK && q.miv == miv
           && q.nbits == bw_bitsrequired(0, miv), "range %zu", i);
    for (k = 0; k < 3000; k++) {
      /* mostly inside the range, some outside, some exact ends */
      float x = min + (max - min) * (float)((double)(rng() % 1200001)
                                            / 1000000.0 - 0.1);
      uint32_t want, got;
      if (k == 0) x = min;
      if (k == 1) x = max;
      want = refquantize(min, max, res, x, &miv);
      got = bw_qfloatencode(&q, x);
      EXPECT(bad, got == want, "range %zu x=%a: %lu != %lu", i, (double)x,
             (unsigned long)got, (unsigned long)want);
      EXPECT(bad, f2u(bw_qfloatdecode(&q, got))
             == f2u(refdequantize(min, max, miv, got)), "range %zu", i);
    }
  }
  CHECK(bad == 0);
}

static void test_cfloat_stream (void) {
  uint8_t buf[64];
  const uint8_t *data;
  size_t len;
  bw_QFloat q;
  bw_Writer w;
  bw_Reader r;
  int k, bad = 0;
  float worst = 0;
  CHECK(bw_qfloatinit(&q, -10, 10, 0.01) == BW_OK);
  /* round trips land within half a step (plus float32 rounding) */
  for (k = 0; k < 2000; k++) {
    double x = -10 + 20 * (double)(rng() % 100001) / 100000.0;
    float y;
    bw_writerinit(&w, buf, sizeof(buf));
    bw_writebits(&w, 1, 1);
    bw_writecompressedfloat(&w, x, &q);
    data = bw_writerdata(&w, &len);
    EXPECT(bad, bw_bitswritten(&w) == 12, "x=%g", x);
    bw_readerinit(&r, data, len);
    bw_readbits(&r, 1);
    y = bw_readcompressedfloat(&r, &q);
    EXPECT(bad, r.status == BW_OK && r.pos == 12, "x=%g", x);
    if (fabsf(y - (float)x) > worst) worst = fabsf(y - (float)x);
  }
  CHECK(bad == 0);
  CHECK(worst <= 0.005f + 1e-5f);
  CHECK(worst > 0.004f);   /* and quantization did happen */
  /* an integer above miv on the wire: 2001..2047 in 11 bits */
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, 0, 2);
  bw_writebits(&w, 2001, 11);
  data = bw_writerdata(&w, &len);
  bw_readerinit(&r, data, len);
  bw_readbits(&r, 2);
  CHECK(bw_readcompressedfloat(&r, &q) == 0.0f);
  CHECK(r.status == BW_ERANGE && r.errpos == 2 && r.pos == 2);
  /* exactly miv is fine */
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, 2000, 11);
  data = bw_writerdata(&w, &len);
  bw_readerinit(&r, data, len);
  CHECK(bw_readcompressedfloat(&r, &q) == 10.0f && r.status == BW_OK);
  /* truncated */
  bw_readerinit(&r, data, 1);
  CHECK(bw_readcompressedfloat(&r, &q) == 0.0f && r.status == BW_ETRUNC);
}

/* }========================================================== */


/* {===================== align and bytes ===================== */

static void test_align (void) {
  unsigned k, j;
  int bad = 0;
  for (k = 0; k <= 24; k++) {
    uint8_t buf[8];
    const uint8_t *data;
    size_t len;
    bw_Writer w;
    bw_Reader r;
    uint64_t up = (k + 7) / 8 * 8;
    bw_writerinit(&w, buf, sizeof(buf));
    bw_writebits(&w, lowmask(k), k);
    bw_writealign(&w);
    EXPECT(bad, w.status == BW_OK && bw_bitswritten(&w) == up, "k=%u", k);
    bw_writealign(&w);  /* aligned: writes nothing */
    EXPECT(bad, bw_bitswritten(&w) == up, "k=%u", k);
    data = bw_writerdata(&w, &len);
    EXPECT(bad, len == up / 8 && (k % 8 == 0
                                  || data[len - 1] == lowmask(k % 8)),
           "k=%u", k);
    bw_readerinit(&r, data, len);
    bw_readbits(&r, k);
    bw_readalign(&r);
    EXPECT(bad, r.status == BW_OK && r.pos == up, "k=%u", k);
    /* each padding bit set on its own is refused at the align's start */
    for (j = k; j < up; j++) {
      uint8_t bytes[8];
      memcpy(bytes, data, len);
      bytes[j / 8] |= (uint8_t)(1u << (j % 8));
      bw_readerinit(&r, bytes, len);
      bw_readbits(&r, k);
      bw_readalign(&r);
      EXPECT(bad, r.status == BW_EALIGN && r.errpos == k && r.pos == k,
             "k=%u j=%u", k, j);
    }
  }
  CHECK(bad == 0);
}

/* bytes after a prefix of every length 0..127 (every offset mod 8 and
** mod 64), of every length 0..20, then a trailer, with either writer */
static void test_bytes_offsets (void) {
  uint8_t src[20];
  unsigned k, grow;
  size_t n, i;
  int bad = 0;
  for (i = 0; i < sizeof(src); i++) src[i] = (uint8_t)(0xA0 + i * 7);
  for (grow = 0; grow < 2; grow++)
    for (k = 0; k < 128; k++)
      for (n = 0; n <= 20; n++) {
        uint8_t buf[64], ref[64], *copy;
        uint64_t pos = 0, prefix = rng() & lowmask(k % 65), start;
        const uint8_t *data, *p;
        size_t len;
        Heap heap = {0, 0, 0};
        bw_Writer w;
        bw_Reader r;
        memset(ref, 0, sizeof(ref));
        if (grow) bw_writerinitgrow(&w, heapalloc, &heap, 1024);
        else bw_writerinit(&w, buf, sizeof(buf));
        /* the prefix, as two writes when it is wider than 64 bits */
        if (k > 64) {
          refput(ref, &pos, UINT64_C(0x0123456789abcdef), 64);
          bw_writebits(&w, UINT64_C(0x0123456789abcdef), 64);
          prefix &= lowmask(k - 64);
          refput(ref, &pos, prefix, k - 64);
          bw_writebits(&w, prefix, k - 64);
        }
        else {
          refput(ref, &pos, prefix, k);
          bw_writebits(&w, prefix, k);
        }
        pos = (pos + 7) / 8 * 8;
        start = pos;
        for (i = 0; i < n; i++) refput(ref, &pos, src[i], 8);
        refput(ref, &pos, 0x15, 5);
        bw_writebytes(&w, src, n);
        bw_writebits(&w, 0x15, 5);
        data = bw_writerdata(&w, &len);
        EXPECT(bad, w.status == BW_OK && bw_bitswritten(&w) == pos
               && len == (pos + 7) / 8 && memcmp(data, ref, len) == 0,
               "write grow=%u k=%u n=%zu", grow, k, n);
        copy = tightcopy(ref, (size_t)((pos + 7) / 8));
        bw_readerinit(&r, copy, (size_t)((pos + 7) / 8));
        if (k > 64) bw_readbits(&r, 64);
        EXPECT(bad, bw_readbits(&r, k > 64 ? k - 64 : k) == prefix,
               "read k=%u", k);
        p = bw_readbytes(&r, n);
        EXPECT(bad, p == copy + start / 8 && memcmp(p, src, n) == 0
               && bw_readbits(&r, 5) == 0x15 && r.status == BW_OK
               && r.pos == pos, "read grow=%u k=%u n=%zu", grow, k, n);
        free(copy);
        bw_writerfree(&w);
        EXPECT(bad, heap.live == 0, "leak grow=%u k=%u n=%zu", grow, k, n);
      }
  CHECK(bad == 0);
}

static void test_bytes_errors (void) {
  uint8_t buf[8] = {0x03, 'a', 'b', 'c', 0, 0, 0, 0};
  bw_Reader r;
  const uint8_t *p;
  /* a non-zero pad before the bytes */
  bw_readerinit(&r, buf, sizeof(buf));
  bw_readbits(&r, 1);
  CHECK(bw_readbytes(&r, 2) == NULL && r.status == BW_EALIGN);
  CHECK(r.errpos == 1);
  /* more bytes than remain after the pad: counted after aligning */
  bw_readerinit(&r, buf, 4);
  bw_readbits(&r, 2);
  CHECK(bw_readbytes(&r, 4) == NULL && r.status == BW_ETRUNC);
  CHECK(r.errpos == 8);
  bw_readerinit(&r, buf, 4);
  bw_readbits(&r, 8);
  p = bw_readbytes(&r, 3);
  CHECK(p == buf + 1 && r.status == BW_OK && bw_bitsremaining(&r) == 0);
  CHECK(bw_readbytes(&r, 0) == buf + 4 && r.status == BW_OK);
}

/* }========================================================== */

/* {===================== check ===================== */

static void test_check (void) {
  unsigned k;
  int bad = 0;
  for (k = 0; k < 20; k++) {
    uint8_t buf[16];
    const uint8_t *data;
    size_t len;
    uint64_t up = (k + 7) / 8 * 8;
    bw_Writer w;
    bw_Reader r;
    bw_writerinit(&w, buf, sizeof(buf));
    bw_writebits(&w, lowmask(k), k);
    bw_writecheck(&w, BW_CHECKMAGIC);
    data = bw_writerdata(&w, &len);
    EXPECT(bad, w.status == BW_OK && bw_bitswritten(&w) == up + 32
           && memcmp(data + up / 8, "\x78\x56\x34\x12", 4) == 0, "k=%u", k);
    bw_readerinit(&r, data, len);
    bw_readbits(&r, k);
    bw_readcheck(&r, BW_CHECKMAGIC);
    EXPECT(bad, r.status == BW_OK && r.pos == up + 32, "k=%u", k);
    /* another magic: mismatch reported where the 32 bits start */
    bw_readerinit(&r, data, len);
    bw_readbits(&r, k);
    bw_readcheck(&r, 0xdeadbeef);
    EXPECT(bad, r.status == BW_ECHECK && r.errpos == up && r.pos == up,
           "k=%u", k);
    /* cut short */
    bw_readerinit(&r, data, len - 1);
    bw_readbits(&r, k);
    bw_readcheck(&r, BW_CHECKMAGIC);
    EXPECT(bad, r.status == BW_ETRUNC && r.errpos == up, "k=%u", k);
  }
  CHECK(bad == 0);
  {  /* non-zero padding before the check */
    uint8_t bytes[5] = {0x80, 0x78, 0x56, 0x34, 0x12};
    bw_Reader r;
    bw_readerinit(&r, bytes, sizeof(bytes));
    bw_readbits(&r, 1);
    bw_readcheck(&r, BW_CHECKMAGIC);
    CHECK(r.status == BW_EALIGN && r.errpos == 1);
  }
}

/* }========================================================== */


int main (void) {
  test_bitsrequired();
  test_bits_widths_offsets();
  test_bits_random_sequence();
  test_bits_errors();
  test_bool();
  test_int_equal_bounds();
  test_int_ranges();
  test_int_errors();
  test_float_patterns();
  test_cfloat_init();
  test_cfloat_encode();
  test_cfloat_reference();
  test_cfloat_stream();
  test_align();
  test_bytes_offsets();
  test_bytes_errors();
  test_check();
  return check_summary("test_stream");
}
