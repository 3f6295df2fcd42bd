/*
** test_game.c - C tests of angles, relative differences and canonical quats
** See LICENSE for copyright and terms.
*/

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bw_schema.h"
#include "check.h"

#define PI2 6.283185307179586

static uint64_t seed = 20261122;
static double rnd (void) {  /* [0, 1), own LCG: the same on every libc */
  seed = seed * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
  return (double)(seed >> 11) / 9007199254740992.0;
}

static void test_angle (void) {
  unsigned b;
  CHECK(bw_angleencode(0, PI2, 10) == 0);
  CHECK(bw_angleencode(PI2 - 1e-9, PI2, 10) == 0);   /* wraps, not 1023 */
  CHECK(bw_angleencode(-1e-9, PI2, 10) == 0);
  CHECK(bw_angleencode(PI2 / 2, PI2, 10) == 512);
  CHECK(bw_angleencode(-PI2 / 4, PI2, 10) == 768);
  CHECK(bw_angleencode(5 * PI2 + PI2 / 4, PI2, 10) == 256);
  CHECK(bw_angleencode(359.9, 360, 8) == 0);
  CHECK(bw_angleencode(-90, 360, 8) == 192);
  CHECK(bw_angleencode(1e300, PI2, 10) < 1024);
  CHECK(bw_angleencode(INFINITY, PI2, 10) == 0);
  CHECK(bw_angledecode(512, PI2, 10) == PI2 / 2);
  CHECK(bw_angleencode(PI2 - 1e-10, PI2, 32) == 0);
  CHECK(bw_angleencode(PI2 * 0.75, PI2, 32) == UINT32_C(3221225472));
  for (b = 1; b <= 32; b++) {  /* every code (or a sample) comes back */
    uint64_t q, n = UINT64_C(1) << b, step = n > 4096 ? n / 4093 : 1;
    int ok = 1;
    for (q = 0; q < n; q += step) {
      ok &= bw_angleencode(bw_angledecode((uint32_t)q, PI2, b), PI2, b) == q;
      ok &= bw_angleencode(bw_angledecode((uint32_t)q, 360, b), 360, b) == q;
    }
    ok &= bw_angleencode(bw_angledecode((uint32_t)(n - 1), PI2, b), PI2, b)
          == n - 1;
    CHECK(ok);
  }
  /* widths past the documented 1..32 give 0, never a cut code */
  CHECK(bw_angleencode(PI2 / 2, PI2, 0) == 0 && bw_angleencode(PI2 / 2, PI2, 40) == 0);
  CHECK(bw_angledecode(5, PI2, 0) == 0 && bw_angledecode(5, PI2, 40) == 0);
}

/* Misuse of the primitives' documented arguments is refused */
static void test_bad_arguments (void) {
  bw_QFloat q;
  const uint8_t tiers[1] = { 8 };
  uint8_t buf[8] = { 0xFF };
  bw_Reader r;
  CHECK(bw_quatinit(&q, 9) == BW_OK && q.nbits == 9 && q.miv == 511);
  CHECK(bw_quatinit(&q, 1) == BW_EARG && q.nbits == 0 && q.miv == 0);
  CHECK(bw_quatinit(&q, 32) == BW_EARG && q.nbits == 0);
  CHECK(bw_quatinit(&q, 64) == BW_EARG && q.nbits == 0);
  bw_readerinit(&r, buf, sizeof(buf));   /* no tiers: as the write, range */
  CHECK(bw_readtiered(&r, 0, 100, tiers, 0) == 0 && r.status == BW_ERANGE && r.errpos == 0);
}

static size_t flush (bw_Writer *w) {
  size_t len;
  bw_writerdata(w, &len);
  return len;
}

static bw_Field anglefield (unsigned bits) {
  bw_Field f;
  memset(&f, 0, sizeof(f));
  f.kind = BW_KANGLE;
  f.nbits = bits;
  f.dmax = PI2;
  f.relative = 1;
  return f;
}

