/*
** bw_gen.c - runtime support of the code `bitwire gen c` writes
** See LICENSE for copyright and terms.
*/

/*
** Generated C reads and writes the same bits as the Lua driver and fails
** with the same codes, positions and field paths. What is the same for
** every schema (counts checked against the bits left, sparse slot headers,
** paths) lives here once, so the generated files stay short and readable
** and cannot drift from one another.
*/

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bw_gen.h"

int bw_gencount (bw_Reader *r, unsigned nbits, uint64_t min, uint64_t max,
                 uint64_t minbits, uint64_t *n) {
  uint64_t start = r->pos, u;
  if (!bw_genspan(r, nbits, max - min, &u)) return 0;
  *n = min + u;
  /* every element costs at least minbits: refuse before reading them */
  if (!bw_countfits(*n, 0, minbits, bw_bitsremaining(r)))
    return bw_genfail(r, BW_ETRUNC, start);
  return 1;
}

int bw_gendeltacount (bw_Reader *r, uint64_t start, uint64_t n, uint64_t bn,
                      uint64_t minbits) {
  if (!bw_countfits(n, bn, minbits, bw_bitsremaining(r)))
    return bw_genfail(r, BW_ETRUNC, start);
  return 1;
}

/* Prepend 'seg' (of 'len' bytes) to err->path, keeping its first
** BW_MAXPATH - 1 bytes; a dot joins it to a following name. */
static void prepend (bw_Error *err, const char *seg, size_t len) {
  char *p = err->path;
  size_t old = strlen(p), dot = old > 0 && p[0] != '[';
  size_t total = len + dot + old, keep;
  if (total > BW_MAXPATH - 1) total = BW_MAXPATH - 1;
  keep = total > len + dot ? total - len - dot : 0;
  if (keep > 0) memmove(p + len + dot, p, keep);
  if (len > total) len = total;
  memcpy(p, seg, len);
  if (dot && len + 1 <= total) p[len] = '.';
  p[total] = '\0';
}

int bw_genpath (bw_Error *err, const char *name) {
  prepend(err, name, strlen(name));
  return 0;
}

int bw_genindex (bw_Error *err, uint64_t index) {
  char buf[32];
  int n = snprintf(buf, sizeof(buf), "[%llu]", (unsigned long long)index);
  prepend(err, buf, (size_t)n);
  return 0;
}

int bw_generror (const bw_Reader *r, bw_Error *err) {
  err->code = r->status == BW_OK ? BW_EARG : r->status;
  err->bitpos = r->errpos;
  return 0;
}

size_t bw_genstrlen (const char *s, size_t maxlen) {
  const char *e = (const char *)memchr(s, 0, maxlen + 1);
  return e == NULL ? maxlen + 1 : (size_t)(e - s);
}

int bw_genwritestring (bw_Writer *w, const char *s, size_t maxlen) {
  size_t n = bw_genstrlen(s, maxlen);
  if (n > maxlen) return bw_genrefuse(w, BW_ERANGE);
  return bw_writestring(w, s, n, maxlen) == BW_OK;
}

int bw_genreadstring (bw_Reader *r, char *s, size_t maxlen) {
  size_t n;
  const char *p = bw_readstring(r, maxlen, &n);
  if (p == NULL) return 0;
  memcpy(s, p, n);
  s[n] = '\0';
  return 1;
}

int bw_genreadbytes (bw_Reader *r, uint8_t *dst, size_t n) {
  const uint8_t *p = bw_readbytes(r, n);
  if (p == NULL) return 0;
  if (n > 0) memcpy(dst, p, n);
  return 1;
}

int bw_genwriteangle (bw_Writer *w, double x, double period, unsigned bits) {
  if (!isfinite(x)) return bw_genrefuse(w, BW_ERANGE);
  bw_writebits(w, bw_angleencode(x, period, bits), bits);
  return w->status == BW_OK;
}

/* The code of quaternion 'v' (float32 components, as structs hold them);
** 0 when it has no length or is not finite. */
static int quatcode (const bw_QFloat *q, const float v[4], uint32_t code[4]) {
  double in[4];
  int i;
  for (i = 0; i < 4; i++) in[i] = (double)v[i];
  return bw_quatencode(q, in, code);
}

static void quatvalue (const bw_QFloat *q, const uint32_t code[4],
                       float v[4]) {
  double out[4];
  int i;
  bw_quatdecode(q, code, out);
  for (i = 0; i < 4; i++) v[i] = (float)out[i];
}

