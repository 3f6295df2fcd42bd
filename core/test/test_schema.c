/*
** test_schema.c - C tests of compiled schemas and game-state encodings
** See LICENSE for copyright and terms.
*/

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bw_schema.h"
#include "check.h"

/* Snapshot { tick: int[0, 1000]; items: array[0..4] of Item }
** Item { on: bool; v: float[-1, 1] res 0.01 (optional) } */
static bw_Schema *makeschema (int maxitems) {
  bw_Schema *S = bw_schemanew();
  uint32_t item, snap, f, e;
  if (S == NULL) return NULL;
  item = bw_schemaaddtype(S, bw_schemaaddname(S, "Item", 4));
  f = bw_schemaaddfields(S, 2);
  S->types[item].first = f;
  S->types[item].count = 2;
  S->fields[f].kind = BW_KBOOL;
  S->fields[f].name = bw_schemaaddname(S, "on", 2);
  S->fields[f + 1].kind = BW_KFLOAT;
  S->fields[f + 1].optional = 1;
  S->fields[f + 1].name = bw_schemaaddname(S, "v", 1);
  bw_qfloatinit(&S->fields[f + 1].q, -1, 1, 0.01);
  snap = bw_schemaaddtype(S, bw_schemaaddname(S, "Snapshot", 8));
  f = bw_schemaaddfields(S, 2);
  S->types[snap].first = f;
  S->types[snap].count = 2;
  S->fields[f].kind = BW_KINT;
  S->fields[f].max = 1000;
  S->fields[f].nbits = bw_bitsrequired(0, 1000);
  e = bw_schemaaddfields(S, 1);
  S->fields[f + 1].kind = BW_KARRAY;
  S->fields[f + 1].max = maxitems;
  S->fields[f + 1].nbits = bw_bitsrequired(0, maxitems);
  S->fields[f + 1].ref = e;
  S->fields[e].kind = BW_KSTRUCT;
  S->fields[e].ref = item;
  return S;
}

static void test_seal_sizes (void) {
  char msg[128];
  bw_Schema *S = makeschema(4);
  uint32_t snap;
  CHECK(S != NULL);
  CHECK(bw_schemaseal(S, msg, sizeof(msg)) == BW_OK);
  CHECK(bw_schemafind(S, "Item", 4) == 0);
  snap = bw_schemafind(S, "Snapshot", 8);
  CHECK(snap == 1);
  CHECK(bw_schemafind(S, "Nope", 4) == BW_NONE);
  /* Item: 1 + (1 + 8) bits at most (miv = 200 -> 8 bits), 2 at least */
  CHECK(S->types[0].maxbits == 10);
  CHECK(S->types[0].minbits == 2);
  /* Snapshot: 10 + 3 + 4 * 10 at most, 10 + 3 at least */
  CHECK(S->types[snap].maxbits == 53);
  CHECK(S->types[snap].minbits == 13);
  CHECK(S->types[snap].depth == 3);
  CHECK(S->typebits == 1);
  {  /* sealing again is refused and changes nothing (it used to take the
     ** ids numbered by the first seal for a given list) */
    uint64_t fp = S->fingerprint;
    CHECK(bw_schemaseal(S, msg, sizeof(msg)) == BW_EARG);
    CHECK(strcmp(msg, "schema already sealed") == 0);
    CHECK(S->fingerprint == fp && !S->explicitids && S->typebits == 1);
  }
  {  /* and the builders leave a sealed schema as it is */
    uint32_t n = S->nnames, t = S->ntypes, f = S->nfields;
    CHECK(bw_schemaaddname(S, "x", 1) == BW_NONE);
    CHECK(bw_schemaaddtype(S, 0) == BW_NONE);
    CHECK(bw_schemaaddfields(S, 1) == BW_NONE);
    CHECK(S->nnames == n && S->ntypes == t && S->nfields == f);
  }
  bw_schemarelease(S);
}

/* A type of 'n' bool fields, the first 'k' optional, sealed: its
** 'shrinks' hint. */
static int shrinks (uint32_t n, uint32_t k) {
  char msg[128];
  bw_Schema *S = bw_schemanew();
  uint32_t t, f, i;
  int r;
  if (S == NULL) return -1;
  t = bw_schemaaddtype(S, bw_schemaaddname(S, "T", 1));
  f = bw_schemaaddfields(S, n);
  S->types[t].first = f;
  S->types[t].count = n;
  for (i = 0; i < n; i++) {
    char name[8];
    name[0] = 'f';
    name[1] = (char)('a' + i % 26);
    name[2] = (char)('a' + i / 26);
    S->fields[f + i].kind = BW_KBOOL;
    S->fields[f + i].optional = i < k;
    S->fields[f + i].name = bw_schemaaddname(S, name, 3);
  }
  r = bw_schemaseal(S, msg, sizeof(msg)) == BW_OK ? S->types[t].shrinks : -1;
  bw_schemarelease(S);
  return r;
}

/* a record's table may be sized by what came only when that can take a
** smaller power of 2 than all its fields */
static void test_seal_shrinks (void) {
  CHECK(shrinks(2, 1) == 1);   /* 1 slot against 2 */
  CHECK(shrinks(3, 1) == 1);   /* 2 against 4 */
  CHECK(shrinks(4, 1) == 0);   /* 4 either way */
  CHECK(shrinks(12, 1) == 0);  /* 16 either way */
  CHECK(shrinks(12, 4) == 1);  /* 8 against 16 */
  CHECK(shrinks(24, 24) == 1);
  CHECK(shrinks(5, 0) == 0);
}

