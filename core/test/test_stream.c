/*
** test_stream.c - unit tests of the bit streams, primitives and framing
** See LICENSE for copyright and terms.
*/

/*
** Three kinds of evidence. The vectors of serialize.h 1.11 (transcribed from
** spec/fixtures/serialize_sample.lua) pin the wire format byte for byte. A
** bit-at-a-time reference writer and reader pin the bit order at every width
** and offset. Inputs copied to the end of a malloc'd block of exactly their
** size let ASan (`make sanitize`) catch any read past them.
*/

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bw.h"
#include "check.h"


/* {===================== helpers ===================== */

/* A check inside a loop: counts failures in 'bad' and names the first few;
** the caller then does CHECK(bad == 0) once. */
#define EXPECT(bad, cond, ...) do { \
    if (!(cond) && (bad)++ < 5) { \
      fprintf(stderr, "%s:%d: EXPECT failed: %s: ", __FILE__, __LINE__, \
              #cond); \
      fprintf(stderr, __VA_ARGS__); \
      fputc('\n', stderr); \
    } \
  } while (0)

#define ULL(x)  ((unsigned long long)(x))

static uint64_t rngstate = UINT64_C(0x853C49E6748FEA9B);

static uint64_t rng (void) {  /* splitmix64: deterministic runs */
  uint64_t z = (rngstate += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static uint64_t lowmask (unsigned n) {
  return n >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1;
}

/* the reference bit order: bit i of 'v' goes to stream bit pos + i, and
** stream bit b is bit b % 8 of byte b / 8 ('buf' starts zeroed) */
static void refput (uint8_t *buf, uint64_t *pos, uint64_t v, unsigned n) {
  unsigned i;
  for (i = 0; i < n; i++, (*pos)++)
    if ((v >> i) & 1) buf[*pos / 8] |= (uint8_t)(1u << (*pos % 8));
}

static uint64_t refget (const uint8_t *buf, uint64_t pos, unsigned n) {
  uint64_t v = 0;
  unsigned i;
  for (i = 0; i < n; i++, pos++)
    v |= (uint64_t)((buf[pos / 8] >> (pos % 8)) & 1) << i;
  return v;
}

static void tohex (const uint8_t *p, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  size_t i;
  for (i = 0; i < n; i++) {
    out[2 * i] = digits[p[i] >> 4];
    out[2 * i + 1] = digits[p[i] & 15];
  }
  out[2 * n] = '\0';
}

static size_t fromhex (const char *hex, uint8_t *out) {
  size_t i, n = strlen(hex) / 2;
  for (i = 0; i < n; i++) {
    unsigned b;
    sscanf(hex + 2 * i, "%2x", &b);
    out[i] = (uint8_t)b;
  }
  return n;
}

/* a copy of 'p' at the very end of a block of exactly 'n' bytes, so ASan
** reports a read of even one byte past it; free with free() */
static uint8_t *tightcopy (const void *p, size_t n) {
  uint8_t *q = (uint8_t *)malloc(n > 0 ? n : 1);
  if (q == NULL) {
    fprintf(stderr, "test_stream: out of memory\n");
    exit(2);
  }
  if (p != NULL && n > 0) memcpy(q, p, n);
  return q;
}

static uint32_t f2u (float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
static float u2f (uint32_t u) { float x; memcpy(&x, &u, 4); return x; }
static uint64_t d2u (double x) { uint64_t u; memcpy(&u, &x, 8); return u; }
static double u2d (uint64_t u) { double x; memcpy(&x, &u, 8); return x; }

/* a realloc-based bw_Alloc that counts, and fails on request */
typedef struct Heap {
  size_t calls;      /* allocations and resizes */
  size_t live;       /* bytes held */
  size_t failat;     /* fail the call with this number (1-based); 0: never */
} Heap;

static void *heapalloc (void *ud, void *ptr, size_t osize, size_t nsize) {
  Heap *h = (Heap *)ud;
  void *p;
  if (nsize == 0) {
    if (ptr != NULL) h->live -= osize;
    free(ptr);
    return NULL;
  }
  h->calls++;
  if (h->failat != 0 && h->calls == h->failat) return NULL;
  p = realloc(ptr, nsize);
  if (p != NULL) h->live += nsize - (ptr != NULL ? osize : 0);
  return p;
}

/* }========================================================== */


/* {===================== serialize.h vectors ===================== */

enum { K_END, K_BITS, K_BOOL, K_INT, K_FLOAT, K_DOUBLE, K_CFLOAT, K_ALIGN,
       K_BYTES, K_STRING, K_INTREL };

typedef struct Op {
  int kind;
  unsigned n;              /* BITS: width */
  int64_t min, max, iv;    /* INT: range and value; STRING: max is maxlen */
  uint64_t v;              /* BITS, BOOL, INTREL: value; FLOAT, DOUBLE: raw */
  uint64_t prev;           /* INTREL */
  double x;                /* FLOAT, DOUBLE, CFLOAT: the value as written */
  double fmin, fmax, fres; /* CFLOAT */
  uint32_t q, miv, decoded;/* CFLOAT: integer sent, its max, raw float read */
  unsigned qbits;          /* CFLOAT */
  const char *s;           /* BYTES, STRING */
  size_t len;
} Op;

#define OP_BITS(n_, v_)     { .kind = K_BITS, .n = (n_), .v = (v_) }
#define OP_BOOL(b_)         { .kind = K_BOOL, .v = (b_) }
#define OP_INT(lo, hi, x_)  { .kind = K_INT, .min = (lo), .max = (hi), \
                              .iv = (x_) }
#define OP_FLOAT(x_, raw)   { .kind = K_FLOAT, .x = (x_), .v = (raw) }
#define OP_DOUBLE(x_, raw)  { .kind = K_DOUBLE, .x = (x_), .v = (raw) }
#define OP_CFLOAT(lo, hi, res, x_, q_, qb, mv, dec) \
  { .kind = K_CFLOAT, .fmin = (lo), .fmax = (hi), .fres = (res), .x = (x_), \
    .q = (q_), .qbits = (qb), .miv = (mv), .decoded = (dec) }
#define OP_ALIGN()          { .kind = K_ALIGN }
#define OP_BYTES(s_)        { .kind = K_BYTES, .s = (s_), \
                              .len = sizeof(s_) - 1 }
/* serialize.h's buffer_size counts the NUL: maxlen = buffer_size - 1 */
#define OP_STRING(bs, s_)   { .kind = K_STRING, .max = (bs) - 1, .s = (s_), \
                              .len = sizeof(s_) - 1 }
