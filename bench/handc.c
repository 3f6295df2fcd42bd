/*
** handc.c - hand-written C encoder/decoder of the benchmark Snapshot
** See LICENSE for copyright and terms.
*/

/*
** This is the bar the schema driver is measured against: what a careful
** programmer writes in C for exactly one message, using the Lua C API the
** way any driver must. Input fields are fetched with lua_rawget and keys
** that were interned once (upvalues); decoded tables are created with their
** final sizes and filled with lua_rawset. Encoding goes through a buffer
** that lives in a userdata and is reused by every call. The bit writer and
** reader are the plainest LSB-first 64-bit scratch kind, inline here, and
** the quantized floats use serialize.h's float32 steps exactly (build with
** -ffp-contract=off), so the bytes are the ones bitwire's schema
** compiler must produce for the same description (see bench/bench_schema.lua):
**
**   Snapshot: tick bits(20), ack bits(16), int(#entities, 0, 64), entities
**   Entity:   id int(0,4095), kind int(0,7), x/y/z compressed_float(-512,
**             512, 0.01), yaw compressed_float(0, 2pi, rad(0.35)),
**             health int(0,100), f1..f4 bool, name: bool(present) then
**             string(s, 16) = int(#s, 0, 16), align, bytes
**
** Decoding validates like a driver must: truncation, ranges, padding bits
** and UTF-8, returning nil, message, code; decode_into refills a table
** without allocating once its shape has been seen.
*/

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lua.h"
#include "lauxlib.h"


/* {===================== message layout ===================== */

#define TICKBITS    20
#define ACKBITS     16
#define MAXENTS     64
#define COUNTBITS   7     /* bits_required(0, 64) */
#define IDBITS      12    /* 0..4095 */
#define KINDBITS    3     /* 0..7 */
#define MAXHEALTH   100
#define HEALTHBITS  7
#define MAXNAME     16
#define NAMELENBITS 5     /* bits_required(0, 16) */

/* widest message: 17-bit positions, 11-bit yaw (asserted at load) */
#define ENTMAXBITS  (IDBITS + KINDBITS + 3 * 17 + 11 + HEALTHBITS + 4 \
                     + 1 + NAMELENBITS + 7 + 8 * MAXNAME)
#define MAXBITS     (TICKBITS + ACKBITS + COUNTBITS + MAXENTS * ENTMAXBITS)
#define MAXBYTES    ((MAXBITS + 7) / 8)

/* upvalues: the state userdata, then the interned keys */
enum { K_TICK = 2, K_ACK, K_ENTITIES, K_ID, K_KIND, K_X, K_Y, K_Z, K_YAW,
       K_HEALTH, K_F1, K_F2, K_F3, K_F4, K_NAME, K_LAST = K_NAME };

static const char *const keynames[] = {
  "tick", "ack", "entities", "id", "kind", "x", "y", "z", "yaw",
  "health", "f1", "f2", "f3", "f4", "name"
};

#define key(k)  lua_upvalueindex(k)

/* }========================================================== */


/* {===================== compressed float ===================== */
/* serialize.h's steps, each rounded to float32, none fused. */

typedef struct QFloat {
  float    min, delta;
  uint32_t miv;          /* largest integer sent */
  unsigned nbits;
} QFloat;

static unsigned bitlength (uint64_t v) {
  unsigned n = 0;
  while (v != 0) { v >>= 1; n++; }
  return n;
}

static int qinit (QFloat *q, double min, double max, double res) {
  float fmin = (float)min, fmax = (float)max, fres = (float)res;
  float delta, values;
  if (!(fmin < fmax) || !(fres > 0.0f)) return 0;
  delta = fmax - fmin;
  values = delta / fres;
  if (!(values >= 1.0f)) values = 1.0f;
  if (values > 4294967040.0f) values = 4294967040.0f;
  q->min = fmin;
  q->delta = delta;
  q->miv = (uint32_t)ceilf(values);
  q->nbits = bitlength(q->miv);
  return 1;
}

