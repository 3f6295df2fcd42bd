/*
** lbw_methods.c - schema methods: encode, decode, sizes, names
** See LICENSE for copyright and terms.
*/

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"

#include "bw_blob.h"
#include "lbw_schema.h"


/* {===================== schema methods ===================== */

uint32_t bw_checktype (lua_State *L, int arg) {
  uint32_t t;
  lua_getiuservalue(L, 1, UV_TYPES);
  lua_pushvalue(L, arg);
  lua_rawget(L, -2);
  if (!lua_isinteger(L, -1)) {
    luaL_checkstring(L, arg);
    luaL_error(L, "unknown type '%s'", lua_tostring(L, arg));
  }
  t = (uint32_t)lua_tointeger(L, -1);
  lua_pop(L, 2);
  return t;
}

#define GUARD_MT "bitwire.SchemaCall"

/* __close of a schema's guard: the call that closed it is over, unless
** it is one a dead coroutine left open (bw_abandoned) and another call
** has taken the schema since. */
static int guardclose (lua_State *L) {
  LSchema *ls = *(LSchema **)lua_touserdata(L, 1);
  if (ls->owner == L) {
    ls->busy = 0;
    ls->owner = NULL;
    lua_pushnil(L);  /* hold no thread past the call */
    lua_setiuservalue(L, 1, 1);
  }
  return 0;
}

void bw_newguard (lua_State *L, LSchema *ls) {
  *(LSchema **)lua_newuserdatauv(L, sizeof(LSchema *), 2) = ls;
  if (luaL_newmetatable(L, GUARD_MT)) {
    lua_pushcfunction(L, guardclose);
    lua_setfield(L, -2, "__close");
  }
  lua_setmetatable(L, -2);
  /* the schema, held by the guard a call keeps on its stack: a frame
  ** decode replaces its schema at index 1 with the one a packet's tag
  ** names, and a caller's temporary would be collected under the call */
  lua_pushvalue(L, -2);
  lua_setiuservalue(L, -2, 2);
  lua_setiuservalue(L, -2, UV_GUARD);
}

/* A coroutine that raises is dead and never unwinds its stack, so Lua
** closes none of its to-be-closed slots: a call it was making is over
** with its guard still open. A call in progress has its thread running
** or resuming another, never dead (schema calls do not yield). */
int bw_abandoned (lua_State *L, const LSchema *ls) {
  int st;
  if (ls->owner == NULL || ls->owner == L) return 0;
  st = lua_status(ls->owner);
  return st != LUA_OK && st != LUA_YIELD;
}

static int noop (lua_State *L) {
  (void)L;
  return 0;
}

/* One call at a time: a call made during another on the same schema (by
** a finalizer an allocation ran, a hook, a __tostring an error message
** ran) would overwrite the buffers the first is using. The guard, a
** to-be-closed slot, ends the call however it leaves. */
void bw_entercall (lua_State *L, LSchema *ls) {
  if (ls->busy && !bw_abandoned(L, ls))
    luaL_error(L, "schema in use: called during another call on it (from a "
               "finalizer, hook or metamethod)");
  luaL_checkstack(L, 2 * LUA_MINSTACK, "schema call");
  lua_getiuservalue(L, 1, UV_GUARD);
  lua_pushthread(L);  /* anchors 'owner' while the call may be open */
  lua_setiuservalue(L, -2, 1);
  lua_toclose(L, -1);
  ls->owner = L;
  ls->busy = 1;
  /* What the guard's __close call needs as the call ends, made now: made
  ** then, a memory error skips the __close, leaving the schema in use for
  ** good (its __gc refusing: a leak). A call leaves its CallInfo and the
  ** stack keeps what was asked. Made busy: a call hook runs here. */
  lua_pushcfunction(L, noop);
  lua_call(L, 0, 0);
}

