/*
** test_sandbox.c - a registry reloading while the host runs out of memory
** See LICENSE for copyright and terms.
*/

/*
** reg:reload() and reg:poll() must answer true or false, message and never
** raise, even when the host lua_State cannot allocate: while the file's
** text is read, while its description is copied out of the sandbox, while
** it compiles. This test gives the host an allocator with a cap, then
** reloads a definitions file under every cap from a few bytes to enough,
** in steps, and checks that each call returns; then stops a poll at every
** allocation in turn and checks the registry after each stop. Run it
** under valgrind: the sandbox's lua_State and the file must be closed on
** every one of those paths.
**
** Run from the checkout root after `make`: it requires bitwire from ./lua
** and ./build like the specs do.
*/

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"

#include "check.h"

static size_t used, cap = SIZE_MAX;
static long budget = -1;  /* growths allowed; -1: no limit */
static int refused;       /* one was refused since the budget was set */

/* the host's allocator: refuses to grow past 'cap', and once 'budget' is
** spent refuses every growth (Lua's emergency collection does not get it
** through) */
static void *capalloc (void *ud, void *ptr, size_t osize, size_t nsize) {
  void *p;
  (void)ud;
  if (ptr == NULL) osize = 0;
  if (nsize == 0) {
    free(ptr);
    used -= osize;
    return NULL;
  }
  if (nsize > osize && nsize - osize > cap - used) return NULL;
  if (nsize > osize && budget >= 0) {
    if (budget == 0) {
      refused = 1;
      return NULL;
    }
    budget--;
  }
  p = realloc(ptr, nsize);
  if (p == NULL) return nsize <= osize ? ptr : NULL;
  used = used - osize + nsize;
  return p;
}

static const char *const setup =
  "package.path = './lua/?.lua;./lua/?/init.lua;' .. package.path\n"
  "package.cpath = './build/?.so;' .. package.cpath\n"
  "bitwire = require 'bitwire'\n"
  "path = os.tmpname()\n"
  "function defs (n, pad)\n"
  "  local f = assert(io.open(path, 'wb'))\n"
  "  local fields = {}\n"
  "  for i = 1, n do\n"
  "    fields[i] = ('{\"f%d\", \"int\", min = 0, max = %d},'):format(i, i)\n"
  "  end\n"
  "  f:write('return { T = {', table.concat(fields), '} }', ('-'):rep(pad))\n"
  "  f:close()\n"
  "end\n"
  "defs(40, 0)\n"
  "reg = assert(bitwire.watch(path))\n"
  "function trial_reload () return reg:reload() end\n"
  "function trial_poll () return reg:poll() end\n";

/* Run 'code' in L; 1 if it ran (its results are dropped). */
static int run (lua_State *L, const char *code) {
  int r = luaL_dostring(L, code) == LUA_OK;
  if (!r) fprintf(stderr, "run: %s\n", lua_tostring(L, -1));
  lua_settop(L, 0);
  return r;
}

static int swapped, refused;  /* results seen: true, and false, message */

