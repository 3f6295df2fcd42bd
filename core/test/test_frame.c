/*
** test_frame.c - the frame header: layout, every flag combination, hostile
** headers, the fingerprint fold; the CRC frame around a payload
** See LICENSE for copyright and terms.
*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bw.h"
#include "check.h"
#include "streamcheck.h"

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
  /* without message ids the width is unused: a header the writer takes
  ** (typebits not set, or a lookup's for another use) reads back */
  example(&h, BW_FTAG | BW_FCHECK);
  h.typebits = 40;
  len = writeframe(buf, sizeof(buf), &h, &st);
  CHECK(st == BW_OK);
  g = h;
  CHECK(bw_framereadheader(&r, buf, len, &g) == BW_OK && g.tag == h.tag);
  g = h;
  g.lookup = lookupwide;
  CHECK(bw_framereadheader(&r, buf, len, &g) == BW_OK && g.tag == h.tag);
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

/* {===================== the CRC frame: begin and end ===================== */

/* the CRC as WIRE.md states it, straight from zlib */
static uint32_t zcrc (uint64_t protocolid, const uint8_t *p, size_t n) {
  uint8_t prefix[8];
  uLong crc = crc32(0L, Z_NULL, 0);
  int i;
  for (i = 0; i < 8; i++) prefix[i] = (uint8_t)(protocolid >> (8 * i));
  crc = crc32(crc, prefix, 8);
  crc = crc32(crc, p, (uInt)n);
  return (uint32_t)crc;
}

static uint32_t le32 (const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
         | (uint32_t)p[3] << 24;
}

/* a framed packet of 'nbits' payload bits from rng(); returns its length */
static size_t makeframe (uint8_t *out, size_t cap, uint64_t nbits,
                         int endcheck, uint64_t seed) {
  uint64_t left = nbits, saved = rngstate;
  const uint8_t *data;
  size_t len;
  bw_Writer w;
  rngstate = seed;
  bw_writerinit(&w, out, cap);
  bw_framebegin(&w);
  while (left > 0) {
    unsigned n = left > 13 ? 13 : (unsigned)left;
    bw_writebits(&w, rng() & lowmask(n), n);
    left -= n;
  }
  bw_frameend(&w, PID, endcheck);
  data = bw_writerdata(&w, &len);
  rngstate = saved;
  return w.status == BW_OK && data == out ? len : 0;
}

static void test_frame_roundtrip (void) {
  static const uint64_t sizes[] = {0, 1, 7, 8, 9, 24, 31, 32, 33, 63, 64, 65,
                                   100, 1000};
  size_t i;
  int endcheck, bad = 0;
  for (endcheck = 0; endcheck < 2; endcheck++)
    for (i = 0; i < NELEMS(sizes); i++) {
      uint8_t buf[256], *p;
      size_t len = makeframe(buf, sizeof(buf), sizes[i], endcheck, 42 + i);
      size_t want = 4 + (size_t)(sizes[i] + 7) / 8 + (endcheck ? 4 : 0);
      uint64_t left = sizes[i], saved = rngstate;
      bw_Reader r;
      EXPECT(bad, len == want, "bits=%llu endcheck=%d len=%zu",
             ULL(sizes[i]), endcheck, len);
      EXPECT(bad, le32(buf) == zcrc(PID, buf + 4, len - 4)
             && le32(buf) == bw_framecrc(PID, buf + 4, len - 4),
             "bits=%llu", ULL(sizes[i]));
      if (endcheck)
        EXPECT(bad, memcmp(buf + len - 4, "\x78\x56\x34\x12", 4) == 0,
               "bits=%llu", ULL(sizes[i]));
      p = tightcopy(buf, len);
      EXPECT(bad, bw_frameopen(&r, p, len, PID, endcheck) == BW_OK
             && r.pos == 32, "bits=%llu endcheck=%d", ULL(sizes[i]),
             endcheck);
      rngstate = 42 + i;
      while (left > 0) {
        unsigned n = left > 13 ? 13 : (unsigned)left;
        EXPECT(bad, bw_readbits(&r, n) == (rng() & lowmask(n)),
               "bits=%llu", ULL(sizes[i]));
        left -= n;
      }
      rngstate = saved;
      /* the end check is not payload: only the padding is left */
      EXPECT(bad, bw_bitsremaining(&r) == (8 - sizes[i] % 8) % 8,
             "bits=%llu endcheck=%d", ULL(sizes[i]), endcheck);
      bw_readalign(&r);
      EXPECT(bad, r.status == BW_OK && bw_bitsremaining(&r) == 0,
             "bits=%llu", ULL(sizes[i]));
      free(p);
    }
  CHECK(bad == 0);
}