static uint32_t qencode (const QFloat *q, double x) {
  float v = (float)x;
  float norm = (v - q->min) / q->delta;
  float scaled, rounded;
  uint32_t i;
  if (!(norm >= 0.0f)) norm = 0.0f;  /* also NaN */
  if (norm > 1.0f) norm = 1.0f;
  scaled = norm * (float)q->miv;
  rounded = floorf(scaled + 0.5f);
  i = (uint32_t)rounded;
  return i > q->miv ? q->miv : i;
}

static float qdecode (const QFloat *q, uint32_t i) {
  float norm = (float)i / (float)q->miv;
  float scaled = norm * q->delta;
  return scaled + q->min;
}

/* }========================================================== */


/* State kept between calls: the quantizers and the encode buffer. */
typedef struct State {
  QFloat  pos, yaw;
  uint8_t buf[MAXBYTES + 8];  /* slack for whole-word stores */
} State;

#define getstate(L)  ((State *)lua_touserdata(L, lua_upvalueindex(1)))


/* {===================== UTF-8 ===================== */

/* 1 if 's' of 'n' bytes is well-formed UTF-8 without NUL. */
static int utf8ok (const uint8_t *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t c = s[i];
    size_t k, len;
    uint32_t cp;
    if (c < 0x80) {
      if (c == 0) return 0;
      i++;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1Fu; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0Fu; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07u; }
    else return 0;
    if (len > n - i) return 0;
    for (k = 1; k < len; k++) {
      if ((s[i + k] & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (s[i + k] & 0x3Fu);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)))
        || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
      return 0;
    i += len;
  }
  return 1;
}

/* }========================================================== */


/* {===================== encode ===================== */

typedef struct Writer {
  uint8_t *p;
  size_t   n;            /* bytes stored */
  uint64_t scratch;
  unsigned sbits;        /* 0..31 between calls */
} Writer;

