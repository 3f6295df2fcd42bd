/*
** fuzz_stream.c - libFuzzer target: bit reader on hostile bytes, writer to
** reader round trips of every primitive
** See LICENSE for copyright and terms.
*/

/*
** An input is [flags][L][L bytes of op script][stream]. The script lists
** primitives with their parameters (widths 0..64 and some over, int ranges
** up to the full int64, quantizers from a fixed table, byte and string
** lengths up to SIZE_MAX, int_relative bases, check values); both passes
** walk it.
**
** Pass 1 reads the stream as hostile bytes. It ends where libFuzzer's
** buffer ends, so ASan sees any read past it (flag bit 0 also reads from an
** exact heap copy, which catches reads before it). Every read must agree
** with a bit-at-a-time model on value, status and position, fail sticky,
** and return pointers into the input. The reads that succeeded are then
** written again: every primitive but int_relative has one encoding, so the
** writer must reproduce the input's bits exactly.
**
** Pass 2 takes values from the stream bytes, writes them with a growable
** writer, a fixed one and one whose allocator or size limit fails, and
** reads them back: values equal (floats by bit pattern), bit counts as
** WIRE.md gives them, and a writer out of room fails with BW_ETRUNC (or
** BW_ENOMEM) after writing a correct prefix.
*/

#include <math.h>

#include "fuzz_stream.h"


/* {===================== parameters ===================== */

/* Quantizers: the valid ones first, with the largest integer sent and its
** bits, worked out from DESIGN.md in float32 outside this code; then ones
** bw_qfloatinit must refuse. */
const struct QEntry qtab[] = {  /* NQ of them: the header's type says */
  {-512, 512, 0.01, 102400, 17}, {0, 1, 0.5, 2, 2}, {0, 1, 1, 1, 1},
  {0, 1, 2, 1, 1},                       /* fewer than one step: 1 */
  {-1, 1, 1e-9, 2000000000, 31}, {0, 255, 1, 255, 8},
  {-1000, 1000, 0.001, 2000000, 21},     /* 1999999.875 rounds up */
  {0, 67108864.0, 1, 67108864, 27},      /* ties past 2^24 */
  {1e-3, 2e-3, 1e-7, 10000, 14}, {-1e38, 1e38, 1e30, 199999984, 28},
  {0.1, 0.3, 0.1, 3, 2},                 /* float32 delta/res is 2.0000002 */
  {0, 1, 1e-45, 4294967040u, 32},        /* clamped */
  {-7.5, 3.25, 0.25, 43, 6},
  /* invalid */
  {-3e38, 3e38, 1e30, 0, 0}, {5, 5, 1, 0, 0}, {0, 1, 0, 0, 0},
  {1, 0, 0.1, 0, 0}, {0, 1, 1e-50, 0, 0}, {0, HUGE_VAL, 1, 0, 0},
  {NAN, 1, 0.1, 0, 0}, {0, 1, -1, 0, 0}
};
bw_QFloat qf[NQ];

void qtabinit (void) {
  static int ready = 0;
  int i;
  if (ready) return;
  for (i = 0; i < NQ; i++) {
    bw_Status st = bw_qfloatinit(&qf[i], qtab[i].min, qtab[i].max,
                                 qtab[i].res);
    FCHECK(st == (i < NQVALID ? BW_OK : BW_EARG));
    if (st == BW_OK)
      FCHECK(qf[i].miv == qtab[i].miv && qf[i].nbits == qtab[i].nbits);
  }
  for (i = 0; i <= BW_NSTATUS + 1; i++)  /* messages for every status */
    FCHECK(bw_strerror((bw_Status)i) != NULL
           && bw_codename((bw_Status)i) != NULL);
  ready = 1;
}

static void pickrange (Src *s, int64_t *min, int64_t *max) {
  unsigned k;
  switch (getu8(s) % 8) {
    case 0:
      *min = (int64_t)getu8(s) - 128;
      *max = *min + (int64_t)getu8(s);
      break;
    case 1: *min = INT64_MIN; *max = INT64_MAX; break;
    case 2: *min = *max = refint64(getu64(s)); break;
    case 3:
      *min = refint64(getu64(s));
      *max = refint64(getu64(s));
      if (*min > *max) { int64_t t = *min; *min = *max; *max = t; }
      break;
    case 4: *min = 0; *max = (int64_t)mask64(getu8(s) % 63 + 1); break;
    case 5:
      k = getu8(s) % 63;
      *min = -(INT64_C(1) << k);
      *max = (INT64_C(1) << k) - 1;
      break;
    case 6:  /* min > max: a caller error */
      *min = (int64_t)getu8(s) + 1;
      *max = *min - 1 - (int64_t)(getu8(s) % 3);
      break;
    default:
      k = getu8(s);
      if (k & 1) { *min = INT64_MAX - (k >> 1); *max = INT64_MAX; }
      else { *min = INT64_MIN; *max = INT64_MIN + (k >> 1); }
  }
}

