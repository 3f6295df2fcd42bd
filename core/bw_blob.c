/*
** bw_blob.c - memory-mappable blobs: header, writer, validator (the layout
** they read: bw_bloblayout.c)
** See LICENSE for copyright and terms.
*/

/*
** The layout is computed once, from a compiled schema (bw_bloblayout.c),
** and every other part reads it: the Lua binding writes and reads blobs
** through it, the C generator prints it as structs and as a static
** bw_BlobLayout, and the validator walks it. Nothing else knows an offset.
**
** Validation is one forward pass. The writer claims space depth-first: a
** record's fields in order, and when a field points somewhere, the pointed-to
** block is claimed at the end of the blob and filled (its own pointers
** claiming after it) before the next field. The validator walks the same
** order with a frontier: every target must lie at or past the frontier, and
** claiming it moves the frontier past it. So no two blocks overlap, nothing
** points backwards or into itself, every byte is visited at most once, and
** the work is linear in the blob's size. Nesting is bounded by the schema.
*/

#include <stdio.h>
#include <stdlib.h>

#include "bw_blob.h"
#include "bw_schema.h"

const uint8_t bw_blobctypesize[BW_NCTYPES] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 1};
const char *const bw_blobctypenames[BW_CF32 + 1] = {
  "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
  NULL
};

#define MAXLEVEL  (2 * BW_MAXDEPTH + 8)  /* records and arrays, nested */


/* {===================== scalars ===================== */

int64_t bw_blobgeti (const uint8_t *p, int ctype) {
  uint64_t u = bw_blobloadu(p, bw_blobctypesize[ctype]);
  switch (ctype) {
    case BW_CI8: return (int8_t)(uint8_t)u;
    case BW_CI16: return (int16_t)(uint16_t)u;
    case BW_CI32: return (int32_t)(uint32_t)u;
    default: return (int64_t)u;  /* I64 and U64 as two's complement */
  }
}

double bw_blobgetf (const uint8_t *p, int ctype) {
  if (ctype == BW_CF32) {
    uint32_t u = (uint32_t)bw_blobloadu(p, 4);
    float x;
    memcpy(&x, &u, 4);
    return x;
  }
  else {
    uint64_t u = bw_blobloadu(p, 8);
    double x;
    memcpy(&x, &u, 8);
    return x;
  }
}

void bw_blobseti (uint8_t *p, int ctype, int64_t v) {
  bw_blobstoreu(p, (uint64_t)v, bw_blobctypesize[ctype]);
}

void bw_blobsetf (uint8_t *p, int ctype, double x) {
  if (ctype == BW_CF32) {
    float f = bw_tofloat32(x);
    uint32_t u;
    memcpy(&u, &f, 4);
    bw_blobstoreu(p, u, 4);
  }
  else {
    uint64_t u;
    memcpy(&u, &x, 8);
    bw_blobstoreu(p, u, 8);
  }
}

/* }========================================================== */


/* {===================== header ===================== */

bw_Status bw_blobheader (const void *blob, size_t size, bw_BlobHeader *h) {
  const uint8_t *p = (const uint8_t *)blob;
  memset(h, 0, sizeof(*h));
  if (size < BW_BLOBHEADER) return BW_ETRUNC;
  h->magic = (uint32_t)bw_blobloadu(p, 4);
  h->format = (uint16_t)bw_blobloadu(p + 4, 2);
  h->flags = (uint16_t)bw_blobloadu(p + 6, 2);
  h->fingerprint = bw_blobloadu(p + 8, 8);
  h->version = (uint32_t)bw_blobloadu(p + 16, 4);
  h->root = (uint32_t)bw_blobloadu(p + 20, 4);
  h->size = (uint32_t)bw_blobloadu(p + 24, 4);
  h->reserved = (uint32_t)bw_blobloadu(p + 28, 4);
  if (h->magic != BW_BLOBMAGIC) return BW_ETAG;
  if (h->format != BW_BLOBFORMAT || h->flags != BW_BLOBMAPPABLE
      || h->reserved != 0)
    return BW_ESCHEMA;
  if (h->size > size || h->size < BW_BLOBHEADER || h->size > BW_BLOBMAX)
    return BW_ERANGE;
  return BW_OK;
}

