/*
** lbw_sandbox.c - definitions files: a separate lua_State (the bounded read
** of the file: lbw_readdefs.c)
** See LICENSE for copyright and terms.
*/

/*
** A definitions file is untrusted code, so it never runs in the host's
** lua_State. It gets a lua_State of its own whose allocator refuses any
** allocation that would take the state past the memory limit: the limit is
** exact to the byte, whatever a library function does in C, and the file
** gets an ordinary memory error. A count hook runs before every instruction
** of the file: it counts the instruction budget exactly and looks at the
** clock. CPU time costs a system call (microseconds) while the monotonic
** clock does not, and a thread's CPU time cannot run faster than the wall
** clock, so the hook reads the CPU clock only when the wall clock has moved
** a millisecond since it last did. Once a limit stops the file, the hook
** raises again before each instruction, so a pcall cannot swallow the stop.
**
** A hook cannot interrupt C code, so every library function the file may
** call does work bounded by its arguments, which the memory limit bounds,
** and then returns. string.rep with an empty result and the table functions
** whose loops move nils (insert, remove, move; sort, whose work with a
** C comparator is quadratic) are not: rep is wrapped, and those four are
** written in Lua inside the sandbox (TABLIB), where every step is counted.
**
** The file's result crosses to the host as plain data: tables, strings,
** numbers (integer or float, infinities and NaN bit for bit) and booleans.
** Nothing of the file's state survives; the copy counts every table and
** field each time it is reached, so a table shared 4000 times costs 4000
** copies and is refused before the host does any work with it.
**
** The state lives in a userdata of the host with a __gc, so it is closed
** on every path, a memory error of the host included. Calls into the
** file's state that can raise run under its own protection; the copy uses
** only calls that cannot.
*/

#if defined(__unix__) || defined(__APPLE__)
#define _POSIX_C_SOURCE 200809L  /* clock_gettime */
#define HAVEPOSIX 1
#endif

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"
#include "lbw.h"

#define SANDBOX_MT  "bitwire.Sandbox"

/* a reading of the CPU clock at most once per this much wall time */
#define CLOCKSTEP  1e-3

enum { NOSTOP, STOPBUDGET, STOPTIME };

typedef struct Sandbox {
  lua_State *S;           /* the file's state; NULL once closed */
  size_t used, limit;     /* bytes S holds, and the cap */
  lua_Integer steps, budget;
  double start, maxtime;  /* CPU seconds */
  double lastwall;        /* wall clock at the last CPU reading */
  int stop;               /* NOSTOP, STOPBUDGET, STOPTIME */
  int line;               /* the file's line at the stop, 0 if unknown */
  const char *source;     /* "@path": the file's chunks */
  char shortsrc[LUA_IDSIZE];  /* what Lua writes for it in positions */
} Sandbox;


/* {===================== clocks ===================== */

#define READCHUNK  512  /* source bytes the parser gets between clock checks */

typedef struct Source {
  Sandbox *sb;
  const char *s;
  size_t left;
} Source;

static void checktime (Sandbox *sb);

/* The parser resolves all the gotos pending on a label at once, in time
** quadratic in their number (break is a goto): one label after 32766
** gotos took 0.4 s inside one chunk of source, past any time limit. The
** words goto and break in a file are counted first (in strings and
** comments too: a bound, not a parse); 4096 resolve in a few ms. */
#define MAXJUMPS  4096

static size_t countjumps (const char *s, size_t len) {
  size_t i = 0, n = 0;
  while (i < len) {
    size_t j = i;
    while (j < len && (isalnum((unsigned char)s[j]) || s[j] == '_')) j++;
    if (j == i) {
      i++;
      continue;
    }
    if ((j - i == 4 && memcmp(s + i, "goto", 4) == 0)
        || (j - i == 5 && memcmp(s + i, "break", 5) == 0))
      n++;
    i = j;
  }
  return n;
}

