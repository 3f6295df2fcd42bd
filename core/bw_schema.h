/*
** bw_schema.h - compiled schema programs: types, fields, sizes, fingerprint
** See LICENSE for copyright and terms.
*/
#ifndef BW_SCHEMA_H
#define BW_SCHEMA_H

#include "bw.h"

#define BW_NONE  UINT32_MAX    /* no name / no reference */

/* Field kinds. The wire form of each is in WIRE.md, "Schemas". */
typedef enum bw_Kind {
  BW_KINT, BW_KUINT, BW_KBOOL, BW_KFLOAT, BW_KFLOAT32, BW_KFLOAT64,
  BW_KENUM, BW_KSTRING, BW_KBYTES, BW_KARRAY, BW_KSTRUCT, BW_KALIGN,
  BW_KCHECK, BW_KSPARSE, BW_KQUAT, BW_KTIERED, BW_KANGLE,
  BW_NKINDS
} bw_Kind;

/* The kinds' names as descriptions spell them, NULL-terminated. */
extern const char *const bw_kindnames[BW_NKINDS + 1];

/* Sparse array encodings; AUTO spends 2 bits naming the one it picked. */
enum { BW_SPMASK, BW_SPINDEX, BW_SPRELATIVE, BW_SPAUTO };

#define BW_MAXTIERS 16
/* Default tiers of a relative delta (delta = "relative" without tiers). */
#define BW_RELTIERS   { 4, 7, 11 }
#define BW_NRELTIERS  3
#define BW_FUSEBITS 56   /* widest run of fields a decoder reads at once */

typedef struct bw_Field {
  uint8_t  kind;          /* bw_Kind */
  uint8_t  optional;      /* a presence bit comes first */
  uint8_t  fixed;         /* ARRAY/BYTES: count fixed, not sent */
  uint8_t  hasdefault;
  uint8_t  clamp;         /* FLOAT: clamp out-of-range values, not raise */
  uint8_t  encoding;      /* SPARSE: BW_SP* */
  uint8_t  ntiers;        /* TIERED: number of tiers */
  uint8_t  fuse;          /* fixed-width fields read as one from here */
  uint8_t  fusebits;      /* and their total width (<= BW_FUSEBITS) */
  uint8_t  relative;      /* FLOAT, QUAT, ANGLE: in a delta, sent as a
                             difference from the baseline in tiers */
  uint32_t name;          /* index in names; BW_NONE for an element */
  uint32_t ref;           /* STRUCT: type; ARRAY/SPARSE: element field;
                             ENUM: first value name */
  int64_t  min, max;      /* INT: values; ARRAY/BYTES/STRING/ENUM/SPARSE:
                             counts, lengths, indices; UINT: 0..2^n-1 */
  unsigned nbits;         /* width of the value, count or length */
  bw_QFloat q;            /* FLOAT, QUAT components */
  double   dmin, dmax;    /* FLOAT: the declared range, for checks;
                             ANGLE: 0 and the period (2 pi or 360) */
  uint32_t magic;         /* CHECK */
  uint32_t since, removed;/* present in versions since <= v < removed */
  uint8_t  tierbits[BW_MAXTIERS]; /* TIERED, SPARSE: payload bits of each
                             tier; relative FLOAT/QUAT/ANGLE: of each tier
                             of the difference (default BW_RELTIERS) */
  union { int64_t i; double d; uint32_t s; } def;  /* s: a names index */
  uint64_t minbits, maxbits;  /* value size bounds, without presence bit */
} bw_Field;

typedef struct bw_Type {
  uint32_t name;
  uint32_t first, count;  /* its fields: fields[first .. first + count) */
  uint64_t minbits, maxbits;
  unsigned depth;         /* nesting levels below it */
  int      versioned;     /* some field has since/removed */
  uint32_t noptional;     /* optional fields: a fresh decode reads them
                             before it sizes the record's table */
  int      scalars;       /* every field a named, unversioned fixed-width
                             scalar (optional or not) */
  uint32_t flat;          /* > 0: fixed-width scalars and records of one
                             fused run only, none optional: this many
                             scalars in all (a decoder reads them first) */
} bw_Type;