#define OP_INTREL(p_, c_)   { .kind = K_INTREL, .prev = (p_), .v = (c_) }

#define MAXOPS 20

typedef struct Vector {
  const char *name;
  Op ops[MAXOPS];
  const char *hex;
  uint64_t bits;        /* 0 for negative and accept cases */
  int failsat;          /* negative: 1-based op that fails */
  bw_Status code;       /* negative: its status */
  uint64_t errpos;      /* negative: where */
} Vector;

static const Vector vectors[] = {
  {"bits_small_mixed", {
    OP_BITS(1, 1), OP_BITS(2, 2), OP_BITS(3, 5), OP_BITS(4, 10),
    OP_BITS(5, 19), OP_BITS(6, 42), OP_BITS(7, 85), OP_BITS(8, 195)},
    "ad4eb53a0c", 36, 0, BW_OK, 0},
  {"int_-100_100_eq_-37", {OP_INT(-100, 100, -37)}, "3f", 8, 0, BW_OK, 0},
  {"int_ranges_over_2e31", {
    OP_INT(-2000000000, 0x77359400, -2000000000),
    OP_INT(-2000000000, 0x77359400, 0x773593ff),
    OP_INT(-1, 0x7fffffff, 0x7fffffff),
    OP_INT(-INT64_C(2147483647) - 1, 0, -1),
    OP_INT(-1, 0x7fffffff, -1)},
    "00000000ff276bee00000080ffffff7f00000000", 160, 0, BW_OK, 0},
  {"int64_full_range", {
    OP_INT(INT64_MIN, INT64_MAX, INT64_MIN),
    OP_INT(INT64_MIN, INT64_MAX, INT64_MAX),
    OP_INT(INT64_MIN, INT64_MAX, -1)},
    "0000000000000000ffffffffffffffffffffffffffffff7f", 192, 0, BW_OK, 0},
  {"align_every_offset_ones", {
    OP_ALIGN(), OP_BITS(1, 1), OP_ALIGN(), OP_BITS(2, 3), OP_ALIGN(),
    OP_BITS(3, 7), OP_ALIGN(), OP_BITS(4, 15), OP_ALIGN(), OP_BITS(5, 31),
    OP_ALIGN(), OP_BITS(6, 63), OP_ALIGN(), OP_BITS(7, 127), OP_ALIGN(),
    OP_BITS(8, 255), OP_ALIGN()},
    "0103070f1f3f7fff", 64, 0, BW_OK, 0},
  {"bytes_len_5_at_offsets_0_to_7", {
    OP_BYTES("\x01\x00\xff\x04\x05"), OP_BITS(30, 0x3fffffff),
    OP_BYTES("\x11\x00\xff\x14\x15"), OP_BITS(29, 0x1fffffff),
    OP_BYTES("\x21\x00\xff\x24\x25"), OP_BITS(28, 0xfffffff),
    OP_BYTES("\x31\x00\xff\x34\x35"), OP_BITS(27, 0x7ffffff),
    OP_BYTES("\x41\x00\xff\x44\x45"), OP_BITS(26, 0x3ffffff),
    OP_BYTES("\x51\x00\xff\x54\x55"), OP_BITS(25, 0x1ffffff),
    OP_BYTES("\x61\x00\xff\x64\x65"), OP_BITS(31, 0x7fffffff),
    OP_BYTES("\x71\x00\xff\x74\x75")},
    "0100ff0405ffffff3f1100ff1415ffffff1f2100ff2425ffffff0f3100ff3435ffffff07"
    "4100ff4445ffffff035100ff5455ffffff016100ff6465ffffff7f7100ff7475",
    544, 0, BW_OK, 0},
  {"float_values", {
    OP_BITS(3, 5),
    OP_FLOAT(0x1.ap+1, 0x40500000),
    OP_FLOAT(-0.0, 0x80000000),
    OP_FLOAT(0x1.555556p-2, 0x3eaaaaab),
    OP_FLOAT(HUGE_VAL, 0x7f800000),
    OP_FLOAT(-HUGE_VAL, 0xff800000),
    OP_FLOAT(0x1p-149, 1),
    OP_FLOAT(0x1.fffffep+127, 0x7f7fffff),
    OP_FLOAT(-0x1.a224p-133, 0x8001a224)},
    "05008002020000005c5555f5010000fc030000fc0f000000f8fffffb23110d0004",
    259, 0, BW_OK, 0},
  {"cfloat_-10_10_res_0.01_1.2345", {
    OP_CFLOAT(-0x1.4p+3, 0x1.4p+3, 0x1.47ae14p-7, 0x1.3c0832p+0,
              1123, 11, 2000, 0x3f9d70a8)},
    "6304", 11, 0, BW_OK, 0},
  {"string_hello_utf8_bs64", {OP_STRING(64, "h\xc3\xa9llo")},
    "0668c3a96c6c6f", 56, 0, BW_OK, 0},
  {"int_relative_tiers_base100", {
    OP_INTREL(100, 101), OP_INTREL(100, 102), OP_INTREL(100, 106),
    OP_INTREL(100, 107), OP_INTREL(100, 123), OP_INTREL(100, 124),
    OP_INTREL(100, 380), OP_INTREL(100, 381), OP_INTREL(100, 4477),
    OP_INTREL(100, 4478), OP_INTREL(100, 70014), OP_INTREL(100, 70015),
    OP_INTREL(100, 0x7fffffff)},
    "8524204400081002000800410000200040e02f220000f8ffffff03", 211,
    0, BW_OK, 0},
  {"mixed_packet", {
    OP_BITS(4, 13),
    OP_INT(-100, 100, -37),
    OP_BOOL(1),
    OP_FLOAT(0x1.921fb4p+1, 0x40490fda),
    OP_CFLOAT(0x0p+0, 0x1.4p+3, 0x1.47ae14p-7, 0x1.4p+2, 500, 10, 1000,
              0x40a00000),
    OP_DOUBLE(0x1.5555555555555p-2, UINT64_C(0x3fd5555555555555)),
    OP_BITS(64, UINT64_C(0x123456789abcdef0)),
    OP_INTREL(100, 2100),
    OP_ALIGN(),
    OP_BYTES("\xde\xad\xbe\xef\xca\xfe\x01"),
    OP_STRING(16, "golden"),
    OP_BOOL(0),
    OP_INT(-INT64_C(1099511627776), INT64_C(0x10000000000), -1)},
    "fd53fb210988beaaaaaaaaaaaaea1f786f5e4d3c2b1a09786b00deadbeefcafe0106676f"
    "6c64656efeffffffff01", 363, 0, BW_OK, 0},
};

