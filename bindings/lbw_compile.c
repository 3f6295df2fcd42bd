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
  if (ls->busy && !bw_abandoned(L, ls))
    luaL_error(L, "schema in use: not released during a call on it");
  bw_writerfree(&ls->w);
  bw_claimsfree(&ls->claims);
  bw_flatplanfree(&ls->plan);
  bw_tapesfree(&ls->tapes);
  bw_schemarelease(ls->S);
  ls->S = NULL;
  return 0;
}

/* {===================== descriptions to specs ===================== */
/* Only the shape of the Lua tables is looked at here; every rule about the
** values is core/bw_compile.c's. */

#define ERRPREFIX "bitwire.schema: "

typedef struct Walk {
  lua_State   *L;
  bw_Schema   *S;
  bw_FieldSpec deep;   /* stands for elements nested past the limit */
  int          anchor;  /* a table keeping what specs point into */
  lua_Integer  nanchor;
  bw_SchemaError     e;
} Walk;

/* Keep the value on top (popped) alive until the field is added. */
static void keep (Walk *w) {
  lua_rawseti(w->L, w->anchor, ++w->nanchor);
}

static void walkerror (Walk *w) {
  luaL_error(w->L, ERRPREFIX "%s", w->e.msg);
}

/* The value at 'idx' (a table becomes an empty, non-plain list). */
static void tovalue (lua_State *L, int idx, bw_Value *v) {
  memset(v, 0, sizeof(*v));
  switch (lua_type(L, idx)) {
    case LUA_TNIL: v->type = BW_VNONE; break;
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) {
        v->type = BW_VINT;
        v->i = (int64_t)lua_tointeger(L, idx);
      }
      else {
        v->type = BW_VFLOAT;
        v->d = (double)lua_tonumber(L, idx);
      }
      break;
    case LUA_TBOOLEAN: v->type = BW_VBOOL; v->i = lua_toboolean(L, idx); break;
    case LUA_TSTRING: v->type = BW_VSTRING; v->s = lua_tolstring(L, idx, &v->len); break;
    case LUA_TTABLE: v->type = BW_VLIST; break;
    default: v->type = BW_VOTHER; v->s = luaL_typename(L, idx); break;
  }
}

/* Push the key at 'idx' as the compiler shows a value in a message
** (bw_valuetext: a description's key may hold any byte) and return it. */
static const char *keytext (lua_State *L, int idx) {
  bw_Value v;
  tovalue(L, idx, &v);
  return lua_pushstring(L, bw_valuetext(&v).s);
}

/* The table at 'idx' as a list of values; its items live in a kept
** userdata. */
static void tolist (Walk *w, int idx, bw_Value *v) {
  lua_State *L = w->L;
  lua_Integer i, n = (lua_Integer)lua_rawlen(L, idx), keys = 0;
  bw_Value *items;
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    keys++;
  }
  if (n > BW_MAXFIELDS + 1) n = BW_MAXFIELDS + 1;  /* the compiler refuses */
  items = (bw_Value *)lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(bw_Value), 0);
  keep(w);
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, i);
    tovalue(L, -1, &items[i - 1]);   /* strings stay in the table */
    lua_pop(L, 1);
  }
  memset(v, 0, sizeof(*v));
  v->type = BW_VLIST;
  v->items = items;
  v->len = (size_t)n;
  v->plain = keys == n;
}