static void test_fingerprint (void) {
  char msg[128];
  bw_Schema *a = makeschema(4), *b = makeschema(4), *c = makeschema(5);
  CHECK(bw_schemaseal(a, msg, sizeof(msg)) == BW_OK);
  CHECK(bw_schemaseal(b, msg, sizeof(msg)) == BW_OK);
  CHECK(bw_schemaseal(c, msg, sizeof(msg)) == BW_OK);
  CHECK(a->fingerprint == b->fingerprint);   /* same program, same hash */
  CHECK(a->fingerprint != c->fingerprint);   /* a wire change shows */
  bw_schemarelease(a);
  bw_schemarelease(b);
  bw_schemarelease(c);
}

static void test_recursion_refused (void) {
  char msg[128];
  bw_Schema *S = bw_schemanew();
  uint32_t t = bw_schemaaddtype(S, bw_schemaaddname(S, "Node", 4));
  uint32_t f = bw_schemaaddfields(S, 1);
  S->types[t].first = f;
  S->types[t].count = 1;
  S->fields[f].kind = BW_KSTRUCT;
  S->fields[f].ref = t;
  S->fields[f].name = bw_schemaaddname(S, "next", 4);
  CHECK(bw_schemaseal(S, msg, sizeof(msg)) == BW_ESCHEMA);
  CHECK(strstr(msg, "Node") != NULL);
  bw_schemarelease(S);
}

static void test_refcount (void) {
  char msg[16];
  bw_Schema *S = makeschema(2);
  CHECK(bw_schemaseal(S, msg, sizeof(msg)) == BW_OK);
  bw_schemaretain(S);
  CHECK(S->refs == 2);
  bw_schemarelease(S);
  CHECK(S->refs == 1);
  bw_schemarelease(S);  /* frees: valgrind and ASan see a leak otherwise */
  bw_schemarelease(NULL);
}

static void test_huge_array_unbounded (void) {
  char msg[16];
  bw_Schema *S = makeschema(0);
  S->fields[3].max = INT64_MAX;  /* the array of Snapshot */
  S->fields[3].nbits = 63;
  CHECK(bw_schemaseal(S, msg, sizeof(msg)) == BW_OK);
  CHECK(S->types[1].maxbits == BW_UNBOUNDED);  /* saturates, no overflow */
  bw_schemarelease(S);
}

static const uint8_t article[] = {0, 2, 3, 4, 5, 6, 63};

static void test_tiered_roundtrip (void) {
  uint8_t buf[64];
  bw_Writer w;
  bw_Reader r;
  uint64_t v;
  /* the article's tiers over differences 1..4001 */
  for (v = 1; v <= 4001; v++) {
    uint64_t bits;
    size_t len;
    const uint8_t *p;
    bw_writerinit(&w, buf, sizeof(buf));
    CHECK(bw_writetiered(&w, v, 1, 4001, article, 7) == BW_OK);
    bits = bw_bitswritten(&w);
    CHECK(bits == bw_tieredbits(v, 1, 4001, article, 7));
    p = bw_writerdata(&w, &len);
    CHECK(len == (size_t)(bits + 7) / 8);
    bw_readerinit(&r, p, len);
    CHECK(bw_readtiered(&r, 1, 4001, article, 7) == v);
    CHECK(r.status == BW_OK && r.pos == bits);
  }
  /* the article's costs: +1 is 1 bit, 2..5 is 4, 6..13 is 6, 126+ is 6+12 */
  CHECK(bw_tieredbits(1, 1, 4001, article, 7) == 1);
  CHECK(bw_tieredbits(5, 1, 4001, article, 7) == 4);
  CHECK(bw_tieredbits(6, 1, 4001, article, 7) == 6);
  CHECK(bw_tieredbits(125, 1, 4001, article, 7) == 12);
  CHECK(bw_tieredbits(126, 1, 4001, article, 7) == 18);
}

static void test_tiered_errors (void) {
  uint8_t buf[8] = {0};
  bw_Writer w;
  bw_Reader r;
  static const uint8_t two[] = {1, 2};  /* 0..1 then 2..4 (of 2 bits) */
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writetiered(&w, 5, 0, 4, two, 2) == BW_ERANGE);
  /* last tier 2..4 in 2 bits: offset 3 (value 5) is out of range */
  buf[0] = 0x6;  /* flag 0, then offset 3 */
  bw_readerinit(&r, buf, 1);
  CHECK(bw_readtiered(&r, 0, 4, two, 2) == 0);
  CHECK(r.status == BW_ERANGE && r.errpos == 0);
  bw_readerinit(&r, buf, 0);
  bw_readtiered(&r, 0, 4, two, 2);
  CHECK(r.status == BW_ETRUNC);
}

static void test_quat (void) {
  static const double cases[][4] = {
    {0, 0, 0, 1}, {1, 0, 0, 0}, {0.5, 0.5, 0.5, 0.5}, {-0.1, 0.7, -0.2, -0.6},
    {0.70710678, 0, 0, -0.70710678}, {3, 4, 0, 0}
  };
  bw_QFloat q;
  size_t i;
  bw_quatinit(&q, 9);
  CHECK(q.miv == 511 && q.nbits == 9);
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    uint32_t code[4];
    double out[4], len = 0, dot = 0, n = 0;
    int k;
    CHECK(bw_quatencode(&q, cases[i], code));
    CHECK(code[0] < 4);
    bw_quatdecode(&q, code, out);
    for (k = 0; k < 4; k++) {
      len += out[k] * out[k];
      n += cases[i][k] * cases[i][k];
      dot += out[k] * cases[i][k];
    }
    CHECK(fabs(len - 1) < 1e-9);             /* renormalised */
    CHECK(fabs(fabs(dot) / sqrt(n) - 1) < 1e-4);  /* same rotation */
  }
  {
    static const double zero[4] = {0, 0, 0, 0};
    static const double nan4[4] = {NAN, 0, 0, 1};
    uint32_t code[4];
    CHECK(!bw_quatencode(&q, zero, code));
    CHECK(!bw_quatencode(&q, nan4, code));
  }
}

