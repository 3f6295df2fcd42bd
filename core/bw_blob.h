/*
** bw_blob.h - memory-mappable blobs: layout, header, writer, validator
** See LICENSE for copyright and terms.
*/
#ifndef BW_BLOB_H
#define BW_BLOB_H

/*
** A blob is one contiguous block: a 32-byte header, then the root record,
** then everything it points to. Records have a fixed C layout (natural
** alignment, little-endian); strings, bytes and variable arrays are relative
** arrays {int32 offset from the field's own address, uint32 count}; optional
** records are relative pointers (int32, 0 = null). Data pointed to always
** lies after its pointer and after everything claimed before it, so one
** forward pass validates the whole blob. WIRE.md, "Blobs", has every byte.
**
** This header needs only bw.h's types: a program that maps blobs through a
** generated header links core/bw_blob.c and core/bw_stream.c (for UTF-8),
** never Lua or zlib. Building a layout from a schema needs bw_schema.h.
*/

#include "bw.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BW_BLOBMAGIC    UINT32_C(0x4C425742)  /* "BWBL" little-endian */
#define BW_BLOBFORMAT   1                     /* header format version */
#define BW_BLOBHEADER   32                    /* header bytes; root follows */
#define BW_BLOBMAPPABLE 1                     /* flags: usable in place */
#define BW_BLOBMAX      ((size_t)INT32_MAX)   /* offsets are int32 */
#define BW_BLOBNONE     UINT32_MAX

/* How a value sits in a record (or an array's storage). */
enum {
  BW_BSCALAR,   /* ctype in place; ints/enums/bools range-checked */
  BW_BSTRING,   /* relarray of char, count = length, NUL after, UTF-8 */
  BW_BBYTES,    /* relarray of uint8_t */
  BW_BARRAY,    /* relarray of elements ('elem', 'stride' bytes each) */
  BW_BSPARSE,   /* relarray of entries {uint32 index; value at 'voff'} */
  BW_BINLINE,   /* fixed count of elements in place */
  BW_BFIXBYTES, /* fixed count of bytes in place */
  BW_BRECORD,   /* record of type 'ref' in place */
  BW_BPTR,      /* optional record: relptr to a record of type 'ref' */
  BW_BQUAT,     /* float x, y, z, w */
  BW_NBFORMS
};

/* C types of scalars. BOOL is a uint8_t holding 0 or 1. */
enum {
  BW_CU8, BW_CI8, BW_CU16, BW_CI16, BW_CU32, BW_CI32, BW_CU64, BW_CI64,
  BW_CF32, BW_CF64, BW_CBOOL, BW_NCTYPES
};

typedef struct bw_BlobField {
  const char *name;     /* NULL for an element; used in error paths */
  uint32_t offset;      /* of the value in its record (0 for an element) */
  uint32_t presence;    /* offset of the presence byte, or BW_BLOBNONE */
  uint32_t size, align; /* of the value in place */
  uint8_t  form;        /* BW_B* */
  uint8_t  ctype;       /* BW_C*: SCALAR */
  uint8_t  check;       /* 1 if the validator must look at its bytes (0 for
                           floats, full-range ints and records of them) */
  uint32_t ref;         /* RECORD/PTR: type; ARRAY/SPARSE/INLINE: element */
  uint32_t stride;      /* ARRAY/SPARSE/INLINE: bytes per element/entry */
  uint32_t voff;        /* SPARSE: offset of the value in an entry */
  uint32_t count;       /* INLINE/FIXBYTES: element count */
  int64_t  min, max;    /* SCALAR: value range (unsigned ctypes compare
                           as uint64); STRING/BYTES/ARRAY/SPARSE: count */
  double   dmin, dmax;  /* F32/F64 of a quantized float: its range, rounded
                           as stored; dmin > dmax: any value (NaN too) */
  uint32_t sfield;      /* index of the schema field (bw_Schema) */
} bw_BlobField;

typedef struct bw_BlobType {
  const char *name;
  uint32_t size, align;   /* sizeof and _Alignof the C struct */
  uint32_t first, count;  /* its members: fields[first .. first+count) */
  uint64_t fingerprint;   /* of its layout and all it reaches */
  uint32_t vmin, vmax;    /* header versions it is laid out alike at (the
                             fields it reaches change at neither side) */
} bw_BlobType;