int bw_genwritequat (bw_Writer *w, const bw_QFloat *q, const float v[4]) {
  uint32_t out[4];
  if (!quatcode(q, v, out)) return bw_genrefuse(w, BW_ERANGE);
  return bw_writequat(w, q, out) == BW_OK;
}

/* bw_readquat: non-canonical codes fail as the driver's decode fails */
int bw_genreadquat (bw_Reader *r, const bw_QFloat *q, float v[4]) {
  uint32_t in[4];
  if (!bw_readquat(r, q, in)) return 0;
  quatvalue(q, in, v);
  return 1;
}

int bw_genstreq (const char *a, const char *b, size_t maxlen) {
  size_t n = bw_genstrlen(a, maxlen);
  return n == bw_genstrlen(b, maxlen) && memcmp(a, b, n) == 0;
}

int bw_genquateq (const bw_QFloat *q, const float a[4], const float b[4]) {
  uint32_t qa[4], qb[4];
  return quatcode(q, a, qa) && quatcode(q, b, qb)
         && memcmp(qa, qb, sizeof(qa)) == 0;
}

/* {===================== relative differences ===================== */

int bw_genwritediff (bw_Writer *w, const bw_Field *f, double base, double x) {
  bw_Diff d;
  uint64_t b, v;
  if (!bw_diffbase(f, x, &v)) return bw_genrefuse(w, BW_ERANGE);
  bw_fielddiff(f, &d);
  if (!bw_diffbase(f, base, &b)) return bw_writebits(w, v, d.nbits) == BW_OK;
  return bw_writediff(w, &d, b, v) == BW_OK;
}

int bw_genreaddiff (bw_Reader *r, const bw_Field *f, double base, uint64_t *u) {
  bw_Diff d;
  uint64_t b;
  bw_fielddiff(f, &d);
  *u = bw_diffbase(f, base, &b) ? bw_readdiff(r, &d, b)
                                : bw_readbits(r, d.nbits);
  return r->status == BW_OK;
}

int bw_genwritequatdiff (bw_Writer *w, const bw_Field *f, const float base[4],
                         const float v[4]) {
  uint32_t b[4], code[4];
  if (!quatcode(&f->q, base, b)) return bw_genwritequat(w, &f->q, v);
  if (!quatcode(&f->q, v, code)) return bw_genrefuse(w, BW_ERANGE);
  return bw_writequatdiff(w, f, b, code) == BW_OK;
}

int bw_genreadquatdiff (bw_Reader *r, const bw_Field *f, const float base[4],
                        float v[4]) {
  uint32_t b[4], code[4];
  if (!quatcode(&f->q, base, b)) return bw_genreadquat(r, &f->q, v);
  if (!bw_readquatdiff(r, f, b, code)) return 0;
  quatvalue(&f->q, code, v);
  return 1;
}

/* }========================================================== */


/* {===================== sparse arrays ===================== */

/* Bits the relative encoding spends from 'prev' to 'cur'. */
static uint64_t relbits (const bw_GenSparse *sp, uint64_t prev, uint64_t cur) {
  if (sp->ntiers > 0)
    return bw_tieredbits(cur - prev, 1, sp->n + 1, sp->tiers, sp->ntiers);
  return bw_intrelativebits(prev, cur);
}

static void writerel (bw_Writer *w, const bw_GenSparse *sp, uint64_t prev,
                      uint64_t cur) {
  if (sp->ntiers > 0)
    bw_writetiered(w, cur - prev, 1, sp->n + 1, sp->tiers, sp->ntiers);
  else
    bw_writeintrelative(w, prev, cur);
}

static unsigned indexbits (const bw_GenSparse *sp) {
  return bw_bitsrequired(0, (int64_t)sp->n - 1);
}

uint64_t bw_genslotsbegin (bw_Writer *w, const bw_GenSparse *sp,
                           const uint8_t *mask, bw_GenSlots *st) {
  uint64_t cost[3], i, prev = 0, count = 0, bits = 0;
  int enc = sp->encoding;
  cost[BW_SPRELATIVE] = 0;
  for (i = 1; i <= sp->n; i++)
    if (bw_genhas(mask, i - 1)) {
      count++;
      cost[BW_SPRELATIVE] += relbits(sp, prev, i);
      prev = i;
    }
  cost[BW_SPRELATIVE] += relbits(sp, prev, sp->n + 1);
  cost[BW_SPMASK] = sp->n;
  cost[BW_SPINDEX] = sp->nbits + count * indexbits(sp);
  if (enc == BW_SPAUTO) {  /* the driver's choice, ties included */
    enc = cost[BW_SPINDEX] < cost[BW_SPMASK] ? BW_SPINDEX : BW_SPMASK;
    if (cost[BW_SPRELATIVE] < cost[enc]) enc = BW_SPRELATIVE;
    if (w) bw_writebits(w, (uint64_t)enc, 2);
    bits += 2;
  }
  if (enc == BW_SPINDEX) {
    if (w) bw_writebits(w, count, sp->nbits);
    bits += sp->nbits;
  }
  st->encoding = enc;
  st->prev = 0;
  st->left = count;
  return bits;
}

