/*
** lbw_blobread.c - s:unblob and s:blobview: reading validated blobs
** See LICENSE for copyright and terms.
*/

/*
** Both validate the whole blob first (bw_blobcheck, one forward pass), so
** the walks here trust every offset. A blob is read with the schema laid
** out at the blob's version and gives values of the current description:
** fields the blob has are read, fields it lacks get their default (or stay
** nil), fields removed since are dropped. A view reads a field only when it
** is indexed; records and arrays come back as views over the same string.
*/

#include <string.h>

#include "lauxlib.h"

#include "lbw_blob.h"

/* {===================== reading ===================== */

typedef struct Rd {
  lua_State *L;
  const bw_Schema *S;
  const bw_BlobLayout *B;
  const uint8_t *b;
  int names;
  uint64_t values;  /* what max_values leaves: tables and their values */
  size_t over;      /* where it ran out (0: it did not) */
} Rd;

/* Spend 'n' of max_values on the table read at 'p'; 0 (where noted) when
** they run out: a tiny blob of empty elements in long arrays may claim
** millions of tables, as a packet may, and is refused as decode refuses
** it, before they are made. */
static int rspend (Rd *c, uint64_t n, size_t p) {
  if (n > c->values) {
    if (c->over == 0) c->over = p;
    return 0;
  }
  c->values -= n;
  return 1;
}

static int rrecord (Rd *c, uint32_t t, size_t pos);

static void rscalar (Rd *c, const bw_BlobField *f, size_t p) {
  lua_State *L = c->L;
  const bw_Field *sf = &c->S->fields[f->sfield];
  switch (sf->kind) {
    case BW_KBOOL: lua_pushboolean(L, c->b[p]); break;
    case BW_KENUM:
      lua_rawgeti(L, c->names,
                  (lua_Integer)(sf->ref + bw_blobgeti(c->b + p, f->ctype)) + 1);
      break;
    case BW_KFLOAT: case BW_KFLOAT32: case BW_KFLOAT64: case BW_KANGLE:
      lua_pushnumber(L, (lua_Number)bw_blobgetf(c->b + p, f->ctype));
      break;
    default:
      lua_pushinteger(L, (lua_Integer)bw_blobgeti(c->b + p, f->ctype));
  }
}

/* Target of the (validated) relative offset at 'p'; 0 when null. */
static size_t rtarget (const uint8_t *b, size_t p) {
  int32_t off = (int32_t)(uint32_t)bw_blobloadu(b + p, 4);
  return off == 0 ? 0 : p + (size_t)off;
}

static uint32_t rcount (const uint8_t *b, size_t p) {
  return (uint32_t)bw_blobloadu(b + p + 4, 4);
}

/* Push the value of layout field 'f' at 'p'; 0 when max_values runs out
** (what is pushed then is the caller's to drop). */
static int rvalue (Rd *c, const bw_BlobField *f, size_t p) {
  lua_State *L = c->L;
  const bw_BlobLayout *B = c->B;
  switch (f->form) {
    case BW_BSCALAR: rscalar(c, f, p); return 1;
    case BW_BSTRING: case BW_BBYTES: {
      size_t t = rtarget(c->b, p);
      lua_pushlstring(L, t ? (const char *)c->b + t : "", rcount(c->b, p));
      return 1;
    }
    case BW_BFIXBYTES:
      lua_pushlstring(L, (const char *)c->b + p, f->count);
      return 1;
    case BW_BARRAY: case BW_BINLINE: {
      const bw_BlobField *e = &B->fields[f->ref];
      uint32_t n = f->form == BW_BINLINE ? f->count : rcount(c->b, p), i;
      size_t t = f->form == BW_BINLINE ? p : rtarget(c->b, p);
      if (!rspend(c, 1 + (uint64_t)n, p)) return 0;
      luaL_checkstack(L, 4, "blob nesting");
      lua_createtable(L, (int)n, 0);
      for (i = 0; i < n; i++, t += f->stride) {
        if (!rvalue(c, e, t)) return 0;
        lua_rawseti(L, -2, (lua_Integer)i + 1);
      }
      return 1;
    }
    case BW_BSPARSE: {
      const bw_BlobField *e = &B->fields[f->ref];
      uint32_t n = rcount(c->b, p), i;
      size_t t = rtarget(c->b, p);
      if (!rspend(c, 1 + (uint64_t)n, p)) return 0;
      luaL_checkstack(L, 4, "blob nesting");
      lua_createtable(L, 0, (int)n);
      for (i = 0; i < n; i++, t += f->stride) {
        if (!rvalue(c, e, t + f->voff)) return 0;
        lua_rawseti(L, -2, (lua_Integer)bw_blobloadu(c->b + t, 4) + 1);
      }
      return 1;
    }
    case BW_BRECORD: return rrecord(c, f->ref, p);
    case BW_BPTR: {
      size_t t = rtarget(c->b, p);
      if (t == 0) {
        lua_pushnil(L);
        return 1;
      }
      return rrecord(c, f->ref, t);
    }
    case BW_BQUAT: {
      int i;
      if (!rspend(c, 5, p)) return 0;
      lua_createtable(L, 4, 0);
      for (i = 0; i < 4; i++) {
        lua_pushnumber(L, (lua_Number)bw_blobgetf(c->b + p + 4 * (size_t)i,
                                                  BW_CF32));
        lua_rawseti(L, -2, i + 1);
      }
      return 1;
    }
    default: lua_pushnil(L); return 1;
  }
}

