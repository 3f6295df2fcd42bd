/*
** test_frame.c - the frame header: layout, every flag combination, hostile
** headers, the fingerprint fold
** See LICENSE for copyright and terms.
*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bw.h"
#include "check.h"

#define PID UINT64_C(0x0123456789abcdef)

/* The WIRE.md example: tag 0xCAFEF00D, version 3 in 4 bits, a delta of
** baseline 0x1234, message 2 in 2 bits, payload bits(5, 3). The bytes were
** worked out apart from this code (bit packing by hand, zlib's CRC32). */
static const uint8_t EXAMPLE[] = {
  0x8c, 0xbd, 0x07, 0x49, 0x0d, 0xf0, 0xfe, 0xca, 0x93, 0x46, 0xc2, 0x02,
  0x78, 0x56, 0x34, 0x12
};
static const uint8_t EXAMPLE_NOCHECK[] = {
  0x87, 0x66, 0xed, 0xae, 0x0d, 0xf0, 0xfe, 0xca, 0x93, 0x46, 0xc2, 0x02
};
static const uint8_t EXAMPLE_FULL[] = {  /* the same, not a delta */
  0xa0, 0x2a, 0xde, 0x61, 0x0d, 0xf0, 0xfe, 0xca, 0xc3, 0x02, 0x78, 0x56,
  0x34, 0x12
};

static void example (bw_FrameHeader *h, unsigned flags) {
  memset(h, 0, sizeof(*h));
  h->protocolid = PID;
  h->flags = flags;
  h->tag = UINT32_C(0xCAFEF00D);
  h->versionbits = 4;
  h->version = 3;
  h->delta = 1;
  h->baseline = 0x1234;
  h->typebits = 2;
  h->type = 2;
}

static size_t writeframe (uint8_t *out, size_t cap, const bw_FrameHeader *h,
                          bw_Status *st) {
  bw_Writer w;
  size_t len;
  const uint8_t *p;
  bw_writerinit(&w, out, cap);
  bw_framewriteheader(&w, h);
  bw_writebits(&w, 5, 3);
  *st = bw_frameend(&w, h->protocolid, (h->flags & BW_FCHECK) != 0);
  p = bw_writerdata(&w, &len);
  CHECK(p == out);
  return len;
}

static void test_example (void) {
  bw_FrameHeader h, g;
  bw_Reader r;
  uint8_t buf[64];
  bw_Status st;
  size_t len;
  example(&h, BW_FALL);
  len = writeframe(buf, sizeof(buf), &h, &st);
  CHECK(st == BW_OK && len == sizeof(EXAMPLE)
        && memcmp(buf, EXAMPLE, len) == 0);
  example(&h, BW_FALL & ~BW_FCHECK);
  len = writeframe(buf, sizeof(buf), &h, &st);
  CHECK(st == BW_OK && len == sizeof(EXAMPLE_NOCHECK)
        && memcmp(buf, EXAMPLE_NOCHECK, len) == 0);
  example(&h, BW_FALL);
  h.delta = 0;
  len = writeframe(buf, sizeof(buf), &h, &st);
  CHECK(st == BW_OK && len == sizeof(EXAMPLE_FULL)
        && memcmp(buf, EXAMPLE_FULL, len) == 0);
  /* read back */
  example(&g, BW_FALL);
  g.tag = g.version = g.baseline = g.type = 0;
  g.delta = 0;
  CHECK(bw_framereadheader(&r, EXAMPLE, sizeof(EXAMPLE), &g) == BW_OK);
  CHECK(g.tag == UINT32_C(0xCAFEF00D) && g.version == 3 && g.delta == 1
        && g.baseline == 0x1234 && g.type == 2 && g.typepos == 32 + 32 + 21);
  CHECK(bw_readbits(&r, 3) == 5 && r.status == BW_OK);
  CHECK(r.nbits == (sizeof(EXAMPLE) - 4) * 8);  /* the check is not payload */
  example(&g, BW_FALL);
  CHECK(bw_framereadheader(&r, EXAMPLE_FULL, sizeof(EXAMPLE_FULL), &g)
        == BW_OK && g.delta == 0 && g.type == 2 && g.typepos == 64 + 5);
}

