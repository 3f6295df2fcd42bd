/*
** lbw_into.c - a table a decode refills: cleared first of what its type
** lacks, unless this schema decoded it
** See LICENSE for copyright and terms.
*/

#include "lauxlib.h"

#include "lbw_schema.h"

/* A decode 'into' a table refills the fields and slots it reads, and
** leaves every other key. A table this schema decoded as the type at its
** version holds no others (a table changed by hand afterwards is the
** caller's, as a baseline is). Any other table (decoded under other
** definitions or at another version, or built by hand) may hold keys the
** type lacks: a field a reload dropped, a slot past a max a reload
** lowered, an element past a hole. Left there, a field would come back as
** a value when a later reload adds it again, and the table as a baseline
** would not be the sender's copy of it. Such a table is cleared of them
** first, along the type; each table once per field it is reached as
** ('seen'), so tables that share tables cost their size, not their paths.
** Once per table would not do: a table reached as a record and as an
** array is refilled as the one the decode meets first, and the other's
** cleaning, in whatever order the keys come, keeps what the first lacks.
** A table this schema decoded, with one of its tables put in a second
** place by the caller, is cleared after the refill instead, when the
** claims find the table met twice (bw_decodetop). */

static void cleanvalue (Ctx *c, const bw_Field *f, int v, int seen);

/* 1 the first time table 'v' is met as a value of 'f' (a field, or a
** root type): seen[v] is the first 'f', or the set of them once there
** are two. */
static int firstvisit (lua_State *L, int v, int seen, const void *f) {
  int type;
  lua_pushvalue(L, v);
  type = lua_rawget(L, seen);
  if (type == LUA_TLIGHTUSERDATA && lua_touserdata(L, -1) == f) {
    lua_pop(L, 1);
    return 0;
  }
  if (type == LUA_TTABLE) {
    lua_pushlightuserdata(L, (void *)f);
    if (lua_rawget(L, -2) != LUA_TNIL) {
      lua_pop(L, 2);
      return 0;
    }
    lua_pop(L, 1);
  }
  else if (type == LUA_TLIGHTUSERDATA) {  /* a second field: a set */
    lua_createtable(L, 0, 2);
    lua_insert(L, -2);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
    lua_pushvalue(L, v);
    lua_pushvalue(L, -2);
    lua_rawset(L, seen);
  }
  else {
    lua_pop(L, 1);
    lua_pushvalue(L, v);
    lua_pushlightuserdata(L, (void *)f);
    lua_rawset(L, seen);
    return 1;
  }
  lua_pushlightuserdata(L, (void *)f);  /* the set is on top */
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  return 1;
}

/* The field of type 't' the string key at 'k' names, or NULL. One absent
** at c->version is kept: a refill sets it (its default, or nil), so the
** same clearing serves after the refill (bw_decodetop). */
static const bw_Field *fieldat (Ctx *c, uint32_t t, int k) {
  size_t len;
  const char *s = lua_tolstring(c->L, k, &len);
  return bw_fieldnamed(c->S, t, s, len);
}

/* Clear the key on top of the stack (its value above it popped) from the
** table at 'v': clearing a field during a traversal is allowed. */
static void dropkey (lua_State *L, int v) {
  lua_pushvalue(L, -1);
  lua_pushnil(L);
  lua_rawset(L, v);
}

/* The keys of the table at 'v' that are integers in [1, n], each value a
** table cleaned as 'e' (NULL: the values are not looked at); any other
** key cleared. */
static void cleanslots (Ctx *c, const bw_Field *e, int v, lua_Integer n,
                        int seen) {
  lua_State *L = c->L;
  lua_pushnil(L);
  while (lua_next(L, v)) {
    lua_Integer k = bw_slotof(L, -2, n);
    if (k != 0 && e != NULL && lua_type(L, -1) == LUA_TTABLE)
      cleanvalue(c, e, lua_gettop(L), seen);
    lua_pop(L, 1);
    if (k == 0) dropkey(L, v);
  }
}

static void cleanrecord (Ctx *c, uint32_t t, int v, int seen) {
  lua_State *L = c->L;
  lua_pushnil(L);
  while (lua_next(L, v)) {
    const bw_Field *g = lua_type(L, -2) == LUA_TSTRING
                        ? fieldat(c, t, lua_gettop(L) - 1) : NULL;
    if (g != NULL && lua_type(L, -1) == LUA_TTABLE)
      cleanvalue(c, g, lua_gettop(L), seen);
    lua_pop(L, 1);
    if (g == NULL) dropkey(L, v);
  }
}

/* Clean the table at 'v', a value of 'f' (nesting is bounded by the
** schema's: the walk follows the type, not the tables). */
static void cleanvalue (Ctx *c, const bw_Field *f, int v, int seen) {
  lua_State *L = c->L;
  const bw_Field *e = f->kind == BW_KARRAY || f->kind == BW_KSPARSE
                      ? &c->S->fields[f->ref] : NULL;
  lua_Integer n;
  if (f->kind != BW_KSTRUCT && f->kind != BW_KARRAY && f->kind != BW_KSPARSE
      && f->kind != BW_KQUAT)
    return;  /* a table where a scalar goes: the decode replaces it */
  luaL_checkstack(L, 8, "cleaning a table decoded into");
  if (!firstvisit(L, v, seen, f)) return;
  switch (f->kind) {
    case BW_KSTRUCT:
      cleanrecord(c, f->ref, v, seen);
      return;
    case BW_KSPARSE:
      cleanslots(c, e, v, (lua_Integer)f->max, seen);
      return;
    case BW_KQUAT:
      cleanslots(c, NULL, v, 4, seen);
      return;
    default:  /* an array: its elements up to its first border */
      bw_arraybase(L, v, &n);
      cleanslots(c, e, v, n, seen);
      return;
  }
}

/* Clear the table at 'into' along type 't' (known: this schema decoded
** it as 't', and it holds no other keys). */
void bw_intoclean (Ctx *c, uint32_t t, int into, int known) {
  lua_State *L = c->L;
  int seen;
  if (known) return;
  lua_createtable(L, 0, 0);
  seen = lua_gettop(L);
  firstvisit(L, into, seen, &c->S->types[t]);
  cleanrecord(c, t, into, seen);
  lua_pop(L, 1);
}

void bw_intoprepare (Ctx *c, uint32_t t, int into, int b) {
  const struct Tape *tape;
  int known;
  /* a delta's 'into' may share tables with its baseline: it is cleared
  ** where the tape walk refills it, once the baseline is read
  ** (bw_intoclean; other paths move new tables in), and its entry is
  ** rewritten or dropped at the end (bw_decodetop) */
  if (b != 0) return;
  known = bw_decodedas(c, t, into, &tape, 0);
  bw_intoclean(c, t, into, known);
  /* what it was sent as, it is no longer: its entry goes */
  if (!known || tape != NULL) bw_tapedrop(c->L, into);
}
