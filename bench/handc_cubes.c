/*
** handc_cubes.c - hand-written C peer of bench/shapes/cubes.lua
** See LICENSE for copyright and terms.
*/

/*
**   Snap: cubes, a sparse array of up to 901 Cube slots, "auto": 2 bits
**         naming the cheapest of mask (a bit per slot), index (count in 10
**         bits, then 10-bit indices) and relative (rising indices, then
**         the sentinel 902), each present slot followed by its Cube
**   Cube: pos {x, y compressed_float(-256, 255, 1/512), z (0, 32, 1/512)},
**         rot quat(9): the largest component's index in 2 bits, the other
**         three in 9 bits each, at_rest bool
*/

#include <math.h>

#include "handc_shapes.h"
#include "bw_schema.h"  /* bw_quatencode, bw_quatdecode: the quat math */

#define NCUBES 901
#define IBITS  10   /* bits_required(0, 900) */
#define CBITS  10   /* bits_required(0, 901) */

enum { SPMASK, SPINDEX, SPRELATIVE };

enum { K_CUBES = 1, K_POS, K_ROT, K_REST, K_X, K_Y, K_Z, NKEYS = K_Z };
static const char *const keys[NKEYS] = {
  "cubes", "pos", "rot", "at_rest", "x", "y", "z"
};

static bw_QFloat qxy, qz, qquat;
static uint8_t buf[1 << 15];

typedef struct Cube {
  float    pos[3];
  double   rot[4];
  int      rest;
} Cube;

/* {===================== encode ===================== */

static void putcube (lua_State *L, bw_Writer *w, int c, lua_Integer i) {
  int p, k;
  double v[4];
  uint32_t q[4];
  p = hc_gettable(L, c, K_POS, "cubes", i);
  bw_writebits(w, hc_float(L, p, K_X, &qxy, -256, 255), qxy.nbits);
  bw_writebits(w, hc_float(L, p, K_Y, &qxy, -256, 255), qxy.nbits);
  bw_writebits(w, hc_float(L, p, K_Z, &qz, 0, 32), qz.nbits);
  lua_pop(L, 1);
  p = hc_gettable(L, c, K_ROT, "cubes", i);
  if (lua_rawlen(L, p) != 4)
    luaL_error(L, "cubes[%I].rot: quaternion needs 4 components", i);
  for (k = 0; k < 4; k++) {
    if (lua_rawgeti(L, p, k + 1) != LUA_TNUMBER)
      luaL_error(L, "cubes[%I].rot: component %d is not a number", i, k + 1);
    v[k] = (double)lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (!bw_quatencode(&qquat, v, q))
    luaL_error(L, "cubes[%I].rot: quaternion has no length", i);
  bw_writebits(w, q[0] | q[1] << 2 | (uint64_t)q[2] << 11
                  | (uint64_t)q[3] << 20, 29);
  bw_writebits(w, (uint64_t)hc_bool(L, c, K_REST), 1);
}

static int encode (lua_State *L) {
  bw_Writer w;
  uint16_t idx[NCUBES];
  lua_Integer i, n = 0, k, nkeys = 0;
  uint64_t cost[3];
  int enc;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  hc_writerinit(&w, buf, sizeof(buf));
  lua_pushvalue(L, KEY(K_CUBES));
  if (lua_rawget(L, 1) != LUA_TTABLE)
    return luaL_error(L, "cubes: expected a table");
  cost[SPRELATIVE] = 0;
  for (i = 1; i <= NCUBES; i++) {
    if (lua_rawgeti(L, 2, i) != LUA_TNIL) {
      cost[SPRELATIVE] += bw_intrelativebits(n ? idx[n - 1] : 0, (uint64_t)i);
      idx[n++] = (uint16_t)i;
    }
    lua_pop(L, 1);
  }
  cost[SPRELATIVE] += bw_intrelativebits(n ? idx[n - 1] : 0, NCUBES + 1);
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    nkeys++;
    lua_pop(L, 1);
  }
  if (nkeys != n)
    return luaL_error(L, "cubes: sparse keys must be integers in [1, 901]");
  cost[SPMASK] = NCUBES;
  cost[SPINDEX] = CBITS + (uint64_t)n * IBITS;
  enc = cost[SPINDEX] < cost[SPMASK] ? SPINDEX : SPMASK;
  if (cost[SPRELATIVE] < cost[enc]) enc = SPRELATIVE;
  bw_writebits(&w, (uint64_t)enc, 2);
  if (enc == SPMASK) {
    for (i = 1, k = 0; i <= NCUBES; i++) {
      int present = k < n && idx[k] == i;
      bw_writebits(&w, (uint64_t)present, 1);
      if (!present) continue;
      k++;
      if (lua_rawgeti(L, 2, i) != LUA_TTABLE)
        return luaL_error(L, "cubes[%I]: expected a table", i);
      putcube(L, &w, 3, i);
      lua_pop(L, 1);
    }
  }
  else {
    if (enc == SPINDEX) bw_writebits(&w, (uint64_t)n, CBITS);
    for (k = 0; k < n; k++) {
      i = idx[k];
      if (enc == SPINDEX) bw_writebits(&w, (uint64_t)i - 1, IBITS);
      else bw_writeintrelative(&w, k ? idx[k - 1] : 0, (uint64_t)i);
      if (lua_rawgeti(L, 2, i) != LUA_TTABLE)
        return luaL_error(L, "cubes[%I]: expected a table", i);
      putcube(L, &w, 3, i);
      lua_pop(L, 1);
    }
    if (enc == SPRELATIVE)
      bw_writeintrelative(&w, n ? idx[n - 1] : 0, NCUBES + 1);
  }
  return hc_pushpacket(L, &w);
}

/* }========================================================== */


