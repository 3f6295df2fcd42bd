/*
** test_vectors.c - the wire format against serialize.h 1.11, byte for
** byte: its vectors, transcribed from spec/fixtures/serialize_sample.lua
** See LICENSE for copyright and terms.
*/

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bw.h"
#include "check.h"
#include "streamcheck.h"


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

/* A reader over the bytes of 'hex', copied to the end of a block of
** exactly their size (free the pointer returned). */
static uint8_t *openhex (const char *hex, bw_Reader *r) {
  uint8_t bytes[128], *p;
  size_t len = fromhex(hex, bytes);
  p = tightcopy(bytes, len);
  bw_readerinit(r, p, len);
  return p;
}

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
    bw_Reader r;
    uint8_t *p = openhex(vec->hex, &r);
    int k, n = nops(vec), bad = 0;
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
    bw_Reader r;
    uint8_t *p = openhex(vec->hex, &r);
    int k, n = nops(vec), bad = 0;
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
    bw_Reader r;
    uint8_t *p = openhex(vec->hex, &r);
    int k, n = nops(vec), bad = 0;
    for (k = 0; k < n; k++)
      EXPECT(bad, readop(&r, &vec->ops[k]), "%s op %d", vec->name, k + 1);
    CHECK(bad == 0);
    free(p);
  }
}

/* }========================================================== */


int main (void) {
  test_vectors_transcribed();
  test_vectors_write();
  test_vectors_read();
  test_vectors_negative();
  test_vectors_accept();
  return check_summary("test_vectors");
}
