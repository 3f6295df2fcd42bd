/*
** bw_gen.h - runtime support of the code `bitwire gen c` writes
** See LICENSE for copyright and terms.
*/
#ifndef BW_GEN_H
#define BW_GEN_H

#include "bw_schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Generated readers fail the way the Lua driver does: the reader's sticky
** status and errpos say what and where (a range at the field's first bit),
** and the field path is built in a bw_Error while the failure unwinds. */

/* Fail 'r' with 'code' at bit 'pos' unless it failed already. Returns 0. */
static inline int bw_genfail (bw_Reader *r, bw_Status code, uint64_t pos) {
  if (r->status == BW_OK) {
    r->status = code;
    r->errpos = pos;
  }
  return 0;
}

/* Read an 'n'-bit offset in [0, span] into '*u'; a larger one fails with
** BW_ERANGE at its first bit. Returns 0 on failure. */
static inline int bw_genspan (bw_Reader *r, unsigned n, uint64_t span,
                              uint64_t *u) {
  uint64_t start = r->pos;
  *u = bw_readbits(r, n);
  if (BW_UNLIKELY(r->status != BW_OK)) return 0;
  if (BW_UNLIKELY(*u > span)) return bw_genfail(r, BW_ERANGE, start);
  return 1;
}

/* 'min + u' as a signed 64-bit integer (two's complement wrap-around). */
static inline int64_t bw_gensigned (uint64_t u) {
  return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

/* Read a count in [min, max] ('nbits' wide) into '*n'. With 'minbits' > 0
** (the least an element costs), a count the remaining bits cannot hold
** fails with BW_ETRUNC at the count's first bit. Returns 0 on failure. */
int bw_gencount (bw_Reader *r, unsigned nbits, uint64_t min, uint64_t max,
                 uint64_t minbits, uint64_t *n);

/* A delta's array of 'n' elements against a baseline of 'bn': a kept
** element costs a bit, a new one 'minbits'; when the bits left cannot hold
** that, fail with BW_ETRUNC at 'start' (the count's first bit). */
int bw_gendeltacount (bw_Reader *r, uint64_t start, uint64_t n, uint64_t bn,
                      uint64_t minbits);

/* Prepend "name" (or "[index]") to err->path, the driver's path syntax.
** Both return 0, so a generated reader writes 'return bw_genpath(...)'. */
int bw_genpath (bw_Error *err, const char *name);
int bw_genindex (bw_Error *err, uint64_t index);

/* Finish a generated read: err gets r's status and failure position. */
int bw_generror (const bw_Reader *r, bw_Error *err);

/* Refuse a value that does not fit: fail 'w' with 'code'. Returns 0. */
static inline int bw_genrefuse (bw_Writer *w, bw_Status code) {
  bw_writerfail(w, code);
  return 0;
}

/* 'pos' rounded up to a byte boundary. */
#define BW_GENALIGN(pos)  (((pos) + 7) & ~(uint64_t)7)

/* Length of the NUL-terminated string 's' held in 'maxlen' + 1 bytes;
** maxlen + 1 when it has no NUL there. */
size_t bw_genstrlen (const char *s, size_t maxlen);
/* Write the string 's' (NUL-terminated within maxlen + 1 bytes) as
** string(s, maxlen). Returns 0 on failure. */
int bw_genwritestring (bw_Writer *w, const char *s, size_t maxlen);
/* Read string(s, maxlen) into 's' (maxlen + 1 bytes), NUL-terminated. */
int bw_genreadstring (bw_Reader *r, char *s, size_t maxlen);
/* Read 'n' aligned bytes into 'dst'. */
int bw_genreadbytes (bw_Reader *r, uint8_t *dst, size_t n);

/* An angle (WIRE.md, angle) by the core's bw_angleencode, so the rounding
** is the driver's; a non-finite 'x' is refused as the driver refuses it. */
int bw_genwriteangle (bw_Writer *w, double x, double period, unsigned bits);

/* A quaternion (x, y, z, w) by smallest three; 0 for one with no length. */
int bw_genwritequat (bw_Writer *w, const bw_QFloat *q, const float v[4]);
int bw_genreadquat (bw_Reader *r, const bw_QFloat *q, float v[4]);

/* delta = "relative" (WIRE.md, "Relative differences"): field 'f' holds
** what the compiled program has for a relative FLOAT, ANGLE or QUAT (kind,
** nbits, dmax, q, tiers); the tiers and the wire are the core's
** (bw_fielddiff, bw_writediff, bw_writequatdiff). A baseline the driver
** would not start from (a non-finite angle, a quaternion with no length)
** sends the value whole, as the driver does. A float's range is checked
** by the caller, as for a whole float. Readers give the code in '*u' (a
** float's or angle's) or the quaternion in 'v'; 0 on failure. */
int bw_genwritediff (bw_Writer *w, const bw_Field *f, double base, double x);
int bw_genreaddiff (bw_Reader *r, const bw_Field *f, double base, uint64_t *u);
int bw_genwritequatdiff (bw_Writer *w, const bw_Field *f, const float base[4],
                         const float v[4]);
int bw_genreadquatdiff (bw_Reader *r, const bw_Field *f, const float base[4],
                        float v[4]);

/* Equality on the wire, for delta encoding: strings by their bytes,
** quaternions by the integers they send. */
int bw_genstreq (const char *a, const char *b, size_t maxlen);
int bw_genquateq (const bw_QFloat *q, const float a[4], const float b[4]);

/* {===================== sparse arrays ===================== */
/* The slots 1..n of a sparse array and their encoding (WIRE.md, sparse). */
typedef struct bw_GenSparse {
  uint64_t n;             /* slots */
  unsigned nbits;         /* width of the index encoding's count */
  int      encoding;      /* BW_SP* */
  const uint8_t *tiers;   /* relative encoding in tiers, or NULL */
  unsigned ntiers;
  uint64_t slotmin;       /* least bits a slot's value costs */
} bw_GenSparse;

typedef struct bw_GenSlots {
  int      encoding;      /* the one picked (never BW_SPAUTO) */
  uint64_t prev;          /* last slot sent (or read) */
  uint64_t left;          /* index encoding: slots still to read */
} bw_GenSlots;

/* Bit 'i' (0-based) of a presence mask. */
#define bw_genhas(mask, i)  (((mask)[(i) >> 3] >> ((i) & 7)) & 1)

/* Writing: pick the encoding of the slots set in 'mask' and write its
** header; then bw_genslot before each sent slot (1-based) and
** bw_genslotsend after the last. Each returns the bits it writes, and with
** 'w' NULL only counts them (for T_bits). */
uint64_t bw_genslotsbegin (bw_Writer *w, const bw_GenSparse *sp,
                           const uint8_t *mask, bw_GenSlots *st);
uint64_t bw_genslot (bw_Writer *w, const bw_GenSparse *sp, bw_GenSlots *st,
                     uint64_t slot);
uint64_t bw_genslotsend (bw_Writer *w, const bw_GenSparse *sp,
                         bw_GenSlots *st);

/* Reading: bw_genreadslotsbegin reads the header (0 on failure); each
** bw_genreadslot gives the next present slot (1-based) in '*slot' and
** returns 1, or 0 at the end, or -1 on failure. */
int bw_genreadslotsbegin (bw_Reader *r, const bw_GenSparse *sp,
                          bw_GenSlots *st);
int bw_genreadslot (bw_Reader *r, const bw_GenSparse *sp, bw_GenSlots *st,
                    uint64_t *slot);

/* }========================================================== */

#ifdef __cplusplus
}
#endif

#endif