void bw_blobputheader (uint8_t *p, const bw_BlobHeader *h) {
  bw_blobstoreu(p, h->magic, 4);
  bw_blobstoreu(p + 4, h->format, 2);
  bw_blobstoreu(p + 6, h->flags, 2);
  bw_blobstoreu(p + 8, h->fingerprint, 8);
  bw_blobstoreu(p + 16, h->version, 4);
  bw_blobstoreu(p + 20, h->root, 4);
  bw_blobstoreu(p + 24, h->size, 4);
  bw_blobstoreu(p + 28, h->reserved, 4);
}

/* }========================================================== */


/* {===================== validator ===================== */

typedef struct Chk {
  const uint8_t      *b;
  size_t              total;     /* bytes of the blob */
  size_t              frontier;  /* everything before it is claimed */
  const bw_BlobLayout *L;
  unsigned            level;
  bw_Status           code;
  size_t              at;        /* byte where it failed */
  const char         *why;
  unsigned            nframes;   /* path, innermost first, on failure */
  struct { const char *name; int64_t index; } frames[MAXLEVEL + 2];
} Chk;

static int chkfail (Chk *c, bw_Status code, size_t at, const char *why) {
  c->code = code;
  c->at = at;
  c->why = why;
  return 0;
}

static int addframe (Chk *c, const char *name, int64_t index) {
  if (c->nframes < sizeof(c->frames) / sizeof(c->frames[0])) {
    c->frames[c->nframes].name = name;
    c->frames[c->nframes].index = index;
    c->nframes++;
  }
  return 0;
}

/* Follow the relative offset at 'at' to a block of 'count' items of
** 'stride' bytes plus 'extra', aligned to 'align'; claim it. '*target'
** gets its position (0 for a null offset, which claims nothing). */
static int claim (Chk *c, size_t at, uint64_t count, size_t stride,
                  size_t extra, size_t align, size_t *target) {
  int32_t off = (int32_t)(uint32_t)bw_blobloadu(c->b + at, 4);
  size_t t, room;
  *target = 0;
  if (off == 0) return 1;
  if (off < 0) return chkfail(c, BW_ERANGE, at, "offset points backwards");
  t = at + (size_t)off;  /* at < total <= INT32_MAX: no overflow */
  if (t < c->frontier)
    return chkfail(c, BW_ERANGE, at, "offset points into data already used");
  if (t > c->total) return chkfail(c, BW_ETRUNC, at, "offset past the end");
  if (t % align != 0) return chkfail(c, BW_EALIGN, at, "misaligned data");
  room = c->total - t;
  if (extra > room || (stride != 0 && count > (room - extra) / stride))
    return chkfail(c, BW_ETRUNC, at, "data runs past the end");
  c->frontier = t + (size_t)count * stride + extra;
  *target = t;
  return 1;
}

static int checkrecord (Chk *c, uint32_t t, size_t p);
static int checkvalue (Chk *c, const bw_BlobField *f, size_t p);

static inline int checkscalar (Chk *c, const bw_BlobField *f, size_t p) {
  if (f->ctype == BW_CF32 || f->ctype == BW_CF64) {
    double x = bw_blobgetf(c->b + p, f->ctype);
    if (f->dmin <= f->dmax && !(x >= f->dmin && x <= f->dmax))
      return chkfail(c, BW_ERANGE, p, "value out of range");
    return 1;
  }
  if (f->ctype == BW_CU64 || f->ctype == BW_CU32 || f->ctype == BW_CU16
      || f->ctype == BW_CU8 || f->ctype == BW_CBOOL) {
    uint64_t u = bw_blobloadu(c->b + p, bw_blobctypesize[f->ctype]);
    if (u < (uint64_t)f->min || u > (uint64_t)f->max)
      return chkfail(c, BW_ERANGE, p, "value out of range");
  }
  else {
    int64_t v = bw_blobgeti(c->b + p, f->ctype);
    if (v < f->min || v > f->max)
      return chkfail(c, BW_ERANGE, p, "value out of range");
  }
  return 1;
}

