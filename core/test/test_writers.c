/*
** test_writers.c - statuses, sticky errors, fixed and growable writers,
** readers at the edge of their buffers
** See LICENSE for copyright and terms.
*/

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bw.h"
#include "check.h"
#include "streamcheck.h"


/* {===================== statuses and sticky errors ===================== */

static void test_strerror (void) {
  int i, j, bad = 0;
  for (i = 0; i < BW_NSTATUS; i++) {
    const char *m = bw_strerror((bw_Status)i), *c = bw_codename((bw_Status)i);
    EXPECT(bad, m != NULL && c != NULL && *m != '\0' && *c != '\0', "%d", i);
    for (j = 0; j < i; j++)
      EXPECT(bad, strcmp(c, bw_codename((bw_Status)j)) != 0, "%d %d", i, j);
  }
  CHECK(bad == 0);
  CHECK(strcmp(bw_codename(BW_OK), "ok") == 0);
  CHECK(strcmp(bw_codename(BW_ETRUNC), "truncated") == 0);
  CHECK(strcmp(bw_codename(BW_ERANGE), "range") == 0);
  CHECK(strcmp(bw_codename(BW_EALIGN), "align") == 0);
  CHECK(strcmp(bw_codename(BW_ECHECK), "check") == 0);
  CHECK(strcmp(bw_codename(BW_ECRC), "crc") == 0);
  CHECK(strcmp(bw_codename(BW_EUTF8), "utf8") == 0);
  CHECK(strcmp(bw_codename(BW_EARG), "arg") == 0);
  CHECK(bw_strerror(BW_NSTATUS) != NULL && bw_codename(BW_NSTATUS) != NULL);
  CHECK(strcmp(bw_codename((bw_Status)999), "unknown") == 0);
  CHECK(strcmp(bw_strerror((bw_Status)-1), "unknown error") == 0);
}

