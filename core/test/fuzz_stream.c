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

#include "fuzz.h"

typedef char needs64bit[sizeof(size_t) == 8 ? 1 : -1];

#define MAXOPS  96

enum { K_BITS, K_BOOL, K_INT, K_FLOAT, K_DOUBLE, K_CFLOAT, K_ALIGN,
       K_BYTES, K_STRING, K_INTREL, K_CHECK, NKINDS };

typedef struct Op {
  int kind;
  unsigned n;          /* K_BITS: width */
  int64_t min, max;    /* K_INT */
  int q;               /* K_CFLOAT: index in 'qtab' */
  size_t len;          /* K_BYTES: length; K_STRING: maxlen */
  int lenmode;         /* K_BYTES: 0 'len', 1 the bytes left, 2 one more */
  uint64_t prev;       /* K_INTREL */
  uint32_t magic;      /* K_CHECK */
} Op;


/* {===================== parameters ===================== */

/* Quantizers: the valid ones first, with the largest integer sent and its
** bits, worked out from DESIGN.md in float32 outside this code; then ones
** bw_qfloatinit must refuse. */
static const struct {
  double min, max, res;
  uint32_t miv;
  unsigned nbits;
} qtab[] = {
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
#define NQ       ((int)(sizeof(qtab) / sizeof(qtab[0])))
#define NQVALID  13

static bw_QFloat qf[NQ];

static void qtabinit (void) {
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

static void parseop (Src *s, Op *op) {
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

/* int_relative tiers from DESIGN.md: difference range and payload bits */
static const struct { uint64_t lo, hi; unsigned bits; } reltier[] = {
  {2, 6, 3}, {7, 23, 5}, {24, 280, 9}, {281, 4377, 13}, {4378, 69914, 17}
};
#define NTIER 5

static unsigned relbits (uint64_t d) {
  unsigned i;
  if (d == 1) return 1;
  for (i = 0; i < NTIER; i++)
    if (d <= reltier[i].hi) return i + 2 + reltier[i].bits;
  return 6 + 32;
}

/* }========================================================== */


/* {===================== pass 1: hostile reads ===================== */

/* What a read must do, from the bit-at-a-time model. */
typedef struct Expect {
  bw_Status st, alt;      /* BW_OK, or the failure ('alt' also accepted) */
  uint64_t pos;           /* success: the position after the read */
  uint64_t errlo, errhi;  /* failure: bounds of the error position */
  uint64_t u;             /* success: the value as a bit pattern */
  uint64_t raw;           /* success: the bits as sent */
  const uint8_t *p;       /* K_BYTES, K_STRING */
  size_t len;
} Expect;

typedef struct Model {
  const uint8_t *d;
  uint64_t nbits, pos, start;
  Expect *e;
} Model;

static int mfail (Model *m, bw_Status st, uint64_t at) {
  if (m->e->st == BW_OK) {
    m->e->st = m->e->alt = st;
    m->e->errlo = m->start;
    m->e->errhi = at;
  }
  return 0;
}

static int mbits (Model *m, unsigned n, uint64_t *v) {
  if (n > m->nbits - m->pos) return mfail(m, BW_ETRUNC, m->pos);
  *v = refbits(m->d, m->pos, n);
  m->pos += n;
  return 1;
}

static int malign (Model *m) {
  unsigned pad = refpad(m->pos);
  if (refbits(m->d, m->pos, pad) != 0) return mfail(m, BW_EALIGN, m->pos);
  m->pos += pad;
  return 1;
}

static size_t bytesleft (const Model *m) {
  return (size_t)((m->nbits - m->pos) / 8);
}

static void model (const Op *op, const uint8_t *d, uint64_t nbits,
                   uint64_t pos, Expect *e) {
  Model m;
  uint64_t v = 0, x = 0;
  float f;
  uint32_t i;
  memset(e, 0, sizeof(*e));
  m.d = d; m.nbits = nbits; m.pos = m.start = pos; m.e = e;
  switch (op->kind) {
    case K_BITS:
      if (op->n > 64) mfail(&m, BW_EARG, pos);
      else if (mbits(&m, op->n, &v)) e->u = v;
      break;
    case K_BOOL: if (mbits(&m, 1, &v)) e->u = v; break;
    case K_INT:
      if (op->min > op->max) { mfail(&m, BW_EARG, pos); break; }
      if (!mbits(&m, refbitsreq(op->min, op->max), &v)) break;
      if (v > (uint64_t)op->max - (uint64_t)op->min)
        mfail(&m, BW_ERANGE, pos);
      else e->u = (uint64_t)op->min + v;
      break;
    case K_FLOAT: if (mbits(&m, 32, &v)) e->u = v; break;
    case K_DOUBLE: if (mbits(&m, 64, &v)) e->u = v; break;
    case K_CFLOAT:
      if (!mbits(&m, qf[op->q].nbits, &v)) break;
      if (v > qf[op->q].miv) { mfail(&m, BW_ERANGE, pos); break; }
      f = bw_qfloatdecode(&qf[op->q], (uint32_t)v);
      memcpy(&i, &f, 4);
      e->u = i;
      break;
    case K_ALIGN: malign(&m); break;
    case K_BYTES: {
      size_t len;
      if (!malign(&m)) break;
      len = op->lenmode == 0 ? op->len : bytesleft(&m) + (op->lenmode - 1);
      if (len > bytesleft(&m)) { mfail(&m, BW_ETRUNC, m.pos); break; }
      e->p = d + m.pos / 8;
      e->len = len;
      m.pos += (uint64_t)len * 8;
      break;
    }
    case K_STRING: {
      uint64_t at;
      if (op->len > (size_t)INT64_MAX) { mfail(&m, BW_EARG, pos); break; }
      if (!mbits(&m, refbitsreq(0, (int64_t)op->len), &v)) break;
      if (v > op->len) { mfail(&m, BW_ERANGE, pos); break; }
      if (!malign(&m)) break;
      if (v > bytesleft(&m)) { mfail(&m, BW_ETRUNC, m.pos); break; }
      at = m.pos;
      e->p = d + m.pos / 8;
      e->len = (size_t)v;
      m.pos += v * 8;
      if (!refutf8(e->p, e->len)) mfail(&m, BW_EUTF8, at);
      break;
    }
    case K_INTREL: {
      unsigned t = NTIER;
      int big;
      if (op->prev > UINT32_MAX) {  /* a caller error */
        mfail(&m, BW_EARG, pos);
        e->alt = BW_ERANGE;
        break;
      }
      if (!mbits(&m, 1, &v)) break;
      if (v) x = 1;
      else {
        for (t = 0; t < NTIER; t++) {
          if (!mbits(&m, 1, &v)) return;  /* failed: e->pos unused */
          if (v) break;
        }
        if (t < NTIER) {
          if (!mbits(&m, reltier[t].bits, &v)) break;
          if (v > reltier[t].hi - reltier[t].lo) {  /* int(lo, hi) */
            mfail(&m, BW_ERANGE, pos);
            break;
          }
          x = reltier[t].lo + v;
        }
        else {
          if (!mbits(&m, 32, &v)) break;
          if (v <= op->prev) { mfail(&m, BW_ERANGE, pos); break; }
          e->u = v;
        }
      }
      if (t < NTIER || x == 1) {  /* current = prev + x, in 0..2^32-1? */
        big = x > UINT32_MAX - op->prev;
        if (big) { mfail(&m, BW_ERANGE, pos); break; }
        e->u = op->prev + x;
      }
      break;
    }
    case K_CHECK:
      if (!malign(&m)) break;
      x = m.pos;
      if (!mbits(&m, 32, &v)) break;
      if (v != op->magic) mfail(&m, BW_ECHECK, x);
      break;
  }
  e->pos = m.pos;
  e->raw = e->st == BW_OK && op->kind == K_CFLOAT ? v : 0;
}

/* A read that succeeded, kept to write again. */
typedef struct Done {
  Op op;
  uint64_t u, raw;
  const uint8_t *p;
  size_t len;
  uint64_t start, end;
} Done;

static volatile uint8_t sink;

/* Run one read on 'r' and check it against the model. Returns 1 and fills
** 'done' if it succeeded. */
static int readop (bw_Reader *r, const Op *op, Done *done) {
  bw_Reader b = *r;
  Expect e;
  uint64_t u = 0;
  const uint8_t *p = NULL;
  size_t len = 0;
  int ptrop = 0;
  if (op->kind == K_CFLOAT && op->q >= NQVALID) return 0;
  if (b.status == BW_OK) model(op, r->data, r->nbits, r->pos, &e);
  switch (op->kind) {
    case K_BITS: u = bw_readbits(r, op->n); break;
    case K_BOOL: u = (uint64_t)bw_readbool(r); break;
    case K_INT:
      u = (uint64_t)bw_readint(r, op->min, op->max);
      break;
    case K_FLOAT: {
      float f = bw_readfloat(r);
      uint32_t v;
      memcpy(&v, &f, 4);
      u = v;
      break;
    }
    case K_DOUBLE: {
      double x = bw_readdouble(r);
      memcpy(&u, &x, 8);
      break;
    }
    case K_CFLOAT: {
      float f = bw_readcompressedfloat(r, &qf[op->q]);
      uint32_t v;
      memcpy(&v, &f, 4);
      u = v;
      break;
    }
    case K_ALIGN: bw_readalign(r); break;
    case K_BYTES: {
      size_t n = op->len;
      if (op->lenmode != 0)  /* the bytes after the padding, (+1) */
        n = (size_t)((r->nbits - r->pos - refpad(r->pos)) / 8)
            + (size_t)(op->lenmode - 1);
      p = bw_readbytes(r, n);
      len = p != NULL ? n : 0;
      ptrop = 1;
      break;
    }
    case K_STRING:
      len = 12345;
      p = (const uint8_t *)bw_readstring(r, op->len, &len);
      ptrop = 1;
      if (p == NULL) FCHECK(len == 0);
      break;
    case K_INTREL: u = bw_readintrelative(r, op->prev); break;
    case K_CHECK: bw_readcheck(r, op->magic); break;
  }
  /* invariants of every read */
  FCHECK(r->data == b.data && r->nbytes == b.nbytes && r->nbits == b.nbits);
  FCHECK(r->pos <= r->nbits);
  FCHECK(bw_bitsremaining(r) == r->nbits - r->pos);
  if (b.status != BW_OK) {  /* sticky: nothing moves, reads give zero */
    FCHECK(r->status == b.status && r->errpos == b.errpos);
    FCHECK(r->pos == b.pos);
    FCHECK(p == NULL && u == 0);
    return 0;
  }
  if (e.st != BW_OK) {
    FCHECK(r->status == e.st || r->status == e.alt);
    FCHECK(r->errpos == r->pos);  /* the position stays at the error */
    FCHECK(e.errlo <= r->errpos && r->errpos <= e.errhi);
    FCHECK(r->errpos <= r->nbits);
    FCHECK(p == NULL && u == 0);
    return 0;
  }
  FCHECK(r->status == BW_OK);
  FCHECK(r->pos == e.pos);
  FCHECK(u == e.u);
  if (ptrop) {
    FCHECK(p == e.p && len == e.len);
    FCHECK(p >= r->data && len <= r->nbytes - (size_t)(p - r->data));
    if (len > 0) sink = (uint8_t)(p[0] + p[len - 1]);
  }
  done->op = *op;
  done->u = u;
  done->raw = e.raw;
  done->p = p;
  done->len = len;
  done->start = b.pos;
  done->end = r->pos;
  return 1;
}

/* Write again what was read: the same bits must come out. */
static void rewrite (const Done *done, int ndone, const uint8_t *data) {
  bw_Writer w;
  Heap h;
  const uint8_t *out;
  size_t len;
  uint64_t end = ndone > 0 ? done[ndone - 1].end : 0;
  int i;
  heapinit(&h, -1);
  bw_writerinitgrow(&w, heapalloc, &h, SIZE_MAX);
  for (i = 0; i < ndone; i++) {
    const Done *d = &done[i];
    const Op *op = &d->op;
    bw_Status st = BW_OK;
    switch (op->kind) {
      case K_BITS: st = bw_writebits(&w, d->u, op->n); break;
      case K_BOOL: st = bw_writebool(&w, (int)d->u); break;
      case K_INT: st = bw_writeint(&w, refint64(d->u), op->min, op->max); break;
      case K_FLOAT: {
        uint32_t v = (uint32_t)d->u;
        float f;
        memcpy(&f, &v, 4);
        st = bw_writefloat(&w, f);
        break;
      }
      case K_DOUBLE: {
        double x;
        memcpy(&x, &d->u, 8);
        st = bw_writedouble(&w, x);
        break;
      }
      case K_CFLOAT:  /* the index as sent; its float may map elsewhere */
        st = bw_writebits(&w, d->raw, qf[op->q].nbits);
        break;
      case K_ALIGN: st = bw_writealign(&w); break;
      case K_BYTES: st = bw_writebytes(&w, d->p, d->len); break;
      case K_STRING:
        st = bw_writestring(&w, (const char *)d->p, d->len, op->len);
        break;
      case K_INTREL: {  /* not canonical: copy the bits as read */
        uint64_t pos;
        for (pos = d->start; pos < d->end && st == BW_OK; ) {
          unsigned n = d->end - pos < 64 ? (unsigned)(d->end - pos) : 64;
          st = bw_writebits(&w, refbits(data, pos, n), n);
          pos += n;
        }
        break;
      }
      case K_CHECK: st = bw_writecheck(&w, op->magic); break;
    }
    FCHECK(st == BW_OK && w.status == BW_OK);
    FCHECK(bw_bitswritten(&w) == d->end);
  }
  out = bw_writerdata(&w, &len);
  FCHECK(len == (size_t)((end + 7) / 8));
  if (len > 0) {
    FCHECK(samebits(out, data, end));
    FCHECK(end % 8 == 0 || (out[len - 1] >> (end % 8)) == 0);
  }
  bw_writerfree(&w);
  FCHECK(h.size == 0 && w.buf == NULL);
}

static Done done[MAXOPS];
#ifdef FUZZ_SEEDGEN
static long seedops, seedread;  /* how deep the seeds get */
#endif

static void hostile (const uint8_t *script, size_t nscript,
                     const uint8_t *data, size_t n) {
  bw_Reader r;
  Src s;
  Op op;
  int k, ndone = 0;
  bw_readerinit(&r, data, n);
  FCHECK(r.status == BW_OK && r.pos == 0 && r.nbits == (uint64_t)n * 8);
  srcinit(&s, script, nscript);
  for (k = 0; k < MAXOPS && srcleft(&s) > 0; k++) {
    parseop(&s, &op);
    if (readop(&r, &op, &done[ndone])) ndone++;
  }
#ifdef FUZZ_SEEDGEN
  seedops += k;
  seedread += ndone;
#endif
  rewrite(done, ndone, data);
}

/* }========================================================== */


/* {===================== pass 2: round trips ===================== */

typedef struct Item {
  Op op;
  uint64_t u;          /* value as a bit pattern; K_INTREL: current */
  double x;            /* K_CFLOAT input */
  const uint8_t *p;    /* K_BYTES, K_STRING */
  size_t len, maxlen;
  bw_Status want, alt; /* BW_OK, or the refusal of a bad value (last item) */
  uint64_t start, end; /* bit positions by the model */
} Item;

static Item items[MAXOPS];
static uint8_t arena[MAXOPS * 64];
static uint8_t pattern[1024];

static size_t pututf8 (uint8_t *o, uint32_t cp) {
  if (cp < 0x80) { o[0] = (uint8_t)cp; return 1; }
  if (cp < 0x800) {
    o[0] = (uint8_t)(0xC0 | cp >> 6);
    o[1] = (uint8_t)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (uint8_t)(0xE0 | cp >> 12);
    o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    o[2] = (uint8_t)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (uint8_t)(0xF0 | cp >> 18);
  o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
  o[3] = (uint8_t)(0x80 | (cp & 0x3F));
  return 4;
}

/* A string of at most 48 bytes at 'o': valid most of the time. */
static size_t genstring (Src *v, uint8_t *o) {
  static const char *const bad[] = {
    "\x00", "\x80", "\xC0\x80", "\xC1\xBF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
    "\xE2\x82", "\xF5\x80\x80\x80", "\xE0\x9F\xBF", "\xF0\x8F\xBF\xBF", "\xFF"
  };
  static const size_t badlen[] = {1, 1, 2, 2, 3, 4, 2, 4, 3, 4, 1};
  static const uint8_t lead[] = {0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xED,
                                 0xEE, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xF8};
  static const uint8_t cont[] = {0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0x7F,
                                 0xC0};
  size_t n = 0, k, count;
  switch (getu8(v) % 5) {
    case 0:
      count = getu8(v) % 40;
      for (k = 0; k < count; k++) o[n++] = (uint8_t)(1 + getu8(v) % 127);
      break;
    case 1:
      count = getu8(v) % 12;
      for (k = 0; k < count; k++) {
        uint32_t r = getu32(v), cp;
        switch (r & 3) {
          case 0: cp = 1 + (r >> 2) % 0x7F; break;
          case 1: cp = 0x80 + (r >> 2) % (0x800 - 0x80); break;
          case 2:
            cp = 0x800 + (r >> 2) % (0x10000 - 0x800 - 0x800);
            if (cp >= 0xD800) cp += 0x800;  /* skip the surrogates */
            break;
          default: cp = 0x10000 + (r >> 2) % (0x110000 - 0x10000);
        }
        n += pututf8(o + n, cp);
      }
      break;
    case 2:  /* raw input bytes */
      count = getu8(v) % 24;
      for (k = 0; k < count; k++) o[n++] = (uint8_t)getu8(v);
      break;
    case 3:  /* sequences at the edges of the valid ranges */
      count = 1 + getu8(v) % 4;
      for (k = 0; k < count; k++) {
        unsigned r = getu8(v), c, j;
        o[n++] = lead[r % sizeof(lead)];
        c = 1 + (r >> 4) % 3;
        for (j = 0; j < c; j++) {
          r = getu8(v);
          o[n++] = r & 1 ? cont[(r >> 1) % sizeof(cont)]
                         : (uint8_t)(0x80 | (r >> 2));
        }
      }
      break;
    default:  /* one bad sequence among ASCII */
      count = getu8(v) % 8;
      for (k = 0; k < count; k++) o[n++] = 'a';
      k = getu8(v) % (sizeof(badlen) / sizeof(badlen[0]));
      memcpy(o + n, bad[k], badlen[k]);
      n += badlen[k];
      o[n++] = 'z';
  }
  return n;
}

/* Bits the model says 'it' takes at 'pos' (valid values). */
static uint64_t itembits (const Item *it, uint64_t pos) {
  const Op *op = &it->op;
  unsigned nb;
  switch (op->kind) {
    case K_BITS: return op->n;
    case K_BOOL: return 1;
    case K_INT: return refbitsreq(op->min, op->max);
    case K_FLOAT: return 32;
    case K_DOUBLE: return 64;
    case K_CFLOAT: return refbitsreq(0, qf[op->q].miv);
    case K_ALIGN: return refpad(pos);
    case K_BYTES: return refpad(pos) + (uint64_t)it->len * 8;
    case K_STRING:
      nb = refbitsreq(0, (int64_t)it->maxlen);
      return nb + refpad(pos + nb) + (uint64_t)it->len * 8;
    case K_INTREL: return relbits(it->u - op->prev);
    case K_CHECK: return refpad(pos) + 32;
  }
  return 0;
}

/* Item for 'op' with a value from 'v'. Returns 0 to skip the op. */
static int genitem (Src *v, const Op *op, Item *it, uint8_t **ap) {
  unsigned mb = getu8(v);
  int bad = mb % 64 == 0;
  memset(it, 0, sizeof(*it));
  it->op = *op;
  it->want = it->alt = BW_OK;
  switch (op->kind) {
    case K_BITS:
      it->u = getu64(v) & mask64(op->n);
      if (op->n > 64) it->want = it->alt = BW_EARG;
      else if (bad && op->n < 64) {
        it->u |= UINT64_C(1) << op->n;
        it->want = it->alt = BW_ERANGE;
      }
      break;
    case K_BOOL: it->u = mb >> 1; break;
    case K_INT: {
      uint64_t span = (uint64_t)op->max - (uint64_t)op->min, r = getu64(v);
      if (op->min > op->max) {
        it->u = (uint64_t)op->min;
        it->want = it->alt = BW_ERANGE;
        break;
      }
      it->u = (uint64_t)op->min + (span == UINT64_MAX ? r : r % (span + 1));
      if (bad && op->max < INT64_MAX) {
        it->u = (uint64_t)op->max + 1
                + (r & 0xFF) % ((uint64_t)INT64_MAX - (uint64_t)op->max);
        it->want = it->alt = BW_ERANGE;
      }
      else if (bad && op->min > INT64_MIN) {
        it->u = (uint64_t)op->min - 1;
        it->want = it->alt = BW_ERANGE;
      }
      break;
    }
    case K_FLOAT: it->u = getu32(v); break;
    case K_DOUBLE: it->u = getu64(v); break;
    case K_CFLOAT: {
      static const double special[] = {0, -0.0, 1, -1, HUGE_VAL, -HUGE_VAL,
                                       NAN, 1e300, -1e300, 1e-300};
      const bw_QFloat *q = &qf[op->q];
      uint32_t r = getu32(v);
      if (op->q >= NQVALID) return 0;
      switch ((mb >> 1) % 7) {
        case 0: { float f; memcpy(&f, &r, 4); it->x = f; break; }
        case 1: {
          uint64_t b = (uint64_t)r << 32 | getu32(v);
          memcpy(&it->x, &b, 8);
          break;
        }
        case 2: it->x = q->min + q->delta * (r / 4294967296.0); break;
        case 3: it->x = bw_qfloatdecode(q, r % (q->miv + 1)); break;
        case 4:  /* halfway between two steps: the rounding ties */
          it->x = bw_qfloatdecode(q, r % (q->miv + 1))
                  + 0.5 * (double)q->delta / q->miv;
          break;
        case 5: it->x = special[r % 10]; break;
        default:
          it->x = (r & 1) ? (double)q->min : (double)q->min + q->delta;
          if (r & 2) it->x += (r & 4) ? 1e-3 : -1e-3;
      }
      break;
    }
    case K_ALIGN: break;
    case K_BYTES:
      if (bad) {  /* claimed lengths no writer can hold */
        static const size_t huge[] = {SIZE_MAX, SIZE_MAX / 8 + 1,
                                      (size_t)1 << 40, ((size_t)1 << 48) + 1};
        it->len = huge[getu8(v) % 4];
        it->p = pattern;
        it->want = BW_ETRUNC;
        it->alt = BW_ENOMEM;
        break;
      }
      it->len = (mb & 2) ? getu8(v) % 40 : getu16(v) % 600;
      if (srcleft(v) >= it->len) {
        it->p = v->p + v->i;
        v->i += it->len;
      }
      else it->p = pattern;
      break;
    case K_STRING: {
      unsigned mm;
      int utf8ok;
      it->p = *ap;
      it->len = genstring(v, *ap);
      *ap += it->len;
      utf8ok = refutf8(it->p, it->len);
      mm = getu8(v) % 16;
      if (mm == 0) it->maxlen = op->len;
      else if (mm == 1 && it->len > 0) it->maxlen = it->len - 1;
      else it->maxlen = it->len + (mm % 4) * (1 + getu8(v));
      if (it->maxlen > (size_t)INT64_MAX || it->len > it->maxlen) {
        it->want = BW_ERANGE;
        it->alt = utf8ok ? BW_ERANGE : BW_EUTF8;
      }
      else if (!utf8ok) it->want = it->alt = BW_EUTF8;
      break;
    }
    case K_INTREL: {
      uint64_t prev = op->prev, d;
      unsigned t = getu8(v) % 8;
      uint32_t r = getu32(v);
      if (t == 0) d = 1;
      else if (t <= NTIER)
        d = reltier[t - 1].lo + r % (reltier[t - 1].hi - reltier[t - 1].lo + 1);
      else d = 69915 + r % (UINT32_MAX - 69915);
      if (prev >= UINT32_MAX || bad) {  /* no current fits, or cur <= prev */
        it->u = bad && prev <= UINT32_MAX ? prev - (r & 1 ? 0 : prev / 2)
                                          : prev + 1;
        it->want = it->alt = BW_ERANGE;
        break;
      }
      if (d > UINT32_MAX - prev) d = UINT32_MAX - prev;
      it->u = prev + d;
      break;
    }
    case K_CHECK: break;
  }
  return 1;
}

static bw_Status writeitem (bw_Writer *w, const Item *it) {
  const Op *op = &it->op;
  switch (op->kind) {
    case K_BITS: return bw_writebits(w, it->u, op->n);
    case K_BOOL: return bw_writebool(w, (int)it->u);
    case K_INT: return bw_writeint(w, refint64(it->u), op->min, op->max);
    case K_FLOAT: {
      uint32_t v = (uint32_t)it->u;
      float f;
      memcpy(&f, &v, 4);
      return bw_writefloat(w, f);
    }
    case K_DOUBLE: {
      double x;
      memcpy(&x, &it->u, 8);
      return bw_writedouble(w, x);
    }
    case K_CFLOAT: return bw_writecompressedfloat(w, it->x, &qf[op->q]);
    case K_ALIGN: return bw_writealign(w);
    case K_BYTES: return bw_writebytes(w, it->p, it->len);
    case K_STRING:
      return bw_writestring(w, (const char *)it->p, it->len, it->maxlen);
    case K_INTREL: return bw_writeintrelative(w, op->prev, it->u);
    case K_CHECK: return bw_writecheck(w, op->magic);
  }
  return BW_OK;
}

/* Check a writer that ran 'nitems' items and stopped at 'fail' (or ran all:
** fail == nitems) against the growable writer's 'ref' of 'refbits' bits.
** 'limit' is its room in bits; 'nomem' whether its allocator may fail. */
static void checkvariant (bw_Writer *w, int nitems, int fail, uint64_t limit,
                          int nomem, const uint8_t *ref, uint64_t nref,
                          bw_Status refst) {
  /* 'ref' holds 'nref' bits (a refused bytes() may have aligned first) */
  const uint8_t *out;
  size_t len;
  uint64_t bits = bw_bitswritten(w);
  out = bw_writerdata(w, &len);
  FCHECK(len == (size_t)((bits + 7) / 8));
  if (fail == nitems) {  /* the whole script went in */
    FCHECK(w->status == BW_OK && refst == BW_OK);
    FCHECK(bits == nref && nref <= limit);
    FCHECK(len == 0 || memcmp(out, ref, len) == 0);
    return;
  }
  FCHECK(w->status != BW_OK && w->errpos == bits);
  FCHECK(bits <= limit && bits <= nref);
  FCHECK(bits >= items[fail].start);
  if (len > 0) FCHECK(samebits(out, ref, bits));
  if (items[fail].want != BW_OK) {  /* the refused value (or no room) */
    FCHECK(w->status == items[fail].want || w->status == items[fail].alt
           || w->status == BW_ETRUNC || (nomem && w->status == BW_ENOMEM));
    FCHECK(w->status == refst || w->status == BW_ETRUNC
           || w->status == BW_ENOMEM);
  }
  else {  /* out of room in a valid item */
    FCHECK(w->status == BW_ETRUNC || (nomem && w->status == BW_ENOMEM));
    if (w->status == BW_ETRUNC) FCHECK(items[fail].end > limit);
  }
}

static int runitems (bw_Writer *w, int nitems) {
  int i;
  for (i = 0; i < nitems; i++)
    if (writeitem(w, &items[i]) != BW_OK) break;
  return i;
}

static float qround (const bw_QFloat *q, double x) {
  uint32_t i = bw_qfloatencode(q, x);
  FCHECK(i <= q->miv);
  return bw_qfloatdecode(q, i);
}

static void readitems (const uint8_t *data, size_t n, int nvalid,
                       uint64_t nbits) {
  bw_Reader r;
  int i;
  bw_readerinit(&r, data, n);
  for (i = 0; i < nvalid; i++) {
    const Item *it = &items[i];
    const Op *op = &it->op;
    switch (op->kind) {
      case K_BITS: FCHECK(bw_readbits(&r, op->n) == it->u); break;
      case K_BOOL: FCHECK(bw_readbool(&r) == (it->u != 0)); break;
      case K_INT:
        FCHECK(bw_readint(&r, op->min, op->max) == refint64(it->u));
        break;
      case K_FLOAT: {
        float f = bw_readfloat(&r);
        uint32_t v;
        memcpy(&v, &f, 4);
        FCHECK(v == (uint32_t)it->u);
        break;
      }
      case K_DOUBLE: {
        double x = bw_readdouble(&r);
        uint64_t v;
        memcpy(&v, &x, 8);
        FCHECK(v == it->u);
        break;
      }
      case K_CFLOAT: {
        const bw_QFloat *q = &qf[op->q];
        float got = bw_readcompressedfloat(&r, q), want = qround(q, it->x);
        float xf = (float)it->x;
        FCHECK(memcmp(&got, &want, 4) == 0);
        if (xf >= q->min && xf <= q->min + q->delta) {  /* within a step */
          double tol = (double)q->delta / q->miv
                       + 1e-6 * (fabs(q->min) + fabs(q->min + q->delta));
          FCHECK(fabs((double)got - xf) <= tol);
        }
        break;
      }
      case K_ALIGN: bw_readalign(&r); break;
      case K_BYTES: {
        const uint8_t *p = bw_readbytes(&r, it->len);
        FCHECK(p != NULL);
        FCHECK(it->len == 0 || memcmp(p, it->p, it->len) == 0);
        break;
      }
      case K_STRING: {
        size_t len;
        const char *s = bw_readstring(&r, it->maxlen, &len);
        FCHECK(s != NULL && len == it->len);
        FCHECK(len == 0 || memcmp(s, it->p, len) == 0);
        break;
      }
      case K_INTREL:
        FCHECK(bw_readintrelative(&r, op->prev) == it->u);
        break;
      case K_CHECK: bw_readcheck(&r, op->magic); break;
    }
    FCHECK(r.status == BW_OK);
    FCHECK(r.pos == it->end);
  }
  FCHECK(bw_bitsremaining(&r) < 8 && r.nbits - nbits < 8);
  bw_readalign(&r);  /* the padding of the last byte is zero */
  FCHECK(r.status == BW_OK && r.pos == r.nbits);
  FCHECK(bw_readbits(&r, 1) == 0);
  FCHECK(r.status == BW_ETRUNC && r.errpos == r.nbits && r.pos == r.nbits);
}

static void roundtrip (unsigned flags, const uint8_t *script, size_t nscript,
                       const uint8_t *vals, size_t nvals) {
  Src s, v;
  Op op;
  bw_Writer g, w;
  Heap hg, hw;
  uint8_t *ap = arena, *fixed, *copy;
  const uint8_t *gout;
  size_t glen;
  uint64_t pos = 0, nvalidbits;
  int nitems = 0, nvalid, i, fail;
  bw_Status gst = BW_OK;
  srcinit(&s, script, nscript);
  srcinit(&v, vals, nvals);
  /* the items, their positions by the model; a refused value ends them */
  while (nitems < MAXOPS && srcleft(&s) > 0) {
    Item *it = &items[nitems];
    parseop(&s, &op);
    if (!genitem(&v, &op, it, &ap)) continue;
    it->start = pos;
    if (it->want == BW_OK) it->end = pos += itembits(it, pos);
    else it->end = pos + (op.kind == K_BYTES ? refpad(pos) : 0);
    nitems++;
    if (it->want != BW_OK) break;
  }
  nvalid = nitems > 0 && items[nitems - 1].want != BW_OK ? nitems - 1
                                                         : nitems;
  nvalidbits = pos;
  /* growable writer: every item as the model says */
  heapinit(&hg, -1);
  bw_writerinitgrow(&g, heapalloc, &hg, SIZE_MAX);
  for (i = 0; i < nitems; i++) {
    const Item *it = &items[i];
    bw_Status st = writeitem(&g, it);
    if (flags & 0x40) {  /* the packet so far, then writing goes on */
      size_t len;
      bw_writerdata(&g, &len);
      FCHECK(len == (size_t)((bw_bitswritten(&g) + 7) / 8));
    }
    FCHECK(bw_bitswritten(&g) == it->end);
    if (it->want == BW_OK) { FCHECK(st == BW_OK); continue; }
    FCHECK(st == it->want || st == it->alt);
    FCHECK(g.status == st && g.errpos == it->end);
    FCHECK(bw_writebool(&g, 1) == st && bw_bitswritten(&g) == it->end);
    gst = st;
  }
  gout = bw_writerdata(&g, &glen);
  FCHECK(glen == (size_t)((nvalidbits + 7) / 8) || gst != BW_OK);
  if (glen > 0 && nvalidbits % 8 != 0 && gst == BW_OK)
    FCHECK((gout[glen - 1] >> (nvalidbits % 8)) == 0);
  /* fixed writer over an exact heap block */
  {
    size_t need = (size_t)((nvalidbits + 7) / 8), cap;
    switch ((flags >> 1) & 3) {
      case 0: cap = need; break;
      case 1: cap = need > 0 ? need - 1 - (getu8(&v) % 4) % need : 0; break;
      case 2: cap = getu8(&v); break;
      default: cap = need + 8;
    }
    fixed = (uint8_t *)malloc(cap > 0 ? cap : 1);
    FCHECK(fixed != NULL);
    bw_writerinit(&w, fixed, cap);
    if (flags & 0x80) {  /* junk first, then forget it */
      bw_writebits(&w, 0x1555, 13);
      bw_writedouble(&w, -1.5);
      bw_writerreset(&w);
      FCHECK(w.status == BW_OK && bw_bitswritten(&w) == 0);
    }
    fail = runitems(&w, nitems);
    checkvariant(&w, nitems, fail, (uint64_t)cap * 8, 0, gout,
                 bw_bitswritten(&g), gst);
    bw_writerfree(&w);  /* a no-op for a fixed writer */
    FCHECK(w.buf == NULL || w.buf == fixed);
    free(fixed);
  }
  /* growable writer whose allocator fails or whose size is capped */
  if ((flags >> 3) & 7) {
    unsigned mode = (flags >> 3) & 7;
    size_t maxbytes = SIZE_MAX, need = (size_t)((nvalidbits + 7) / 8);
    heapinit(&hw, mode < 4 ? (int)mode - 1 : -1);
    if (mode >= 4) maxbytes = need > mode - 4 ? need - (mode - 4) : 0;
    bw_writerinitgrow(&w, heapalloc, &hw, maxbytes);
    fail = runitems(&w, nitems);
    checkvariant(&w, nitems, fail,
                 maxbytes >= ((size_t)1 << 48) ? UINT64_MAX
                                               : (uint64_t)maxbytes * 8,
                 1, gout, bw_bitswritten(&g), gst);
    bw_writerfree(&w);
    FCHECK(hw.size == 0);
  }
  /* read back from an exact copy */
  {
    size_t n = (size_t)((nvalidbits + 7) / 8);
    copy = (uint8_t *)malloc(n > 0 ? n : 1);
    FCHECK(copy != NULL);
    if (n > 0) memcpy(copy, gout, n);
    readitems(copy, n, nvalid, nvalidbits);
    free(copy);
  }
  bw_writerfree(&g);
  FCHECK(hg.size == 0);
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
