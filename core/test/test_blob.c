/*
** test_blob.c - C tests of blob layouts, the writer and the validator
** See LICENSE for copyright and terms.
*/

#include <stdlib.h>

#include "bw_blob.h"
#include "bw_schema.h"
#include "check.h"

static void *plainalloc (void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud; (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

static uint32_t name (bw_Schema *S, const char *s) {
  return bw_schemaaddname(S, s, strlen(s));
}

/* Cmd   { kind: enum {fade, move, say}; t: float32; text: string[64]?;
**         since = 'textsince' }
** Scene { name: string[16]; cmds: array[0..100] of Cmd; id: int[-5, 300] } */
static bw_Schema *makeschema (uint32_t textsince) {
  bw_Schema *S = bw_schemanew();
  uint32_t cmd, scene, f, e;
  char msg[128];
  cmd = bw_schemaaddtype(S, name(S, "Cmd"));
  f = bw_schemaaddfields(S, 3);
  S->types[cmd].first = f;
  S->types[cmd].count = 3;
  S->fields[f].kind = BW_KENUM;
  S->fields[f].name = name(S, "kind");
  S->fields[f].ref = name(S, "fade");
  name(S, "move");
  name(S, "say");
  S->fields[f].max = 2;
  S->fields[f + 1].kind = BW_KFLOAT32;
  S->fields[f + 1].name = name(S, "t");
  S->fields[f + 2].kind = BW_KSTRING;
  S->fields[f + 2].name = name(S, "text");
  S->fields[f + 2].max = 64;
  S->fields[f + 2].optional = 1;
  S->fields[f + 2].since = textsince;
  scene = bw_schemaaddtype(S, name(S, "Scene"));
  f = bw_schemaaddfields(S, 3);
  S->types[scene].first = f;
  S->types[scene].count = 3;
  S->fields[f].kind = BW_KSTRING;
  S->fields[f].name = name(S, "name");
  S->fields[f].max = 16;
  S->fields[f + 1].kind = BW_KARRAY;
  S->fields[f + 1].name = name(S, "cmds");
  S->fields[f + 1].max = 100;
  S->fields[f + 2].kind = BW_KINT;
  S->fields[f + 2].name = name(S, "id");
  S->fields[f + 2].min = -5;
  S->fields[f + 2].max = 300;
  e = bw_schemaaddfields(S, 1);
  S->fields[f + 1].ref = e;
  S->fields[e].kind = BW_KSTRUCT;
  S->fields[e].ref = cmd;
  CHECK(bw_schemaseal(S, msg, sizeof(msg)) == BW_OK);
  return S;
}

typedef struct Lay {
  bw_BlobLayout L;
  void *mem;
} Lay;

static void layout (Lay *l, const bw_Schema *S, uint32_t version) {
  char msg[128];
  l->mem = malloc(bw_bloblayoutsize(S));
  CHECK(bw_bloblayout(S, version, l->mem, &l->L, msg, sizeof(msg)) == BW_OK);
}

static void test_layout (void) {
  bw_Schema *S = makeschema(0);
  Lay l;
  const bw_BlobType *cmd, *scene;
  const bw_BlobField *F;
  layout(&l, S, 0);
  cmd = &l.L.types[0];
  scene = &l.L.types[1];
  F = l.L.fields;
  CHECK(strcmp(cmd->name, "Cmd") == 0 && cmd->count == 3);
  /* kind u8 @0, t f32 @4, has_text @8, text relarray @12: 20 bytes */
  CHECK(F[cmd->first].ctype == BW_CU8 && F[cmd->first].offset == 0);
  CHECK(F[cmd->first + 1].ctype == BW_CF32 && F[cmd->first + 1].offset == 4);
  CHECK(F[cmd->first + 2].presence == 8 && F[cmd->first + 2].offset == 12);
  CHECK(F[cmd->first + 2].form == BW_BSTRING);
  CHECK(cmd->size == 20 && cmd->align == 4);
  /* name @0, cmds @8, id int16 @16: 20 bytes */
  CHECK(F[scene->first + 2].ctype == BW_CI16);
  CHECK(F[scene->first + 2].offset == 16);
  CHECK(F[scene->first + 1].form == BW_BARRAY);
  CHECK(F[scene->first + 1].stride == 20);
  CHECK(scene->size == 20);
  CHECK(cmd->fingerprint != scene->fingerprint);
  /* floats need no look; enums, ranged ints and offsets do */
  CHECK(F[cmd->first + 1].check == 0 && F[cmd->first].check == 1);
  CHECK(F[scene->first + 2].check == 1 && F[scene->first + 1].check == 1);
  free(l.mem);
  bw_schemarelease(S);
}

/* Scene "intro", id -3, cmds: {fade, 0.5}, {say, 1.0, "hé"} */
static size_t writescene (bw_BlobWriter *w, const bw_BlobLayout *L) {
  const bw_BlobField *F = L->fields;
  const bw_BlobType *cmd = &L->types[0], *scene = &L->types[1];
  size_t root, s, arr, c;
  bw_blobwinit(w, plainalloc, NULL, 1 << 20);
  root = bw_blobwalloc(w, scene->size, scene->align);
  s = bw_blobwalloc(w, 6, 1);
  memcpy(w->buf + s, "intro", 6);
  bw_blobwsetrel(w, root + F[scene->first].offset, s, 5);
  arr = bw_blobwalloc(w, 2 * cmd->size, cmd->align);
  bw_blobwsetrel(w, root + F[scene->first + 1].offset, arr, 2);
  bw_blobseti(w->buf + arr, BW_CU8, 0);
  bw_blobsetf(w->buf + arr + 4, BW_CF32, 0.5);
  c = arr + cmd->size;
  bw_blobseti(w->buf + c, BW_CU8, 2);
  bw_blobsetf(w->buf + c + 4, BW_CF32, 1.0);
  if (L->types[0].count == 3) {
    w->buf[c + F[cmd->first + 2].presence] = 1;
    s = bw_blobwalloc(w, 4, 1);
    memcpy(w->buf + s, "h\xc3\xa9", 4);
    bw_blobwsetrel(w, c + F[cmd->first + 2].offset, s, 3);
  }
  bw_blobseti(w->buf + root + F[scene->first + 2].offset, BW_CI16, -3);
  bw_blobwfinish(w, L, 1);
  return root;
}

static bw_Status check (const uint8_t *b, size_t n, const bw_BlobLayout *L,
                        const char **why, bw_Error *e) {
  return bw_blobcheck(b, n, L, 1, e, why);
}

static void test_roundtrip (void) {
  bw_Schema *S = makeschema(0);
  Lay l;
  bw_BlobWriter w;
  bw_BlobHeader h;
  bw_Error e;
  const char *why;
  size_t root;
  layout(&l, S, 0);
  root = writescene(&w, &l.L);
  CHECK(w.status == BW_OK);
  CHECK(root == BW_BLOBHEADER);
  CHECK(w.len % 8 == 0);
  CHECK(bw_blobheader(w.buf, w.len, &h) == BW_OK);
  CHECK(h.size == w.len && h.root == 1 && h.version == 0);
  CHECK(h.fingerprint == l.L.types[1].fingerprint);
  CHECK(check(w.buf, w.len, &l.L, &why, &e) == BW_OK);
  CHECK(bw_blobgeti(w.buf + root + 16, BW_CI16) == -3);
  /* the wrong root type */
  CHECK(bw_blobcheck(w.buf, w.len, &l.L, 0, &e, &why) == BW_ESCHEMA);
  /* a root the layout has no type for: refused, no read past its types */
  bw_blobwfinish(&w, &l.L, l.L.ntypes);
  CHECK(w.status == BW_EARG);
  bw_blobwfree(&w);
  free(l.mem);
  bw_schemarelease(S);
}

/* A version without 'text' lays Cmd out without it, with another
** fingerprint; the same description written before 'text' existed (no
** since) has the same fingerprint at that version. */
static void test_versions (void) {
  bw_Schema *S = makeschema(1), *old = makeschema(UINT32_MAX - 1);
  Lay v0, v1, o0;
  layout(&v0, S, 0);
  layout(&v1, S, 1);
  layout(&o0, old, 0);
  CHECK(v0.L.types[0].count == 2 && v0.L.types[0].size == 8);
  CHECK(v1.L.types[0].count == 3 && v1.L.types[0].size == 20);
  CHECK(v0.L.types[1].fingerprint != v1.L.types[1].fingerprint);
  CHECK(o0.L.types[1].fingerprint == v0.L.types[1].fingerprint);
  free(v0.mem);
  free(v1.mem);
  free(o0.mem);
  bw_schemarelease(S);
  bw_schemarelease(old);
}

/* T { a: bool }; U { b: bool since 2 }. */
static bw_Schema *makeversioned (void) {
  bw_Schema *S = bw_schemanew();
  uint32_t t, f;
  char msg[128];
  t = bw_schemaaddtype(S, name(S, "T"));
  f = bw_schemaaddfields(S, 1);
  S->types[t].first = f;
  S->types[t].count = 1;
  S->fields[f].kind = BW_KBOOL;
  S->fields[f].name = name(S, "a");
  t = bw_schemaaddtype(S, name(S, "U"));
  f = bw_schemaaddfields(S, 1);
  S->types[t].first = f;
  S->types[t].count = 1;
  S->fields[f].kind = BW_KBOOL;
  S->fields[f].name = name(S, "b");
  S->fields[f].since = 2;
  CHECK(bw_schemaseal(S, msg, sizeof(msg)) == BW_OK);
  return S;
}

/* A header whose version lays the root out otherwise than its fingerprint
** says is refused, as the Lua reader (which lays out at the header's
** version) refuses it: one reason, at the fingerprint's byte. */
static void test_headerversion (void) {
  static const char *const mismatch =
    "fingerprint does not match the description at this version";
  bw_Schema *S = makeschema(1), *V = makeversioned();
  Lay v0, v1, w2;
  bw_BlobWriter w;
  bw_Error e;
  const char *why;
  uint8_t *b;
  size_t n;
  layout(&v0, S, 0);
  layout(&v1, S, 1);
  /* written at 1 (Cmd has 'text'), the header patched to say 0 */
  writescene(&w, &v1.L);
  CHECK(w.status == BW_OK);
  n = w.len;
  b = (uint8_t *)malloc(n);
  memcpy(b, w.buf, n);
  CHECK(check(b, n, &v1.L, &why, &e) == BW_OK);
  bw_blobstoreu(b + 16, 0, 4);
  CHECK(check(b, n, &v1.L, &why, &e) == BW_ESCHEMA);
  CHECK(why != NULL && strcmp(why, mismatch) == 0 && e.bitpos == 8 * 8);
  CHECK(check(b, n, &v0.L, &why, &e) == BW_ESCHEMA);
  CHECK(why != NULL && strcmp(why, mismatch) == 0 && e.bitpos == 8 * 8);
  /* versions past the last change read as the current one */
  bw_blobstoreu(b + 16, 7, 4);
  CHECK(check(b, n, &v1.L, &why, &e) == BW_OK);
  bw_blobstoreu(b + 16, UINT32_MAX, 4);
  CHECK(check(b, n, &v1.L, &why, &e) == BW_OK);
  free(b);
  bw_blobwfree(&w);
  /* written at 0, the header patched to say 1 */
  writescene(&w, &v0.L);
  CHECK(w.status == BW_OK);
  CHECK(check(w.buf, w.len, &v0.L, &why, &e) == BW_OK);
  bw_blobstoreu(w.buf + 16, 1, 4);
  CHECK(check(w.buf, w.len, &v0.L, &why, &e) == BW_ESCHEMA);
  CHECK(why != NULL && strcmp(why, mismatch) == 0);
  bw_blobwfree(&w);
  /* at 2, T is laid out as at 0 and 1: a T blob may say either; U is not */
  layout(&w2, V, 2);
  bw_blobwinit(&w, plainalloc, NULL, 256);
  bw_blobwalloc(&w, w2.L.types[0].size, w2.L.types[0].align);
  bw_blobwfinish(&w, &w2.L, 0);
  CHECK(w.status == BW_OK);
  bw_blobstoreu(w.buf + 16, 0, 4);
  CHECK(bw_blobcheck(w.buf, w.len, &w2.L, 0, &e, &why) == BW_OK);
  bw_blobwfree(&w);
  bw_blobwinit(&w, plainalloc, NULL, 256);
  bw_blobwalloc(&w, w2.L.types[1].size, w2.L.types[1].align);
  bw_blobwfinish(&w, &w2.L, 1);
  CHECK(w.status == BW_OK);
  CHECK(bw_blobcheck(w.buf, w.len, &w2.L, 1, &e, &why) == BW_OK);
  bw_blobstoreu(w.buf + 16, 1, 4);
  CHECK(bw_blobcheck(w.buf, w.len, &w2.L, 1, &e, &why) == BW_ESCHEMA);
  CHECK(why != NULL && strcmp(why, mismatch) == 0);
  bw_blobwfree(&w);
  free(v0.mem);
  free(v1.mem);
  free(w2.mem);
  bw_schemarelease(S);
  bw_schemarelease(V);
}

/* Each corruption of a good blob fails with its code, at its byte. */
static void test_hostile (void) {
  bw_Schema *S = makeschema(0);
  Lay l;
  bw_BlobWriter w;
  bw_Error e;
  const char *why;
  uint8_t *b;
  size_t root, n, i;
  size_t name, cmds, say;
  layout(&l, S, 0);
  root = writescene(&w, &l.L);
  n = w.len;
  b = (uint8_t *)malloc(n);
  name = root;
  cmds = root + 8;
  say = BW_BLOBHEADER + 20 + 8 + 20;  /* the second Cmd */
#define MUTATE(stmt, code) do { \
    memcpy(b, w.buf, n); stmt; \
    CHECK(check(b, n, &l.L, &why, &e) == (code)); \
  } while (0)
  MUTATE((void)0, BW_OK);
  /* truncated header, bad magic, unknown flags, sizes */
  for (i = 0; i < BW_BLOBHEADER; i++)
    CHECK(check(w.buf, i, &l.L, &why, &e) == BW_ETRUNC);
  MUTATE(b[0] ^= 1, BW_ETAG);
  MUTATE(b[6] = 3, BW_ESCHEMA);
  MUTATE(b[4] = 2, BW_ESCHEMA);
  MUTATE(b[28] = 1, BW_ESCHEMA);
  MUTATE(bw_blobstoreu(b + 24, n + 8, 4), BW_ERANGE);
  MUTATE(bw_blobstoreu(b + 24, 40, 4), BW_ETRUNC);
  CHECK(check(w.buf, n - 8, &l.L, &why, &e) == BW_ERANGE);
  /* wrong fingerprint */
  MUTATE(b[9] ^= 0x40, BW_ESCHEMA);
  /* offsets: backwards, into the root, past the end, misaligned */
  MUTATE(bw_blobstoreu(b + cmds, (uint32_t)-8, 4), BW_ERANGE);
  MUTATE(bw_blobstoreu(b + cmds, 4, 4), BW_ERANGE);
  CHECK(strcmp(e.path, "cmds") == 0);
  CHECK(e.bitpos == cmds * 8);
  MUTATE(bw_blobstoreu(b + cmds, (uint32_t)(n - cmds + 4), 4), BW_ETRUNC);
  MUTATE(bw_blobstoreu(b + cmds, (uint32_t)(n - cmds + 4), 4), BW_ETRUNC);
  MUTATE(bw_blobstoreu(b + cmds, bw_blobloadu(b + cmds, 4) + 1, 4),
         BW_EALIGN);
  /* overlapping: the array over the name's bytes */
  MUTATE(bw_blobstoreu(b + cmds, bw_blobloadu(b + name, 4) - 8, 4),
         BW_ERANGE);
  /* counts: over the range, over the blob, overflowing a size */
  MUTATE(bw_blobstoreu(b + cmds + 4, 101, 4), BW_ERANGE);
  MUTATE(bw_blobstoreu(b + cmds + 4, 100, 4), BW_ETRUNC);
  MUTATE(bw_blobstoreu(b + name + 4, 17, 4), BW_ERANGE);
  MUTATE(bw_blobstoreu(b + name + 4, 0xFFFFFFFF, 4), BW_ERANGE);
  /* strings: unterminated, NUL inside, bad UTF-8, missing */
  MUTATE(b[name + bw_blobloadu(b + name, 4) + 5] = 'x', BW_EUTF8);
  CHECK(strcmp(why, "string not NUL-terminated") == 0);
  MUTATE(b[name + bw_blobloadu(b + name, 4) + 1] = 0, BW_EUTF8);
  MUTATE(b[say + 12 + bw_blobloadu(b + say + 12, 4) + 2] = 0x41, BW_EUTF8);
  CHECK(strcmp(e.path, "cmds[2].text") == 0);
  MUTATE(bw_blobstoreu(b + name, 0, 4), BW_ERANGE);
  /* scalars: enum and int out of range, bad presence byte */
  MUTATE(b[say] = 3, BW_ERANGE);
  CHECK(strcmp(e.path, "cmds[2].kind") == 0);
  MUTATE(bw_blobseti(b + root + 16, BW_CI16, 301), BW_ERANGE);
  MUTATE(bw_blobseti(b + root + 16, BW_CI16, -6), BW_ERANGE);
  MUTATE(b[say + 8] = 2, BW_ERANGE);
  /* an absent optional is not followed */
  MUTATE(b[say + 8] = 0, BW_OK);
  /* every single-byte change is checked without reading out of bounds */
  for (i = 0; i < n; i++) {
    int bit;
    for (bit = 0; bit < 8; bit++) {
      memcpy(b, w.buf, n);
      b[i] ^= (uint8_t)(1 << bit);
      (void)check(b, n, &l.L, &why, &e);
    }
  }
#undef MUTATE
  free(b);
  bw_blobwfree(&w);
  free(l.mem);
  bw_schemarelease(S);
}

static void test_writer_limits (void) {
  bw_BlobWriter w;
  bw_blobwinit(&w, plainalloc, NULL, 64);
  CHECK(bw_blobwalloc(&w, 16, 8) == 32);
  CHECK(bw_blobwalloc(&w, 1, 1) == 48);
  CHECK(bw_blobwalloc(&w, 8, 8) == 56);
  CHECK(bw_blobwalloc(&w, 1, 1) == 0 && w.status == BW_ENOMEM);
  bw_blobwfree(&w);
  /* count times size is checked, never wrapped: (2^62 + 2) * 4 is 8 in a
  ** 64-bit size_t, as 8 items of 2^29 + 1 bytes are 8 in a 32-bit one */
  bw_blobwinit(&w, plainalloc, NULL, 1024);
  CHECK(bw_blobwallocn(&w, 3, 8, 8) == 32 && w.len == 56);
  CHECK(bw_blobwallocn(&w, SIZE_MAX / 4 + 2, 4, 4) == 0);
  CHECK(w.status == BW_ENOMEM && w.len == 56);
  bw_blobwfree(&w);
  bw_blobwinit(&w, plainalloc, NULL, 1024);
  CHECK(bw_blobwallocn(&w, SIZE_MAX, 0, 1) == 32 && w.status == BW_OK);
  CHECK(bw_blobwallocn(&w, 1, 1024, 1) == 0 && w.status == BW_ENOMEM);
  bw_blobwfree(&w);
  /* misused arguments: BW_EARG, nothing written out of place */
  {
    size_t aligns[] = { 0, 3, 6, 16 };
    unsigned i;
    for (i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++) {
      bw_blobwinit(&w, plainalloc, NULL, 256);
      CHECK(bw_blobwalloc(&w, 4, aligns[i]) == 0 && w.status == BW_EARG);
      bw_blobwfree(&w);
    }
  }
  {
    size_t at, data;
    bw_blobwinit(&w, plainalloc, NULL, 256);
    at = bw_blobwalloc(&w, 8, 4);     /* a relarray: offset and count */
    data = bw_blobwalloc(&w, 4, 4);
    bw_blobwsetrel(&w, at, data, 1);
    CHECK(w.status == BW_OK && bw_blobgeti(w.buf + at, BW_CU32) == (int64_t)(data - at));
    bw_blobwsetrel(&w, w.len - 4, 0, 2);            /* past what was claimed */
    CHECK(w.status == BW_EARG);
    w.status = BW_OK;
    bw_blobwsetrel(&w, 4, data, -1);                /* into the header */
    CHECK(w.status == BW_EARG);
    w.status = BW_OK;
    bw_blobwsetrel(&w, data, at, -1);               /* backwards */
    CHECK(w.status == BW_EARG);
    w.status = BW_OK;
    bw_blobwsetrel(&w, at, w.len + 8, -1);          /* past the end */
    CHECK(w.status == BW_EARG);
    bw_blobwfree(&w);
  }
}

static void test_scalars (void) {
  uint8_t b[8];
  bw_blobseti(b, BW_CI8, -2);
  CHECK(b[0] == 0xFE && bw_blobgeti(b, BW_CI8) == -2);
  bw_blobseti(b, BW_CI32, -70000);
  CHECK(bw_blobgeti(b, BW_CI32) == -70000);
  bw_blobseti(b, BW_CU16, 0xBEEF);
  CHECK(b[0] == 0xEF && b[1] == 0xBE);
  bw_blobsetf(b, BW_CF32, 0.1);
  CHECK(bw_blobgetf(b, BW_CF32) == (double)0.1f);
  bw_blobsetf(b, BW_CF32, 1e300);
  CHECK(bw_blobgetf(b, BW_CF32) > 3e38);
  bw_blobsetf(b, BW_CF64, 0.1);
  CHECK(bw_blobgetf(b, BW_CF64) == 0.1);
}

/* T { a: array[0..60000] of array[count 0] of string[3] }: the elements
** have no bytes, so the validator has nothing to look at in them, and must
** not loop over 60000 of them per 8-byte relarray (CPU per blob byte) */
static void test_nobytes (void) {
  bw_Schema *S = bw_schemanew();
  uint32_t t, f, e;
  char msg[128];
  Lay l;
  bw_BlobWriter w;
  bw_Error err;
  size_t root, data;
  t = bw_schemaaddtype(S, name(S, "T"));
  f = bw_schemaaddfields(S, 1);
  S->types[t].first = f;
  S->types[t].count = 1;
  S->fields[f].kind = BW_KARRAY;
  S->fields[f].name = name(S, "a");
  S->fields[f].max = 60000;
  e = bw_schemaaddfields(S, 2);
  S->fields[f].ref = e;
  S->fields[e].kind = BW_KARRAY;
  S->fields[e].fixed = 1;
  S->fields[e].ref = e + 1;
  S->fields[e + 1].kind = BW_KSTRING;
  S->fields[e + 1].max = 3;
  CHECK(bw_schemaseal(S, msg, sizeof(msg)) == BW_OK);
  layout(&l, S, 0);
  {
    const bw_BlobField *a = &l.L.fields[l.L.types[t].first];
    const bw_BlobField *el = &l.L.fields[a->ref];
    CHECK(a->form == BW_BARRAY && a->stride == 0 && a->check == 1);
    CHECK(el->form == BW_BINLINE && el->size == 0 && el->check == 0);
  }
  bw_blobwinit(&w, plainalloc, NULL, 1 << 20);
  root = bw_blobwalloc(&w, l.L.types[t].size, l.L.types[t].align);
  data = bw_blobwalloc(&w, 0, 4);
  bw_blobwsetrel(&w, root, data, 60000);
  bw_blobwfinish(&w, &l.L, t);
  CHECK(w.status == BW_OK);
  CHECK(bw_blobcheck(w.buf, w.len, &l.L, t, &err, NULL) == BW_OK);
  bw_blobwfree(&w);
  free(l.mem);
  bw_schemarelease(S);
}

int main (void) {
  test_layout();
  test_nobytes();
  test_roundtrip();
  test_versions();
  test_headerversion();
  test_hostile();
  test_writer_limits();
  test_scalars();
  return check_summary("test_blob");
}
