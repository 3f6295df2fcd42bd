/*
** bw_compileopt.c - the schema compiler: option values checked
** See LICENSE for copyright and terms.
*/

/*
** Each option of a field spec checked and turned into its part of a
** bw_Field: integers and booleans in range, float32 quantizers, tiers,
** relative deltas, counts, ctypes, enum values and defaults.
*/

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bw_blob.h"
#include "bw_compilectx.h"
#include "bw_schema.h"


/* {===================== option names ===================== */

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

/* }========================================================== */


/* {===================== option checks ===================== */

static const uint8_t reltiers[] = BW_RELTIERS;

int bw_valueint (const bw_Value *v, int64_t *out) {
  if (v->type == BW_VINT) *out = v->i;
  else if (v->type == BW_VFLOAT && v->d == floor(v->d)
           && v->d >= -9223372036854775808.0 && v->d < 9223372036854775808.0)
    *out = (int64_t)v->d;
  else return 0;
  return 1;
}

/* Integer option 'k' in [lo, hi] (each bound only when 'has' says). */
int bw_specint (Ctx *x, const bw_FieldSpec *f, int k, int64_t *out,
                int haslo, int64_t lo, int hashi, int64_t hi) {
  const bw_Value *v = &f->opt[k];
  int64_t i;
  if (!bw_valueint(v, &i)) {
    if (v->type == BW_VNONE)
      return fail(x, "'%s' must be an integer, got nothing", bw_optionnames[k]);
    return fail(x, "'%s' must be an integer, got %s", bw_optionnames[k],
                v->type == BW_VFLOAT ? bw_valuetext(v).s : tname(v));
  }
  if ((haslo && i < lo) || (hashi && i > hi)) {
    char l[24] = "-inf", h[24] = "inf";
    if (haslo) snprintf(l, sizeof(l), "%" PRId64, lo);
    if (hashi) snprintf(h, sizeof(h), "%" PRId64, hi);
    return fail(x, "'%s' = %" PRId64 " outside [%s, %s]", bw_optionnames[k],
                i, l, h);
  }
  *out = i;
  return 1;
}

int bw_specbool (Ctx *x, const bw_FieldSpec *f, int k, uint8_t *out) {
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
int bw_specctype (Ctx *x, bw_Field *F, const bw_FieldSpec *f) {
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
                bw_valuetext(v).s);
  if (F->min < lo[k] || F->max > hi[k]
      || (F->kind == BW_KUINT && F->nbits == 64 && k != BW_CU64))
    return fail(x, "ctype %s cannot hold the field's range", bw_valuetext(v).s);
  F->ctype = (uint8_t)(k + 1);
  return 1;
}

/* A quantized float: min, max, res, clamp (FLOAT and vector elements). */
int bw_specfloat (Ctx *x, bw_Field *F, const bw_FieldSpec *f) {
  static const int keys[3] = { BW_OMIN, BW_OMAX, BW_ORES };
  const bw_Value *mn = &f->opt[BW_OMIN], *mx = &f->opt[BW_OMAX];
  const bw_Value *rs = &f->opt[BW_ORES];
  double a, b, r, fa, fb, fr, span;
  int i;
  for (i = 0; i < 3; i++) {
    const bw_Value *v = &f->opt[keys[i]];
    if (!isnum(v) || !isfinite(num(v)))
      return fail(x, "'%s' must be a finite number, got %s",
                  bw_optionnames[keys[i]], bw_valuetext(v).s);
  }
  a = num(mn); b = num(mx); r = num(rs);
  if (!(a < b))
    return fail(x, "min %s >= max %s", bw_valuetext(mn).s, bw_valuetext(mx).s);
  if (!(r > 0)) return fail(x, "res must be > 0, got %s", bw_valuetext(rs).s);
  /* the wire quantizes in float32 (DESIGN.md): the range must survive it */
  if (!(tof32(a, &fa) && tof32(b, &fb) && tof32(r, &fr) && fa < fb && fr > 0
        && tof32(fb - fa, &span))
      || bw_qfloatinit(&F->q, a, b, r) != BW_OK) {
    Txt ta = bw_valuetext(mn), tb = bw_valuetext(mx), tr = bw_valuetext(rs);
    return fail(x, "min %s, max %s, res %s do not fit float32", ta.s, tb.s,
                tr.s);
  }
  if (!bw_specbool(x, f, BW_OCLAMP, &F->clamp)) return 0;
  F->kind = BW_KFLOAT;
  F->res = r;
  /* decoded values are float32: let them encode again at the ends */
  F->dmin = fmin(a, (double)bw_qfloatdecode(&F->q, 0));
  F->dmax = fmax(b, (double)bw_qfloatdecode(&F->q, F->q.miv));
  return 1;
}