/* {===================== the compiler (bw_compile.c) ================ */

static bw_FieldSpec spec (const char *name, const char *kind) {
  bw_FieldSpec f;
  memset(&f, 0, sizeof(f));
  if (name != NULL) f.name = bw_vstr(name);
  f.kind = bw_vstr(kind);
  return f;
}

/* One type 'T' with 'n' fields; the schema, or NULL with the error. */
static bw_Schema *build1 (const bw_FieldSpec *fs, uint32_t n,
                          bw_SchemaError *e) {
  bw_Schema *S = bw_schemanew();
  bw_Value nm = bw_vstr("T");
  uint32_t i;
  e->msg[0] = '\0';
  if (bw_schemadeclare(S, &nm, e) == BW_NONE
      || bw_schemabegin(S, 0, n, e) != BW_OK)
    goto fail;
  for (i = 0; i < n; i++)
    if (bw_schemaaddfield(S, &fs[i], e) != BW_OK) goto fail;
  if (bw_schemafinish(S, e) != BW_OK) goto fail;
  return S;
fail:
  bw_schemarelease(S);
  return NULL;
}

/* 1 if building T from 'fs' fails with exactly 'msg'. */
static int refuses (const bw_FieldSpec *fs, uint32_t n, const char *msg) {
  bw_SchemaError e;
  bw_Schema *S = build1(fs, n, &e);
  if (S != NULL) bw_schemarelease(S);
  if (S == NULL && strcmp(e.msg, msg) == 0) return 1;
  fprintf(stderr, "expected '%s', got '%s'\n", msg, S ? "(built)" : e.msg);
  return 0;
}

static void test_compile_record (void) {
  /* Vec3 { x, y, z: float [-512, 512] res 0.01 }
  ** Entity { pos: Vec3; health: int [0, 100] = 100; team: enum } */
  bw_SchemaError e;
  bw_Schema *S = bw_schemanew();
  bw_Value vec = bw_vstr("Vec3"), ent = bw_vstr("Entity");
  bw_Value teams[2];
  bw_FieldSpec f;
  const char *xyz[3] = { "x", "y", "z" };
  int i;
  CHECK(bw_schemadeclare(S, &ent, &e) == 0);
  CHECK(bw_schemadeclare(S, &vec, &e) == 1);
  CHECK(bw_schemabegin(S, 1, 3, &e) == BW_OK);
  for (i = 0; i < 3; i++) {
    f = spec(xyz[i], "float");
    f.opt[BW_OMIN] = bw_vint(-512);
    f.opt[BW_OMAX] = bw_vint(512);
    f.opt[BW_ORES] = bw_vnum(0.01);
    CHECK(bw_schemaaddfield(S, &f, &e) == BW_OK);
  }
  CHECK(bw_schemabegin(S, 0, 3, &e) == BW_OK);
  f = spec("pos", "Vec3");
  CHECK(bw_schemaaddfield(S, &f, &e) == BW_OK);
  f = spec("health", "int");
  f.opt[BW_OMIN] = bw_vint(0);
  f.opt[BW_OMAX] = bw_vint(100);
  f.opt[BW_ODEFAULT] = bw_vint(100);
  CHECK(bw_schemaaddfield(S, &f, &e) == BW_OK);
  teams[0] = bw_vstr("red");
  teams[1] = bw_vstr("blue");
  f = spec("team", "enum");
  f.opt[BW_OVALUES] = bw_vlist(teams, 2);
  f.opt[BW_ODEFAULT] = bw_vstr("blue");
  CHECK(bw_schemaaddfield(S, &f, &e) == BW_OK);
  CHECK(bw_schemafinish(S, &e) == BW_OK);
  CHECK(S->sealed);
  CHECK(S->types[1].count == 3 && S->fields[S->types[1].first].q.nbits == 17);
  CHECK(S->types[0].maxbits == 3 * 17 + 7 + 1);
  CHECK(S->fields[S->types[0].first].kind == BW_KSTRUCT);
  CHECK(S->fields[S->types[0].first].ref == 1);
  CHECK(S->fields[S->types[0].first + 1].def.i == 100);
  CHECK(S->fields[S->types[0].first + 2].def.s
        == S->fields[S->types[0].first + 2].ref + 1);
  CHECK(S->nmessages == 2 && bw_msgtype(S, 1) == 1 && bw_msgid(S, 0) == 0);
  /* sealed: nothing more */
  CHECK(bw_schemaaddfield(S, &f, &e) != BW_OK);
  bw_schemarelease(S);
}