/* The layout of every type of a schema at one version. */
typedef struct bw_BlobLayout {
  uint32_t ntypes, nfields;
  uint32_t version;
  const bw_BlobType  *types;
  const bw_BlobField *fields;
  const uint32_t     *map;   /* schema field -> layout field or BW_BLOBNONE;
                                NULL in generated layouts */
} bw_BlobLayout;

typedef struct bw_BlobHeader {
  uint32_t magic;
  uint16_t format, flags;
  uint64_t fingerprint;   /* bw_BlobType.fingerprint of the root */
  uint32_t version;       /* the schema version it was written at */
  uint32_t root;          /* root type id in the writer's schema */
  uint32_t size;          /* total bytes, header included */
  uint32_t reserved;      /* zero */
} bw_BlobHeader;

/* {===================== mapped access ===================== */
/* What generated headers use on a mapped, checked blob: a relative array
** is {offset from its own address, count}, a relative pointer an offset;
** offset 0 is null. */

typedef struct bw_RelArray { int32_t offset; uint32_t count; } bw_RelArray;
typedef struct bw_RelPtr { int32_t offset; } bw_RelPtr;
typedef struct bw_BlobQuat { float x, y, z, w; } bw_BlobQuat;

static inline const void *bw_relptr_get (const bw_RelPtr *p) {
  return p->offset != 0 ? (const void *)((const char *)p + p->offset) : NULL;
}

static inline const void *bw_relarray_data (const bw_RelArray *a) {
  return a->offset != 0 ? (const void *)((const char *)a + a->offset) : NULL;
}

/* Element 'i' (< a->count) of relative array 'a' of 'T'. */
#define bw_relarray_at(a, T, i)  ((const T *)bw_relarray_data(a) + (i))

/* What generated headers pin their layout with, in C99, C11 and C++: C99
** has no _Static_assert or _Alignof, C++ spells them otherwise. The C99
** form redeclares one extern array, legal any number of times. */
#if defined(__cplusplus)
#define BW_BLOBASSERT(c, msg)  static_assert(c, msg)
#define BW_BLOBALIGNOF(T)      alignof(T)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define BW_BLOBASSERT(c, msg)  _Static_assert(c, msg)
#define BW_BLOBALIGNOF(T)      _Alignof(T)
#else
#define BW_BLOBASSERT(c, msg)  extern char bw_blobassert_[(c) ? 1 : -1]
#define BW_BLOBALIGNOF(T)      offsetof(struct { char c; T x; }, x)
#endif

/* }========================================================== */

/* Byte sizes of the C types; the names of the integer ones ("uint8",
** "int8", ... "int64", in BW_C* order, then NULL) for the 'ctype' option. */
extern const uint8_t bw_blobctypesize[BW_NCTYPES];
extern const char *const bw_blobctypenames[BW_CF32 + 1];


/* {===================== scalars ===================== */

