/*
** bw_bloblayout.c - memory-mappable blobs: the layout of a compiled schema
** See LICENSE for copyright and terms.
*/

/*
** Offsets, sizes, C types and the fingerprint of every blob record, field
** and array, computed once from a compiled schema; the writer, the
** validator (bw_blob.c), the Lua binding and the C generator all read it.
*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bw_blob.h"
#include "bw_schema.h"

#define RELSIZE   8                      /* int32 offset + uint32 count */


/* {===================== layout ===================== */

typedef struct Lay {
  const bw_Schema *S;
  bw_BlobField *F;
  bw_BlobType *T;
  uint32_t *map;
  uint8_t *state;       /* per type: 0 new, 1 in progress, 2 done */
  char *msg;
  size_t msgsize;
  uint32_t version;     /* the one laid out */
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

/* Narrow 'ty''s versions to those where 'sf' is as it is at z->version:
** present or absent, it changes the layout at 'since' and 'removed'. */
static void narrowfield (const Lay *z, const bw_Field *sf, bw_BlobType *ty) {
  uint32_t b[2];
  int i;
  if (sf->kind == BW_KALIGN || sf->kind == BW_KCHECK) return;  /* no room */
  b[0] = sf->since;
  b[1] = sf->removed;  /* UINT32_MAX: never */
  for (i = 0; i < 2; i++) {
    if (b[i] <= z->version) {
      if (b[i] > ty->vmin) ty->vmin = b[i];
    }
    else if (b[i] != UINT32_MAX && b[i] - 1 < ty->vmax) ty->vmax = b[i] - 1;
  }
}

/* ... and to those of the record 'f' holds, if any (through arrays). */
static void narrowref (const Lay *z, const bw_BlobField *f, bw_BlobType *ty) {
  for (;;) {
    switch (f->form) {
      case BW_BRECORD: case BW_BPTR: {
        const bw_BlobType *r = &z->T[f->ref];
        if (r->vmin > ty->vmin) ty->vmin = r->vmin;
        if (r->vmax < ty->vmax) ty->vmax = r->vmax;
        return;
      }
      case BW_BARRAY: case BW_BSPARSE: case BW_BINLINE:
        f = &z->F[f->ref];
        break;
      default: return;
    }
  }
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
  /* the header versions a reader may accept for this fingerprint */
  ty->vmin = 0;
  ty->vmax = UINT32_MAX;
  {
    const bw_Type *st = &z->S->types[t];
    for (i = st->first; i < st->first + st->count; i++)
      narrowfield(z, &z->S->fields[i], ty);
  }
  for (i = ty->first; i < ty->first + ty->count; i++)
    narrowref(z, &z->F[i], ty);
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
  z.version = version;
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