static void test_compile_errors (void) {
  bw_FieldSpec f[2], el;
  bw_Value tiers[16];
  int i;
  f[0] = spec("x", "float");
  f[0].opt[BW_OMIN] = bw_vint(0);
  f[0].opt[BW_OMAX] = bw_vint(1);
  f[0].opt[BW_ORES] = bw_vint(0);
  CHECK(refuses(f, 1, "T.x: res must be > 0, got 0"));
  f[0] = spec("x", "int");
  f[0].opt[BW_OMIN] = bw_vnum(0.5);
  f[0].opt[BW_OMAX] = bw_vint(1);
  CHECK(refuses(f, 1, "T.x: 'min' must be an integer, got 0.5"));
  /* a float of an integer's value is that integer (Lua's 2^8 - 1) */
  f[0].opt[BW_OMIN] = bw_vnum(-0.0);
  f[0].opt[BW_OMAX] = bw_vnum(255.0);
  {
    bw_SchemaError e;
    bw_Schema *T = build1(f, 1, &e);
    CHECK(T != NULL && T->fields[0].min == 0 && T->fields[0].max == 255);
    bw_schemarelease(T);
  }
  f[0].opt[BW_OMAX] = bw_vnum(9223372036854775808.0);
  CHECK(refuses(f, 1, "T.x: 'max' must be an integer, got 9.2233720368548e+18"));
  f[0].opt[BW_OMAX] = bw_vint(1);
  f[0].opt[BW_OMIN] = bw_vint(5);
  CHECK(refuses(f, 1, "T.x: min 5 > max 1"));
  f[0] = spec("x", "bool");
  f[0].opt[BW_OMAX] = bw_vint(1);
  CHECK(refuses(f, 1, "T.x: unknown option 'max' for type bool"));
  f[0] = spec("x", "Nope");
  CHECK(refuses(f, 1, "T.x: unknown type 'Nope'"));
  f[0] = spec("x", "bool");
  f[1] = spec("x", "bool");
  CHECK(refuses(f, 2, "T.x: duplicate field name"));
  /* names reach terminals through every tool: no control characters, C1
  ** (U+009B, CSI) included, and UTF-8 only */
  f[0] = spec("a\033[2J", "bool");
  CHECK(refuses(f, 1, "T: field name \"a\\27[2J\" must be UTF-8 without "
                "control characters"));
  f[0] = spec("a\302\233", "bool");
  CHECK(refuses(f, 1, "T: field name \"a\\194\\155\" must be UTF-8 "
                "without control characters"));
  f[0] = spec("a\377", "bool");
  CHECK(refuses(f, 1, "T: field name \"a\\255\" must be UTF-8 without "
                "control characters"));
  f[0] = spec("\303\234ber \302\240", "bool");  /* printable: U+00A0 */
  {
    bw_SchemaError e;
    bw_Schema *T = build1(f, 1, &e);
    CHECK(T != NULL);
    bw_schemarelease(T);
  }
  /* a named align or check is refused, not half-accepted */
  f[0] = spec("pad", "align");
  CHECK(refuses(f, 1, "T.pad: align takes no name: write { \"align\" }"));
  /* elements: the path goes on with [] */
  el = spec(NULL, "int");
  el.opt[BW_OMIN] = bw_vint(0);
  f[0] = spec("xs", "array");
  f[0].opt[BW_OMAX] = bw_vint(3);
  f[0].opt[BW_OOF].type = BW_VLIST;
  f[0].of = &el;
  CHECK(refuses(f, 1, "T.xs[]: 'max' must be an integer, got nothing"));
  /* tiers: 16 for tiered, 15 for sparse (a catch-all tier follows) */
  for (i = 0; i < 16; i++) tiers[i] = bw_vint(2);
  f[0] = spec("t", "tiered");
  f[0].opt[BW_OTIERS] = bw_vlist(tiers, 16);
  {
    bw_SchemaError e;
    bw_Schema *T = build1(f, 1, &e);
    CHECK(T != NULL && T->fields[0].ntiers == 16);
    bw_schemarelease(T);
  }
  el = spec(NULL, "bool");
  f[0] = spec("s", "sparse");
  f[0].opt[BW_OMAX] = bw_vint(8);
  f[0].opt[BW_OTIERS] = bw_vlist(tiers, 16);
  f[0].opt[BW_OOF].type = BW_VSTRING;
  f[0].of = &el;
  CHECK(refuses(f, 1, "T.s: 'tiers' must be a list of 1 to 15 bit widths"));
  /* relative deltas: tier widths 0..32 */
  tiers[1] = bw_vint(33);
  f[0] = spec("q", "quat");
  f[0].opt[BW_OBITS] = bw_vint(9);
  f[0].opt[BW_ODELTA] = bw_vstr("relative");
  f[0].opt[BW_OTIERS] = bw_vlist(tiers, 2);
  CHECK(refuses(f, 1, "T.q: tier 2: width must be an integer in [0, 32]"));
  f[0] = spec("a", "angle");
  f[0].opt[BW_OBITS] = bw_vint(10);
  f[0].opt[BW_OUNIT] = bw_vstr("grad");
  CHECK(refuses(f, 1, "T.a: unknown unit 'grad' (rad or deg)"));
  f[0].opt[BW_OUNIT] = bw_vstr("deg");
  f[0].opt[BW_ODEFAULT] = bw_vnum(INFINITY);
  CHECK(refuses(f, 1, "T.a: default inf does not fit the field"));
}

static void test_compile_bounds (void) {
  bw_SchemaError e;
  bw_FieldSpec f;
  bw_Value tiers[1];
  bw_Schema *S;
  /* tiered from INT64_MAX: the computed max holds at INT64_MAX */
  tiers[0] = bw_vint(8);
  f = spec("t", "tiered");
  f.opt[BW_OTIERS] = bw_vlist(tiers, 1);
  f.opt[BW_OMIN] = bw_vint(INT64_MAX);
  S = build1(&f, 1, &e);
  CHECK(S != NULL);
  if (S != NULL) {
    const bw_Field *t = &S->fields[0];
    CHECK(t->min == INT64_MAX && t->max == INT64_MAX && t->min <= t->max);
    bw_schemarelease(S);
  }
  f.opt[BW_OMIN] = bw_vint(INT64_MAX - 10);
  f.opt[BW_OMAX] = bw_vint(INT64_MIN);
  CHECK(refuses(&f, 1, "T.t: min 9223372036854775797 > max -9223372036854775808"));
}