static void test_diff_tiers (void) {
  static const uint8_t t[3] = {4, 7, 11};  /* not the default */
  uint8_t buf[64];
  bw_Writer w;
  bw_Reader r;
  bw_Diff d;
  bw_Field f = anglefield(10);
  /* a float of 18 bits: z 0..15 in 1 + 4 bits, 16..143 in 2 + 7, 144..2191
  ** in 3 + 11, else 3 + 18 */
  d.top = 262143; d.nbits = 18; d.ntiers = 3; d.wrap = 0; d.tiers = t;
  CHECK(bw_diffbits(&d, 1000, 1000) == 5);
  CHECK(bw_diffbits(&d, 1000, 1007) == 5);    /* z 14 */
  CHECK(bw_diffbits(&d, 1000, 992) == 5);     /* z 15 */
  CHECK(bw_diffbits(&d, 1000, 1008) == 9);    /* z 16 */
  CHECK(bw_diffbits(&d, 1000, 1071) == 9);    /* z 142 */
  CHECK(bw_diffbits(&d, 1000, 1072) == 14);   /* z 144 */
  CHECK(bw_diffbits(&d, 1000, 1000 + 1095) == 14);
  CHECK(bw_diffbits(&d, 1000, 1000 + 1096) == 21);  /* escape */
  /* exact bits: base 1000, v 1003 -> z 6: flag 1, then 6 in 4 bits */
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writediff(&w, &d, 1000, 1003) == BW_OK);
  CHECK(flush(&w) == 1 && buf[0] == (1 | 6 << 1));
  /* escape: 000 then the value */
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writediff(&w, &d, 0, 262143) == BW_OK);
  flush(&w);
  CHECK(bw_bitswritten(&w) == 21 && buf[0] == (0x3f << 3 & 0xff));
  /* 10-bit angle: 1 -> 1023 is -2 the short way: z 3 */
  bw_fielddiff(&f, &d);
  CHECK(d.top == 1023 && d.wrap && d.ntiers == BW_NRELTIERS);
  /* default tiers {3, 5, 7, 9}: z 0..7 in 1 + 3 bits, ... 168..679 in 4 + 9 */
  CHECK(bw_diffbits(&d, 1, 1023) == 4);
  CHECK(bw_diffbits(&d, 1023, 1) == 4);
  CHECK(bw_diffbits(&d, 0, 512) == 4 + 10);   /* half a turn: escape */
  CHECK(bw_diffbits(&d, 0, 340) == 4 + 10);   /* z 679 + 4 bits: escape */
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writediff(&w, &d, 1023, 1);
  flush(&w);
  bw_readerinit(&r, buf, 8);
  CHECK(bw_readdiff(&r, &d, 1023) == 1 && r.pos == 4);
  /* a non-wrapping difference that leaves [0, top] is refused at its start */
  d.wrap = 0; d.top = 1000;
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, 7, 3);
  bw_writediff(&w, &d, 5, 0);   /* z 9 from base 5; read from base 3: -5 */
  flush(&w);
  bw_readerinit(&r, buf, 8);
  bw_readbits(&r, 3);
  CHECK(bw_readdiff(&r, &d, 3) == 0 && r.status == BW_ERANGE
        && r.errpos == 3);
  bw_readerinit(&r, buf, 8);
  bw_readbits(&r, 3);
  CHECK(bw_readdiff(&r, &d, 5) == 0 && r.status == BW_OK);
  /* above top */
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writediff(&w, &d, 990, 1000);
  flush(&w);
  bw_readerinit(&r, buf, 8);
  CHECK(bw_readdiff(&r, &d, 995) == 0 && r.status == BW_ERANGE);
  /* escape with a value above top */
  memset(buf, 0, sizeof(buf));
  buf[0] = 0xf8;  /* 000 then 11111 11111 = 1023 > 1000 */
  buf[1] = 0x1f;
  bw_readerinit(&r, buf, 2);
  CHECK(bw_readdiff(&r, &d, 0) == 0 && r.status == BW_ERANGE);
  /* truncated */
  bw_readerinit(&r, buf, 1);
  CHECK(bw_readdiff(&r, &d, 0) == 0 && r.status == BW_ETRUNC);
}

