/*
** fuzz_decode.c - libFuzzer target: the schema driver (decode, delta
** decode, decode into, framed protocols) on hostile bytes, and round trips
** See LICENSE for copyright and terms.
*/

/*
** The schema driver lives in the binding (bindings/lbw_encode.c, lbw_decode.c): it walks
** Lua tables, so it cannot be fuzzed without a lua_State. That is why this
** target sits in bindings/test and not beside the core's targets (core/ and
** core/test/ build without Lua). The core and the binding are compiled into
** this program with the fuzzer's instrumentation and ASan+UBSan; liblua
** itself is the system's. luaopen_bitwire_core is registered as
** "bitwire.core", so `require "bitwire"` (from ./lua: run from the checkout
** root) uses the instrumented driver, never build/bitwire/core.so.
**
** One lua_State is made in LLVMFuzzerInitialize. It loads
** bindings/test/fuzz_decode.lua, which compiles schemas covering every
** field kind and option and holds the checks: each input is decoded in one
** of eight ways (plain, message, into, against a baseline, framed protocols
** with deltas, frames with tags and versions, versioned, raw frames). A
** decode must return a value or nil, message, known code, and never raise;
** every value decoded must encode again (without raising) to bytes that
** decode to an equal value. The check runs under lua_pcall: any error it
** raises is a finding, reported with a traceback, and abort() makes
** libFuzzer save the input. The stack is reset after every input and a full
** collection runs every GCEVERY inputs, so the state does not grow.
**
** Built with -DFUZZ_SEEDGEN it is a program that writes the corpus: the Lua
** side encodes random valid values for every mode and type.
*/

#include <stdio.h>
#include <stdlib.h>

#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"

#include "fuzz.h"

#define GCEVERY  2048
/* the Lua half; fuzz_schema and fuzz_unblob are this harness with their
** own scripts */
#ifndef SCRIPT
#define SCRIPT   "bindings/test/fuzz_decode.lua"
#endif

int luaopen_bitwire_core (lua_State *L);
int LLVMFuzzerInitialize (int *argc, char ***argv);

static lua_State *L;
static int checkref = LUA_NOREF, seedsref = LUA_NOREF, reportref = LUA_NOREF;
static unsigned long runs;

/* crc(id, body) -> the 4-byte CRC field a frame of 'body' needs */
static int l_crc (lua_State *Ls) {
  size_t n;
  lua_Integer id = luaL_checkinteger(Ls, 1);
  const char *s = luaL_checklstring(Ls, 2, &n);
  uint32_t crc = bw_framecrc((uint64_t)id, s, n);
  char b[4];
  b[0] = (char)(crc & 0xFF);
  b[1] = (char)(crc >> 8 & 0xFF);
  b[2] = (char)(crc >> 16 & 0xFF);
  b[3] = (char)(crc >> 24 & 0xFF);
  lua_pushlstring(Ls, b, 4);
  return 1;
}

static int traceback (lua_State *Ls) {
  luaL_traceback(Ls, Ls, lua_tostring(Ls, 1), 1);
  return 1;
}

/* Call the function in 'ref' with the string 'p' of 'n' bytes (or no
** argument if 'p' is NULL); an error aborts. Leaves 'nres' results. */
static void call (int ref, const uint8_t *p, size_t n, int nres) {
  lua_settop(L, 0);
  lua_pushcfunction(L, traceback);
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  if (p != NULL) lua_pushlstring(L, (const char *)p, n);
  if (lua_pcall(L, p != NULL, nres, 1) != LUA_OK) {
    fprintf(stderr, "fuzz check failed: %s\n", lua_tostring(L, -1));
    abort();
  }
}

/* Lua's collector frees memory of earlier inputs, so an input's mallocs
** and frees never balance, and libFuzzer would then run LeakSanitizer after
** every input that adds coverage: 30 times slower. Leak checks of the
** driver are valgrind's job (make valgrind). Unless the command line says
** otherwise, add -detect_leaks=0 (libFuzzer parses flags after this). */
static void noleakcheck (int *argc, char ***argv) {
  static char flag[] = "-detect_leaks=0";
  static char *args[256];
  int i;
  if (argc == NULL || argv == NULL || *argc < 1 || *argc >= 255) return;
  for (i = 1; i < *argc; i++)
    if (strncmp((*argv)[i], "-detect_leaks=", 14) == 0) return;
  memcpy(args, *argv, sizeof(char *) * (size_t)*argc);
  args[*argc] = flag;
  args[*argc + 1] = NULL;
  *argv = args;
  (*argc)++;
}

int LLVMFuzzerInitialize (int *argc, char ***argv) {
  noleakcheck(argc, argv);
  L = luaL_newstate();
  FCHECK(L != NULL);
  luaL_openlibs(L);
  luaL_requiref(L, "bitwire.core", luaopen_bitwire_core, 0);
  lua_settop(L, 0);
  lua_pushcfunction(L, traceback);
  if (luaL_dostring(L, "package.path = './lua/?.lua;./lua/?/init.lua;'"
                       " .. package.path; package.cpath = ''") != LUA_OK
      || luaL_loadfile(L, SCRIPT) != LUA_OK
      || lua_pcall(L, 0, 1, 1) != LUA_OK || !lua_istable(L, -1)) {
    fprintf(stderr, "cannot load " SCRIPT " (run from the "
            "checkout root): %s\n", lua_tostring(L, -1));
    exit(1);
  }
  lua_pushcfunction(L, l_crc);
  lua_setfield(L, -2, "crc");
  lua_getfield(L, -1, "check");
  checkref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_getfield(L, -1, "seeds");
  seedsref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_getfield(L, -1, "report");
  reportref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_settop(L, 0);
  lua_gc(L, LUA_GCCOLLECT);
  return 0;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  call(checkref, data != NULL ? data : (const uint8_t *)"", size, 0);
  lua_settop(L, 0);
  if (++runs % GCEVERY == 0) lua_gc(L, LUA_GCCOLLECT);
  return 0;
}


/* {===================== seed generation ===================== */

#ifdef FUZZ_SEEDGEN
int main (int argc, char **argv) {
  lua_Integer i;
  int k = 0;
  if (argc != 2) {
    fprintf(stderr, "usage: %s corpus-dir\n", argv[0]);
    return 2;
  }
  LLVMFuzzerInitialize(&argc, &argv);
  call(seedsref, NULL, 0, 1);
  /* in the registry, the seeds outlive the stack resets of the runs */
  lua_setfield(L, LUA_REGISTRYINDEX, "fuzz_decode.seeds");
  for (i = 1; ; i++) {
    size_t len;
    const char *s;
    lua_getfield(L, LUA_REGISTRYINDEX, "fuzz_decode.seeds");
    if (lua_rawgeti(L, -1, i) != LUA_TSTRING) break;
    s = lua_tolstring(L, -1, &len);
    if (writeseed(argv[1], k++, (const uint8_t *)s, len)) return 1;
  }
  call(reportref, NULL, 0, 1);
  printf("%s: %d seeds; outcomes: %s\n", SCRIPT, k,
         lua_tostring(L, -1));
  lua_close(L);
  return 0;
}
#endif

/* }========================================================== */
