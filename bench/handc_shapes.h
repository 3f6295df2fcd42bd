/*
** handc_shapes.h - what the hand-written C peers of the bench shapes share
** See LICENSE for copyright and terms.
*/

/*
** The peers of the shapes in bench/shapes/: what a careful programmer writes in C
** for one message, with the Lua C API the way any driver must use it (keys
** interned once as upvalues, lua_rawget/lua_rawset, tables created at their
** final size), and bitwire's own C stream (core/bw.h) for the bits and the
** quantizers, so the bytes are the schema driver's and the difference in
** speed is the driver's walk. Encode checks types and ranges as bitwire
** does and raises; decode checks truncation and ranges and returns nil,
** message, code; decode_into refills a table without allocating once its
** shape has been seen.
*/
#ifndef HANDC_SHAPES_H
#define HANDC_SHAPES_H

#include <stdint.h>
#include <string.h>

#include "lua.h"
#include "lauxlib.h"

#include "bw.h"

#define KEY(k)  lua_upvalueindex(k)

/* The shapes, each a table {encode, decode, decode_into}. */
int hc_opennested (lua_State *L);
int hc_openfixed (lua_State *L);
int hc_openoptional (lua_State *L);
int hc_opencubes (lua_State *L);

/* Push a table of 'funcs' with the interned 'keys' (n of them) as the
** upvalues 1..n of each. */
static inline void hc_newshape (lua_State *L, const luaL_Reg *funcs,
                                const char *const *keys, int n) {
  int k;
  lua_newtable(L);
  for (k = 0; k < n; k++) lua_pushstring(L, keys[k]);
  luaL_setfuncs(L, funcs, n);
}


/* {===================== encode ===================== */

static inline void hc_writerinit (bw_Writer *w, uint8_t *buf, size_t cap) {
  bw_writerinit(w, buf, cap);
}

/* The table t[key k] (raises unless a table); leaves it on the stack. */
static inline int hc_gettable (lua_State *L, int t, int k, const char *where,
                               lua_Integer i) {
  lua_pushvalue(L, KEY(k));
  if (lua_rawget(L, t) != LUA_TTABLE)
    luaL_error(L, "%s[%I].%s: expected a table, got %s", where, i,
               lua_tostring(L, KEY(k)), luaL_typename(L, -1));
  return lua_gettop(L);
}

static inline lua_Integer hc_checkint (lua_State *L, int idx, lua_Integer min,
                                       lua_Integer max, const char *what) {
  int isint;
  lua_Integer v = lua_tointegerx(L, idx, &isint);
  if (!isint || lua_type(L, idx) != LUA_TNUMBER || v < min || v > max)
    luaL_error(L, "%s: %s is not an integer in [%I, %I]", what,
               luaL_tolstring(L, idx, NULL), min, max);
  return v;
}

/* t[key k]: an integer in [min, max]. */
static inline lua_Integer hc_int (lua_State *L, int t, int k, lua_Integer min,
                                  lua_Integer max) {
  lua_Integer v;
  lua_pushvalue(L, KEY(k));
  lua_rawget(L, t);
  v = hc_checkint(L, -1, min, max, lua_tostring(L, KEY(k)));
  lua_pop(L, 1);
  return v;
}

static inline double hc_checknum (lua_State *L, int idx, double min,
                                  double max, const char *what) {
  double v;
  if (lua_type(L, idx) != LUA_TNUMBER)
    luaL_error(L, "%s: expected a number, got %s", what, luaL_typename(L, idx));
  v = (double)lua_tonumber(L, idx);
  if (!(v >= min && v <= max))
    luaL_error(L, "%s: %f out of range [%f, %f]", what, v, min, max);
  return v;
}

/* t[key k]: a number in [min, max], quantized by 'q'. */
static inline uint32_t hc_float (lua_State *L, int t, int k,
                                 const bw_QFloat *q, double min, double max) {
  double v;
  lua_pushvalue(L, KEY(k));
  lua_rawget(L, t);
  v = hc_checknum(L, -1, min, max, lua_tostring(L, KEY(k)));
  lua_pop(L, 1);
  return bw_qfloatencode(q, v);
}

static inline int hc_checkbool (lua_State *L, int idx, const char *what) {
  if (lua_type(L, idx) != LUA_TBOOLEAN)
    luaL_error(L, "%s: expected a boolean, got %s", what,
               luaL_typename(L, idx));
  return lua_toboolean(L, idx);
}