/* one primitive for each status the streams produce */
static void test_every_status (void) {
  uint8_t buf[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  uint8_t out[16];
  Heap heap = {0, 0, 1};
  size_t n;
  bw_Writer w;
  bw_Reader r;
  bw_readerinit(&r, buf, 2);
  bw_readbits(&r, 17);
  CHECK(r.status == BW_ETRUNC);
  bw_readerinit(&r, buf, 2);
  bw_readint(&r, 0, 1000);
  CHECK(r.status == BW_ERANGE);
  bw_readerinit(&r, buf, 2);
  bw_readbits(&r, 1);
  bw_readalign(&r);
  CHECK(r.status == BW_EALIGN);
  bw_readerinit(&r, buf, 8);
  bw_readcheck(&r, BW_CHECKMAGIC);
  CHECK(r.status == BW_ECHECK);
  CHECK(bw_frameopen(&r, buf, 8, 1, 0) == BW_ECRC && r.status == BW_ECRC);
  buf[0] = 0x02; buf[1] = 0xc3; buf[2] = 0x28;
  bw_readerinit(&r, buf, 3);
  bw_readstring(&r, 15, &n);
  CHECK(r.status == BW_EUTF8);
  bw_readerinit(&r, buf, 3);
  bw_readint(&r, 1, 0);
  CHECK(r.status == BW_EARG);
  bw_writerinit(&w, out, 1);
  bw_writebits(&w, 0, 9);
  CHECK(w.status == BW_ETRUNC);
  bw_writerinit(&w, out, 1);
  bw_writebits(&w, 2, 1);
  CHECK(w.status == BW_ERANGE);
  bw_writerinit(&w, out, 1);
  bw_writestring(&w, "\xff", 1, 4);
  CHECK(w.status == BW_EUTF8);
  bw_writerinit(&w, out, 8);
  bw_writebits(&w, 1, 1);
  bw_framebegin(&w);
  CHECK(w.status == BW_EARG);
  bw_writerinitgrow(&w, heapalloc, &heap, 100);
  bw_writebits(&w, 1, 1);
  CHECK(w.status == BW_ENOMEM);
  bw_writerfree(&w);
}

/* after a failure, reads return 0 and change neither status nor errpos */
static void test_sticky_reader (void) {
  static const uint8_t ones[32] = {
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  int how;
  for (how = 0; how < 3; how++) {
    bw_Reader r;
    bw_QFloat q;
    bw_Status code;
    uint64_t errpos, pos;
    size_t n = 7;
    bw_readerinit(&r, ones, sizeof(ones));
    bw_readbits(&r, how == 2 ? 8 : 3);
    if (how == 0) bw_readint(&r, 0, 100);        /* 127 > 100 */
    else if (how == 1) bw_readalign(&r);         /* 1 bits in the pad */
    else bw_readcheck(&r, BW_CHECKMAGIC);
    code = r.status;
    errpos = r.errpos;
    pos = r.pos;
    CHECK(code != BW_OK && errpos == (how == 2 ? 8 : 3));
    /* plenty of data is left, yet every read gives 0 */
    CHECK(bw_readbits(&r, 8) == 0);
    CHECK(bw_readbits(&r, 64) == 0);
    CHECK(bw_readbool(&r) == 0);
    CHECK(bw_readint(&r, -5, 5) == 0);
    CHECK(bw_readint(&r, 10, 20) == 0);
    CHECK(f2u(bw_readfloat(&r)) == 0);
    CHECK(d2u(bw_readdouble(&r)) == 0);
    bw_readalign(&r);
    CHECK(bw_readbytes(&r, 1) == NULL);
    CHECK(bw_readstring(&r, 10, &n) == NULL && n == 0);
    CHECK(bw_readintrelative(&r, 7) == 0);
    bw_readcheck(&r, 0xffffffff);
    CHECK(bw_qfloatinit(&q, -1, 1, 0.01) == BW_OK);
    CHECK(f2u(bw_readcompressedfloat(&r, &q)) == 0);
    CHECK(r.status == code && r.errpos == errpos && r.pos == pos);
  }
}

/* after a failure, writes return it and add nothing */
static void test_sticky_writer (void) {
  uint8_t buf[32];
  const uint8_t *data;
  size_t len;
  bw_QFloat q;
  bw_Writer w;
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, 0x2b, 7);
  CHECK(bw_writeint(&w, 101, 0, 100) == BW_ERANGE && w.errpos == 7);
  CHECK(bw_writebits(&w, 1, 1) == BW_ERANGE);
  CHECK(bw_writebool(&w, 1) == BW_ERANGE);
  CHECK(bw_writeint(&w, 1, 0, 1) == BW_ERANGE);
  CHECK(bw_writefloat(&w, 1.0f) == BW_ERANGE);
  CHECK(bw_writedouble(&w, 1.0) == BW_ERANGE);
  CHECK(bw_writealign(&w) == BW_ERANGE);
  CHECK(bw_writebytes(&w, "ab", 2) == BW_ERANGE);
  CHECK(bw_writestring(&w, "ab", 2, 5) == BW_ERANGE);
  CHECK(bw_writestring(&w, "\xff", 1, 5) == BW_ERANGE);  /* not EUTF8 */
  CHECK(bw_writeintrelative(&w, 1, 2) == BW_ERANGE);
  CHECK(bw_writecheck(&w, BW_CHECKMAGIC) == BW_ERANGE);
  CHECK(bw_qfloatinit(&q, 0, 1, 0.1) == BW_OK);
  CHECK(bw_writecompressedfloat(&w, 0.5, &q) == BW_ERANGE);
  CHECK(bw_frameend(&w, 1, 1) == BW_ERANGE);
  CHECK(w.status == BW_ERANGE && w.errpos == 7 && bw_bitswritten(&w) == 7);
  data = bw_writerdata(&w, &len);
  CHECK(len == 1 && data[0] == 0x2b);
  /* reset forgets the failure */
  bw_writerreset(&w);
  CHECK(w.status == BW_OK && bw_bitswritten(&w) == 0);
  CHECK(bw_writebits(&w, 5, 3) == BW_OK && bw_bitswritten(&w) == 3);
}

/* }========================================================== */


/* {===================== writers ===================== */

/* fill a fixed buffer exactly, in chunks of each width; one more bit fails */
static void test_fixed_fill (void) {
  static const unsigned chunks[] = {1, 3, 7, 8, 13, 32, 63, 64};
  size_t cap, c;
  int bad = 0;
  for (cap = 0; cap <= 25; cap++)
    for (c = 0; c < NELEMS(chunks); c++) {
      uint8_t *buf = tightcopy(NULL, cap);  /* ASan catches any overrun */
      uint64_t total = (uint64_t)cap * 8;
      const uint8_t *data;
      size_t len, i;
      bw_Writer w;
      bw_writerinit(&w, cap > 0 ? buf : NULL, cap);
      while (bw_bitswritten(&w) + chunks[c] <= total)
        bw_writebits(&w, lowmask(chunks[c]), chunks[c]);
      bw_writebits(&w, lowmask((unsigned)(total - bw_bitswritten(&w))),
                   (unsigned)(total - bw_bitswritten(&w)));
      EXPECT(bad, w.status == BW_OK && bw_bitswritten(&w) == total,
             "cap=%zu chunk=%u", cap, chunks[c]);
      /* one bit more, and a zero-width write that still fits */
      EXPECT(bad, bw_writebits(&w, 0, 0) == BW_OK, "cap=%zu", cap);
      EXPECT(bad, bw_writebits(&w, 1, 1) == BW_ETRUNC && w.errpos == total
             && bw_bitswritten(&w) == total, "cap=%zu chunk=%u", cap,
             chunks[c]);
      data = bw_writerdata(&w, &len);
      EXPECT(bad, len == cap, "cap=%zu", cap);
      for (i = 0; i < len; i++)
        EXPECT(bad, data[i] == 0xff, "cap=%zu byte %zu", cap, i);
      free(buf);
    }
  CHECK(bad == 0);
  /* bytes and wide writes fail cleanly at the edge too */
  for (cap = 0; cap <= 16; cap++) {
    uint8_t *buf = tightcopy(NULL, cap), src[16] = {0};
    bw_Writer w;
    bw_writerinit(&w, cap > 0 ? buf : NULL, cap);
    EXPECT(bad, bw_writebytes(&w, src, cap) == BW_OK, "cap=%zu", cap);
    EXPECT(bad, bw_writebytes(&w, src, 1) == BW_ETRUNC
           && w.errpos == cap * 8, "cap=%zu", cap);
    bw_writerinit(&w, cap > 0 ? buf : NULL, cap);
    bw_writebits(&w, 1, 1);
    EXPECT(bad, bw_writebytes(&w, src, cap) == BW_ETRUNC
           && bw_bitswritten(&w) == (cap > 0 ? 8 : 0), "cap=%zu", cap);
    if (cap >= 8 && cap <= 15) {  /* 63 bits left for a double, then 64 */
      bw_writerinit(&w, buf, cap);
      bw_writebits(&w, 0, (unsigned)(cap * 8 - 63));
      EXPECT(bad, bw_writedouble(&w, 1.0) == BW_ETRUNC
             && w.errpos == cap * 8 - 63, "cap=%zu", cap);
      bw_writerinit(&w, buf, cap);
      bw_writebits(&w, 0, (unsigned)(cap * 8 - 64));
      EXPECT(bad, bw_writedouble(&w, 1.0) == BW_OK
             && bw_bitswritten(&w) == cap * 8, "cap=%zu", cap);
    }
    free(buf);
  }
  CHECK(bad == 0);
}

/* a value too wide for its field at a full buffer is a range error */
static void test_fixed_range_first (void) {
  uint8_t buf[1];
  bw_Writer w;
  bw_writerinit(&w, buf, 1);
  bw_writebits(&w, 0, 8);
  CHECK(bw_writebits(&w, 2, 1) == BW_ERANGE);
}

/* bw_writerdata mid-stream does not disturb what follows */
static void test_writerdata_midway (void) {
  uint8_t a[64], b[64];
  const uint8_t *da, *db;
  size_t la, lb, i;
  bw_Writer wa, wb;
  bw_writerinit(&wa, a, sizeof(a));
  bw_writerinit(&wb, b, sizeof(b));
  for (i = 0; i < 40; i++) {
    unsigned n = (unsigned)(i * 7 % 23) + 1;
    uint64_t v = rng() & lowmask(n);
    bw_writebits(&wa, v, n);
    bw_writebits(&wb, v, n);
    da = bw_writerdata(&wa, &la);
    CHECK(la == (bw_bitswritten(&wa) + 7) / 8);
    if (bw_bitswritten(&wa) % 8 != 0)  /* unused high bits are zero */
      CHECK((da[la - 1] >> (bw_bitswritten(&wa) % 8)) == 0);
  }
  da = bw_writerdata(&wa, &la);
  db = bw_writerdata(&wb, &lb);
  CHECK(la == lb && memcmp(da, db, la) == 0);
}

static void test_growable (void) {
  enum { NVAL = 20000 };
  static uint64_t vals[NVAL];
  static unsigned widths[NVAL];
  static uint8_t ref[NVAL * 8];
  Heap heap = {0, 0, 0};
  uint64_t pos = 0;
  const uint8_t *data;
  size_t i, len, calls;
  bw_Writer w;
  bw_Reader r;
  int bad = 0;
  memset(ref, 0, sizeof(ref));
  bw_writerinitgrow(&w, heapalloc, &heap, sizeof(ref));
  CHECK(w.buf == NULL && w.cap == 0);
  randomwrites(&w, ref, &pos, widths, vals, NVAL);
  data = bw_writerdata(&w, &len);
  CHECK(w.status == BW_OK && bw_bitswritten(&w) == pos);
  CHECK(len == (pos + 7) / 8 && memcmp(data, ref, len) == 0);
  CHECK(heap.calls < 20);    /* grows geometrically */
  bw_readerinit(&r, data, len);
  for (i = 0; i < NVAL; i++)
    EXPECT(bad, bw_readbits(&r, widths[i]) == vals[i], "value %zu", i);
  CHECK(bad == 0);
  /* reset keeps the buffer: writing again allocates nothing */
  calls = heap.calls;
  bw_writerreset(&w);
  CHECK(w.status == BW_OK && bw_bitswritten(&w) == 0 && w.buf != NULL);
  for (i = 0; i < 1000; i++) bw_writebits(&w, vals[i], widths[i]);
  CHECK(w.status == BW_OK && heap.calls == calls);
  bw_writerfree(&w);
  CHECK(heap.live == 0 && w.buf == NULL && bw_bitswritten(&w) == 0);
  bw_writerfree(&w);  /* twice is harmless */
  CHECK(heap.live == 0);
}

/* maxbytes is exact, whatever size the buffer grew to */
static void test_growable_limit (void) {
  static const size_t limits[] = {0, 1, 5, 8, 63, 64, 65, 100, 129, 200};
  size_t i;
  int bad = 0;
  for (i = 0; i < NELEMS(limits); i++) {
    Heap heap = {0, 0, 0};
    uint8_t src[300];
    uint64_t n = 0;
    bw_Writer w;
    memset(src, 0x5a, sizeof(src));
    bw_writerinitgrow(&w, heapalloc, &heap, limits[i]);
    while (bw_writebits(&w, 1, 1) == BW_OK) n++;
    EXPECT(bad, n == limits[i] * 8 && w.status == BW_ETRUNC
           && w.errpos == n && w.cap <= limits[i], "limit %zu: %llu bits",
           limits[i], ULL(n));
    bw_writerfree(&w);
    /* the same limit with bytes */
    bw_writerinitgrow(&w, heapalloc, &heap, limits[i]);
    EXPECT(bad, bw_writebytes(&w, src, limits[i]) == BW_OK, "limit %zu",
           limits[i]);
    EXPECT(bad, bw_writebytes(&w, src, 1) == BW_ETRUNC, "limit %zu",
           limits[i]);
    bw_writerfree(&w);
    bw_writerinitgrow(&w, heapalloc, &heap, limits[i]);
    EXPECT(bad, bw_writebytes(&w, src, limits[i] + 1) == BW_ETRUNC
           && bw_bitswritten(&w) == 0, "limit %zu", limits[i]);
    bw_writerfree(&w);
    EXPECT(bad, heap.live == 0, "limit %zu", limits[i]);
  }
  CHECK(bad == 0);
}

static void test_growable_nomem (void) {
  Heap heap = {0, 0, 2};   /* the first allocation works, the growth not */
  uint64_t n = 0;
  const uint8_t *data;
  size_t len, i;
  bw_Writer w;
  int bad = 0;
  bw_writerinitgrow(&w, heapalloc, &heap, 1 << 20);
  while (bw_writebits(&w, n & 0xff, 8) == BW_OK) n++;
  CHECK(w.status == BW_ENOMEM && w.errpos == n * 8 && n == w.cap);
  /* what was written before is intact */
  data = bw_writerdata(&w, &len);
  CHECK(len == n);
  for (i = 0; i < len; i++) EXPECT(bad, data[i] == (i & 0xff), "byte %zu", i);
  CHECK(bad == 0);
  bw_writerfree(&w);
  CHECK(heap.live == 0);
}

/* bw_writerfree leaves the caller's buffer alone */
static void test_fixed_free (void) {
  uint8_t buf[8];
  bw_Writer w;
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, 3, 2);
  bw_writerfree(&w);
  CHECK(w.buf == buf && w.cap == sizeof(buf) && bw_bitswritten(&w) == 2);
}

