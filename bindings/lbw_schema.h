/*
** lbw_schema.h - the schema driver's shared state (bindings/ only)
** See LICENSE for copyright and terms.
*/

/*
** bitwire.schema compiles a description into a bw_Schema (lbw_compile.c);
** the driver then walks that flat program for every packet: encode reads
** Lua tables and writes bits (lbw_encode.c), decode reads bits and builds
** tables (lbw_decode.c). The walk over Lua tables lives here in the binding,
** not in core/, because a visitor between the two would cost an indirect
** call per field on the hot path; field names are interned once per Lua
** state in a names array kept as a user value, so keys are pushed with
** lua_rawgeti instead of hashing C strings.
**
** Decode is four files: lbw_decode.c (the walk, fresh or into old tables),
** lbw_flat.c (flat records along a plan), lbw_decdelta.c (against a
** baseline) and lbw_claims.c (the tables a decode into has refilled).
**
** Encode raises on a value that does not fit (a programmer error). Decode
** never raises on bad bytes: it stops at the first failure, records the path
** and bit position, and returns nil, message, code. Nesting is bounded when
** the schema is sealed, so the C stack and the Lua stack are bounded too.
*/
#ifndef LBW_SCHEMA_H
#define LBW_SCHEMA_H

#include <inttypes.h>
#include <stdint.h>

#include "lua.h"
#include "lauxlib.h"

#include "bw_schema.h"
#include "lbw.h"

#define MAXENCODE  ((size_t)64 << 20)  /* largest packet encode will make */
#define MAXFRAMES  (2 * BW_MAXDEPTH + 8)
#define MAXMSG     256

/* the per-field helpers of the hot loops, inlined into them */
#if defined(__GNUC__) || defined(__clang__)
#define INLINE  inline __attribute__((always_inline))
#define NOINLINE  __attribute__((noinline))  /* a cold path kept out of one */
#else
#define INLINE  inline
#define NOINLINE
#endif
#define STACKKEYS  64   /* schemas with this many names keep them on the stack */
#define BATCH      32   /* fields a record fetches before encoding them */

/* Fixed-width scalars (int, uint, bool, float, enum): the kinds the walks
** read and write in runs. */
static inline int fixedscalar (const bw_Field *f) {
  return f->kind <= BW_KFLOAT || f->kind == BW_KENUM;
}

/* The lowest set bit of 'm' (not 0). */
static INLINE unsigned lowbit (uint64_t m) {
#if defined(__GNUC__) || defined(__clang__)
  return (unsigned)__builtin_ctzll(m);
#else
  unsigned k = 0;
  for (; !(m & 1); m >>= 1) k++;
  return k;
#endif
}

static inline unsigned fixedbits (const bw_Field *f) {
  return f->kind == BW_KFLOAT ? f->q.nbits : f->kind == BW_KBOOL ? 1 : f->nbits;
}

/* user values of a schema userdata */
enum { UV_NAMES = 1, UV_TYPES,
       UV_KNOWN,  /* the state's known table (bw_pushknown), kept here
                     to be found in one step */
       UV_GUARD,  /* closes the call in progress (bw_entercall) */
       NUV = UV_GUARD };

/* The tables one decode into has refilled, so a table reached twice (two
** fields or elements sharing it) is refilled once and replaced by a fresh
** one elsewhere: the result then equals a fresh decode. The sequence of
** the last decode's claims, then an open-addressing set over table
** pointers whose entries are this decode's when their 'gen' is, so
** nothing is cleared between decodes and the steady state allocates
** nothing (lbw_claims.c). */
typedef struct Claim {
  const void *p;
  uint32_t    gen;
} Claim;

typedef struct Claims {
  Claim       *e;       /* 'cap' entries, a power of 2, or NULL */
  uint32_t     cap, n, gen;
  const void **seq;     /* the claims in order: the last decode's 'done' */
  uint32_t     seqcap, done, prev, k;
  int          hashed;  /* this decode left the last one's sequence */
  int          lost;    /* this decode could not record its sequence */
  int          twice;   /* this decode met a table claimed already */
} Claims;