/* Every combination of flags writes and reads back the same fields. */
static void test_combinations (void) {
  unsigned flags, vb, tb;
  for (flags = 0; flags <= BW_FALL; flags++)
    for (vb = 1; vb <= 32; vb += 31)
      for (tb = 0; tb <= 32; tb += 8) {
        bw_FrameHeader h, g;
        bw_Reader r;
        uint8_t buf[64];
        bw_Status st;
        size_t len;
        int delta;
        for (delta = 0; delta <= 1; delta++) {
          memset(&h, 0, sizeof(h));
          h.protocolid = PID ^ flags;
          h.flags = flags;
          h.tag = 0x89abcdefu;
          h.versionbits = vb;
          h.version = vb == 32 ? 0xfffffffeu : 1;
          h.delta = delta;
          h.baseline = 0xffff;
          h.typebits = tb;
          h.type = tb == 0 ? 0 : tb == 32 ? 0xffffffffu : 1u << (tb - 1);
          len = writeframe(buf, sizeof(buf), &h, &st);
          CHECK(st == BW_OK);
          g = h;
          g.tag = g.version = g.baseline = g.type = 0;
          g.delta = 0;
          CHECK(bw_framereadheader(&r, buf, len, &g) == BW_OK);
          CHECK(!(flags & BW_FTAG) || g.tag == h.tag);
          CHECK(!(flags & BW_FVERSION) || g.version == h.version);
          CHECK(g.delta == ((flags & BW_FDELTAS) ? delta : 0));
          CHECK(!(g.delta) || g.baseline == 0xffff);
          CHECK(!(flags & BW_FMESSAGE) || g.type == h.type);
          CHECK(bw_readbits(&r, 3) == 5 && r.status == BW_OK);
          /* another protocol id or a flipped bit: the CRC */
          g = h;
          g.protocolid ^= 1;
          CHECK(bw_framereadheader(&r, buf, len, &g) == BW_ECRC
                && r.errpos == 0);
          buf[4] ^= 0x10;
          g = h;
          CHECK(bw_framereadheader(&r, buf, len, &g) == BW_ECRC);
        }
      }
}

static int lookup (void *ud, uint32_t tag, unsigned *typebits) {
  (void)ud;
  if (tag != 0xCAFEF00Du) return 0;
  *typebits = 2;
  return 1;
}

static int lookupwide (void *ud, uint32_t tag, unsigned *typebits) {
  (void)ud;
  (void)tag;
  *typebits = 40;
  return 1;
}

