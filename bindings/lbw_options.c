/*
** lbw_options.c - the options tables of schema calls: one list of names,
** one reader, and the messages of a misspelt one
** See LICENSE for copyright and terms.
*/

#include <string.h>

#include "lauxlib.h"

#include "bw_schema.h"
#include "lbw_schema.h"


#define OPTLIST(X)  X("baseline") X("baseline_id") X("baselines") X("into") \
  X("max_values") X("share") X("strict") X("version")  /* OPT_* order */
#define OPTNAME(s)  s,
#define OPTLEN(s)   sizeof(s) - 1,
static const char *const optnames[NOPTS + 1] = { OPTLIST(OPTNAME) NULL };
static const size_t optlens[NOPTS] = { OPTLIST(OPTLEN) };
#undef OPTNAME
#undef OPTLEN

/* Push "unknown <what> <key> (known: <known>)" for the key at 'key' (a
** string quoted, anything else as tostring shows it): the one wording of a
** misspelt option, for bw_readopts and for bitwire/options.lua's checks
** through core.unknown_option. */
static const char *pushunknown (lua_State *L, int key, const char *what,
                                const char *known) {
  key = lua_absindex(L, key);
  if (lua_type(L, key) == LUA_TSTRING) {  /* escaped: a caller's bytes */
    bw_Value v = { BW_VSTRING, 0, 0, 0, NULL, 0, NULL };
    v.s = lua_tolstring(L, key, &v.len);
    lua_pushfstring(L, "'%s'", bw_valuetext(&v).s);
  }
  else luaL_tolstring(L, key, NULL);
  return lua_pushfstring(L, "unknown %s %s (known: %s)", what,
                         lua_tostring(L, -1), known);
}

/* Push "a, b, c" of the NULL-ended 'names' (the first 32) whose bit in
** 'mask' is set. */
static const char *pushjoined (lua_State *L, const char *const names[],
                               unsigned mask) {
  luaL_Buffer B;
  int i, n = 0;
  luaL_buffinit(L, &B);
  for (i = 0; i < 32 && names[i] != NULL; i++)
    if (mask & (1u << i)) {
      if (n++ > 0) luaL_addstring(&B, ", ");
      luaL_addstring(&B, names[i]);
    }
  luaL_pushresult(&B);
  return lua_tostring(L, -1);
}

/* Raise on option key 'k' (at the top) that the call does not take. */
static void unknownopt (lua_State *L, int arg, unsigned takes) {
  int key = lua_gettop(L);
  luaL_argerror(L, arg, pushunknown(L, key, "option",
                                    pushjoined(L, optnames, takes)));
}