/* {===================== decode ===================== */

static void getcube (Dec *d, Cube *c) {
  uint32_t q[4];
  c->pos[0] = hc_readfloat(d, &qxy, "pos.x");
  c->pos[1] = hc_readfloat(d, &qxy, "pos.y");
  c->pos[2] = hc_readfloat(d, &qz, "pos.z");
  q[0] = hc_read(d, 2, "rot");
  q[1] = hc_read(d, 9, "rot");
  q[2] = hc_read(d, 9, "rot");
  q[3] = hc_read(d, 9, "rot");
  bw_quatdecode(&qquat, q, c->rot);
  c->rest = (int)hc_read(d, 1, "at_rest");
}

/* Read the cube of slot i and store it in the table at 't'. */
static int slot (lua_State *L, Dec *d, int t, lua_Integer i, int into) {
  Cube c;
  int k;
  getcube(d, &c);
  if (!hc_ok(d)) return 0;
  hc_element(L, t, i, into, 0, 3);
  hc_subtable(L, K_POS, into, 0, 3);
  hc_setnum(L, K_X, c.pos[0]);
  hc_setnum(L, K_Y, c.pos[1]);
  hc_setnum(L, K_Z, c.pos[2]);
  lua_pop(L, 1);
  hc_subtable(L, K_ROT, into, 4, 0);
  for (k = 0; k < 4; k++) {
    lua_pushnumber(L, (lua_Number)c.rot[k]);
    lua_rawseti(L, -2, k + 1);
  }
  lua_pop(L, 1);
  hc_setbool(L, K_REST, c.rest);
  lua_pop(L, 1);
  return 1;
}

static void clear (lua_State *L, int t, lua_Integer from, lua_Integer to) {
  for (; from <= to; from++) {
    lua_pushnil(L);
    lua_rawseti(L, t, from);
  }
}

static int decodeto (lua_State *L, int into) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  Dec d;
  uint32_t enc;
  lua_Integer i, prev = 0;
  int t;
  hc_decinit(&d, s, len);
  enc = hc_readmax(&d, 2, SPRELATIVE, "cubes");
  if (!hc_ok(&d)) return hc_pusherror(L, &d, "value", 0);
  if (into) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
  }
  else lua_createtable(L, 0, 1);
  hc_subtable(L, K_CUBES, into, 0, 0);
  t = lua_gettop(L);
  if (enc == SPMASK) {
    for (i = 1; i <= NCUBES; i++) {
      if (hc_read(&d, 1, "cubes")) {
        if (!slot(L, &d, t, i, into)) return hc_pusherror(L, &d, "cubes", i);
      }
      else if (into) clear(L, t, i, i);
    }
    if (!hc_ok(&d)) return hc_pusherror(L, &d, "cubes", i);
  }
  else if (enc == SPINDEX) {
    uint32_t n = hc_readmax(&d, CBITS, NCUBES, "cubes"), k;
    if (!hc_ok(&d)) return hc_pusherror(L, &d, "value", 0);
    for (k = 0; k < n; k++) {
      i = (lua_Integer)hc_read(&d, IBITS, "cubes") + 1;
      if (i <= prev || i > NCUBES) {
        d.code = BW_ERANGE;  /* indices must rise */
        d.field = "index";
        d.at = d.r.pos - IBITS;
        d.value = (uint64_t)i;
        d.max = NCUBES;
      }
      if (!hc_ok(&d)) return hc_pusherror(L, &d, "cubes", k + 1);
      if (into) clear(L, t, prev + 1, i - 1);
      if (!slot(L, &d, t, i, into)) return hc_pusherror(L, &d, "cubes", i);
      prev = i;
    }
    if (into) clear(L, t, prev + 1, NCUBES);
  }
  else {
    for (;;) {
      uint64_t at = d.r.pos, cur = bw_readintrelative(&d.r, (uint64_t)prev);
      if (d.r.status != BW_OK) {
        d.field = "index";
        return hc_pusherror(L, &d, "cubes", prev);
      }
      if (cur == NCUBES + 1) break;
      if (cur > NCUBES) {
        d.code = BW_ERANGE;
        d.field = "index";
        d.at = at;
        d.value = cur;
        d.max = NCUBES;
        return hc_pusherror(L, &d, "cubes", prev);
      }
      i = (lua_Integer)cur;
      if (into) clear(L, t, prev + 1, i - 1);
      if (!slot(L, &d, t, i, into)) return hc_pusherror(L, &d, "cubes", i);
      prev = i;
    }
    if (into) clear(L, t, prev + 1, NCUBES);
  }
  lua_settop(L, t - 1);
  return 1;
}

static int decode (lua_State *L) { return decodeto(L, 0); }
static int decode_into (lua_State *L) { return decodeto(L, 1); }

/* }========================================================== */


int hc_opencubes (lua_State *L) {
  static const luaL_Reg funcs[] = {
    {"encode", encode}, {"decode", decode}, {"decode_into", decode_into},
    {NULL, NULL}
  };
  bw_qfloatinit(&qxy, -256, 255, 1.0 / 512);
  bw_qfloatinit(&qz, 0, 32, 1.0 / 512);
  bw_quatinit(&qquat, 9);
  hc_newshape(L, funcs, keys, NKEYS);
  return 1;
}

int luaopen_handc_shapes (lua_State *L);

int luaopen_handc_shapes (lua_State *L) {
  lua_newtable(L);
  hc_opennested(L);
  lua_setfield(L, -2, "nested");
  hc_openfixed(L);
  lua_setfield(L, -2, "fixed");
  hc_openoptional(L);
  lua_setfield(L, -2, "optional");
  hc_opencubes(L);
  lua_setfield(L, -2, "cubes");
  return 1;
}