/* A list of 1..maxn tier widths in [lo, 32] into F->tierbits. */
int bw_spectiers (Ctx *x, bw_Field *F, const bw_Value *v, unsigned maxn,
                  int64_t lo) {
  size_t i;
  if (v->type != BW_VLIST || !v->plain || v->len == 0 || v->len > maxn)
    return fail(x, "'tiers' must be a list of 1 to %u bit widths", maxn);
  for (i = 0; i < v->len; i++) {
    int64_t b;
    if (!bw_valueint(&v->items[i], &b) || b < lo || b > 32)
      return fail(x, "tier %u: width must be an integer in [%" PRId64 ", 32]",
                  (unsigned)i + 1, lo);
    F->tierbits[i] = (uint8_t)b;
  }
  F->ntiers = (uint8_t)v->len;
  return 1;
}

#define MAXTRIED  (UINT64_C(1) << 24)  /* codes tried per compile: ~0.1 s */

/* bw_qfloatexact of 'q' in '*exact', its tries of each code bounded per
** compile (a description of many distinct ranges cannot make compiling
** cost more). Returns 0 with the failure past the bound. */
static int exactfloat (Ctx *x, const bw_QFloat *q, int *exact) {
  bw_Build *B = x->B;
  uint32_t n = bw_qfloattries(q), i;
  for (i = 0; n > 0 && i < B->ntried && i < 8; i++)
    if (memcmp(&B->triedq[i], q, sizeof(*q)) == 0) {
      *exact = B->triedok[i];
      return 1;
    }
  if (n > MAXTRIED - B->tried)
    return fail(x, "relative floats of too many distinct ranges to check "
                "(more than %" PRIu64 " codes in one description)", MAXTRIED);
  B->tried += n;
  *exact = bw_qfloatexact(q);
  if (n > 0) {
    B->triedq[B->ntried % 8] = *q;
    B->triedok[B->ntried % 8] = (uint8_t)*exact;
    B->ntried++;
  }
  return 1;
}

/* delta = "relative" (+ tiers) on FLOAT, QUAT and ANGLE fields. */
int bw_specdelta (Ctx *x, bw_Field *F, const bw_FieldSpec *f) {
  const bw_Value *d = &f->opt[BW_ODELTA], *t = &f->opt[BW_OTIERS];
  if (d->type == BW_VNONE) {
    if (t->type != BW_VNONE) return fail(x, "'tiers' needs delta = \"relative\"");
    return 1;
  }
  if (!isstr(d, "relative"))
    return fail(x, "'delta' must be \"relative\", got %s", bw_valuetext(d).s);
  if (F->kind == BW_KQUAT && F->nbits > 22)
    return fail(x, "a relative quat needs bits <= 22 (float32 holds no finer "
                "steps)");
  /* both ends quantize their own copy of the baseline: every code must
  ** decode and encode back to itself */
  if (F->kind == BW_KFLOAT) {
    int exact = 0;
    if (!exactfloat(x, &F->q, &exact)) return 0;
    if (!exact)
      return fail(x, "delta = \"relative\" needs a float whose steps float32 "
                  "can hold (a coarser res or a narrower range)");
  }
  F->relative = 1;
  if (t->type == BW_VNONE) {
    memcpy(F->tierbits, reltiers, sizeof(reltiers));
    F->ntiers = (uint8_t)sizeof(reltiers);
    return 1;
  }
  return bw_spectiers(x, F, t, BW_MAXTIERS, 0);   /* width 0: one value */
}