/* A flat record's decode plan (bw_Type.flat), made once per schema: its
** scalars and quaternions in wire order, each nested record an op
** followed by its scalars, each fixed-count array an op followed by its
** element's, with what the walk would look up per field precomputed. */
typedef struct FlatOp {
  uint8_t         kind;  /* the scalar's bw_Kind, BW_KSTRUCT, BW_KARRAY or
                            BW_KQUAT */
  uint8_t         w;     /* bits: the scalar's, the record's run, an array
                            element's, or a quaternion's */
  uint16_t        n;     /* BW_KSTRUCT: its scalars, the ops that follow;
                            BW_KARRAY: its count; BW_KQUAT: 4 */
  uint32_t        key;   /* the field's name */
  uint64_t        lim;   /* the largest raw value the field accepts */
  const bw_Field *f;
} FlatOp;

typedef struct FlatPlan {
  uint32_t *first;  /* per type t: its ops are [first[t], first[t + 1]) */
  uint32_t *spend;  /* per type: the values its nested records count */
  FlatOp   *ops;
} FlatPlan;

/* Default of the decode option max_values (bitwire.MAX_VALUES). */
#define MAXVALUES  ((lua_Integer)1 << 20)

/* Tapes (lbw_tape.c): the codes a value was sent or received as, packed
** in wire order, so a delta against it reads no baseline table. */
typedef struct TapeBuf {
  uint64_t *s;    /* 'cap' words, then TAPEPAD more that get may read
                     (lbw_tape.h); the bits past 'pos' in its word are 0
                     (a word is stored whole before bits are ORed in) */
  size_t    cap;
  uint64_t  pos;  /* bits written */
} TapeBuf;

typedef struct Tapes {
  TapeBuf  out;   /* the value's, as the walk makes it */
  TapeBuf  base;  /* a baseline's, made from its table */
  TapeBuf  rout, rbase;  /* their raws (lbw_tape.h), 'pos' counting words */
  TapeBuf  in;    /* a baseline's tape kept in pieces, gathered */
  TapeBuf  sout, srout;  /* scratch: tapes a walk writes twice */
  TapeBuf  slots; /* the sent slots of sparse arrays (lbw_encsparse.c) */
  uint64_t instamp, stamps;  /* the stamp of the tape 'in' holds (0:
                                none); the last stamp given */
  uint8_t *ok;    /* per type: its deltas may take tapes (nonzero; see
                     lbw_tape.c); NULL: none may */
  int asbase;     /* whose table the tape is made from (TAPEOF*) */
} Tapes;

/* Tapes.asbase: a value's; a baseline's (bw_arraybase holds); or a table
** a decode just filled, maybe in place, keeping keys the caller added,
** which are not its value's (no slot, past an array's first border). */
enum { TAPEOFVALUE, TAPEOFBASE, TAPEOFDECODE };

/* A known entry for a table a schema decoded as type 't' is the integer
** id << KNOWNTYPEBITS | t (a type past that many bits records none). */
#define KNOWNTYPEBITS   24
#define BW_MAXSCHEMAID  (((lua_Integer)1 << (62 - KNOWNTYPEBITS)) - 1)

typedef struct LSchema {
  bw_Schema  *S;
  lua_Integer id;    /* this userdata's, new in its state (bw_setschema):
                        it names it in the known table */
  int         busy;  /* a call is using w, claims, plan and tapes */
  lua_State  *owner; /* the thread of that call (anchored by the guard) */
  bw_Writer  w;     /* reused by every encode */
  Claims     claims;
  FlatPlan   plan;  /* empty (NULL) without memory: the general walk */
  Tapes      tapes;
} LSchema;

typedef struct Frame {
  uint32_t    name;   /* BW_NONE: an array element */
  lua_Integer index;
} Frame;

typedef struct Ctx {
  lua_State       *L;
  const bw_Schema *S;
  lua_Integer      self;     /* the schema's id (LSchema.id) */
  bw_Writer       *w;
  bw_Reader        r;
  int              names;    /* stack index of the names array */
  int              keys;     /* stack index of the first name, or 0 */
  int              checked;  /* > 0 in a baseline bw_keepbaseline checked */
  int              share;    /* decode: opts.share; then, against a
                                baseline this schema decoded, 2: what a
                                delta keeps is the baseline's own tables */
  int              strict;   /* encode refuses keys no field has */
  unsigned         pending;  /* encode: bits of a run not written yet */
  uint32_t         version;
  int              nframes;
  Frame            frames[MAXFRAMES];
  Claims          *claims;   /* decode into: the tables refilled */
  const FlatPlan  *plan;
  Tapes           *tapes;
  uint64_t         values;   /* decode: values it may still make */
  const char      *head;     /* decode: the frame part (bw_framepath) that
                                failures name before any field, or NULL */
  bw_Status        code;     /* decode failure */
  uint64_t         bitpos;
  char             msg[MAXMSG];
} Ctx;