static inline int hc_bool (lua_State *L, int t, int k) {
  int b;
  lua_pushvalue(L, KEY(k));
  lua_rawget(L, t);
  b = hc_checkbool(L, -1, lua_tostring(L, KEY(k)));
  lua_pop(L, 1);
  return b;
}

/* Push the packet; raise if the buffer ran out. */
static inline int hc_pushpacket (lua_State *L, bw_Writer *w) {
  size_t len;
  const uint8_t *p;
  if (w->status != BW_OK) return luaL_error(L, "packet too large");
  p = bw_writerdata(w, &len);
  lua_pushlstring(L, (const char *)p, len);
  return 1;
}

/* }========================================================== */


/* {===================== decode ===================== */

typedef struct Dec {
  bw_Reader   r;
  bw_Status   code;     /* a range failure; the reader has its own */
  uint64_t    at;       /* its bit position */
  uint64_t    value, max;
  const char *field;    /* where the first failure happened */
} Dec;

static inline void hc_decinit (Dec *d, const char *s, size_t len) {
  bw_readerinit(&d->r, s, len);
  d->code = BW_OK;
  d->field = NULL;
}

static inline uint32_t hc_read (Dec *d, unsigned n, const char *field) {
  uint32_t v = (uint32_t)bw_readbits(&d->r, n);
  if (BW_UNLIKELY(d->r.status != BW_OK) && d->field == NULL) d->field = field;
  return v;
}

/* 'n' bits that must be <= max. */
static inline uint32_t hc_readmax (Dec *d, unsigned n, uint32_t max,
                                   const char *field) {
  uint64_t at = d->r.pos;
  uint32_t v = hc_read(d, n, field);
  if (BW_UNLIKELY(v > max) && d->code == BW_OK && d->field == NULL) {
    d->code = BW_ERANGE;
    d->at = at;
    d->value = v;
    d->max = max;
    d->field = field;
    v = 0;
  }
  return v;
}

static inline float hc_readfloat (Dec *d, const bw_QFloat *q,
                                  const char *field) {
  return bw_qfloatdecode(q, hc_readmax(d, q->nbits, q->miv, field));
}

#define hc_ok(d)  ((d)->r.status == BW_OK && (d)->code == BW_OK)

/* nil, "where[i].field: what (bit N)", code */
static inline int hc_pusherror (lua_State *L, const Dec *d, const char *where,
                                lua_Integer i) {
  bw_Status code = d->code != BW_OK ? d->code : d->r.status;
  lua_pushnil(L);
  if (d->code != BW_OK)
    lua_pushfstring(L, "%s[%I].%s: %I out of range [0, %I] (bit %I)", where,
                    i, d->field, (lua_Integer)d->value, (lua_Integer)d->max,
                    (lua_Integer)d->at);
  else
    lua_pushfstring(L, "%s[%I].%s: %s (bit %I)", where, i,
                    d->field ? d->field : "?", bw_strerror(code),
                    (lua_Integer)d->r.errpos);
  lua_pushstring(L, bw_codename(code));
  return 3;
}

#define hc_setint(L, k, v) \
  (lua_pushvalue(L, KEY(k)), lua_pushinteger(L, (lua_Integer)(v)), \
   lua_rawset(L, -3))
#define hc_setnum(L, k, v) \
  (lua_pushvalue(L, KEY(k)), lua_pushnumber(L, (lua_Number)(v)), \
   lua_rawset(L, -3))
#define hc_setbool(L, k, v) \
  (lua_pushvalue(L, KEY(k)), lua_pushboolean(L, (v)), lua_rawset(L, -3))

/* Push the table t[key k] to refill ('into'), or a new one of 'nrec'
** fields stored there (or just a new one when not 'into'). */
static inline void hc_subtable (lua_State *L, int k, int into, int narr,
                                int nrec) {
  if (into) {
    lua_pushvalue(L, KEY(k));
    if (lua_rawget(L, -2) == LUA_TTABLE) return;
    lua_pop(L, 1);
  }
  lua_createtable(L, narr, nrec);
  lua_pushvalue(L, KEY(k));
  lua_pushvalue(L, -2);
  lua_rawset(L, -4);
}

/* Push element i of the table at 't' to refill, or a new table stored
** there. */
static inline void hc_element (lua_State *L, int t, lua_Integer i, int into,
                               int narr, int nrec) {
  if (into) {
    if (lua_rawgeti(L, t, i) == LUA_TTABLE) return;
    lua_pop(L, 1);
  }
  lua_createtable(L, narr, nrec);
  lua_pushvalue(L, -1);
  lua_rawseti(L, t, i);
}

/* }========================================================== */

#endif