/* 'n' elements of 'e' from 'p', 'stride' apart. */
static int checkelems (Chk *c, const bw_BlobField *e, size_t p, uint64_t n,
                       size_t stride) {
  uint64_t i;
  if (!e->check) return 1;
  for (i = 0; i < n; i++, p += stride)
    if (!checkvalue(c, e, p)) return addframe(c, NULL, (int64_t)i);
  return 1;
}

static int checkcount (Chk *c, const bw_BlobField *f, size_t p,
                       uint32_t *n) {
  *n = (uint32_t)bw_blobloadu(c->b + p + 4, 4);
  if (*n < (uint64_t)f->min || *n > (uint64_t)f->max)
    return chkfail(c, BW_ERANGE, p + 4, "count out of range");
  return 1;
}

static int checkvalue (Chk *c, const bw_BlobField *f, size_t p) {
  const bw_BlobLayout *L = c->L;
  size_t t;
  uint32_t n;
  switch (f->form) {
    case BW_BSCALAR: return checkscalar(c, f, p);
    case BW_BFIXBYTES: case BW_BQUAT: return 1;
    case BW_BRECORD: return checkrecord(c, f->ref, p);
    case BW_BPTR: {
      const bw_BlobType *ty = &L->types[f->ref];
      if (!claim(c, p, 1, ty->size, 0, ty->align, &t)) return 0;
      return t == 0 || checkrecord(c, f->ref, t);
    }
    case BW_BINLINE:
      return checkelems(c, &L->fields[f->ref], p, f->count, f->stride);
    case BW_BSTRING:
      if (!checkcount(c, f, p, &n) || !claim(c, p, n, 1, 1, 1, &t)) return 0;
      if (t == 0) return chkfail(c, BW_ERANGE, p, "string without data");
      if (c->b[t + n] != '\0')
        return chkfail(c, BW_EUTF8, t + n, "string not NUL-terminated");
      if (!bw_utf8valid((const char *)c->b + t, n))
        return chkfail(c, BW_EUTF8, t, "string with NUL or malformed UTF-8");
      return 1;
    case BW_BBYTES:
      if (!checkcount(c, f, p, &n) || !claim(c, p, n, 1, 0, 1, &t)) return 0;
      if (t == 0 && n != 0) return chkfail(c, BW_ERANGE, p, "null data");
      return 1;
    case BW_BARRAY: {
      const bw_BlobField *e = &L->fields[f->ref];
      if (!checkcount(c, f, p, &n)
          || !claim(c, p, n, f->stride, 0, e->align, &t))
        return 0;
      if (t == 0) return n == 0 ? 1 : chkfail(c, BW_ERANGE, p, "null data");
      return checkelems(c, e, t, n, f->stride);
    }
    case BW_BSPARSE: {
      const bw_BlobField *e = &L->fields[f->ref];
      uint32_t i;
      int64_t prev = -1;
      size_t align = e->align > 4 ? e->align : 4;
      /* entries of slots 0..max-1, so at most max of them */
      n = (uint32_t)bw_blobloadu(c->b + p + 4, 4);
      if (n > (uint64_t)f->max)
        return chkfail(c, BW_ERANGE, p + 4, "count out of range");
      if (!claim(c, p, n, f->stride, 0, align, &t)) return 0;
      if (t == 0) return n == 0 ? 1 : chkfail(c, BW_ERANGE, p, "null data");
      for (i = 0; i < n; i++, t += f->stride) {
        int64_t ix = (int64_t)bw_blobloadu(c->b + t, 4);
        if (ix <= prev || ix >= f->max) {
          chkfail(c, BW_ETAG, t, "sparse index out of order or range");
          return addframe(c, NULL, ix);  /* the slot, as for its value */
        }
        prev = ix;
        if (!checkvalue(c, e, t + f->voff)) return addframe(c, NULL, ix);
      }
      return 1;
    }
    default: return chkfail(c, BW_EARG, p, "bad layout");
  }
}