/* reading 'hex' fails first at op 'failsat' with 'code' at bit 'errpos' */
static const Vector negatives[] = {
  /* 7-bit field decodes 127 > max - min = 100 */
  {"int_value_above_range", {OP_INT(0, 100, 0)}, "7f", 0, 1, BW_ERANGE, 0},
  /* pad bit 3 is 1 */
  {"align_nonzero_padding", {OP_BITS(3, 5), OP_ALIGN()}, "0d", 0, 2,
    BW_EALIGN, 3},
  /* 32 bits requested, 24 available */
  {"read_past_end_bits32", {OP_BITS(32, 0)}, "010203", 0, 1, BW_ETRUNC, 0},
  /* payload C3 28 is malformed UTF-8; reported after the length field */
  {"string_invalid_utf8", {OP_STRING(16, "")}, "02c328", 0, 1, BW_EUTF8, 4},
};

/* reading 'hex' with the ops must succeed and give their values */
static const Vector accepts[] = {
  {"trailing_bits_nonzero_ignored", {
    OP_BITS(32, 0xdeadbeef), OP_BITS(3, 5)}, "efbeaddefd", 0, 0, BW_OK, 0},
  {"unconsumed_trailing_bytes_ignored", {OP_BITS(8, 42)}, "2affff", 0, 0,
    BW_OK, 0},
};