/* lua_load's reader: the source in chunks, the time limit checked before
** each, so parsing (whose label matching is quadratic too) is bounded by
** the limit as running is. */
static const char *readsource (lua_State *S, void *ud, size_t *size) {
  Source *src = (Source *)ud;
  const char *p = src->s;
  checktime(src->sb);
  if (src->sb->stop != NOSTOP) {
    lua_pushlightuserdata(S, src->sb);
    lua_error(S);
  }
  *size = src->left < READCHUNK ? src->left : READCHUNK;
  src->s += *size;
  src->left -= *size;
  return *size > 0 ? p : NULL;
}
/* ns / 1e9 rather than ns * 1e-9: no product for an FMA (make fp-test
** checks that nothing in bitwire's C fuses) */

static double wallclock (void) {
#if defined(HAVEPOSIX) && defined(CLOCK_MONOTONIC)
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
#endif
  return -1;  /* no wall clock: read the CPU clock every time */
}

/* CPU seconds of this thread (of the process where threads have none),
** so a busy thread of the host does not count against the file */
static double cputime (void) {
#if defined(HAVEPOSIX) && defined(CLOCK_THREAD_CPUTIME_ID)
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
#endif
  return (double)clock() / CLOCKS_PER_SEC;
}

/* }========================================================== */


/* {===================== the file's state ===================== */

/* Allocator of S: never holds more than sb->limit bytes. */
static void *sballoc (void *ud, void *ptr, size_t osize, size_t nsize) {
  Sandbox *sb = (Sandbox *)ud;
  void *p;
  if (ptr == NULL) osize = 0;  /* then osize is a type tag */
  if (nsize == 0) {
    free(ptr);
    sb->used -= osize;
    return NULL;
  }
  if (nsize > osize && nsize - osize > sb->limit - sb->used) return NULL;
  p = realloc(ptr, nsize);
  if (p == NULL) return nsize <= osize ? ptr : NULL;  /* a shrink keeps */
  sb->used = sb->used - osize + nsize;
  return p;
}

static void sbclose (Sandbox *sb) {
  if (sb->S != NULL) {
    lua_close(sb->S);
    sb->S = NULL;
  }
}

static int sandbox_gc (lua_State *L) {
  sbclose((Sandbox *)luaL_checkudata(L, 1, SANDBOX_MT));
  return 0;
}

/* The line of the innermost frame of the file on 'co', or 0. */
static int fileline (lua_State *co, const Sandbox *sb) {
  lua_Debug ar;
  int level;
  for (level = 0; lua_getstack(co, level, &ar); level++) {
    if (lua_getinfo(co, "Sl", &ar) && ar.currentline > 0
        && strcmp(ar.source, sb->source) == 0)
      return ar.currentline;
  }
  return 0;
}

/* Stop the file when its CPU time is past the limit: the CPU clock read
** at most once per CLOCKSTEP of wall time. */
static void checktime (Sandbox *sb) {
  double now = wallclock();
  if (now < 0 || now - sb->lastwall >= CLOCKSTEP) {
    sb->lastwall = now;
    if (cputime() - sb->start > sb->maxtime) sb->stop = STOPTIME;
  }
}

/* Before every instruction of the file. The error value is a light
** userdata: raising it allocates nothing, and the host reports the stop. */
static void hook (lua_State *co, lua_Debug *ar) {
  void *ud;
  Sandbox *sb;
  (void)ar;
  lua_getallocf(co, &ud);
  sb = (Sandbox *)ud;
  if (sb->stop == NOSTOP) {
    if (++sb->steps > sb->budget)
      sb->stop = STOPBUDGET;
    else checktime(sb);
    if (sb->stop != NOSTOP) sb->line = fileline(co, sb);
  }
  if (sb->stop != NOSTOP) {
    lua_pushlightuserdata(co, sb);
    lua_error(co);
  }
}

