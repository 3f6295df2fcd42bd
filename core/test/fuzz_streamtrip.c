/*
** fuzz_streamtrip.c - fuzz_stream's pass 2: values taken from the stream
** written by growable, fixed and failing writers and read back (see
** fuzz_stream.c)
** See LICENSE for copyright and terms.
*/

#include <math.h>

#include "fuzz_stream.h"


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

void roundtrip (unsigned flags, const uint8_t *script, size_t nscript,
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