#define NELEMS(a)  (sizeof(a) / sizeof((a)[0]))

static int nops (const Vector *vec) {
  int i = 0;
  while (i < MAXOPS && vec->ops[i].kind != K_END) i++;
  return i;
}

static bw_Status writeop (bw_Writer *w, const Op *o) {
  bw_QFloat q;
  switch (o->kind) {
    case K_BITS: return bw_writebits(w, o->v, o->n);
    case K_BOOL: return bw_writebool(w, (int)o->v);
    case K_INT: return bw_writeint(w, o->iv, o->min, o->max);
    case K_FLOAT: return bw_writefloat(w, (float)o->x);
    case K_DOUBLE: return bw_writedouble(w, o->x);
    case K_CFLOAT:
      if (bw_qfloatinit(&q, o->fmin, o->fmax, o->fres) != BW_OK) return BW_EARG;
      return bw_writecompressedfloat(w, o->x, &q);
    case K_ALIGN: return bw_writealign(w);
    case K_BYTES: return bw_writebytes(w, o->s, o->len);
    case K_STRING: return bw_writestring(w, o->s, o->len, (size_t)o->max);
    case K_INTREL: return bw_writeintrelative(w, o->prev, o->v);
  }
  return BW_EARG;
}

/* Read one op; 1 if it succeeded and gave the op's value. */
static int readop (bw_Reader *r, const Op *o) {
  bw_QFloat q;
  int same = 0;
  switch (o->kind) {
    case K_BITS: same = bw_readbits(r, o->n) == o->v; break;
    case K_BOOL: same = bw_readbool(r) == (int)o->v; break;
    case K_INT: same = bw_readint(r, o->min, o->max) == o->iv; break;
    case K_FLOAT: same = f2u(bw_readfloat(r)) == (uint32_t)o->v; break;
    case K_DOUBLE: same = d2u(bw_readdouble(r)) == o->v; break;
    case K_CFLOAT: {
      uint64_t start = r->pos;
      if (bw_qfloatinit(&q, o->fmin, o->fmax, o->fres) != BW_OK) return 0;
      same = f2u(bw_readcompressedfloat(r, &q)) == o->decoded;
      if (r->status == BW_OK) {  /* and the integer under it */
        bw_Reader again = *r;
        again.pos = start;
        same = same && bw_readbits(&again, q.nbits) == o->q;
      }
      break;
    }
    case K_ALIGN: bw_readalign(r); same = 1; break;
    case K_BYTES: {
      const uint8_t *p = bw_readbytes(r, o->len);
      same = p != NULL && memcmp(p, o->s, o->len) == 0;
      break;
    }
    case K_STRING: {
      size_t n;
      const char *p = bw_readstring(r, (size_t)o->max, &n);
      same = p != NULL && n == o->len && memcmp(p, o->s, n) == 0;
      break;
    }
    case K_INTREL: same = bw_readintrelative(r, o->prev) == o->v; break;
  }
  return r->status == BW_OK && same;
}

