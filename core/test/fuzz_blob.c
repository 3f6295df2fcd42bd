/*
** fuzz_blob.c - libFuzzer target: the blob validator (bw_blobcheck)
** See LICENSE for copyright and terms.
*/

/*
** A schema with every blob form (scalars of each width, enum, bool,
** optional scalar, string, bytes, fixed bytes, array of records, array of
** strings, fixed array, sparse, quat, optional record) is laid out once.
**
** Pass 1 checks the raw input: any status, never a read outside it.
** Pass 2 copies the input into an 8-aligned buffer, writes a correct header
** over its first 32 bytes (so mutations reach the body) and checks again.
** When the check passes, every value is read the way a mapped program would:
** following each offset without further checks, touching every byte of
** every string and array. ASan turns any read the validator should have
** refused into a crash; the reads also re-check NUL and counts.
**
** The seed generator writes random valid blobs with the core's writer.
*/

#include "fuzz.h"
#include "bw_blob.h"
#include "bw_schema.h"

static bw_Schema *S;
static bw_BlobLayout L;
static void *layoutmem;
static uint32_t ROOT;

static uint32_t nm (const char *s) {
  return bw_schemaaddname(S, s, strlen(s));
}

/* Item { a: int[-3, 300]; e: enum{x,y,z}; on: bool; o: int[0,9]?;
**        s: string[12]; q: quat; k: bytes[count 3]; f: float64 }
** Root { items: array[0..50] of Item; names: array[0..4] of string[6];
**        b: bytes[0..40]; fix: array[count 3] of uint 40; sp: sparse[20]
**        of int[0, 70000]; next: Item?; big: int[min64, max64] } */
static void makeschema (void) {
  uint32_t item, root, f, e1, e2, e3, e4;
  char msg[128];
  S = bw_schemanew();
  item = bw_schemaaddtype(S, nm("Item"));
  f = bw_schemaaddfields(S, 8);
  S->types[item].first = f;
  S->types[item].count = 8;
  S->fields[f].kind = BW_KINT, S->fields[f].min = -3, S->fields[f].max = 300;
  S->fields[f].name = nm("a");
  S->fields[f + 1].kind = BW_KENUM, S->fields[f + 1].max = 2;
  S->fields[f + 1].name = nm("e");
  S->fields[f + 1].ref = nm("x");
  nm("y");
  nm("z");
  S->fields[f + 2].kind = BW_KBOOL, S->fields[f + 2].name = nm("on");
  S->fields[f + 3].kind = BW_KINT, S->fields[f + 3].max = 9;
  S->fields[f + 3].optional = 1, S->fields[f + 3].name = nm("o");
  S->fields[f + 4].kind = BW_KSTRING, S->fields[f + 4].max = 12;
  S->fields[f + 4].name = nm("s");
  S->fields[f + 5].kind = BW_KQUAT, S->fields[f + 5].name = nm("q");
  S->fields[f + 6].kind = BW_KBYTES, S->fields[f + 6].fixed = 1;
  S->fields[f + 6].min = S->fields[f + 6].max = 3;
  S->fields[f + 6].name = nm("k");
  S->fields[f + 7].kind = BW_KFLOAT64, S->fields[f + 7].name = nm("f");
  root = bw_schemaaddtype(S, nm("Root"));
  f = bw_schemaaddfields(S, 7);
  S->types[root].first = f;
  S->types[root].count = 7;
  e1 = bw_schemaaddfields(S, 4);
  e2 = e1 + 1, e3 = e1 + 2, e4 = e1 + 3;
  S->fields[f].kind = BW_KARRAY, S->fields[f].max = 50;
  S->fields[f].name = nm("items"), S->fields[f].ref = e1;
  S->fields[e1].kind = BW_KSTRUCT, S->fields[e1].ref = item;
  S->fields[f + 1].kind = BW_KARRAY, S->fields[f + 1].max = 4;
  S->fields[f + 1].name = nm("names"), S->fields[f + 1].ref = e2;
  S->fields[e2].kind = BW_KSTRING, S->fields[e2].max = 6;
  S->fields[f + 2].kind = BW_KBYTES, S->fields[f + 2].max = 40;
  S->fields[f + 2].name = nm("b");
  S->fields[f + 3].kind = BW_KARRAY, S->fields[f + 3].fixed = 1;
  S->fields[f + 3].min = S->fields[f + 3].max = 3;
  S->fields[f + 3].name = nm("fix"), S->fields[f + 3].ref = e3;
  S->fields[e3].kind = BW_KUINT, S->fields[e3].nbits = 40;
  S->fields[e3].max = (INT64_C(1) << 40) - 1;
  S->fields[f + 4].kind = BW_KSPARSE, S->fields[f + 4].max = 20;
  S->fields[f + 4].name = nm("sp"), S->fields[f + 4].ref = e4;
  S->fields[e4].kind = BW_KINT, S->fields[e4].max = 70000;
  S->fields[f + 5].kind = BW_KSTRUCT, S->fields[f + 5].optional = 1;
  S->fields[f + 5].name = nm("next"), S->fields[f + 5].ref = item;
  S->fields[f + 6].kind = BW_KINT, S->fields[f + 6].min = INT64_MIN;
  S->fields[f + 6].max = INT64_MAX, S->fields[f + 6].name = nm("big");
  FCHECK(bw_schemaseal(S, msg, sizeof(msg)) == BW_OK);
  layoutmem = malloc(bw_bloblayoutsize(S));
  FCHECK(bw_bloblayout(S, 0, layoutmem, &L, msg, sizeof(msg)) == BW_OK);
  ROOT = root;
}

