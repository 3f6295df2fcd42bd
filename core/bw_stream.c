/*
** bw_stream.c - bit-level writer/reader primitives
** See LICENSE for copyright and terms.
*/

/*
** The writer packs bits LSB-first into a 64-bit scratch word and stores whole
** words; the reader loads the (at most nine) bytes under the read position,
** and only bytes that exist. Every primitive is checked both ways: a writer
** refuses a value that does not fit its field instead of corrupting the next
** one, and a reader treats every bit as hostile. Errors are sticky, so a
** caller may run a sequence of reads and check the status once.
*/

#include <math.h>

#include "bw.h"

/* buffers never pass this, so byte counts times 8 fit a uint64_t */
#define MAXCAP  ((size_t)1 << 48)


/* {===================== errors ===================== */

static const char *const messages[BW_NSTATUS] = {
  "ok", "truncated input", "value out of range", "non-zero padding bits",
  "serialization check failed", "CRC32 mismatch",
  "string with NUL or malformed UTF-8",
  "bad tag", "nesting too deep", "out of memory", "schema mismatch",
  "bad argument", "unknown baseline"
};

static const char *const names[BW_NSTATUS] = {
  "ok", "truncated", "range", "align", "check", "crc", "utf8", "tag",
  "depth", "memory", "schema", "arg", "baseline"
};

const char *bw_strerror (bw_Status code) {
  return (unsigned)code < BW_NSTATUS ? messages[code] : "unknown error";
}

const char *bw_codename (bw_Status code) {
  return (unsigned)code < BW_NSTATUS ? names[code] : "unknown";
}

/* }========================================================== */


/* {===================== writer ===================== */

void bw_writerinit (bw_Writer *w, void *buf, size_t cap) {
  memset(w, 0, sizeof(*w));
  w->buf = (uint8_t *)buf;
  if (buf == NULL && cap != 0) {  /* no bytes behind the count, as a reader */
    w->status = BW_EARG;
    cap = 0;
  }
  w->cap = cap < MAXCAP ? cap : MAXCAP;
  w->maxbytes = w->cap;
}

void bw_writerinitgrow (bw_Writer *w, bw_Alloc alloc, void *ud,
                        size_t maxbytes) {
  memset(w, 0, sizeof(*w));
  w->alloc = alloc;
  w->ud = ud;
  w->maxbytes = maxbytes < MAXCAP ? maxbytes : MAXCAP;
}

void bw_writerfree (bw_Writer *w) {
  if (w->alloc == NULL) return;  /* the caller's buffer */
  if (w->buf != NULL) w->alloc(w->ud, w->buf, w->cap, 0);
  w->buf = NULL;
  w->cap = 0;
  bw_writerreset(w);  /* nothing written lives anywhere now */
}

void bw_writerreset (bw_Writer *w) {
  w->wordpos = 0;
  w->scratch = 0;
  w->scratchbits = 0;
  w->status = BW_OK;
  w->errpos = 0;
}

bw_Status bw_writerreserve (bw_Writer *w, uint64_t n) {
  uint64_t total;
  size_t need, newcap;
  void *p;
  if (w->status != BW_OK) return w->status;
  if (n > (uint64_t)MAXCAP * 8) return bw_writerfail(w, BW_ETRUNC);
  total = bw_bitswritten(w) + n;  /* both <= MAXCAP * 8: cannot wrap */
  if (total <= (uint64_t)w->cap * 8) return BW_OK;
  if (w->alloc == NULL || (total + 7) / 8 > w->maxbytes)
    return bw_writerfail(w, BW_ETRUNC);
  /* A flush stores the word that the bits written just filled, so it is
  ** inside 'cap' whenever the bits are: no slack is needed. 'cap' never
  ** passes 'maxbytes', because bw_writebits checks only against 'cap'. */
  need = (size_t)((total + 7) / 8);
  newcap = w->cap < 64 ? 64 : w->cap;
  while (newcap < need) newcap *= 2;
  if (newcap > w->maxbytes) newcap = w->maxbytes;
  p = w->alloc(w->ud, w->buf, w->cap, newcap);
  if (p == NULL) return bw_writerfail(w, BW_ENOMEM);
  w->buf = (uint8_t *)p;
  w->cap = newcap;
  return BW_OK;
}