static void test_vectors_write (void) {
  size_t i;
  for (i = 0; i < NELEMS(vectors); i++) {
    const Vector *vec = &vectors[i];
    uint8_t buf[128];
    char hex[260];
    bw_Writer w;
    const uint8_t *data;
    size_t len;
    int k, n = nops(vec), bad = 0;
    bw_writerinit(&w, buf, sizeof(buf));
    for (k = 0; k < n; k++)
      EXPECT(bad, writeop(&w, &vec->ops[k]) == BW_OK, "%s op %d", vec->name,
             k + 1);
    data = bw_writerdata(&w, &len);
    tohex(data, len, hex);
    EXPECT(bad, strcmp(hex, vec->hex) == 0, "%s: %s", vec->name, hex);
    EXPECT(bad, bw_bitswritten(&w) == vec->bits, "%s: %llu bits", vec->name,
           ULL(bw_bitswritten(&w)));
    CHECK(bad == 0);
  }
}

static void test_vectors_read (void) {
  size_t i;
  for (i = 0; i < NELEMS(vectors); i++) {
    const Vector *vec = &vectors[i];
    uint8_t bytes[128], *p;
    size_t len = fromhex(vec->hex, bytes);
    bw_Reader r;
    int k, n = nops(vec), bad = 0;
    p = tightcopy(bytes, len);
    bw_readerinit(&r, p, len);
    for (k = 0; k < n; k++)
      EXPECT(bad, readop(&r, &vec->ops[k]), "%s op %d (%s)", vec->name,
             k + 1, bw_codename(r.status));
    EXPECT(bad, r.pos == vec->bits, "%s: read %llu bits", vec->name,
           ULL(r.pos));
    CHECK(bad == 0);
    free(p);
  }
}

/* the values in the vectors are what the ops say they are */
static void test_vectors_transcribed (void) {
  size_t i;
  int bad = 0;
  for (i = 0; i < NELEMS(vectors); i++) {
    int k, n = nops(&vectors[i]);
    for (k = 0; k < n; k++) {
      const Op *o = &vectors[i].ops[k];
      if (o->kind == K_FLOAT)
        EXPECT(bad, f2u((float)o->x) == (uint32_t)o->v, "%s op %d",
               vectors[i].name, k + 1);
      else if (o->kind == K_DOUBLE)
        EXPECT(bad, d2u(o->x) == o->v, "%s op %d", vectors[i].name, k + 1);
      else if (o->kind == K_CFLOAT) {
        bw_QFloat q;
        EXPECT(bad, bw_qfloatinit(&q, o->fmin, o->fmax, o->fres) == BW_OK
               && q.miv == o->miv && q.nbits == o->qbits
               && bw_qfloatencode(&q, o->x) == o->q
               && f2u(bw_qfloatdecode(&q, o->q)) == o->decoded,
               "%s op %d", vectors[i].name, k + 1);
      }
    }
  }
  CHECK(bad == 0);
}

