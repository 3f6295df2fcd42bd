/*
** bw_schema.c - compiled schema programs: building, sealing, sharing
** See LICENSE for copyright and terms.
*/

/*
** A schema is compiled once into flat arrays: types point at runs of fields,
** arrays and nested types point at other entries by index. Nothing here knows
** Lua; the binding fills the arrays from a validated description and walks
** them for every packet. Once sealed a schema is immutable, so any number of
** Lua states (and threads) may read it; a reference count frees it when the
** last one lets go.
*/

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bw_schema.h"


/* {===================== building ===================== */

const char *const bw_kindnames[BW_NKINDS + 1] = {
  "int", "uint", "bool", "float", "float32", "float64", "enum", "string",
  "bytes", "array", "struct", "align", "check", "sparse", "quat", "tiered",
  "angle", NULL
};

/* A seed no definitions file can know: the schema's address, a stack
** address, the clocks, mixed (splitmix64's finalizer). */
static uint32_t newseed (const bw_Schema *S) {
  int here = 0;
  uint64_t x = (uint64_t)(uintptr_t)S ^ (uint64_t)(uintptr_t)&here << 16
               ^ (uint64_t)time(NULL) << 32 ^ (uint64_t)clock();
  x = (x ^ x >> 30) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ x >> 27) * UINT64_C(0x94d049bb133111eb);
  return (uint32_t)(x ^ x >> 31);
}

bw_Schema *bw_schemanew (void) {
  bw_Schema *S = (bw_Schema *)calloc(1, sizeof(bw_Schema));
  if (S != NULL) {
    S->refs = 1;
    S->seed = newseed(S);
  }
  return S;
}

static void schemafree (bw_Schema *S) {
  uint32_t i;
  for (i = 0; i < S->nnames; i++) free(S->names[i]);
  free(S->names);
  free(S->namelens);
  free(S->types);
  free(S->fields);
  free(S->desc);
  free(S->messages);
  free(S->index);
  bw_buildfree(S);
  free(S);
}

int bw_schemasetdesc (bw_Schema *S, const char *desc, size_t len) {
  char *copy = (char *)malloc(len + 1);
  if (copy == NULL) return 0;
  memcpy(copy, desc, len);
  copy[len] = '\0';
  free(S->desc);
  S->desc = copy;
  S->desclen = len;
  return 1;
}

void bw_schemaretain (bw_Schema *S) {
#if defined(__GNUC__) || defined(__clang__)
  __atomic_add_fetch(&S->refs, 1, __ATOMIC_RELAXED);
#else
  S->refs++;
#endif
}

void bw_schemarelease (bw_Schema *S) {
  long left;
  if (S == NULL) return;
#if defined(__GNUC__) || defined(__clang__)
  left = __atomic_sub_fetch(&S->refs, 1, __ATOMIC_ACQ_REL);
#else
  left = --S->refs;
#endif
  if (left == 0) schemafree(S);
}

long bw_schemarefs (bw_Schema *S) {
#if defined(__GNUC__) || defined(__clang__)
  return __atomic_load_n(&S->refs, __ATOMIC_ACQUIRE);
#else
  return S->refs;
#endif
}

/* Grow '*p' (of '*cap' elements of 'size') to hold 'need'. */
static int grow (void **p, uint32_t *cap, uint32_t need, size_t size) {
  uint32_t n = *cap ? *cap : 8;
  void *np;
  if (need <= *cap) return 1;
  while (n < need) {
    if (n > UINT32_MAX / 2) return 0;
    n *= 2;
  }
  np = realloc(*p, (size_t)n * size);
  if (np == NULL) return 0;
  *p = np;
  *cap = n;
  return 1;
}

uint32_t bw_schemaaddname (bw_Schema *S, const char *s, size_t len) {
  char *copy;
  uint32_t cap = S->capnames;
  if (S->sealed || S->nnames == BW_NONE - 1) return BW_NONE;
  if (!grow((void **)&S->names, &cap, S->nnames + 1, sizeof(char *)))
    return BW_NONE;
  cap = S->capnames;
  if (!grow((void **)&S->namelens, &cap, S->nnames + 1, sizeof(size_t)))
    return BW_NONE;
  S->capnames = cap;
  copy = (char *)malloc(len + 1);
  if (copy == NULL) return BW_NONE;
  memcpy(copy, s, len);
  copy[len] = '\0';
  S->names[S->nnames] = copy;
  S->namelens[S->nnames] = len;
  return S->nnames++;
}