static void setup (void) {
  if (S == NULL) makeschema();
}


/* {===================== reading a checked blob ===================== */

static volatile uint64_t sink;

static const uint8_t *target (const uint8_t *p) {
  int32_t off;
  memcpy(&off, p, 4);
  return off == 0 ? NULL : p + off;
}

static uint32_t count (const uint8_t *p) {
  uint32_t n;
  memcpy(&n, p + 4, 4);
  return n;
}

static void touchrecord (uint32_t t, const uint8_t *p);

static void touch (const bw_BlobField *f, const uint8_t *p) {
  const uint8_t *d;
  uint32_t i, n;
  switch (f->form) {
    case BW_BSCALAR: {
      int64_t v = bw_blobgeti(p, f->ctype);
      if (f->ctype < BW_CF32 && f->ctype != BW_CU64 && f->ctype != BW_CU32
          && f->ctype != BW_CU16 && f->ctype != BW_CU8)
        FCHECK(v >= f->min && v <= f->max);
      sink += (uint64_t)v;
      break;
    }
    case BW_BSTRING:
      d = target(p), n = count(p);
      FCHECK(d != NULL && d[n] == '\0' && refutf8(d, n));
      break;
    case BW_BBYTES:
      d = target(p), n = count(p);
      for (i = 0; i < n; i++) sink += d[i];
      break;
    case BW_BFIXBYTES: case BW_BQUAT:
      for (i = 0; i < f->size; i++) sink += p[i];
      break;
    case BW_BARRAY: case BW_BSPARSE:
      d = target(p), n = count(p);
      FCHECK(n <= (uint64_t)f->max);
      for (i = 0; i < n; i++) {
        if (f->form == BW_BSPARSE) {
          uint32_t ix;
          memcpy(&ix, d + (size_t)i * f->stride, 4);
          FCHECK(ix < (uint64_t)f->max);
          touch(&L.fields[f->ref], d + (size_t)i * f->stride + f->voff);
        }
        else touch(&L.fields[f->ref], d + (size_t)i * f->stride);
      }
      break;
    case BW_BINLINE:
      for (i = 0; i < f->count; i++)
        touch(&L.fields[f->ref], p + (size_t)i * f->stride);
      break;
    case BW_BRECORD: touchrecord(f->ref, p); break;
    case BW_BPTR:
      d = target(p);
      if (d != NULL) touchrecord(f->ref, d);
      break;
    default: FCHECK(0);
  }
}

static void touchrecord (uint32_t t, const uint8_t *p) {
  const bw_BlobType *ty = &L.types[t];
  uint32_t i;
  for (i = ty->first; i < ty->first + ty->count; i++) {
    const bw_BlobField *f = &L.fields[i];
    if (f->presence != BW_BLOBNONE && p[f->presence] == 0) continue;
    touch(f, p + f->offset);
  }
}

/* }========================================================== */


int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  bw_Error e;
  const char *why;
  bw_Status st;
  uint64_t *buf;
  uint8_t *b;
  setup();
  /* pass 1: the input as it is (a copy, so ASan sees its exact end) */
  b = (uint8_t *)malloc(size ? size : 1);
  memcpy(b, data, size);
  st = bw_blobcheck(b, size, &L, ROOT, &e, &why);
  FCHECK(st < BW_NSTATUS);
  FCHECK(st == BW_OK || why != NULL);
  if (st == BW_OK) touchrecord(ROOT, b + BW_BLOBHEADER);
  free(b);
  /* pass 2: a correct header over it, 8-aligned */
  if (size < BW_BLOBHEADER || size > BW_BLOBMAX) return 0;
  buf = (uint64_t *)malloc((size + 7) / 8 * 8);
  b = (uint8_t *)buf;
  memcpy(b, data, size);
  {
    bw_BlobHeader h;
    h.magic = BW_BLOBMAGIC;
    h.format = BW_BLOBFORMAT;
    h.flags = BW_BLOBMAPPABLE;
    h.fingerprint = L.types[ROOT].fingerprint;
    h.version = 0;
    h.root = ROOT;
    h.size = (uint32_t)size;
    h.reserved = 0;
    bw_blobputheader(b, &h);
  }
  st = bw_blobcheck(b, size, &L, ROOT, &e, &why);
  FCHECK(st == BW_OK || why != NULL);
  if (st == BW_OK) touchrecord(ROOT, b + BW_BLOBHEADER);
  free(buf);
  return 0;
}


