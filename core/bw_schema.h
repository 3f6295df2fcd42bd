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
#define BW_RELTIERS   { 3, 5, 7, 9 }
#define BW_NRELTIERS  4
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

#define BW_SCHEMAMAGIC UINT32_C(0x62777363)  /* "bwsc": a live schema */

typedef struct bw_Schema {
  uint32_t  magic;        /* BW_SCHEMAMAGIC until freed */
  long      refs;
  long      shares;       /* handles given out and not yet taken */
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
/* A handle for another owner: one more reference and one more share.
** bw_schematake takes a share back (1), or finds none left (0): the handle
** was already taken. Thread-safe. */
void bw_schemashare (bw_Schema *S);
int  bw_schematake (bw_Schema *S);

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
** index and the three quantized others, in canonical form (below). 0 if
** 'in' has no length. */
int  bw_quatencode (const bw_QFloat *q, const double in[4], uint32_t out[4]);
/* Rebuild a unit quaternion from bw_quatencode's output. */
void bw_quatdecode (const bw_QFloat *q, const uint32_t in[4], double out[4]);
/* Widest components whose codes are exact: up to it a code is canonical
** when bw_quatdecode then bw_quatencode gives it back, every code
** bw_quatencode makes is canonical, and readers refuse the others. Wider
** components are finer than float32 can hold (SECURITY.md). */
#define BW_QUATEXACT 22
int  bw_quatcanonical (const bw_QFloat *q, const uint32_t code[4]);
/* A code on the wire: the index in 2 bits, then the three in q->nbits
** each. The reader fails with BW_ERANGE on a non-canonical code (at the
** code's first bit) when q->nbits <= BW_QUATEXACT. */
bw_Status bw_writequat (bw_Writer *w, const bw_QFloat *q,
                        const uint32_t code[4]);
int       bw_readquat (bw_Reader *r, const bw_QFloat *q, uint32_t code[4]);

/* Angles: 'x' (finite) wrapped into [0, period) in 2^bits steps (1..32),
** rounded to the nearest step; a step of 2^bits is 0 again. */
uint32_t bw_angleencode (double x, double period, unsigned bits);
double   bw_angledecode (uint32_t q, double period, unsigned bits);

/* Relative differences (delta = "relative"): a quantized value 'v' sent
** from its baseline's 'base', both in [0, top]. The signed difference (the
** short way round when 'wrap': top + 1 is the period) is zigzagged, z = 2d
** or -2d - 1; tier i of 'n' holds the next 2^tiers[i] values of z and is
** announced by i zero bits and a one, then z - (its first) in tiers[i]
** bits (widths 0..32, at most BW_MAXTIERS); n zero bits escape to 'v'
** itself in 'nbits'. The writer takes the first tier that holds z when it
** is shorter than the escape. WIRE.md. */
typedef struct bw_Diff {
  uint64_t top;
  unsigned nbits, ntiers;
  int wrap;
  const uint8_t *tiers;
} bw_Diff;
/* The difference parameters of a relative FLOAT, QUAT or ANGLE field. */
void      bw_fielddiff (const bw_Field *f, bw_Diff *d);
bw_Status bw_writediff (bw_Writer *w, const bw_Diff *d, uint64_t base,
                        uint64_t v);
/* The value; BW_ERANGE (at the field's first bit) when it leaves [0, top]. */
uint64_t  bw_readdiff (bw_Reader *r, const bw_Diff *d, uint64_t base);
unsigned  bw_diffbits (const bw_Diff *d, uint64_t base, uint64_t v);
/* A quaternion from its baseline: bool(same largest index), then the three
** components as differences, or else the whole code (bw_writequat). */
bw_Status bw_writequatdiff (bw_Writer *w, const bw_Field *f,
                            const uint32_t base[4], const uint32_t code[4]);
int       bw_readquatdiff (bw_Reader *r, const bw_Field *f,
                           const uint32_t base[4], uint32_t code[4]);
/* 1 if every code of 'q' decodes to a value that encodes back to it, the
** condition for relative differences (the two ends quantize different
** copies of the baseline). Checks at most 2^22 + 1 codes. */
int       bw_qfloatexact (const bw_QFloat *q);

/* }========================================================== */

#endif