/* 'n' types, each with two fields of the next: a zero-bit tree */
static bw_Status zerotree (int n, bw_SchemaError *e) {
  bw_Schema *S = bw_schemanew();
  char names[32][8];
  bw_Status st = BW_OK;
  int i;
  for (i = 0; i < n && st == BW_OK; i++) {
    bw_Value v;
    snprintf(names[i], sizeof(names[i]), "T%02d", i);
    v = bw_vstr(names[i]);
    if (bw_schemadeclare(S, &v, e) == BW_NONE) st = BW_ESCHEMA;
  }
  for (i = 0; i < n && st == BW_OK; i++) {
    bw_FieldSpec a = spec("a", i + 1 < n ? names[i + 1] : "int");
    bw_FieldSpec b = spec("b", i + 1 < n ? names[i + 1] : "int");
    if (i + 1 == n) {
      a.opt[BW_OMIN] = a.opt[BW_OMAX] = bw_vint(7);
      b.opt[BW_OMIN] = b.opt[BW_OMAX] = bw_vint(7);
    }
    if (bw_schemabegin(S, (uint32_t)i, 2, e) != BW_OK
        || bw_schemaaddfield(S, &a, e) != BW_OK
        || bw_schemaaddfield(S, &b, e) != BW_OK)
      st = BW_ESCHEMA;
  }
  if (st == BW_OK) st = bw_schemafinish(S, e);
  bw_schemarelease(S);
  return st;
}

static void test_compile_zero_bits (void) {
  bw_SchemaError e;
  CHECK(zerotree(10, &e) == BW_OK);    /* 2^10 values from no bits: fine */
  CHECK(zerotree(21, &e) == BW_ESCHEMA);   /* 2^21: refused */
  CHECK(strstr(e.msg, "takes no bits makes") != NULL);
}

static void test_compile_limits (void) {
  bw_SchemaError e;
  bw_Schema *S = bw_schemanew();
  bw_Value a = bw_vstr("A"), b = bw_vstr("B"), c = bw_vstr("C");
  bw_FieldSpec x = spec("x", "bool"), y = spec("y", "bool");
  bw_schemadeclare(S, &a, &e);
  bw_schemadeclare(S, &b, &e);
  CHECK(bw_schemabegin(S, 0, BW_MAXFIELDS + 1, &e) == BW_ESCHEMA);
  CHECK(strstr(e.msg, "A: more than 100000 fields") == e.msg);
  CHECK(bw_schemabegin(S, 0, 2, &e) == BW_OK);
  CHECK(bw_schemaaddfield(S, &x, &e) == BW_OK);
  CHECK(bw_schemabegin(S, 1, 1, &e) == BW_ESCHEMA);   /* A lacks a field */
  CHECK(strcmp(e.msg, "A: 1 of its 2 fields given") == 0);
  CHECK(bw_schemaaddfield(S, &y, &e) == BW_OK);
  CHECK(bw_schemaaddfield(S, &y, &e) == BW_EARG);     /* no slot left */
  /* the count runs over the whole description */
  CHECK(bw_schemabegin(S, 1, BW_MAXFIELDS - 1, &e) == BW_ESCHEMA);
  CHECK(strstr(e.msg, "B: more than 100000 fields") == e.msg);
  CHECK(bw_schemafinish(S, &e) == BW_ESCHEMA);
  CHECK(strcmp(e.msg, "B: no fields given") == 0);
  bw_schemarelease(S);
  /* a type declared after a refused begin gets its fields (ASan: no
  ** write past the begun flags sized before it) */
  S = bw_schemanew();
  bw_schemadeclare(S, &a, &e);
  CHECK(bw_schemabegin(S, 0, BW_MAXFIELDS + 1, &e) == BW_ESCHEMA);
  bw_schemadeclare(S, &b, &e);
  CHECK(bw_schemadeclare(S, &c, &e) == 2);
  CHECK(bw_schemabegin(S, 2, 1, &e) == BW_OK);
  CHECK(bw_schemaaddfield(S, &x, &e) == BW_OK);
  CHECK(bw_schemabegin(S, 0, 1, &e) == BW_OK);
  CHECK(bw_schemaaddfield(S, &x, &e) == BW_OK);
  CHECK(bw_schemabegin(S, 1, 1, &e) == BW_OK);
  CHECK(bw_schemaaddfield(S, &y, &e) == BW_OK);
  CHECK(bw_schemabegin(S, 2, 1, &e) == BW_ESCHEMA);   /* given twice */
  CHECK(bw_schemafinish(S, &e) == BW_OK);
  bw_schemarelease(S);
}

