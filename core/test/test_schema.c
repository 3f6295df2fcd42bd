/*
** test_schema.c - C tests of compiled schemas and game-state encodings
** See LICENSE for copyright and terms.
*/

#include <math.h>
#include <stdlib.h>

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
  bw_schemarelease(S);
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

int main (void) {
  test_seal_sizes();
  test_fingerprint();
  test_recursion_refused();
  test_refcount();
  test_huge_array_unbounded();
  test_tiered_roundtrip();
  test_tiered_errors();
  test_quat();
  return check_summary("test_schema");
}