static int checkrecord (Chk *c, uint32_t t, size_t p) {
  const bw_BlobType *ty = &c->L->types[t];
  const bw_BlobField *f = c->L->fields + ty->first;
  const bw_BlobField *end = f + ty->count;
  if (++c->level > MAXLEVEL)
    return chkfail(c, BW_EDEPTH, p, "nesting too deep");
  for (; f < end; f++) {
    if (f->presence != BW_BLOBNONE) {  /* even where the value needs none */
      uint8_t has = c->b[p + f->presence];
      if (has > 1) {
        chkfail(c, BW_ERANGE, p + f->presence, "presence byte not 0 or 1");
        return addframe(c, f->name, -1);
      }
      if (!has) continue;
    }
    if (!f->check) continue;
    if (f->form == BW_BSCALAR ? !checkscalar(c, f, p + f->offset)
                              : !checkvalue(c, f, p + f->offset))
      return addframe(c, f->name, -1);
  }
  c->level--;
  return 1;
}

/* The failure's path, outermost first: "commands[2].text". */
static void formatpath (const Chk *c, char *buf, size_t size) {
  size_t len = 0;
  unsigned i = c->nframes;
  buf[0] = '\0';
  while (i-- > 0 && len + 1 < size) {
    int n;
    if (c->frames[i].name != NULL)
      n = snprintf(buf + len, size - len, "%s%s", len ? "." : "",
                   c->frames[i].name);
    else
      n = snprintf(buf + len, size - len, "[%lld]",
                   (long long)c->frames[i].index + 1);
    if (n < 0) break;
    len += (size_t)n;
    if (len >= size) len = size - 1;
  }
}

bw_Status bw_blobcheck (const void *blob, size_t size, const bw_BlobLayout *L,
                        uint32_t root, bw_Error *e, const char **why) {
  bw_BlobHeader h;
  const bw_BlobType *ty;
  Chk c;
  bw_Status st;
  static const char *const hdrwhy[] = {
    NULL, "truncated header", "blob size out of range", NULL, NULL, NULL,
    NULL, "not a blob (bad magic)", NULL, NULL,
    "unknown blob format or flags"
  };
  memset(e, 0, sizeof(*e));
  if (why != NULL) *why = NULL;
  st = bw_blobheader(blob, size, &h);
  if (st != BW_OK) {  /* the byte of the header field at fault */
    e->code = st;
    if (why != NULL) *why = hdrwhy[st];
    if (st == BW_ERANGE) e->bitpos = 24 * 8;
    else if (st == BW_ESCHEMA) {
      e->bitpos = 8 * (h.format != BW_BLOBFORMAT ? 4u
                       : h.flags != BW_BLOBMAPPABLE ? 6u : 28u);
      if (why != NULL && e->bitpos == 28 * 8) *why = "reserved word not 0";
    }
    return st;
  }
  if (root >= L->ntypes) {
    e->code = BW_EARG;
    if (why != NULL) *why = "no such type";
    return BW_EARG;
  }
  ty = &L->types[root];
  e->bitpos = 8 * 8;
  /* a version laid out otherwise would make the header name another
  ** layout than its fingerprint's: one reason for both */
  if (h.fingerprint != ty->fingerprint || h.version < ty->vmin
      || h.version > ty->vmax) {
    e->code = BW_ESCHEMA;
    if (why != NULL)
      *why = "fingerprint does not match the description at this version";
    return BW_ESCHEMA;
  }
  if ((size_t)h.size - BW_BLOBHEADER < ty->size) {
    e->code = BW_ETRUNC;
    e->bitpos = 24 * 8;
    if (why != NULL) *why = "root record past the end";
    return BW_ETRUNC;
  }
  c.b = (const uint8_t *)blob;
  c.total = h.size;
  c.frontier = BW_BLOBHEADER + (size_t)ty->size;
  c.L = L;
  c.level = 0;
  c.code = BW_OK;
  c.nframes = 0;
  c.why = NULL;
  c.at = 0;
  if (checkrecord(&c, root, BW_BLOBHEADER)) return BW_OK;
  e->code = c.code;
  e->bitpos = (uint64_t)c.at * 8;
  formatpath(&c, e->path, sizeof(e->path));
  if (why != NULL) *why = c.why;
  return c.code;
}