/* The current description's field 'sf' of the record at 'pos': read when
** the blob's layout has it, else its default; pushes nil when absent. 0
** as rvalue. */
static int rfield (Rd *c, uint32_t sfi, size_t pos) {
  const bw_Field *sf = &c->S->fields[sfi];
  uint32_t lf = c->B->map[sfi];
  const bw_BlobField *f;
  if (lf == BW_BLOBNONE) {
    if (sf->hasdefault) bw_pushfielddefault(c->L, c->S, sf);
    else lua_pushnil(c->L);
    return 1;
  }
  f = &c->B->fields[lf];
  if (f->presence != BW_BLOBNONE && c->b[pos + f->presence] == 0) {
    lua_pushnil(c->L);
    return 1;
  }
  return rvalue(c, f, pos + f->offset);
}

static int rrecord (Rd *c, uint32_t t, size_t pos) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  uint32_t i;
  if (!rspend(c, 1 + (uint64_t)ty->count, pos)) return 0;
  luaL_checkstack(L, 6, "blob nesting");
  lua_createtable(L, 0, (int)ty->count);
  for (i = ty->first; i < ty->first + ty->count; i++) {
    const bw_Field *sf = &c->S->fields[i];
    if (sf->name == BW_NONE || !bw_fieldpresent(sf, c->S->version)) continue;
    if (!rfield(c, i, pos)) return 0;
    if (lua_isnil(L, -1)) lua_pop(L, 1);
    else {
      lua_rawgeti(L, c->names, (lua_Integer)sf->name + 1);
      lua_insert(L, -2);
      lua_rawset(L, -3);
    }
  }
  return 1;
}

/* Validate the blob at 'arg' as type 't'; returns its layout (its userdata
** pushed), or NULL after pushing nil, message, code. */
static const bw_BlobLayout *openblob (lua_State *L, uint32_t t, int arg,
                                      const uint8_t **data) {
  size_t n;
  const char *s = luaL_checklstring(L, arg, &n);
  const bw_BlobLayout *B;
  bw_BlobLayout none;
  bw_BlobHeader h;
  bw_Error e;
  const char *why = NULL;
  uint32_t current = bw_checkschema(L, 1)->S->version;
  *data = (const uint8_t *)s;
  memset(&none, 0, sizeof(none));
  if (bw_blobheader(s, n, &h) == BW_OK) {
    /* every version past the current one lays out as the current one */
    uint32_t v = h.version < current ? h.version : current;
    char msg[MAXMSG];
    B = bw_blobtrylayout(L, v, msg, sizeof(msg));
    if (B == NULL) {  /* no blob of this schema names that version */
      lua_pushnil(L);
      lua_pushfstring(L, "version %I has no blob layout: %s (byte 16)",
                      (lua_Integer)v, msg);
      lua_pushstring(L, bw_codename(BW_ESCHEMA));
      return NULL;
    }
    if (bw_blobcheck(s, n, B, t, &e, &why) == BW_OK) return B;
    lua_pop(L, 1);
  }
  else bw_blobcheck(s, n, &none, t, &e, &why);  /* the header's reason */
  lua_pushnil(L);
  lua_pushfstring(L, "%s%s%s (byte %I)", e.path, e.path[0] ? ": " : "",
                  why ? why : bw_strerror(e.code),
                  (lua_Integer)(e.bitpos / 8));
  lua_pushstring(L, bw_codename(e.code));
  return NULL;
}