static void initfields (lua_State *L, Ctx *c, LSchema *ls, uint32_t version,
                        int stackkeys) {
  c->L = L;
  c->S = ls->S;
  c->self = ls->id;
  c->w = &ls->w;
  c->claims = &ls->claims;
  c->plan = &ls->plan;
  c->tapes = &ls->tapes;
  c->values = (uint64_t)MAXVALUES;
  c->version = version;
  c->nframes = 0;
  c->head = NULL;
  c->code = BW_OK;
  c->msg[0] = '\0';
  lua_getiuservalue(L, 1, UV_NAMES);
  c->names = lua_gettop(L);
  c->keys = 0;
  c->checked = 0;
  c->share = 0;
  c->strict = c->S->strict;
  c->pending = 0;
  /* nesting is bounded by BW_MAXDEPTH: reserve the stack once */
  luaL_checkstack(L, 4 * BW_MAXDEPTH + 16 + STACKKEYS, "schema nesting");
  if (stackkeys && c->S->nnames <= STACKKEYS) {  /* a few names: copies on the stack are
                                       the cheapest keys to push */
    uint32_t i;
    for (i = 0; i < c->S->nnames; i++)
      lua_rawgeti(L, c->names, (lua_Integer)i + 1);
    c->keys = c->names + 1;
  }
}

LSchema *bw_takeschema (lua_State *L, int nargs) {
  LSchema *ls = bw_checkschema(L, 1);
  lua_settop(L, nargs);
  bw_entercall(L, ls);
  return ls;
}

void bw_initheld (lua_State *L, Ctx *c, LSchema *ls, uint32_t version) {
  initfields(L, c, ls, version, 1);
}

void bw_initinner (lua_State *L, Ctx *c, LSchema *ls, uint32_t version) {
  initfields(L, c, ls, version, 0);
}

/* Push a new table with weak keys. */
static void newweak (lua_State *L) {
  lua_createtable(L, 0, 0);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
}

/* The known table is the state's, not a schema's: a table decoded by one
** schema and then refilled by another (a reload's, or a second schema
** of the same definitions) has one entry, the last one's, so no schema
** reads it as what it decoded before. */
static const char KNOWN = 'k';  /* its address: the registry's key */
static const char IDS = 'i';    /* the last schema id given */

void bw_pushknown (lua_State *L) {
  if (lua_getiuservalue(L, 1, UV_KNOWN) == LUA_TTABLE) return;
  lua_pop(L, 1);
  bw_pushweakreg(L, &KNOWN, 1);
  lua_pushvalue(L, -1);
  lua_setiuservalue(L, 1, UV_KNOWN);
}

lua_Integer bw_newschemaid (lua_State *L) {
  lua_Integer id = 0;
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &IDS) == LUA_TNUMBER)
    id = lua_tointeger(L, -1);
  lua_pop(L, 1);
  if (id >= BW_MAXSCHEMAID) luaL_error(L, "too many schemas made in this Lua state");
  lua_pushinteger(L, ++id);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &IDS);
  return id;
}

int bw_pushweakreg (lua_State *L, const void *key, int make) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, key) == LUA_TTABLE) return 1;
  if (!make) return 0;
  lua_pop(L, 1);
  newweak(L);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, key);
  return 1;
}

/* The record at 'v' as type 't', as a delta when 'b' (a baseline) is set.
** A delta's walk over tables sends a value equal to the baseline's as
** kept, and only a baseline that is a value of the type (one with a tape)
** vouches for its values: against any other, a value that is no value of
** the type raises as its full encode does. That check follows the walk
** (whose own failures keep their bits in the delta), or, for a type
** without tapes, comes first. */
void bw_encodebody (Ctx *c, uint32_t t, int v, int b) {
  uint64_t start = bw_bitswritten(c->w);
  int tape;
  if (!b) {
    bw_encstruct(c, t, v);
    return;
  }
  tape = bw_enctape(c, t, v, b);
  if (tape == 1) return;
  if (tape == -1) {  /* no tapes: a full encode checks */
    bw_encstruct(c, t, v);
    bw_writerrewind(c->w, start);
  }
  bw_encdeltastruct(c, t, v, b);
  if (tape == -2 && !bw_tapevalue(c, t, v)) {
    bw_writerrewind(c->w, start);
    bw_encstruct(c, t, v);  /* raises */
    bw_writerrewind(c->w, start);
    bw_encdeltastruct(c, t, v, b);
  }
}

/* The most unknown keys a strict failure names (the least, sorted). */
#define STRICTNAMES 8