/* a NULL buffer has no room whatever 'cap' says: no write lands at NULL */
static void test_fixed_null (void) {
  bw_Writer w;
  size_t len;
  int i;
  bw_writerinit(&w, NULL, 64);
  CHECK(w.status == BW_EARG && w.errpos == 0 && w.cap == 0);
  for (i = 0; i < 4; i++) bw_writebits(&w, UINT64_MAX, 64);
  CHECK(bw_writebytes(&w, "abc", 3) == BW_EARG);
  CHECK(*bw_writerdata(&w, &len) == 0 && len == 0);
  bw_writerreset(&w);
  CHECK(bw_writebits(&w, 1, 1) == BW_ETRUNC);
  bw_writerinit(&w, NULL, 0);
  CHECK(w.status == BW_OK && bw_writebits(&w, 0, 0) == BW_OK);
}

/* }========================================================== */


/* {===================== readers at the edge ===================== */

/* inputs of 0..20 bytes at the end of their block: every width at every
** offset reads the reference value or fails with BW_ETRUNC */
static void test_reader_bounds (void) {
  size_t len;
  int bad = 0;
  for (len = 0; len <= 20; len++) {
    uint8_t bytes[20], *p;
    uint64_t k, total = (uint64_t)len * 8;
    unsigned n;
    size_t i;
    for (i = 0; i < len; i++) bytes[i] = (uint8_t)rng();
    p = tightcopy(bytes, len);
    for (k = 0; k <= total; k++)
      for (n = 0; n <= 64; n++) {
        bw_Reader r;
        uint64_t v;
        bw_readerinit(&r, len > 0 ? p : NULL, len);
        r.pos = k;  /* start anywhere */
        v = bw_readbits(&r, n);
        if (k + n <= total)
          EXPECT(bad, r.status == BW_OK && v == refget(bytes, k, n)
                 && r.pos == k + n, "len=%zu k=%llu n=%u", len, ULL(k), n);
        else
          EXPECT(bad, r.status == BW_ETRUNC && v == 0 && r.errpos == k
                 && r.pos == k, "len=%zu k=%llu n=%u", len, ULL(k), n);
      }
    free(p);
  }
  CHECK(bad == 0);
}

