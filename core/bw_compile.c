/*
** bw_compile.c - the schema compiler: descriptions checked and built
** See LICENSE for copyright and terms.
*/

/*
** Every rule about a description lives here, once: kinds and the options
** each takes, ranges, float32 quantizers, tiers, encodings, enums, defaults,
** versions, names, type references, message ids and the size limits. A
** host language only turns its tables into bw_FieldSpecs (bindings/
** lbw_compile.c for Lua); a C program builds the same specs by hand. Errors
** name the type, the field path and the reason.
*/

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "bw_blob.h"
#include "bw_schema.h"


const char *const bw_optionnames[BW_NOPTIONS + 1] = {
  "min", "max", "res", "clamp", "bits", "count", "of", "values", "magic",
  "encoding", "tiers", "unit", "delta", "ctype", "optional", "default",
  "since", "removed", NULL
};

int bw_optionindex (const char *k, size_t len) {
  int i;
  for (i = 0; i < BW_NOPTIONS; i++)
    if (strlen(bw_optionnames[i]) == len && memcmp(bw_optionnames[i], k, len) == 0)
      return i;
  return -1;
}

#define O(x)    (1u << BW_O##x)
#define COMMON  (O(OPTIONAL) | O(DEFAULT) | O(SINCE) | O(REMOVED))
#define KVECTOR BW_NKINDS   /* sugar: a fixed array of quantized floats */

/* Options each kind takes besides the common ones. */
static const unsigned kindopts[BW_NKINDS + 1] = {
  /* int */     O(MIN) | O(MAX) | O(CLAMP) | O(CTYPE),
  /* uint */    O(BITS) | O(CTYPE),
  /* bool */    0,
  /* float */   O(MIN) | O(MAX) | O(RES) | O(CLAMP) | O(DELTA) | O(TIERS),
  /* float32 */ 0,
  /* float64 */ 0,
  /* enum */    O(VALUES) | O(CTYPE),
  /* string */  O(MAX),
  /* bytes */   O(MAX) | O(MIN) | O(COUNT),
  /* array */   O(OF) | O(MAX) | O(MIN) | O(COUNT),
  /* struct */  0,
  /* align */   0,
  /* check */   O(MAGIC),
  /* sparse */  O(OF) | O(MAX) | O(ENCODING) | O(TIERS),
  /* quat */    O(BITS) | O(DELTA) | O(TIERS),
  /* tiered */  O(TIERS) | O(MIN) | O(MAX) | O(CTYPE),
  /* angle */   O(BITS) | O(UNIT) | O(DELTA) | O(TIERS),
  /* vector */  O(MIN) | O(MAX) | O(RES) | O(COUNT) | O(CLAMP) | O(DELTA)
                | O(TIERS)
};

static const char *const encodingnames[] = {
  "mask", "index", "relative", "auto", NULL
};
/* the article's relative-index tiers: +1, 2..5, 6..13, ... 62..125 */
static const uint8_t articletiers[] = { 0, 2, 3, 4, 5, 6 };
static const uint8_t reltiers[] = BW_RELTIERS;

#define PI2  6.283185307179586


/* {===================== build state ===================== */

typedef struct Entry { uint32_t scope, name, value; } Entry;

typedef struct bw_Build {
  Entry   *hash;        /* open addressing: names by (scope, bytes) */
  uint32_t hcap, hused;
  uint32_t total;       /* fields, elements and enum values so far */
  uint32_t type;        /* the type begun, BW_NONE before the first */
  uint32_t next, end;   /* its next field slot and the end of them */
  uint32_t nbegun;
  uint32_t scopes;      /* fresh scopes for enum value sets */
  uint8_t *begun;
} bw_Build;

#define TYPESCOPE  UINT32_C(0xFFFFFFFF)

void bw_buildfree (bw_Schema *S) {
  if (S->build == NULL) return;
  free(S->build->hash);
  free(S->build->begun);
  free(S->build);
  S->build = NULL;
}

static bw_Build *getbuild (bw_Schema *S) {
  if (S->build == NULL) {
    S->build = (bw_Build *)calloc(1, sizeof(bw_Build));
    if (S->build != NULL) {
      S->build->type = BW_NONE;
      S->build->scopes = S->ntypes;
    }
  }
  return S->build;
}