/* Fill 'f' from the field table at 't' ('named': a record's field, else
** an element). Pushes what 'f' points into (lists, element specs). */
static void tospec (Walk *w, int t, bw_FieldSpec *f, int named,
                    unsigned depth) {
  lua_State *L = w->L;
  int npos = named ? 2 : 1;
  luaL_checkstack(L, 8, "schema nesting");
  memset(f, 0, sizeof(*f));
  if (named) {
    int keyed = 0;
    if (lua_rawgeti(L, t, 1) == LUA_TSTRING) {
      const char *s = lua_tostring(L, -1);
      keyed = (strcmp(s, "align") == 0 || strcmp(s, "check") == 0)
              && lua_rawgeti(L, t, 2) == LUA_TNIL;
      if (keyed) lua_pop(L, 1);
    }
    lua_pop(L, 1);
    lua_rawgeti(L, t, keyed ? 1 : 2);
    tovalue(L, -1, &f->kind);
    lua_pop(L, 1);
    if (!keyed) {
      lua_rawgeti(L, t, 1);
      tovalue(L, -1, &f->name);
      lua_pop(L, 1);
    }
  }
  else {
    lua_rawgeti(L, t, 1);
    tovalue(L, -1, &f->kind);
    lua_pop(L, 1);
  }
  lua_pushnil(L);
  while (lua_next(L, t)) {
    int k;
    if (lua_type(L, -2) != LUA_TSTRING) {
      if (lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1
          && lua_tointeger(L, -2) <= npos) {
        lua_pop(L, 1);
        continue;
      }
      if (f->unknown == NULL) {   /* the compiler reports it */
        const char *s = lua_pushfstring(L, "[%s]", luaL_tolstring(L, -2, NULL));
        f->unknown = s;
        f->unknownlen = strlen(s);
        keep(w);
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
      continue;
    }
    {
      size_t len;
      const char *key = lua_tolstring(L, -2, &len);
      k = bw_optionindex(key, len);
      if (k < 0) {
        if (f->unknown == NULL) { f->unknown = key; f->unknownlen = len; }
        lua_pop(L, 1);
        continue;
      }
    }
    if ((k == BW_OVALUES || k == BW_OTIERS) && lua_istable(L, -1)) {
      tolist(w, lua_gettop(L), &f->opt[k]);
      lua_pop(L, 1);
      continue;
    }
    tovalue(L, -1, &f->opt[k]);
    if (k == BW_OOF && (lua_isstring(L, -1) || lua_istable(L, -1))
        && !lua_isnumber(L, -1)) {
      bw_FieldSpec *el;
      if (depth > BW_MAXDEPTH) f->of = &w->deep;
      else {
        el = (bw_FieldSpec *)lua_newuserdatauv(L, sizeof(bw_FieldSpec), 0);
        keep(w);
        if (lua_istable(L, -1)) tospec(w, lua_gettop(L), el, 0, depth + 1);
        else {
          memset(el, 0, sizeof(*el));
          tovalue(L, -1, &el->kind);
        }
        f->of = el;
      }
    }
    lua_pop(L, 1);
  }
}

/* Type names, sorted so ids and the fingerprint do not depend on the
** description's hash order. */
typedef struct TName { const char *s; size_t len; } TName;

static int tnamecmp (const void *a, const void *b) {
  const TName *x = (const TName *)a, *y = (const TName *)b;
  int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);
  return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

static int isoption (lua_State *L, int idx) {
  const char *k;
  if (lua_type(L, idx) != LUA_TSTRING) return 0;
  k = lua_tostring(L, idx);
  return strcmp(k, "messages") == 0 || strcmp(k, "message_bits") == 0
         || strcmp(k, "options") == 0;
}

/* Schema options: strict (boolean), from the description or the call. */
static void schemaoptions (Walk *w, int t) {
  lua_State *L = w->L;
  if (lua_isnil(L, t)) return;
  if (!lua_istable(L, t)) luaL_error(L, ERRPREFIX "'options' must be a table");
  lua_pushnil(L);
  while (lua_next(L, t)) {
    if (lua_type(L, -2) != LUA_TSTRING || strcmp(lua_tostring(L, -2), "strict") != 0)
      luaL_error(L, ERRPREFIX "unknown schema option '%s'", keytext(L, -2));
    if (!lua_isboolean(L, -1))
      luaL_error(L, ERRPREFIX "'strict' must be a boolean");
    w->S->strict = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
}

static void walk (Walk *w, int d, int opts) {
  lua_State *L = w->L;
  bw_Schema *S = w->S;
  TName *names;
  uint32_t i, n = 0, cap = 0;
  bw_Value bits, list;
  if (!lua_istable(L, d))
    luaL_error(L, ERRPREFIX "description must be a table, got %s",
               luaL_typename(L, d));
  lua_pushnil(L);
  while (lua_next(L, d)) {
    lua_pop(L, 1);
    if (!isoption(L, -1)) cap++;
  }
  names = (TName *)lua_newuserdatauv(L, (cap ? cap : 1) * sizeof(TName), 0);
  lua_pushnil(L);
  while (lua_next(L, d)) {
    lua_pop(L, 1);
    if (isoption(L, -1)) continue;
    if (lua_type(L, -1) != LUA_TSTRING) {
      bw_Value v;
      tovalue(L, -1, &v);
      if (v.type == BW_VNONE || v.type == BW_VLIST) {
        v.type = BW_VOTHER;
        v.s = luaL_tolstring(L, -1, NULL);
      }
      bw_schemadeclare(S, &v, &w->e);
      walkerror(w);
    }
    names[n].s = lua_tolstring(L, -1, &names[n].len);
    n++;
  }
  if (n == 0) luaL_error(L, ERRPREFIX "description has no types");
  qsort(names, n, sizeof(TName), tnamecmp);
  for (i = 0; i < n; i++) {
    bw_Value v = { BW_VSTRING, 0, 0, 0, names[i].s, names[i].len, NULL };
    if (bw_schemadeclare(S, &v, &w->e) == BW_NONE) walkerror(w);
    lua_pushlstring(L, names[i].s, names[i].len);
    if (lua_rawget(L, d) != LUA_TTABLE)
      luaL_error(L, ERRPREFIX "%s: must be a list of fields", names[i].s);
    lua_pop(L, 1);
  }
  for (i = 0; i < n; i++) {
    int top = lua_gettop(L), t = top + 1;
    lua_Integer j, nf;
    lua_pushlstring(L, names[i].s, names[i].len);
    lua_rawget(L, d);
    nf = (lua_Integer)lua_rawlen(L, t);
    lua_pushnil(L);
    while (lua_next(L, t)) {
      lua_pop(L, 1);
      if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1
          || lua_tointeger(L, -1) > nf)
        luaL_error(L, ERRPREFIX "%s: fields must be a list, found key %s",
                   names[i].s, keytext(L, -1));
    }
    if (nf > BW_MAXFIELDS) nf = BW_MAXFIELDS + 1;  /* the compiler refuses */
    if (bw_schemabegin(S, i, (uint32_t)nf, &w->e) != BW_OK) walkerror(w);
    for (j = 1; j <= nf; j++) {
      bw_FieldSpec f;
      if (lua_rawgeti(L, t, j) != LUA_TTABLE)
        luaL_error(L, ERRPREFIX "%s: field must be a table, got %s",
                   names[i].s, luaL_typename(L, -1));
      tospec(w, lua_gettop(L), &f, 1, 1);
      if (bw_schemaaddfield(S, &f, &w->e) != BW_OK) walkerror(w);
      lua_settop(L, t);
      if (w->nanchor > 0) {   /* a fresh anchor for the next field */
        lua_newtable(L);
        lua_replace(L, w->anchor);
        w->nanchor = 0;
      }
    }
    lua_settop(L, top);
  }
  lua_getfield(L, d, "messages");
  if (lua_istable(L, -1)) tolist(w, lua_gettop(L), &list);
  else tovalue(L, -1, &list);
  lua_getfield(L, d, "message_bits");
  tovalue(L, -1, &bits);
  if (list.type != BW_VNONE || bits.type != BW_VNONE)
    if (bw_schemamessages(S, &list, &bits, &w->e) != BW_OK) walkerror(w);
  lua_getfield(L, d, "options");
  schemaoptions(w, lua_gettop(L));
  schemaoptions(w, opts);
}

/* }========================================================== */


/* Push a schema userdata holding no program yet (it reads as released).
** It is made before a caller hands it a reference: a memory error here
** then loses none (a handle stays live, a compile's holder frees it). */
LSchema *bw_newschema (lua_State *L) {
  LSchema *ls = (LSchema *)lua_newuserdatauv(L, sizeof(LSchema), NUV);
  memset(ls, 0, sizeof(LSchema));
  bw_writerinit(&ls->w, NULL, 0);
  luaL_setmetatable(L, SCHEMA_MT);
  return ls;
}

/* Give 'ls' (on top) its program 'S', taking over one reference, and the
** per-state caches: the names array and the type index. */
void bw_setschema (lua_State *L, LSchema *ls, bw_Schema *S) {
  uint32_t i;
  ls->S = S;
  bw_flatplanmake(&ls->plan, S);
  bw_tapesmake(&ls->tapes, S);
  bw_writerinitgrow(&ls->w, bw_plainalloc, NULL, MAXENCODE);
  bw_newguard(L, ls);
  ls->id = bw_newschemaid(L);
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

/* core.compile(description [, options]) -> schema. */
int bw_schemacompile (lua_State *L) {
  LSchema *holder, *ls;
  bw_Schema *S;
  Walk w;
  lua_settop(L, 2);
  memset(&w, 0, sizeof(w));
  /* a holder owns S until sealing, so a Lua error cannot leak it */
  holder = bw_newschema(L);
  S = holder->S = bw_schemanew();
  if (S == NULL) return luaL_error(L, "not enough memory");
  w.L = L;
  w.S = S;
  memset(&w.deep, 0, sizeof(w.deep));
  w.deep.kind = bw_vstr("array");
  w.deep.opt[BW_OOF].type = BW_VLIST;
  w.deep.opt[BW_OCOUNT] = bw_vint(1);
  w.deep.of = &w.deep;
  lua_newtable(L);
  w.anchor = lua_gettop(L);
  w.nanchor = 0;
  walk(&w, 1, 2);
  if (bw_schemafinish(S, &w.e) != BW_OK) walkerror(&w);
  ls = bw_newschema(L);
  holder->S = NULL;  /* hand the reference to the real userdata */
  bw_setschema(L, ls, S);
  return 1;
}

/* core._setdesc(schema, text): keep the description as text for states
** that adopt the schema; once, before it is shared. */
int bw_schemasetdesctext (lua_State *L) {
  LSchema *ls;
  size_t len;
  /* first: a number made a string runs finalizers, which may release it */
  const char *d = luaL_checklstring(L, 2, &len);
  ls = bw_checkschema(L, 1);
  if (ls->S->desc != NULL || bw_schemarefs(ls->S) > 1)  /* shared */
    return luaL_error(L, "description already kept");
  if (!bw_schemasetdesc(ls->S, d, len)) return luaL_error(L, "not enough memory");
  return 0;
}

/* }========================================================== */