/* Little-endian loads and stores of 'n' (1, 2, 4, 8) bytes at 'p', any
** alignment. */
static inline uint64_t bw_blobloadu (const uint8_t *p, unsigned n) {
  uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  switch (n) {
    case 1: return p[0];
    case 2: { uint16_t x; memcpy(&x, p, 2); return x; }
    case 4: { uint32_t x; memcpy(&x, p, 4); return x; }
    default: memcpy(&v, p, 8); return v;
  }
#else
  unsigned i;
  for (i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
#endif
}

static inline void bw_blobstoreu (uint8_t *p, uint64_t v, unsigned n) {
  unsigned i;
  for (i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* Integer value of an integer ctype at 'p' (sign-extended when signed). */
int64_t bw_blobgeti (const uint8_t *p, int ctype);
/* Value of F32/F64 at 'p'. */
double  bw_blobgetf (const uint8_t *p, int ctype);
/* Store 'v' as integer ctype 'ctype' (truncating to its width). */
void    bw_blobseti (uint8_t *p, int ctype, int64_t v);
/* Store 'x' as F32 (rounded as bw_tofloat32) or F64. */
void    bw_blobsetf (uint8_t *p, int ctype, double x);

/* }========================================================== */


/* {===================== header ===================== */

/* Parse the first BW_BLOBHEADER bytes of 'blob' ('size' bytes) into 'h'.
** BW_ETRUNC if shorter, BW_ETAG on a wrong magic, BW_ESCHEMA on an unknown
** format or flags, BW_ERANGE when the recorded size exceeds 'size' or is
** too small. Fingerprints and versions are checked by bw_blobcheck. */
bw_Status bw_blobheader (const void *blob, size_t size, bw_BlobHeader *h);
void bw_blobputheader (uint8_t *p, const bw_BlobHeader *h);

/* }========================================================== */


/* {===================== validator ===================== */

/* Check that 'blob' ('size' bytes, 8-byte aligned when mapped) is a blob of
** type 'root' laid out as 'L': header, fingerprint (and the header's
** version within the root's [vmin, vmax]), then in one forward pass
** every offset (in range, forward, past all earlier data, aligned), every
** count (against its range; sizes computed without overflow), every string
** (NUL-terminated, UTF-8, no NUL inside), every scalar's range, presence
** bytes, sparse indices and the nesting depth. On failure fills 'e' (path,
** bitpos = 8 * byte offset) and, when 'why' is not NULL, a static reason.
** Reads nothing outside [blob, blob + size). */
bw_Status bw_blobcheck (const void *blob, size_t size, const bw_BlobLayout *L,
                        uint32_t root, bw_Error *e, const char **why);

/* }========================================================== */


/* {===================== writer ===================== */

/* A growable blob under construction. Positions are byte offsets, so they
** survive the buffer moving. */
typedef struct bw_BlobWriter {
  uint8_t  *buf;
  size_t    len, cap, max;
  bw_Alloc  alloc;
  void     *ud;
  bw_Status status;      /* sticky */
} bw_BlobWriter;

/* Start a writer growing with 'alloc' up to 'max' (<= BW_BLOBMAX) bytes,
** and reserve the header. */
void   bw_blobwinit (bw_BlobWriter *w, bw_Alloc alloc, void *ud, size_t max);
void   bw_blobwfree (bw_BlobWriter *w);
/* Claim 'n' zeroed bytes aligned to 'align' (a power of two <= 8) at the
** end; returns their position, or 0 (with w->status) when over 'max' or
** out of memory. Positions are never 0: the header comes first. */
size_t bw_blobwalloc (bw_BlobWriter *w, size_t n, size_t align);
/* The same for 'count' items of 'size' bytes: a product past 'max' is
** refused (BW_ENOMEM) before it can wrap around size_t. */
size_t bw_blobwallocn (bw_BlobWriter *w, size_t count, size_t size,
                       size_t align);
/* Point the relarray/relptr at position 'at' to 'target' with 'count'
** (a relptr has no count: pass 'count' < 0). A place outside what was
** claimed, or a target not after it in the blob, sets BW_EARG. */
void   bw_blobwsetrel (bw_BlobWriter *w, size_t at, size_t target,
                       int64_t count);
/* Fill in the header for 'root' of 'L'; the blob is w->buf, w->len bytes. */
void   bw_blobwfinish (bw_BlobWriter *w, const bw_BlobLayout *L,
                       uint32_t root);

/* }========================================================== */


/* {===================== layout from a schema ===================== */

struct bw_Schema;

/* Bytes of memory bw_bloblayout needs for 'S' (8-byte aligned). */
size_t    bw_bloblayoutsize (const struct bw_Schema *S);
/* Lay out every type of the sealed 'S' at 'version' (fields with
** since <= version < removed) into 'mem' (bw_bloblayoutsize bytes, 8-byte
** aligned), filling 'L'. Names point into 'S', which must outlive 'L'.
** BW_ERANGE (and a reason in 'msg') when a record would pass BW_BLOBMAX. */
bw_Status bw_bloblayout (const struct bw_Schema *S, uint32_t version,
                         void *mem, bw_BlobLayout *L, char *msg,
                         size_t msgsize);

/* }========================================================== */

#ifdef __cplusplus
}
#endif

#endif