/* A blob says its own version: an options table (s:blob's) for a view
** would be dropped without a word. */
static void noopts (lua_State *L) {
  luaL_argcheck(L, lua_isnoneornil(L, 4), 4, "takes no options (a blob says "
                "its version; a view makes a value only when it is read)");
}

/* s:unblob(name, blob [, {max_values = n}]) -> value | nil, message, code */
static int schema_unblob (lua_State *L) {
  LSchema *ls = bw_takeschema(L, 4);  /* at 5 */
  uint32_t t = bw_checktype(L, 2);
  Opts o;
  Rd c;
  bw_readopts(L, 4, OPTBIT(OPT_MAXVALUES), &o);  /* not version: the blob's */
  c.values = bw_optmaxvalues(L, &o);
  c.over = 0;
  lua_settop(L, 5);
  c.B = openblob(L, t, 3, &c.b);  /* layout at 6 */
  if (c.B == NULL) return 3;
  lua_getiuservalue(L, 1, UV_NAMES);
  c.L = L;
  c.S = ls->S;
  c.names = lua_gettop(L);
  if (rrecord(&c, t, BW_BLOBHEADER)) return 1;
  lua_pushnil(L);
  lua_pushfstring(L, "unblob makes more values than max_values allows (byte %I)",
                  (lua_Integer)c.over);
  lua_pushstring(L, bw_codename(BW_ERANGE));
  return 3;
}

/* }========================================================== */


/* {===================== views ===================== */

/* user values of a view: the blob string, the schema, the names array and
** the layout */
enum { VU_BLOB = 1, VU_SCHEMA, VU_NAMES, VU_LAYOUT, NVU = VU_LAYOUT };

typedef struct View {
  const uint8_t *b;
  const bw_BlobLayout *B;
  const bw_Schema *S;
  size_t pos;         /* record: its position; array: its first element */
  uint32_t ref;       /* record: type; array: the array's layout field */
  uint32_t n;         /* array: elements (sparse: entries) */
  int isarray;
} View;

static View *newview (lua_State *L, const View *from, int src) {
  View *v = (View *)lua_newuserdatauv(L, sizeof(View), NVU);
  int i;
  *v = *from;
  for (i = 1; i <= NVU; i++) {
    lua_getiuservalue(L, src, i);
    lua_setiuservalue(L, -2, i);
  }
  luaL_setmetatable(L, BLOB_MT);
  return v;
}

/* Push the value of layout field 'f' at 'p' for the view at 'src': a view
** for records and arrays, a plain value otherwise. */
static void pushvalue (lua_State *L, const View *v, int src,
                       const bw_BlobField *f, size_t p) {
  View nv = *v;
  switch (f->form) {
    case BW_BRECORD: case BW_BPTR:
      if (f->form == BW_BPTR && (p = rtarget(v->b, p)) == 0) {
        lua_pushnil(L);
        return;
      }
      nv.pos = p;
      nv.ref = f->ref;
      nv.isarray = 0;
      newview(L, &nv, src);
      return;
    case BW_BARRAY: case BW_BINLINE: case BW_BSPARSE:
      nv.isarray = 1;
      nv.ref = (uint32_t)(f - v->B->fields);
      nv.n = f->form == BW_BINLINE ? f->count : rcount(v->b, p);
      nv.pos = f->form == BW_BINLINE ? p : rtarget(v->b, p);
      newview(L, &nv, src);
      return;
    default: {  /* a scalar, string or quaternion: one value at a time */
      Rd c;
      c.L = L;
      c.S = v->S;
      c.B = v->B;
      c.b = v->b;
      c.values = (uint64_t)-1;
      c.over = 0;
      lua_getiuservalue(L, src, VU_NAMES);
      c.names = lua_gettop(L);
      rvalue(&c, f, p);
      lua_remove(L, c.names);
    }
  }
}