/* Push the strict failure of the record at 'idx' of type 't': every key
** the type lacks, so one run shows every misspelling (up to STRICTNAMES,
** sorted, and how many more). */
static void pushstrictfail (lua_State *L, const bw_Schema *S, uint32_t t,
                            int idx) {
  const char *least[STRICTNAMES];
  size_t n = 0, total = 0, i;
  int anchor;
  luaL_Buffer B;
  lua_newtable(L);  /* keeps the names 'least' points into */
  anchor = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    const char *k;
    size_t len, j;
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING) {
      k = lua_tolstring(L, -1, &len);
      if (bw_fieldnamed(S, t, k, len) != NULL) continue;
      lua_pushfstring(L, "'%s'", k);
    }
    else luaL_tolstring(L, -1, NULL);
    k = lua_tostring(L, -1);
    lua_rawseti(L, anchor, (lua_Integer)++total);
    if (n == STRICTNAMES && strcmp(k, least[n - 1]) >= 0) continue;
    j = n < STRICTNAMES ? n++ : n - 1;  /* full: the greatest goes */
    for (; j > 0 && strcmp(least[j - 1], k) > 0; j--) least[j] = least[j - 1];
    least[j] = k;
  }
  luaL_buffinit(L, &B);
  for (i = 0; i < n; i++) {
    if (i > 0) luaL_addstring(&B, ", ");
    luaL_addstring(&B, least[i]);
  }
  if (total > n) {
    lua_pushfstring(L, " and %I more", (lua_Integer)(total - n));
    luaL_addvalue(&B);
  }
  luaL_pushresult(&B);
  lua_pushfstring(L, "unknown key%s %s (strict: %s declares no such field%s)",
                  total > 1 ? "s" : "", lua_tostring(L, -1),
                  S->names[S->types[t].name], total > 1 ? "s" : "");
  lua_replace(L, anchor);
  lua_settop(L, anchor);
}

int bw_strictkeys (lua_State *L, const bw_Schema *S, uint32_t t, int idx) {
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    size_t len;
    const char *k;
    lua_pop(L, 1);
    k = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
    if (k == NULL || bw_fieldnamed(S, t, k, len) == NULL) {
      lua_pop(L, 1);
      pushstrictfail(L, S, t, idx);
      return 1;
    }
  }
  return 0;
}

void bw_strictcheck (Ctx *c, uint32_t t, int idx) {
  if (bw_strictkeys(c->L, c->S, t, idx))
    bw_encerror(c, "%s", lua_tostring(c->L, -1));
}

/* 1 if values of field 'f' hold records (nested in arrays or not). */
static int holdsrecords (const bw_Schema *S, const bw_Field *f) {
  while (f->kind == BW_KARRAY || f->kind == BW_KSPARSE) f = &S->fields[f->ref];
  return f->kind == BW_KSTRUCT;
}

void bw_strictvalue (Ctx *c, const bw_Field *f, int idx) {
  lua_State *L = c->L;
  const bw_Schema *S = c->S;
  if (!lua_istable(L, idx) || !holdsrecords(S, f)) return;
  luaL_checkstack(L, 6, "stack overflow");
  if (f->kind == BW_KSTRUCT) {  /* its records first, as encode ends them */
    const bw_Type *ty = &S->types[f->ref];
    Frame *fr = enterframe(c);
    uint32_t i;
    for (i = ty->first; i < ty->first + ty->count; i++) {
      const bw_Field *g = &S->fields[i];
      if (g->name == BW_NONE || !bw_fieldpresent(g, c->version)
          || !holdsrecords(S, g))
        continue;
      setframe(fr, g);
      pushkey(c, g->name);
      lua_rawget(L, idx);
      bw_strictvalue(c, g, lua_gettop(L));
      lua_pop(L, 1);
    }
    fr->name = BW_NONE;  /* the path of the record itself */
    fr->index = -1;
    bw_strictcheck(c, f->ref, idx);
    c->nframes--;
  }
  else {  /* an array's elements, a sparse array's slots */
    lua_pushnil(L);
    while (lua_next(L, idx)) {
      if (lua_isinteger(L, -2)) {  /* under the element's path */
        pushframe(c, BW_NONE, lua_tointeger(L, -2));
        bw_strictvalue(c, &S->fields[f->ref], lua_gettop(L));
        popframe(c);
      }
      lua_pop(L, 1);
    }
  }
}

/* Write the message id of type 't', or raise when it is not a message. */
void bw_writemessageid (Ctx *c, uint32_t t) {
  uint32_t id = bw_msgid(c->S, t);
  if (id == BW_NONE)
    luaL_error(c->L, "'%s' is not a message (not in the schema's 'messages')",
               c->S->names[c->S->types[t].name]);
  bw_writebits(c->w, id, c->S->typebits);
}