static uint32_t hashbytes (uint32_t scope, const char *s, size_t len) {
  uint32_t h = 2166136261u ^ scope;
  size_t i;
  for (i = 0; i < len; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
  return h;
}

static int rehash (bw_Build *B, const bw_Schema *S) {
  uint32_t i, ncap = B->hcap ? B->hcap * 2 : 64;
  Entry *nh;
  if (ncap < B->hcap) return 0;
  nh = (Entry *)malloc((size_t)ncap * sizeof(Entry));
  if (nh == NULL) return 0;
  for (i = 0; i < ncap; i++) nh[i].name = BW_NONE;
  for (i = 0; i < B->hcap; i++) {
    Entry *o = &B->hash[i];
    uint32_t j;
    if (o->name == BW_NONE) continue;
    j = hashbytes(o->scope, S->names[o->name], S->namelens[o->name]) & (ncap - 1);
    while (nh[j].name != BW_NONE) j = (j + 1) & (ncap - 1);
    nh[j] = *o;
  }
  free(B->hash);
  B->hash = nh;
  B->hcap = ncap;
  return 1;
}

/* The entry for (scope, s) or the empty slot where it goes; NULL without
** memory. */
static Entry *lookup (bw_Build *B, const bw_Schema *S, uint32_t scope,
                      const char *s, size_t len) {
  uint32_t j;
  if (B->hused + 1 > B->hcap / 2 && !rehash(B, S)) return NULL;
  j = hashbytes(scope, s, len) & (B->hcap - 1);
  for (;;) {
    Entry *e = &B->hash[j];
    if (e->name == BW_NONE) return e;
    if (e->scope == scope && S->namelens[e->name] == len
        && memcmp(S->names[e->name], s, len) == 0)
      return e;
    j = (j + 1) & (B->hcap - 1);
  }
}

/* }========================================================== */


/* {===================== messages ===================== */

typedef struct Ctx {
  bw_Schema *S;
  bw_Build  *B;
  bw_SchemaError  *e;
  char       path[160];
} Ctx;

static bw_Status failv (bw_SchemaError *e, const char *path, const char *fmt,
                        va_list ap) {
  int n = 0;
  if (e == NULL) return BW_ESCHEMA;
  if (path != NULL && path[0] != '\0')
    n = snprintf(e->msg, sizeof(e->msg), "%s: ", path);
  if (n < 0 || (size_t)n >= sizeof(e->msg)) n = 0;
  vsnprintf(e->msg + n, sizeof(e->msg) - (size_t)n, fmt, ap);
  return BW_ESCHEMA;
}

static bw_Status errorat (bw_SchemaError *e, const char *path, const char *fmt, ...) {
  va_list ap;
  bw_Status st;
  va_start(ap, fmt);
  st = failv(e, path, fmt, ap);
  va_end(ap);
  return st;
}

/* Report at the current path; returns 0 so checks can 'return fail(..)'. */
static int fail (Ctx *x, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  failv(x->e, x->path, fmt, ap);
  va_end(ap);
  return 0;
}

static int nomem (Ctx *x) { return fail(x, "not enough memory"); }

/* 'v' as Lua's tostring would write it. */
typedef struct Txt { char s[72]; } Txt;

static Txt text (const bw_Value *v) {
  Txt t;
  switch (v->type) {
    case BW_VINT: snprintf(t.s, sizeof(t.s), "%" PRId64, v->i); break;
    case BW_VFLOAT:
      if (isinf(v->d)) snprintf(t.s, sizeof(t.s), v->d > 0 ? "inf" : "-inf");
      else if (isnan(v->d)) snprintf(t.s, sizeof(t.s), signbit(v->d) ? "-nan" : "nan");
      else {
        snprintf(t.s, sizeof(t.s), "%.14g", v->d);
        if (strspn(t.s, "-0123456789") == strlen(t.s)) strcat(t.s, ".0");
      }
      break;
    case BW_VBOOL: snprintf(t.s, sizeof(t.s), "%s", v->i ? "true" : "false"); break;
    case BW_VSTRING:
      snprintf(t.s, sizeof(t.s), "%.*s", (int)(v->len < 64 ? v->len : 64), v->s);
      break;
    case BW_VNONE: snprintf(t.s, sizeof(t.s), "nil"); break;
    case BW_VLIST: snprintf(t.s, sizeof(t.s), "table"); break;
    default: snprintf(t.s, sizeof(t.s), "%s", v->s ? v->s : "?"); break;
  }
  return t;
}

/* The Lua type name of 'v'. */
static const char *tname (const bw_Value *v) {
  switch (v->type) {
    case BW_VNONE: return "nil";
    case BW_VINT: case BW_VFLOAT: return "number";
    case BW_VBOOL: return "boolean";
    case BW_VSTRING: return "string";
    case BW_VLIST: return "table";
    default: return v->s ? v->s : "?";
  }
}

static void pathadd (Ctx *x, const char *s, size_t len) {
  size_t n = strlen(x->path);
  if (len > 100) len = 100;
  snprintf(x->path + n, sizeof(x->path) - n, "%.*s", (int)len, s);
}

static int isstr (const bw_Value *v, const char *s) {
  return v->type == BW_VSTRING && v->len == strlen(s)
         && memcmp(v->s, s, v->len) == 0;
}

/* }========================================================== */


/* {===================== option checks ===================== */

/* Integer option 'k' in [lo, hi] (each bound only when 'has' says). */
static int getint (Ctx *x, const bw_FieldSpec *f, int k, int64_t *out,
                   int haslo, int64_t lo, int hashi, int64_t hi) {
  const bw_Value *v = &f->opt[k];
  if (v->type != BW_VINT) {
    if (v->type == BW_VNONE)
      return fail(x, "'%s' must be an integer, got nothing", bw_optionnames[k]);
    return fail(x, "'%s' must be an integer, got %s", bw_optionnames[k],
                v->type == BW_VFLOAT ? text(v).s : tname(v));
  }
  if ((haslo && v->i < lo) || (hashi && v->i > hi)) {
    char l[24] = "-inf", h[24] = "inf";
    if (haslo) snprintf(l, sizeof(l), "%" PRId64, lo);
    if (hashi) snprintf(h, sizeof(h), "%" PRId64, hi);
    return fail(x, "'%s' = %" PRId64 " outside [%s, %s]", bw_optionnames[k],
                v->i, l, h);
  }
  *out = v->i;
  return 1;
}

static int getbool (Ctx *x, const bw_FieldSpec *f, int k, uint8_t *out) {
  const bw_Value *v = &f->opt[k];
  if (v->type == BW_VNONE) return 1;
  if (v->type != BW_VBOOL)
    return fail(x, "'%s' must be a boolean", bw_optionnames[k]);
  *out = (uint8_t)v->i;
  return 1;
}

static int isnum (const bw_Value *v) {
  return v->type == BW_VINT || v->type == BW_VFLOAT;
}

static double num (const bw_Value *v) {
  return v->type == BW_VINT ? (double)v->i : v->d;
}

/* 1 and '*out' = x in float32, or 0 when x is beyond float32's range */
static int tof32 (double d, double *out) {
  if (!(d >= -3.4028234663852886e38 && d <= 3.4028234663852886e38)) return 0;
  *out = (double)(float)d;
  return 1;
}

/* ctype: the C integer type of an int, uint, enum or tiered field in blobs
** (bw_blob.h), instead of the smallest that holds its range; it must hold
** the range (a 64-bit uint only uint64). The wire does not change. */
static int fillctype (Ctx *x, bw_Field *F, const bw_FieldSpec *f) {
  static const int64_t lo[] = { 0, INT8_MIN, 0, INT16_MIN, 0, INT32_MIN, 0,
                                INT64_MIN };
  static const int64_t hi[] = { UINT8_MAX, INT8_MAX, UINT16_MAX, INT16_MAX,
                                UINT32_MAX, INT32_MAX, INT64_MAX, INT64_MAX };
  const bw_Value *v = &f->opt[BW_OCTYPE];
  int k;
  for (k = 0; bw_blobctypenames[k] != NULL && !isstr(v, bw_blobctypenames[k]);
       k++)
    ;
  if (bw_blobctypenames[k] == NULL)
    return fail(x, "unknown ctype '%s' (int8, uint8, ... int64, uint64)",
                text(v).s);
  if (F->min < lo[k] || F->max > hi[k]
      || (F->kind == BW_KUINT && F->nbits == 64 && k != BW_CU64))
    return fail(x, "ctype %s cannot hold the field's range", text(v).s);
  F->ctype = (uint8_t)(k + 1);
  return 1;
}

/* A quantized float: min, max, res, clamp (FLOAT and vector elements). */
static int fillfloat (Ctx *x, bw_Field *F, const bw_FieldSpec *f) {
  static const int keys[3] = { BW_OMIN, BW_OMAX, BW_ORES };
  const bw_Value *mn = &f->opt[BW_OMIN], *mx = &f->opt[BW_OMAX];
  const bw_Value *rs = &f->opt[BW_ORES];
  double a, b, r, fa, fb, fr, span;
  int i;
  for (i = 0; i < 3; i++) {
    const bw_Value *v = &f->opt[keys[i]];
    if (!isnum(v) || !isfinite(num(v)))
      return fail(x, "'%s' must be a finite number, got %s",
                  bw_optionnames[keys[i]], text(v).s);
  }
  a = num(mn); b = num(mx); r = num(rs);
  if (!(a < b)) return fail(x, "min %s >= max %s", text(mn).s, text(mx).s);
  if (!(r > 0)) return fail(x, "res must be > 0, got %s", text(rs).s);
  /* the wire quantizes in float32 (DESIGN.md): the range must survive it */
  if (!(tof32(a, &fa) && tof32(b, &fb) && tof32(r, &fr) && fa < fb && fr > 0
        && tof32(fb - fa, &span))
      || bw_qfloatinit(&F->q, a, b, r) != BW_OK) {
    Txt ta = text(mn), tb = text(mx), tr = text(rs);
    return fail(x, "min %s, max %s, res %s do not fit float32", ta.s, tb.s,
                tr.s);
  }
  if (!getbool(x, f, BW_OCLAMP, &F->clamp)) return 0;
  F->kind = BW_KFLOAT;
  F->res = r;
  /* decoded values are float32: let them encode again at the ends */
  F->dmin = fmin(a, (double)bw_qfloatdecode(&F->q, 0));
  F->dmax = fmax(b, (double)bw_qfloatdecode(&F->q, F->q.miv));
  return 1;
}

/* A list of 1..maxn tier widths in [lo, 32] into F->tierbits. */
static int filltiers (Ctx *x, bw_Field *F, const bw_Value *v, unsigned maxn,
                      int64_t lo) {
  size_t i;
  if (v->type != BW_VLIST || !v->plain || v->len == 0 || v->len > maxn)
    return fail(x, "'tiers' must be a list of 1 to %u bit widths", maxn);
  for (i = 0; i < v->len; i++) {
    const bw_Value *b = &v->items[i];
    if (b->type != BW_VINT || b->i < lo || b->i > 32)
      return fail(x, "tier %u: width must be an integer in [%" PRId64 ", 32]",
                  (unsigned)i + 1, lo);
    F->tierbits[i] = (uint8_t)b->i;
  }
  F->ntiers = (uint8_t)v->len;
  return 1;
}

/* delta = "relative" (+ tiers) on FLOAT, QUAT and ANGLE fields. */
static int filldelta (Ctx *x, bw_Field *F, const bw_FieldSpec *f) {
  const bw_Value *d = &f->opt[BW_ODELTA], *t = &f->opt[BW_OTIERS];
  if (d->type == BW_VNONE) {
    if (t->type != BW_VNONE) return fail(x, "'tiers' needs delta = \"relative\"");
    return 1;
  }
  if (!isstr(d, "relative"))
    return fail(x, "'delta' must be \"relative\", got %s", text(d).s);
  if (F->kind == BW_KQUAT && F->nbits > 22)
    return fail(x, "a relative quat needs bits <= 22 (float32 holds no finer "
                "steps)");
  F->relative = 1;
  if (t->type == BW_VNONE) {
    memcpy(F->tierbits, reltiers, sizeof(reltiers));
    F->ntiers = (uint8_t)sizeof(reltiers);
    return 1;
  }
  return filltiers(x, F, t, BW_MAXTIERS, 0);   /* width 0: one value */
}

/* Count options: fixed 'count', or 'max' with optional 'min' (0). */
static int fillcount (Ctx *x, bw_Field *F, const bw_FieldSpec *f) {
  if (f->opt[BW_OCOUNT].type != BW_VNONE) {
    if (f->opt[BW_OMAX].type != BW_VNONE || f->opt[BW_OMIN].type != BW_VNONE)
      return fail(x, "give either 'count' or 'max' (and 'min'), not both");
    if (!getint(x, f, BW_OCOUNT, &F->min, 1, 0, 0, 0)) return 0;
    F->max = F->min;
    F->fixed = 1;
    return 1;
  }
  if (f->opt[BW_OMAX].type == BW_VNONE) return fail(x, "needs 'max' or 'count'");
  if (!getint(x, f, BW_OMAX, &F->max, 1, 0, 0, 0)) return 0;
  F->min = 0;
  if (f->opt[BW_OMIN].type != BW_VNONE
      && !getint(x, f, BW_OMIN, &F->min, 1, 0, 0, 0))
    return 0;
  if (F->min > F->max)
    return fail(x, "min %" PRId64 " > max %" PRId64, F->min, F->max);
  return 1;
}

static int count (Ctx *x, uint32_t n) {
  if (n > BW_MAXFIELDS - x->B->total)
    return fail(x, "more than %d fields and enum values in all (a shared "
                "table counts each time it is used)", BW_MAXFIELDS);
  x->B->total += n;
  return 1;
}

static uint32_t addname (Ctx *x, const char *s, size_t len) {
  uint32_t nm = bw_schemaaddname(x->S, s, len);
  if (nm == BW_NONE) nomem(x);
  return nm;
}

static int fillenum (Ctx *x, bw_Field *F, const bw_FieldSpec *f) {
  const bw_Value *v = &f->opt[BW_OVALUES];
  uint32_t scope, i;
  if (v->type != BW_VLIST || v->len == 0)
    return fail(x, "'values' must be a non-empty list of strings");
  if (!count(x, v->len > BW_MAXFIELDS ? BW_MAXFIELDS + 1 : (uint32_t)v->len))
    return 0;
  scope = x->B->scopes++;
  for (i = 0; i < v->len; i++) {
    const bw_Value *s = &v->items[i];
    Entry *en;
    uint32_t nm;
    if (s->type != BW_VSTRING) return fail(x, "enum value %u is not a string", i + 1);
    en = lookup(x->B, x->S, scope, s->s, s->len);
    if (en == NULL) return nomem(x);
    if (en->name != BW_NONE) return fail(x, "duplicate enum value '%s'", text(s).s);
    nm = addname(x, s->s, s->len);
    if (nm == BW_NONE) return 0;
    en->scope = scope; en->name = nm; en->value = i;
    x->B->hused++;
    if (i == 0) F->ref = nm;
  }
  if (!v->plain) return fail(x, "'values' must be a plain list");
  F->min = 0;
  F->max = (int64_t)v->len - 1;
  return 1;
}

/* The default 'd' of field F (kind and bounds set); stores it. */
static int filldefault (Ctx *x, bw_Field *F, const bw_FieldSpec *f,
                        const char *kindname) {
  const bw_Value *d = &f->opt[BW_ODEFAULT];
  int ok = 0;
  switch (F->kind) {
    case BW_KINT: case BW_KTIERED:
      ok = d->type == BW_VINT && d->i >= F->min && d->i <= F->max;
      F->def.i = d->i;
      break;
    case BW_KUINT:
      ok = d->type == BW_VINT
           && (F->nbits == 64 || (d->i >= 0 && (d->i >> F->nbits) == 0));
      F->def.i = d->i;
      break;
    case BW_KBOOL:
      ok = d->type == BW_VBOOL;
      F->def.i = d->i;
      break;
    case BW_KFLOAT:
      ok = isnum(d) && isfinite(num(d)) && num(d) >= num(&f->opt[BW_OMIN])
           && num(d) <= num(&f->opt[BW_OMAX]);
      F->def.d = ok ? num(d) : 0;
      break;
    case BW_KFLOAT32: case BW_KFLOAT64:
      ok = isnum(d);
      F->def.d = ok ? num(d) : 0;
      break;
    case BW_KANGLE:
      ok = isnum(d) && isfinite(num(d));
      F->def.d = ok ? num(d) : 0;
      break;
    case BW_KENUM: {
      Entry *en;
      if (d->type != BW_VSTRING) break;
      en = lookup(x->B, x->S, x->B->scopes - 1, d->s, d->len);
      if (en == NULL) return nomem(x);
      if (en->name != BW_NONE) {
        ok = 1;
        F->def.s = F->ref + en->value;
      }
      break;
    }
    case BW_KSTRING: case BW_KBYTES:
      if (d->type != BW_VSTRING) break;
      ok = F->kind == BW_KSTRING
           ? d->len <= (uint64_t)F->max && bw_utf8valid(d->s, d->len)
           : d->len >= (uint64_t)F->min && d->len <= (uint64_t)F->max;
      if (ok) {
        F->def.s = addname(x, d->s, d->len);
        if (F->def.s == BW_NONE) return 0;
      }
      break;
    default:
      return fail(x, "a %s field cannot have a default", kindname);
  }
  if (!ok) return fail(x, "default %s does not fit the field", text(d).s);
  F->hasdefault = 1;
  return 1;
}

/* }========================================================== */


/* {===================== fields ===================== */

static int fillfield (Ctx *x, uint32_t fi, const bw_FieldSpec *f, int element,
                      unsigned depth);

/* The element 'of' of an ARRAY or SPARSE, into a new field slot. */
static int fillelement (Ctx *x, bw_Field *F, const bw_FieldSpec *f,
                        const char *kindname, unsigned depth) {
  size_t n = strlen(x->path);
  uint32_t e;
  int ok;
  if (f->opt[BW_OOF].type == BW_VNONE) return fail(x, "%s needs 'of'", kindname);
  if (f->of == NULL) return fail(x, "'of' must be a type name or a field");
  pathadd(x, "[]", 2);
  if (depth >= BW_MAXDEPTH)
    return fail(x, "nesting deeper than %d levels", BW_MAXDEPTH);
  if (!count(x, 1)) return 0;
  e = bw_schemaaddfields(x->S, 1);
  if (e == BW_NONE) return nomem(x);
  ok = fillfield(x, e, f->of, 1, depth + 1);
  x->path[n] = '\0';
  F->ref = e;
  return ok;
}

/* Kind index of the name 'k' (KVECTOR for vector), or -1. */
static int findkind (const bw_Value *k) {
  int i;
  for (i = 0; i < BW_NKINDS; i++)
    if (i != BW_KSTRUCT && isstr(k, bw_kindnames[i])) return i;
  if (isstr(k, "vector")) return KVECTOR;
  return -1;
}

/* Check spec 'f' and fill S->fields[fi]. 'element': an array/sparse
** element, which has no name and is never optional or versioned. */
static int fillfield (Ctx *x, uint32_t fi, const bw_FieldSpec *f, int element,
                      unsigned depth) {
  bw_Schema *S = x->S;
  bw_Field F;
  const bw_Value *kv = &f->kind;
  char kindname[72];
  int kind, i;
  unsigned opts;
  memset(&F, 0, sizeof(F));
  F.name = BW_NONE;
  F.ref = BW_NONE;
  F.removed = UINT32_MAX;
  if (!element) {
    const bw_Value *nv = &f->name;
    if (nv->type == BW_VNONE && (isstr(kv, "align") || isstr(kv, "check")))
      ;  /* { "align" }: no name */
    else if (nv->type != BW_VSTRING || nv->len == 0)
      return fail(x, "field name (first entry) must be a non-empty string");
    else {
      Entry *en;
      pathadd(x, ".", 1);
      pathadd(x, nv->s, nv->len);
      if (isstr(kv, "align") || isstr(kv, "check"))
        return fail(x, "%s takes no name: write { \"%s\" }", kv->s, kv->s);
      en = lookup(x->B, S, x->B->type, nv->s, nv->len);
      if (en == NULL) return nomem(x);
      if (en->name != BW_NONE) return fail(x, "duplicate field name");
      F.name = addname(x, nv->s, nv->len);
      if (F.name == BW_NONE) return 0;
      en->scope = x->B->type; en->name = F.name; en->value = fi;
      x->B->hused++;
    }
  }
  if (kv->type != BW_VSTRING)
    return fail(x, "field type must be a string, got %s", tname(kv));
  snprintf(kindname, sizeof(kindname), "%s", text(kv).s);
  kind = findkind(kv);
  if (kind < 0) {
    Entry *en = lookup(x->B, S, TYPESCOPE, kv->s, kv->len);
    if (en == NULL) return nomem(x);
    if (en->name == BW_NONE) return fail(x, "unknown type '%s'", kindname);
    kind = BW_KSTRUCT;
    F.ref = en->value;
  }
  opts = kindopts[kind] | COMMON;
  if (f->unknown != NULL)
    return fail(x, "unknown option '%.*s' for type %s",
                (int)(f->unknownlen < 64 ? f->unknownlen : 64), f->unknown,
                kindname);
  for (i = 0; i < BW_NOPTIONS; i++)
    if (f->opt[i].type != BW_VNONE && !(opts & (1u << i)))
      return fail(x, "unknown option '%s' for type %s", bw_optionnames[i],
                  kindname);
  if (element && (f->opt[BW_OOPTIONAL].type != BW_VNONE
                  || f->opt[BW_OSINCE].type != BW_VNONE
                  || f->opt[BW_OREMOVED].type != BW_VNONE))
    return fail(x, "array elements cannot be optional or versioned");
  if (element && (kind == BW_KALIGN || kind == BW_KCHECK))
    return fail(x, "%s cannot be an element", kindname);
  F.kind = (uint8_t)(kind == KVECTOR ? BW_KARRAY : kind);
  switch (kind) {
    case BW_KINT:
      if (!getint(x, f, BW_OMIN, &F.min, 0, 0, 0, 0)
          || !getint(x, f, BW_OMAX, &F.max, 0, 0, 0, 0))
        return 0;
      if (F.min > F.max)
        return fail(x, "min %" PRId64 " > max %" PRId64, F.min, F.max);
      if (!getbool(x, f, BW_OCLAMP, &F.clamp)) return 0;
      break;
    case BW_KUINT: {
      int64_t b;
      if (!getint(x, f, BW_OBITS, &b, 1, 1, 1, 64)) return 0;
      F.nbits = (unsigned)b;
      F.max = b < 64 ? (int64_t)((UINT64_C(1) << b) - 1) : INT64_MAX;
      break;
    }
    case BW_KFLOAT:
      if (!fillfloat(x, &F, f) || !filldelta(x, &F, f)) return 0;
      break;
    case BW_KENUM:
      if (!fillenum(x, &F, f)) return 0;
      break;
    case BW_KSTRING:
      if (!getint(x, f, BW_OMAX, &F.max, 1, 0, 0, 0)) return 0;
      break;
    case BW_KBYTES:
      if (!fillcount(x, &F, f)) return 0;
      break;
    case BW_KARRAY:
      if (!fillcount(x, &F, f) || !fillelement(x, &F, f, kindname, depth))
        return 0;
      break;
    case KVECTOR: {
      bw_Field E;
      uint32_t e;
      if (f->opt[BW_OCOUNT].type == BW_VNONE)
        return fail(x, "vector needs 'count' (dimensions)");
      if (!getint(x, f, BW_OCOUNT, &F.min, 1, 0, 0, 0)) return 0;
      F.max = F.min;
      F.fixed = 1;
      memset(&E, 0, sizeof(E));
      E.name = E.ref = BW_NONE;
      E.removed = UINT32_MAX;
      if (!fillfloat(x, &E, f) || !filldelta(x, &E, f)) return 0;
      if (!count(x, 1)) return 0;
      e = bw_schemaaddfields(S, 1);
      if (e == BW_NONE) return nomem(x);
      S->fields[e] = E;
      F.ref = e;
      break;
    }
    case BW_KCHECK:
      F.magic = BW_CHECKMAGIC;
      if (f->opt[BW_OMAGIC].type != BW_VNONE) {
        int64_t m;
        if (!getint(x, f, BW_OMAGIC, &m, 1, 0, 1, 0xFFFFFFFF)) return 0;
        F.magic = (uint32_t)m;
      }
      break;
    case BW_KSPARSE: {
      const bw_Value *en = &f->opt[BW_OENCODING], *t = &f->opt[BW_OTIERS];
      if (f->opt[BW_OOF].type == BW_VNONE) return fail(x, "sparse needs 'of'");
      if (!getint(x, f, BW_OMAX, &F.max, 1, 1, 1, 0xFFFFFFFE)) return 0;
      F.encoding = BW_SPAUTO;
      if (en->type != BW_VNONE) {
        int k;
        for (k = 0; encodingnames[k] != NULL && !isstr(en, encodingnames[k]); k++)
          ;
        if (encodingnames[k] == NULL)
          return fail(x, "unknown encoding '%s' (mask, index, relative or auto)",
                      text(en).s);
        F.encoding = (uint8_t)k;
      }
      if (isstr(t, "article")) {
        memcpy(F.tierbits, articletiers, sizeof(articletiers));
        F.ntiers = (uint8_t)sizeof(articletiers);
      }
      else if (t->type != BW_VNONE && !filltiers(x, &F, t, BW_MAXTIERS - 1, 0))
        return 0;
      /* sparse tiers end in a catch-all up to the sentinel */
      if (F.ntiers > 0) F.tierbits[F.ntiers++] = 63;
      if (!fillelement(x, &F, f, kindname, depth)) return 0;
      break;
    }
    case BW_KQUAT: {
      int64_t b;
      if (!getint(x, f, BW_OBITS, &b, 1, 2, 1, 31)) return 0;
      bw_quatinit(&F.q, (unsigned)b);
      F.nbits = F.q.nbits;
      if (!filldelta(x, &F, f)) return 0;
      break;
    }
    case BW_KTIERED: {
      uint64_t span = 0;
      unsigned k;
      if (!filltiers(x, &F, &f->opt[BW_OTIERS], BW_MAXTIERS, 0)) return 0;
      if (f->opt[BW_OMIN].type != BW_VNONE
          && !getint(x, f, BW_OMIN, &F.min, 0, 0, 0, 0))
        return 0;
      for (k = 0; k < F.ntiers; k++) span += UINT64_C(1) << F.tierbits[k];
      /* the last value the tiers reach, held at INT64_MAX */
      {   /* in unsigned arithmetic: min may be INT64_MIN */
        uint64_t room = (uint64_t)INT64_MAX - (uint64_t)F.min;
        F.max = room < span - 1 ? INT64_MAX : F.min + (int64_t)(span - 1);
      }
      if (f->opt[BW_OMAX].type != BW_VNONE) {
        int64_t mx;
        if (!getint(x, f, BW_OMAX, &mx, 0, 0, 0, 0)) return 0;
        if (mx > F.max)
          return fail(x, "max %" PRId64 " beyond what the tiers cover (%" PRId64 ")",
                      mx, F.max);
        if (mx < F.min)
          return fail(x, "min %" PRId64 " > max %" PRId64, F.min, mx);
        F.max = mx;
      }
      break;
    }
    case BW_KANGLE: {
      const bw_Value *u = &f->opt[BW_OUNIT];
      int64_t b;
      if (!getint(x, f, BW_OBITS, &b, 1, 1, 1, 32)) return 0;
      F.nbits = (unsigned)b;
      F.dmin = 0;
      if (u->type == BW_VNONE || isstr(u, "rad")) F.dmax = PI2;
      else if (isstr(u, "deg")) F.dmax = 360;
      else return fail(x, "unknown unit '%s' (rad or deg)", text(u).s);
      if (!filldelta(x, &F, f)) return 0;
      break;
    }
    default: break;
  }
  switch (F.kind) {
    case BW_KINT: case BW_KENUM: case BW_KSTRING: case BW_KBYTES:
    case BW_KARRAY: case BW_KSPARSE: case BW_KTIERED:
      F.nbits = bw_bitsrequired(F.min, F.max);
      break;
    default: break;
  }
  if (f->opt[BW_OCTYPE].type != BW_VNONE && !fillctype(x, &F, f)) return 0;
  if (!getbool(x, f, BW_OOPTIONAL, &F.optional)) return 0;
  if ((kind == BW_KALIGN || kind == BW_KCHECK)
      && (F.optional || f->opt[BW_ODEFAULT].type != BW_VNONE))
    return fail(x, "%s cannot be optional or have a default", kindname);
  if (f->opt[BW_OSINCE].type != BW_VNONE) {
    int64_t v;
    if (!getint(x, f, BW_OSINCE, &v, 1, 0, 1, 0xFFFFFFFE)) return 0;
    F.since = (uint32_t)v;
  }
  if (f->opt[BW_OREMOVED].type != BW_VNONE) {
    int64_t v;
    if (!getint(x, f, BW_OREMOVED, &v, 1, 1, 1, 0xFFFFFFFE)) return 0;
    if ((uint32_t)v <= F.since)
      return fail(x, "removed %" PRId64 " must come after since %u", v, F.since);
    F.removed = (uint32_t)v;
  }
  if (f->opt[BW_ODEFAULT].type != BW_VNONE
      && !filldefault(x, &F, f, kind == KVECTOR ? "array"
                      : bw_kindnames[F.kind]))
    return 0;
  S->fields[fi] = F;
  return 1;
}

/* }========================================================== */


/* {===================== types and the whole ===================== */

static void typepath (Ctx *x, uint32_t t) {
  snprintf(x->path, sizeof(x->path), "%s", x->S->names[x->S->types[t].name]);
}

static int initctx (Ctx *x, bw_Schema *S, bw_SchemaError *e) {
  x->S = S;
  x->e = e;
  x->path[0] = '\0';
  x->B = S->sealed ? NULL : getbuild(S);
  if (S->sealed) return fail(x, "schema already sealed");
  if (x->B == NULL) return nomem(x);
  return 1;
}

static int isident (const char *s, size_t n) {
  size_t i;
  if (n == 0 || (s[0] >= '0' && s[0] <= '9')) return 0;
  for (i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'
          || (c >= '0' && c <= '9')))
      return 0;
  }
  return 1;
}

