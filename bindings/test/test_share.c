/*
** test_share.c - compiled schemas shared across lua_States and threads
** See LICENSE for copyright and terms.
*/

/*
** A compiled bw_Schema is immutable once sealed and reference counted with
** atomic operations, so s:share() in one lua_State and bitwire.adopt() in
** another give two userdata over the same program. This test drives real
** states through the Lua API: compile in A, adopt in B, close A first, use
** B; fan out to several states and close them in different orders; drop a
** handle with unshare; use one schema from several threads at once, one
** state per thread. Run it under valgrind: every path must free all.
**
** Run from the checkout root after `make`: it requires bitwire from ./lua
** and ./build like the specs do.
*/

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"

#include "check.h"

#define NTHREADS 4

static const char *const setup =
  "package.path = './lua/?.lua;./lua/?/init.lua;' .. package.path\n"
  "package.cpath = './build/?.so;' .. package.cpath\n"
  "bitwire = require 'bitwire'\n"
  "value = { tick = 77, entities = {\n"
  "  { id = 1, health = 90, pos = { x = 1.5, y = -2 }, name = 'ann' },\n"
  "  { id = 2, health = 10, pos = { x = 0, y = 0 } } } }\n"
  "function same (a, b)\n"
  "  if type(a) ~= 'table' or type(b) ~= 'table' then\n"
  "    return a == b or (type(a) == 'number' and math.abs(a - b) < 0.01)\n"
  "  end\n"
  "  for k, v in pairs(a) do if not same(v, b[k]) then return false end end\n"
  "  for k in pairs(b) do if a[k] == nil then return false end end\n"
  "  return true\n"
  "end\n";

static const char *const compile =
  "S = bitwire.schema {\n"
  "  Vec2 = { {'x', 'float', min = -64, max = 64, res = 0.01},\n"
  "           {'y', 'float', min = -64, max = 64, res = 0.01} },\n"
  "  Entity = { {'id', 'int', min = 0, max = 4095},\n"
  "             {'health', 'int', min = 0, max = 100},\n"
  "             {'pos', 'Vec2'},\n"
  "             {'name', 'string', max = 16, optional = true} },\n"
  "  Snapshot = { {'tick', 'uint', bits = 20},\n"
  "               {'entities', 'array', of = 'Entity', max = 8} },\n"
  "}\n";

/* encode 'value', decode it back, compare; returns the bytes */
static const char *const roundtrip =
  "local bytes = S:encode('Snapshot', value)\n"
  "local v, err = S:decode('Snapshot', bytes)\n"
  "assert(v, err)\n"
  "assert(same(value, v), 'round trip differs')\n"
  "return bytes\n";

