/*
** bw_schema.h - compiled schema programs: types, fields, sizes, fingerprint
** See LICENSE for copyright and terms.
*/
#ifndef BW_SCHEMA_H
#define BW_SCHEMA_H

#include <string.h>

#include "bw.h"

#ifdef __cplusplus
extern "C" {
#endif

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
  uint8_t  ctype;         /* INT/UINT/ENUM/TIERED in blobs: BW_C* + 1
                             (bw_blob.h); 0: the smallest that holds it */
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
  double   res;           /* FLOAT: the declared resolution */
} bw_Field;

typedef struct bw_Type {
  uint32_t name;
  uint32_t msgid;         /* message id, BW_NONE when not a message */
  uint32_t first, count;  /* its fields: fields[first .. first + count) */
  uint64_t minbits, maxbits;
  unsigned depth;         /* nesting levels below it */
  int      versioned;     /* some field has since/removed */
  uint32_t noptional;     /* optional fields: a fresh decode reads them
                             before it sizes the record's table */
  int      shrinks;       /* enough fields optional that a table sized by
                             what came may be smaller: hash parts are
                             powers of 2 (Lua's, and most hash tables') */
  int      scalars;       /* every field a named, unversioned fixed-width
                             scalar (optional or not) */
  uint32_t flat;          /* > 0: fixed-width scalars, records of one
                             fused run, fixed-count arrays of fixed-width
                             scalars and quaternions only, none optional:
                             this many scalars in all (a decoder reads
                             them first) */
} bw_Type;

/* The names index: the name of a type's field, of a type, of an enum's
** value, by its scope (BW_TYPESCOPE, a type's index for its fields,
** BW_ENUMSCOPE of an enum's first value name) and bytes; 'value' is the
** field's index in fields, the type's, the enum value's. */
typedef struct bw_NameEntry { uint32_t scope, name, value; } bw_NameEntry;

#define BW_TYPESCOPE      UINT32_C(0xFFFFFFFF)
#define BW_ENUMSCOPE(ref) (UINT32_C(0x80000000) | (ref))

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
  uint32_t  nmessages;    /* message ids 0..nmessages-1 */
  uint32_t *messages;     /* id -> type; NULL: every type, id = index */
  int       explicitids;  /* a messages list or message_bits was given:
                             the fingerprint covers the ids */
  int       strict;       /* encode refuses undeclared keys (not on the wire) */
  bw_NameEntry *index;    /* open addressing over 'indexcap' slots (a power
                             of 2; an empty one's name is BW_NONE): the
                             compiler's, kept; NULL when built without it */
  uint32_t  indexcap;
  uint32_t  seed;         /* of the index's hash: new per schema, so no
                             file can pick names that collide */
  struct bw_Build *build; /* the compiler's state until sealed (bw_compile.c) */
} bw_Schema;

#define BW_UNBOUNDED UINT64_MAX  /* maxbits too large to count */

/* A new, empty schema with one reference, or NULL without memory. */
bw_Schema *bw_schemanew (void);
/* The slot of (scope, the 'len' bytes at 's') in index 'tab' of 'cap'
** slots (a power of 2, never full), or the empty slot where it goes. */
bw_NameEntry *bw_nameslot (const bw_Schema *S, bw_NameEntry *tab,
                           uint32_t cap, uint32_t scope, const char *s,
                           size_t len);
/* The field of type 't' named by the 'len' bytes at 'k', or NULL. */
const bw_Field *bw_fieldnamed (const bw_Schema *S, uint32_t t, const char *k,
                               size_t len);
/* The index of the value of enum field 'f' named by the 'len' bytes at
** 's', or BW_NONE. */
uint32_t bw_enumvalue (const bw_Schema *S, const bw_Field *f, const char *s,
                       size_t len);