/* {===================== paths (lbw_path.c) ===================== */

static inline void pushframe (Ctx *c, uint32_t name, lua_Integer index) {
  Frame *fr = &c->frames[c->nframes < MAXFRAMES ? c->nframes : MAXFRAMES - 1];
  fr->name = name;
  fr->index = index;
  c->nframes++;
}

#define popframe(c)  ((c)->nframes--)

/* A record's frame: entered once, its field set as the loop goes. */
static inline Frame *enterframe (Ctx *c) {
  Frame *fr = &c->frames[c->nframes < MAXFRAMES ? c->nframes : MAXFRAMES - 1];
  fr->name = BW_NONE;
  fr->index = -1;  /* no field yet: left out of paths */
  c->nframes++;
  return fr;
}

static inline void setframe (Frame *fr, const bw_Field *f) {
  fr->name = f->name;
  fr->index = f->name == BW_NONE ? -1 : 0;  /* align, check: no name */
}

/* Push the interned name 'nm' (a field name, enum value or type name):
** from the stack copies initctx made, else from the names array. */
static inline void pushkey (Ctx *c, uint32_t nm) {
  if (c->keys) lua_pushvalue(c->L, c->keys + (int)nm);
  else lua_rawgeti(c->L, c->names, (lua_Integer)nm + 1);
}

/* Raise "path: detail (bit N)" for a value that cannot be encoded. The
** format is lua_pushfstring's. */
int bw_encerror (Ctx *c, const char *fmt, ...);
/* Raise "expected 'expected', got <type>" for the value at 'idx'. */
int bw_enctype (Ctx *c, int idx, const char *expected);
/* Record the first decode failure: "path: detail (bit N)". Returns 0. */
int bw_decfail (Ctx *c, bw_Status code, uint64_t bitpos, const char *fmt, ...);
/* A failure of the reader's own (truncation, padding, string checks). */
int bw_readfail (Ctx *c);

/* The words of the decode failures that bitwire.walk reports too (dissect,
** the Wireshark plugin), kept here only: formats of %s alone, numbers
** written as text first, so Lua fills them as C does. bitwire.core.formats
** holds them by name. */
#define BW_WORDLIST(X) \
  X(W_VALUE, "value", "%s out of range [%s, %s]") \
  X(W_LENGTH, "length", "length %s out of range [%s, %s]") \
  X(W_COUNT, "count", "count %s out of range [%s, %s]") \
  X(W_QUANTIZED, "quantized", "quantized %s out of range [0, %s]") \
  X(W_NEED, "need", "count %s needs %s bits or more, %s left") \
  X(W_ENCODING, "encoding", "unknown sparse encoding %s") \
  X(W_SLOTS, "slots", "count %s above max %s") \
  X(W_SLOTBITS, "slotbits", "count %s needs more bits than are left") \
  X(W_INDEX, "index", "index %s not in [%s, %s]") \
  X(W_INDEXMAX, "indexmax", "index %s above max %s") \
  X(W_QUAT, "quat", "quaternion code not in canonical form") \
  X(W_DIFF, "diff", "difference from the baseline leaves the range") \
  X(W_VALUES, "values", "decode makes more values than max_values allows") \
  X(W_VERSION, "version", "version %s out of range [0, %s]") \
  X(W_MSGTYPE, "msgtype", "message type %s out of range [0, %s]") \
  X(W_BASELINE, "baseline", "unknown baseline %s") \
  X(W_SCHEMA, "schema", "packet for schema %s, which this registry does " \
    "not keep (current %s)") \
  X(W_TAGGED, "tagged", "packet for schema %s, this is %s") \
  X(W_FRAMESIZE, "framesize", "packet of %s bytes, a frame has at least %s") \
  X(W_CRC, "crc", "CRC32 mismatch: corrupt, or another protocol id or " \
    "definitions")
#define BW_WORDENUM(e, name, text)  e,
typedef enum bw_Word { BW_WORDLIST(BW_WORDENUM) BW_NWORDS } bw_Word;
#undef BW_WORDENUM
/* Record decode failure 'w' with its numbers as text 'a', 'b', 'd' (NULL
** past those it takes). Returns 0. */
int bw_decsay (Ctx *c, bw_Status code, uint64_t bitpos, bw_Word w,
               const char *a, const char *b, const char *d);