/* Run 'code' in L with 'nargs' arguments already pushed; leaves one result
** on the stack. Returns 1 on success, else prints the error and returns 0. */
static int run (lua_State *L, const char *code, int nargs) {
  if (luaL_loadstring(L, code) != LUA_OK) {
    fprintf(stderr, "load: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1 + nargs);
    lua_pushnil(L);
    return 0;
  }
  lua_insert(L, -1 - nargs);
  if (lua_pcall(L, nargs, 1, 0) != LUA_OK) {
    fprintf(stderr, "run: %s\n", lua_tostring(L, -1));
    return 0;
  }
  return 1;
}

/* run 'code' and pop its result; 1 if it ran and did not return false */
static int ok (lua_State *L, const char *code) {
  int r = run(L, code, 0);
  r = r && (lua_isnil(L, -1) || lua_toboolean(L, -1));
  lua_pop(L, 1);
  return r;
}

static lua_State *newstate (void) {
  lua_State *L = luaL_newstate();
  if (L == NULL) return NULL;
  luaL_openlibs(L);
  if (!ok(L, setup)) {
    lua_close(L);
    return NULL;
  }
  return L;
}

/* S:share() in 'from' -> the handle (a plain pointer: states share none) */
static void *share (lua_State *from) {
  void *h;
  run(from, "return S:share()", 0);
  h = lua_touserdata(from, -1);
  lua_pop(from, 1);
  return h;
}

/* S = bitwire.adopt(h) in 'to' */
static int adopt (lua_State *to, void *h) {
  int r;
  lua_pushlightuserdata(to, h);
  r = run(to, "S = bitwire.adopt(...) return S ~= nil", 1);
  r = r && lua_toboolean(to, -1);
  lua_pop(to, 1);
  return r;
}

/* the bytes of a round trip in L, copied out (caller frees) */
static char *bytesof (lua_State *L, size_t *len) {
  char *p = NULL;
  if (run(L, roundtrip, 0)) {
    const char *s = lua_tolstring(L, -1, len);
    p = (char *)malloc(*len + 1);
    if (p) memcpy(p, s, *len + 1);
  }
  lua_pop(L, 1);
  return p;
}

/* decode 'bytes' (from another state) in L and compare with 'value' */
static int decodes (lua_State *L, const char *bytes, size_t len) {
  int r;
  lua_pushlstring(L, bytes, len);
  r = run(L, "local v, err = S:decode('Snapshot', ...)\n"
             "return v ~= nil and same(value, v)", 1);
  r = r && lua_toboolean(L, -1);
  lua_pop(L, 1);
  return r;
}

static void test_adopt_outlives_origin (void) {
  lua_State *A = newstate(), *B = newstate();
  char *bytes, *again;
  size_t len = 0, len2 = 0;
  void *h;
  CHECK(A != NULL && B != NULL);
  if (!A || !B) return;
  CHECK(ok(A, compile));
  bytes = bytesof(A, &len);
  CHECK(bytes != NULL);
  h = share(A);
  CHECK(h != NULL);
  CHECK(adopt(B, h));
  lua_close(A);                       /* the program lives on in B */
  CHECK(ok(B, "collectgarbage() return true"));
  CHECK(bytes && decodes(B, bytes, len));
  again = bytesof(B, &len2);
  CHECK(again != NULL && len2 == len && memcmp(again, bytes, len) == 0);
  CHECK(ok(B, "return #S:fingerprint() == 16 and S:version() == 0"));
  CHECK(ok(B, "return #S:types() == 3"));
  free(bytes);
  free(again);
  lua_close(B);
}

/* one compiled schema in five states, closed in the orders in 'order' */
static void fanout (const int order[5]) {
  lua_State *L[5];
  void *h[5];
  char *bytes;
  size_t len = 0;
  int i;
  for (i = 0; i < 5; i++) {
    L[i] = newstate();
    CHECK(L[i] != NULL);
    if (!L[i]) return;
  }
  CHECK(ok(L[0], compile));
  for (i = 1; i < 5; i++) h[i] = share(L[0]);
  for (i = 1; i < 4; i++) CHECK(adopt(L[i], h[i]));
  /* the last handle is never adopted: unshare drops its reference */
  lua_pushlightuserdata(L[0], h[4]);
  CHECK(run(L[0], "bitwire.unshare(...) return true", 1));
  lua_pop(L[0], 1);
  CHECK(ok(L[4], "return true"));
  bytes = bytesof(L[0], &len);
  CHECK(bytes != NULL);
  for (i = 0; i < 5; i++) {
    lua_State *X = L[order[i]];
    if (order[i] < 4) {
      CHECK(bytes && decodes(X, bytes, len));
      free(bytesof(X, &len));
    }
    lua_close(X);
  }
  free(bytes);
}

static void test_close_orders (void) {
  static const int orders[][5] = {
    {0, 1, 2, 3, 4},   /* origin first */
    {3, 2, 1, 0, 4},   /* origin last */
    {2, 0, 4, 3, 1},   /* mixed */
  };
  size_t i;
  for (i = 0; i < sizeof(orders) / sizeof(orders[0]); i++) fanout(orders[i]);
}

/* B shares what it adopted to C; a schema collected in B stays in C */
static void test_chain_and_collect (void) {
  lua_State *A = newstate(), *B = newstate(), *C = newstate();
  CHECK(A && B && C);
  if (!A || !B || !C) return;
  CHECK(ok(A, compile));
  CHECK(adopt(B, share(A)));
  CHECK(adopt(C, share(B)));
  lua_close(A);
  CHECK(ok(B, "S = nil collectgarbage() collectgarbage() return true"));
  lua_close(B);
  free(bytesof(C, &(size_t){0}));
  CHECK(ok(C, "return S:fingerprint() ~= nil"));
  lua_close(C);
}

/* share then unshare, never adopted: nothing leaks (valgrind says) */
static void test_unshare (void) {
  lua_State *A = newstate();
  CHECK(A != NULL);
  if (!A) return;
  CHECK(ok(A, compile));
  CHECK(ok(A, "for i = 1, 3 do bitwire.unshare(S:share()) end return true"));
  CHECK(ok(A, "local h = S:share() S = nil collectgarbage()\n"
              "bitwire.unshare(h) return true"));
  lua_close(A);
}

static void test_bad_handles (void) {
  lua_State *A = newstate();
  CHECK(A != NULL);
  if (!A) return;
  CHECK(ok(A, "return not pcall(bitwire.adopt, 42)"));
  CHECK(ok(A, "return not pcall(bitwire.adopt, nil)"));
  CHECK(ok(A, "return not pcall(bitwire.unshare, 'x')"));
  lua_close(A);
}

/* A handle outlives what it named: after unshare it takes nothing, not a
** newer share of the same schema, nor (once the schema is collected) freed
** memory, which valgrind would report. */
static void test_stale_handles (void) {
  lua_State *A = newstate();
  CHECK(A != NULL);
  if (!A) return;
  CHECK(ok(A, compile));
  CHECK(ok(A, "local h1 = S:share() bitwire.unshare(h1)\n"
              "local h2 = S:share()\n"
              "assert(h1 ~= h2, 'a handle id was reused')\n"
              "assert(not pcall(bitwire.adopt, h1), 'a stale handle adopted')\n"
              "assert(not pcall(bitwire.unshare, h1), 'a stale handle unshared')\n"
              "return bitwire.adopt(h2):fingerprint() == S:fingerprint()"));
  CHECK(ok(A, "local h = S:share() bitwire.unshare(h) S = nil collectgarbage()\n"
              "local ok, err = pcall(bitwire.adopt, h)\n"
              "return not ok and err:find('not a live schema handle', 1, true)\n"
              "  and not pcall(bitwire.unshare, h)"));
  lua_close(A);
}

typedef struct Worker {
  lua_State *L;
  int good;
} Worker;

/* each thread owns its state; they share only the compiled program */
static void *work (void *arg) {
  Worker *w = (Worker *)arg;
  w->good = ok(w->L,
    "for i = 1, 500 do\n"
    "  value.tick = i\n"
    "  local v = assert(S:decode('Snapshot', S:encode('Snapshot', value)))\n"
    "  if not same(value, v) then return false end\n"
    "end\n"
    "return true");
  lua_close(w->L);                    /* releases concurrently */
  w->L = NULL;
  return NULL;
}

static void test_threads (void) {
  lua_State *A = newstate();
  Worker w[NTHREADS];
  pthread_t th[NTHREADS];
  int i, started[NTHREADS];
  CHECK(A != NULL);
  if (!A) return;
  CHECK(ok(A, compile));
  for (i = 0; i < NTHREADS; i++) {  /* states are made and fed here */
    w[i].L = newstate();
    w[i].good = 0;
    CHECK(w[i].L != NULL && adopt(w[i].L, share(A)));
  }
  lua_close(A);                       /* only the threads hold it now */
  for (i = 0; i < NTHREADS; i++)
    started[i] = w[i].L && pthread_create(&th[i], NULL, work, &w[i]) == 0;
  for (i = 0; i < NTHREADS; i++) {
    CHECK(started[i]);
    if (started[i]) pthread_join(th[i], NULL);
    CHECK(w[i].good);
  }
}

int main (void) {
  test_adopt_outlives_origin();
  test_close_orders();
  test_chain_and_collect();
  test_unshare();
  test_bad_handles();
  test_stale_handles();
  test_threads();
  return check_summary("test_share");
}