static void test_diff_roundtrip (void) {
  static const uint8_t a[3] = {4, 7, 11}, b[4] = {0, 2, 5, 32};
  uint8_t buf[4096];
  int wrap, k, ok = 1;
  for (wrap = 0; wrap < 2; wrap++) {
    bw_Diff d;
    bw_Writer w;
    bw_Reader r;
    uint64_t base[200], v[200];
    unsigned bits = 0;
    d.nbits = wrap ? 12 : 18;
    d.top = wrap ? 4095 : 262143 - 1000;
    d.wrap = wrap;
    d.tiers = wrap ? b : a;
    d.ntiers = wrap ? 4 : 3;
    bw_writerinit(&w, buf, sizeof(buf));
    for (k = 0; k < 200; k++) {
      double s = k < 100 ? 40 : (double)d.top;  /* near, then anywhere */
      base[k] = (uint64_t)(rnd() * (double)d.top);
      v[k] = (uint64_t)((double)base[k] + (rnd() - 0.5) * s);
      if (v[k] > d.top) v[k] = wrap ? v[k] & d.top : base[k];
      bits += bw_diffbits(&d, base[k], v[k]);
      bw_writediff(&w, &d, base[k], v[k]);
    }
    CHECK(w.status == BW_OK && bw_bitswritten(&w) == bits);
    flush(&w);
    bw_readerinit(&r, buf, (size_t)(bits + 7) / 8);
    for (k = 0; k < 200; k++) ok &= bw_readdiff(&r, &d, base[k]) == v[k];
    CHECK(ok && r.status == BW_OK && r.pos == bits);
  }
}

/* 1 if every code of 'q' decodes and encodes back to itself. */
static int allback (const bw_QFloat *q) {
  uint32_t i;
  for (i = 0; i <= q->miv; i++)
    if (bw_qfloatencode(q, (double)bw_qfloatdecode(q, i)) != i) return 0;
  return 1;
}

/* Random unit quaternions, many close to a tie between two components (the
** codes the old encoder got wrong): every code is canonical, and a decoded
** code encodes back to itself. */
static void test_quat_canonical (void) {
  unsigned bits;
  for (bits = 2; bits <= BW_QUATEXACT; bits++) {
    bw_QFloat q;
    int k, ok = 1;
    bw_quatinit(&q, bits);
    /* every component code comes back: bw_quatcanonical relies on it */
    CHECK(allback(&q));
    for (k = 0; k < 20000; k++) {
      double v[4], out[4];
      uint32_t code[4], again[4];
      int j;
      for (j = 0; j < 4; j++) v[j] = rnd() * 2 - 1;
      if (k % 3 == 0) v[1] = v[0] * (1 + (rnd() - 0.5) * 1e-3);
      if (k % 5 == 0) v[3] = -v[2] * (1 + (rnd() - 0.5) * 1e-4);
      ok &= bw_quatencode(&q, v, code);
      ok &= bw_quatcanonical(&q, code);
      bw_quatdecode(&q, code, out);
      ok &= bw_quatencode(&q, out, again);
      ok &= memcmp(code, again, sizeof(code)) == 0;
    }
    CHECK(ok);
  }
}