/* Read a message id: the type in '*t' and its name pushed, or 0 with the
** failure in 'c'. */
int bw_readmessageid (Ctx *c, uint32_t *t) {
  uint64_t start = c->r.pos;
  uint64_t id = bw_readbits(&c->r, c->S->typebits);
  if (c->r.status != BW_OK) return bw_readfail(c);
  *t = bw_msgtype(c->S, id);
  if (*t == BW_NONE)
    return bw_decsayi(c, BW_ETAG, start, W_MSGTYPE, (int64_t)id,
                      (int64_t)c->S->nmessages - 1, 0);
  lua_rawgeti(c->L, c->names, (lua_Integer)c->S->types[*t].name + 1);
  return 1;
}

/* Encode value at 'v' as type 't' (and its id first if 'msg'). */
static void encodeinto (Ctx *c, uint32_t t, int v, int msg, const Opts *o) {
  int b = bw_optbaseline(c->L, o);
  bw_writerreset(c->w);
  if (msg) bw_writemessageid(c, t);
  bw_encodebody(c, t, v, b);
}

int bw_pushencoded (lua_State *L, bw_Writer *w) {
  size_t len;
  const uint8_t *p = bw_writerdata(w, &len);
  lua_pushlstring(L, len ? (const char *)p : "", len);
  return 1;
}

/* The common part of encode, bits and encode_message: arguments (self,
** name, value [, opts]); returns the writer holding the packet. */
static bw_Writer *encodeargs (lua_State *L, int msg) {
  LSchema *ls = bw_takeschema(L, 4);  /* an omitted value is nil, not the
                                         names array */
  uint32_t t = bw_checktype(L, 2);
  Opts o;
  Ctx c;
  bw_readopts(L, 4, OPTS_ENCODE, &o);
  bw_initheld(L, &c, ls, bw_optversion(L, &o, ls->S));
  c.strict = bw_optstrict(L, &o, c.strict);
  encodeinto(&c, t, 3, msg, &o);
  return c.w;
}

/* s:encode(name, value [, opts]) -> bytes */
static int schema_encode (lua_State *L) {
  return bw_pushencoded(L, encodeargs(L, 0));
}

/* s:bits(name, value [, opts]) -> exact size in bits */
static int schema_bits (lua_State *L) {
  lua_pushinteger(L, (lua_Integer)bw_bitswritten(encodeargs(L, 0)));
  return 1;
}

/* s:encode_message(name, value [, opts]) -> bytes, with the type id */
static int schema_encodemessage (lua_State *L) {
  return bw_pushencoded(L, encodeargs(L, 1));
}

int bw_pushdecodeerror (lua_State *L, Ctx *c) {
  lua_pushnil(L);
  lua_pushstring(L, c->msg);
  lua_pushstring(L, bw_codename(c->code));
  return 3;
}

/* Decode type 't' from c->r, against the baseline at 'b' if set; pushes
** the value or returns 0. */
int bw_decodefrom (Ctx *c, uint32_t t, int into, int b) {
  int ok;
  if (into) bw_claimsstart(c->claims);
  ok = bw_decodetop(c, t, into, b);
  if (into) bw_claimsend(c->claims);
  if (ok) return 1;
  if (c->code == BW_OK) bw_readfail(c);
  return 0;
}

/* The decode options at 'arg' read into 'o': into and baseline. */
static void optdecode (lua_State *L, int arg, Opts *o, int *into, int *b) {
  bw_readopts(L, arg, OPTS_DECODE, o);
  *into = bw_optinto(L, o);
  *b = bw_optbaseline(L, o);
}


/* s:decode(name, bytes [, opts]) -> value | nil, message, code */
static int schema_decode (lua_State *L) {
  LSchema *ls = bw_takeschema(L, 4);
  uint32_t t = bw_checktype(L, 2);
  size_t len;
  const char *s = luaL_checklstring(L, 3, &len);
  int into, b;
  Opts o;
  Ctx c;
  optdecode(L, 4, &o, &into, &b);
  bw_initheld(L, &c, ls, bw_optversion(L, &o, ls->S));
  bw_optdecode(L, &o, &c);
  bw_readerinit(&c.r, s, len);
  if (!bw_decodefrom(&c, t, into, b)) return bw_pushdecodeerror(L, &c);
  return 1;
}