uint32_t bw_schemaaddtype (bw_Schema *S, uint32_t name) {
  bw_Type *t;
  if (S->sealed || S->ntypes == BW_NONE - 1
      || !grow((void **)&S->types, &S->captypes, S->ntypes + 1,
               sizeof(bw_Type)))
    return BW_NONE;
  t = &S->types[S->ntypes];
  memset(t, 0, sizeof(*t));
  t->name = name;
  t->msgid = BW_NONE;
  t->first = S->nfields;
  return S->ntypes++;
}

uint32_t bw_schemaaddfields (bw_Schema *S, uint32_t n) {
  uint32_t i, first = S->nfields;
  if (S->sealed || n > BW_NONE - 1 - S->nfields
      || !grow((void **)&S->fields, &S->capfields, S->nfields + n,
               sizeof(bw_Field)))
    return BW_NONE;
  for (i = first; i < first + n; i++) {
    bw_Field *f = &S->fields[i];
    memset(f, 0, sizeof(*f));
    f->name = BW_NONE;
    f->ref = BW_NONE;
    f->removed = UINT32_MAX;
  }
  S->nfields += n;
  return first;
}

/* FNV-1a from the seed and scope, then mixed so that every bit of the
** slot depends on every byte (FNV's low bits see only low bits). */
static uint32_t namehash (uint32_t seed, uint32_t scope, const char *s,
                          size_t len) {
  uint32_t h = 2166136261u ^ seed;
  size_t i;
  h = (h ^ scope) * 16777619u;
  for (i = 0; i < len; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  h *= 0x846ca68bu;
  return h ^ h >> 16;
}

bw_NameEntry *bw_nameslot (const bw_Schema *S, bw_NameEntry *tab,
                           uint32_t cap, uint32_t scope, const char *s,
                           size_t len) {
  uint32_t j = namehash(S->seed, scope, s, len) & (cap - 1);
  for (;;) {
    bw_NameEntry *e = &tab[j];
    if (e->name == BW_NONE) return e;
    if (e->scope == scope && S->namelens[e->name] == len
        && memcmp(S->names[e->name], s, len) == 0)
      return e;
    j = (j + 1) & (cap - 1);
  }
}

/* The value of (scope, s) in the index, or BW_NONE. */
static uint32_t lookup (const bw_Schema *S, uint32_t scope, const char *s,
                        size_t len) {
  const bw_NameEntry *e = bw_nameslot(S, S->index, S->indexcap, scope, s, len);
  return e->name == BW_NONE ? BW_NONE : e->value;
}

static int named (const bw_Schema *S, uint32_t nm, const char *s, size_t len) {
  return nm != BW_NONE && S->namelens[nm] == len
         && memcmp(S->names[nm], s, len) == 0;
}

/* A few names are found faster one by one than by hashing the key. */
#define SCANNED  8

uint32_t bw_schemafind (const bw_Schema *S, const char *s, size_t len) {
  uint32_t i;
  if (S->index != NULL && S->ntypes > SCANNED)
    return lookup(S, BW_TYPESCOPE, s, len);
  for (i = 0; i < S->ntypes; i++)
    if (named(S, S->types[i].name, s, len)) return i;
  return BW_NONE;
}

const bw_Field *bw_fieldnamed (const bw_Schema *S, uint32_t t, const char *k,
                               size_t len) {
  const bw_Type *ty = &S->types[t];
  uint32_t i;
  if (S->index != NULL && ty->count > SCANNED) {
    i = lookup(S, t, k, len);
    return i == BW_NONE ? NULL : &S->fields[i];
  }
  for (i = ty->first; i < ty->first + ty->count; i++)
    if (named(S, S->fields[i].name, k, len)) return &S->fields[i];
  return NULL;
}

uint32_t bw_enumvalue (const bw_Schema *S, const bw_Field *f, const char *s,
                       size_t len) {
  uint32_t i, n = (uint32_t)f->max + 1;
  if (S->index != NULL && n > SCANNED)
    return lookup(S, BW_ENUMSCOPE(f->ref), s, len);
  for (i = 0; i < n; i++)
    if (named(S, f->ref + i, s, len)) return i;
  return BW_NONE;
}

/* }========================================================== */


/* {===================== sizes and checks ===================== */

static uint64_t addsat (uint64_t a, uint64_t b) {
  return a > BW_UNBOUNDED - b ? BW_UNBOUNDED : a + b;
}

static uint64_t mulsat (uint64_t a, uint64_t b) {
  return (b != 0 && a > BW_UNBOUNDED / b) ? BW_UNBOUNDED : a * b;
}

typedef struct Seal {
  bw_Schema *S;
  uint8_t *state;       /* per type: 0 new, 1 in progress, 2 done */
  char *msg;
  size_t msgsize;
  unsigned level;       /* types being sealed, one inside the other */
  uint32_t root;        /* the outermost of them */
} Seal;

#define STR_(x)   #x
#define STR(x)    STR_(x)
#define DEEPMSG   ": nesting deeper than " STR(BW_MAXDEPTH) " levels"

static int sealtype (Seal *z, uint32_t t);

static void setmsg (Seal *z, const char *what, uint32_t name) {
  const char *nm = name < z->S->nnames ? z->S->names[name] : "?";
  if (z->msgsize > 0) snprintf(z->msg, z->msgsize, "%s%s", nm, what);
}

/* Bits of gap 'd' (of at most 'c') in the slot chain of relative sparse
** 'f': its tiers, or int_relative's. */
static uint64_t gapbits (const bw_Field *f, uint64_t d, uint64_t c) {
  if (f->ntiers > 0) return bw_tieredbits(d, 1, c, f->tierbits, f->ntiers);
  return bw_intrelativebits(0, d);
}

/* The most bits the slot chain of relative sparse 'f' (n slots) with its
** elements (at most 'e' bits each) takes: gaps d_0..d_k, k of them
** followed by an element, summing to n + 1. Every gap of a tier costs the
** same, so a chain takes at most (n + 1) times the best ratio of a
** tier's bits plus 'e' to its least gap, less the end's 'e': exact when
** that tier's gap divides n + 1 (every slot, for most elements), within
** one gap otherwise. */
static uint64_t relativeworst (const bw_Field *f, uint64_t e) {
  uint64_t c = (uint64_t)f->max + 1, lo = 1, bestv = 0, besta = 1;
  unsigned i;
  if (e > (UINT64_C(1) << 24))  /* too large for the products below */
    return addsat(mulsat(c, 39), mulsat(c, e));
  for (i = 0; lo <= c; i++) {
    uint64_t hi, v = gapbits(f, lo, c) + e;
    if (f->ntiers > 0) {
      if (i >= f->ntiers) break;
      hi = bw_tierhi(lo, c, f->tierbits, i, f->ntiers);
    }
    else {  /* int_relative's tiers rise: the last gap of this one's cost */
      uint64_t a = lo, b = c;
      while (a < b) {
        uint64_t m = a + (b - a + 1) / 2;
        if (gapbits(f, m, c) == v - e) a = m;
        else b = m - 1;
      }
      hi = a;
    }
    if (v * besta > bestv * lo) {  /* < 2^25 each times < 2^33 */
      bestv = v;
      besta = lo;
    }
    lo = hi + 1;
  }
  return c * bestv / besta - e;
}

/* The most bits sparse 'f' takes with elements of at most 'e' bits: mask
** and index at every slot present; auto picks the least of the three. */
static uint64_t sparseworst (const bw_Field *f, uint64_t e) {
  uint64_t n = (uint64_t)f->max;
  uint64_t mask = addsat(n, mulsat(n, e));
  uint64_t index = addsat(f->nbits, mulsat(n, addsat(bw_bitsrequired(0,
                                  (int64_t)n - 1), e)));
  uint64_t rel, least;
  if (f->encoding == BW_SPMASK) return mask;
  if (f->encoding == BW_SPINDEX) return index;
  rel = relativeworst(f, e);
  if (f->encoding == BW_SPRELATIVE) return rel;
  least = mask < index ? mask : index;
  return addsat(2, least < rel ? least : rel);
}

/* Fill f->minbits/maxbits; returns nesting depth + 1, or 0 on error. */
static unsigned sealfield (Seal *z, bw_Field *f) {
  bw_Schema *S = z->S;
  uint64_t lo = 0, hi = 0;
  unsigned depth = 1;
  switch (f->kind) {
    case BW_KINT: case BW_KUINT: case BW_KENUM:
      lo = hi = f->nbits;
      break;
    case BW_KBOOL: lo = hi = 1; break;
    case BW_KFLOAT: lo = hi = f->q.nbits; break;
    case BW_KFLOAT32: lo = hi = 32; break;
    case BW_KFLOAT64: lo = hi = 64; break;
    case BW_KSTRING: case BW_KBYTES:  /* length, padding, bytes */
      lo = f->nbits + mulsat((uint64_t)f->min, 8);
      hi = addsat(f->nbits + 7, mulsat((uint64_t)f->max, 8));
      break;
    case BW_KALIGN: lo = 0; hi = 7; break;
    case BW_KCHECK: lo = 32; hi = 39; break;
    case BW_KQUAT: lo = hi = 2 + 3 * (uint64_t)f->nbits; break;
    case BW_KANGLE: lo = hi = f->nbits; break;
    case BW_KTIERED: {  /* the tiers a value can be in: max clips them */
      uint64_t span = (uint64_t)f->max - (uint64_t)f->min, start = 0;
      unsigned i;
      lo = BW_UNBOUNDED;
      for (i = 0; i < f->ntiers; i++) {
        uint64_t b = bw_tieredbits(start, 0, span, f->tierbits, f->ntiers);
        uint64_t w = (i + 1 == f->ntiers || f->tierbits[i] >= 63) ? span - start
                     : (UINT64_C(1) << f->tierbits[i]) - 1;
        if (b < lo) lo = b;
        if (b > hi) hi = b;
        if (w >= span - start) break;   /* this tier reaches max */
        start += w + 1;
      }
      break;
    }
    case BW_KSTRUCT: {
      bw_Type *t;
      if (f->ref >= S->ntypes) return 0;
      if (!sealtype(z, f->ref)) return 0;
      t = &S->types[f->ref];
      lo = t->minbits;
      hi = t->maxbits;
      depth = t->depth + 1;
      break;
    }
    case BW_KARRAY: case BW_KSPARSE: {
      bw_Field *e;
      unsigned d;
      if (f->ref >= S->nfields) return 0;
      e = &S->fields[f->ref];
      d = sealfield(z, e);
      if (d == 0) return 0;
      depth = d + 1;
      if (f->kind == BW_KARRAY) {
        lo = addsat(f->nbits, mulsat((uint64_t)f->min, e->minbits));
        hi = addsat(f->nbits, mulsat((uint64_t)f->max, e->maxbits));
      }
      else {
        uint64_t n = (uint64_t)f->max, idx = f->nbits;
        /* least: nothing present; relative ends in a sentinel of 1 bit */
        lo = f->encoding == BW_SPMASK ? n : f->encoding == BW_SPINDEX ? idx
           : f->encoding == BW_SPRELATIVE ? 1 : 3;
        hi = sparseworst(f, e->maxbits);
      }
      break;
    }
    default:
      return 0;
  }
  f->minbits = lo;
  f->maxbits = hi;
  return depth;
}

static int sealtype (Seal *z, uint32_t t) {
  bw_Schema *S = z->S;
  bw_Type *ty = &S->types[t];
  uint64_t lo = 0, hi = 0;
  unsigned depth = 0;
  uint32_t i;
  if (z->state[t] == 2) return 1;
  if (z->state[t] == 1) {
    setmsg(z, ": type refers to itself", ty->name);
    return 0;
  }
  /* each type inside another is a level more: stop before a long chain of
  ** them overflows the C stack */
  if (z->level >= BW_MAXDEPTH) {
    setmsg(z, DEEPMSG, S->types[z->root].name);
    return 0;
  }
  z->state[t] = 1;
  z->level++;
  for (i = ty->first; i < ty->first + ty->count; i++) {
    bw_Field *f = &S->fields[i];
    unsigned d = sealfield(z, f);
    if (d == 0) {
      if (z->msg[0] == '\0') setmsg(z, ": bad field reference", f->name);
      return 0;
    }
    if (d > depth) depth = d;
    if (f->since != 0 || f->removed != UINT32_MAX) S->types[t].versioned = 1;
    if (f->since == 0 && f->removed == UINT32_MAX)
      lo = addsat(lo, f->optional ? 1 : f->minbits);
    hi = addsat(hi, addsat(f->maxbits, f->optional ? 1 : 0));
  }
  z->level--;
  ty = &S->types[t];
  ty->minbits = lo;
  ty->maxbits = hi;
  ty->depth = depth;
  if (depth > BW_MAXDEPTH) {
    setmsg(z, DEEPMSG, ty->name);
    return 0;
  }
  z->state[t] = 2;
  return 1;
}

/* Values a decode makes for 'f' when it reads no bits for it: a record or
** a fixed array of parts that take no bits. Bounded so that what a decode
** makes is bounded by what it reads (SECURITY.md, Limits). */
#define ZUNKNOWN UINT64_MAX

static uint64_t zerotype (const bw_Schema *S, uint32_t t, uint64_t *memo);

static uint64_t zerofield (const bw_Schema *S, const bw_Field *f,
                           uint64_t *memo) {
  switch (f->kind) {
    case BW_KSTRUCT: return zerotype(S, f->ref, memo);
    case BW_KARRAY: case BW_KSPARSE: {
      const bw_Field *e = &S->fields[f->ref];
      if (e->minbits > 0) return 1;
      return addsat(1, mulsat((uint64_t)f->max, zerofield(S, e, memo)));
    }
    case BW_KALIGN: return 0;
    default: return 1;
  }
}

static uint64_t zerotype (const bw_Schema *S, uint32_t t, uint64_t *memo) {
  const bw_Type *ty = &S->types[t];
  uint64_t z = 1;
  uint32_t i;
  if (memo[t] != ZUNKNOWN) return memo[t];
  for (i = ty->first; i < ty->first + ty->count; i++) {
    const bw_Field *f = &S->fields[i];
    if (!f->optional && f->minbits == 0) z = addsat(z, zerofield(S, f, memo));
  }
  memo[t] = z;
  return z;
}

/* Refuse a type, or an array of parts that take no bits, that would make
** more than BW_MAXZERO values from no input. */
static int zerocheck (bw_Schema *S, char *msg, size_t msgsize) {
  uint64_t *memo = (uint64_t *)malloc((S->ntypes + 1) * sizeof(uint64_t));
  uint32_t t, i;
  int ok = 1;
  if (memo == NULL) return -1;
  for (t = 0; t < S->ntypes; t++) memo[t] = ZUNKNOWN;
  for (t = 0; t < S->ntypes && ok; t++) {
    const bw_Type *ty = &S->types[t];
    uint64_t z = zerotype(S, t, memo);
    if (z > BW_MAXZERO) {
      snprintf(msg, msgsize, "%s: a value that takes no bits makes %" PRIu64
               " values (more than %d)", S->names[ty->name], z, BW_MAXZERO);
      ok = 0;
    }
    for (i = ty->first; i < ty->first + ty->count && ok; i++) {
      const bw_Field *f = &S->fields[i];
      while (f->kind == BW_KARRAY || f->kind == BW_KSPARSE) {
        const bw_Field *e = &S->fields[f->ref];
        uint64_t n = e->minbits > 0 ? 0
                     : mulsat((uint64_t)f->max, zerofield(S, e, memo));
        if (n > BW_MAXZERO) {
          snprintf(msg, msgsize, "%s.%s: %" PRId64 " elements that take no "
                   "bits make %" PRIu64 " values (more than %d)",
                   S->names[ty->name], S->names[S->fields[i].name], f->max, n,
                   BW_MAXZERO);
          ok = 0;
          break;
        }
        f = e;
      }
    }
  }
  free(memo);
  return ok;
}

/* Width of 'f' if it is a fixed-width scalar always on the wire, else -1. */
static int fixedwidth (const bw_Field *f) {
  if (f->optional || f->name == BW_NONE || f->since != 0
      || f->removed != UINT32_MAX)
    return -1;
  switch (f->kind) {
    case BW_KINT: case BW_KUINT: case BW_KENUM: return (int)f->nbits;
    case BW_KBOOL: return 1;
    case BW_KFLOAT: return (int)f->q.nbits;
    default: return -1;
  }
}

/* Mark runs of fixed-width fields so a decoder reads each run at once. */
static void fuseruns (bw_Schema *S, const bw_Type *ty) {
  uint32_t i = ty->first, end = ty->first + ty->count;
  while (i < end) {
    uint32_t j = i;
    int bits = 0, w;
    while (j < end && j - i < 255 && (w = fixedwidth(&S->fields[j])) >= 0
           && bits + w <= BW_FUSEBITS) {
      bits += w;
      j++;
    }
    if (j - i > 1) {
      S->fields[i].fuse = (uint8_t)(j - i);
      S->fields[i].fusebits = (uint8_t)bits;
      i = j;
    }
    else i++;
  }
}

/* The power of 2 a hash part for 'n' keys takes (0 for none); wide
** enough that the loop ends for any 'n'. */
static uint64_t hashsize (uint32_t n) {
  uint64_t size = n > 0 ? 1 : 0;
  while (size < n) size <<= 1;
  return size;
}

/* Optional fields of each type, so decode can size tables by what came,
** and whether all fields are fixed-width scalars it can read first. */
static void countoptional (bw_Schema *S, bw_Type *ty) {
  uint32_t i;
  ty->noptional = 0;
  ty->scalars = 1;
  for (i = ty->first; i < ty->first + ty->count; i++) {
    const bw_Field *f = &S->fields[i];
    ty->noptional += f->optional != 0;
    if (f->name == BW_NONE || f->since != 0 || f->removed != UINT32_MAX
        || !(f->kind <= BW_KFLOAT || f->kind == BW_KENUM))
      ty->scalars = 0;
  }
  ty->shrinks = hashsize(ty->count - ty->noptional) < hashsize(ty->count);
}

#define MAXFLAT 64  /* scalars of a flat record */

/* A type is flat when each field is a fixed-width scalar, a record whose
** type is one fused run, an array of a fixed count of fixed-width scalars
** or a quaternion, all named, required and unversioned: a decoder can read
** the whole record before it touches a table. Needs fuseruns. */
static void markflat (bw_Schema *S, bw_Type *ty) {
  uint32_t i, n = 0;
  ty->flat = 0;
  for (i = ty->first; i < ty->first + ty->count; i++) {
    const bw_Field *f = &S->fields[i];
    if (f->name == BW_NONE || f->optional || f->since != 0
        || f->removed != UINT32_MAX)
      return;
    if (f->kind == BW_KSTRUCT) {
      const bw_Type *st = &S->types[f->ref];
      if (st->count < 2 || S->fields[st->first].fuse != st->count) return;
      n += st->count;
    }
    else if (f->kind <= BW_KFLOAT || f->kind == BW_KENUM) n++;
    else if (f->kind == BW_KARRAY && f->nbits == 0 && f->min >= 0
             && f->min <= MAXFLAT) {
      const bw_Field *e = &S->fields[f->ref];
      if (!(e->kind <= BW_KFLOAT || e->kind == BW_KENUM)) return;
      n += (uint32_t)f->min;  /* its count: nothing sent */
    }
    else if (f->kind == BW_KQUAT) n += 4;
    else return;
  }
  if (n <= MAXFLAT) ty->flat = n;
}

/* }========================================================== */


/* {===================== fingerprint ===================== */
/* FNV-1a over the wire-relevant parameters, in program order. Names and
** defaults are left out: they do not change a single bit on the wire. */

static uint64_t fnv (uint64_t h, uint64_t v) {
  int i;
  for (i = 0; i < 8; i++) {
    h ^= (v >> (8 * i)) & 0xFF;
    h *= UINT64_C(0x100000001b3);
  }
  return h;
}

static uint64_t floatbits (float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}

/* 'th': NULL hashes a record field by its type's index (the fingerprint),
** else by th[type], the hash of what the type holds (bw_typehashes). */
static uint64_t hashfield (const bw_Schema *S, const bw_Field *f, uint64_t h,
                           const uint64_t *th) {
  unsigned i;
  h = fnv(h, f->kind);
  h = fnv(h, (uint64_t)f->optional | (uint64_t)f->fixed << 8
             | (uint64_t)f->encoding << 16);
  h = fnv(h, (uint64_t)f->min);
  h = fnv(h, (uint64_t)f->max);
  h = fnv(h, f->nbits);
  h = fnv(h, (uint64_t)f->since | (uint64_t)f->removed << 32);
  switch (f->kind) {
    case BW_KFLOAT: case BW_KQUAT:
      h = fnv(h, floatbits(f->q.min) | floatbits(f->q.delta) << 32);
      h = fnv(h, (uint64_t)f->q.miv << 8 | f->q.nbits);
      break;
    case BW_KCHECK: h = fnv(h, f->magic); break;
    case BW_KANGLE: h = fnv(h, (uint64_t)f->dmax); break;
    default: break;
  }
  /* tiers of tiered, sparse and relative deltas; the delta mode */
  if (f->ntiers > 0 || f->relative) {
    h = fnv(h, (uint64_t)f->ntiers | (uint64_t)f->relative << 8);
    for (i = 0; i < f->ntiers; i++) h = fnv(h, f->tierbits[i]);
  }
  switch (f->kind) {
    case BW_KSTRUCT: h = fnv(h, th ? th[f->ref] : f->ref); break;
    case BW_KARRAY: case BW_KSPARSE:
      h = hashfield(S, &S->fields[f->ref], h, th);
      break;
    default: break;
  }
  return h;
}

#define FNVBASIS UINT64_C(0xcbf29ce484222325)

static uint64_t typehash (const bw_Schema *S, uint32_t t, uint64_t *th,
                          uint8_t *done) {
  const bw_Type *ty = &S->types[t];
  uint64_t h = fnv(FNVBASIS, ty->count);
  uint32_t i;
  if (done[t]) return th[t];
  for (i = ty->first; i < ty->first + ty->count; i++) {
    const bw_Field *f = &S->fields[i];
    while (f->kind == BW_KARRAY || f->kind == BW_KSPARSE)
      f = &S->fields[f->ref];
    if (f->kind == BW_KSTRUCT) typehash(S, f->ref, th, done);
    h = hashfield(S, &S->fields[i], h, th);
  }
  th[t] = h;
  done[t] = 1;
  return h;
}

int bw_typehashes (const bw_Schema *S, uint64_t *th) {
  uint8_t *done = (uint8_t *)calloc(S->ntypes + 1, 1);
  uint32_t t;
  if (done == NULL) return 0;
  for (t = 0; t < S->ntypes; t++) typehash(S, t, th, done);
  free(done);
  return 1;
}

uint64_t bw_fieldhash (const bw_Schema *S, const bw_Field *f,
                       const uint64_t *th) {
  return hashfield(S, f, FNVBASIS, th);
}

/* }========================================================== */


bw_Status bw_schemaseal (bw_Schema *S, char *msg, size_t msgsize) {
  Seal z;
  uint32_t t, i;
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  if (msgsize > 0) msg[0] = '\0';
  if (S == NULL || S->sealed) {  /* again would take the ids for a given list */
    if (msgsize > 0)
      snprintf(msg, msgsize, S == NULL ? "no schema" : "schema already sealed");
    return BW_EARG;
  }
  z.S = S;
  z.msg = msg;
  z.msgsize = msgsize;
  z.state = (uint8_t *)calloc(S->ntypes + 1, 1);
  if (z.state == NULL) return BW_ENOMEM;
  for (t = 0; t < S->ntypes; t++) {
    z.level = 0;
    z.root = t;
    if (!sealtype(&z, t)) {
      free(z.state);
      return BW_ESCHEMA;
    }
  }
  free(z.state);
  switch (zerocheck(S, msg, msgsize)) {
    case -1: return BW_ENOMEM;
    case 0: return BW_ESCHEMA;
    default: break;
  }
  for (t = 0; t < S->ntypes; t++) {  /* for the walks' speed only */
    fuseruns(S, &S->types[t]);
    countoptional(S, &S->types[t]);
  }
  for (t = 0; t < S->ntypes; t++) markflat(S, &S->types[t]);
  h = fnv(h, S->ntypes);
  for (t = 0; t < S->ntypes; t++) {
    const bw_Type *ty = &S->types[t];
    h = fnv(h, ty->count);
    for (i = ty->first; i < ty->first + ty->count; i++)
      h = hashfield(S, &S->fields[i], h, NULL);
  }
  if (S->nmessages == 0) {   /* no message list: every type, by index */
    S->nmessages = S->ntypes;
    for (t = 0; t < S->ntypes; t++) S->types[t].msgid = t;
    S->typebits = S->ntypes > 0 ? bw_bitsrequired(0, S->ntypes - 1) : 0;
  }
  else {   /* ids listed or their width given: both are on the wire */
    S->explicitids = 1;
    h = fnv(h, (uint64_t)S->nmessages | (uint64_t)S->typebits << 32);
    for (i = 0; i < S->nmessages; i++) h = fnv(h, bw_msgtype(S, i));
  }
  S->fingerprint = h;
  S->version = 0;
  for (i = 0; i < S->nfields; i++) {
    const bw_Field *f = &S->fields[i];
    if (f->since > S->version) S->version = f->since;
    if (f->removed != UINT32_MAX && f->removed > S->version)
      S->version = f->removed;
  }
  S->sealed = 1;
  return BW_OK;
}
