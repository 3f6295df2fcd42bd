/*
** test_oom.c - decodes and encodes stopped by a memory error at every
** allocation in turn
** See LICENSE for copyright and terms.
*/

/*
** Running out of memory is the one failure that raises (SECURITY.md). A
** raise leaves no chance to tidy up, so whatever the schema remembers of a
** table must hold at every allocation: a table refilled in place and
** stopped partway holds old and new values, and must not read as the
** baseline it was before. For each scenario of bindings/test/oom.lua this
** test refuses the n-th allocation of op(), for n = 1, 2, ... until op()
** no longer meets a refusal, and after each stop runs check(). Run it under
** valgrind: every stop must free what it made.
**
** Run from the checkout root after `make`: it requires bitwire from ./lua
** and ./build like the specs do.
*/

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"

#include "check.h"

static long budget = -1;  /* allocations that may grow; -1: no limit */
static int refused;       /* one was refused since the budget was set */

/* the state's allocator: once the budget is spent, refuses every growth
** (the emergency collection Lua runs then does not get it through) */
static void *countalloc (void *ud, void *ptr, size_t osize, size_t nsize) {
  void *p;
  (void)ud;
  if (ptr == NULL) osize = 0;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  if (nsize > osize && budget >= 0) {
    if (budget == 0) {
      refused = 1;
      return NULL;
    }
    budget--;
  }
  p = realloc(ptr, nsize);
  if (p == NULL && nsize <= osize) return ptr;
  return p;
}

/* Call field 'name' of the scenario on top; 1 if it returned. */
static int call (lua_State *L, const char *name, const char *scenario,
                 int quiet) {
  int ok;
  lua_getfield(L, -1, name);
  ok = lua_pcall(L, 0, 0, 0) == LUA_OK;
  if (!ok && !quiet)
    fprintf(stderr, "%s: %s: %s\n", scenario, name, lua_tostring(L, -1));
  if (!ok) lua_pop(L, 1);
  return ok;
}

/* The scenario on top, its op stopped at every allocation in turn. */
static void sweep (lua_State *L) {
  const char *name;
  long n;
  int bad = 0, stops = 0, done = 0;
  lua_getfield(L, -1, "name");
  name = lua_tostring(L, -1);
  lua_pop(L, 1);
  for (n = 0; n < 100000 && !done && bad < 3; n++) {
    int ok;
    if (!call(L, "prepare", name, 0)) {
      bad++;
      break;
    }
    refused = 0;
    budget = n;
    ok = call(L, "op", name, 1);
    budget = -1;
    if (ok && !refused) done = 1;  /* it ran through: every stop seen */
    else if (!ok) {
      stops++;
      if (!call(L, "check", name, 0)) {
        fprintf(stderr, "%s: after a refusal at allocation %ld\n", name, n + 1);
        bad++;
      }
    }
    lua_gc(L, LUA_GCCOLLECT);
  }
  CHECK(done);
  CHECK(stops > 0);  /* the op allocates, so it was stopped */
  CHECK(bad == 0);
}

static void test_stopped_at_every_allocation (void) {
  lua_State *L = lua_newstate(countalloc, NULL);
  lua_Integer i, n;
  CHECK(L != NULL);
  if (L == NULL) return;
  luaL_openlibs(L);
  if (luaL_dofile(L, "bindings/test/oom.lua") != LUA_OK) {
    fprintf(stderr, "oom.lua: %s\n", lua_tostring(L, -1));
    CHECK(0);
    lua_close(L);
    return;
  }
  n = luaL_len(L, -1);
  CHECK(n > 0);
  for (i = 1; i <= n; i++) {
    lua_geti(L, -1, i);
    sweep(L);
    lua_pop(L, 1);
  }
  lua_close(L);
}

int main (void) {
  test_stopped_at_every_allocation();
  return check_summary("test_oom");
}