static void store32 (uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

/* Append the low 'n' (0..32) bits of 'v', which must fit. */
static void putbits (Writer *w, uint32_t v, unsigned n) {
  w->scratch |= (uint64_t)v << w->sbits;
  w->sbits += n;
  if (w->sbits >= 32) {
    store32(w->p + w->n, (uint32_t)w->scratch);
    w->n += 4;
    w->scratch >>= 32;
    w->sbits -= 32;
  }
}

/* Align, then copy 'len' bytes. */
static void putbytes (Writer *w, const char *s, size_t len) {
  w->sbits = (w->sbits + 7) & ~7u;
  while (w->sbits > 0) {
    w->p[w->n++] = (uint8_t)w->scratch;
    w->scratch >>= 8;
    w->sbits -= 8;
  }
  memcpy(w->p + w->n, s, len);
  w->n += len;
}

/* Store the partial word; returns the packet length, ceil(bits / 8). */
static size_t flush (Writer *w) {
  while (w->sbits > 0) {
    w->p[w->n++] = (uint8_t)w->scratch;
    w->scratch >>= 8;
    w->sbits = w->sbits > 8 ? w->sbits - 8 : 0;
  }
  return w->n;
}

static lua_Integer getint (lua_State *L, int t, int k, lua_Integer min,
                           lua_Integer max, lua_Integer ent) {
  int isint;
  lua_Integer v;
  lua_pushvalue(L, key(k));
  lua_rawget(L, t);
  v = lua_tointegerx(L, -1, &isint);
  lua_pop(L, 1);
  if (!isint || v < min || v > max) {
    const char *name = keynames[k - K_TICK];
    lua_pushvalue(L, key(k));
    lua_rawget(L, t);
    if (ent == 0)
      return luaL_error(L, "%s: %s out of range [%I, %I]", name,
                        luaL_tolstring(L, -1, NULL), min, max);
    return luaL_error(L, "entities[%I].%s: %s out of range [%I, %I]", ent,
                      name, luaL_tolstring(L, -1, NULL), min, max);
  }
  return v;
}

static double getnum (lua_State *L, int t, int k, lua_Integer ent) {
  int isnum;
  double v;
  lua_pushvalue(L, key(k));
  lua_rawget(L, t);
  v = (double)lua_tonumberx(L, -1, &isnum);
  lua_pop(L, 1);
  if (!isnum)
    return luaL_error(L, "entities[%I].%s: number expected",
                      ent, keynames[k - K_TICK]);
  return v;
}

static int getbool (lua_State *L, int t, int k) {
  int b;
  lua_pushvalue(L, key(k));
  lua_rawget(L, t);
  b = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return b;
}

/* Encode the entity table at 't' (absolute index), entities[ent]. */
static void putentity (lua_State *L, const State *st, Writer *w, int t,
                       lua_Integer ent) {
  uint32_t v;
  v = (uint32_t)getint(L, t, K_ID, 0, 4095, ent);
  v |= (uint32_t)getint(L, t, K_KIND, 0, 7, ent) << IDBITS;
  putbits(w, v, IDBITS + KINDBITS);
  putbits(w, qencode(&st->pos, getnum(L, t, K_X, ent)), st->pos.nbits);
  putbits(w, qencode(&st->pos, getnum(L, t, K_Y, ent)), st->pos.nbits);
  putbits(w, qencode(&st->pos, getnum(L, t, K_Z, ent)), st->pos.nbits);
  putbits(w, qencode(&st->yaw, getnum(L, t, K_YAW, ent)), st->yaw.nbits);
  v = (uint32_t)getint(L, t, K_HEALTH, 0, MAXHEALTH, ent);
  v |= (uint32_t)getbool(L, t, K_F1) << HEALTHBITS;
  v |= (uint32_t)getbool(L, t, K_F2) << (HEALTHBITS + 1);
  v |= (uint32_t)getbool(L, t, K_F3) << (HEALTHBITS + 2);
  v |= (uint32_t)getbool(L, t, K_F4) << (HEALTHBITS + 3);
  lua_pushvalue(L, key(K_NAME));
  if (lua_rawget(L, t) == LUA_TNIL) {
    putbits(w, v, HEALTHBITS + 4 + 1);  /* presence bit 0 */
  }
  else {
    size_t len;
    const char *s;
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "entities[%I].name: string expected, got %s", ent,
                 luaL_typename(L, -1));
    s = lua_tolstring(L, -1, &len);
    if (len > MAXNAME)
      luaL_error(L, "entities[%I].name: length %I out of range [0, %d]",
                 ent, (lua_Integer)len, MAXNAME);
    if (!utf8ok((const uint8_t *)s, len))
      luaL_error(L, "entities[%I].name: invalid UTF-8 or NUL", ent);
    v |= 1u << (HEALTHBITS + 4);
    v |= (uint32_t)len << (HEALTHBITS + 5);
    putbits(w, v, HEALTHBITS + 4 + 1 + NAMELENBITS);
    putbytes(w, s, len);
  }
  lua_pop(L, 1);
}

/* handc.encode(snapshot) -> string */
static int handc_encode (lua_State *L) {
  State *st = getstate(L);
  Writer w;
  lua_Integer n, i;
  uint32_t v;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  w.p = st->buf;
  w.n = 0;
  w.scratch = 0;
  w.sbits = 0;
  v = (uint32_t)getint(L, 1, K_TICK, 0, (1 << TICKBITS) - 1, 0);
  putbits(&w, v, TICKBITS);
  v = (uint32_t)getint(L, 1, K_ACK, 0, (1 << ACKBITS) - 1, 0);
  putbits(&w, v, ACKBITS);
  lua_pushvalue(L, key(K_ENTITIES));
  if (lua_rawget(L, 1) != LUA_TTABLE)
    return luaL_error(L, "entities: table expected, got %s",
                      luaL_typename(L, -1));
  n = (lua_Integer)lua_rawlen(L, 2);
  if (n > MAXENTS)
    return luaL_error(L, "entities: count %I out of range [0, %d]",
                      n, MAXENTS);
  putbits(&w, (uint32_t)n, COUNTBITS);
  for (i = 1; i <= n; i++) {
    if (lua_rawgeti(L, 2, i) != LUA_TTABLE)
      return luaL_error(L, "entities[%I]: table expected, got %s", i,
                        luaL_typename(L, -1));
    putentity(L, st, &w, 3, i);
    lua_pop(L, 1);
  }
  lua_pushlstring(L, (const char *)st->buf, flush(&w));
  return 1;
}