static void test_vectors_negative (void) {
  size_t i;
  for (i = 0; i < NELEMS(negatives); i++) {
    const Vector *vec = &negatives[i];
    uint8_t bytes[64], *p;
    size_t len = fromhex(vec->hex, bytes);
    bw_Reader r;
    int k, n = nops(vec), bad = 0;
    p = tightcopy(bytes, len);
    bw_readerinit(&r, p, len);
    for (k = 0; k < n; k++) {
      readop(&r, &vec->ops[k]);
      if (r.status != BW_OK) break;
    }
    EXPECT(bad, k + 1 == vec->failsat, "%s failed at op %d", vec->name,
           k + 1);
    EXPECT(bad, r.status == vec->code, "%s: %s", vec->name,
           bw_codename(r.status));
    EXPECT(bad, r.errpos == vec->errpos, "%s: errpos %llu", vec->name,
           ULL(r.errpos));
    CHECK(bad == 0);
    free(p);
  }
}

static void test_vectors_accept (void) {
  size_t i;
  for (i = 0; i < NELEMS(accepts); i++) {
    const Vector *vec = &accepts[i];
    uint8_t bytes[64], *p;
    size_t len = fromhex(vec->hex, bytes);
    bw_Reader r;
    int k, n = nops(vec), bad = 0;
    p = tightcopy(bytes, len);
    bw_readerinit(&r, p, len);
    for (k = 0; k < n; k++)
      EXPECT(bad, readop(&r, &vec->ops[k]), "%s op %d", vec->name, k + 1);
    CHECK(bad == 0);
    free(p);
  }
}

/* }========================================================== */


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
  for (i = 0; i < NVAL; i++) {
    widths[i] = (unsigned)(rng() % 65);
    vals[i] = rng() & lowmask(widths[i]);
    refput(ref, &pos, vals[i], widths[i]);
    bw_writebits(&w, vals[i], widths[i]);
  }
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


/* {===================== strings and UTF-8 ===================== */

static void test_utf8valid (void) {
  static const struct { const char *s; size_t n; int ok; } cases[] = {
#define U(lit, ok)  {lit, sizeof(lit) - 1, ok}
    U("", 1), U("abc", 1), U("h\xc3\xa9llo", 1),
    U("\xc2\x80", 1), U("\xdf\xbf", 1),                 /* U+0080, U+07FF */
    U("\xe0\xa0\x80", 1), U("\xed\x9f\xbf", 1),         /* U+0800, U+D7FF */
    U("\xee\x80\x80", 1), U("\xef\xbf\xbf", 1),         /* U+E000, U+FFFF */
    U("\xf0\x90\x80\x80", 1), U("\xf4\x8f\xbf\xbf", 1), /* U+10000..10FFFF */
    U("\x7f", 1),
    U("\0", 0), U("a\0b", 0), U("abc\0", 0),            /* NUL */
    U("\xc0\x80", 0), U("\xc1\xbf", 0),                 /* overlong 2-byte */
    U("\xe0\x80\x80", 0), U("\xe0\x9f\xbf", 0),         /* overlong 3-byte */
    U("\xf0\x80\x80\x80", 0), U("\xf0\x8f\xbf\xbf", 0), /* overlong 4-byte */
    U("\xed\xa0\x80", 0), U("\xed\xbf\xbf", 0),         /* surrogates */
    U("\xed\xa0\x80\xed\xb0\x80", 0),                   /* CESU pair */
    U("\xf4\x90\x80\x80", 0), U("\xf7\xbf\xbf\xbf", 0), /* > U+10FFFF */
    U("\xf5\x80\x80\x80", 0), U("\xf8\x88\x80\x80\x80", 0),
    U("\xff", 0), U("\xfe", 0), U("\x80", 0), U("\xbf", 0),
    U("\xc2", 0), U("\xe2\x82", 0), U("\xf0\x9f\x98", 0), /* truncated */
    U("abc\xe2\x82", 0), U("\xe2\x82" "abc", 0),
    U("\xc2\x41", 0), U("\xe2\x28\xa1", 0), U("\xf0\x9f\x28\x80", 0),
    U("\xc3\x28", 0),
#undef U
  };
  size_t i;
  int bad = 0;
  for (i = 0; i < NELEMS(cases); i++)
    EXPECT(bad, bw_utf8valid(cases[i].s, cases[i].n) == cases[i].ok,
           "case %zu", i);
  CHECK(bad == 0);
  CHECK(bw_utf8valid(NULL, 0) == 1);
}