/* Count options: fixed 'count', or 'max' with optional 'min' (0). */
int bw_speccount (Ctx *x, bw_Field *F, const bw_FieldSpec *f) {
  if (f->opt[BW_OCOUNT].type != BW_VNONE) {
    if (f->opt[BW_OMAX].type != BW_VNONE || f->opt[BW_OMIN].type != BW_VNONE)
      return fail(x, "give either 'count' or 'max' (and 'min'), not both");
    if (!bw_specint(x, f, BW_OCOUNT, &F->min, 1, 0, 0, 0)) return 0;
    F->max = F->min;
    F->fixed = 1;
    return 1;
  }
  if (f->opt[BW_OMAX].type == BW_VNONE) return fail(x, "needs 'max' or 'count'");
  if (!bw_specint(x, f, BW_OMAX, &F->max, 1, 0, 0, 0)) return 0;
  F->min = 0;
  if (f->opt[BW_OMIN].type != BW_VNONE
      && !bw_specint(x, f, BW_OMIN, &F->min, 1, 0, 0, 0))
    return 0;
  if (F->min > F->max)
    return fail(x, "min %" PRId64 " > max %" PRId64, F->min, F->max);
  return 1;
}

int bw_specenum (Ctx *x, bw_Field *F, const bw_FieldSpec *f) {
  const bw_Value *v = &f->opt[BW_OVALUES];
  uint32_t scope, i;
  if (v->type != BW_VLIST || v->len == 0)
    return fail(x, "'values' must be a non-empty list of strings");
  if (!bw_buildcount(x, v->len > BW_MAXFIELDS ? BW_MAXFIELDS + 1
                                               : (uint32_t)v->len))
    return 0;
  scope = BW_ENUMSCOPE(x->S->nnames);  /* its first value's name, next */
  for (i = 0; i < v->len; i++) {
    const bw_Value *s = &v->items[i];
    Entry *en;
    uint32_t nm;
    if (s->type != BW_VSTRING) return fail(x, "enum value %u is not a string", i + 1);
    if (!bw_printable(s->s, s->len))
      return fail(x, "enum value %u (\"%s\") must be UTF-8 without control "
                  "characters", i + 1, bw_valuetext(s).s);
    en = bw_buildlookup(x->B, x->S, scope, s->s, s->len);
    if (en == NULL) return nomem(x);
    if (en->name != BW_NONE)
      return fail(x, "duplicate enum value '%s'", bw_valuetext(s).s);
    nm = bw_buildname(x, s->s, s->len);
    if (nm == BW_NONE) return 0;
    en->scope = scope; en->name = nm; en->value = i;
    x->B->hused++;
    if (i == 0) F->ref = nm;
    if (nm != F->ref + i) return fail(x, "enum values out of order");  /* cannot be */
  }
  if (!v->plain) return fail(x, "'values' must be a plain list");
  F->min = 0;
  F->max = (int64_t)v->len - 1;
  return 1;
}

/* The default 'd' of field F (kind and bounds set); stores it. */
int bw_specdefault (Ctx *x, bw_Field *F, const bw_FieldSpec *f,
                    const char *kindname) {
  const bw_Value *d = &f->opt[BW_ODEFAULT];
  int64_t di = 0;
  int ok = 0, isint = bw_valueint(d, &di);
  switch (F->kind) {
    case BW_KINT: case BW_KTIERED:
      ok = isint && di >= F->min && di <= F->max;
      F->def.i = di;
      break;
    case BW_KUINT:
      ok = isint && (F->nbits == 64 || (di >= 0 && (di >> F->nbits) == 0));
      F->def.i = di;
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
      en = bw_buildlookup(x->B, x->S, BW_ENUMSCOPE(F->ref), d->s, d->len);
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
        F->def.s = bw_buildname(x, d->s, d->len);
        if (F->def.s == BW_NONE) return 0;
      }
      break;
    default:
      return fail(x, "a %s field cannot have a default", kindname);
  }
  if (!ok)
    return fail(x, "default %s does not fit the field", bw_valuetext(d).s);
  F->hasdefault = 1;
  return 1;
}

/* }========================================================== */