/* The same with numbers (0 past those it takes): out of line, so a hot
** walk keeps no text buffers. */
int bw_decsayi (Ctx *c, bw_Status code, uint64_t bitpos, bw_Word w,
                int64_t a, int64_t b, int64_t d);
/* Push bitwire.core.formats: name -> words. */
void bw_pushwords (lua_State *L);
/* Decimal text of a number in 'buf' (BW_NUMTEXT bytes); returns buf. */
#define BW_NUMTEXT  24
const char *bw_i64text (char *buf, int64_t v);
const char *bw_u64text (char *buf, uint64_t v);
/* min + u exactly (the offset 'u' of a field from 'min', past its range
** perhaps): below 0 as a signed number, else unsigned. */
const char *bw_sumtext (char *buf, int64_t min, uint64_t u);

/* }========================================================== */

/* 1 if the values at 'a' and 'b' (either may be nil) would encode as field
** 'f' to the same bits (lbw_equal.c). */
int bw_equalopt (Ctx *c, const bw_Field *f, int a, int b);
/* The code of the quaternion at 'idx', or 0 when it is not four numbers
** (bw_quatnums) or has no length. */
int bw_quatof (const bw_Field *f, lua_State *L, int idx, uint32_t q[4]);
/* The numbers bw_quatof takes from the table at 'idx' (non-numbers as 0);
** 1 only for a quaternion the encoder takes the shape of: a table of
** exactly four numbers. */
int bw_quatnums (lua_State *L, int idx, double v[4]);

/* {===================== the walks ===================== */

/* Encode (lbw_encode.c): raise on values that do not fit. */
void bw_pushdefault (Ctx *c, const bw_Field *f);
/* Field 'f', absent at the decode's version, as a decode leaves it in the
** table at 'tbl': its default, or nothing without one; pushed (key and
** value, returns 1) for a table made later. */
static inline int bw_pushabsent (Ctx *c, const bw_Field *f) {
  if (f->name == BW_NONE || !f->hasdefault) return 0;
  pushkey(c, f->name);
  bw_pushdefault(c, f);
  return 1;
}

static inline void bw_setabsent (Ctx *c, const bw_Field *f, int tbl) {
  if (bw_pushabsent(c, f)) lua_rawset(c->L, tbl);
}

/* bw_droptop of the value at the key on top of the table at 'tbl'
** (absolute), which a decode into clears (lbw_claims.c). */
void bw_dropped (Ctx *c, int tbl);

/* The same in a table refilled in place (a decode into): the field's key
** cleared, or with 'def' (a field the version lacks) set to its default
** if it has one; an optional field the value lacks has none: nil. */
static inline void bw_refillabsent (Ctx *c, const bw_Field *f, int tbl,
                                    int def) {
  if (f->name == BW_NONE) return;
  pushkey(c, f->name);
  if (f->kind == BW_KSTRUCT || f->kind == BW_KARRAY || f->kind == BW_KSPARSE
      || f->kind == BW_KQUAT)
    bw_dropped(c, tbl);
  if (def && f->hasdefault) bw_pushdefault(c, f);
  else lua_pushnil(c->L);
  lua_rawset(c->L, tbl);
}

/* Push the value of field 'f' in the baseline table at 'bidx' (none when
** 'hasb' is 0). A required field the baseline lacks counts as its default
** (a baseline of definitions without the field), on both sides of a
** delta. Returns its Lua type. */
static inline int bw_pushbasefield (Ctx *c, const bw_Field *f, int bidx,
                                    int hasb) {
  int bt = LUA_TNIL;
  if (hasb) {
    pushkey(c, f->name);
    bt = lua_rawget(c->L, bidx);
  }
  else lua_pushnil(c->L);
  if (bt == LUA_TNIL && !f->optional && f->hasdefault) {
    lua_pop(c->L, 1);
    bw_pushdefault(c, f);
    bt = lua_type(c->L, -1);
  }
  return bt;
}

/* A fresh record of type 'ty' whose table may be smaller than its field
** count (ty->shrinks) keeps its fields on the stack (key, value)
** above a nil and makes its table at the end, sized by what came; any
** other has its table made first. Pushes the table or the nil; returns 1
** when the fields are deferred. */
static inline int bw_openrecord (lua_State *L, const bw_Type *ty) {
  if (ty->shrinks && lua_checkstack(L, 2 * (int)ty->count + 8)) {
    lua_pushnil(L);  /* where the table will be */
    return 1;
  }
  lua_createtable(L, 0, (int)ty->count);
  return 0;
}