uint32_t bw_schemadeclare (bw_Schema *S, const bw_Value *name, bw_SchemaError *e) {
  Ctx x;
  Entry *en;
  uint32_t nm, t;
  if (!initctx(&x, S, e)) return BW_NONE;
  if (name->type != BW_VSTRING || !isident(name->s, name->len)) {
    fail(&x, "type name %s must be an identifier", text(name).s);
    return BW_NONE;
  }
  if (findkind(name) >= 0 || isstr(name, "struct")) {
    fail(&x, "type name '%s' is a built-in type", text(name).s);
    return BW_NONE;
  }
  if (x.B->nbegun > 0) {
    fail(&x, "%s: types are declared before any field", text(name).s);
    return BW_NONE;
  }
  en = lookup(x.B, S, TYPESCOPE, name->s, name->len);
  if (en == NULL) { nomem(&x); return BW_NONE; }
  if (en->name != BW_NONE) {
    fail(&x, "type '%s' declared twice", text(name).s);
    return BW_NONE;
  }
  nm = addname(&x, name->s, name->len);
  if (nm == BW_NONE) return BW_NONE;
  t = bw_schemaaddtype(S, nm);
  if (t == BW_NONE) { nomem(&x); return BW_NONE; }
  en->scope = TYPESCOPE; en->name = nm; en->value = t;
  x.B->hused++;
  x.B->scopes = S->ntypes;   /* enum scopes come after the type scopes */
  return t;
}