const uint8_t *bw_writerdata (bw_Writer *w, size_t *len) {
  size_t tail = (w->scratchbits + 7) / 8, i;
  for (i = 0; i < tail; i++)  /* room: bits written never pass cap * 8 */
    w->buf[w->wordpos + i] = (uint8_t)(w->scratch >> (8 * i));
  *len = w->wordpos + tail;
  return w->buf != NULL ? w->buf : (const uint8_t *)"";  /* never NULL */
}

/* }========================================================== */


/* {===================== reader ===================== */

void bw_readerinit (bw_Reader *r, const void *data, size_t n) {
  memset(r, 0, sizeof(*r));
  /* no NULL base: bw_readbytes(r, 0) must return a real pointer */
  r->data = data != NULL ? (const uint8_t *)data : (const uint8_t *)"";
  if (data == NULL && n != 0) {  /* no bytes behind the count */
    r->status = BW_EARG;
    n = 0;
  }
  else if (n > MAXCAP) {  /* cannot count its bits: refuse, do not guess */
    r->status = BW_ENOMEM;
    n = 0;
  }
  r->nbytes = n;
  r->nbits = (uint64_t)n * 8;
  r->tailat = n > BW_READTAIL ? n - BW_READTAIL : 0;
  if (n > 0) memcpy(r->tail, r->data + r->tailat, n - r->tailat);
}

/* }========================================================== */


/* {===================== primitives ===================== */

unsigned bw_bitsrequired (int64_t min, int64_t max) {
  uint64_t d = (uint64_t)max - (uint64_t)min;
  unsigned n = 0;
  while (d != 0) { n++; d >>= 1; }
  return n;
}

/* int64 from its two's complement pattern, without implementation-defined
** conversion */
static int64_t toint64 (uint64_t u) {
  return u <= (uint64_t)INT64_MAX ? (int64_t)u
                                  : -(int64_t)(~u) - 1;
}

bw_Status bw_writebool (bw_Writer *w, int b) {
  return bw_writebits(w, b ? 1 : 0, 1);
}

int bw_readbool (bw_Reader *r) {
  return (int)bw_readbits(r, 1);
}

bw_Status bw_writeint (bw_Writer *w, int64_t v, int64_t min, int64_t max) {
  if (min > max || v < min || v > max) return bw_writerfail(w, BW_ERANGE);
  return bw_writebits(w, (uint64_t)v - (uint64_t)min,
                      bw_bitsrequired(min, max));
}

int64_t bw_readint (bw_Reader *r, int64_t min, int64_t max) {
  uint64_t u;
  if (min > max) return bw_readerfail(r, BW_EARG);
  u = bw_readbits(r, bw_bitsrequired(min, max));
  if (r->status != BW_OK) return 0;  /* not 'min': failed reads give 0 */
  if (u > (uint64_t)max - (uint64_t)min) {
    r->pos -= bw_bitsrequired(min, max);  /* report the field's start */
    return bw_readerfail(r, BW_ERANGE);
  }
  return toint64((uint64_t)min + u);
}

bw_Status bw_writefloat (bw_Writer *w, float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return bw_writebits(w, u, 32);
}

float bw_readfloat (bw_Reader *r) {
  uint32_t u = (uint32_t)bw_readbits(r, 32);
  float x;
  memcpy(&x, &u, 4);
  return x;
}

bw_Status bw_writedouble (bw_Writer *w, double x) {
  uint64_t u;
  memcpy(&u, &x, 8);
  return bw_writebits(w, u, 64);
}

double bw_readdouble (bw_Reader *r) {
  uint64_t u = bw_readbits(r, 64);
  double x;
  memcpy(&x, &u, 8);
  return x;
}

bw_Status bw_writealign (bw_Writer *w) {
  return bw_writebits(w, 0, (8 - (unsigned)(bw_bitswritten(w) & 7)) & 7);
}

void bw_readalign (bw_Reader *r) {
  unsigned pad = (8 - (unsigned)(r->pos & 7)) & 7;
  uint64_t start = r->pos;
  if (bw_readbits(r, pad) != 0) {
    r->pos = start;
    bw_readerfail(r, BW_EALIGN);
  }
}

bw_Status bw_writebytes (bw_Writer *w, const void *p, size_t n) {
  const uint8_t *s = (const uint8_t *)p;
  size_t words;
  if (bw_writealign(w) != BW_OK) return w->status;
  if (n > MAXCAP) return bw_writerfail(w, BW_ETRUNC);
  if ((uint64_t)n * 8 > (uint64_t)w->cap * 8 - bw_bitswritten(w)
      && bw_writerreserve(w, (uint64_t)n * 8) != BW_OK)
    return w->status;
  while (n > 0 && w->scratchbits != 0) {  /* head: up to a word boundary */
    bw_writebits(w, *s++, 8);
    n--;
  }
  words = n / 8;  /* middle: whole words straight into the buffer */
  if (words > 0) {
    memcpy(w->buf + w->wordpos, s, words * 8);
    w->wordpos += words * 8;
    s += words * 8;
    n -= words * 8;
  }
  while (n > 0) {
    bw_writebits(w, *s++, 8);
    n--;
  }
  return w->status;
}