/* Call the global 'fname' with the host capped at 'extra' more bytes.
** Returns 1 if it returned true or false, message (never raised). */
static int capped (lua_State *L, const char *fname, size_t extra) {
  int status, good;
  lua_getglobal(L, fname);
  cap = used + extra;
  status = lua_pcall(L, 0, 2, 0);
  cap = SIZE_MAX;
  good = status == LUA_OK && (lua_toboolean(L, -2)
                              || lua_type(L, -1) == LUA_TSTRING
                              || lua_isnil(L, -1));
  if (good && lua_toboolean(L, -2)) swapped++;
  if (good && lua_type(L, -1) == LUA_TSTRING) refused++;
  if (!good)
    fprintf(stderr, "%s with %zu bytes to spare: status %d, %s\n", fname,
            extra, status, lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
  lua_settop(L, 0);
  return good;
}

static void test_reload_poll_out_of_memory (void) {
  lua_State *L = lua_newstate(capalloc, NULL);
  size_t extra;
  int n = 0, bad = 0, loaded = 0;
  CHECK(L != NULL);
  if (L == NULL) return;
  luaL_openlibs(L);
  CHECK(run(L, setup));
  for (extra = 0; extra < 160 * 1024; extra += extra < 8192 ? 128 : 1024) {
    char edit[64];
    bad += !capped(L, "trial_reload", extra);
    /* a new size each time, so poll reads and compiles */
    snprintf(edit, sizeof edit, "defs(40, %d)", ++n);
    CHECK(run(L, edit));
    bad += !capped(L, "trial_poll", extra);
    n++;
  }
  CHECK(bad == 0);
  CHECK(refused > 10 && swapped > 10);  /* both ends of the caps were met */
  /* with room to spare both load again */
  CHECK(run(L, "defs(40, 0) assert(reg:reload() == true)"));
  CHECK(run(L, "defs(41, 0) assert(reg:poll() == true)"));
  loaded = run(L, "assert(#reg:current():types() == 1)");
  CHECK(loaded);
  run(L, "os.remove(path)");
  lua_close(L);
  CHECK(used == 0);
}

/* A poll stopped by the host's memory at every allocation in turn leaves
** the registry whole: the old schema serving with its kept list, tags and
** source, or the new one with theirs; and the next poll, with memory,
** applies the file (a refusal for memory judged nothing, so no stamp or
** content it read may make that poll skip the file). */
static const char *const swap =
  "local core = require 'bitwire.core'\n"
  "local stamp = core.filestamp\n"
  "core.filestamp = function(p)\n"   /* as if edited long ago: stamps kept */
  "  local st = stamp(p)\n"
  "  return st, false\n"
  "end\n"
  "local fp = {}\n"
  "for _, n in ipairs { 2, 3 } do\n"
  "  defs(n, 0)\n"
  "  fp[n] = bitwire.load(path):fingerprint()\n"
  "end\n"
  "local function whole(want)\n"
  "  local cur = reg:current()\n"
  "  assert(reg.kept[1] == cur, 'kept[1] is not the current schema')\n"
  "  local n = 0\n"
  "  for tag, s in pairs(reg.bytag) do\n"
  "    n = n + 1\n"
  "    assert(s:tag() == tag, 'bytag')\n"
  "  end\n"
  "  assert(n == #reg.kept, 'bytag holds other schemas than kept')\n"
  "  for _, k in ipairs(reg.kept) do assert(reg.bytag[k:tag()] == k, 'bytag') end\n"
  "  assert(reg.source:find('f' .. want .. '\"', 1, true)\n"
  "         and not reg.source:find('f' .. want + 1 .. '\"', 1, true),\n"
  "         'source is not the current schema\\'s')\n"
  "  assert(cur:fingerprint() == fp[want], 'not the schema of ' .. want)\n"
  "end\n"
  "function swap_prepare()\n"
  "  defs(2, 0)\n"
  "  assert(reg:reload() == true)\n"
  "  whole(2)\n"
  "  defs(3, 0)\n"
  "end\n"
  "function swap_op()\n"   /* 'last' made before: the op allocates none */
  "  local ok, err = reg:poll()\n"
  "  last[1], last[2] = ok, err\n"
  "end\n"
  "function swap_check()\n"
  "  if last[1] == true then whole(3) return end\n"
  "  whole(2)\n"
  "  local ok, err = reg:poll()\n"
  "  assert(ok == true, 'the next poll did not apply the file: ' .. tostring(err))\n"
  "  whole(3)\n"
  "end\n"
  "function swap_done() core.filestamp = stamp end\n";

static void test_poll_stopped_at_every_allocation (void) {
  lua_State *L = lua_newstate(capalloc, NULL);
  long n;
  int done = 0, stops = 0, bad = 0;
  CHECK(L != NULL);
  if (L == NULL) return;
  luaL_openlibs(L);
  CHECK(run(L, setup));
  CHECK(run(L, swap));
  for (n = 0; n < 1000000 && !done && bad < 3; n++) {
    int status;
    if (!run(L, "last = { 0, 0 } swap_prepare()")) {
      bad++;
      break;
    }
    lua_getglobal(L, "swap_op");
    refused = 0;
    budget = n;
    status = lua_pcall(L, 0, 0, 0);
    budget = -1;
    if (status != LUA_OK) {
      fprintf(stderr, "poll raised at allocation %ld: %s\n", n + 1,
              lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
      bad++;
    }
    lua_settop(L, 0);
    if (!refused) done = 1;
    else stops++;
    if (!run(L, "swap_check()")) {
      fprintf(stderr, "after a refusal at allocation %ld\n", n + 1);
      bad++;
    }
    lua_gc(L, LUA_GCCOLLECT, 0);
  }
  run(L, "swap_done() os.remove(path)");
  CHECK(done);
  CHECK(stops > 0);
  CHECK(bad == 0);
  lua_close(L);
  CHECK(used == 0);
}

int main (void) {
  test_reload_poll_out_of_memory();
  test_poll_stopped_at_every_allocation();
  return check_summary("test_sandbox");
}