/* s:decode_message(bytes [, opts]) -> name, value | nil, message, code */
static int schema_decodemessage (lua_State *L) {
  LSchema *ls = bw_takeschema(L, 3);
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  int into, b;
  uint32_t t;
  Opts o;
  Ctx c;
  optdecode(L, 3, &o, &into, &b);
  bw_initheld(L, &c, ls, bw_optversion(L, &o, ls->S));
  bw_optdecode(L, &o, &c);
  bw_readerinit(&c.r, s, len);
  if (!bw_readmessageid(&c, &t)) return bw_pushdecodeerror(L, &c);
  if (!bw_decodefrom(&c, t, into, b)) return bw_pushdecodeerror(L, &c);
  return 2;
}

/* s:maxbits(name) -> worst-case bits, or nil when too large to count */
static int schema_maxbits (lua_State *L) {
  LSchema *ls = bw_checkschema(L, 1);
  uint32_t t = bw_checktype(L, 2);
  uint64_t m = ls->S->types[t].maxbits;
  if (m == BW_UNBOUNDED || m > (uint64_t)INT64_MAX) lua_pushnil(L);
  else lua_pushinteger(L, (lua_Integer)m);
  return 1;
}

/* s:fingerprint() -> 16 hex digits of the wire form's hash */
static int schema_fingerprint (lua_State *L) {
  LSchema *ls = bw_checkschema(L, 1);
  char buf[17];
  snprintf(buf, sizeof(buf), "%016" PRIx64, ls->S->fingerprint);
  lua_pushstring(L, buf);
  return 1;
}

/* s:types() -> sorted list of type names */
static int schema_types (lua_State *L) {
  LSchema *ls = bw_takeschema(L, 1);  /* it allocates as it reads S */
  uint32_t i;
  lua_createtable(L, (int)ls->S->ntypes, 0);
  for (i = 0; i < ls->S->ntypes; i++) {
    uint32_t nm = ls->S->types[i].name;
    lua_pushlstring(L, ls->S->names[nm], ls->S->namelens[nm]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static int schema_version (lua_State *L) {
  LSchema *ls = bw_checkschema(L, 1);
  lua_pushinteger(L, (lua_Integer)ls->S->version);
  return 1;
}

static int schema_tostring (lua_State *L) {
  LSchema *ls = (LSchema *)luaL_checkudata(L, 1, SCHEMA_MT);
  if (ls->S == NULL) lua_pushstring(L, "bitwire.Schema (released)");
  else lua_pushfstring(L, "bitwire.Schema (%s types, %p)",
                       lua_pushfstring(L, "%d", (int)ls->S->ntypes),
                       (void *)ls->S);
  return 1;
}

/* }========================================================== */


static const luaL_Reg schema_methods[] = {
  {"encode", schema_encode},
  {"decode", schema_decode},
  {"encode_message", schema_encodemessage},
  {"decode_message", schema_decodemessage},
  {"bits", schema_bits},
  {"maxbits", schema_maxbits},
  {"fingerprint", schema_fingerprint},
  {"types", schema_types},
  {"version", schema_version},
  {NULL, NULL}
};

void bw_openschema (lua_State *L) {
  if (luaL_newmetatable(L, SCHEMA_MT)) {
    luaL_newlib(L, schema_methods);
    luaL_setfuncs(L, bw_framemethods, 0);
    luaL_setfuncs(L, bw_sharemethods, 0);
    luaL_setfuncs(L, bw_programmethods, 0);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, bw_schemagc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, schema_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
  lua_pushcfunction(L, bw_schemacompile);
  lua_setfield(L, -2, "compile");
  lua_pushcfunction(L, bw_schemasetdesctext);
  lua_setfield(L, -2, "_setdesc");
  luaL_setfuncs(L, bw_sharefuncs, 0);
  luaL_setfuncs(L, bw_framefuncs, 0);
  bw_openoptions(L);
  lua_pushinteger(L, MAXVALUES);
  lua_setfield(L, -2, "MAX_VALUES");
  bw_pushwords(L);
  lua_setfield(L, -2, "formats");
  lua_getfield(L, -1, "limits");  /* what an input may hold */
  lua_pushinteger(L, (lua_Integer)MAXENCODE);
  lua_setfield(L, -2, "packet");
  lua_pushinteger(L, (lua_Integer)BW_BLOBMAX);
  lua_setfield(L, -2, "blob");
  lua_pop(L, 1);
}
