/*
** handc_optional.c - hand-written C peer of bench/shapes/optional.lua
** See LICENSE for copyright and terms.
*/

/*
**   Snapshot: tick uint(20), items: int(#, 0, 64), then each Props
**   Props:    o1 .. o24, each a presence bit, then if present: odd ones
**             int(0, 1023), even ones compressed_float(-100, 100, 0.01)
*/

#include "handc_shapes.h"

#define MAXITEMS 64
#define NPROPS   24

/* upvalues: tick, items, o1 .. o24 */
enum { K_TICK = 1, K_ITEMS, K_O1, NKEYS = K_O1 + NPROPS - 1 };
static const char *const keys[NKEYS] = {
  "tick", "items", "o1", "o2", "o3", "o4", "o5", "o6", "o7", "o8", "o9",
  "o10", "o11", "o12", "o13", "o14", "o15", "o16", "o17", "o18", "o19",
  "o20", "o21", "o22", "o23", "o24"
};

static bw_QFloat qf;
static uint8_t buf[1 << 13];

#define ISINT(k)  ((k) % 2 == 0)   /* 0-based: o1, o3, ... */

typedef struct Props {
  uint32_t present;      /* bit k: o(k+1) */
  int      n;            /* how many */
  union { uint32_t i; float f; } v[NPROPS];
} Props;

/* {===================== encode ===================== */

static int encode (lua_State *L) {
  bw_Writer w;
  lua_Integer n, i;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  hc_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, (uint64_t)hc_int(L, 1, K_TICK, 0, (1 << 20) - 1), 20);
  lua_pushvalue(L, KEY(K_ITEMS));
  if (lua_rawget(L, 1) != LUA_TTABLE)
    return luaL_error(L, "items: expected a table");
  n = (lua_Integer)lua_rawlen(L, 2);
  if (n > MAXITEMS) return luaL_error(L, "items: count %I over 64", n);
  bw_writebits(&w, (uint64_t)n, 7);
  for (i = 1; i <= n; i++) {
    int k;
    if (lua_rawgeti(L, 2, i) != LUA_TTABLE)
      return luaL_error(L, "items[%I]: expected a table", i);
    for (k = 0; k < NPROPS; k++) {
      lua_pushvalue(L, KEY(K_O1 + k));
      if (lua_rawget(L, 3) == LUA_TNIL)
        bw_writebits(&w, 0, 1);
      else if (ISINT(k))
        bw_writebits(&w, (uint64_t)hc_checkint(L, -1, 0, 1023, keys[K_O1 + k - 1])
                         << 1 | 1, 11);
      else
        bw_writebits(&w, (uint64_t)bw_qfloatencode(&qf, hc_checknum(L, -1,
                           -100, 100, keys[K_O1 + k - 1])) << 1 | 1,
                     1 + qf.nbits);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  return hc_pushpacket(L, &w);
}

/* }========================================================== */


/* {===================== decode ===================== */

static void getprops (Dec *d, Props *p) {
  int k;
  p->present = 0;
  p->n = 0;
  for (k = 0; k < NPROPS; k++) {
    if (!hc_read(d, 1, keys[K_O1 + k - 1])) continue;
    p->present |= UINT32_C(1) << k;
    p->n++;
    if (ISINT(k)) p->v[k].i = hc_read(d, 10, keys[K_O1 + k - 1]);
    else p->v[k].f = hc_readfloat(d, &qf, keys[K_O1 + k - 1]);
  }
}

/* Fill the table on top of the stack; 'into': clear the absent fields. */
static void setprops (lua_State *L, const Props *p, int into) {
  int k;
  for (k = 0; k < NPROPS; k++) {
    if (p->present >> k & 1) {
      lua_pushvalue(L, KEY(K_O1 + k));
      if (ISINT(k)) lua_pushinteger(L, (lua_Integer)p->v[k].i);
      else lua_pushnumber(L, (lua_Number)p->v[k].f);
      lua_rawset(L, -3);
    }
    else if (into) {
      lua_pushvalue(L, KEY(K_O1 + k));
      lua_pushnil(L);
      lua_rawset(L, -3);
    }
  }
}

static int decodeto (lua_State *L, int into) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  Dec d;
  Props p;
  uint32_t tick, n, i;
  lua_Integer old = 0, j;
  int t;
  hc_decinit(&d, s, len);
  tick = hc_read(&d, 20, "tick");
  n = hc_readmax(&d, 7, MAXITEMS, "items");
  if (!hc_ok(&d)) return hc_pusherror(L, &d, "value", 0);
  if (into) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
  }
  else lua_createtable(L, 0, 2);
  hc_setint(L, K_TICK, tick);
  hc_subtable(L, K_ITEMS, into, (int)n, 0);
  t = lua_gettop(L);
  if (into) old = (lua_Integer)lua_rawlen(L, t);
  for (i = 1; i <= n; i++) {
    getprops(&d, &p);
    if (!hc_ok(&d)) return hc_pusherror(L, &d, "items", i);
    hc_element(L, t, i, into, 0, p.n);
    setprops(L, &p, into);
    lua_pop(L, 1);
  }
  for (j = old; j > (lua_Integer)n; j--) {
    lua_pushnil(L);
    lua_rawseti(L, t, j);
  }
  lua_settop(L, t - 1);
  return 1;
}

static int decode (lua_State *L) { return decodeto(L, 0); }
static int decode_into (lua_State *L) { return decodeto(L, 1); }

/* }========================================================== */


int hc_openoptional (lua_State *L) {
  static const luaL_Reg funcs[] = {
    {"encode", encode}, {"decode", decode}, {"decode_into", decode_into},
    {NULL, NULL}
  };
  bw_qfloatinit(&qf, -100, 100, 0.01);
  hc_newshape(L, funcs, keys, NKEYS);
  return 1;
}
