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
**
** This file holds the builder: its entry points, the build state (names by
** scope) and the messages. One field spec and its kind's rules are
** bw_compilefield.c; each option's checks are bw_compileopt.c; what they
** share is bw_compilectx.h.
*/

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "bw_compilectx.h"
#include "bw_schema.h"


/* {===================== build state ===================== */

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
    }
  }
  return S->build;
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
    if (o->name == BW_NONE) continue;
    *bw_nameslot(S, nh, ncap, o->scope, S->names[o->name],
                 S->namelens[o->name]) = *o;
  }
  free(B->hash);
  B->hash = nh;
  B->hcap = ncap;
  return 1;
}

/* The entry for (scope, s) or the empty slot where it goes; NULL without
** memory. */
Entry *bw_buildlookup (bw_Build *B, const bw_Schema *S, uint32_t scope,
                       const char *s, size_t len) {
  if (B->hused + 1 > B->hcap / 2 && !rehash(B, S)) return NULL;
  return bw_nameslot(S, B->hash, B->hcap, scope, s, len);
}

int bw_buildcount (Ctx *x, uint32_t n) {
  if (n > BW_MAXFIELDS - x->B->total)
    return fail(x, "more than %d fields and enum values in all (a shared "
                "table counts each time it is used)", BW_MAXFIELDS);
  x->B->total += n;
  return 1;
}

/* Every tool prints names as given (layout, dissect, cost, diff, errors),
** and a definitions file is outside input: no name may carry the bytes
** that drive a terminal (C0, DEL, and C1 written as UTF-8). */
int bw_printable (const char *s, size_t len) {
  size_t i;
  if (!bw_utf8valid(s, len)) return 0;
  for (i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch < 0x20 || ch == 0x7f
        || (ch == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] < 0xa0))
      return 0;
  }
  return 1;
}

uint32_t bw_buildname (Ctx *x, const char *s, size_t len) {
  uint32_t nm = bw_schemaaddname(x->S, s, len);
  if (nm == BW_NONE) nomem(x);
  return nm;
}

/* }========================================================== */


/* {===================== messages ===================== */

bw_Status bw_compilefailv (bw_SchemaError *e, const char *path,
                           const char *fmt, va_list ap) {
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
  st = bw_compilefailv(e, path, fmt, ap);
  va_end(ap);
  return st;
}

/* 'v' as Lua's tostring would write it. */
Txt bw_valuetext (const bw_Value *v) {
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
    case BW_VSTRING: {  /* bytes a message cannot show (a NUL ends it) as \ddd */
      size_t i, n = v->len < 64 ? v->len : 64, o = 0;
      for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)v->s[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '\\') t.s[o++] = (char)ch;
        else o += (size_t)snprintf(t.s + o, sizeof(t.s) - o, "\\%u", ch);
      }
      t.s[o] = '\0';
      break;
    }
    case BW_VNONE: snprintf(t.s, sizeof(t.s), "nil"); break;
    case BW_VLIST: snprintf(t.s, sizeof(t.s), "table"); break;
    default: snprintf(t.s, sizeof(t.s), "%s", v->s ? v->s : "?"); break;
  }
  return t;
}

/* }========================================================== */


/* {===================== types and the whole ===================== */

static void typepath (Ctx *x, uint32_t t) {
  snprintf(x->path, sizeof(x->path), "%s", x->S->names[x->S->types[t].name]);
}

/* BW_OK, or the status of a call that cannot start (reported). */
static bw_Status initctx (Ctx *x, bw_Schema *S, bw_SchemaError *e) {
  x->S = S;
  x->e = e;
  x->path[0] = '\0';
  x->B = NULL;
  if (S == NULL) return fail(x, "no schema (NULL)"), BW_EARG;
  if (S->sealed) return fail(x, "schema already sealed"), BW_ESCHEMA;
  x->B = getbuild(S);
  if (x->B == NULL) return nomem(x), BW_ENOMEM;
  return BW_OK;
}