/* }========================================================== */


/* {===================== decode ===================== */

enum { E_OK, E_TRUNC, E_RANGE, E_ALIGN, E_UTF8 };
static const char *const codes[] = { "ok", "truncated", "range", "align",
                                     "utf8" };

typedef struct Reader {
  const uint8_t *p;
  size_t      len, next;  /* bytes; next one to load */
  uint64_t    scratch;
  unsigned    sbits;
  uint64_t    pos, nbits; /* bits consumed, bits in the input */
  int         status;     /* sticky: after a failure reads return 0 */
  uint64_t    errpos;
  const char *field;      /* the field being read, for messages */
  uint32_t    errvalue;
  uint32_t    errmax;
} Reader;

static void fail (Reader *r, int code, uint64_t at) {
  if (r->status == E_OK) {
    r->status = code;
    r->errpos = at;
  }
}

/* Read 'n' (1..32) bits. */
static uint32_t getbits (Reader *r, const char *field, unsigned n) {
  uint32_t v;
  if (r->status != E_OK) return 0;
  r->field = field;
  if (n > r->nbits - r->pos) {
    fail(r, E_TRUNC, r->pos);
    return 0;
  }
  if (r->sbits < n) {
    if (r->len - r->next >= 4) {
      const uint8_t *b = r->p + r->next;
      uint32_t word = (uint32_t)b[0] | (uint32_t)b[1] << 8
                      | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
      r->scratch |= (uint64_t)word << r->sbits;
      r->sbits += 32;
      r->next += 4;
    }
    else {
      while (r->next < r->len) {
        r->scratch |= (uint64_t)r->p[r->next++] << r->sbits;
        r->sbits += 8;
      }
    }
  }
  v = (uint32_t)(r->scratch & ((UINT64_C(1) << n) - 1));
  r->scratch >>= n;
  r->sbits -= n;
  r->pos += n;
  return v;
}

/* A value read at 'n' bits back that exceeds 'max'. */
static uint32_t checkmax (Reader *r, uint32_t v, uint32_t max, unsigned n) {
  if (v > max && r->status == E_OK) {
    fail(r, E_RANGE, r->pos - n);
    r->errvalue = v;
    r->errmax = max;
    return 0;
  }
  return v;
}

/* Align, then point at 'len' bytes of the input. */
static const uint8_t *getbytes (Reader *r, size_t len) {
  unsigned pad = (unsigned)(-r->pos & 7);
  size_t at;
  if (pad > 0 && getbits(r, r->field, pad) != 0) fail(r, E_ALIGN, r->pos - pad);
  if (r->status != E_OK) return NULL;
  if ((uint64_t)len * 8 > r->nbits - r->pos) {
    fail(r, E_TRUNC, r->pos);
    return NULL;
  }
  at = (size_t)(r->pos >> 3);
  r->pos += (uint64_t)len * 8;
  r->next = at + len;  /* restart the scratch after the bytes */
  r->scratch = 0;
  r->sbits = 0;
  return r->p + at;
}

typedef struct Entity {
  uint32_t id, kind, health, flags;
  float    x, y, z, yaw;
  const char *name;      /* into the input; NULL when absent */
  size_t   namelen;
} Entity;

static float getfloat (Reader *r, const QFloat *q, const char *field) {
  uint32_t i = checkmax(r, getbits(r, field, q->nbits), q->miv, q->nbits);
  return qdecode(q, i);
}

