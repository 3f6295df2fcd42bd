/*
** fuzz_streamread.c - fuzz_stream's pass 1: every read of the script on
** hostile bytes against a bit-at-a-time model, then the reads that
** succeeded written again, bit for bit (see fuzz_stream.c)
** See LICENSE for copyright and terms.
*/

#include <math.h>

#include "fuzz_stream.h"


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
long seedops, seedread;
#endif

void hostile (const uint8_t *script, size_t nscript, const uint8_t *data,
              size_t n) {
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
