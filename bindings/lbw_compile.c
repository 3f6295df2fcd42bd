/*
** lbw_compile.c - normalized descriptions to compiled programs
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


/* {===================== compile ===================== */

LSchema *bw_checkschema (lua_State *L, int arg) {
  LSchema *ls = (LSchema *)luaL_checkudata(L, arg, SCHEMA_MT);
  if (ls->S == NULL) luaL_error(L, "schema has been released");
  return ls;
}

int bw_schemagc (lua_State *L) {
  LSchema *ls = (LSchema *)luaL_checkudata(L, 1, SCHEMA_MT);
  bw_writerfree(&ls->w);
  bw_claimsfree(&ls->claims);
  bw_schemarelease(ls->S);
  ls->S = NULL;
  return 0;
}

static void *plainalloc (void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud; (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

static uint32_t addname (lua_State *L, bw_Schema *S, int idx) {
  size_t len;
  const char *s = luaL_checklstring(L, idx, &len);
  uint32_t i = bw_schemaaddname(S, s, len);
  if (i == BW_NONE) luaL_error(L, "not enough memory");
  return i;
}

static lua_Integer optint (lua_State *L, int t, const char *k,
                           lua_Integer def) {
  lua_Integer v;
  lua_getfield(L, t, k);
  v = luaL_optinteger(L, -1, def);
  lua_pop(L, 1);
  return v;
}

static double optnum (lua_State *L, int t, const char *k) {
  double v;
  lua_getfield(L, t, k);
  v = (double)luaL_optnumber(L, -1, 0);
  lua_pop(L, 1);
  return v;
}

static int optbool (lua_State *L, int t, const char *k) {
  int v;
  lua_getfield(L, t, k);
  v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

/* delta = "relative": its tiers (BW_RELTIERS unless given); a float's codes
** must decode and encode back exactly, as both ends quantize their own copy
** of the baseline. */
static void fillrelative (lua_State *L, bw_Field *f, int t) {
  static const uint8_t deftiers[BW_NRELTIERS] = BW_RELTIERS;
  lua_Integer i, n;
  f->relative = 1;
  lua_getfield(L, t, "tiers");
  n = lua_istable(L, -1) ? (lua_Integer)lua_rawlen(L, -1) : 0;
  luaL_argcheck(L, n <= BW_MAXTIERS, 1, "too many tiers");
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, -1, i);
    f->tierbits[i - 1] = (uint8_t)lua_tointeger(L, -1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (n == 0) memcpy(f->tierbits, deftiers, sizeof(deftiers));
  f->ntiers = (uint8_t)(n > 0 ? n : BW_NRELTIERS);
  if (f->kind == BW_KFLOAT && !bw_qfloatexact(&f->q)) {
    lua_getfield(L, t, "name");
    luaL_error(L, "bitwire.schema: %s: delta = \"relative\" needs a float whose "
               "steps float32 can hold (a coarser res or a narrower range)",
               lua_isstring(L, -1) ? lua_tostring(L, -1) : "element");
  }
}

/* Fill S->fields[fi] from the normalized field table at stack index 't'. */
static void fillfield (lua_State *L, bw_Schema *S, uint32_t fi, int t) {
  bw_Field *f = &S->fields[fi];
  int kind;
  lua_getfield(L, t, "kind");
  kind = luaL_checkoption(L, -1, NULL, bw_kindnames);
  lua_pop(L, 1);
  f->kind = (uint8_t)kind;
  f->optional = (uint8_t)optbool(L, t, "optional");
  f->fixed = (uint8_t)optbool(L, t, "fixed");
  f->clamp = (uint8_t)optbool(L, t, "clamp");
  f->since = (uint32_t)optint(L, t, "since", 0);
  f->removed = (uint32_t)optint(L, t, "removed", UINT32_MAX);
  f->min = (int64_t)optint(L, t, "min", 0);
  f->max = (int64_t)optint(L, t, "max", 0);
  lua_getfield(L, t, "name");
  if (!lua_isnil(L, -1)) {
    uint32_t nm = addname(L, S, -1);
    S->fields[fi].name = nm;
  }
  lua_pop(L, 1);
  f = &S->fields[fi];
  switch (kind) {
    case BW_KUINT:
      f->nbits = (unsigned)optint(L, t, "bits", 1);
      f->min = 0;
      f->max = f->nbits < 64 ? (int64_t)((UINT64_C(1) << f->nbits) - 1)
                             : INT64_MAX;
      break;
    case BW_KFLOAT:
      f->dmin = optnum(L, t, "fmin");
      f->dmax = optnum(L, t, "fmax");
      if (bw_qfloatinit(&f->q, f->dmin, f->dmax, optnum(L, t, "res")) != BW_OK)
        luaL_error(L, "bad float range");
      /* decoded values are float32: let them encode again at the ends */
      f->dmin = fmin(f->dmin, (double)bw_qfloatdecode(&f->q, 0));
      f->dmax = fmax(f->dmax, (double)bw_qfloatdecode(&f->q, f->q.miv));
      break;
    case BW_KENUM: {
      lua_Integer i, n;
      lua_getfield(L, t, "values");
      n = (lua_Integer)lua_rawlen(L, -1);
      for (i = 1; i <= n; i++) {
        uint32_t nm;
        lua_rawgeti(L, -1, i);
        nm = addname(L, S, -1);
        lua_pop(L, 1);
        if (i == 1) S->fields[fi].ref = nm;
      }
      lua_pop(L, 1);
      f = &S->fields[fi];
      f->min = 0;
      f->max = (int64_t)n - 1;
      break;
    }
    case BW_KSTRING: f->min = 0; break;
    case BW_KSTRUCT:
      f->ref = (uint32_t)optint(L, t, "type", 0);
      break;
    case BW_KCHECK:
      f->magic = (uint32_t)optint(L, t, "magic", BW_CHECKMAGIC);
      break;
    case BW_KQUAT:
      bw_quatinit(&f->q, (unsigned)optint(L, t, "bits", 9));
      f->nbits = f->q.nbits;
      break;
    case BW_KANGLE:
      f->nbits = (unsigned)optint(L, t, "bits", 1);
      f->dmax = optnum(L, t, "period");
      break;
    case BW_KTIERED: case BW_KSPARSE: {
      lua_Integer i, n;
      lua_getfield(L, t, "tiers");
      n = lua_istable(L, -1) ? (lua_Integer)lua_rawlen(L, -1) : 0;
      luaL_argcheck(L, n < BW_MAXTIERS, 1, "too many tiers");
      for (i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, i);
        f->tierbits[i - 1] = (uint8_t)lua_tointeger(L, -1);
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
      /* sparse tiers end in a catch-all up to the sentinel */
      if (kind == BW_KSPARSE && n > 0) f->tierbits[n++] = 63;
      f->ntiers = (uint8_t)n;
      if (kind == BW_KTIERED) break;
      f->encoding = (uint8_t)optint(L, t, "encoding", BW_SPAUTO);
      f->min = 0;
    }
    /* FALLTHROUGH */
    case BW_KARRAY: {
      uint32_t e = bw_schemaaddfields(S, 1);
      if (e == BW_NONE) luaL_error(L, "not enough memory");
      lua_getfield(L, t, "of");
      fillfield(L, S, e, lua_gettop(L));
      lua_pop(L, 1);
      S->fields[fi].ref = e;
      break;
    }
    default: break;
  }
  f = &S->fields[fi];
  if (optbool(L, t, "relative")) fillrelative(L, f, t);
  if (kind != BW_KUINT && kind != BW_KFLOAT && kind != BW_KFLOAT32
      && kind != BW_KFLOAT64 && kind != BW_KBOOL && kind != BW_KSTRUCT
      && kind != BW_KALIGN && kind != BW_KCHECK && kind != BW_KQUAT
      && kind != BW_KANGLE)
    f->nbits = bw_bitsrequired(f->min, f->max);
  lua_getfield(L, t, "default");
  if (!lua_isnil(L, -1)) {
    f->hasdefault = 1;
    switch (kind) {
      case BW_KBOOL: f->def.i = lua_toboolean(L, -1); break;
      case BW_KFLOAT: case BW_KFLOAT32: case BW_KFLOAT64: case BW_KANGLE:
        f->def.d = (double)lua_tonumber(L, -1);
        break;
      case BW_KENUM:
        f->def.s = f->ref + (uint32_t)lua_tointeger(L, -1);
        break;
      case BW_KSTRING: case BW_KBYTES: {
        uint32_t nm = addname(L, S, -1);
        S->fields[fi].def.s = nm;
        break;
      }
      default: f->def.i = (int64_t)lua_tointeger(L, -1); break;
    }
  }
  lua_pop(L, 1);
}

/* Push a fresh userdata for 'S' (taking over one reference) with the
** per-state caches: the names array and the type index. */
void bw_pushschema (lua_State *L, bw_Schema *S) {
  LSchema *ls;
  uint32_t i;
  ls = (LSchema *)lua_newuserdatauv(L, sizeof(LSchema), NUV);
  ls->S = S;
  memset(&ls->claims, 0, sizeof(ls->claims));
  bw_writerinitgrow(&ls->w, plainalloc, NULL, MAXENCODE);
  luaL_setmetatable(L, SCHEMA_MT);
  lua_createtable(L, (int)S->nnames, 0);
  for (i = 0; i < S->nnames; i++) {
    lua_pushlstring(L, S->names[i], S->namelens[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setiuservalue(L, -2, UV_NAMES);
  lua_createtable(L, 0, (int)S->ntypes);
  for (i = 0; i < S->ntypes; i++) {
    lua_pushlstring(L, S->names[S->types[i].name],
                    S->namelens[S->types[i].name]);
    lua_pushinteger(L, (lua_Integer)i);
    lua_rawset(L, -3);
  }
  lua_setiuservalue(L, -2, UV_TYPES);
}

/* core.compile(normalized [, text]) -> schema. The argument comes from
** bitwire/schema.lua's normalize, which has validated it; 'text' is the
** same description as a Lua constructor, kept for states that adopt it. */
int bw_schemacompile (lua_State *L) {
  LSchema *holder;
  bw_Schema *S;
  lua_Integer ti, nt;
  char msg[MAXMSG];
  luaL_checktype(L, 1, LUA_TTABLE);
  S = bw_schemanew();
  if (S == NULL) return luaL_error(L, "not enough memory");
  /* a holder owns S until sealing, so a Lua error cannot leak it */
  holder = (LSchema *)lua_newuserdatauv(L, sizeof(LSchema), 0);
  holder->S = S;
  memset(&holder->claims, 0, sizeof(holder->claims));
  bw_writerinit(&holder->w, NULL, 0);
  luaL_setmetatable(L, SCHEMA_MT);
  lua_getfield(L, 1, "types");
  luaL_checktype(L, -1, LUA_TTABLE);
  nt = (lua_Integer)lua_rawlen(L, -1);
  for (ti = 1; ti <= nt; ti++) {  /* types first: fields refer to them */
    uint32_t nm;
    lua_rawgeti(L, -1, ti);
    lua_getfield(L, -1, "name");
    nm = addname(L, S, -1);
    if (bw_schemaaddtype(S, nm) == BW_NONE)
      return luaL_error(L, "not enough memory");
    lua_pop(L, 2);
  }
  for (ti = 1; ti <= nt; ti++) {
    lua_Integer fj, nf;
    uint32_t first;
    lua_rawgeti(L, -1, ti);
    lua_getfield(L, -1, "fields");
    nf = (lua_Integer)lua_rawlen(L, -1);
    first = bw_schemaaddfields(S, (uint32_t)nf);
    if (first == BW_NONE) return luaL_error(L, "not enough memory");
    S->types[ti - 1].first = first;
    S->types[ti - 1].count = (uint32_t)nf;
    for (fj = 1; fj <= nf; fj++) {
      lua_rawgeti(L, -1, fj);
      fillfield(L, S, first + (uint32_t)fj - 1, lua_gettop(L));
      lua_pop(L, 1);
    }
    lua_pop(L, 2);
  }
  if (lua_type(L, 2) == LUA_TSTRING) {
    size_t len;
    const char *d = lua_tolstring(L, 2, &len);
    if (!bw_schemasetdesc(S, d, len)) return luaL_error(L, "not enough memory");
  }
  if (bw_schemaseal(S, msg, sizeof(msg)) != BW_OK)
    return luaL_error(L, "bitwire.schema: %s", msg);
  holder->S = NULL;  /* hand the reference to the real userdata */
  bw_pushschema(L, S);
  return 1;
}

/* }========================================================== */