typedef struct bw_Schema {
  long      refs;
  uint32_t  ntypes, nfields, nnames;
  uint32_t  captypes, capfields, capnames;
  bw_Type  *types;
  bw_Field *fields;
  char    **names;
  size_t   *namelens;
  uint64_t  fingerprint;
  unsigned  typebits;     /* bits of a message type id */
  uint32_t  version;      /* current version: the highest since/removed */
  int       sealed;
  char     *desc;         /* the description as text, for other states */
  size_t    desclen;
} bw_Schema;

#define BW_UNBOUNDED UINT64_MAX  /* maxbits too large to count */

/* A new, empty schema with one reference, or NULL without memory. */
bw_Schema *bw_schemanew (void);
/* Take and drop references; the last release frees. Thread-safe. */
void bw_schemaretain (bw_Schema *S);
void bw_schemarelease (bw_Schema *S);
/* Handles, for another owner (bw_handle.c). bw_handlenew gives 'S' a new
** handle id holding one more reference; 0 without memory. bw_handletake
** ends handle 'id' and passes its reference to the caller: the schema, or
** NULL if 'id' is not live (never given, or taken already), found without
** touching any schema. Ids are never reused. Thread-safe. */
uintptr_t  bw_handlenew (bw_Schema *S);
bw_Schema *bw_handletake (uintptr_t id);

/* Builders, before bw_schemaseal. Each returns an index, or BW_NONE when
** out of memory. Pointers into S->fields may move on the next append. */
uint32_t bw_schemaaddname (bw_Schema *S, const char *s, size_t len);
uint32_t bw_schemaaddtype (bw_Schema *S, uint32_t name);
/* Append 'n' zeroed fields (since = 0, removed = UINT32_MAX); returns the
** first. */
uint32_t bw_schemaaddfields (bw_Schema *S, uint32_t n);

/* Check references and nesting, compute sizes, the fingerprint and
** the message id width. On failure writes a reason into 'msg'. */
bw_Status bw_schemaseal (bw_Schema *S, char *msg, size_t msgsize);

/* Keep a copy of 'desc' (the description as text); 0 without memory. */
int bw_schemasetdesc (bw_Schema *S, const char *desc, size_t len);

/* Index of the type called 's', or BW_NONE. */
uint32_t bw_schemafind (const bw_Schema *S, const char *s, size_t len);

/* 1 if field 'f' is on the wire at 'version'. */
static inline int bw_fieldpresent (const bw_Field *f, uint32_t version) {
  return f->since <= version && version < f->removed;
}

/* {===================== game-state encodings (bw_game.c) ============= */

/* Tiered integer 'v' in [min, max]: tier i (of 'n') is announced by i zero
** bits and a one (the last tier by its zeros alone) and covers the next
** 2^bits[i] values (the last tier: the rest up to 'max'). */
bw_Status bw_writetiered (bw_Writer *w, uint64_t v, uint64_t min, uint64_t max,
                          const uint8_t *bits, unsigned n);
uint64_t  bw_readtiered (bw_Reader *r, uint64_t min, uint64_t max,
                         const uint8_t *bits, unsigned n);
/* Bits bw_writetiered spends on 'v'. */
unsigned  bw_tieredbits (uint64_t v, uint64_t min, uint64_t max,
                         const uint8_t *bits, unsigned n);

/* Quantizer of smallest-three components, 'bits' (2..31) each. */
void bw_quatinit (bw_QFloat *q, unsigned bits);
/* Normalize 'in' (x, y, z, w) and fill 'out' with the largest component's
** index and the three quantized others. 0 if 'in' has no length. */
int  bw_quatencode (const bw_QFloat *q, const double in[4], uint32_t out[4]);
/* Rebuild a unit quaternion from bw_quatencode's output. */
void bw_quatdecode (const bw_QFloat *q, const uint32_t in[4], double out[4]);

/* }========================================================== */

#endif