/* A refused field leaves its slot free and its name untaken: the field
** given again in that slot is no duplicate, and a name no field kept
** names nothing (T has more than 8 fields, so names are found by index). */
static void test_compile_retry (void) {
  bw_SchemaError e;
  bw_Schema *S = bw_schemanew();
  bw_Value t = bw_vstr("T");
  bw_FieldSpec f = spec("x", "int");
  char names[10][4];
  uint32_t i;
  CHECK(bw_schemadeclare(S, &t, &e) == 0);
  CHECK(bw_schemabegin(S, 0, 11, &e) == BW_OK);
  f.opt[BW_OMIN] = bw_vint(5);
  f.opt[BW_OMAX] = bw_vint(1);
  CHECK(bw_schemaaddfield(S, &f, &e) == BW_ESCHEMA);
  CHECK(strcmp(e.msg, "T.x: min 5 > max 1") == 0);
  f.opt[BW_OMIN] = bw_vint(0);
  CHECK(bw_schemaaddfield(S, &f, &e) == BW_OK);   /* x again: accepted */
  f = spec("gone", "bool");
  f.opt[BW_OMAX] = bw_vint(1);
  CHECK(bw_schemaaddfield(S, &f, &e) == BW_ESCHEMA);
  for (i = 0; i < 9; i++) {
    snprintf(names[i], sizeof(names[i]), "f%u", (unsigned)i);
    f = spec(names[i], "bool");
    CHECK(bw_schemaaddfield(S, &f, &e) == BW_OK);
  }
  f = spec("x", "bool");
  CHECK(bw_schemaaddfield(S, &f, &e) == BW_ESCHEMA);
  CHECK(strcmp(e.msg, "T.x: duplicate field name") == 0);
  f = spec("last", "bool");
  CHECK(bw_schemaaddfield(S, &f, &e) == BW_OK);
  CHECK(bw_schemafinish(S, &e) == BW_OK);
  CHECK(bw_fieldnamed(S, 0, "x", 1) == &S->fields[0]);
  CHECK(bw_fieldnamed(S, 0, "gone", 4) == NULL);
  CHECK(bw_fieldnamed(S, 0, "f0", 2) == &S->fields[1]);
  bw_schemarelease(S);
}

/* NULL where the builder reads through a pointer: refused (BW_EARG), with
** the type, field and reason, and the schema stays usable. */
static void test_compile_null (void) {
  bw_SchemaError e;
  bw_Schema *S = bw_schemanew();
  bw_Value t = bw_vstr("T"), none, bad;
  bw_FieldSpec f = spec("x", "int");
  memset(&none, 0, sizeof(none));
  CHECK(bw_schemadeclare(NULL, &t, &e) == BW_NONE);
  CHECK(strcmp(e.msg, "no schema (NULL)") == 0);
  CHECK(bw_schemabegin(NULL, 0, 1, &e) == BW_EARG);
  CHECK(bw_schemaaddfield(NULL, &f, &e) == BW_EARG);
  CHECK(bw_schemamessages(NULL, &none, &none, &e) == BW_EARG);
  CHECK(bw_schemafinish(NULL, &e) == BW_EARG);
  CHECK(bw_schemadeclare(S, NULL, &e) == BW_NONE);
  CHECK(strcmp(e.msg, "type name is NULL") == 0);
  bad = bw_vstr("T");
  bad.s = NULL;
  CHECK(bw_schemadeclare(S, &bad, &e) == BW_NONE);
  CHECK(strcmp(e.msg, "type name: a string of NULL bytes") == 0);
  CHECK(bw_schemadeclare(S, &t, &e) == 0);
  CHECK(bw_schemamessages(S, NULL, &none, &e) == BW_EARG);
  CHECK(strcmp(e.msg, "'messages' is NULL") == 0);
  CHECK(bw_schemamessages(S, &none, NULL, &e) == BW_EARG);
  bad = bw_vlist(NULL, 1);
  CHECK(bw_schemamessages(S, &bad, &none, &e) == BW_EARG);
  CHECK(strcmp(e.msg, "'messages': a list of NULL items") == 0);
  CHECK(bw_schemabegin(S, 0, 1, &e) == BW_OK);
  CHECK(bw_schemaaddfield(S, NULL, &e) == BW_EARG);
  CHECK(strcmp(e.msg, "T: field spec is NULL") == 0);
  f.opt[BW_OMIN] = bw_vint(0);
  f.opt[BW_OMAX] = bw_vstr("9");
  f.opt[BW_OMAX].s = NULL;
  CHECK(bw_schemaaddfield(S, &f, &e) == BW_ESCHEMA);
  CHECK(strcmp(e.msg, "T.x: max: a string of NULL bytes") == 0);
  f.opt[BW_OMAX] = bw_vint(9);
  f.name.s = NULL;
  CHECK(bw_schemaaddfield(S, &f, &e) == BW_ESCHEMA);
  CHECK(strcmp(e.msg, "T: field name: a string of NULL bytes") == 0);
  f.name = bw_vstr("x");
  CHECK(bw_schemaaddfield(S, &f, &e) == BW_OK);
  CHECK(bw_schemafinish(S, &e) == BW_OK);
  bw_schemarelease(S);
}