/* Make the deferred record's table at 'tbl' of the fields above it. */
static inline void bw_closerecord (lua_State *L, int tbl) {
  int n = (lua_gettop(L) - tbl) / 2;
  lua_createtable(L, 0, n);
  lua_replace(L, tbl);
  while (n-- > 0) lua_rawset(L, tbl);
}
void bw_encvalue (Ctx *c, const bw_Field *f, int idx, int tt);
void bw_encstruct (Ctx *c, uint32_t t, int idx);
/* A scalar (a kind other than array, struct or sparse). */
void bw_encleaf (Ctx *c, const bw_Field *f, int idx, int tt);
/* Raise unless count or length 'n' fits 'f'; 'what' names it. */
void bw_checklen (Ctx *c, const bw_Field *f, size_t n, const char *what);
/* The code of the quaternion at 'idx'; of a FLOAT or ANGLE value. */
void bw_quatcode (Ctx *c, const bw_Field *f, int idx, uint32_t q[4]);
/* The code of the quaternion at 'idx' in 'q': 1, or as REFUSE (it raises
** the errors bw_quatcode does when 'raise'). */
int  bw_quatvalue (Ctx *c, const bw_Field *f, int idx, int raise,
                   uint32_t q[4]);
uint32_t bw_numcode (Ctx *c, const bw_Field *f, int idx, int tt);
/* A sparse array, against the baseline at 'bidx' unless it is 0
** (lbw_encsparse.c). */
void bw_encsparse (Ctx *c, const bw_Field *f, int idx, int bidx);
/* The slots a walk of a sparse array of 'n' slots visits when 'n' is too
** many to visit each: the integer keys in [1, n] of the tables at 'a' and
** 'b' (either 0: none), sorted, each once, in a userdata pushed on the
** stack; their number in '*m', and in '*akeys' how many keys of any kind
** the table at 'a' has. */
lua_Integer *bw_sparsekeys (lua_State *L, int a, int b, lua_Integer n,
                            size_t *m, lua_Integer *akeys);
/* The slot the key at 'k' names in a sparse array of 'n' slots: an
** integer in [1, n]; 0 for any other key. */
static inline lua_Integer bw_slotof (lua_State *L, int k, lua_Integer n) {
  lua_Integer i = lua_isinteger(L, k) ? lua_tointeger(L, k) : 0;
  return i >= 1 && i <= n ? i : 0;
}
/* 1 if every key of the table at 'idx' is an integer in [1, n]: else the
** encoder refuses it as a sparse array of 'n' slots, so it equals no
** baseline (a delta that kept it would drop its other keys). */
int bw_sparseslotsonly (lua_State *L, int idx, lua_Integer n);
/* The baseline at 'bidx' of sparse array 'f' that a delta of it stands
** on: 'bidx', or 0 (none: the array goes whole) when it is no table or has
** a key that is no slot of 'f' (one a reload's smaller max or another kind
** left), which the wire could not name. Encode and decode both ask this. */
int bw_sparsebase (lua_State *L, const bw_Field *f, int bidx);
/* The length of the array baseline at 'idx' in '*n': its first border, the
** least n with t[n + 1] nil, which is what a full encode of it sent (one
** with a nil before #t is refused) and which no way of building the table
** moves, where '#' of a table with holes (one a sparse field left) may
** give any border, so the two ends could count their copies apart. Keys
** past it are not the array's. 0 when it is no table. Encode and decode
** both ask. */
int bw_arraybase (lua_State *L, int idx, lua_Integer *n);
/* 1 if the table at 'idx' has no integer key past 'n' (its first border):
** else, with holes, it is never an unchanged baseline (nor one a baseline's
** tape is made of), so no receiver keeps it (its copy, built otherwise,
** could check as another length). */
int bw_arrayclean (lua_State *L, int idx, lua_Integer n);
#define MAPSLOTS 4096  /* sparse arrays longer than this visit their keys */
/* The bits of a slot's index in sparse array 'f' (the index encoding's,
** and a tape's): bits_required(0, max - 1). */
#define SLOTBITS(f)  bw_bitsrequired(0, (int64_t)(f)->max - 1)
/* Against a baseline (lbw_encdelta.c): a changed value of 'f' at 'idx' as
** a delta of the one at 'bidx' where it can be; a record, returning 1 if
** any field changed. */
void bw_encdeltavalue (Ctx *c, const bw_Field *f, int idx, int bidx);
int  bw_encdeltastruct (Ctx *c, uint32_t t, int idx, int bidx);
/* Write the code of relative field 'f' ('code', or a quaternion's 'q') as
** its difference from the baseline's ('base', or 'bq'). */
void bw_writerelative (Ctx *c, const bw_Field *f, uint64_t base,
                       uint64_t code, const uint32_t bq[4],
                       const uint32_t q[4]);