int bw_valueok (Ctx *x, const bw_Value *v, const char *what) {
  size_t i;
  if (v == NULL) return fail(x, "%s is NULL", what);
  if (v->type == BW_VSTRING && v->s == NULL)
    return fail(x, "%s: a string of NULL bytes", what);
  if (v->type == BW_VLIST && v->len > 0 && v->items == NULL)
    return fail(x, "%s: a list of NULL items", what);
  for (i = 0; v->type == BW_VLIST && i < v->len; i++)
    if (v->items[i].type == BW_VSTRING && v->items[i].s == NULL)
      return fail(x, "%s[%u]: a string of NULL bytes", what, (unsigned)i + 1);
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
  if (initctx(&x, S, e) != BW_OK || !bw_valueok(&x, name, "type name"))
    return BW_NONE;
  if (name->type != BW_VSTRING || !isident(name->s, name->len)) {
    fail(&x, "type name %s must be an identifier", bw_valuetext(name).s);
    return BW_NONE;
  }
  if (bw_findkind(name) >= 0 || isstr(name, "struct")) {
    fail(&x, "type name '%s' is a built-in type", bw_valuetext(name).s);
    return BW_NONE;
  }
  if (x.B->nbegun > 0) {
    fail(&x, "%s: types are declared before any field", bw_valuetext(name).s);
    return BW_NONE;
  }
  if (S->nmessages > 0) {  /* the ids were counted over the types before */
    fail(&x, "%s: types are declared before the messages",
         bw_valuetext(name).s);
    return BW_NONE;
  }
  en = bw_buildlookup(x.B, S, TYPESCOPE, name->s, name->len);
  if (en == NULL) { nomem(&x); return BW_NONE; }
  if (en->name != BW_NONE) {
    fail(&x, "type '%s' declared twice", bw_valuetext(name).s);
    return BW_NONE;
  }
  nm = bw_buildname(&x, name->s, name->len);
  if (nm == BW_NONE) return BW_NONE;
  t = bw_schemaaddtype(S, nm);
  if (t == BW_NONE) { nomem(&x); return BW_NONE; }
  en->scope = TYPESCOPE; en->name = nm; en->value = t;
  x.B->hused++;
  /* a refused bw_schemabegin may have sized 'begun' (all zero: nbegun is
  ** 0) for fewer types: the next begin sizes it again */
  free(x.B->begun);
  x.B->begun = NULL;
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
  bw_Status st = initctx(&x, S, e);
  if (st != BW_OK) return st;
  if (t >= S->ntypes) return fail(&x, "no type %u", t), BW_EARG;
  if (!complete(&x)) return BW_ESCHEMA;
  typepath(&x, t);
  if (x.B->begun == NULL) {
    x.B->begun = (uint8_t *)calloc(S->ntypes, 1);
    if (x.B->begun == NULL) return nomem(&x), BW_ENOMEM;
  }
  if (x.B->begun[t]) return fail(&x, "fields given twice"), BW_ESCHEMA;
  if (!bw_buildcount(&x, nfields)) return BW_ESCHEMA;
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
  bw_Status st = initctx(&x, S, e);
  if (st != BW_OK) return st;
  if (x.B->type == BW_NONE || x.B->next >= x.B->end)
    return fail(&x, "no field slot left: bw_schemabegin first"), BW_EARG;
  typepath(&x, x.B->type);
  if (f == NULL) return fail(&x, "field spec is NULL"), BW_EARG;
  if (!bw_fillfield(&x, x.B->next, f, 0, 0)) return BW_ESCHEMA;
  x.B->next++;
  return BW_OK;
}

