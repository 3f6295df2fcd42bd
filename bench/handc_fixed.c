/*
** handc_fixed.c - hand-written C peer of bench/shapes/fixed.lua
** See LICENSE for copyright and terms.
*/

/*
**   Snapshot: tick uint(20), players: int(#, 0, 64), then each Player
**   Player:   id int(0, 4095), buttons 8 x bool, slots 6 x int(0, 15),
**             health int(0, 100)
*/

#include "handc_shapes.h"

#define MAXPLAYERS 64
#define NBUTTONS   8
#define NSLOTS     6

enum { K_TICK = 1, K_PLAYERS, K_ID, K_BUTTONS, K_SLOTS, K_HEALTH,
       NKEYS = K_HEALTH };
static const char *const keys[NKEYS] = {
  "tick", "players", "id", "buttons", "slots", "health"
};

static uint8_t buf[1 << 12];

typedef struct Player {
  uint32_t id, health, buttons;
  uint32_t slots[NSLOTS];
} Player;

/* {===================== encode ===================== */

/* The fixed-count array t[key k] of exactly 'n' elements, on the stack. */
static int getarray (lua_State *L, int t, int k, lua_Integer n,
                     lua_Integer i) {
  int a = hc_gettable(L, t, k, "players", i);
  if ((lua_Integer)lua_rawlen(L, a) != n)
    luaL_error(L, "players[%I].%s: count must be %I", i,
               lua_tostring(L, KEY(k)), n);
  return a;
}

static int encode (lua_State *L) {
  bw_Writer w;
  lua_Integer n, i, j;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  hc_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, (uint64_t)hc_int(L, 1, K_TICK, 0, (1 << 20) - 1), 20);
  lua_pushvalue(L, KEY(K_PLAYERS));
  if (lua_rawget(L, 1) != LUA_TTABLE)
    return luaL_error(L, "players: expected a table");
  n = (lua_Integer)lua_rawlen(L, 2);
  if (n > MAXPLAYERS) return luaL_error(L, "players: count %I over 64", n);
  bw_writebits(&w, (uint64_t)n, 7);
  for (i = 1; i <= n; i++) {
    int a;
    uint64_t v = 0;
    if (lua_rawgeti(L, 2, i) != LUA_TTABLE)
      return luaL_error(L, "players[%I]: expected a table", i);
    bw_writebits(&w, (uint64_t)hc_int(L, 3, K_ID, 0, 4095), 12);
    a = getarray(L, 3, K_BUTTONS, NBUTTONS, i);
    for (j = 1; j <= NBUTTONS; j++) {
      lua_rawgeti(L, a, j);
      v |= (uint64_t)hc_checkbool(L, -1, "buttons") << (j - 1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    a = getarray(L, 3, K_SLOTS, NSLOTS, i);
    for (j = 1; j <= NSLOTS; j++) {
      lua_rawgeti(L, a, j);
      v |= (uint64_t)hc_checkint(L, -1, 0, 15, "slots")
           << (NBUTTONS + 4 * (j - 1));
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    bw_writebits(&w, v, NBUTTONS + 4 * NSLOTS);
    bw_writebits(&w, (uint64_t)hc_int(L, 3, K_HEALTH, 0, 100), 7);
    lua_pop(L, 1);
  }
  return hc_pushpacket(L, &w);
}

/* }========================================================== */


/* {===================== decode ===================== */

static void getplayer (Dec *d, Player *p) {
  int k;
  p->id = hc_read(d, 12, "id");
  p->buttons = hc_read(d, NBUTTONS, "buttons");
  for (k = 0; k < NSLOTS; k++) p->slots[k] = hc_read(d, 4, "slots");
  p->health = hc_readmax(d, 7, 100, "health");
}

/* Fill the player table on top of the stack. */
static void setplayer (lua_State *L, const Player *p, int into) {
  int k;
  hc_setint(L, K_ID, p->id);
  hc_subtable(L, K_BUTTONS, into, NBUTTONS, 0);
  for (k = 0; k < NBUTTONS; k++) {
    lua_pushboolean(L, (int)(p->buttons >> k) & 1);
    lua_rawseti(L, -2, k + 1);
  }
  lua_pop(L, 1);
  hc_subtable(L, K_SLOTS, into, NSLOTS, 0);
  for (k = 0; k < NSLOTS; k++) {
    lua_pushinteger(L, (lua_Integer)p->slots[k]);
    lua_rawseti(L, -2, k + 1);
  }
  lua_pop(L, 1);
  hc_setint(L, K_HEALTH, p->health);
}

static int decodeto (lua_State *L, int into) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  Dec d;
  Player p;
  uint32_t tick, n, i;
  lua_Integer old = 0, j;
  int t;
  hc_decinit(&d, s, len);
  tick = hc_read(&d, 20, "tick");
  n = hc_readmax(&d, 7, MAXPLAYERS, "players");
  if (!hc_ok(&d)) return hc_pusherror(L, &d, "value", 0);
  if (into) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
  }
  else lua_createtable(L, 0, 2);
  hc_setint(L, K_TICK, tick);
  hc_subtable(L, K_PLAYERS, into, (int)n, 0);
  t = lua_gettop(L);
  if (into) old = (lua_Integer)lua_rawlen(L, t);
  for (i = 1; i <= n; i++) {
    getplayer(&d, &p);
    if (!hc_ok(&d)) return hc_pusherror(L, &d, "players", i);
    hc_element(L, t, i, into, 0, 4);
    setplayer(L, &p, into);
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


int hc_openfixed (lua_State *L) {
  static const luaL_Reg funcs[] = {
    {"encode", encode}, {"decode", decode}, {"decode_into", decode_into},
    {NULL, NULL}
  };
  hc_newshape(L, funcs, keys, NKEYS);
  return 1;
}