/* }========================================================== */


/* {===================== writer ===================== */

static int wreserve (bw_BlobWriter *w, size_t need) {
  size_t ncap = w->cap ? w->cap : 256;
  uint8_t *nb;
  if (need <= w->cap) return 1;
  while (ncap < need) ncap = ncap > w->max / 2 ? w->max : ncap * 2;
  nb = (uint8_t *)w->alloc(w->ud, w->buf, w->cap, ncap);
  if (nb == NULL) {
    w->status = BW_ENOMEM;
    return 0;
  }
  w->buf = nb;
  w->cap = ncap;
  return 1;
}

void bw_blobwinit (bw_BlobWriter *w, bw_Alloc alloc, void *ud, size_t max) {
  w->buf = NULL;
  w->len = w->cap = 0;
  w->max = max < BW_BLOBMAX ? max : BW_BLOBMAX;
  w->alloc = alloc;
  w->ud = ud;
  w->status = BW_OK;
  if (w->max < BW_BLOBHEADER) w->status = BW_ENOMEM;
  else if (wreserve(w, BW_BLOBHEADER)) {
    memset(w->buf, 0, BW_BLOBHEADER);
    w->len = BW_BLOBHEADER;
  }
}

void bw_blobwfree (bw_BlobWriter *w) {
  if (w->buf != NULL) w->alloc(w->ud, w->buf, w->cap, 0);
  w->buf = NULL;
  w->len = w->cap = 0;
}

size_t bw_blobwalloc (bw_BlobWriter *w, size_t n, size_t align) {
  size_t pos;
  if (w->status != BW_OK) return 0;
  if (align == 0 || align > 8 || (align & (align - 1)) != 0) {
    w->status = BW_EARG;
    return 0;
  }
  pos = (w->len + align - 1) & ~(align - 1);
  if (pos > w->max || n > w->max - pos) {
    w->status = BW_ENOMEM;
    return 0;
  }
  if (!wreserve(w, pos + n)) return 0;
  memset(w->buf + w->len, 0, pos + n - w->len);
  w->len = pos + n;
  return pos;
}

size_t bw_blobwallocn (bw_BlobWriter *w, size_t count, size_t size,
                       size_t align) {
  if (w->status == BW_OK && size != 0 && count > w->max / size) {
    w->status = BW_ENOMEM;
    return 0;
  }
  return bw_blobwalloc(w, count * size, align);
}

void bw_blobwsetrel (bw_BlobWriter *w, size_t at, size_t target,
                     int64_t count) {
  uint32_t off = target == 0 ? 0 : (uint32_t)(target - at);
  if (w->status != BW_OK) return;
  /* a place claimed for it, and a target in the blob after it (offsets
  ** run forward) */
  if (at < BW_BLOBHEADER || at > w->len || w->len - at < (count >= 0 ? 8u : 4u)
      || count > (int64_t)UINT32_MAX
      || (target != 0 && (target <= at || target > w->len))) {
    w->status = BW_EARG;
    return;
  }
  bw_blobstoreu(w->buf + at, off, 4);
  if (count >= 0) bw_blobstoreu(w->buf + at + 4, (uint64_t)count, 4);
}

void bw_blobwfinish (bw_BlobWriter *w, const bw_BlobLayout *L,
                     uint32_t root) {
  bw_BlobHeader h;
  bw_blobwalloc(w, 0, 8);  /* whole words, so blobs concatenate aligned */
  if (w->status != BW_OK) return;
  if (root >= L->ntypes) {
    w->status = BW_EARG;
    return;
  }
  h.magic = BW_BLOBMAGIC;
  h.format = BW_BLOBFORMAT;
  h.flags = BW_BLOBMAPPABLE;
  h.fingerprint = L->types[root].fingerprint;
  h.version = L->version;
  h.root = root;
  h.size = (uint32_t)w->len;
  h.reserved = 0;
  bw_blobputheader(w->buf, &h);
}

/* }========================================================== */
