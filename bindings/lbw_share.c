/*
** lbw_share.c - schemas shared across lua_States
** See LICENSE for copyright and terms.
*/

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"

#include "lbw_schema.h"


/* s:share() -> handle: a light userdata holding a handle id (not an
** address), for core.adopt in another lua_State of this process. */
static int schema_share (lua_State *L) {
  LSchema *ls = bw_checkschema(L, 1);
  uintptr_t id = bw_handlenew(ls->S);
  if (id == 0) return luaL_error(L, "not enough memory");
  lua_pushlightuserdata(L, (void *)id);
  return 1;
}

#define NOTLIVE "not a live schema handle (never shared, or already " \
                "adopted or unshared)"

/* The handle id at argument 1. A stale handle is an id no longer in the
** table: no schema memory is read. */
static uintptr_t checkhandle (lua_State *L) {
  luaL_checktype(L, 1, LUA_TLIGHTUSERDATA);
  return (uintptr_t)lua_touserdata(L, 1);
}

/* core.adopt(handle) -> schema: takes over the reference a share() made.
** Each handle must be adopted exactly once (or dropped with core.unshare).
** The schema is made with a reference of its own, and the handle ended
** only then: a memory error on the way leaves the handle live. */
static int schema_adopt (lua_State *L) {
  uintptr_t id = checkhandle(L);
  LSchema *ls = bw_newschema(L);
  bw_Schema *S = bw_handleget(id);
  luaL_argcheck(L, S != NULL, 1, NOTLIVE);
  bw_setschema(L, ls, S);
  S = bw_handletake(id);  /* another thread may have taken it since */
  luaL_argcheck(L, S != NULL, 1, NOTLIVE);
  bw_schemarelease(S);    /* ls holds its own */
  return 1;
}

/* s:_desc() -> the description's text kept by compile (nil if none), for
** states that adopted the schema. */
static int schema_desc (lua_State *L) {
  LSchema *ls = bw_checkschema(L, 1);
  if (ls->S->desc == NULL) lua_pushnil(L);
  else lua_pushlstring(L, ls->S->desc, ls->S->desclen);
  return 1;
}

/* core.unshare(handle): drop a handle's reference without adopting it. */
static int schema_unshare (lua_State *L) {
  bw_Schema *S = bw_handletake(checkhandle(L));
  luaL_argcheck(L, S != NULL, 1, NOTLIVE);
  bw_schemarelease(S);
  return 0;
}

/* }========================================================== */


const luaL_Reg bw_sharemethods[] = {
  {"share", schema_share},
  {"_desc", schema_desc},
  {NULL, NULL}
};

const luaL_Reg bw_sharefuncs[] = {
  {"adopt", schema_adopt},
  {"unshare", schema_unshare},
  {NULL, NULL}
};