/* Push the current description's field 'sfi' of the record view 'v' (at
** stack index 1): read, its default when the blob lacks it, or nil. */
static void viewfield (lua_State *L, const View *v, uint32_t sfi) {
  const bw_Field *sf = &v->S->fields[sfi];
  uint32_t lf = v->B->map[sfi];
  if (lf == BW_BLOBNONE) {
    if (sf->hasdefault) bw_pushfielddefault(L, v->S, sf);
    else lua_pushnil(L);
  }
  else {
    const bw_BlobField *f = &v->B->fields[lf];
    if (f->presence != BW_BLOBNONE && v->b[v->pos + f->presence] == 0)
      lua_pushnil(L);
    else pushvalue(L, v, 1, f, v->pos + f->offset);
  }
}

/* The sparse view's first entry whose slot is 'i' or past it (v->n when
** none): entries are in rising slot order, which bw_blobcheck checked. */
static uint32_t sparsefrom (const View *v, const bw_BlobField *f,
                            lua_Integer i) {
  uint32_t lo = 0, hi = v->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    lua_Integer ix = (lua_Integer)bw_blobloadu(
      v->b + v->pos + (size_t)mid * f->stride, 4) + 1;
    if (ix < i) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The slot of the sparse view's entry 'k' (< v->n). */
static lua_Integer sparseslot (const View *v, const bw_BlobField *f,
                               uint32_t k) {
  return (lua_Integer)bw_blobloadu(v->b + v->pos + (size_t)k * f->stride, 4)
         + 1;
}

/* The field the key at 'k' names in the record view 'v', or NULL. Only a
** string names a field: lua_tolstring would turn the number 1 into "1" in
** place and find a field named "1", which a table's t[1] never does. */
static const bw_Field *recordkey (lua_State *L, const View *v, int k) {
  size_t len;
  const char *s;
  if (lua_type(L, k) != LUA_TSTRING) return NULL;
  s = lua_tolstring(L, k, &len);
  return bw_fieldnamed(v->S, v->ref, s, len);
}

/* The index the key at 'k' gives an array view, 0 (no element) unless it
** is a number with an integer value: lua_tointeger alone would take the
** string "1" (or " 0x1 ") for element 1, which a table's t["1"] never is. */
static lua_Integer arraykey (lua_State *L, int k) {
  return lua_type(L, k) == LUA_TNUMBER ? lua_tointeger(L, k) : 0;
}

static int view_index (lua_State *L) {
  View *v = (View *)luaL_checkudata(L, 1, BLOB_MT);
  if (v->isarray) {
    const bw_BlobField *f = &v->B->fields[v->ref];
    const bw_BlobField *e = &v->B->fields[f->ref];
    lua_Integer i = arraykey(L, 2);
    if (f->form == BW_BSPARSE) {
      uint32_t k = sparsefrom(v, f, i);
      if (k < v->n && sparseslot(v, f, k) == i)
        pushvalue(L, v, 1, e, v->pos + (size_t)k * f->stride + f->voff);
      else lua_pushnil(L);
      return 1;
    }
    if (i < 1 || i > (lua_Integer)v->n) lua_pushnil(L);
    else pushvalue(L, v, 1, e, v->pos + (size_t)(i - 1) * f->stride);
    return 1;
  }
  else {
    const bw_Field *sf = recordkey(L, v, 2);
    if (sf != NULL && bw_fieldpresent(sf, v->S->version))
      viewfield(L, v, (uint32_t)(sf - v->S->fields));
    else lua_pushnil(L);
    return 1;
  }
}

/* next(view, key) for pairs: a record's fields in order (absent ones left
** out), an array's elements, a sparse array's present slots. */
static int view_next (lua_State *L) {
  View *v = (View *)luaL_checkudata(L, 1, BLOB_MT);
  lua_settop(L, 2);
  if (v->isarray) {
    const bw_BlobField *f = &v->B->fields[v->ref];
    lua_Integer i = 0;
    if (!lua_isnil(L, 2)) {  /* a number, as for __index: not "1" */
      luaL_checktype(L, 2, LUA_TNUMBER);
      i = luaL_checkinteger(L, 2);
    }
    if (f->form == BW_BSPARSE) {  /* the first entry past slot i */
      uint32_t k = i < LUA_MAXINTEGER ? sparsefrom(v, f, i + 1) : v->n;
      if (k >= v->n) return 0;
      lua_pushinteger(L, sparseslot(v, f, k));
      pushvalue(L, v, 1, &v->B->fields[f->ref],
                v->pos + (size_t)k * f->stride + f->voff);
      return 2;
    }
    if (i < 0 || i >= (lua_Integer)v->n) return 0;
    lua_pushinteger(L, i + 1);
    pushvalue(L, v, 1, &v->B->fields[f->ref], v->pos + (size_t)i * f->stride);
    return 2;
  }
  else {
    const bw_Type *ty = &v->S->types[v->ref];
    uint32_t i = ty->first;
    if (!lua_isnil(L, 2)) {  /* past the field named by the key */
      const bw_Field *sf = recordkey(L, v, 2);
      i = sf != NULL ? (uint32_t)(sf - v->S->fields) + 1 : ty->first + ty->count;
    }
    for (; i < ty->first + ty->count; i++) {
      const bw_Field *sf = &v->S->fields[i];
      if (sf->name == BW_NONE || !bw_fieldpresent(sf, v->S->version)) continue;
      viewfield(L, v, i);
      if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        continue;
      }
      bw_pushname(L, v->S, sf->name);
      lua_insert(L, -2);
      return 2;
    }
    return 0;
  }
}