/* Hostile codes: the reader refuses exactly the non-canonical ones, so an
** accepted code re-encodes to the same bits. */
static void test_quat_reader (void) {
  bw_QFloat q;
  uint8_t buf[8];
  int k, accepted = 0, ok = 1;
  bw_quatinit(&q, 9);
  for (k = 0; k < 20000; k++) {
    bw_Reader r;
    uint32_t code[4], again[4];
    double v[4];
    int j;
    for (j = 0; j < 4; j++) buf[j] = (uint8_t)(rnd() * 256);
    bw_readerinit(&r, buf, 4);
    if (!bw_readquat(&r, &q, code)) {  /* refused: no value encodes to it */
      ok &= r.status == BW_ERANGE && r.errpos == 0;
      bw_quatdecode(&q, code, v);
      ok &= !(bw_quatencode(&q, v, again) && memcmp(code, again, 16) == 0);
      continue;
    }
    accepted++;
    bw_quatdecode(&q, code, v);
    ok &= bw_quatencode(&q, v, again) && memcmp(code, again, 16) == 0;
  }
  CHECK(ok);
  CHECK(accepted > 5000 && accepted < 20000);
  {  /* every code of 3 bits: canonical exactly when it comes back */
    uint32_t c[4], again[4];
    double v[4];
    bw_QFloat q3;
    int n = 0;
    ok = 1;
    bw_quatinit(&q3, 3);
    for (c[0] = 0; c[0] < 4; c[0]++)
      for (c[1] = 0; c[1] < 8; c[1]++)
        for (c[2] = 0; c[2] < 8; c[2]++)
          for (c[3] = 0; c[3] < 8; c[3]++) {
            int back;
            bw_quatdecode(&q3, c, v);
            back = bw_quatencode(&q3, v, again) && memcmp(c, again, 16) == 0;
            ok &= back == bw_quatcanonical(&q3, c);
            n += back;
          }
    CHECK(ok);
    CHECK(n > 0 && n < 2048);
  }
  {  /* 0.6 + 0.6 squared is over 1: no quaternion has this code */
    uint32_t code[4] = {3, 0, 0, 0};
    code[1] = code[2] = bw_qfloatencode(&q, 0.6);
    code[3] = bw_qfloatencode(&q, 0);
    CHECK(!bw_quatcanonical(&q, code));
    code[0] = 4;
    CHECK(!bw_quatcanonical(&q, code));
  }
}

static void test_quat_diff (void) {
  bw_Field f;
  uint8_t buf[64];
  static const double a[4] = {0.1, 0.2, 0.3, 0.9}, b[4] = {0.11, 0.19, 0.3, 0.9},
                      c[4] = {0.9, 0.2, 0.3, 0.1};
  uint32_t ca[4], cb[4], cc[4], out[4];
  bw_Writer w;
  bw_Reader r;
  memset(&f, 0, sizeof(f));
  f.kind = BW_KQUAT;
  f.relative = 1;
  bw_quatinit(&f.q, 9);
  f.nbits = 9;
  bw_quatencode(&f.q, a, ca);
  bw_quatencode(&f.q, b, cb);
  bw_quatencode(&f.q, c, cc);
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writequatdiff(&w, &f, ca, cb);   /* same largest: 1 + 3 small diffs */
  CHECK(bw_bitswritten(&w) < 1 + 3 * 9);
  bw_writequatdiff(&w, &f, ca, cc);   /* another largest: 1 + 29 */
  flush(&w);
  bw_readerinit(&r, buf, sizeof(buf));
  CHECK(bw_readquatdiff(&r, &f, ca, out) && memcmp(out, cb, 16) == 0);
  CHECK(bw_readquatdiff(&r, &f, ca, out) && memcmp(out, cc, 16) == 0);
}

/* bw_writequat joins its four writes where the writer has room: the bits,
** and where the buffer runs out the failure and its position, are those
** of the four writes apart. */
static void test_quat_writes (void) {
  static const unsigned widths[] = { 2, 9, 20, 21 };
  size_t cap, pre;
  unsigned wi;
  int ok = 1, fails = 0;
  for (wi = 0; wi < 4; wi++) {
    bw_QFloat q;
    bw_quatinit(&q, widths[wi]);
    for (cap = 1; cap <= 40; cap++)
      for (pre = 0; pre < 8; pre++) {
        uint8_t a[40], b[40];
        bw_Writer w, ref;
        int k;
        memset(a, 0, sizeof(a));
        memset(b, 0, sizeof(b));
        bw_writerinit(&w, a, cap);
        bw_writerinit(&ref, b, cap);
        bw_writebits(&w, 0, (unsigned)pre);
        bw_writebits(&ref, 0, (unsigned)pre);
        for (k = 0; k < 12; k++) {
          uint32_t code[4];
          int j;
          code[0] = (uint32_t)(rnd() * 4);
          for (j = 1; j < 4; j++) code[j] = (uint32_t)(rnd() * (q.miv + 1.0));
          if (k == 5) code[2] = q.miv + 1;  /* not codes: refused alike */
          if (k == 7) code[0] = 4;
          bw_writequat(&w, &q, code);
          bw_writebits(&ref, code[0], 2);
          for (j = 1; j < 4; j++) bw_writebits(&ref, code[j], q.nbits);
          ok &= w.status == ref.status && bw_bitswritten(&w) == bw_bitswritten(&ref);
          if (w.status != BW_OK) {
            ok &= w.errpos == ref.errpos;
            fails++;
            break;
          }
        }
        flush(&w);
        flush(&ref);
        ok &= memcmp(a, b, sizeof(a)) == 0;
      }
  }
  CHECK(ok);
  CHECK(fails > 100);  /* out of room, and the bad code */
}