/* core.unknown_option(key, what, names) -> the message bw_readopts would
** give for 'key' among the option names of the list 'names'. */
static int core_unknownoption (lua_State *L) {
  luaL_Buffer B;
  lua_Integer i, n;
  const char *what = luaL_checkstring(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  n = luaL_len(L, 3);
  luaL_buffinit(L, &B);
  for (i = 1; i <= n; i++) {
    if (i > 1) luaL_addstring(&B, ", ");
    if (lua_geti(L, 3, i) != LUA_TSTRING)
      return luaL_argerror(L, 3, "option names must be strings");
    luaL_addvalue(&B);
  }
  luaL_pushresult(&B);
  pushunknown(L, 1, what, lua_tostring(L, -1));
  return 1;
}

/* A set of the option names in 'takes' (OPTBIT each): name -> true. */
static void pushoptset (lua_State *L, unsigned takes) {
  int i;
  lua_newtable(L);
  for (i = 0; i < NOPTS; i++)
    if (takes & OPTBIT(i)) {
      lua_pushboolean(L, 1);
      lua_setfield(L, -2, optnames[i]);
    }
}

static void noopts (lua_State *L, int arg, Opts *o) {
  int i;
  if (!lua_isnoneornil(L, arg)) luaL_checktype(L, arg, LUA_TTABLE);
  o->arg = arg;
  for (i = 0; i < NOPTS; i++) o->at[i] = 0;
}

static void getopts (lua_State *L, int arg, unsigned takes, Opts *o);

void bw_readopts (lua_State *L, int arg, unsigned takes, Opts *o) {
  int meta;
  noopts(L, arg, o);
  if (!lua_istable(L, arg)) return;
  meta = lua_getmetatable(L, arg);  /* its __index may hold options */
  if (meta) lua_pop(L, 1);
  luaL_checkstack(L, 2 * NOPTS + 4, "too many options");  /* each one's
                                   value stays; past NOPTS, one raises */
  lua_pushnil(L);
  while (lua_next(L, arg)) {  /* stack: key, value */
    int i = 0;
    lua_pushvalue(L, -2);  /* the key again, for lua_next; the value stays */
    if (lua_type(L, -1) == LUA_TSTRING) {  /* lengths first: a memcmp for
                                             one name, not a strcmp each */
      size_t len;
      const char *k = lua_tolstring(L, -1, &len);
      while (i < NOPTS && (len != optlens[i] || memcmp(optnames[i], k, len) != 0))
        i++;
    }
    else i = NOPTS;
    if (i == NOPTS || !(takes & (1u << i))) unknownopt(L, arg, takes);  /* raises */
    else o->at[i] = lua_gettop(L) - 1;
  }
  if (meta) getopts(L, arg, takes, o);  /* read as lua_getfield reads */
}

void bw_checkkeys (lua_State *L, int arg, const char *const names[],
                   const char *what) {
  int i;
  lua_pushnil(L);
  while (lua_next(L, arg)) {
    lua_pop(L, 1);
    i = 0;
    if (lua_type(L, -1) == LUA_TSTRING)
      for (; names[i] != NULL; i++)
        if (strcmp(names[i], lua_tostring(L, -1)) == 0) break;
    if (lua_type(L, -1) != LUA_TSTRING || names[i] == NULL)
      luaL_argerror(L, arg, pushunknown(L, -2, what,
                                        pushjoined(L, names, ~0u)));
  }
}

static void getopts (lua_State *L, int arg, unsigned takes, Opts *o) {
  int i;
  for (i = 0; i < NOPTS; i++)
    if (takes & (1u << i)) {
      if (lua_getfield(L, arg, optnames[i]) != LUA_TNIL)
        o->at[i] = lua_gettop(L);
      else lua_pop(L, 1);
    }
}

int bw_optinteger (lua_State *L, int idx, lua_Integer *v) {
  int isnum;
  *v = 0;
  if (lua_type(L, idx) != LUA_TNUMBER) return 0;  /* "1": a slip, not 1 */
  *v = lua_tointegerx(L, idx, &isnum);
  return isnum;
}

/* The integer at 'idx' (nil: 'def') of option 'k' of the table at 'arg';
** an error names the option (luaL_optinteger would name the index). */
static lua_Integer intopt (lua_State *L, int idx, int arg, const char *k,
                           lua_Integer def) {
  lua_Integer v = def;
  if (lua_isnil(L, idx)) return def;
  if (!bw_optinteger(L, idx, &v))
    luaL_argerror(L, arg, lua_pushfstring(L, "'%s' must be an integer", k));
  return v;
}

lua_Integer bw_optfield (lua_State *L, int arg, const char *k,
                         lua_Integer def) {
  lua_Integer v;
  lua_getfield(L, arg, k);
  v = intopt(L, lua_gettop(L), arg, k, def);
  lua_pop(L, 1);
  return v;
}

/* Integer option 'i' of 'o', or 'def' when absent. */
static lua_Integer optint (lua_State *L, const Opts *o, int i,
                           lua_Integer def) {
  if (o->at[i] == 0) return def;
  return intopt(L, o->at[i], o->arg, optnames[i], def);
}

/* Option version of 'o' ('def' when absent), checked. */
static uint32_t versionopt (lua_State *L, const Opts *o, lua_Integer def) {
  lua_Integer v = optint(L, o, OPT_VERSION, def);
  luaL_argcheck(L, v >= 0 && v <= BW_MAXVERSION, o->arg, "version out of range");
  return (uint32_t)v;
}

uint32_t bw_optversion (lua_State *L, const Opts *o, const bw_Schema *S) {
  return versionopt(L, o, (lua_Integer)S->version);
}

int bw_opttable (lua_State *L, const Opts *o, int i) {
  if (o->at[i] != 0 && !lua_istable(L, o->at[i]))
    luaL_argerror(L, o->arg, lua_pushfstring(L, "'%s' must be a table",
                                             optnames[i]));
  return o->at[i];
}

int bw_optbaseline (lua_State *L, const Opts *o) {
  return bw_opttable(L, o, OPT_BASELINE);
}

int bw_optinto (lua_State *L, const Opts *o) {
  return bw_opttable(L, o, OPT_INTO);
}

uint64_t bw_optmaxvalues (lua_State *L, const Opts *o) {
  lua_Integer v = optint(L, o, OPT_MAXVALUES, MAXVALUES);
  luaL_argcheck(L, v >= 0, o->arg, "'max_values' must not be negative");
  return (uint64_t)v;
}

int bw_optstrict (lua_State *L, const Opts *o, int def) {
  return o->at[OPT_STRICT] != 0 ? lua_toboolean(L, o->at[OPT_STRICT]) : def;
}

void bw_optdecode (lua_State *L, const Opts *o, Ctx *c) {
  c->values = bw_optmaxvalues(L, o);
  c->share = o->at[OPT_SHARE] != 0 && lua_toboolean(L, o->at[OPT_SHARE]);
}

/* core.check_walk_options(opts): raise as s:decode would on the options
** bitwire.walk's readers take (dissect), so one rule reads them all. */
static int core_checkwalkoptions (lua_State *L) {
  Opts o;
  lua_settop(L, 1);
  bw_readopts(L, 1, OPTS_WALK, &o);
  (void)versionopt(L, &o, 0);
  (void)bw_optbaseline(L, &o);
  (void)bw_optmaxvalues(L, &o);
  return 0;
}

void bw_openoptions (lua_State *L) {
  lua_pushcfunction(L, core_unknownoption);
  lua_setfield(L, -2, "unknown_option");
  lua_pushcfunction(L, core_checkwalkoptions);
  lua_setfield(L, -2, "check_walk_options");
  lua_createtable(L, 0, 2);  /* what bitwire.protocol's calls pass on */
  pushoptset(L, OPTS_FRAMEENC);
  lua_setfield(L, -2, "encode");
  pushoptset(L, OPTS_FRAMEDEC);
  lua_setfield(L, -2, "decode");
  lua_setfield(L, -2, "FRAME_OPTIONS");
}