/* Take and drop references; the last release frees. Thread-safe. */
void bw_schemaretain (bw_Schema *S);
void bw_schemarelease (bw_Schema *S);
/* The references 'S' has now: 1 when its one owner has not shared it. */
long bw_schemarefs (bw_Schema *S);
/* Handles, for another owner (bw_handle.c). bw_handlenew gives 'S' a new
** handle id holding one more reference; 0 without memory. bw_handletake
** ends handle 'id' and passes its reference to the caller: the schema, or
** NULL if 'id' is not live (never given, or taken already), found without
** touching any schema. bw_handleget leaves the handle live and gives a
** new reference of the caller's own (or NULL). Ids are never reused.
** Thread-safe. */
uintptr_t  bw_handlenew (bw_Schema *S);
bw_Schema *bw_handleget (uintptr_t id);
bw_Schema *bw_handletake (uintptr_t id);

/* Builders, before bw_schemaseal. Each returns an index, or BW_NONE when
** out of memory or the schema is sealed (immutable: shared between
** threads). Pointers into S->fields may move on the next append. */
uint32_t bw_schemaaddname (bw_Schema *S, const char *s, size_t len);
uint32_t bw_schemaaddtype (bw_Schema *S, uint32_t name);
/* Append 'n' zeroed fields (since = 0, removed = UINT32_MAX); returns the
** first. */
uint32_t bw_schemaaddfields (bw_Schema *S, uint32_t n);

/* Check references and nesting, compute sizes, the fingerprint and
** the message id width. On failure writes a reason into 'msg'. Once: a
** sealed schema is refused with BW_EARG and left as it is. */
bw_Status bw_schemaseal (bw_Schema *S, char *msg, size_t msgsize);

/* Keep a copy of 'desc' (the description as text); 0 without memory. */
int bw_schemasetdesc (bw_Schema *S, const char *desc, size_t len);

/* What the wire form of each type (th[ntypes]) and of a field depends
** on, as 64-bit hashes that leave names and defaults out (bw_fieldhash
** with th). Equal hashes, equal bits; tools diff schemas with them.
** bw_typehashes returns 0 without memory. */
int      bw_typehashes (const bw_Schema *S, uint64_t *th);
uint64_t bw_fieldhash (const bw_Schema *S, const bw_Field *f,
                       const uint64_t *th);

/* Index of the type called 's', or BW_NONE. */
uint32_t bw_schemafind (const bw_Schema *S, const char *s, size_t len);

/* {===================== the compiler (bw_compile.c) ================ */
/* Descriptions arrive as plain values (a host language's table walk
** fills these); every rule about them is checked here, once, and errors
** name the type, the field path and the reason:
**   Entity.pos.x: res must be > 0, got 0
** Build: bw_schemanew, bw_schemadeclare each type (ids in that order),
** then for each type bw_schemabegin and one bw_schemaaddfield per field,
** optionally bw_schemamessages, then bw_schemafinish (which seals). */

#define BW_MAXFIELDS  100000  /* fields, elements and enum values in all */
#define BW_MAXZERO    65536   /* values a part taking no bits may make */
#define BW_ERRSIZE    256

/* A description error: "Type.field.path: reason". */
typedef struct bw_SchemaError { char msg[BW_ERRSIZE]; } bw_SchemaError;

/* A value as the description gave it. */
enum { BW_VNONE, BW_VINT, BW_VFLOAT, BW_VBOOL, BW_VSTRING, BW_VLIST,
       BW_VOTHER };
typedef struct bw_Value {
  int         type;    /* BW_V* */
  int         plain;   /* LIST: 1 when it has no keys but 1..len */
  int64_t     i;       /* INT, BOOL */
  double      d;       /* FLOAT */
  const char *s;       /* STRING: the bytes; OTHER: its type's name */
  size_t      len;     /* STRING: bytes; LIST: items */
  const struct bw_Value *items;  /* LIST */
} bw_Value;