static int complete (Ctx *x) {
  bw_Build *B = x->B;
  if (B->type != BW_NONE && B->next != B->end) {
    typepath(x, B->type);
    return fail(x, "%u of its %u fields given",
                B->next - x->S->types[B->type].first,
                x->S->types[B->type].count);
  }
  return 1;
}

bw_Status bw_schemabegin (bw_Schema *S, uint32_t t, uint32_t nfields,
                          bw_SchemaError *e) {
  Ctx x;
  uint32_t first;
  if (!initctx(&x, S, e)) return BW_ESCHEMA;
  if (t >= S->ntypes) return fail(&x, "no type %u", t), BW_EARG;
  if (!complete(&x)) return BW_ESCHEMA;
  typepath(&x, t);
  if (x.B->begun == NULL) {
    x.B->begun = (uint8_t *)calloc(S->ntypes, 1);
    if (x.B->begun == NULL) return nomem(&x), BW_ENOMEM;
  }
  if (x.B->begun[t]) return fail(&x, "fields given twice"), BW_ESCHEMA;
  if (!count(&x, nfields)) return BW_ESCHEMA;
  first = bw_schemaaddfields(S, nfields);
  if (first == BW_NONE) return nomem(&x), BW_ENOMEM;
  x.B->begun[t] = 1;
  x.B->nbegun++;
  x.B->type = t;
  x.B->next = first;
  x.B->end = first + nfields;
  S->types[t].first = first;
  S->types[t].count = nfields;
  return BW_OK;
}