/* a 5-byte input read with every primitive */
static void test_reader_five_bytes (void) {
  static const uint8_t five[5] = {0x78, 0x56, 0x34, 0x12, 0xab};
  uint8_t *p = tightcopy(five, 5);
  const uint8_t *b;
  bw_QFloat q;
  bw_Reader r;
  size_t n;
  unsigned k;
  int bad = 0;
  bw_readerinit(&r, p, 5);
  CHECK(bw_readbits(&r, 40) == UINT64_C(0xab12345678) && r.status == BW_OK);
  bw_readerinit(&r, p, 5);
  CHECK(bw_readbits(&r, 41) == 0 && r.status == BW_ETRUNC);
  bw_readerinit(&r, p, 5);
  CHECK(d2u(bw_readdouble(&r)) == 0 && r.status == BW_ETRUNC);
  bw_readerinit(&r, p, 5);
  CHECK(bw_readint(&r, INT64_MIN, INT64_MAX) == 0 && r.status == BW_ETRUNC);
  bw_readerinit(&r, p, 5);
  bw_readcheck(&r, BW_CHECKMAGIC);
  CHECK(r.status == BW_OK);
  CHECK(bw_readbytes(&r, 1) == p + 4 && r.status == BW_OK);
  CHECK(bw_readbytes(&r, 1) == NULL && r.status == BW_ETRUNC);
  for (k = 0; k <= 5; k++) {  /* the rest of the bytes after k of them */
    bw_readerinit(&r, p, 5);
    r.pos = k * 8;
    b = bw_readbytes(&r, 5 - k);
    EXPECT(bad, b == p + k && r.status == BW_OK, "k=%u", k);
    EXPECT(bad, bw_readbytes(&r, 1) == NULL && r.status == BW_ETRUNC
           && r.errpos == 40, "k=%u", k);
  }
  CHECK(bad == 0);
  bw_readerinit(&r, p, 5);
  CHECK(bw_readstring(&r, 255, &n) == NULL && r.status == BW_ETRUNC);
  CHECK(bw_qfloatinit(&q, 0, 1, 1e-9) == BW_OK && q.nbits == 30);
  bw_readerinit(&r, p, 5);
  bw_readbits(&r, 11);
  bw_readcompressedfloat(&r, &q);
  CHECK(r.status == BW_ETRUNC && r.errpos == 11);
  free(p);
}