void parseop (Src *s, Op *op) {
  unsigned b = getu8(s);
  memset(op, 0, sizeof(*op));
  op->kind = (int)(b % NKINDS);
  switch (op->kind) {
    case K_BITS:  /* 0..64, sometimes over 64 (a caller error) */
      op->n = getu8(s) % 72;
      if (op->n > 64 && (b & 0x80)) op->n = 0xFFFFFFFFu - op->n;
      break;
    case K_INT: pickrange(s, &op->min, &op->max); break;
    case K_CFLOAT: op->q = (int)(getu8(s) % NQ); break;
    case K_BYTES:
      switch (getu8(s) % 8) {
        case 0: op->len = getu8(s) % 16; break;
        case 1: op->len = getu16(s) % 1024; break;
        case 2: op->lenmode = 1; break;
        case 3: op->lenmode = 2; break;
        case 4: op->len = SIZE_MAX; break;
        case 5: op->len = SIZE_MAX / 8 + 1; break;  /* len * 8 wraps */
        case 6: op->len = (size_t)1 << (getu8(s) % 64); break;
        default: op->len = (size_t)getu64(s);
      }
      break;
    case K_STRING:
      switch (getu8(s) % 8) {
        case 0: op->len = getu8(s) % 32; break;
        case 1: op->len = getu8(s); break;
        case 2: op->len = getu16(s); break;
        case 3: op->len = 0; break;
        case 4: op->len = (size_t)INT64_MAX; break;
        case 5: op->len = (size_t)INT64_MAX + 1; break;
        case 6: op->len = SIZE_MAX; break;
        default: op->len = (size_t)getu64(s);
      }
      break;
    case K_INTREL:
      switch (getu8(s) % 6) {
        case 0: op->prev = getu8(s); break;
        case 1: op->prev = getu32(s); break;
        case 2: op->prev = UINT32_MAX - getu8(s) % 4; break;
        case 3: op->prev = getu16(s); break;
        case 4: op->prev = 0; break;
        default:  /* outside the 0..2^32-1 the encoding is defined for */
          op->prev = getu64(s) | (uint64_t)1 << 32;
      }
      break;
    case K_CHECK:
      op->magic = (b / NKINDS) % 4 ? BW_CHECKMAGIC : getu32(s);
      break;
    default: break;
  }
}

const struct RelTier reltier[] = {
  {2, 6, 3}, {7, 23, 5}, {24, 280, 9}, {281, 4377, 13}, {4378, 69914, 17}
};

unsigned relbits (uint64_t d) {
  unsigned i;
  if (d == 1) return 1;
  for (i = 0; i < NTIER; i++)
    if (d <= reltier[i].hi) return i + 2 + reltier[i].bits;
  return 6 + 32;
}

/* }========================================================== */


int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  unsigned flags;
  size_t nscript;
  const uint8_t *script, *stream;
  size_t nstream;
  qtabinit();
  if (size < 2) {  /* empty stream; reader over no bytes at all */
    bw_Reader r;
    static const uint8_t script1[] = {K_BYTES, 0, 0, K_STRING, 3, K_BITS, 1};
    hostile(script1, sizeof(script1), data + size, 0);
    bw_readerinit(&r, NULL, 0);  /* no NULL + 0, a real empty slice */
    FCHECK(bw_readbytes(&r, 0) != NULL && r.status == BW_OK);
    return 0;
  }
  flags = data[0];
  nscript = data[1] < size - 2 ? data[1] : size - 2;
  script = data + 2;
  stream = script + nscript;
  nstream = size - 2 - nscript;
  hostile(script, nscript, stream, nstream);
  if (flags & 1) {  /* also from an exact copy: catches reads before it */
    uint8_t *copy = (uint8_t *)malloc(nstream > 0 ? nstream : 1);
    FCHECK(copy != NULL);
    if (nstream > 0) memcpy(copy, stream, nstream);
    hostile(script, nscript, copy, nstream);
    free(copy);
  }
  roundtrip(flags, script, nscript, stream, nstream);
  return 0;
}



/* {===================== seeds ===================== */

#ifdef FUZZ_SEEDGEN