uint64_t bw_genslot (bw_Writer *w, const bw_GenSparse *sp, bw_GenSlots *st,
                     uint64_t slot) {
  uint64_t bits = 0, i;
  switch (st->encoding) {
    case BW_SPMASK:  /* the absent slots before it, then its bit */
      if (w) {
        for (i = st->prev + 1; i < slot; i++) bw_writebits(w, 0, 1);
        bw_writebits(w, 1, 1);
      }
      bits = slot - st->prev;
      break;
    case BW_SPINDEX:
      bits = indexbits(sp);
      if (w) bw_writebits(w, slot - 1, (unsigned)bits);
      break;
    default:
      bits = relbits(sp, st->prev, slot);
      if (w) writerel(w, sp, st->prev, slot);
  }
  st->prev = slot;
  return bits;
}

uint64_t bw_genslotsend (bw_Writer *w, const bw_GenSparse *sp,
                         bw_GenSlots *st) {
  uint64_t i;
  if (st->encoding == BW_SPMASK) {
    if (w) for (i = st->prev + 1; i <= sp->n; i++) bw_writebits(w, 0, 1);
    return sp->n - st->prev;
  }
  if (st->encoding == BW_SPRELATIVE) {
    if (w) writerel(w, sp, st->prev, sp->n + 1);
    return relbits(sp, st->prev, sp->n + 1);
  }
  return 0;
}

int bw_genreadslotsbegin (bw_Reader *r, const bw_GenSparse *sp,
                          bw_GenSlots *st) {
  uint64_t start = r->pos;
  int enc = sp->encoding;
  st->prev = 0;
  st->left = 0;
  if (enc == BW_SPAUTO) {
    enc = (int)bw_readbits(r, 2);
    if (r->status != BW_OK) return 0;
    if (enc == BW_SPAUTO) return bw_genfail(r, BW_ERANGE, start);
  }
  st->encoding = enc;
  if (enc == BW_SPINDEX) {
    uint64_t count, per = indexbits(sp) + sp->slotmin;
    start = r->pos;
    count = bw_readbits(r, sp->nbits);
    if (r->status != BW_OK) return 0;
    if (count > sp->n) return bw_genfail(r, BW_ERANGE, start);
    /* a slot costs its index and its value */
    if (per > 0 && count > bw_bitsremaining(r) / per)
      return bw_genfail(r, BW_ETRUNC, start);
    st->left = count;
  }
  return 1;
}

int bw_genreadslot (bw_Reader *r, const bw_GenSparse *sp, bw_GenSlots *st,
                    uint64_t *slot) {
  uint64_t start, i;
  switch (st->encoding) {
    case BW_SPMASK:
      for (i = st->prev + 1; i <= sp->n; i++) {
        uint64_t present = bw_readbits(r, 1);
        if (r->status != BW_OK) return -1;
        if (present) {
          *slot = st->prev = i;
          return 1;
        }
      }
      st->prev = sp->n;
      return 0;
    case BW_SPINDEX:
      if (st->left == 0) return 0;
      start = r->pos;
      i = bw_readbits(r, indexbits(sp)) + 1;
      if (r->status != BW_OK) return -1;
      if (i <= st->prev || i > sp->n) {
        bw_genfail(r, BW_ERANGE, start);
        return -1;
      }
      st->left--;
      *slot = st->prev = i;
      return 1;
    default:
      start = r->pos;
      if (sp->ntiers > 0)
        i = st->prev + bw_readtiered(r, 1, sp->n + 1, sp->tiers, sp->ntiers);
      else
        i = bw_readintrelative(r, st->prev);
      if (r->status != BW_OK) return -1;
      if (i == sp->n + 1) return 0;
      if (i > sp->n) {
        bw_genfail(r, BW_ERANGE, start);
        return -1;
      }
      *slot = st->prev = i;
      return 1;
  }
}

/* }========================================================== */
