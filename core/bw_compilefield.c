/*
** bw_compilefield.c - the schema compiler: one field spec and its kind
** See LICENSE for copyright and terms.
*/

/*
** A bw_FieldSpec checked into a bw_Field: its name, the options its kind
** takes, each kind's rules, versions and an array or sparse element (in a
** new slot, nesting bounded). Each option's value is checked in
** bw_compileopt.c.
*/

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bw_compilectx.h"
#include "bw_schema.h"


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
#define PI2  6.283185307179586


/* {===================== fields ===================== */

static void pathadd (Ctx *x, const char *s, size_t len) {
  size_t n = strlen(x->path);
  if (len > 100) len = 100;
  snprintf(x->path + n, sizeof(x->path) - n, "%.*s", (int)len, s);
}

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
  if (!bw_buildcount(x, 1)) return 0;
  e = bw_schemaaddfields(x->S, 1);
  if (e == BW_NONE) return nomem(x);
  ok = bw_fillfield(x, e, f->of, 1, depth + 1);
  x->path[n] = '\0';
  F->ref = e;
  return ok;
}

/* Kind index of the name 'k' (KVECTOR for vector), or -1. */
int bw_findkind (const bw_Value *k) {
  int i;
  for (i = 0; i < BW_NKINDS; i++)
    if (i != BW_KSTRUCT && isstr(k, bw_kindnames[i])) return i;
  if (isstr(k, "vector")) return KVECTOR;
  return -1;
}