/* A valid value for 'op' written to 'w'; 0 if the op cannot succeed. */
static int seedvalue (bw_Writer *w, const Op *op) {
  uint8_t buf[64];
  size_t n, k;
  switch (op->kind) {
    case K_BITS:
      if (op->n > 64) return 0;
      bw_writebits(w, rnd64() & mask64(op->n), op->n);
      break;
    case K_BOOL: bw_writebool(w, (int)(rnd() & 1)); break;
    case K_INT: {
      uint64_t span = (uint64_t)op->max - (uint64_t)op->min, r = rnd64();
      if (op->min > op->max) return 0;
      r = span == UINT64_MAX ? r : r % (span + 1);
      bw_writeint(w, refint64((uint64_t)op->min + r), op->min, op->max);
      break;
    }
    case K_FLOAT: bw_writefloat(w, (float)(rnd() % 2000) / 7.0f); break;
    case K_DOUBLE: bw_writedouble(w, (double)rnd64() / 3.0); break;
    case K_CFLOAT:
      if (op->q >= NQVALID) return 0;
      bw_writebits(w, rnd() % (qf[op->q].miv + 1), qf[op->q].nbits);
      break;
    case K_ALIGN: bw_writealign(w); break;
    case K_BYTES:
      if (op->lenmode != 0 || op->len > 1024) return 0;
      bw_writealign(w);
      for (k = 0; k < op->len; k++) bw_writebits(w, rnd() & 0xFF, 8);
      break;
    case K_STRING:
      if (op->len > (size_t)INT64_MAX) return 0;
      n = rnd() % 24;
      if (n > op->len) n = op->len;
      for (k = 0; k < n; k++) buf[k] = (uint8_t)('a' + rnd() % 26);
      bw_writestring(w, (const char *)buf, n, op->len);
      break;
    case K_INTREL: {
      uint64_t d;
      if (op->prev >= UINT32_MAX) return 0;
      switch (rnd() % 7) {
        case 0: d = 1; break;
        case 1: d = 2 + rnd() % 5; break;
        case 2: d = 7 + rnd() % 17; break;
        case 3: d = 24 + rnd() % 257; break;
        case 4: d = 281 + rnd() % 4097; break;
        case 5: d = 4378 + rnd() % 65537; break;
        default: d = 69915 + rnd() % 1000000;
      }
      if (d > UINT32_MAX - op->prev) d = UINT32_MAX - op->prev;
      bw_writeintrelative(w, op->prev, op->prev + d);
      break;
    }
    case K_CHECK: bw_writecheck(w, op->magic); break;
  }
  return 1;
}

static size_t makeseed (uint8_t *out, size_t cap, int k) {
  bw_Writer w;
  const uint8_t *stream;
  size_t nscript = 0, len;
  int nops = 1 + (int)(rnd() % 24), i;
  unsigned only = k < 2 * NKINDS ? (unsigned)k % NKINDS : NKINDS;
  bw_writerinitgrow(&w, seedalloc, NULL, SIZE_MAX);
  out[0] = (uint8_t)rnd();
  for (i = 0; i < nops; i++) {
    uint8_t tmp[24];
    Src s;
    Op op;
    size_t j;
    int tries;
    for (tries = 0; tries < 100; tries++) {
      unsigned kind = only < NKINDS && rnd() % 2 ? only : rnd() % NKINDS;
      tmp[0] = (uint8_t)(kind + NKINDS * (rnd() % (256 / NKINDS)));
      for (j = 1; j < sizeof(tmp); j++) tmp[j] = (uint8_t)rnd();
      srcinit(&s, tmp, sizeof(tmp));
      parseop(&s, &op);
      if (nscript + s.i > 255) break;
      if (seedvalue(&w, &op)) {
        memcpy(out + 2 + nscript, tmp, s.i);
        nscript += s.i;
        break;
      }
    }
  }
  out[1] = (uint8_t)nscript;
  stream = bw_writerdata(&w, &len);
  if (2 + nscript + len > cap) len = cap - 2 - nscript;
  if (len > 0) memcpy(out + 2 + nscript, stream, len);
  bw_writerfree(&w);
  return 2 + nscript + len;
}

int main (int argc, char **argv) {
  static uint8_t buf[1 << 16];
  int k;
  if (argc != 2) {
    fprintf(stderr, "usage: %s corpus-dir\n", argv[0]);
    return 2;
  }
  qtabinit();
  for (k = 0; k < 64; k++) {
    size_t n = makeseed(buf, sizeof(buf), k);
    if (writeseed(argv[1], k, buf, n)) return 1;
  }
  printf("fuzz_stream: %d seeds, %ld of %ld reads succeed\n", k,
         seedread, seedops);
  return 0;
}
#endif

/* }========================================================== */
