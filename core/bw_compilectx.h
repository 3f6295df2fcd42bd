/*
** bw_compilectx.h - the schema compiler's shared state (not installed)
** See LICENSE for copyright and terms.
*/

/* What the compiler's files (bw_compile*.c) share; internal, not installed. */
#ifndef BW_COMPILECTX_H
#define BW_COMPILECTX_H

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "bw_schema.h"

/* {===================== build state (bw_compile.c) ===================== */

typedef bw_NameEntry Entry;

typedef struct bw_Build {
  Entry   *hash;        /* the names index (bw_Schema.index) as it grows */
  uint32_t hcap, hused;
  uint32_t total;       /* fields, elements and enum values so far */
  uint32_t type;        /* the type begun, BW_NONE before the first */
  uint32_t next, end;   /* its next field slot and the end of them */
  uint32_t nbegun;
  uint8_t *begun;
  /* bw_qfloatexact's tries: their sum, bounded per compile, and the last
  ** quantizers tried (fields of one range and res try once) */
  uint64_t tried;
  bw_QFloat triedq[8];
  uint8_t  triedok[8];
  uint32_t ntried;
} bw_Build;

#define TYPESCOPE  BW_TYPESCOPE

typedef struct Ctx {
  bw_Schema *S;
  bw_Build  *B;
  bw_SchemaError  *e;
  char       path[160];
} Ctx;

Entry *bw_buildlookup (bw_Build *B, const bw_Schema *S, uint32_t scope,
                       const char *s, size_t len);
int bw_buildcount (Ctx *x, uint32_t n);
uint32_t bw_buildname (Ctx *x, const char *s, size_t len);
/* 1 if 's' may name a field or an enum value: UTF-8 without control
** characters. */
int bw_printable (const char *s, size_t len);
/* 1 if 'v' (called 'what') can be read: not NULL, a string with bytes, a
** list with items, and its items' strings with bytes; else 0 after fail(). */
int bw_valueok (Ctx *x, const bw_Value *v, const char *what);

/* }========================================================== */


/* {===================== messages (bw_compile.c) ===================== */

bw_Status bw_compilefailv (bw_SchemaError *e, const char *path,
                           const char *fmt, va_list ap);

/* Report at the current path; returns 0 so checks can 'return fail(..)'. */
static inline int fail (Ctx *x, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bw_compilefailv(x->e, x->path, fmt, ap);
  va_end(ap);
  return 0;
}

static inline int nomem (Ctx *x) { return fail(x, "not enough memory"); }

typedef bw_ValueText Txt;  /* bw_valuetext (bw_schema.h) */

/* The Lua type name of 'v'. */
static inline const char *tname (const bw_Value *v) {
  switch (v->type) {
    case BW_VNONE: return "nil";
    case BW_VINT: case BW_VFLOAT: return "number";
    case BW_VBOOL: return "boolean";
    case BW_VSTRING: return "string";
    case BW_VLIST: return "table";
    default: return v->s ? v->s : "?";
  }
}

static inline int isstr (const bw_Value *v, const char *s) {
  return v->type == BW_VSTRING && v->len == strlen(s)
         && memcmp(v->s, s, v->len) == 0;
}

/* }========================================================== */


/* {===================== fields (bw_compilefield.c) ===================== */

int bw_findkind (const bw_Value *k);
int bw_fillfield (Ctx *x, uint32_t fi, const bw_FieldSpec *f, int element,
                  unsigned depth);

/* }========================================================== */


/* {===================== options (bw_compileopt.c) ===================== */
/* Each checks the options it is named for and fills its part of F:
** 1, or 0 after fail(). */

/* An integer value: an integer, or a float of an integer's value (Lua's
** 2^8 - 1, 1e9), as Lua itself takes one; 1 and '*out', or 0. */
int bw_valueint (const bw_Value *v, int64_t *out);
int bw_specint (Ctx *x, const bw_FieldSpec *f, int k, int64_t *out,
                int haslo, int64_t lo, int hashi, int64_t hi);
int bw_specbool (Ctx *x, const bw_FieldSpec *f, int k, uint8_t *out);
int bw_specctype (Ctx *x, bw_Field *F, const bw_FieldSpec *f);
int bw_specfloat (Ctx *x, bw_Field *F, const bw_FieldSpec *f);
int bw_spectiers (Ctx *x, bw_Field *F, const bw_Value *v, unsigned maxn,
                  int64_t lo);
int bw_specdelta (Ctx *x, bw_Field *F, const bw_FieldSpec *f);
int bw_speccount (Ctx *x, bw_Field *F, const bw_FieldSpec *f);
int bw_specenum (Ctx *x, bw_Field *F, const bw_FieldSpec *f);
int bw_specdefault (Ctx *x, bw_Field *F, const bw_FieldSpec *f,
                    const char *kindname);

/* }========================================================== */

#endif