bw_Status bw_schemaaddfield (bw_Schema *S, const bw_FieldSpec *f, bw_SchemaError *e) {
  Ctx x;
  if (!initctx(&x, S, e)) return BW_ESCHEMA;
  if (x.B->type == BW_NONE || x.B->next >= x.B->end)
    return fail(&x, "no field slot left: bw_schemabegin first"), BW_EARG;
  typepath(&x, x.B->type);
  if (!fillfield(&x, x.B->next, f, 0, 0)) return BW_ESCHEMA;
  x.B->next++;
  return BW_OK;
}

bw_Status bw_schemamessages (bw_Schema *S, const bw_Value *list,
                             const bw_Value *bits, bw_SchemaError *e) {
  Ctx x;
  uint32_t n, i, need;
  if (!initctx(&x, S, e)) return BW_ESCHEMA;
  if (list->type != BW_VNONE) {
    if (list->type != BW_VLIST || !list->plain || list->len == 0
        || list->len > S->ntypes)
      return fail(&x, "'messages' must be a list of type names, each once"),
             BW_ESCHEMA;
    n = (uint32_t)list->len;
    free(S->messages);
    S->messages = (uint32_t *)malloc((size_t)n * sizeof(uint32_t));
    if (S->messages == NULL) return nomem(&x), BW_ENOMEM;
    for (i = 0; i < S->ntypes; i++) S->types[i].msgid = BW_NONE;
    for (i = 0; i < n; i++) {
      const bw_Value *v = &list->items[i];
      Entry *en;
      if (v->type != BW_VSTRING)
        return fail(&x, "messages[%u] must be a type name", i + 1), BW_ESCHEMA;
      en = lookup(x.B, S, TYPESCOPE, v->s, v->len);
      if (en == NULL) return nomem(&x), BW_ENOMEM;
      if (en->name == BW_NONE)
        return fail(&x, "messages[%u]: unknown type '%s'", i + 1, text(v).s),
               BW_ESCHEMA;
      if (S->types[en->value].msgid != BW_NONE)
        return fail(&x, "messages: '%s' listed twice", text(v).s), BW_ESCHEMA;
      S->types[en->value].msgid = i;
      S->messages[i] = en->value;
    }
  }
  else {
    n = S->ntypes;
    for (i = 0; i < n; i++) S->types[i].msgid = i;
  }
  need = n > 0 ? bw_bitsrequired(0, (int64_t)n - 1) : 0;
  S->typebits = need;
  if (bits->type != BW_VNONE) {
    if (bits->type != BW_VINT || bits->i < 0 || bits->i > 32)
      return fail(&x, "'message_bits' must be an integer in [0, 32]"),
             BW_ESCHEMA;
    if ((unsigned)bits->i < need)
      return fail(&x, "message_bits %u cannot number %u messages",
                  (unsigned)bits->i, n), BW_ESCHEMA;
    S->typebits = (unsigned)bits->i;
  }
  S->nmessages = n;
  return BW_OK;
}

bw_Status bw_schemafinish (bw_Schema *S, bw_SchemaError *e) {
  Ctx x;
  uint32_t t;
  char msg[BW_ERRSIZE];
  bw_Status st;
  if (!initctx(&x, S, e)) return BW_ESCHEMA;
  if (!complete(&x)) return BW_ESCHEMA;
  for (t = 0; t < S->ntypes; t++)
    if (x.B->begun == NULL || !x.B->begun[t]) {
      typepath(&x, t);
      return fail(&x, "no fields given"), BW_ESCHEMA;
    }
  if (S->fields == NULL) {   /* no field at all: walks still index it */
    S->fields = (bw_Field *)calloc(1, sizeof(bw_Field));
    if (S->fields == NULL) return nomem(&x), BW_ENOMEM;
    S->capfields = 1;
  }
  st = bw_schemaseal(S, msg, sizeof(msg));
  if (st != BW_OK) return errorat(e, NULL, "%s", msg), st;
  bw_buildfree(S);
  return BW_OK;
}

/* }========================================================== */