/* 'v' as a message shows it (Lua's tostring; a string's first 64 bytes
** with each byte that is not printable ASCII written \ddd): descriptions
** come from outside, and messages go to terminals and logs. */
typedef struct bw_ValueText { char s[264]; } bw_ValueText;
bw_ValueText bw_valuetext (const bw_Value *v);

/* A field's options, by name (bw_optionnames). */
enum { BW_OMIN, BW_OMAX, BW_ORES, BW_OCLAMP, BW_OBITS, BW_OCOUNT, BW_OOF,
       BW_OVALUES, BW_OMAGIC, BW_OENCODING, BW_OTIERS, BW_OUNIT, BW_ODELTA,
       BW_OCTYPE, BW_OOPTIONAL, BW_ODEFAULT, BW_OSINCE, BW_OREMOVED,
       BW_NOPTIONS };
extern const char *const bw_optionnames[BW_NOPTIONS + 1];
/* Index of option 'k', or -1. */
int bw_optionindex (const char *k, size_t len);

typedef struct bw_FieldSpec {
  bw_Value name;       /* NONE for an element or a bare align/check */
  bw_Value kind;       /* a kind's name or a declared type's name */
  bw_Value opt[BW_NOPTIONS];
  const struct bw_FieldSpec *of;  /* 'of' (opt[BW_OOF] says it was given) */
  const char *unknown; /* the first key that names no option, or NULL */
  size_t unknownlen;
} bw_FieldSpec;

static inline bw_Value bw_vstr (const char *s) {
  bw_Value v = { BW_VSTRING, 0, 0, 0, s, strlen(s), NULL };
  return v;
}
static inline bw_Value bw_vint (int64_t i) {
  bw_Value v = { BW_VINT, 0, i, 0, NULL, 0, NULL };
  return v;
}
static inline bw_Value bw_vnum (double d) {
  bw_Value v = { BW_VFLOAT, 0, 0, d, NULL, 0, NULL };
  return v;
}
static inline bw_Value bw_vbool (int b) {
  bw_Value v = { BW_VBOOL, 0, b != 0, 0, NULL, 0, NULL };
  return v;
}
static inline bw_Value bw_vlist (const bw_Value *items, size_t n) {
  bw_Value v = { BW_VLIST, 1, 0, 0, NULL, n, items };
  return v;
}

/* Declare a type (an identifier, not a kind's name); its index. */
uint32_t  bw_schemadeclare (bw_Schema *S, const bw_Value *name, bw_SchemaError *e);
/* Start type 't', which will get 'nfields' fields. */
bw_Status bw_schemabegin (bw_Schema *S, uint32_t t, uint32_t nfields,
                          bw_SchemaError *e);
/* Check and add the next field of the type begun. A refused field may be
** given again, fixed, in the same slot; what it had made (an element, enum
** values) stays counted against BW_MAXFIELDS, which so bounds a caller
** that retries without end. */
bw_Status bw_schemaaddfield (bw_Schema *S, const bw_FieldSpec *f, bw_SchemaError *e);
/* Message ids: 'list' (NONE: every type, by index) of type names, and the
** id width 'bits' (NONE: just enough). Both NONE is the default, as if not
** called: the ids stay out of the fingerprint (WIRE.md). */
bw_Status bw_schemamessages (bw_Schema *S, const bw_Value *list,
                             const bw_Value *bits, bw_SchemaError *e);
/* Check that every type got its fields, then seal. */
bw_Status bw_schemafinish (bw_Schema *S, bw_SchemaError *e);
void bw_buildfree (bw_Schema *S);

/* Message id of type 't' (BW_NONE: not a message), and back. */
static inline uint32_t bw_msgid (const bw_Schema *S, uint32_t t) {
  return S->types[t].msgid;
}
static inline uint32_t bw_msgtype (const bw_Schema *S, uint64_t id) {
  if (id >= S->nmessages) return BW_NONE;
  return S->messages ? S->messages[id] : (uint32_t)id;
}

/* }========================================================== */

