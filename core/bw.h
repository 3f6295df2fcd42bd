/*
** bw.h - bitwire core: bit streams, serialize primitives, framing, schemas
** See LICENSE for copyright and terms.
*/
#ifndef BW_H
#define BW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BW_VERSION   "0.1.0"
#define BW_MAXPATH   128          /* bytes kept of an error's field path */
#define BW_MAXDEPTH  32           /* nesting limit of schema types */
#define BW_CHECKMAGIC UINT32_C(0x12345678)

/* {===================== status codes ===================== */

typedef enum bw_Status {
  BW_OK = 0,
  BW_ETRUNC,    /* read past the end of the input / writer limit reached */
  BW_ERANGE,    /* value outside its range or width */
  BW_EALIGN,    /* non-zero padding bit */
  BW_ECHECK,    /* serialization check value mismatch */
  BW_ECRC,      /* packet CRC32 mismatch */
  BW_EUTF8,     /* string with NUL or malformed UTF-8 */
  BW_ETAG,      /* unknown message type or sparse index out of order */
  BW_EDEPTH,    /* nesting deeper than BW_MAXDEPTH */
  BW_ENOMEM,    /* allocation failed or over the size limit */
  BW_ESCHEMA,   /* schema mismatch (unknown fingerprint or tag) */
  BW_EARG,      /* bad parameter from the caller */
  BW_EBASELINE, /* delta against a baseline the receiver does not have */
  BW_NSTATUS
} bw_Status;

/* Static message for 'code', never NULL. */
const char *bw_strerror (bw_Status code);
/* Short word for 'code' ("truncated", "range", ...), never NULL. */
const char *bw_codename (bw_Status code);

typedef struct bw_Error {
  bw_Status code;
  uint64_t  bitpos;            /* bit offset where decoding failed */
  char      path[BW_MAXPATH];  /* "player.items[3].count" */
} bw_Error;

/* }========================================================== */


/* {===================== bit writer ===================== */

/* Allocator with lua_Alloc's contract: nsize == 0 frees, else reallocs. */
typedef void *(*bw_Alloc) (void *ud, void *ptr, size_t osize, size_t nsize);

typedef struct bw_Writer {
  uint8_t  *buf;
  size_t    cap;         /* bytes in 'buf' */
  size_t    wordpos;     /* bytes flushed from 'scratch' */
  uint64_t  scratch;     /* pending bits, LSB first */
  unsigned  scratchbits; /* 0..63 */
  bw_Status status;      /* sticky: the first failure */
  uint64_t  errpos;      /* bit position of the first failure */
  size_t    maxbytes;    /* hard limit on the packet size */
  bw_Alloc  alloc;       /* NULL: 'buf' is the caller's and never grows */
  void     *ud;
} bw_Writer;

/* Start a writer over the caller's 'buf' of 'cap' bytes; writing more than
** 'cap' bytes fails with BW_ETRUNC. The caller keeps 'buf'. A NULL 'buf'
** has no room: with a 'cap' above 0 the writer starts failed (BW_EARG). */
void bw_writerinit (bw_Writer *w, void *buf, size_t cap);
/* Start a growable writer that allocates with 'alloc' up to 'maxbytes'.
** Free its memory with bw_writerfree. */
void bw_writerinitgrow (bw_Writer *w, bw_Alloc alloc, void *ud,
                        size_t maxbytes);
/* Release a growable writer's buffer; a no-op for a fixed one. */
void bw_writerfree (bw_Writer *w);
/* Forget everything written, keeping the buffer. */
void bw_writerreset (bw_Writer *w);
/* Make room for 'n' more bits; used by bw_writebits. */
bw_Status bw_writerreserve (bw_Writer *w, uint64_t n);
/* Flush the partial word and return the packet: ceil(bits/8) bytes in
** '*len'. The pointer stays valid until the next write. Writing may go on. */
const uint8_t *bw_writerdata (bw_Writer *w, size_t *len);

static inline uint64_t bw_bitswritten (const bw_Writer *w) {
  return (uint64_t)w->wordpos * 8 + w->scratchbits;
}