static void test_compile_messages (void) {
  bw_SchemaError e;
  bw_Schema *S[3];
  bw_Value list[2], none = { BW_VNONE, 0, 0, 0, NULL, 0, NULL };
  bw_Value bits = bw_vint(4), lst;
  int k;
  list[0] = bw_vstr("C");
  list[1] = bw_vstr("A");
  lst = bw_vlist(list, 2);
  for (k = 0; k < 3; k++) {
    const char *nm[3] = { "A", "B", "C" };
    int i;
    S[k] = bw_schemanew();
    for (i = 0; i < 3; i++) {
      bw_Value v = bw_vstr(nm[i]);
      bw_FieldSpec f = spec("x", "bool");
      bw_schemadeclare(S[k], &v, &e);
      (void)f;
    }
    for (i = 0; i < 3; i++) {
      bw_FieldSpec f = spec("x", "bool");
      bw_schemabegin(S[k], (uint32_t)i, 1, &e);
      bw_schemaaddfield(S[k], &f, &e);
    }
    if (k > 0) CHECK(bw_schemamessages(S[k], &lst, k == 2 ? &bits : &none, &e) == BW_OK);
    CHECK(bw_schemafinish(S[k], &e) == BW_OK);
  }
  CHECK(S[0]->typebits == 2 && S[0]->nmessages == 3);
  CHECK(S[1]->typebits == 1 && S[1]->nmessages == 2);
  CHECK(bw_msgtype(S[1], 0) == 2 && bw_msgtype(S[1], 1) == 0);
  CHECK(bw_msgtype(S[1], 2) == BW_NONE && bw_msgid(S[1], 1) == BW_NONE);
  CHECK(S[2]->typebits == 4);
  /* the ids and their width are on the wire: the fingerprint covers them */
  CHECK(S[0]->fingerprint != S[1]->fingerprint);
  CHECK(S[1]->fingerprint != S[2]->fingerprint);
  /* neither a list nor a width is the default, as if not called: the same
  ** fingerprint as S[0], and a type declared after it is a message too */
  {
    bw_Schema *T = bw_schemanew();
    const char *nm[3] = { "A", "B", "C" };
    int i;
    for (i = 0; i < 3; i++) {
      bw_Value v = bw_vstr(nm[i]);
      bw_schemadeclare(T, &v, &e);
      if (i == 1) CHECK(bw_schemamessages(T, &none, &none, &e) == BW_OK);
    }
    for (i = 0; i < 3; i++) {
      bw_FieldSpec f = spec("x", "bool");
      bw_schemabegin(T, (uint32_t)i, 1, &e);
      bw_schemaaddfield(T, &f, &e);
    }
    CHECK(bw_schemafinish(T, &e) == BW_OK);
    CHECK(T->nmessages == 3 && T->typebits == 2 && !T->explicitids);
    CHECK(bw_msgid(T, 2) == 2 && T->fingerprint == S[0]->fingerprint);
    bw_schemarelease(T);
  }
  /* a width counts the types declared before it: none may follow it */
  {
    bw_Schema *T = bw_schemanew();
    bw_Value a = bw_vstr("A"), b = bw_vstr("B"), one = bw_vint(1);
    bw_schemadeclare(T, &a, &e);
    CHECK(bw_schemamessages(T, &none, &one, &e) == BW_OK);
    CHECK(bw_schemadeclare(T, &b, &e) == BW_NONE);
    CHECK(strcmp(e.msg, "B: types are declared before the messages") == 0);
    CHECK(T->ntypes == 1 && T->nmessages == 1);
    bw_schemarelease(T);
  }
  for (k = 0; k < 3; k++) bw_schemarelease(S[k]);
  {
    bw_Schema *T = bw_schemanew();
    bw_Value v = bw_vstr("A"), two = bw_vint(0);
    bw_FieldSpec f = spec("x", "bool");
    bw_schemadeclare(T, &v, &e);
    bw_schemabegin(T, 0, 1, &e);
    bw_schemaaddfield(T, &f, &e);
    list[0] = bw_vstr("A");
    list[1] = bw_vstr("A");
    CHECK(bw_schemamessages(T, &lst, &none, &e) == BW_ESCHEMA);
    lst.len = 1;
    list[0] = bw_vstr("Z");
    CHECK(bw_schemamessages(T, &lst, &two, &e) == BW_ESCHEMA);
    CHECK(strcmp(e.msg, "messages[1]: unknown type 'Z'") == 0);
    bw_schemarelease(T);
  }
  {  /* a refused list or width changes nothing: finish numbers every type */
    bw_Schema *T = bw_schemanew();
    bw_Value a = bw_vstr("A"), b = bw_vstr("B"), wide = bw_vint(40);
    bw_FieldSpec f = spec("x", "bool");
    bw_schemadeclare(T, &a, &e);
    bw_schemadeclare(T, &b, &e);
    bw_schemabegin(T, 0, 1, &e);
    bw_schemaaddfield(T, &f, &e);
    bw_schemabegin(T, 1, 1, &e);
    bw_schemaaddfield(T, &f, &e);
    list[0] = bw_vstr("B");
    list[1] = bw_vstr("Z");
    lst = bw_vlist(list, 2);
    CHECK(bw_schemamessages(T, &lst, &none, &e) == BW_ESCHEMA);
    list[1] = bw_vstr("A");
    CHECK(bw_schemamessages(T, &lst, &wide, &e) == BW_ESCHEMA);
    CHECK(bw_schemafinish(T, &e) == BW_OK);
    CHECK(T->nmessages == 2 && T->typebits == 1 && !T->explicitids);
    CHECK(bw_msgtype(T, 0) == 0 && bw_msgtype(T, 1) == 1);
    CHECK(bw_msgid(T, 0) == 0 && bw_msgid(T, 1) == 1);
    bw_schemarelease(T);
  }
}