/* {===================== seeds ===================== */

#ifdef FUZZ_SEEDGEN
static void writestr (bw_BlobWriter *w, size_t at, uint32_t max, int bad) {
  uint32_t n = rnd() % (max + 1), i;
  size_t t = bw_blobwalloc(w, n + 1, 1);
  if (w->status != BW_OK) return;
  for (i = 0; i < n; i++) w->buf[t + i] = (uint8_t)('a' + rnd() % 26);
  if (bad && n > 0) w->buf[t + rnd() % n] = 0xC0;
  bw_blobwsetrel(w, at, t, n);
}

static void writeitem (bw_BlobWriter *w, size_t p) {
  const bw_BlobType *ty = &L.types[0];
  const bw_BlobField *F = &L.fields[ty->first];
  bw_blobseti(w->buf + p + F[0].offset, F[0].ctype, (int64_t)(rnd() % 304) - 3);
  bw_blobseti(w->buf + p + F[1].offset, F[1].ctype, rnd() % 3);
  w->buf[p + F[2].offset] = (uint8_t)(rnd() & 1);
  if (rnd() & 1) {
    w->buf[p + F[3].presence] = 1;
    w->buf[p + F[3].offset] = (uint8_t)(rnd() % 10);
  }
  writestr(w, p + F[4].offset, 12, rnd() % 16 == 0);
  bw_blobsetf(w->buf + p + F[7].offset, BW_CF64, (double)rnd());
}

int main (int argc, char **argv) {
  int k;
  if (argc < 2) {
    fprintf(stderr, "usage: %s corpus-dir\n", argv[0]);
    return 2;
  }
  setup();
  for (k = 0; k < 24; k++) {
    bw_BlobWriter w;
    const bw_BlobType *rt = &L.types[ROOT];
    const bw_BlobField *F = &L.fields[rt->first];
    const bw_BlobType *it = &L.types[0];
    size_t root, t;
    uint32_t n = rnd() % 6, i;
    bw_blobwinit(&w, seedalloc, NULL, 1 << 20);
    root = bw_blobwalloc(&w, rt->size, rt->align);
    t = bw_blobwalloc(&w, (size_t)n * it->size, it->align);
    if (n > 0) bw_blobwsetrel(&w, root + F[0].offset, t, n);
    for (i = 0; i < n; i++) writeitem(&w, t + (size_t)i * it->size);
    n = rnd() % 5;
    t = bw_blobwalloc(&w, (size_t)n * 8, 4);
    if (n > 0) bw_blobwsetrel(&w, root + F[1].offset, t, n);
    for (i = 0; i < n; i++) writestr(&w, t + (size_t)i * 8, 6, 0);
    n = rnd() % 41;
    t = bw_blobwalloc(&w, n, 1);
    if (n > 0) bw_blobwsetrel(&w, root + F[2].offset, t, n);
    for (i = 0; i < 3; i++)
      bw_blobseti(w.buf + root + F[3].offset + 8 * (size_t)i, BW_CU64,
                  (int64_t)(rnd64() >> 24));
    n = rnd() % 4;
    t = bw_blobwalloc(&w, (size_t)n * F[4].stride, 4);
    if (n > 0) bw_blobwsetrel(&w, root + F[4].offset, t, n);
    for (i = 0; i < n; i++) {
      bw_blobstoreu(w.buf + t + (size_t)i * F[4].stride, i * 5 + rnd() % 5, 4);
      bw_blobseti(w.buf + t + (size_t)i * F[4].stride + F[4].voff, BW_CU32,
                  rnd() % 70001);
    }
    if (rnd() & 1) {
      t = bw_blobwalloc(&w, it->size, it->align);
      bw_blobwsetrel(&w, root + F[5].offset, t, -1);
      writeitem(&w, t);
    }
    bw_blobseti(w.buf + root + F[6].offset, BW_CI64, (int64_t)rnd64());
    bw_blobwfinish(&w, &L, ROOT);
    if (w.status != BW_OK || writeseed(argv[1], k, w.buf, w.len)) return 1;
    bw_blobwfree(&w);
  }
  return 0;
}
#endif

/* }========================================================== */