/* the header is the first 32 bits whether or not a word was flushed yet */
static void test_frame_data_stable (void) {
  uint8_t buf[64];
  const uint8_t *a, *b;
  size_t la, lb;
  bw_Writer w;
  bw_writerinit(&w, buf, sizeof(buf));
  bw_framebegin(&w);
  bw_writebits(&w, 0x1234, 16);
  CHECK(bw_frameend(&w, PID, 0) == BW_OK);
  a = bw_writerdata(&w, &la);
  CHECK(la == 6 && le32(a) == zcrc(PID, a + 4, 2));
  b = bw_writerdata(&w, &lb);
  CHECK(lb == 6 && le32(b) == le32(a));
}

static void test_frame_bitflips (void) {
  int endcheck, bad = 0;
  for (endcheck = 0; endcheck < 2; endcheck++) {
    uint8_t buf[64];
    size_t len = makeframe(buf, sizeof(buf), 101, endcheck, 7), bit;
    CHECK(len == 4 + 13 + (endcheck ? 4 : 0));
    for (bit = 0; bit < len * 8; bit++) {
      uint8_t *p = tightcopy(buf, len);
      bw_Reader r;
      p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
      EXPECT(bad, bw_frameopen(&r, p, len, PID, endcheck) == BW_ECRC
             && r.status == BW_ECRC && r.errpos == 0 && bw_readbits(&r, 1)
             == 0, "endcheck=%d bit %zu", endcheck, bit);
      free(p);
    }
  }
  CHECK(bad == 0);
}

static void test_frame_protocol (void) {
  uint8_t buf[64];
  size_t len = makeframe(buf, sizeof(buf), 50, 1, 9);
  bw_Reader r;
  int b, bad = 0;
  CHECK(bw_frameopen(&r, buf, len, PID, 1) == BW_OK);
  for (b = 0; b < 64; b++)  /* every bit of the id counts, high half too */
    EXPECT(bad, bw_frameopen(&r, buf, len, PID ^ (UINT64_C(1) << b), 1)
           == BW_ECRC, "bit %d", b);
  CHECK(bad == 0);
  CHECK(bw_frameopen(&r, buf, len, 0, 1) == BW_ECRC);
}

static void test_frame_truncated (void) {
  int endcheck, bad = 0;
  for (endcheck = 0; endcheck < 2; endcheck++) {
    uint8_t buf[64];
    size_t len = makeframe(buf, sizeof(buf), 77, endcheck, 11), n;
    size_t min = endcheck ? 8 : 4;
    for (n = 0; n < len; n++) {
      uint8_t *p = tightcopy(buf, n);
      bw_Reader r;
      bw_Status st = bw_frameopen(&r, n > 0 ? p : NULL, n, PID,
                                  endcheck);
      if (n < min)  /* shorter than the header (and check) */
        EXPECT(bad, st == BW_ETRUNC && r.errpos == n * 8, "n=%zu", n);
      else
        EXPECT(bad, st == BW_ECRC, "endcheck=%d n=%zu", endcheck, n);
      EXPECT(bad, r.status == st, "n=%zu", n);
      free(p);
    }
  }
  CHECK(bad == 0);
}