/* Write the value at 'v' of relative field 'f' as its difference from
** the baseline's code ('base', or a quaternion's 'bq'), raising where the
** value cannot be encoded. */
void bw_sendrelative (Ctx *c, const bw_Field *f, int v, uint64_t base,
                      const uint32_t bq[4]);
/* The same delta from the baseline's tape (lbw_tape.c); returns 1 when
** done, or, having written nothing, 0 when the value is no table, -1 when
** type 't' takes no tape and -2 when the baseline is no value of it. */
int  bw_enctape (Ctx *c, uint32_t t, int idx, int bidx);
/* 1 if the table at 'idx' is a value of type 't' (one that takes tapes):
** a full encode of it would not raise. */
int  bw_tapevalue (Ctx *c, uint32_t t, int idx);
struct Tape;  /* lbw_tape.h */
/* Decode against the baseline's tape ('tape', when bw_decodedas found it
** and holds it in a slot; else looked up or made): pushes the value (1),
** or refills the table at 'into' (0: none) in place (2), or 0 with the
** failure; -1, having read nothing, when 't' or the baseline take none. */
int  bw_dectape (Ctx *c, uint32_t t, int bidx, const struct Tape *tape,
                 int into);
/* What the schema at index 1 knows of the table at 'from' (its tape), it
** knows of the table at 'to' (absolute indices): a result moved into it. */
void bw_tapemove (lua_State *L, int from, int to);
/* Forget what was known of the table at 'idx' (its tape, its type): a
** decode refills the table. The schema is at index 1. */
void bw_tapedrop (lua_State *L, int idx);
/* 1 if the table at 'b' is what a decode of this schema made as type 't',
** at the schema's own version, its tape for 't' in '*tape' if it has one
** (else NULL), that tape's userdata copied to the slot 'hold' (0: none);
** remember (ok) or forget that of the table at 'tbl'. */
int  bw_decodedas (Ctx *c, uint32_t t, int b, const struct Tape **tape,
                   int hold);
void bw_setdecoded (Ctx *c, uint32_t t, int tbl, int ok);
void bw_tapesmake (Tapes *tp, const bw_Schema *S);
void bw_tapesfree (Tapes *tp);
/* Decode (lbw_decode.c): push the value and return 1, or return 0 with the
** failure in 'c'. */
/* Start a decode into tables: forget the tables the last one refilled
** (lbw_claims.c). */
void bw_claimsstart (Claims *cl);
void bw_claimsend (Claims *cl);
void bw_claimsfree (Claims *cl);
/* lbw_flat.c */
void bw_flatplanmake (FlatPlan *p, const bw_Schema *S);
void bw_flatplanfree (FlatPlan *p);
/* Spend 'n' of the values a decode may make (max_values); 0 and a
** failure when they run out. */
int  bw_decvaluesfail (Ctx *c);
static inline int bw_decspend (Ctx *c, uint64_t n) {
  if (n > c->values) return bw_decvaluesfail(c);
  c->values -= n;
  return 1;
}
/* What the values of SECURITY.md's count cost: a record 1 plus its fields
** (present or not), an array 1 plus its elements, a quaternion 5. */
#define bw_decspendrecord(c, ty)  bw_decspend(c, 1 + (uint64_t)(ty)->count)
#define bw_decspendlist(c, n)     bw_decspend(c, 1 + (uint64_t)(n))
#define bw_decspendquat(c)        bw_decspendlist(c, 4)
int bw_decstruct (Ctx *c, uint32_t t, int into);
int bw_decdeltastruct (Ctx *c, uint32_t t, int bidx);
/* A delta array's count against a baseline of 'bn' elements, in '*n', its
** cost spent and checked against the bits left; 0 with the failure. */
int bw_decdeltacount (Ctx *c, const bw_Field *f, int64_t bn, int64_t *n);
/* Push a new table for a list of 'n' (checked) elements: its array part
** sized up to a bound, past which it grows as filled. */
static inline void bw_newlist (lua_State *L, int64_t n) {
  lua_createtable(L, (int)(n < 1 << 20 ? n : 1 << 20), 0);
}
/* Push the state's known table (lbw_tape.c), by way of user value
** UV_KNOWN of the schema at index 1 (lbw_methods.c). */
void bw_pushknown (lua_State *L);
/* A new id for a schema userdata of this state (lbw_methods.c). */
lua_Integer bw_newschemaid (lua_State *L);
/* Push the weak-keyed table the registry keeps at light key 'key', made
** first when 'make'; 0 (with nil pushed) when there is none. */
int  bw_pushweakreg (lua_State *L, const void *key, int make);
/* A whole value: a delta against the baseline at 'b' (when set, and then
** moved 'into' a table when set), else decoded 'into'; remembers which
** schema decoded the result (lbw_decdelta.c). */
int bw_decodetop (Ctx *c, uint32_t t, int into, int b);
/* Ready the table at 'into' for a decode of type 't' to refill: its tape
** dropped, and, unless this schema decoded it as 't', the keys the type
** lacks cleared (lbw_into.c). A delta's ('b' set) is left as it is. */
void bw_intoprepare (Ctx *c, uint32_t t, int into, int b);
/* A delta's 'into', which its tape walk refills in place: cleared as
** bw_intoprepare clears a full decode's ('known': this schema decoded it
** as 't'), after the baseline is read (its tape made), since the two may
** share tables (lbw_into.c). */
void bw_intoclean (Ctx *c, uint32_t t, int into, int known);

