/*
** handc_nested.c - hand-written C peer of bench/shapes/nested.lua
** See LICENSE for copyright and terms.
*/

/*
**   Snapshot: tick uint(20), entities: int(#, 0, 64), then each Entity
**   Entity:   id int(0, 4095), pos Vec3, vel Vec3, aim Aim, health int(0, 100)
**   Vec3:     x, y, z compressed_float(-512, 512, 0.01)
**   Aim:      yaw compressed_float(0, 2pi, rad(0.35)),
**             pitch compressed_float(-pi/2, pi/2, rad(0.35))
*/

#include "handc_shapes.h"

#define PI      3.141592653589793
#define RAD035  (0.35 * (PI / 180.0))
#define MAXENTS 64

enum { K_TICK = 1, K_ENTITIES, K_ID, K_POS, K_VEL, K_AIM, K_HEALTH, K_X, K_Y,
       K_Z, K_YAW, K_PITCH, NKEYS = K_PITCH };
static const char *const keys[NKEYS] = {
  "tick", "entities", "id", "pos", "vel", "aim", "health", "x", "y", "z",
  "yaw", "pitch"
};

static bw_QFloat qpos, qyaw, qpitch;
static uint8_t buf[1 << 12];

typedef struct Entity {
  uint32_t id, health;
  float    pos[3], vel[3], yaw, pitch;
} Entity;

/* {===================== encode ===================== */

static void putvec3 (lua_State *L, bw_Writer *w, int t, int k, lua_Integer i) {
  int v = hc_gettable(L, t, k, "entities", i);
  bw_writebits(w, hc_float(L, v, K_X, &qpos, -512, 512), qpos.nbits);
  bw_writebits(w, hc_float(L, v, K_Y, &qpos, -512, 512), qpos.nbits);
  bw_writebits(w, hc_float(L, v, K_Z, &qpos, -512, 512), qpos.nbits);
  lua_pop(L, 1);
}

static int encode (lua_State *L) {
  bw_Writer w;
  lua_Integer n, i;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  hc_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, (uint64_t)hc_int(L, 1, K_TICK, 0, (1 << 20) - 1), 20);
  lua_pushvalue(L, KEY(K_ENTITIES));
  if (lua_rawget(L, 1) != LUA_TTABLE)
    return luaL_error(L, "entities: expected a table");
  n = (lua_Integer)lua_rawlen(L, 2);
  if (n > MAXENTS) return luaL_error(L, "entities: count %I over 64", n);
  bw_writebits(&w, (uint64_t)n, 7);
  for (i = 1; i <= n; i++) {
    int a;
    if (lua_rawgeti(L, 2, i) != LUA_TTABLE)
      return luaL_error(L, "entities[%I]: expected a table", i);
    bw_writebits(&w, (uint64_t)hc_int(L, 3, K_ID, 0, 4095), 12);
    putvec3(L, &w, 3, K_POS, i);
    putvec3(L, &w, 3, K_VEL, i);
    a = hc_gettable(L, 3, K_AIM, "entities", i);
    bw_writebits(&w, hc_float(L, a, K_YAW, &qyaw, 0, 2 * PI), qyaw.nbits);
    bw_writebits(&w, hc_float(L, a, K_PITCH, &qpitch, -PI / 2, PI / 2),
                 qpitch.nbits);
    lua_pop(L, 1);
    bw_writebits(&w, (uint64_t)hc_int(L, 3, K_HEALTH, 0, 100), 7);
    lua_pop(L, 1);
  }
  return hc_pushpacket(L, &w);
}

/* }========================================================== */


/* {===================== decode ===================== */

static void getentity (Dec *d, Entity *e) {
  int k;
  e->id = hc_read(d, 12, "id");
  for (k = 0; k < 3; k++) e->pos[k] = hc_readfloat(d, &qpos, "pos");
  for (k = 0; k < 3; k++) e->vel[k] = hc_readfloat(d, &qpos, "vel");
  e->yaw = hc_readfloat(d, &qyaw, "aim.yaw");
  e->pitch = hc_readfloat(d, &qpitch, "aim.pitch");
  e->health = hc_readmax(d, 7, 100, "health");
}

static void setvec3 (lua_State *L, int k, const float *v, int into) {
  hc_subtable(L, k, into, 0, 3);
  hc_setnum(L, K_X, v[0]);
  hc_setnum(L, K_Y, v[1]);
  hc_setnum(L, K_Z, v[2]);
  lua_pop(L, 1);
}

/* Fill the entity table on top of the stack. */
static void setentity (lua_State *L, const Entity *e, int into) {
  hc_setint(L, K_ID, e->id);
  setvec3(L, K_POS, e->pos, into);
  setvec3(L, K_VEL, e->vel, into);
  hc_subtable(L, K_AIM, into, 0, 2);
  hc_setnum(L, K_YAW, e->yaw);
  hc_setnum(L, K_PITCH, e->pitch);
  lua_pop(L, 1);
  hc_setint(L, K_HEALTH, e->health);
}

/* decode(bytes [, into]) -> value | nil, message, code */
static int decodeto (lua_State *L, int into) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  Dec d;
  Entity e;
  uint32_t tick, n, i;
  lua_Integer old = 0, j;
  int t;
  hc_decinit(&d, s, len);
  tick = hc_read(&d, 20, "tick");
  n = hc_readmax(&d, 7, MAXENTS, "entities");
  if (!hc_ok(&d)) return hc_pusherror(L, &d, "value", 0);
  if (into) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
  }
  else lua_createtable(L, 0, 2);
  hc_setint(L, K_TICK, tick);
  hc_subtable(L, K_ENTITIES, into, (int)n, 0);
  t = lua_gettop(L);
  if (into) old = (lua_Integer)lua_rawlen(L, t);
  for (i = 1; i <= n; i++) {
    getentity(&d, &e);
    if (!hc_ok(&d)) return hc_pusherror(L, &d, "entities", i);
    hc_element(L, t, i, into, 0, 5);
    setentity(L, &e, into);
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


int hc_opennested (lua_State *L) {
  static const luaL_Reg funcs[] = {
    {"encode", encode}, {"decode", decode}, {"decode_into", decode_into},
    {NULL, NULL}
  };
  bw_qfloatinit(&qpos, -512, 512, 0.01);
  bw_qfloatinit(&qyaw, 0, 2 * PI, RAD035);
  bw_qfloatinit(&qpitch, -PI / 2, PI / 2, RAD035);
  hc_newshape(L, funcs, keys, NKEYS);
  return 1;
}