static int view_pairs (lua_State *L) {
  luaL_checkudata(L, 1, BLOB_MT);
  lua_pushcfunction(L, view_next);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

static int view_len (lua_State *L) {
  View *v = (View *)luaL_checkudata(L, 1, BLOB_MT);
  if (!v->isarray) return luaL_error(L, "a record view has no length");
  if (v->B->fields[v->ref].form == BW_BSPARSE)
    lua_pushinteger(L, v->B->fields[v->ref].max);
  else lua_pushinteger(L, (lua_Integer)v->n);
  return 1;
}

static int view_newindex (lua_State *L) {
  return luaL_error(L, "blob views are read-only");
}

static int view_tostring (lua_State *L) {
  View *v = (View *)luaL_checkudata(L, 1, BLOB_MT);
  if (v->isarray)
    lua_pushfstring(L, "bitwire.BlobView (array of %d)", (int)v->n);
  else
    lua_pushfstring(L, "bitwire.BlobView (%s)",
                    v->S->names[v->S->types[v->ref].name]);
  return 1;
}

/* s:blobview(name, blob) -> view | nil, message, code */
static int schema_blobview (lua_State *L) {
  LSchema *ls = bw_checkschema(L, 1);
  uint32_t t = bw_checktype(L, 2);
  View v;
  noopts(L);
  lua_settop(L, 3);
  bw_entercall(L, ls);  /* at 4: it allocates as it reads S */
  v.B = openblob(L, t, 3, &v.b);  /* layout at 5 */
  if (v.B == NULL) return 3;
  v.S = ls->S;
  v.pos = BW_BLOBHEADER;
  v.ref = t;
  v.n = 0;
  v.isarray = 0;
  newview(L, &v, 1);  /* copies the schema's user values, then fix them */
  lua_pushvalue(L, 5);
  lua_setiuservalue(L, -2, VU_LAYOUT);
  lua_pushvalue(L, 3);
  lua_setiuservalue(L, -2, VU_BLOB);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, VU_SCHEMA);
  lua_getiuservalue(L, 1, UV_NAMES);
  lua_setiuservalue(L, -2, VU_NAMES);
  return 1;
}

/* }========================================================== */

const luaL_Reg bw_blobreadmethods[] = {
  {"unblob", schema_unblob},
  {"blobview", schema_blobview},
  {NULL, NULL}
};

void bw_openblobview (lua_State *L) {
  if (luaL_newmetatable(L, BLOB_MT)) {
    lua_pushcfunction(L, view_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, view_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushcfunction(L, view_len);
    lua_setfield(L, -2, "__len");
    lua_pushcfunction(L, view_pairs);
    lua_setfield(L, -2, "__pairs");
    lua_pushcfunction(L, view_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
}