/* The type ids the 'messages' list names, into 'ids' (its length): BW_OK,
** or the failure reported. */
static bw_Status listids (Ctx *x, bw_Schema *S, const bw_Value *list,
                          uint32_t *ids) {
  uint8_t *seen = (uint8_t *)calloc((size_t)S->ntypes + 1, 1);
  uint32_t i;
  bw_Status st = BW_OK;
  if (seen == NULL) return nomem(x), BW_ENOMEM;
  for (i = 0; st == BW_OK && i < (uint32_t)list->len; i++) {
    const bw_Value *v = &list->items[i];
    Entry *en;
    if (v->type != BW_VSTRING) {
      st = (fail(x, "messages[%u] must be a type name", i + 1), BW_ESCHEMA);
      break;
    }
    en = bw_buildlookup(x->B, S, TYPESCOPE, v->s, v->len);
    if (en == NULL)
      st = (nomem(x), BW_ENOMEM);
    else if (en->name == BW_NONE)
      st = (fail(x, "messages[%u]: unknown type '%s'", i + 1,
                 bw_valuetext(v).s), BW_ESCHEMA);
    else if (seen[en->value])
      st = (fail(x, "messages: '%s' listed twice", bw_valuetext(v).s),
            BW_ESCHEMA);
    else {
      seen[en->value] = 1;
      ids[i] = en->value;
    }
  }
  free(seen);
  return st;
}

/* The message id width for 'n' ids: 'bits' when given and wide enough. */
static bw_Status msgwidth (Ctx *x, const bw_Value *bits, uint32_t n,
                           unsigned *width) {
  unsigned need = n > 0 ? bw_bitsrequired(0, (int64_t)n - 1) : 0;
  int64_t b;
  *width = need;
  if (bits->type == BW_VNONE) return BW_OK;
  if (!bw_valueint(bits, &b) || b < 0 || b > 32)
    return fail(x, "'message_bits' must be an integer in [0, 32]"), BW_ESCHEMA;
  if ((unsigned)b < need)
    return fail(x, "message_bits %u cannot number %u messages",
                (unsigned)b, n), BW_ESCHEMA;
  *width = (unsigned)b;
  return BW_OK;
}

/* All or nothing: a list or width refused leaves the ids as they were, so
** a caller that goes on to bw_schemafinish gets every type by index, never
** half a list. */
bw_Status bw_schemamessages (bw_Schema *S, const bw_Value *list,
                             const bw_Value *bits, bw_SchemaError *e) {
  Ctx x;
  uint32_t n, i, *ids = NULL;
  unsigned width;
  bw_Status st = initctx(&x, S, e);
  if (st != BW_OK) return st;
  if (!bw_valueok(&x, list, "'messages'")
      || !bw_valueok(&x, bits, "'message_bits'"))
    return BW_EARG;
  if (list->type == BW_VNONE && bits->type == BW_VNONE) {
    /* neither given: the default, as if not called (ids by index for every
    ** type, declared later too, and no ids in the fingerprint) */
    free(S->messages);
    S->messages = NULL;
    S->nmessages = 0;
    S->typebits = 0;
    return BW_OK;
  }
  if (list->type != BW_VNONE) {
    if (list->type != BW_VLIST || !list->plain || list->len == 0
        || list->len > S->ntypes)
      return fail(&x, "'messages' must be a list of type names, each once"),
             BW_ESCHEMA;
    n = (uint32_t)list->len;
    ids = (uint32_t *)malloc((size_t)n * sizeof(uint32_t));
    if (ids == NULL) return nomem(&x), BW_ENOMEM;
    st = listids(&x, S, list, ids);
  }
  else n = S->ntypes;
  if (st == BW_OK) st = msgwidth(&x, bits, n, &width);
  if (st != BW_OK) {
    free(ids);
    return st;
  }
  free(S->messages);
  S->messages = ids;
  for (i = 0; i < S->ntypes; i++) S->types[i].msgid = ids ? BW_NONE : i;
  if (ids != NULL)
    for (i = 0; i < n; i++) S->types[ids[i]].msgid = i;
  S->typebits = width;
  S->nmessages = n;
  return BW_OK;
}

bw_Status bw_schemafinish (bw_Schema *S, bw_SchemaError *e) {
  Ctx x;
  uint32_t t;
  char msg[BW_ERRSIZE];
  bw_Status st = initctx(&x, S, e);
  if (st != BW_OK) return st;
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
  /* the names index serves lookups by name from now on */
  S->index = x.B->hash;
  S->indexcap = x.B->hcap;
  x.B->hash = NULL;
  bw_buildfree(S);
  return BW_OK;
}

/* }========================================================== */