/* }========================================================== */

/* {===================== schemas and calls ===================== */

/* The schema userdata at 'arg' (lbw_compile.c). */
LSchema *bw_checkschema (lua_State *L, int arg);
/* Push a schema userdata without a program, then give it one, taking
** over one reference (allocating first, so a memory error loses none). */
LSchema *bw_newschema (lua_State *L);
void bw_setschema (lua_State *L, LSchema *ls, bw_Schema *S);
int  bw_schemacompile (lua_State *L);
int  bw_schemasetdesctext (lua_State *L);
int  bw_schemagc (lua_State *L);

/* Call helpers (lbw_methods.c). */
uint32_t bw_checktype (lua_State *L, int arg);
/* Options (lbw_options.c). bw_openoptions sets, in the table on top,
** core.unknown_option, core.check_walk_options and core.FRAME_OPTIONS. */
void bw_openoptions (lua_State *L);
/* The options of a call: the stack index of each one's value (0: absent)
** and of their table ('arg'). */
enum { OPT_BASELINE, OPT_BASELINEID, OPT_BASELINES, OPT_INTO, OPT_MAXVALUES,
       OPT_SHARE, OPT_STRICT, OPT_VERSION, NOPTS };
#define OPTBIT(i)    (1u << (i))
#define OPTS_ENCODE  (OPTBIT(OPT_BASELINE) | OPTBIT(OPT_STRICT) \
                      | OPTBIT(OPT_VERSION))
#define OPTS_DECODE  (OPTBIT(OPT_BASELINE) | OPTBIT(OPT_INTO) \
                      | OPTBIT(OPT_MAXVALUES) | OPTBIT(OPT_SHARE) \
                      | OPTBIT(OPT_VERSION))
/* The frame calls: a delta names its baseline by id. */
#define OPTS_WALK    (OPTBIT(OPT_BASELINE) | OPTBIT(OPT_MAXVALUES) \
                      | OPTBIT(OPT_VERSION))  /* s:dissect's */
#define OPTS_FRAMEENC  (OPTS_ENCODE | OPTBIT(OPT_BASELINEID))
#define OPTS_FRAMEDEC  ((OPTS_DECODE & ~OPTBIT(OPT_BASELINE)) \
                        | OPTBIT(OPT_BASELINES))
typedef struct Opts { int arg, at[NOPTS]; } Opts;
/* Read the options table at 'arg' (none, nil or a table) in one pass: the
** values of those in 'takes' (OPTBIT each) stay on the stack; any other
** key raises, naming it and those the call takes, so a misspelt option,
** 'max_value' for one, is never ignored without a word. */
void bw_readopts (lua_State *L, int arg, unsigned takes, Opts *o);
/* Raise on a key of the table at 'arg' that the NULL-ended 'names'
** lacks: "unknown <what> '<key>' (known: ...)", as bw_readopts words it. */
void bw_checkkeys (lua_State *L, int arg, const char *const names[],
                   const char *what);