/* The fingerprint follows the bits: a float bound that quantizes the same
** leaves it, sparse tiers and relative deltas change it. */
static void test_compile_fingerprint (void) {
  bw_SchemaError e;
  bw_FieldSpec f = spec("x", "float"), g;
  bw_Schema *a, *b;
  bw_Value t2[2];
  uint64_t h[4];
  f.opt[BW_OMIN] = bw_vint(0);
  f.opt[BW_OMAX] = bw_vint(1);
  f.opt[BW_ORES] = bw_vnum(0.01);
  a = build1(&f, 1, &e);
  f.opt[BW_OMAX] = bw_vnum(1.00000001);
  b = build1(&f, 1, &e);
  CHECK(a && b && a->fingerprint == b->fingerprint);
  h[0] = a ? a->fingerprint : 0;
  bw_schemarelease(a);
  bw_schemarelease(b);
  f.opt[BW_ODELTA] = bw_vstr("relative");
  a = build1(&f, 1, &e);
  CHECK(a != NULL && a->fields[0].relative && a->fields[0].ntiers == BW_NRELTIERS);
  h[1] = a ? a->fingerprint : 0;
  CHECK(h[1] != h[0]);
  bw_schemarelease(a);
  t2[0] = bw_vint(2);
  t2[1] = bw_vint(5);
  g = spec(NULL, "bool");
  f = spec("s", "sparse");
  f.opt[BW_OMAX] = bw_vint(100);
  f.opt[BW_OOF].type = BW_VSTRING;
  f.of = &g;
  a = build1(&f, 1, &e);
  f.opt[BW_OTIERS] = bw_vlist(t2, 2);
  b = build1(&f, 1, &e);
  CHECK(a && b && a->fingerprint != b->fingerprint);
  bw_schemarelease(a);
  bw_schemarelease(b);
  f = spec("a", "angle");
  f.opt[BW_OBITS] = bw_vint(10);
  a = build1(&f, 1, &e);
  f.opt[BW_OUNIT] = bw_vstr("deg");
  b = build1(&f, 1, &e);
  CHECK(a && b && a->fields[0].dmax > 6.28 && a->fields[0].dmax < 6.29);
  CHECK(a && b && b->fields[0].dmax == 360 && a->fingerprint != b->fingerprint);
  bw_schemarelease(a);
  bw_schemarelease(b);
}

/* }========================================================== */

/* FNV-1a as the names index hashed before it had a seed: the hash a file
** could aim at. */
static uint32_t plainfnv (const char *s, size_t len) {
  uint32_t h = 2166136261u;  /* scope 0: the first type's fields */
  size_t i;
  for (i = 0; i < len; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
  return h;
}

#define NCRAFTED 3000

/* Names whose plain hashes agree in their low 13 bits (the slot of an
** index of 8192) fill one run of slots under the plain hash: each lookup
** walks them all. The index's seed and mixing scatter them; the longest
** walk from a name's home slot to its entry stays short, and every name,
** enum value and type is found by name. */
static void test_names_index (void) {
  static char names[NCRAFTED][12];
  static bw_FieldSpec fs[NCRAFTED + 1];
  static bw_Value vals[1000];
  static char vnames[1000][8];
  bw_SchemaError e;
  bw_Schema *S;
  uint32_t i, n = 0, worst = 0;
  uint64_t k;
  for (k = 0; n < NCRAFTED; k++) {
    int len = snprintf(names[n], sizeof(names[n]), "f%lx", (unsigned long)k);
    if ((plainfnv(names[n], (size_t)len) & 8191) == 0) n++;
  }
  for (i = 0; i < NCRAFTED; i++) fs[i] = spec(names[i], "bool");
  for (i = 0; i < 1000; i++) {
    snprintf(vnames[i], sizeof(vnames[i]), "v%u", (unsigned)i);
    vals[i] = bw_vstr(vnames[i]);
  }
  fs[NCRAFTED] = spec("e", "enum");
  fs[NCRAFTED].opt[BW_OVALUES] = bw_vlist(vals, 1000);
  S = build1(fs, NCRAFTED + 1, &e);
  CHECK(S != NULL);
  if (S == NULL) return;
  CHECK(S->index != NULL && S->indexcap >= 2 * (NCRAFTED + 1002));
  for (i = 0; S->index != NULL && i < S->indexcap; i++) {
    const bw_NameEntry *en = &S->index[i];
    uint32_t at;
    if (en->name == BW_NONE) continue;
    at = (uint32_t)(bw_nameslot(S, S->index, S->indexcap, en->scope,
                                S->names[en->name], S->namelens[en->name])
                    - S->index);
    CHECK(at == i);
  }
  /* the walk from each home: the run of full slots before its entry */
  for (i = 0; S->index != NULL && i < S->indexcap; i++) {
    uint32_t run = 0;
    while (run < S->indexcap
           && S->index[(i + run) & (S->indexcap - 1)].name != BW_NONE)
      run++;
    if (run > worst) worst = run;
  }
  CHECK(worst < 64);
  for (i = 0; i < NCRAFTED; i++) {
    const bw_Field *f = bw_fieldnamed(S, 0, names[i], strlen(names[i]));
    CHECK(f != NULL && f == &S->fields[S->types[0].first + i]);
  }
  CHECK(bw_fieldnamed(S, 0, "nope", 4) == NULL);
  for (i = 0; i < 1000; i++)
    CHECK(bw_enumvalue(S, &S->fields[S->types[0].first + NCRAFTED], vnames[i],
                       strlen(vnames[i])) == i);
  CHECK(bw_enumvalue(S, &S->fields[S->types[0].first + NCRAFTED], "v1000", 5)
        == BW_NONE);
  CHECK(bw_schemafind(S, "T", 1) == 0 && bw_schemafind(S, "U", 1) == BW_NONE);
  bw_schemarelease(S);
}

int main (void) {
  test_seal_sizes();
  test_seal_shrinks();
  test_fingerprint();
  test_recursion_refused();
  test_refcount();
  test_huge_array_unbounded();
  test_tiered_roundtrip();
  test_tiered_errors();
  test_quat();
  test_compile_record();
  test_compile_errors();
  test_compile_bounds();
  test_compile_zero_bits();
  test_compile_limits();
  test_compile_retry();
  test_compile_null();
  test_compile_messages();
  test_compile_fingerprint();
  test_names_index();
  return check_summary("test_schema");
}