/* lengths near SIZE_MAX fail cleanly, without touching memory */
static void test_huge_lengths (void) {
  uint8_t buf[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                     0xff};
  static const size_t huge[] = {
    SIZE_MAX, SIZE_MAX - 1, SIZE_MAX / 2, SIZE_MAX / 8 + 1, SIZE_MAX / 8,
    (size_t)1 << 48, ((size_t)1 << 48) + 1, 11,
  };
  Heap heap = {0, 0, 0};
  size_t i, n;
  bw_Writer w;
  bw_Reader r;
  int bad = 0;
  for (i = 0; i < NELEMS(huge); i++) {
    uint8_t out[10];  /* as small as 'buf': no length over 10 fits */
    bw_readerinit(&r, buf, sizeof(buf));
    EXPECT(bad, bw_readbytes(&r, huge[i]) == NULL && r.status == BW_ETRUNC
           && r.errpos == 0, "readbytes %zu", huge[i]);
    bw_readerinit(&r, buf, sizeof(buf));
    bw_readbits(&r, 8);
    EXPECT(bad, bw_readbytes(&r, huge[i]) == NULL && r.status == BW_ETRUNC
           && r.errpos == 8, "readbytes %zu", huge[i]);
    /* writers: the source is never read when the length cannot fit */
    bw_writerinit(&w, out, sizeof(out));
    EXPECT(bad, bw_writebytes(&w, buf, huge[i]) == BW_ETRUNC
           && bw_bitswritten(&w) == 0, "writebytes %zu", huge[i]);
    bw_writerinitgrow(&w, heapalloc, &heap, 1 << 20);
    bw_writebits(&w, 1, 3);
    EXPECT(bad, bw_writebytes(&w, buf, huge[i] > 11 ? huge[i] : SIZE_MAX)
           == BW_ETRUNC && bw_bitswritten(&w) == 8, "grow %zu", huge[i]);
    bw_writerfree(&w);
    bw_writerinit(&w, out, sizeof(out));
    EXPECT(bad, bw_writestring(&w, "x", huge[i], huge[i] - 1) == BW_ERANGE
           && bw_bitswritten(&w) == 0, "writestring %zu", huge[i]);
  }
  CHECK(bad == 0);
  CHECK(heap.live == 0);
  /* a string length of 2^63 - 1 read from the input (a zero pad bit) */
  buf[7] = 0x7f;
  bw_readerinit(&r, buf, sizeof(buf));
  CHECK(bw_readstring(&r, (size_t)INT64_MAX, &n) == NULL);
  CHECK(r.status == BW_ETRUNC && n == 0);
  bw_readerinit(&r, buf, sizeof(buf));
  CHECK(bw_readstring(&r, SIZE_MAX, &n) == NULL && r.status == BW_EARG);
  /* a reserve that cannot be counted */
  bw_writerinitgrow(&w, heapalloc, &heap, 1 << 20);
  bw_writebits(&w, 1, 1);
  CHECK(bw_writerreserve(&w, UINT64_MAX) == BW_ETRUNC);
  CHECK(bw_bitswritten(&w) == 1);
  bw_writerfree(&w);
  CHECK(heap.live == 0);
  /* an input too long to count its bits is refused */
  if (SIZE_MAX / 8 > ((size_t)1 << 48)) {
    bw_readerinit(&r, buf, ((size_t)1 << 48) + 1);
    CHECK(r.status == BW_ENOMEM && bw_readbits(&r, 1) == 0);
  }
}

/* }========================================================== */


int main (void) {
  test_strerror();
  test_every_status();
  test_sticky_reader();
  test_sticky_writer();
  test_fixed_fill();
  test_fixed_range_first();
  test_writerdata_midway();
  test_growable();
  test_growable_limit();
  test_growable_nomem();
  test_fixed_free();
  test_fixed_null();
  test_reader_bounds();
  test_reader_five_bytes();
  test_huge_lengths();
  return check_summary("test_writers");
}
