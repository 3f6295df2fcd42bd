/*
** bw_blob.c - memory-mappable blobs: layout, header, writer, validator
** See LICENSE for copyright and terms.
*/

/*
** The layout is computed here, once, from a compiled schema, and every other
** part reads it: the Lua binding writes and reads blobs through it, the C
** generator prints it as structs and as a static bw_BlobLayout, and the
** validator walks it. Nothing else knows an offset.
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
#define RELSIZE   8                      /* int32 offset + uint32 count */


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
  if (h.fingerprint != ty->fingerprint) {
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


/* {===================== layout ===================== */

typedef struct Lay {
  const bw_Schema *S;
  bw_BlobField *F;
  bw_BlobType *T;
  uint32_t *map;
  uint8_t *state;       /* per type: 0 new, 1 in progress, 2 done */
  char *msg;
  size_t msgsize;
} Lay;

static size_t align8 (size_t n) { return (n + 7) & ~(size_t)7; }

size_t bw_bloblayoutsize (const bw_Schema *S) {
  return align8((size_t)S->nfields * sizeof(bw_BlobField))
       + align8((size_t)S->ntypes * sizeof(bw_BlobType))
       + align8((size_t)S->nfields * sizeof(uint32_t))
       + align8(S->ntypes);
}

static int intctype (int64_t min, int64_t max) {
  if (min >= 0) {
    if (max <= 0xFF) return BW_CU8;
    if (max <= 0xFFFF) return BW_CU16;
    if (max <= (int64_t)0xFFFFFFFF) return BW_CU32;
    return BW_CU64;
  }
  if (min >= INT8_MIN && max <= INT8_MAX) return BW_CI8;
  if (min >= INT16_MIN && max <= INT16_MAX) return BW_CI16;
  if (min >= INT32_MIN && max <= INT32_MAX) return BW_CI32;
  return BW_CI64;
}

static uint32_t roundup (uint64_t n, uint32_t align) {
  return (uint32_t)((n + align - 1) & ~(uint64_t)(align - 1));
}

static int laytype (Lay *z, uint32_t t);

/* Must the validator look at a value of 'f'? Not at floats, ints whose C
** type holds exactly their range, or records and fixed arrays of those. */
static int needscheck (const Lay *z, const bw_BlobField *f) {
  /* no bytes, nothing to look at: an array of such elements (up to 65536
  ** per 8-byte relarray) must not loop over them */
  if (f->size == 0) return 0;
  switch (f->form) {
    case BW_BFIXBYTES: case BW_BQUAT: return 0;
    case BW_BINLINE: return z->F[f->ref].check;
    case BW_BRECORD: {
      const bw_BlobType *ty = &z->T[f->ref];
      uint32_t i;
      for (i = ty->first; i < ty->first + ty->count; i++)
        if (z->F[i].check || z->F[i].presence != BW_BLOBNONE) return 1;
      return 0;
    }
    case BW_BSCALAR: break;
    default: return 1;  /* offsets */
  }
  switch (f->ctype) {
    case BW_CF32: case BW_CF64: return f->dmin <= f->dmax;
    case BW_CU8: return !(f->min == 0 && f->max == 0xFF);
    case BW_CU16: return !(f->min == 0 && f->max == 0xFFFF);
    case BW_CU32: return !(f->min == 0 && f->max == 0xFFFFFFFF);
    case BW_CU64: return !(f->min == 0 && f->max == -1);
    case BW_CI8: return !(f->min == INT8_MIN && f->max == INT8_MAX);
    case BW_CI16: return !(f->min == INT16_MIN && f->max == INT16_MAX);
    case BW_CI32: return !(f->min == INT32_MIN && f->max == INT32_MAX);
    case BW_CI64: return !(f->min == INT64_MIN && f->max == INT64_MAX);
    default: return 1;  /* bool */
  }
}

static int toobig (Lay *z, const bw_BlobField *f) {
  if (z->msgsize > 0)
    snprintf(z->msg, z->msgsize, "%s: too large for a blob",
             f->name ? f->name : "element");
  return 0;
}

/* Form, ctype, size and alignment of layout field 'lf'. */
static int layfield (Lay *z, uint32_t lf) {
  bw_BlobField *f = &z->F[lf];
  const bw_Field *sf = &z->S->fields[f->sfield];
  uint64_t size = 0;
  f->form = BW_BSCALAR;
  f->min = sf->min;
  f->max = sf->max;
  f->dmin = 1;  /* no float range */
  f->dmax = 0;
  f->align = 0;
  switch (sf->kind) {
    case BW_KINT: case BW_KTIERED: case BW_KENUM:
      f->ctype = (uint8_t)(sf->ctype ? sf->ctype - 1
                                     : intctype(sf->min, sf->max));
      break;
    case BW_KUINT:
      f->ctype = sf->ctype ? (uint8_t)(sf->ctype - 1)
               : sf->nbits <= 8 ? BW_CU8 : sf->nbits <= 16 ? BW_CU16
               : sf->nbits <= 32 ? BW_CU32 : BW_CU64;
      f->min = 0;
      f->max = sf->nbits >= 64 ? -1
             : (int64_t)((UINT64_C(1) << sf->nbits) - 1);
      break;
    case BW_KBOOL: f->ctype = BW_CBOOL; f->min = 0; f->max = 1; break;
    case BW_KFLOAT:  /* the range as stored: rounding keeps order */
      f->ctype = BW_CF32;
      f->dmin = bw_tofloat32(sf->dmin);
      f->dmax = bw_tofloat32(sf->dmax);
      break;
    case BW_KFLOAT32: case BW_KANGLE: f->ctype = BW_CF32; break;
    case BW_KFLOAT64: f->ctype = BW_CF64; break;
    case BW_KQUAT: f->form = BW_BQUAT; size = 16; f->align = 4; break;
    case BW_KSTRING: f->form = BW_BSTRING; f->min = 0; break;
    case BW_KBYTES:
      if (sf->fixed) {
        f->form = BW_BFIXBYTES;
        f->count = (uint32_t)(sf->max > UINT32_MAX ? UINT32_MAX : sf->max);
        size = (uint64_t)sf->max;
        f->align = 1;
      }
      else f->form = BW_BBYTES;
      break;
    case BW_KARRAY: case BW_KSPARSE: {
      bw_BlobField *e;
      f->ref = z->map[sf->ref];
      if (!layfield(z, f->ref)) return 0;
      f = &z->F[lf];
      e = &z->F[f->ref];
      if (sf->kind == BW_KSPARSE) {
        uint32_t a = e->align > 4 ? e->align : 4;
        f->form = BW_BSPARSE;
        f->voff = roundup(4, e->align);
        f->stride = roundup((uint64_t)f->voff + e->size, a);
        f->min = 0;
      }
      else if (sf->fixed) {
        f->form = BW_BINLINE;
        f->stride = e->size;
        f->count = (uint32_t)(sf->max > UINT32_MAX ? UINT32_MAX : sf->max);
        size = (uint64_t)sf->max > BW_BLOBMAX / (e->size ? e->size : 1)
             ? BW_BLOBMAX : (uint64_t)sf->max * e->size;
        f->align = e->align;
      }
      else {
        f->form = BW_BARRAY;
        f->stride = e->size;
      }
      break;
    }
    case BW_KSTRUCT:
      if (!laytype(z, sf->ref)) return 0;
      f->ref = sf->ref;
      if (sf->optional) f->form = BW_BPTR, size = 4, f->align = 4;
      else {
        f->form = BW_BRECORD;
        size = z->T[sf->ref].size;
        f->align = z->T[sf->ref].align;
      }
      break;
    default:
      return 0;  /* align and check are never laid out */
  }
  if (f->form == BW_BSCALAR) {
    size = bw_blobctypesize[f->ctype];
    f->align = (uint32_t)size;
  }
  else if (f->align == 0) {  /* a relarray */
    size = RELSIZE;
    f->align = 4;
  }
  if (size > BW_BLOBMAX / 2) return toobig(z, f);
  /* no bytes (count 0), no alignment: C declares no member for it, so it
  ** must move nothing after it, nor the record's size */
  if (size == 0) f->align = 1;
  f->size = (uint32_t)size;
  f->check = (uint8_t)needscheck(z, f);
  return 1;
}

/* FNV-1a, as the schema fingerprint. */
static uint64_t fnv (uint64_t h, const void *p, size_t n) {
  const uint8_t *s = (const uint8_t *)p;
  size_t i;
  for (i = 0; i < n; i++) {
    h ^= s[i];
    h *= UINT64_C(0x100000001b3);
  }
  return h;
}

static uint64_t fnvu (uint64_t h, uint64_t v) {
  uint8_t b[8];
  bw_blobstoreu(b, v, 8);
  return fnv(h, b, 8);
}

static uint64_t hashfield (const Lay *z, const bw_BlobField *f, uint64_t h) {
  const bw_Field *sf = &z->S->fields[f->sfield];
  h = fnv(h, f->name ? f->name : "", f->name ? strlen(f->name) + 1 : 1);
  h = fnvu(h, (uint64_t)f->form | (uint64_t)f->ctype << 8);
  h = fnvu(h, (uint64_t)f->offset | (uint64_t)f->presence << 32);
  h = fnvu(h, (uint64_t)f->size | (uint64_t)f->align << 32);
  h = fnvu(h, (uint64_t)f->stride | (uint64_t)f->voff << 32);
  h = fnvu(h, f->count);
  h = fnvu(h, (uint64_t)f->min);
  h = fnvu(h, (uint64_t)f->max);
  if (f->dmin <= f->dmax) {
    uint64_t u;
    memcpy(&u, &f->dmin, 8);
    h = fnvu(h, u);
    memcpy(&u, &f->dmax, 8);
    h = fnvu(h, u);
  }
  if (sf->kind == BW_KENUM) {  /* unblob gives names: they matter */
    int64_t i;
    for (i = 0; i <= sf->max; i++) {
      uint32_t nm = sf->ref + (uint32_t)i;
      h = fnv(h, z->S->names[nm], z->S->namelens[nm] + 1);
    }
  }
  switch (f->form) {
    case BW_BRECORD: case BW_BPTR: h = fnvu(h, z->T[f->ref].fingerprint); break;
    case BW_BARRAY: case BW_BSPARSE: case BW_BINLINE:
      h = hashfield(z, &z->F[f->ref], h);
      break;
    default: break;
  }
  return h;
}

static int laytype (Lay *z, uint32_t t) {
  bw_BlobType *ty = &z->T[t];
  uint64_t off = 0, h = UINT64_C(0xcbf29ce484222325);
  uint32_t align = 1, i;
  if (z->state[t] == 2) return 1;
  if (z->state[t] == 1) return 0;  /* sealed schemas have no cycles */
  z->state[t] = 1;
  for (i = ty->first; i < ty->first + ty->count; i++) {
    bw_BlobField *f;
    if (!layfield(z, i)) return 0;
    f = &z->F[i];
    f->presence = BW_BLOBNONE;
    if (z->S->fields[f->sfield].optional && f->form != BW_BPTR)
      f->presence = (uint32_t)off++;
    off = roundup(off, f->align);
    f->offset = (uint32_t)off;
    off += f->size;
    if (f->align > align) align = f->align;
    if (off > BW_BLOBMAX / 2) return toobig(z, f);
  }
  if (off == 0) off = 1;  /* C has no empty structs */
  ty->size = roundup(off, align);
  ty->align = align;
  h = fnv(h, ty->name, strlen(ty->name) + 1);
  h = fnvu(h, (uint64_t)ty->size | (uint64_t)ty->count << 32);
  for (i = ty->first; i < ty->first + ty->count; i++)
    h = hashfield(z, &z->F[i], h);
  ty->fingerprint = h;
  z->state[t] = 2;
  return 1;
}

bw_Status bw_bloblayout (const bw_Schema *S, uint32_t version, void *mem,
                         bw_BlobLayout *L, char *msg, size_t msgsize) {
  Lay z;
  uint8_t *m = (uint8_t *)mem;
  uint32_t t, i, n = 0;
  z.S = S;
  z.F = (bw_BlobField *)m;
  m += align8((size_t)S->nfields * sizeof(bw_BlobField));
  z.T = (bw_BlobType *)m;
  m += align8((size_t)S->ntypes * sizeof(bw_BlobType));
  z.map = (uint32_t *)m;
  m += align8((size_t)S->nfields * sizeof(uint32_t));
  z.state = m;
  z.msg = msg;
  z.msgsize = msgsize;
  if (msgsize > 0) msg[0] = '\0';
  memset(z.state, 0, S->ntypes);
  for (i = 0; i < S->nfields; i++) z.map[i] = BW_BLOBNONE;
  /* members of each type, contiguous, then elements, nested ones last */
  for (t = 0; t < S->ntypes; t++) {
    const bw_Type *st = &S->types[t];
    bw_BlobType *ty = &z.T[t];
    ty->name = S->names[st->name];
    ty->first = n;
    for (i = st->first; i < st->first + st->count; i++) {
      const bw_Field *sf = &S->fields[i];
      if (!bw_fieldpresent(sf, version) || sf->kind == BW_KALIGN
          || sf->kind == BW_KCHECK)
        continue;
      memset(&z.F[n], 0, sizeof(z.F[n]));
      z.F[n].name = S->names[sf->name];
      z.F[n].sfield = i;
      z.map[i] = n++;
    }
    ty->count = n - ty->first;
  }
  for (i = 0; i < n; i++) {
    const bw_Field *sf = &S->fields[z.F[i].sfield];
    if (sf->kind == BW_KARRAY || sf->kind == BW_KSPARSE) {
      memset(&z.F[n], 0, sizeof(z.F[n]));
      z.F[n].name = NULL;
      z.F[n].sfield = sf->ref;
      z.F[n].presence = BW_BLOBNONE;
      z.map[sf->ref] = n++;
    }
  }
  for (t = 0; t < S->ntypes; t++)
    if (!laytype(&z, t)) {
      if (msgsize > 0 && msg[0] == '\0')
        snprintf(msg, msgsize, "%s: cannot be laid out", z.T[t].name);
      return BW_ERANGE;
    }
  L->ntypes = S->ntypes;
  L->nfields = n;
  L->version = version;
  L->types = z.T;
  L->fields = z.F;
  L->map = z.map;
  return BW_OK;
}

/* }========================================================== */