static void test_frame_endcheck (void) {
  uint8_t buf[64];
  size_t len;
  uint32_t crc;
  bw_Reader r;
  /* a good CRC over a wrong end check */
  memset(buf, 0, sizeof(buf));
  memcpy(buf + 4, "\x01\x02\x03\x78\x56\x34\x13", 7);
  len = 11;
  crc = bw_framecrc(PID, buf + 4, len - 4);
  buf[0] = (uint8_t)crc; buf[1] = (uint8_t)(crc >> 8);
  buf[2] = (uint8_t)(crc >> 16); buf[3] = (uint8_t)(crc >> 24);
  CHECK(bw_frameopen(&r, buf, len, PID, 1) == BW_ECHECK);
  CHECK(r.errpos == (len - 4) * 8);
  CHECK(bw_frameopen(&r, buf, len, PID, 0) == BW_OK);
  /* a packet with the check, opened as one without: the check is payload */
  len = makeframe(buf, sizeof(buf), 16, 1, 5);
  CHECK(bw_frameopen(&r, buf, len, PID, 0) == BW_OK);
  CHECK(bw_bitsremaining(&r) == 48);
  /* exactly a header and a check, no payload */
  len = makeframe(buf, sizeof(buf), 0, 1, 5);
  CHECK(len == 8 && bw_frameopen(&r, buf, len, PID, 1) == BW_OK);
  CHECK(bw_bitsremaining(&r) == 0 && bw_readbits(&r, 1) == 0);
  CHECK(r.status == BW_ETRUNC && r.errpos == 32);
}

static void test_frame_misuse (void) {
  uint8_t buf[16];
  bw_Writer w;
  /* begin on a writer that has bits */
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, 0, 1);
  CHECK(bw_framebegin(&w) == BW_EARG && w.errpos == 1);
  /* end without a begin */
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, 0, 8);
  CHECK(bw_frameend(&w, PID, 0) == BW_EARG);
  /* nor with the end check, whose 32 bits are no CRC field */
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_frameend(&w, PID, 1) == BW_EARG && w.errpos == 0);
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, 0, 8);
  CHECK(bw_frameend(&w, PID, 1) == BW_EARG && bw_bitswritten(&w) == 8);
  /* no room for the header, or for the check */
  bw_writerinit(&w, buf, 3);
  CHECK(bw_framebegin(&w) == BW_ETRUNC);
  bw_writerinit(&w, buf, 7);
  CHECK(bw_framebegin(&w) == BW_OK);
  CHECK(bw_frameend(&w, PID, 1) == BW_ETRUNC);
  bw_writerinit(&w, buf, 8);
  bw_framebegin(&w);
  CHECK(bw_frameend(&w, PID, 1) == BW_OK);
}

/* }========================================================== */


/* 'm' bytes of payload framed under a good CRC (with the end check). */
static size_t reframe (uint8_t *out, size_t cap, const uint8_t *payload,
                       size_t m) {
  bw_Writer w;
  size_t i, len;
  bw_writerinit(&w, out, cap);
  bw_framebegin(&w);
  for (i = 0; i < m; i++) bw_writebits(&w, payload[i], 8);
  CHECK(bw_frameend(&w, PID, 1) == BW_OK);
  bw_writerdata(&w, &len);
  return len;
}