const uint8_t *bw_readbytes (bw_Reader *r, size_t n) {
  const uint8_t *p;
  bw_readalign(r);
  if (r->status != BW_OK) return NULL;
  if (n > (r->nbits - r->pos) / 8) {
    bw_readerfail(r, BW_ETRUNC);
    return NULL;
  }
  p = r->data + (size_t)(r->pos / 8);
  r->pos += (uint64_t)n * 8;
  return p;
}

int bw_utf8valid (const char *str, size_t n) {
  const uint8_t *s = (const uint8_t *)str;
  size_t i = 0;
  while (i < n) {
    uint8_t c = s[i];
    size_t len, k;
    uint32_t cp;
    if (c < 0x80) {
      if (c == 0) return 0;
      i++;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
    else return 0;  /* continuation byte, overlong lead, or > U+10FFFF */
    if (n - i < len) return 0;
    for (k = 1; k < len; k++) {
      if ((s[i + k] & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)))
        || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
      return 0;  /* overlong, surrogate, or out of Unicode */
    i += len;
  }
  return 1;
}

bw_Status bw_writestring (bw_Writer *w, const char *s, size_t n,
                          size_t maxlen) {
  if (w->status != BW_OK) return w->status;
  if (maxlen > (size_t)INT64_MAX || n > maxlen)
    return bw_writerfail(w, BW_ERANGE);
  if (!bw_utf8valid(s, n)) return bw_writerfail(w, BW_EUTF8);
  bw_writeint(w, (int64_t)n, 0, (int64_t)maxlen);
  return bw_writebytes(w, s, n);
}

const char *bw_readstring (bw_Reader *r, size_t maxlen, size_t *n) {
  int64_t len;
  const uint8_t *p;
  uint64_t start;
  *n = 0;
  if (maxlen > (size_t)INT64_MAX) {
    bw_readerfail(r, BW_EARG);
    return NULL;
  }
  len = bw_readint(r, 0, (int64_t)maxlen);
  start = r->pos;
  p = bw_readbytes(r, (size_t)len);
  if (p == NULL) return NULL;
  if (!bw_utf8valid((const char *)p, (size_t)len)) {
    r->pos = start;
    bw_readerfail(r, BW_EUTF8);
    return NULL;
  }
  *n = (size_t)len;
  return (const char *)p;
}

/* tiers of serialize.h's int_relative: difference range and payload bits */
static const struct { uint32_t lo, hi; unsigned bits; } tiers[] = {
  {2, 6, 3}, {7, 23, 5}, {24, 280, 9}, {281, 4377, 13}, {4378, 69914, 17}
};
#define NTIERS (sizeof(tiers) / sizeof(tiers[0]))

unsigned bw_intrelativebits (uint64_t prev, uint64_t cur) {
  uint64_t d = cur - prev;
  size_t i;
  if (d == 1) return 1;
  for (i = 0; i < NTIERS; i++)  /* i + 1 zero flags, a one, the payload */
    if (d <= tiers[i].hi) return (unsigned)i + 2 + tiers[i].bits;
  return (unsigned)NTIERS + 1 + 32;  /* all flags zero, then cur */
}

/* The flags and payload of difference 'd'; past the tiers, 'escape' in
** 32 bits (serialize.h writes the current value itself there). */
static bw_Status writerelative (bw_Writer *w, uint64_t d, uint32_t escape) {
  size_t i;
  if (d == 1) return bw_writebits(w, 1, 1);
  bw_writebits(w, 0, 1);
  for (i = 0; i < NTIERS; i++) {
    if (d <= tiers[i].hi) {
      bw_writebits(w, 1, 1);
      return bw_writebits(w, d - tiers[i].lo, tiers[i].bits);
    }
    bw_writebits(w, 0, 1);
  }
  return bw_writebits(w, escape, 32);
}

bw_Status bw_writeintrelative (bw_Writer *w, uint64_t prev, uint64_t cur) {
  if (prev >= cur || cur > UINT32_MAX) return bw_writerfail(w, BW_ERANGE);
  return writerelative(w, cur - prev, (uint32_t)cur);
}

bw_Status bw_writeint32relative (bw_Writer *w, int32_t prev, int32_t cur) {
  if (prev >= cur) return bw_writerfail(w, BW_ERANGE);
  return writerelative(w, (uint64_t)((int64_t)cur - prev), (uint32_t)cur);
}

/* Read the flags and payload: 1 and the difference in '*v', or 0 and the
** escaped 32-bit value in '*v'. */
static int readrelative (bw_Reader *r, uint64_t start, uint64_t *v) {
  size_t i;
  *v = 1;
  if (bw_readbits(r, 1)) return 1;
  for (i = 0; i < NTIERS; i++)
    if (bw_readbits(r, 1)) break;
  if (i == NTIERS) {
    *v = bw_readbits(r, 32);
    return 0;
  }
  /* serialize.h reads the tier as int(lo, hi): its range is checked */
  *v = bw_readbits(r, tiers[i].bits);
  if (*v > tiers[i].hi - tiers[i].lo && r->status == BW_OK) {
    r->pos = start;
    bw_readerfail(r, BW_ERANGE);
  }
  *v += tiers[i].lo;
  return 1;
}

uint64_t bw_readintrelative (bw_Reader *r, uint64_t prev) {
  uint64_t start = r->pos, cur;
  if (r->status != BW_OK) return 0;
  if (prev > UINT32_MAX) return bw_readerfail(r, BW_EARG);
  cur = readrelative(r, start, &cur) ? prev + cur : cur;
  if (r->status != BW_OK) return 0;
  if (cur <= prev || cur > UINT32_MAX) {
    r->pos = start;
    return bw_readerfail(r, BW_ERANGE);
  }
  return cur;
}

int32_t bw_readint32relative (bw_Reader *r, int32_t prev) {
  uint64_t start = r->pos, v;
  int64_t cur;
  if (r->status != BW_OK) return 0;
  cur = readrelative(r, start, &v) ? (int64_t)prev + (int64_t)v
                                   : (int64_t)(int32_t)(uint32_t)v;
  if (r->status != BW_OK) return 0;
  if (cur <= prev || cur > INT32_MAX) {
    r->pos = start;
    return (int32_t)bw_readerfail(r, BW_ERANGE);
  }
  return (int32_t)cur;
}

bw_Status bw_writecheck (bw_Writer *w, uint32_t magic) {
  bw_writealign(w);
  return bw_writebits(w, magic, 32);
}

void bw_readcheck (bw_Reader *r, uint32_t magic) {
  uint64_t start;
  bw_readalign(r);
  start = r->pos;
  if ((uint32_t)bw_readbits(r, 32) != magic && r->status == BW_OK) {
    r->pos = start;
    bw_readerfail(r, BW_ECHECK);
  }
}

/* }========================================================== */


/* {===================== compressed float ===================== */
/* Every step is a float32 operation, as serialize.h does it; products go
** through bw_nofusef so no step is fused, whatever the build flags. */

bw_Status bw_qfloatinit (bw_QFloat *q, double min, double max, double res) {
  float fmin = bw_tofloat32(min), fmax = bw_tofloat32(max);
  float fres = bw_tofloat32(res);
  float delta, values;
  if (!(isfinite(min) && isfinite(max) && isfinite(res)))
    return BW_EARG;
  if (!(fmin < fmax) || !(fres > 0.0f) || !isfinite(fmax - fmin))
    return BW_EARG;
  delta = fmax - fmin;
  values = delta / fres;
  if (!(values >= 1.0f)) values = 1.0f;
  if (values > 4294967040.0f) values = 4294967040.0f;
  q->min = fmin;
  q->delta = delta;
  q->miv = (uint32_t)ceilf(values);
  q->nbits = bw_bitsrequired(0, (int64_t)q->miv);
  return BW_OK;
}

bw_Status bw_writecompressedfloat (bw_Writer *w, double x, const bw_QFloat *q) {
  return bw_writebits(w, bw_qfloatencode(q, x), q->nbits);
}

float bw_readcompressedfloat (bw_Reader *r, const bw_QFloat *q) {
  uint64_t i = bw_readbits(r, q->nbits);
  if (i > q->miv) {
    r->pos -= q->nbits;
    bw_readerfail(r, BW_ERANGE);
    return 0.0f;
  }
  return r->status == BW_OK ? bw_qfloatdecode(q, (uint32_t)i) : 0.0f;
}

/* }========================================================== */