static void test_hostile (void) {
  bw_FrameHeader h, g;
  bw_Reader r;
  bw_Writer w;
  uint8_t buf[64];
  size_t len;
  bw_Status st;
  /* a lookup finds the message id's width by tag, or refuses the tag */
  example(&g, BW_FALL);
  g.typebits = 0;
  g.lookup = lookup;
  CHECK(bw_framereadheader(&r, EXAMPLE, sizeof(EXAMPLE), &g) == BW_OK
        && g.typebits == 2 && g.type == 2);
  example(&h, BW_FALL);
  h.tag = 1;
  len = writeframe(buf, sizeof(buf), &h, &st);
  g = h;
  g.lookup = lookup;
  CHECK(bw_framereadheader(&r, buf, len, &g) == BW_ESCHEMA
        && r.errpos == 32);
  g.lookup = lookupwide;
  CHECK(bw_framereadheader(&r, buf, len, &g) == BW_EARG);
  /* version 2^32 - 1 is never written and refused on read */
  memset(&h, 0, sizeof(h));
  h.flags = BW_FTAG | BW_FVERSION;
  h.versionbits = 32;
  h.version = UINT32_MAX;
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_framewriteheader(&w, &h) == BW_ERANGE);
  bw_writerinit(&w, buf, sizeof(buf));
  bw_framebegin(&w);
  bw_writebits(&w, 7, 32);
  bw_writebits(&w, UINT32_MAX, 32);
  bw_frameend(&w, 0, 0);
  bw_writerdata(&w, &len);
  g = h;
  CHECK(bw_framereadheader(&r, buf, len, &g) == BW_ERANGE
        && r.errpos == 64);
  /* a header cut short by the sender: valid CRC, too few bits */
  bw_writerinit(&w, buf, sizeof(buf));
  bw_framebegin(&w);
  bw_writebits(&w, 7, 16);
  bw_frameend(&w, 0, 1);
  bw_writerdata(&w, &len);
  memset(&g, 0, sizeof(g));
  g.flags = BW_FTAG | BW_FCHECK;
  CHECK(bw_framereadheader(&r, buf, len, &g) == BW_ETRUNC
        && r.errpos == 32);
  /* too short for a CRC */
  CHECK(bw_framereadheader(&r, buf, 3, &g) == BW_ETRUNC);
  /* values that do not fit and bad flags or widths are refused */
  example(&h, BW_FALL);
  h.baseline = 0x10000;
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_framewriteheader(&w, &h) == BW_ERANGE);
  example(&h, BW_FALL);
  h.version = 16;
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_framewriteheader(&w, &h) == BW_ERANGE);
  example(&h, BW_FALL);
  h.type = 4;
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_framewriteheader(&w, &h) == BW_ERANGE);
  example(&h, BW_FALL | 0x20);
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_framewriteheader(&w, &h) == BW_EARG);
  CHECK(bw_framereadheader(&r, EXAMPLE, sizeof(EXAMPLE), &h) == BW_EARG);
  example(&h, BW_FALL);
  h.versionbits = 0;
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_framewriteheader(&w, &h) == BW_EARG);
  example(&h, BW_FALL);
  h.typebits = 33;
  CHECK(bw_framereadheader(&r, EXAMPLE, sizeof(EXAMPLE), &h) == BW_EARG);
  /* a writer that already holds bits */
  example(&h, BW_FALL);
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebool(&w, 1);
  CHECK(bw_framewriteheader(&w, &h) == BW_EARG);
}

static void test_protocolid (void) {
  /* FNV-1a 64 over the 16 hex digits, from id ^ basis (worked out apart) */
  CHECK(bw_frameprotocolid(0, UINT64_C(0x0123456789abcdef))
        == UINT64_C(0x2e373913e5ad677d));
  CHECK(bw_frameprotocolid(7, UINT64_C(0xfedcba9876543210))
        == UINT64_C(0x59be0bd4907714f2));
  CHECK(bw_frametag(UINT64_C(0xfedcba9876543210)) == UINT32_C(0xfedcba98));
}

/* bw_writerrewind (the delta encoder's take-back): writing, rewinding to
** any earlier bit and writing on gives what writing only the kept bits and
** the rest gives, across word boundaries and buffer growth. */
static void *grow (void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

static void test_rewind (void) {
  uint64_t pos, n = 300;
  for (pos = 0; pos <= n; pos += 7) {
    bw_Writer a, b;
    const uint8_t *pa, *pb;
    size_t la, lb;
    uint64_t i;
    bw_writerinitgrow(&a, grow, NULL, 1 << 20);
    bw_writerinitgrow(&b, grow, NULL, 1 << 20);
    for (i = 0; i < n; i++) bw_writebits(&a, (i * 7 + 3) & 1, 1);
    bw_writerrewind(&a, pos);
    CHECK(bw_bitswritten(&a) == pos);
    for (i = 0; i < 100; i++) bw_writebits(&a, i & 3, 2);
    for (i = 0; i < pos; i++) bw_writebits(&b, (i * 7 + 3) & 1, 1);
    for (i = 0; i < 100; i++) bw_writebits(&b, i & 3, 2);
    pa = bw_writerdata(&a, &la);
    pb = bw_writerdata(&b, &lb);
    CHECK(la == lb && memcmp(pa, pb, la) == 0);
    bw_writerrewind(&a, bw_bitswritten(&a) + 1);  /* past the end: no-op */
    CHECK(bw_bitswritten(&a) == pos + 200);
    bw_writerfree(&a);
    bw_writerfree(&b);
  }
}

int main (void) {
  test_rewind();
  test_example();
  test_combinations();
  test_hostile();
  test_protocolid();
  return check_summary("test_frame");
}