static void test_string_roundtrip (void) {
  static const struct { const char *s; size_t n, maxlen; } cases[] = {
    {"", 0, 0}, {"", 0, 10}, {"a", 1, 1}, {"h\xc3\xa9llo", 6, 6},
    {"\xf0\x9f\x98\x80", 4, 255}, {"abcde", 5, 5}, {"golden", 6, 15},
    {"x", 1, 65535},
  };
  size_t i;
  int bad = 0;
  for (i = 0; i < NELEMS(cases); i++) {
    uint8_t buf[64];
    const uint8_t *data;
    const char *s;
    size_t len, n, lenbits = bw_bitsrequired(0, (int64_t)cases[i].maxlen);
    bw_Writer w;
    bw_Reader r;
    bw_writerinit(&w, buf, sizeof(buf));
    bw_writebits(&w, 1, 1);
    bw_writestring(&w, cases[i].s, cases[i].n, cases[i].maxlen);
    EXPECT(bad, w.status == BW_OK && bw_bitswritten(&w)
           == ((1 + lenbits + 7) / 8 + cases[i].n) * 8, "case %zu", i);
    data = bw_writerdata(&w, &len);
    bw_readerinit(&r, data, len);
    bw_readbits(&r, 1);
    s = bw_readstring(&r, cases[i].maxlen, &n);
    EXPECT(bad, s != NULL && n == cases[i].n
           && memcmp(s, cases[i].s, n) == 0 && r.status == BW_OK
           && (const uint8_t *)s == data + (1 + lenbits + 7) / 8,
           "case %zu", i);
  }
  CHECK(bad == 0);
}

static void test_string_errors (void) {
  uint8_t buf[32], bytes[8];
  const uint8_t *data;
  size_t len, n = 99;
  bw_Writer w;
  bw_Reader r;
  /* the writer refuses, writing nothing */
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, 0, 3);
  CHECK(bw_writestring(&w, "abcdef", 6, 5) == BW_ERANGE);
  CHECK(w.errpos == 3 && bw_bitswritten(&w) == 3);
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writestring(&w, "a\0b", 3, 10) == BW_EUTF8);
  CHECK(w.errpos == 0 && bw_bitswritten(&w) == 0);
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writestring(&w, "\xc3\x28", 2, 10) == BW_EUTF8);
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writestring(&w, "\xed\xa0\x80", 3, 10) == BW_EUTF8);
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writestring(&w, "a", 1, 0) == BW_ERANGE);
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writestring(&w, "a", 1, (size_t)INT64_MAX + 1) == BW_ERANGE);
  /* the reader refuses an interior NUL, reported after the length field */
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, 0, 2);
  bw_writeint(&w, 3, 0, 10);
  bw_writebytes(&w, "a\0b", 3);
  data = bw_writerdata(&w, &len);
  bw_readerinit(&r, data, len);
  bw_readbits(&r, 2);
  CHECK(bw_readstring(&r, 10, &n) == NULL && n == 0);
  CHECK(r.status == BW_EUTF8 && r.errpos == 6);
  /* a length over maxlen: 5 in 3 bits when maxlen is 4 */
  bytes[0] = 5;
  bw_readerinit(&r, bytes, 1);
  CHECK(bw_readstring(&r, 4, &n) == NULL && r.status == BW_ERANGE);
  CHECK(r.errpos == 0);
  /* fewer bytes than the length says */
  bytes[0] = 5; bytes[1] = 'a'; bytes[2] = 'b';
  bw_readerinit(&r, bytes, 3);
  CHECK(bw_readstring(&r, 7, &n) == NULL && r.status == BW_ETRUNC);
  CHECK(r.errpos == 8);
  /* a maxlen the length field cannot hold */
  bw_readerinit(&r, bytes, 3);
  CHECK(bw_readstring(&r, (size_t)INT64_MAX + 1, &n) == NULL);
  CHECK(r.status == BW_EARG);
}

/* }========================================================== */


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
  for (i = 0; i < NVAL; i++) {
    widths[i] = (unsigned)(rng() % 65);
    vals[i] = rng() & lowmask(widths[i]);
    refput(ref, &pos, vals[i], widths[i]);
    bw_writebits(&w, vals[i], widths[i]);
  }
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