/* bw_readquatdecode is bw_readquat then bw_quatdecode: the same status,
** positions and codes, the same doubles bit for bit; at widths over
** BW_QUATEXACT (no check), in one read and in four, and cut short. */
static void test_quat_readdecode (void) {
  static const unsigned widths[] = { 3, 9, 20, 22, 23, 31 };
  unsigned wi;
  int k, ok = 1, refused = 0;
  for (wi = 0; wi < 6; wi++) {
    bw_QFloat q;
    bw_quatinit(&q, widths[wi]);
    for (k = 0; k < 4000; k++) {
      uint8_t buf[16];
      bw_Reader a, b;
      uint32_t ca[4], cb[4];
      double va[4], vb[4];
      size_t len = 1 + (size_t)(rnd() * 15);
      int j, ra, rb;
      for (j = 0; j < 16; j++) buf[j] = (uint8_t)(rnd() * 256);
      bw_readerinit(&a, buf, len);
      bw_readerinit(&b, buf, len);
      bw_readbits(&a, k % 7);
      bw_readbits(&b, k % 7);
      ra = bw_readquatdecode(&a, &q, ca, va);
      rb = bw_readquat(&b, &q, cb);
      ok &= ra == rb && a.status == b.status && a.pos == b.pos;
      if (a.status != BW_OK) {
        ok &= a.errpos == b.errpos;
        refused += a.status == BW_ERANGE;
      }
      if (ra && rb) {
        bw_quatdecode(&q, cb, vb);
        ok &= memcmp(ca, cb, sizeof(ca)) == 0 && memcmp(va, vb, sizeof(va)) == 0;
      }
    }
  }
  CHECK(ok);
  CHECK(refused > 1000);
}

static void test_qfloatexact (void) {
  bw_QFloat q;
  int k, ok = 1, accepted = 0;
  /* whatever the error bound accepts does come back, code by code */
  for (k = 0; k < 300; k++) {
    double lo = (rnd() - 0.5) * pow(10, rnd() * 8), span = pow(10, rnd() * 6 - 2);
    double res = span / pow(2, 4 + rnd() * 20);
    if (bw_qfloatinit(&q, lo, lo + span, res) != BW_OK) continue;
    if (bw_qfloatexact(&q)) {
      accepted++;
      ok &= allback(&q);
    }
  }
  CHECK(ok);
  CHECK(accepted > 30);
  bw_quatinit(&q, 9);
  CHECK(bw_qfloatexact(&q));
  CHECK(bw_qfloatinit(&q, -256, 255, 1.0 / 512) == BW_OK);
  CHECK(bw_qfloatexact(&q));
  /* steps of 1e-3 near 1e5 are finer than float32 there */
  CHECK(bw_qfloatinit(&q, 100000, 100001, 1e-3) == BW_OK);
  CHECK(!bw_qfloatexact(&q));
  CHECK(bw_qfloatinit(&q, 0, 1, 1e-9) == BW_OK);   /* too many codes */
  CHECK(!bw_qfloatexact(&q));
}

int main (void) {
  test_bad_arguments();
  test_angle();
  test_diff_tiers();
  test_diff_roundtrip();
  test_quat_canonical();
  test_quat_reader();
  test_quat_diff();
  test_quat_writes();
  test_quat_readdecode();
  test_qfloatexact();
  return check_summary("test_game");
}