/* 1 with the integer at 'idx' in '*v' when it is a number of an integer's
** value (2 and 2.0; not "2"): the one test of an integer option. */
int bw_optinteger (lua_State *L, int idx, lua_Integer *v);
/* Integer field 'k' of the options table at 'arg', or 'def' when nil. */
lua_Integer bw_optfield (lua_State *L, int arg, const char *k,
                         lua_Integer def);
uint32_t bw_optversion (lua_State *L, const Opts *o, const bw_Schema *S);
/* Start a call on the schema at index 1 (its writer, claims, plan and
** tapes are the call's until it returns or raises) with 'nargs'
** arguments, the guard at nargs + 1. Taken before any argument is
** converted or option read: a conversion's allocation can run a
** finalizer, an option's metamethod any code, and either could release
** the schema by hand. Raises when another call is in progress. */
LSchema *bw_takeschema (lua_State *L, int nargs);
/* Set up 'c' for a call that the call in progress makes itself. */
void bw_initinner (lua_State *L, Ctx *c, LSchema *ls, uint32_t version);
/* Take the schema at index 1 for the call in progress (a to-be-closed
** slot on top gives it back), or raise "schema in use". A call that runs
** Lua code (allocations run finalizers; metamethods run code) before it
** is done with ls->S takes it first: a release by hand, or another call,
** then raises instead of freeing what the call reads. */
void bw_entercall (lua_State *L, LSchema *ls);
/* Set up 'c' for a call that has taken the schema. */
void bw_initheld (lua_State *L, Ctx *c, LSchema *ls, uint32_t version);
/* The user value UV_GUARD of a new schema 'ls', on top. */
void bw_newguard (lua_State *L, LSchema *ls);
/* Whether the call that set ls->busy is over without closing its guard. */
int  bw_abandoned (lua_State *L, const LSchema *ls);
/* Table option 'i' of 'o' (raises when it is not a table): its index, or
** 0. */
int  bw_opttable (lua_State *L, const Opts *o, int i);
/* The table options baseline and into: their index, or 0. */
int  bw_optbaseline (lua_State *L, const Opts *o);
int  bw_optinto (lua_State *L, const Opts *o);
/* The decode options max_values and share into 'c'. */
void bw_optdecode (lua_State *L, const Opts *o, Ctx *c);
/* The option strict, or 'def' when absent. */
int  bw_optstrict (lua_State *L, const Opts *o, int def);
/* The option max_values (default MAXVALUES), checked. */
uint64_t bw_optmaxvalues (lua_State *L, const Opts *o);
void bw_encodebody (Ctx *c, uint32_t t, int v, int b);
int  bw_pushencoded (lua_State *L, bw_Writer *w);
int  bw_pushdecodeerror (lua_State *L, Ctx *c);
int  bw_decodefrom (Ctx *c, uint32_t t, int into, int b);
/* Strict encode: raise on a key of the record at 'idx' that no field of
** type 't' has (lbw_methods.c). */
void bw_strictcheck (Ctx *c, uint32_t t, int idx);
/* The same for any walk: 1 with the failure's message pushed ("unknown
** key 'k' (strict: T declares no such field)"), or 0 when every key of
** the record at 'idx' is a field of type 't'. */
int  bw_strictkeys (lua_State *L, const bw_Schema *S, uint32_t t, int idx);
/* The strict check of every record in the value at 'idx' of field 'f', as
** its full encode checks it: for what a delta keeps unwalked (a sparse
** array, kept or sent, checked whole before its changed bit). */
void bw_strictvalue (Ctx *c, const bw_Field *f, int idx);
/* Message ids (the schema's 'messages' list, or every type by index). */
void bw_writemessageid (Ctx *c, uint32_t t);
int  bw_readmessageid (Ctx *c, uint32_t *t);

/* Push the interned name 'nm' of 'S', and the default of field 'f' as a
** Lua value (lbw_program.c; for tools and blobs, not the hot path). */
void bw_pushname (lua_State *L, const bw_Schema *S, uint32_t nm);
void bw_pushfielddefault (lua_State *L, const bw_Schema *S,
                          const bw_Field *f);

/* Method and function lists of the other files, for bw_openschema. */
extern const luaL_Reg bw_framemethods[];   /* lbw_frame.c */
extern const luaL_Reg bw_framefuncs[];     /* lbw_frame.c: protocol_id */
extern const luaL_Reg bw_sharemethods[];   /* lbw_share.c */
extern const luaL_Reg bw_sharefuncs[];     /* lbw_share.c: adopt, unshare */
extern const luaL_Reg bw_programmethods[]; /* lbw_program.c */

/* }========================================================== */

#endif