/* {===================== framing ===================== */

#define PROTOCOL  UINT64_C(0x0123456789abcdef)

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
  bw_frameend(&w, PROTOCOL, endcheck);
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
      EXPECT(bad, le32(buf) == zcrc(PROTOCOL, buf + 4, len - 4)
             && le32(buf) == bw_framecrc(PROTOCOL, buf + 4, len - 4),
             "bits=%llu", ULL(sizes[i]));
      if (endcheck)
        EXPECT(bad, memcmp(buf + len - 4, "\x78\x56\x34\x12", 4) == 0,
               "bits=%llu", ULL(sizes[i]));
      p = tightcopy(buf, len);
      EXPECT(bad, bw_frameopen(&r, p, len, PROTOCOL, endcheck) == BW_OK
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
  CHECK(bw_frameend(&w, PROTOCOL, 0) == BW_OK);
  a = bw_writerdata(&w, &la);
  CHECK(la == 6 && le32(a) == zcrc(PROTOCOL, a + 4, 2));
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
      EXPECT(bad, bw_frameopen(&r, p, len, PROTOCOL, endcheck) == BW_ECRC
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
  CHECK(bw_frameopen(&r, buf, len, PROTOCOL, 1) == BW_OK);
  for (b = 0; b < 64; b++)  /* every bit of the id counts, high half too */
    EXPECT(bad, bw_frameopen(&r, buf, len, PROTOCOL ^ (UINT64_C(1) << b), 1)
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
      bw_Status st = bw_frameopen(&r, n > 0 ? p : NULL, n, PROTOCOL,
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
  crc = bw_framecrc(PROTOCOL, buf + 4, len - 4);
  buf[0] = (uint8_t)crc; buf[1] = (uint8_t)(crc >> 8);
  buf[2] = (uint8_t)(crc >> 16); buf[3] = (uint8_t)(crc >> 24);
  CHECK(bw_frameopen(&r, buf, len, PROTOCOL, 1) == BW_ECHECK);
  CHECK(r.errpos == (len - 4) * 8);
  CHECK(bw_frameopen(&r, buf, len, PROTOCOL, 0) == BW_OK);
  /* a packet with the check, opened as one without: the check is payload */
  len = makeframe(buf, sizeof(buf), 16, 1, 5);
  CHECK(bw_frameopen(&r, buf, len, PROTOCOL, 0) == BW_OK);
  CHECK(bw_bitsremaining(&r) == 48);
  /* exactly a header and a check, no payload */
  len = makeframe(buf, sizeof(buf), 0, 1, 5);
  CHECK(len == 8 && bw_frameopen(&r, buf, len, PROTOCOL, 1) == BW_OK);
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
  CHECK(bw_frameend(&w, PROTOCOL, 0) == BW_EARG);
  /* no room for the header, or for the check */
  bw_writerinit(&w, buf, 3);
  CHECK(bw_framebegin(&w) == BW_ETRUNC);
  bw_writerinit(&w, buf, 7);
  CHECK(bw_framebegin(&w) == BW_OK);
  CHECK(bw_frameend(&w, PROTOCOL, 1) == BW_ETRUNC);
  bw_writerinit(&w, buf, 8);
  bw_framebegin(&w);
  CHECK(bw_frameend(&w, PROTOCOL, 1) == BW_OK);
}

/* }========================================================== */


/* bw_intrelativebits is what bw_writeintrelative spends, at every tier edge */
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

int main (void) {
  test_vectors_transcribed();
  test_vectors_write();
  test_vectors_read();
  test_vectors_negative();
  test_vectors_accept();
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
  test_utf8valid();
  test_string_roundtrip();
  test_string_errors();
  test_intrelative_tiers();
  test_intrelative_sequence();
  test_intrelative_errors();
  test_check();
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
  test_reader_bounds();
  test_reader_five_bytes();
  test_huge_lengths();
  test_frame_roundtrip();
  test_frame_data_stable();
  test_frame_bitflips();
  test_frame_protocol();
  test_frame_truncated();
  test_frame_endcheck();
  test_frame_misuse();
  test_intrelativebits();
  return check_summary("test_stream");
}