/* Each failure names the part it is in, at the bit it reports. */
static void test_parts (void) {
  /* EXAMPLE's header cut to m payload bytes: tag 32 bits, version 4,
  ** delta 1, baseline id 16, message id 2 */
  static const struct { size_t m; bw_FramePart part; uint64_t bit; } cuts[] = {
    {0, BW_PTAG, 32}, {3, BW_PTAG, 32}, {4, BW_PVERSION, 64},
    {5, BW_PBASELINE, 69}, {6, BW_PBASELINE, 69}
  };
  bw_FrameHeader g;
  bw_Reader r;
  uint8_t buf[64];
  size_t i, len;
  for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
    len = reframe(buf, sizeof(buf), EXAMPLE + 4, cuts[i].m);
    example(&g, BW_FALL);
    CHECK(bw_framereadheader(&r, buf, len, &g) == BW_ETRUNC
          && g.part == cuts[i].part && r.errpos == cuts[i].bit);
  }
  len = reframe(buf, sizeof(buf), EXAMPLE + 4, 7);  /* 56 bits: all of it */
  example(&g, BW_FALL);
  CHECK(bw_framereadheader(&r, buf, len, &g) == BW_OK);
  len = reframe(buf, sizeof(buf), EXAMPLE + 4, 0);
  example(&g, BW_FDELTAS | BW_FCHECK);
  CHECK(bw_framereadheader(&r, buf, len, &g) == BW_ETRUNC
        && g.part == BW_PDELTA && r.errpos == 32);
  example(&g, BW_FMESSAGE | BW_FCHECK);
  CHECK(bw_framereadheader(&r, buf, len, &g) == BW_ETRUNC
        && g.part == BW_PTYPE && r.errpos == 32);
  /* the packet as a whole, the CRC, the end check */
  example(&g, BW_FALL);
  CHECK(bw_framereadheader(&r, EXAMPLE, 7, &g) == BW_ETRUNC
        && g.part == BW_PFRAME && r.errpos == 56);
  memcpy(buf, EXAMPLE, sizeof(EXAMPLE));
  buf[9] ^= 1;
  example(&g, BW_FALL);
  CHECK(bw_framereadheader(&r, buf, sizeof(EXAMPLE), &g) == BW_ECRC
        && g.part == BW_PCRC && r.errpos == 0);
  example(&g, BW_FALL);
  CHECK(bw_framereadheader(&r, EXAMPLE_NOCHECK, sizeof(EXAMPLE_NOCHECK), &g)
        == BW_ECHECK && g.part == BW_PCHECK && r.errpos == 64);
  /* a tag no lookup knows, version 2^32 - 1 */
  example(&g, BW_FALL);
  g.lookup = lookup;
  g.tag = 0;
  memcpy(buf, EXAMPLE + 4, 8);
  buf[0] ^= 1;
  len = reframe(buf + 16, sizeof(buf) - 16, buf, 8);
  CHECK(bw_framereadheader(&r, buf + 16, len, &g) == BW_ESCHEMA
        && g.part == BW_PTAG && r.errpos == 32);
  memset(buf, 0xFF, 4);
  len = reframe(buf + 16, sizeof(buf) - 16, buf, 4);
  memset(&g, 0, sizeof(g));
  g.flags = BW_FVERSION | BW_FCHECK;
  g.versionbits = 32;
  g.protocolid = PID;
  CHECK(bw_framereadheader(&r, buf + 16, len, &g) == BW_ERANGE
        && g.part == BW_PVERSION && r.errpos == 32);
  /* the paths decode's errors and the walk name them by */
  CHECK(strcmp(bw_framepath(BW_PFRAME), "frame") == 0);
  CHECK(strcmp(bw_framepath(BW_PBASELINE), "frame.baseline_id") == 0);
  CHECK(strcmp(bw_framepath(BW_PCHECK), "frame.check") == 0);
  CHECK(strcmp(bw_framepath(BW_NFRAMEPARTS), "frame") == 0);
}

int main (void) {
  test_rewind();
  test_example();
  test_combinations();
  test_hostile();
  test_parts();
  test_protocolid();
  test_frame_roundtrip();
  test_frame_data_stable();
  test_frame_bitflips();
  test_frame_protocol();
  test_frame_truncated();
  test_frame_endcheck();
  test_frame_misuse();
  return check_summary("test_frame");
}