/* string.rep: an empty result would loop 'n' times in C doing nothing */
static int sb_rep (lua_State *L) {
  size_t l, lsep;
  lua_Integer n;
  luaL_checklstring(L, 1, &l);
  n = luaL_checkinteger(L, 2);
  luaL_optlstring(L, 3, "", &lsep);
  if (n <= 0 || (l == 0 && lsep == 0)) {
    lua_pushliteral(L, "");
    return 1;
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

/* table.insert, remove, move and sort, run by the file's hooked thread;
** arguments as the C library's (sort is a stable merge sort) */
static const char TABLIB[] =
  "local type, error, select, tonumber, tointeger, ult, maxinteger = ...\n"
  "local function tab(t, n, f)\n"
  "  if type(t) ~= 'table' then error((\"bad argument #%d to '%s' (table \"\n"
  "    .. \"expected, got %s)\"):format(n, f, type(t)), 3) end\n"
  "end\n"
  "local function int(v, n, f)\n"
  "  local i = tointeger(v)\n"
  "  if i == nil then\n"
  "    error((\"bad argument #%d to '%s' (%s)\"):format(n, f, tonumber(v) and\n"
  "      'number has no integer representation' or\n"
  "      'number expected, got ' .. (v == nil and 'no value' or type(v))), 3)\n"
  "  end\n"
  "  return i\n"
  "end\n"
  "local function insert(t, ...)\n"
  "  tab(t, 1, 'table.insert')\n"
  "  local e, n = #t + 1, select('#', ...)\n"
  "  if n == 1 then t[e] = ...; return end\n"
  "  if n ~= 2 then error(\"wrong number of arguments to 'insert'\", 2) end\n"
  "  local pos, v = ...\n"
  "  pos = int(pos, 2, 'table.insert')\n"
  "  if not ult(pos - 1, e) then\n"
  "    error(\"bad argument #2 to 'table.insert' (position out of bounds)\", 2)\n"
  "  end\n"
  "  for i = e, pos + 1, -1 do t[i] = t[i - 1] end\n"
  "  t[pos] = v\n"
  "end\n"
  "local function remove(t, pos)\n"
  "  tab(t, 1, 'table.remove')\n"
  "  local size = #t\n"
  "  if pos == nil then pos = size else pos = int(pos, 2, 'table.remove') end\n"
  "  if pos ~= size and ult(size, pos - 1) then\n"
  "    error(\"bad argument #2 to 'table.remove' (position out of bounds)\", 2)\n"
  "  end\n"
  "  local v = t[pos]\n"
  "  while pos < size do t[pos] = t[pos + 1]; pos = pos + 1 end\n"
  "  t[pos] = nil\n"
  "  return v\n"
  "end\n"
  "local function move(a1, f, e, t, a2)\n"
  "  f, e, t = int(f, 2, 'table.move'), int(e, 3, 'table.move'), int(t, 4, 'table.move')\n"
  "  if a2 == nil then a2 = a1 end\n"
  "  tab(a1, 1, 'table.move'); tab(a2, 5, 'table.move')\n"
  "  if e >= f then\n"
  "    if not (f > 0 or e < maxinteger + f) then\n"
  "      error(\"bad argument #3 to 'table.move' (too many elements to move)\", 2)\n"
  "    end\n"
  "    local n = e - f + 1\n"
  "    if t > maxinteger - n + 1 then\n"
  "      error(\"bad argument #4 to 'table.move' (destination wrap around)\", 2)\n"
  "    end\n"
  "    if t > e or t <= f or a1 ~= a2 then\n"
  "      for i = 0, n - 1 do a2[t + i] = a1[f + i] end\n"
  "    else\n"
  "      for i = n - 1, 0, -1 do a2[t + i] = a1[f + i] end\n"
  "    end\n"
  "  end\n"
  "  return a2\n"
  "end\n"
  "local function less(a, b) return a < b end\n"
  "local function sort(t, lt)\n"
  "  tab(t, 1, 'table.sort')\n"
  "  if lt ~= nil and type(lt) ~= 'function' then\n"
  "    error(\"bad argument #2 to 'table.sort' (function expected)\", 2)\n"
  "  end\n"
  "  lt = lt or less\n"
  "  local n = #t\n"
  "  local a, b, width = t, {}, 1\n"
  "  while width < n do\n"
  "    for lo = 1, n, 2 * width do\n"
  "      local mid, hi = lo + width - 1, lo + 2 * width - 1\n"
  "      if mid > n then mid = n end\n"
  "      if hi > n then hi = n end\n"
  "      local l, r = lo, mid + 1\n"
  "      for k = lo, hi do\n"
  "        if r > hi or (l <= mid and not lt(a[r], a[l])) then\n"
  "          b[k] = a[l]; l = l + 1\n"
  "        else\n"
  "          b[k] = a[r]; r = r + 1\n"
  "        end\n"
  "      end\n"
  "    end\n"
  "    a, b, width = b, a, width * 2\n"
  "  end\n"
  "  if a ~= t then for i = 1, n do t[i] = a[i] end end\n"
  "end\n"
  "return insert, remove, move, sort\n";

/* copy the fields 'names' of the table at -2 into the table at -1 */
static void pick (lua_State *S, const char *const names[]) {
  int from = lua_gettop(S) - 1, to = from + 1;
  for (; *names != NULL; names++) {
    lua_getfield(S, from, *names);
    lua_setfield(S, to, *names);
  }
}

static const char *const BASEFUNCS[] = {"assert", "error", "ipairs", "next",
  "pairs", "pcall", "select", "tonumber", "tostring", "type", NULL};
static const char *const MATHFUNCS[] = {"abs", "acos", "asin", "atan",
  "ceil", "cos", "deg", "exp", "floor", "fmod", "huge", "log", "max",
  "maxinteger", "min", "mininteger", "modf", "pi", "rad", "sin", "sqrt",
  "tan", "tointeger", "type", "ult", NULL};
static const char *const STRFUNCS[] = {"byte", "char", "format", "len",
  "lower", "reverse", "sub", "upper", NULL};
static const char *const TABFUNCS[] = {"concat", "unpack", NULL};
static const char *const UTF8FUNCS[] = {"char", "charpattern", "codes",
  "codepoint", "len", "offset", NULL};

/* Open library 'name' of S and put a table of its functions 'names' in
** env[name]; leaves the library and that table on the stack. */
static void openlib (lua_State *S, int env, const char *name,
                     lua_CFunction open, const char *const names[]) {
  luaL_requiref(S, name, open, 0);
  lua_newtable(S);
  pick(S, names);
  lua_pushvalue(S, -1);
  lua_setfield(S, env, name);
}

/* Run protected on S: pushes the file's environment and the thread that
** will run it. The environment holds only the functions above. */
static int setup (lua_State *S) {
  int env, math;
  lua_newtable(S);
  env = lua_gettop(S);
  luaL_requiref(S, LUA_GNAME, luaopen_base, 0);
  lua_pushvalue(S, env);
  pick(S, BASEFUNCS);
  lua_pop(S, 2);
  openlib(S, env, LUA_MATHLIBNAME, luaopen_math, MATHFUNCS);
  lua_pop(S, 2);
  openlib(S, env, LUA_UTF8LIBNAME, luaopen_utf8, UTF8FUNCS);
  lua_pop(S, 2);
  openlib(S, env, LUA_STRLIBNAME, luaopen_string, STRFUNCS);
  lua_getfield(S, -2, "rep");
  lua_pushcclosure(S, sb_rep, 1);
  lua_setfield(S, -2, "rep");
  /* ("x"):rep(n) reaches the string functions through the metatable */
  lua_pushliteral(S, "");
  if (lua_getmetatable(S, -1)) {
    lua_pushvalue(S, -3);
    lua_setfield(S, -2, "__index");
    lua_pop(S, 1);
  }
  lua_pop(S, 3);
  openlib(S, env, LUA_TABLIBNAME, luaopen_table, TABFUNCS);
  if (luaL_loadbufferx(S, TABLIB, sizeof(TABLIB) - 1, "=bitwire.sandbox",
                       "t") != LUA_OK)
    return lua_error(S);
  lua_getfield(S, env, "type");
  lua_getfield(S, env, "error");
  lua_getfield(S, env, "select");
  lua_getfield(S, env, "tonumber");
  lua_getfield(S, env, "math");
  math = lua_gettop(S);
  lua_getfield(S, math, "tointeger");
  lua_getfield(S, math, "ult");
  lua_getfield(S, math, "maxinteger");
  lua_remove(S, math);
  lua_call(S, 7, 4);             /* library, its copy, the four functions */
  lua_setfield(S, -5, "sort");
  lua_setfield(S, -4, "move");
  lua_setfield(S, -3, "remove");
  lua_setfield(S, -2, "insert");
  lua_settop(S, env);
  lua_newthread(S);
  return 2;                                           /* env, thread */
}

/* }========================================================== */


/* {===================== running a file ===================== */

/* Messages a file raises keep at most this many bytes. */
#define MAXFAILMSG  1024

/* Push the file's text 'msg' of 'len' bytes cut to MAXFAILMSG bytes,
** saying how long it was: error(string.rep("x", 2^24)). Its bytes are
** written as bw_sbaddtext writes them: the file's message cannot drive the
** terminal of whoever reads the log, and a NUL does not end it. */
static void pushcut (lua_State *L, const char *msg, size_t len) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  if (bw_sbaddtext(&b, msg, len, MAXFAILMSG) == len) {
    luaL_pushresult(&b);
    return;
  }
  luaL_pushresult(&b);
  lua_pushfstring(L, "... (%I bytes in all)", (LUAI_UACINT)len);
  lua_concat(L, 2);
}

/* nil, "path:line: msg" ("path: msg" for line 0), 'msg' of 'len' bytes */
static int deffail (lua_State *L, const char *path, int line,
                    const char *msg, size_t len) {
  lua_pushnil(L);
  if (line > 0) lua_pushfstring(L, "%s:%d: ", path, line);
  else lua_pushfstring(L, "%s: ", path);
  pushcut(L, msg, len);
  lua_concat(L, 2);
  return 2;
}

int bw_deffail (lua_State *L, const char *path, int line, const char *msg) {
  return deffail(L, path, line, msg, strlen(msg));
}

static const char *memmsg (lua_State *L, const Sandbox *sb) {
  return lua_pushfstring(L, "memory limit of %I KB exceeded",
                         (LUAI_UACINT)(sb->limit / 1024));
}

/* The message of a stop by the hook. */
static const char *stopmsg (lua_State *L, const Sandbox *sb) {
  if (sb->stop == STOPBUDGET)
    return lua_pushfstring(L, "instruction budget of %I exhausted",
                           (LUAI_UACINT)sb->budget);
  return lua_pushfstring(L, "CPU time limit of %f s exceeded",
                         (LUAI_UACNUMBER)sb->maxtime);
}

/* nil, "path:line: text" for the file's message 'msg' of 'len' bytes: the
** position Lua put first names the file by its short_src ("...tail" for a
** long path), so it is written again with the full path; a message
** without one gets 'line'. The text after the position is cut. */
static int filefail (lua_State *L, const Sandbox *sb, const char *path,
                     int line, const char *msg, size_t len) {
  size_t slen = strlen(sb->shortsrc);
  if (strncmp(msg, sb->shortsrc, slen) == 0 && msg[slen] == ':') {
    const char *p = msg + slen + 1;
    while (isdigit((unsigned char)*p)) p++;
    p = p[0] == ':' && p[1] == ' ' ? p + 2 : msg + slen + 1;
    lua_pushnil(L);
    lua_pushstring(L, path);
    lua_pushlstring(L, msg + slen, (size_t)(p - msg) - slen);
    pushcut(L, p, len - (size_t)(p - msg));
    lua_concat(L, 3);
    return 2;
  }
  return deffail(L, path, line, msg, len);
}

/* The file's error (status 'status', value on top of 'co') as nil, msg. */
static int runerror (lua_State *L, Sandbox *sb, lua_State *co, int status,
                     const char *path) {
  const char *msg;
  size_t len;
  if (sb->stop != NOSTOP)
    return bw_deffail(L, path, sb->line, stopmsg(L, sb));
  if (status == LUA_ERRMEM)
    return bw_deffail(L, path, fileline(co, sb), memmsg(L, sb));
  switch (lua_type(co, -1)) {
    case LUA_TSTRING:
      msg = lua_tolstring(co, -1, &len);
      msg = lua_pushlstring(L, msg, len);
      break;
    case LUA_TNUMBER:
      if (lua_isinteger(co, -1)) lua_pushinteger(L, lua_tointeger(co, -1));
      else lua_pushnumber(L, lua_tonumber(co, -1));
      msg = luaL_tolstring(L, -1, &len);
      break;
    default:
      msg = lua_pushfstring(L, "error object is a %s value",
                            luaL_typename(co, -1));
      len = strlen(msg);
  }
  return filefail(L, sb, path, fileline(co, sb), msg, len);
}

/* Limits from the options table at 'opts', as the loader checked them. */
static lua_Integer getlimit (lua_State *L, int opts, const char *key) {
  lua_Integer n;
  lua_getfield(L, opts, key);
  n = lua_tointeger(L, -1);
  lua_pop(L, 1);
  if (n < 1) luaL_error(L, "sandbox: '%s' must be a positive integer", key);
  return n;
}

/* Run the file (its source at 1) in S and push the copy of its result or
** nil, message. S is closed by the caller. */
static int run (lua_State *L, Sandbox *sb, const char *path, size_t maxsize,
                lua_Integer maxnodes) {
  size_t len;
  const char *src = lua_tolstring(L, 1, &len);
  lua_State *S = sb->S, *co;
  lua_Debug ar;
  int status, nres, top;
  Source in;
  lua_pushcfunction(S, setup);
  status = lua_pcall(S, 0, 2, 0);
  if (status == LUA_ERRMEM) return bw_deffail(L, path, 0, memmsg(L, sb));
  if (status != LUA_OK)
    return bw_deffail(L, path, 0, lua_pushfstring(L, "sandbox setup: %s",
                                               lua_tostring(S, -1)));
  co = lua_tothread(S, -1);
  /* as lua5.4 reads a script: a UTF-8 BOM, then a first line of '#' (#!),
  ** skipped; its newline kept, so line numbers hold */
  if (len >= 3 && memcmp(src, "\xEF\xBB\xBF", 3) == 0) { src += 3; len -= 3; }
  if (len > 0 && src[0] == '#')
    while (len > 0 && src[0] != '\n') { src++; len--; }
  if (len > 0 && src[0] == LUA_SIGNATURE[0])
    return bw_deffail(L, path, 0, "binary chunks are not accepted");
  if (countjumps(src, len) > MAXJUMPS)
    return bw_deffail(L, path, 0, lua_pushfstring(L, "more than %d goto "
                      "and break words: the parser matches them to labels in "
                      "quadratic time", MAXJUMPS));
  /* an empty chunk of the file's name gives its short_src (only memory
  ** can fail) */
  if (luaL_loadbufferx(S, "", 0, sb->source, "t") != LUA_OK)
    return bw_deffail(L, path, 0, memmsg(L, sb));
  lua_getinfo(S, ">S", &ar);
  memcpy(sb->shortsrc, ar.short_src, sizeof sb->shortsrc);
  sb->start = cputime();
  sb->lastwall = wallclock();
  in.sb = sb;
  in.s = src;
  in.left = len;
  status = lua_load(S, readsource, &in, sb->source, "t");
  if (status == LUA_ERRMEM) return bw_deffail(L, path, 0, memmsg(L, sb));
  if (sb->stop != NOSTOP) return bw_deffail(L, path, 0, stopmsg(L, sb));
  if (status != LUA_OK) {  /* a syntax error, quoting a token up to the file */
    size_t mlen;
    const char *msg = lua_tolstring(S, -1, &mlen);
    return filefail(L, sb, path, 0, msg, mlen);
  }
  lua_pushvalue(S, -3);
  lua_setupvalue(S, -2, 1);                        /* _ENV = env */
  lua_xmove(S, co, 1);
  lua_sethook(co, hook, LUA_MASKCOUNT, 1);
  status = lua_resume(co, S, 0, &nres);
  if (status != LUA_OK && status != LUA_YIELD)
    return runerror(L, sb, co, status, path);
  if (sb->stop != NOSTOP)      /* stopped, then 'return pcall(...)' */
    return bw_deffail(L, path, sb->line, stopmsg(L, sb));
  if (status == LUA_YIELD)
    return bw_deffail(L, path, 0, "definitions file did not run to its end");
  if (nres == 0 || lua_type(co, -nres) != LUA_TTABLE)
    return bw_deffail(L, path, 0, lua_pushfstring(L, "definitions file must "
                   "return a table, got %s",
                   nres == 0 ? "nil" : luaL_typename(co, -nres)));
  /* the copy uses two slots a level; failing to grow is running out */
  if (!lua_checkstack(S, 2 * BW_MAXCOPYDEPTH + 8))
    return bw_deffail(L, path, 0, memmsg(L, sb));
  lua_settop(co, lua_gettop(co) - nres + 1);
  lua_xmove(co, S, 1);
  top = lua_gettop(L);
  if (bw_sbcopy(S, L, maxnodes, maxsize)) {
    const char *msg = lua_tostring(L, -1);
    lua_settop(L, top);
    return bw_deffail(L, path, 0, msg);
  }
  return 1;
}

/* core.sandbox(source, path, {memory = KB, budget = n, time = s,
**   max_nodes = n, max_size = bytes}) -> description | nil, message. 'path' names the file
** in messages. Runs 'source' as a definitions file (see the top). */
static int core_sandbox (lua_State *L) {
  const char *path;
  lua_Integer memory, maxnodes, maxsize;
  lua_Number maxtime;
  Sandbox *sb;
  int n;
  luaL_checkstring(L, 1);
  path = luaL_checkstring(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  memory = getlimit(L, 3, "memory");
  maxnodes = getlimit(L, 3, "max_nodes");
  /* the host keeps the strings, and the schema their text (quoted, up to
  ** 4 bytes each): no more than a file of max_size could spell out */
  maxsize = getlimit(L, 3, "max_size");
  lua_getfield(L, 3, "time");
  maxtime = lua_tonumber(L, -1);
  lua_pop(L, 1);
  luaL_argcheck(L, maxtime > 0, 3, "'time' must be a positive number");
  sb = (Sandbox *)lua_newuserdatauv(L, sizeof *sb, 0);
  memset(sb, 0, sizeof *sb);
  luaL_setmetatable(L, SANDBOX_MT);
  lua_toclose(L, -1);       /* S is closed at once if L raises */
  sb->budget = getlimit(L, 3, "budget");
  sb->maxtime = maxtime;
  sb->limit = (lua_Unsigned)memory > SIZE_MAX / 2048 ? SIZE_MAX / 2
                                                     : (size_t)memory * 1024;
  sb->source = lua_pushfstring(L, "@%s", path);  /* anchored in L's stack */
  sb->S = lua_newstate(sballoc, sb);
  if (sb->S == NULL) return bw_deffail(L, path, 0, memmsg(L, sb));
  n = run(L, sb, path, (lua_Unsigned)maxsize > SIZE_MAX / 8 ? SIZE_MAX / 8
                                                    : (size_t)maxsize,
          maxnodes);
  sbclose(sb);
  return n;
}

/* }========================================================== */


void bw_opensandbox (lua_State *L) {
  if (luaL_newmetatable(L, SANDBOX_MT)) {
    lua_pushcfunction(L, sandbox_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, sandbox_gc);
    lua_setfield(L, -2, "__close");
  }
  lua_pop(L, 1);
  lua_pushcfunction(L, core_sandbox);
  lua_setfield(L, -2, "sandbox");
  bw_openreaddefs(L);
}