/* Check spec 'f' and fill S->fields[fi]. 'element': an array/sparse
** element, which has no name and is never optional or versioned. */
int bw_fillfield (Ctx *x, uint32_t fi, const bw_FieldSpec *f, int element,
                  unsigned depth) {
  bw_Schema *S = x->S;
  bw_Field F;
  const bw_Value *kv = &f->kind;
  char kindname[sizeof(Txt)];
  int kind, i, named = 0;
  unsigned opts;
  memset(&F, 0, sizeof(F));
  F.name = BW_NONE;
  F.ref = BW_NONE;
  F.removed = UINT32_MAX;
  if (!bw_valueok(x, &f->name, "field name")
      || !bw_valueok(x, kv, "field type"))
    return 0;
  if (!element) {
    const bw_Value *nv = &f->name;
    if (nv->type == BW_VNONE && (isstr(kv, "align") || isstr(kv, "check")))
      ;  /* { "align" }: no name */
    else if (nv->type != BW_VSTRING || nv->len == 0)
      return fail(x, "field name (first entry) must be a non-empty string");
    else if (!bw_printable(nv->s, nv->len))
      return fail(x, "field name \"%s\" must be UTF-8 without control "
                  "characters", bw_valuetext(nv).s);
    else {
      Entry *en;
      pathadd(x, ".", 1);
      pathadd(x, nv->s, nv->len);
      if (isstr(kv, "align") || isstr(kv, "check"))
        return fail(x, "%s takes no name: write { \"%s\" }", kv->s, kv->s);
      en = bw_buildlookup(x->B, S, x->B->type, nv->s, nv->len);
      if (en == NULL) return nomem(x);
      if (en->name != BW_NONE) return fail(x, "duplicate field name");
      named = 1;  /* taken below, once the field is accepted */
    }
  }
  for (i = 0; i < BW_NOPTIONS; i++)  /* 'of' says only that f->of is given */
    if (i != BW_OOF && !bw_valueok(x, &f->opt[i], bw_optionnames[i]))
      return 0;
  if (kv->type != BW_VSTRING)
    return fail(x, "field type must be a string, got %s", tname(kv));
  snprintf(kindname, sizeof(kindname), "%s", bw_valuetext(kv).s);
  kind = bw_findkind(kv);
  if (kind < 0) {
    Entry *en = bw_buildlookup(x->B, S, TYPESCOPE, kv->s, kv->len);
    if (en == NULL) return nomem(x);
    if (en->name == BW_NONE) return fail(x, "unknown type '%s'", kindname);
    kind = BW_KSTRUCT;
    F.ref = en->value;
  }
  opts = kindopts[kind] | COMMON;
  if (f->unknown != NULL) {
    bw_Value u = { BW_VSTRING, 0, 0, 0, f->unknown, f->unknownlen, NULL };
    return fail(x, "unknown option '%s' for type %s", bw_valuetext(&u).s,
                kindname);
  }
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
      if (!bw_specint(x, f, BW_OMIN, &F.min, 0, 0, 0, 0)
          || !bw_specint(x, f, BW_OMAX, &F.max, 0, 0, 0, 0))
        return 0;
      if (F.min > F.max)
        return fail(x, "min %" PRId64 " > max %" PRId64, F.min, F.max);
      if (!bw_specbool(x, f, BW_OCLAMP, &F.clamp)) return 0;
      break;
    case BW_KUINT: {
      int64_t b;
      if (!bw_specint(x, f, BW_OBITS, &b, 1, 1, 1, 64)) return 0;
      F.nbits = (unsigned)b;
      F.max = b < 64 ? (int64_t)((UINT64_C(1) << b) - 1) : INT64_MAX;
      break;
    }
    case BW_KFLOAT:
      if (!bw_specfloat(x, &F, f) || !bw_specdelta(x, &F, f)) return 0;
      break;
    case BW_KENUM:
      if (!bw_specenum(x, &F, f)) return 0;
      break;
    case BW_KSTRING:
      if (!bw_specint(x, f, BW_OMAX, &F.max, 1, 0, 0, 0)) return 0;
      break;
    case BW_KBYTES:
      if (!bw_speccount(x, &F, f)) return 0;
      break;
    case BW_KARRAY:
      if (!bw_speccount(x, &F, f) || !fillelement(x, &F, f, kindname, depth))
        return 0;
      break;
    case KVECTOR: {
      bw_Field E;
      uint32_t e;
      if (f->opt[BW_OCOUNT].type == BW_VNONE)
        return fail(x, "vector needs 'count' (dimensions)");
      if (!bw_specint(x, f, BW_OCOUNT, &F.min, 1, 0, 0, 0)) return 0;
      F.max = F.min;
      F.fixed = 1;
      memset(&E, 0, sizeof(E));
      E.name = E.ref = BW_NONE;
      E.removed = UINT32_MAX;
      if (!bw_specfloat(x, &E, f) || !bw_specdelta(x, &E, f)) return 0;
      if (!bw_buildcount(x, 1)) return 0;
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
        if (!bw_specint(x, f, BW_OMAGIC, &m, 1, 0, 1, 0xFFFFFFFF)) return 0;
        F.magic = (uint32_t)m;
      }
      break;
    case BW_KSPARSE: {
      const bw_Value *en = &f->opt[BW_OENCODING], *t = &f->opt[BW_OTIERS];
      if (f->opt[BW_OOF].type == BW_VNONE) return fail(x, "sparse needs 'of'");
      if (!bw_specint(x, f, BW_OMAX, &F.max, 1, 1, 1, 0xFFFFFFFE)) return 0;
      F.encoding = BW_SPAUTO;
      if (en->type != BW_VNONE) {
        int k;
        for (k = 0; encodingnames[k] != NULL && !isstr(en, encodingnames[k]); k++)
          ;
        if (encodingnames[k] == NULL)
          return fail(x, "unknown encoding '%s' (mask, index, relative or auto)",
                      bw_valuetext(en).s);
        F.encoding = (uint8_t)k;
      }
      if (isstr(t, "article")) {
        memcpy(F.tierbits, articletiers, sizeof(articletiers));
        F.ntiers = (uint8_t)sizeof(articletiers);
      }
      else if (t->type != BW_VNONE
               && !bw_spectiers(x, &F, t, BW_MAXTIERS - 1, 0))
        return 0;
      /* sparse tiers end in a catch-all up to the sentinel */
      if (F.ntiers > 0) F.tierbits[F.ntiers++] = 63;
      if (!fillelement(x, &F, f, kindname, depth)) return 0;
      break;
    }
    case BW_KQUAT: {
      int64_t b;
      if (!bw_specint(x, f, BW_OBITS, &b, 1, 2, 1, 31)) return 0;
      bw_quatinit(&F.q, (unsigned)b);
      F.nbits = F.q.nbits;
      if (!bw_specdelta(x, &F, f)) return 0;
      break;
    }
    case BW_KTIERED: {
      uint64_t span = 0;
      unsigned k;
      if (!bw_spectiers(x, &F, &f->opt[BW_OTIERS], BW_MAXTIERS, 0)) return 0;
      if (f->opt[BW_OMIN].type != BW_VNONE
          && !bw_specint(x, f, BW_OMIN, &F.min, 0, 0, 0, 0))
        return 0;
      for (k = 0; k < F.ntiers; k++) span += UINT64_C(1) << F.tierbits[k];
      /* the last value the tiers reach, held at INT64_MAX */
      {   /* in unsigned arithmetic: min may be INT64_MIN */
        uint64_t room = (uint64_t)INT64_MAX - (uint64_t)F.min;
        F.max = room < span - 1 ? INT64_MAX : F.min + (int64_t)(span - 1);
      }
      if (f->opt[BW_OMAX].type != BW_VNONE) {
        int64_t mx;
        if (!bw_specint(x, f, BW_OMAX, &mx, 0, 0, 0, 0)) return 0;
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
      if (!bw_specint(x, f, BW_OBITS, &b, 1, 1, 1, 32)) return 0;
      F.nbits = (unsigned)b;
      F.dmin = 0;
      if (u->type == BW_VNONE || isstr(u, "rad")) F.dmax = PI2;
      else if (isstr(u, "deg")) F.dmax = 360;
      else return fail(x, "unknown unit '%s' (rad or deg)", bw_valuetext(u).s);
      if (!bw_specdelta(x, &F, f)) return 0;
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
  if (f->opt[BW_OCTYPE].type != BW_VNONE && !bw_specctype(x, &F, f)) return 0;
  if (!bw_specbool(x, f, BW_OOPTIONAL, &F.optional)) return 0;
  if ((kind == BW_KALIGN || kind == BW_KCHECK)
      && (F.optional || f->opt[BW_ODEFAULT].type != BW_VNONE))
    return fail(x, "%s cannot be optional or have a default", kindname);
  if (f->opt[BW_OSINCE].type != BW_VNONE) {
    int64_t v;
    if (!bw_specint(x, f, BW_OSINCE, &v, 1, 0, 1, BW_MAXVERSION)) return 0;
    F.since = (uint32_t)v;
  }
  if (f->opt[BW_OREMOVED].type != BW_VNONE) {
    int64_t v;
    if (!bw_specint(x, f, BW_OREMOVED, &v, 1, 1, 1, BW_MAXVERSION)) return 0;
    if ((uint32_t)v <= F.since)
      return fail(x, "removed %" PRId64 " must come after since %u", v, F.since);
    F.removed = (uint32_t)v;
  }
  if (f->opt[BW_ODEFAULT].type != BW_VNONE
      && !bw_specdefault(x, &F, f, kind == KVECTOR ? "array"
                      : bw_kindnames[F.kind]))
    return 0;
  /* a refused field must not keep its name: a retry in its slot would be
  ** a duplicate, and the index would give the name to the next field */
  if (named) {
    const bw_Value *nv = &f->name;
    Entry *en = bw_buildlookup(x->B, S, x->B->type, nv->s, nv->len);
    if (en == NULL) return nomem(x);
    F.name = bw_buildname(x, nv->s, nv->len);
    if (F.name == BW_NONE) return 0;
    en->scope = x->B->type; en->name = F.name; en->value = fi;
    x->B->hused++;
  }
  S->fields[fi] = F;
  return 1;
}

/* }========================================================== */