static int getentity (Reader *r, const State *st, Entity *e) {
  e->id = getbits(r, "id", IDBITS);
  e->kind = getbits(r, "kind", KINDBITS);
  e->x = getfloat(r, &st->pos, "x");
  e->y = getfloat(r, &st->pos, "y");
  e->z = getfloat(r, &st->pos, "z");
  e->yaw = getfloat(r, &st->yaw, "yaw");
  e->health = checkmax(r, getbits(r, "health", HEALTHBITS), MAXHEALTH,
                       HEALTHBITS);
  e->flags = getbits(r, "f1", 4);
  e->name = NULL;
  if (getbits(r, "name", 1)) {
    uint32_t len = checkmax(r, getbits(r, "name", NAMELENBITS), MAXNAME,
                            NAMELENBITS);
    uint64_t at = r->pos;
    const uint8_t *s = getbytes(r, len);
    if (s != NULL && !utf8ok(s, len)) {
      fail(r, E_UTF8, at);
      s = NULL;
    }
    e->name = (const char *)s;
    e->namelen = len;
  }
  return r->status == E_OK;
}

static void startreader (Reader *r, const char *s, size_t len) {
  memset(r, 0, sizeof(*r));
  r->p = (const uint8_t *)s;
  r->len = len;
  r->nbits = (uint64_t)len * 8;
}

/* Push nil, message, code for the failure of 'r' in entities[ent]. */
static int pusherror (lua_State *L, const Reader *r, lua_Integer ent) {
  luaL_Buffer b;
  lua_pushnil(L);
  luaL_buffinit(L, &b);
  if (ent > 0) {
    lua_pushfstring(L, "entities[%I].", ent);
    luaL_addvalue(&b);
  }
  luaL_addstring(&b, r->field);
  if (r->status == E_RANGE)
    lua_pushfstring(L, ": %I out of range [0, %I] (bit %I)",
                    (lua_Integer)r->errvalue, (lua_Integer)r->errmax,
                    (lua_Integer)r->errpos);
  else
    lua_pushfstring(L, ": %s (bit %I)",
                    r->status == E_TRUNC ? "truncated input"
                    : r->status == E_ALIGN ? "non-zero padding bits"
                    : "invalid string", (lua_Integer)r->errpos);
  luaL_addvalue(&b);
  luaL_pushresult(&b);
  lua_pushstring(L, codes[r->status]);
  return 3;
}

/* Read the header; on success leaves the entity count in '*n'. */
static int getheader (Reader *r, uint32_t *tick, uint32_t *ack, uint32_t *n) {
  *tick = getbits(r, "tick", TICKBITS);
  *ack = getbits(r, "ack", ACKBITS);
  *n = checkmax(r, getbits(r, "entities", COUNTBITS), MAXENTS, COUNTBITS);
  return r->status == E_OK;
}

#define setint(L, k, v) \
  (lua_pushvalue(L, key(k)), lua_pushinteger(L, (lua_Integer)(v)), \
   lua_rawset(L, -3))
#define setnum(L, k, v) \
  (lua_pushvalue(L, key(k)), lua_pushnumber(L, (lua_Number)(v)), \
   lua_rawset(L, -3))
#define setbool(L, k, v) \
  (lua_pushvalue(L, key(k)), lua_pushboolean(L, (v)), lua_rawset(L, -3))

/* Set the fields of the entity table on top of the stack. */
static void setentity (lua_State *L, const Entity *e) {
  setint(L, K_ID, e->id);
  setint(L, K_KIND, e->kind);
  setnum(L, K_X, e->x);
  setnum(L, K_Y, e->y);
  setnum(L, K_Z, e->z);
  setnum(L, K_YAW, e->yaw);
  setint(L, K_HEALTH, e->health);
  setbool(L, K_F1, e->flags & 1);
  setbool(L, K_F2, (e->flags >> 1) & 1);
  setbool(L, K_F3, (e->flags >> 2) & 1);
  setbool(L, K_F4, (e->flags >> 3) & 1);
  lua_pushvalue(L, key(K_NAME));
  if (e->name != NULL)
    lua_pushlstring(L, e->name, e->namelen);
  else
    lua_pushnil(L);
  lua_rawset(L, -3);
}