/* 1 if field 'f' is on the wire at 'version'. */
static inline int bw_fieldpresent (const bw_Field *f, uint32_t version) {
  return f->since <= version && version < f->removed;
}

/* Whether 'left' bits can hold an array of 'n' elements against a baseline
** of 'bn' (0: none): a kept element costs a bit, a new one 'minbits' at
** least. The count check of the driver's decode and of generated code,
** made before any element is read; no product, which could wrap. */
static inline int bw_countfits (uint64_t n, uint64_t bn, uint64_t minbits,
                                uint64_t left) {
  uint64_t kept = n < bn ? n : bn;
  return kept <= left
         && (minbits == 0 || n - kept <= (left - kept) / minbits);
}

/* The bits such an array needs at least, as a failure names them: up to
** UINT64_MAX. */
static inline uint64_t bw_countbits (uint64_t n, uint64_t bn,
                                     uint64_t minbits) {
  uint64_t kept = n < bn ? n : bn;
  if (minbits > 0 && n - kept > (UINT64_MAX - kept) / minbits)
    return UINT64_MAX;
  return kept + (n - kept) * minbits;
}

/* {===================== game-state encodings (bw_game.c) ============= */

/* Tiered integer 'v' in [min, max]: tier i (of 'n') is announced by i zero
** bits and a one (the last tier by its zeros alone) and covers the next
** 2^bits[i] values (the last tier: the rest up to 'max'). */
bw_Status bw_writetiered (bw_Writer *w, uint64_t v, uint64_t min, uint64_t max,
                          const uint8_t *bits, unsigned n);
uint64_t  bw_readtiered (bw_Reader *r, uint64_t min, uint64_t max,
                         const uint8_t *bits, unsigned n);
/* Upper end of tier 'i' (of 'n') when it starts at 'lo' (for code that
** walks the tiers itself, as generated serialize.h functions do). */
uint64_t  bw_tierhi (uint64_t lo, uint64_t max, const uint8_t *bits,
                     unsigned i, unsigned n);
/* Bits bw_writetiered spends on 'v'. */
unsigned  bw_tieredbits (uint64_t v, uint64_t min, uint64_t max,
                         const uint8_t *bits, unsigned n);

/* Quantizer of smallest-three components, 'bits' (2..31) each; other
** 'bits' give BW_EARG and a quantizer of 0-bit components. */
bw_Status bw_quatinit (bw_QFloat *q, unsigned bits);
/* Normalize 'in' (x, y, z, w) and fill 'out' with the largest component's
** index and the three quantized others, in canonical form (below). 0 if
** 'in' has no length. */
int  bw_quatencode (const bw_QFloat *q, const double in[4], uint32_t out[4]);
/* 1 if bw_quatencode takes 'in': it has a finite length above 0. */
int  bw_quatvalid (const double in[4]);
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
/* bw_readquat, and when it reads a code, its bw_quatdecode in 'out'. */
int       bw_readquatdecode (bw_Reader *r, const bw_QFloat *q,
                             uint32_t code[4], double out[4]);

/* Angles: 'x' (finite) wrapped into [0, period) in 2^bits steps (1..32),
** rounded to the nearest step; a step of 2^bits is 0 again. Other 'bits'
** give 0. */
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
/* The code of the number 'x' as relative FLOAT or ANGLE field 'f', the one
** a difference from a baseline of 'x' starts at; 0 when 'x' cannot be one
** (a non-finite angle: the value is then sent whole). */
int       bw_diffbase (const bw_Field *f, double x, uint64_t *code);
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
** copies of the baseline): by an error bound, or by trying each code when
** there are at most 2^16 + 1; 0 otherwise. */
int       bw_qfloatexact (const bw_QFloat *q);
/* The codes bw_qfloatexact tries one by one for 'q' (0: none, the bound
** decides). */
uint32_t  bw_qfloattries (const bw_QFloat *q);

/* }========================================================== */

#ifdef __cplusplus
}
#endif

#endif