static inline void bw_store64 (uint8_t *p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(p, &v, 8);
#else
  int i;
  for (i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
#endif
}

static inline uint64_t bw_load64 (const uint8_t *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
#else
  uint64_t v = 0;
  int i;
  for (i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
#endif
}

/* Branch hints for the hot paths; error paths are the unlikely ones. */
#if defined(__GNUC__)
#define BW_UNLIKELY(c)  __builtin_expect(!!(c), 0)
#else
#define BW_UNLIKELY(c)  (c)
#endif

static inline bw_Status bw_writerfail (bw_Writer *w, bw_Status code) {
  if (w->status == BW_OK) {
    w->status = code;
    w->errpos = bw_bitswritten(w);
  }
  return w->status;
}

/* Write the low 'n' (0..64) bits of 'v'. A 'v' that does not fit in 'n'
** bits fails with BW_ERANGE, an 'n' over 64 with BW_EARG; both write
** nothing. Returns w->status. */
static inline bw_Status bw_writebits (bw_Writer *w, uint64_t v, unsigned n) {
  unsigned sb;
  /* 16 bytes of room past 'wordpos' hold any write, so only a failed writer
  ** or one near the end of its buffer takes the exact checks */
  if (BW_UNLIKELY(w->status != BW_OK || w->cap - w->wordpos < 16)) {
    if (w->status != BW_OK) return w->status;
    if (n >= 64 ? n > 64 : (v >> n) != 0)
      return bw_writerfail(w, n > 64 ? BW_EARG : BW_ERANGE);
    if (n > (uint64_t)w->cap * 8 - bw_bitswritten(w)
        && bw_writerreserve(w, n) != BW_OK)
      return w->status;
  }
  else if (BW_UNLIKELY(n >= 64 ? n > 64 : (v >> n) != 0))
    return bw_writerfail(w, n > 64 ? BW_EARG : BW_ERANGE);
  sb = w->scratchbits;
  w->scratch |= v << sb;
  sb += n;
  if (sb >= 64) {  /* a whole word: flush it; room is guaranteed above */
    bw_store64(w->buf + w->wordpos, w->scratch);
    w->wordpos += 8;
    sb -= 64;
    w->scratch = v >> 1 >> (n - 1 - sb);  /* the bits that did not fit */
  }
  w->scratchbits = sb;
  return BW_OK;
}

/* 1 if any write of up to 64 bits to 'w' succeeds (bw_writebits' fast
** path): writes joined into one there write and fail as they would apart. */
static inline int bw_writerhasroom (const bw_Writer *w) {
  return w->status == BW_OK && w->cap - w->wordpos >= 16;
}

/* Forget the bits written from bit 'pos' on (pos <= bw_bitswritten(w)), as
** if they had never been written; a failed writer stays as it is. A delta
** encoder writes a record optimistically and takes it back when nothing in
** it changed. */
static inline void bw_writerrewind (bw_Writer *w, uint64_t pos) {
  size_t word = (size_t)(pos / 64) * 8;
  unsigned sb = (unsigned)(pos % 64);
  if (w->status != BW_OK || pos > bw_bitswritten(w)) return;
  if (word < w->wordpos) w->scratch = bw_load64(w->buf + word);
  w->wordpos = word;
  w->scratch = sb == 0 ? 0 : w->scratch & (UINT64_MAX >> (64 - sb));
  w->scratchbits = sb;
}

/* }========================================================== */


/* {===================== bit reader ===================== */

/* Bytes of a packet's end that its reader copies (bw_Reader.tail). */
#define BW_READTAIL  16

typedef struct bw_Reader {
  const uint8_t *data;
  size_t    nbytes;
  uint64_t  nbits;
  uint64_t  pos;         /* bits consumed */
  bw_Status status;      /* sticky: after a failure reads return 0 */
  uint64_t  errpos;      /* bit position of the first failure */
  size_t    tailat;      /* the byte of 'data' that tail[0] copies */
  /* The last BW_READTAIL bytes (all when fewer), then zeros: a read near
  ** the end loads whole words from here, never past the data. Delta
  ** packets are small: most of their reads are near the end. */
  uint8_t   tail[BW_READTAIL + 8];
} bw_Reader;

/* Read from 'data' of 'n' bytes; never touches a byte outside it. */
void bw_readerinit (bw_Reader *r, const void *data, size_t n);

static inline uint64_t bw_bitsremaining (const bw_Reader *r) {
  return r->nbits - r->pos;
}

static inline int bw_readerfail (bw_Reader *r, bw_Status code) {
  if (r->status == BW_OK) {
    r->status = code;
    r->errpos = r->pos;
  }
  return 0;
}

/* Read 'n' (0..64) bits when the status is BW_OK and 72 bits or more are
** left (bw_bitsremaining): no checks. */
static inline uint64_t bw_readbitsfast (bw_Reader *r, unsigned n) {
  uint64_t pos = r->pos, v;
  size_t byte = (size_t)(pos >> 3);
  unsigned sh = (unsigned)(pos & 7);
  v = bw_load64(r->data + byte) >> sh;
  if (n + sh > 64)  /* byte 'byte + 8' exists */
    v |= (uint64_t)r->data[byte + 8] << (64 - sh);
  r->pos = pos + n;
  return n == 64 ? v : v & ((UINT64_C(1) << n) - 1);
}

/* Read 'n' (0..64) bits. Past the end: sets BW_ETRUNC and returns 0; an
** 'n' over 64 sets BW_EARG. */
static inline uint64_t bw_readbits (bw_Reader *r, unsigned n) {
  uint64_t pos = r->pos, v;
  size_t byte = (size_t)(pos >> 3);
  unsigned sh = (unsigned)(pos & 7);
  const uint8_t *p = r->data + byte;
  if (BW_UNLIKELY(r->status != BW_OK || r->nbits - pos < 72 || n > 64)) {
    if (r->status != BW_OK) return 0;
    if (n > r->nbits - pos || n > 64)
      return (uint64_t)bw_readerfail(r, n > 64 ? BW_EARG : BW_ETRUNC);
    /* near the end (byte >= nbytes - 9 >= tailat): the tail's copy */
    p = r->tail + (byte - r->tailat);
  }
  v = bw_load64(p) >> sh;  /* 72 bits left, or the tail: 9 bytes there */
  if (n + sh > 64)  /* pos + n <= nbits, so byte 'byte + 8' exists */
    v |= (uint64_t)p[8] << (64 - sh);
  r->pos = pos + n;
  return n == 64 ? v : v & ((UINT64_C(1) << n) - 1);
}

/* }========================================================== */


/* {===================== primitives ===================== */
/* Wire format: see WIRE.md. Writers return w->status; readers set the
** reader's sticky status and return 0 (or a zero value) on failure. */

/* Bits needed for values in [min, max]: 0 if equal, else the bit length of
** (max - min) as unsigned 64-bit. Requires min <= max. */
unsigned bw_bitsrequired (int64_t min, int64_t max);

bw_Status bw_writebool (bw_Writer *w, int b);
/* Write 'v' in [min, max] as v - min in bw_bitsrequired(min, max) bits.
** Out of range (or min > max): BW_ERANGE. */
bw_Status bw_writeint (bw_Writer *w, int64_t v, int64_t min, int64_t max);
bw_Status bw_writefloat (bw_Writer *w, float x);
/* 'x' rounded to float32 as IEEE-754 does: to nearest, so from half an ulp
** past FLT_MAX on it is infinity; NaN, infinities and -0.0 stay. C leaves
** the conversion of a double beyond float's range undefined: use this. */
static inline float bw_tofloat32 (double x) {
  double a = x < 0 ? -x : x;
  if (a > 3.4028234663852886e38) {  /* past FLT_MAX */
    /* below FLT_MAX + half an ulp it rounds down to FLT_MAX (the tie goes
    ** to infinity, whose mantissa is even) */
    uint32_t u = a < 3.4028235677973366e38  /* 0x1.ffffffp127 */
                 ? UINT32_C(0x7f7fffff)
                 : UINT32_C(0x7f800000);
    float f;
    if (x < 0) u |= UINT32_C(0x80000000);
    memcpy(&f, &u, 4);
    return f;
  }
  return (float)x;
}
/* 'x' as the optimizer cannot see into it: a product passed through this
** is rounded to its type and never fused with the add after it into a
** fused multiply-add, whatever -ffp-contract the including code is built
** with (GCC's default but in -std=c* modes is fast, which fuses at -O2 on
** arm64) or pragma (clang's -ffp-contract=fast ignores them). Free on x86
** and arm64 (an empty asm said to change 'x'), a volatile store and load
** elsewhere. */
#if defined(__GNUC__) && defined(__SSE2_MATH__)
#define BW_OPAQUE(x) __asm__ ("" : "+x" (x))
#elif defined(__GNUC__) && defined(__aarch64__)
#define BW_OPAQUE(x) __asm__ ("" : "+w" (x))
#endif
#ifdef BW_OPAQUE
static inline float bw_nofusef (float x) { BW_OPAQUE(x); return x; }
static inline double bw_nofuse (double x) { BW_OPAQUE(x); return x; }
#else
static inline float bw_nofusef (float x) { volatile float v = x; return v; }
static inline double bw_nofuse (double x) { volatile double v = x; return v; }
#endif
bw_Status bw_writedouble (bw_Writer *w, double x);
/* Zero bits up to the next byte boundary. */
bw_Status bw_writealign (bw_Writer *w);
/* Align, then the 'n' raw bytes of 'p'. */
bw_Status bw_writebytes (bw_Writer *w, const void *p, size_t n);
/* int(n, 0, maxlen) then bytes. Fails with BW_ERANGE if n > maxlen and
** BW_EUTF8 on NUL or malformed UTF-8, writing nothing. */
bw_Status bw_writestring (bw_Writer *w, const char *s, size_t n,
                          size_t maxlen);
/* Bits bw_writeintrelative spends on 'cur' after 'prev' (prev < cur). */
unsigned bw_intrelativebits (uint64_t prev, uint64_t cur);
/* Rising-index encoding of 'cur' after 'prev' (both 0..2^32-1, prev < cur). */
bw_Status bw_writeintrelative (bw_Writer *w, uint64_t prev, uint64_t cur);
/* serialize.h's serialize_int_relative on signed 32-bit ints: the same
** tiers of cur - prev (prev < cur), past them (uint32_t)cur. */
bw_Status bw_writeint32relative (bw_Writer *w, int32_t prev, int32_t cur);
/* Align, then the 32-bit 'magic'. */
bw_Status bw_writecheck (bw_Writer *w, uint32_t magic);

int      bw_readbool (bw_Reader *r);
/* Fails with BW_ERANGE when the offset read exceeds max - min. */
int64_t  bw_readint (bw_Reader *r, int64_t min, int64_t max);
float    bw_readfloat (bw_Reader *r);
double   bw_readdouble (bw_Reader *r);
/* Skip to the byte boundary; any non-zero padding bit fails (BW_EALIGN). */
void     bw_readalign (bw_Reader *r);
/* Align, then point '*p' at the next 'n' bytes of the input (no copy). */
const uint8_t *bw_readbytes (bw_Reader *r, size_t n);
/* Read a string of at most 'maxlen' bytes; '*n' gets its length. Returns a
** pointer into the input (not NUL-terminated) or NULL on failure. */
const char *bw_readstring (bw_Reader *r, size_t maxlen, size_t *n);
uint64_t bw_readintrelative (bw_Reader *r, uint64_t prev);
/* Its reader: an escaped value is a signed 32-bit int, which must rise. */
int32_t  bw_readint32relative (bw_Reader *r, int32_t prev);
/* Align and read 32 bits; anything but 'magic' fails with BW_ECHECK. */
void     bw_readcheck (bw_Reader *r, uint32_t magic);

/* Quantized float, bit-exact with serialize.h (float32 arithmetic). */
typedef struct bw_QFloat {
  float    min, delta;
  uint32_t miv;          /* largest integer sent */
  unsigned nbits;
} bw_QFloat;

/* Prepare the quantizer for [min, max] at resolution 'res'. Fails with
** BW_EARG unless min < max, res > 0 and all are finite. */
bw_Status bw_qfloatinit (bw_QFloat *q, double min, double max, double res);
/* The integer written for 'x': clamped to [min, max], NaN -> min. Inline:
** it is on every quantized field's path. */
static inline uint32_t bw_qfloatencode (const bw_QFloat *q, double x) {
  float v, norm, scaled, rounded;
  uint32_t i;
  if (x > 3.4028234663852886e38) x = 3.4028234663852886e38;  /* FLT_MAX: */
  if (x < -3.4028234663852886e38) x = -3.4028234663852886e38;  /* no UB */
  v = (float)x;
  norm = (v - q->min) / q->delta;
  if (!(norm >= 0.0f)) norm = 0.0f;  /* also NaN */
  if (norm > 1.0f) norm = 1.0f;
  scaled = bw_nofusef(norm * (float)q->miv);  /* rounded, never fused */
  rounded = scaled + 0.5f;
  i = (uint32_t)rounded;  /* floor: 'rounded' is in [0.5, 2^32) */
  /* ties at miv >= 2^23 can round past miv; keep it readable */
  return i > q->miv ? q->miv : i;
}

/* The float32 value an integer 'i' (<= q->miv) stands for. */
static inline float bw_qfloatdecode (const bw_QFloat *q, uint32_t i) {
  float norm = (float)i / (float)q->miv;
  float scaled = bw_nofusef(norm * q->delta);  /* rounded, never fused */
  return scaled + q->min;
}

bw_Status bw_writecompressedfloat (bw_Writer *w, double x, const bw_QFloat *q);
float     bw_readcompressedfloat (bw_Reader *r, const bw_QFloat *q);

/* 1 if 's' of 'n' bytes is well-formed UTF-8 with no NUL byte. */
int bw_utf8valid (const char *s, size_t n);

/* }========================================================== */


/* {===================== framing (bw_frame.c) ===================== */
/* A packet is [crc32: 32 bits][payload][check: 32 bits, optional]. The CRC32
** covers the 8-byte little-endian 'protocolid' (never sent) followed by
** every byte after the CRC field. See WIRE.md, "Packet framing". */

#define BW_FRAMEHEADER 4
/* The fewest bytes a packet has: the CRC, and the end check if 'endcheck'. */
#define BW_FRAMEMIN(endcheck)  (BW_FRAMEHEADER + ((endcheck) ? 4 : 0))

/* Reserve the CRC field at the start of an empty writer. */
bw_Status bw_framebegin (bw_Writer *w);
/* Append the end check if 'endcheck', flush, and fill in the CRC.
** The packet is then bw_writerdata(w, ...). A writer that holds no CRC
** field (under 32 bits: no bw_framebegin) fails with BW_EARG. */
bw_Status bw_frameend (bw_Writer *w, uint64_t protocolid, int endcheck);
/* Verify a packet and start 'r' on its payload (without the end check).
** Fails with BW_ETRUNC (too short), BW_ECRC or BW_ECHECK. */
bw_Status bw_frameopen (bw_Reader *r, const void *data, size_t n,
                        uint64_t protocolid, int endcheck);
/* zlib's CRC32 of the 8-byte LE 'protocolid' followed by 'data'. */
uint32_t bw_framecrc (uint64_t protocolid, const void *data, size_t n);

/* The frame header: the fields a 'flags' bit selects, in this order, after
** the CRC (WIRE.md, "Frame header"). */
#define BW_FTAG      0x01u  /* tag: 32 bits naming the schema */
#define BW_FVERSION  0x02u  /* version: 'versionbits' (1..32) bits */
#define BW_FDELTAS   0x04u  /* bool(delta), then a 16-bit baseline id */
#define BW_FMESSAGE  0x08u  /* message id: 'typebits' (0..32) bits */
#define BW_FCHECK    0x10u  /* the end check closes the packet */
#define BW_FALL      0x1Fu
#define BW_BASELINEBITS 16
/* The widest version a frame carries, and the highest version anything
** takes (UINT32_MAX stands for none). */
#define BW_MAXVERSIONBITS 32
#define BW_MAXVERSION     (UINT32_MAX - 1)

/* The parts of a frame a failure is in, in wire order: the packet as a
** whole (too short for a frame), the CRC, each header field, the end check.
** Each has a key and the path decode's errors and bitwire.walk's name it
** by (bitwire.core.frame_paths: key -> path); bw_framepath gives the path. */
#define BW_FRAMEPARTS(X) \
  X(BW_PFRAME, "frame", "frame") \
  X(BW_PCRC, "crc", "frame.crc") \
  X(BW_PTAG, "tag", "frame.tag") \
  X(BW_PVERSION, "version", "frame.version") \
  X(BW_PDELTA, "delta", "frame.delta") \
  X(BW_PBASELINE, "baseline_id", "frame.baseline_id") \
  X(BW_PTYPE, "type", "frame.type") \
  X(BW_PCHECK, "check", "frame.check")
#define BW_FRAMEPARTENUM(e, key, path)  e,
typedef enum bw_FramePart {
  BW_FRAMEPARTS(BW_FRAMEPARTENUM) BW_NFRAMEPARTS
} bw_FramePart;
#undef BW_FRAMEPARTENUM
/* The path of part 'p' ("frame.type"), never NULL. */
const char *bw_framepath (bw_FramePart p);

/* Reading a tagged frame: find the schema 'tag' names and set '*typebits'
** to the width of its message ids; 0 if there is none. */
typedef int (*bw_FrameLookup) (void *ud, uint32_t tag, unsigned *typebits);

typedef struct bw_FrameHeader {
  uint64_t protocolid;    /* never sent: seeds the CRC */
  unsigned flags;         /* BW_F* */
  uint32_t tag;
  unsigned versionbits;
  uint32_t version;       /* below 2^versionbits, never UINT32_MAX */
  int      delta;         /* with BW_FDELTAS: a delta of 'baseline' */
  uint32_t baseline;      /* 0..65535 */
  unsigned typebits;
  uint32_t type;          /* message id */
  uint64_t typepos;       /* read: bit where the message id starts */
  bw_FramePart part;      /* read: the part a failure is in */
  bw_FrameLookup lookup;  /* read, with BW_FTAG: NULL keeps 'typebits' */
  void    *ud;
} bw_FrameHeader;

/* Start a packet: the CRC field, then the header's fields. Refuses (BW_EARG)
** unknown flags, a width out of range, and (BW_ERANGE) a value that does not
** fit its width. Close it with bw_frameend(w, h->protocolid,
** h->flags & BW_FCHECK). */
bw_Status bw_framewriteheader (bw_Writer *w, const bw_FrameHeader *h);
/* Open the packet 'data' of 'n' bytes as bw_frameopen does, with the
** protocol id and end check of 'h', then read the fields 'h->flags' selects
** into 'h'. 'r' is left on the message. Fails as bw_frameopen, with
** BW_ETRUNC on a header cut short, BW_ESCHEMA (at bit 32) on a tag that
** 'h->lookup' does not know, BW_ERANGE on version UINT32_MAX (at its first
** bit) and BW_EARG on bad flags or widths; 'h->part' says where. The
** caller checks the message id against its types (h->typepos says where
** it was). */
bw_Status bw_framereadheader (bw_Reader *r, const void *data, size_t n,
                              bw_FrameHeader *h);
/* The protocol id with a schema's 64-bit fingerprint folded in: FNV-1a 64
** over its 16 lowercase hex digits, from 'id' XOR the offset basis. */
uint64_t bw_frameprotocolid (uint64_t id, uint64_t fingerprint);
/* The 32-bit tag that names a schema: its fingerprint's high half. */
static inline uint32_t bw_frametag (uint64_t fingerprint) {
  return (uint32_t)(fingerprint >> 32);
}

/* }========================================================== */

#ifdef __cplusplus
}
#endif

#endif