/* handc.decode(bytes) -> snapshot | nil, message, code */
static int handc_decode (lua_State *L) {
  const State *st = getstate(L);
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  Reader r;
  Entity e;
  uint32_t tick, ack, n, i;
  startreader(&r, s, len);
  if (!getheader(&r, &tick, &ack, &n)) return pusherror(L, &r, 0);
  lua_createtable(L, 0, 3);
  setint(L, K_TICK, tick);
  setint(L, K_ACK, ack);
  lua_pushvalue(L, key(K_ENTITIES));
  lua_createtable(L, (int)n, 0);
  for (i = 1; i <= n; i++) {
    if (!getentity(&r, st, &e)) return pusherror(L, &r, i);
    lua_createtable(L, 0, e.name != NULL ? 12 : 11);
    setentity(L, &e);
    lua_rawseti(L, -2, i);
  }
  lua_rawset(L, -3);
  return 1;
}

/* handc.decode_into(bytes, t) -> t | nil, message, code
** Refills 't', reusing t.entities and its entity tables. */
static int handc_decode_into (lua_State *L) {
  const State *st = getstate(L);
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  Reader r;
  Entity e;
  uint32_t tick, ack, n, i;
  lua_Integer old, j;
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  startreader(&r, s, len);
  if (!getheader(&r, &tick, &ack, &n)) return pusherror(L, &r, 0);
  setint(L, K_TICK, tick);
  setint(L, K_ACK, ack);
  lua_pushvalue(L, key(K_ENTITIES));
  if (lua_rawget(L, 2) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_createtable(L, (int)n, 0);
    lua_pushvalue(L, key(K_ENTITIES));
    lua_pushvalue(L, -2);
    lua_rawset(L, 2);
  }
  old = (lua_Integer)lua_rawlen(L, 3);
  for (i = 1; i <= n; i++) {
    if (!getentity(&r, st, &e)) return pusherror(L, &r, i);
    if (lua_rawgeti(L, 3, i) != LUA_TTABLE) {
      lua_pop(L, 1);
      lua_createtable(L, 0, 12);
      lua_pushvalue(L, -1);
      lua_rawseti(L, 3, i);
    }
    setentity(L, &e);
    lua_pop(L, 1);
  }
  for (j = old; j > (lua_Integer)n; j--) {
    lua_pushnil(L);
    lua_rawseti(L, 3, j);
  }
  lua_settop(L, 2);
  return 1;
}

/* }========================================================== */


/* handc.qfloat(x, min, max, res) -> q, nbits, decoded (for self-checks) */
static int handc_qfloat (lua_State *L) {
  QFloat q;
  double x = luaL_checknumber(L, 1);
  uint32_t i;
  if (!qinit(&q, luaL_checknumber(L, 2), luaL_checknumber(L, 3),
             luaL_checknumber(L, 4)))
    return luaL_argerror(L, 2, "bad range");
  i = qencode(&q, x);
  lua_pushinteger(L, (lua_Integer)i);
  lua_pushinteger(L, (lua_Integer)q.nbits);
  lua_pushnumber(L, (lua_Number)qdecode(&q, i));
  return 3;
}

int luaopen_handc (lua_State *L);

int luaopen_handc (lua_State *L) {
  static const luaL_Reg funcs[] = {
    {"encode", handc_encode},
    {"decode", handc_decode},
    {"decode_into", handc_decode_into},
    {NULL, NULL}
  };
  State *st;
  int k;
  lua_newtable(L);
  st = (State *)lua_newuserdatauv(L, sizeof(State), 0);
  qinit(&st->pos, -512.0, 512.0, 0.01);
  qinit(&st->yaw, 0.0, 2 * 3.141592653589793,
        0.35 * (3.141592653589793 / 180.0));  /* 2 * math.pi, math.rad(0.35) */
  if (st->pos.nbits != 17 || st->yaw.nbits != 11)
    return luaL_error(L, "handc: unexpected float widths %d, %d",
                      (int)st->pos.nbits, (int)st->yaw.nbits);
  for (k = K_TICK; k <= K_LAST; k++)
    lua_pushstring(L, keynames[k - K_TICK]);
  luaL_setfuncs(L, funcs, K_LAST);
  lua_pushcfunction(L, handc_qfloat);
  lua_setfield(L, -2, "qfloat");
  lua_pushinteger(L, MAXBYTES);
  lua_setfield(L, -2, "maxbytes");
  return 1;
}
