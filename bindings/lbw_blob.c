/*
** lbw_blob.c - blob layouts per schema, s:blob, s:blob_layout
** See LICENSE for copyright and terms.
*/

/*
** Blobs are laid out by core/bw_blob.c; this file only moves values between
** Lua tables and that layout. Writing walks the value depth-first in the
** order the validator reads, claiming each pointed-to block when its field
** is reached. Reading always validates the whole blob first (one forward
** pass in core), so the walks that follow trust every offset.
**
** A blob records the version it was written at. Reading lays the schema out
** at that version (the fingerprint must match) and builds values of the
** current description: fields the blob has are read, fields it lacks get
** their default (or stay nil), fields removed since are dropped.
**
** Layouts are computed once per schema userdata and kept in a registry
** table weakly keyed by the schema. Reading (unblob, views) is in
** lbw_blobread.c.
*/

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"

#include "lbw_blob.h"

#define MAXLEVEL  (2 * BW_MAXDEPTH + 8)

static const char *const formnames[BW_NBFORMS] = {
  "scalar", "string", "bytes", "array", "sparse", "inline", "fixbytes",
  "record", "pointer", "quat"
};

static const char *const ctypenames[BW_NCTYPES] = {
  "uint8_t", "int8_t", "uint16_t", "int16_t", "uint32_t", "int32_t",
  "uint64_t", "int64_t", "float", "double", "uint8_t"
};

static int cachekey;  /* its address keys the layout cache in the registry */


/* {===================== layouts ===================== */

typedef struct LLayout {
  bw_Schema    *S;   /* retained: names in the layout point into it */
  bw_BlobLayout L;
} LLayout;

#define LAYOUTMEM(ll) ((void *)((char *)(ll) + ((sizeof(LLayout) + 7) & ~7u)))

static int layout_gc (lua_State *L) {
  LLayout *ll = (LLayout *)lua_touserdata(L, 1);
  bw_schemarelease(ll->S);
  ll->S = NULL;
  return 0;
}

/* The layout of the schema at stack index 1 at 'version', its userdata
** pushed. The current version's is cached (weakly keyed by the schema);
** others, named by blob headers, are not, so hostile versions cannot grow
** the cache. */
const bw_BlobLayout *bw_blobgetlayout (lua_State *L, uint32_t version) {
  char msg[MAXMSG];
  const bw_BlobLayout *B = bw_blobtrylayout(L, version, msg, sizeof(msg));
  if (B == NULL) luaL_error(L, "%s", msg);
  return B;
}

const bw_BlobLayout *bw_blobtrylayout (lua_State *L, uint32_t version,
                                       char *msg, size_t msgsize) {
  LSchema *ls = bw_checkschema(L, 1);
  LLayout *ll;
  int cached = version == ls->S->version;
  if (cached) {
    bw_pushweakreg(L, &cachekey, 1);
    lua_pushvalue(L, 1);
    if (lua_rawget(L, -2) == LUA_TUSERDATA) {
      lua_remove(L, -2);
      return &((LLayout *)lua_touserdata(L, -1))->L;
    }
    lua_pop(L, 1);
  }
  ll = (LLayout *)lua_newuserdatauv(L, ((sizeof(LLayout) + 7) & ~7u)
                                   + bw_bloblayoutsize(ls->S), 0);
  ll->S = NULL;
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, layout_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  if (bw_bloblayout(ls->S, version, LAYOUTMEM(ll), &ll->L, msg, msgsize)
      != BW_OK) {
    lua_pop(L, 1);
    return NULL;
  }
  bw_schemaretain(ls->S);
  ll->S = ls->S;
  if (cached) {  /* cache[schema] = layout */
    lua_pushvalue(L, 1);
    lua_pushvalue(L, -2);
    lua_rawset(L, -4);
    lua_remove(L, -2);
  }
  return &ll->L;
}

/* }========================================================== */


/* {===================== writing ===================== */

typedef struct WBuf {
  bw_BlobWriter w;
} WBuf;

static int wbuf_gc (lua_State *L) {
  WBuf *b = (WBuf *)lua_touserdata(L, 1);
  bw_blobwfree(&b->w);
  return 0;
}

typedef struct Wr {
  lua_State *L;
  const bw_Schema *S;
  const bw_BlobLayout *B;
  bw_BlobWriter *w;
  int names;          /* stack index of the schema's names array */
  int strict;         /* refuse keys no field has, as encode does */
  int nframes;
  struct { const char *name; lua_Integer index; } frames[MAXLEVEL + 2];
} Wr;

static void wpush (Wr *c, const char *name, lua_Integer index) {
  if (c->nframes < MAXLEVEL + 2) {
    c->frames[c->nframes].name = name;
    c->frames[c->nframes].index = index;
  }
  c->nframes++;
}

/* Raise "path: detail (byte N)". */
static int werror (Wr *c, const char *detail) {
  luaL_Buffer b;
  int i, n = c->nframes < MAXLEVEL + 2 ? c->nframes : MAXLEVEL + 2;
  lua_State *L = c->L;
  luaL_buffinit(L, &b);
  for (i = 0; i < n; i++) {
    if (c->frames[i].name != NULL) {
      if (i > 0) luaL_addchar(&b, '.');
      luaL_addstring(&b, c->frames[i].name);
    }
    else lua_pushfstring(L, "[%I]", c->frames[i].index), luaL_addvalue(&b);
  }
  if (n > 0) luaL_addstring(&b, ": ");
  luaL_addstring(&b, detail);
  luaL_pushresult(&b);
  return lua_error(L);
}

static int wexpect (Wr *c, int idx, const char *what) {
  lua_pushfstring(c->L, "expected %s, got %s", what, luaL_typename(c->L, idx));
  return werror(c, lua_tostring(c->L, -1));
}

/* 'count' items of 'size' bytes: a count times a stride never wraps (a
** size_t of 32 bits would, for 8 absent optionals of 512 MiB each). */
static size_t walloc (Wr *c, size_t count, size_t size, size_t align) {
  size_t pos = bw_blobwallocn(c->w, count, size, align);
  if (c->w->status != BW_OK) werror(c, "blob too large");
  return pos;
}

static void wrecord (Wr *c, uint32_t t, int idx, size_t pos);

static void wscalar (Wr *c, const bw_BlobField *f, int idx, size_t p) {
  lua_State *L = c->L;
  const bw_Field *sf = &c->S->fields[f->sfield];
  switch (sf->kind) {
    case BW_KBOOL:
      if (!lua_isboolean(L, idx)) wexpect(c, idx, "a boolean");
      c->w->buf[p] = (uint8_t)lua_toboolean(L, idx);
      return;
    case BW_KENUM: {
      size_t len;
      const char *s;
      uint32_t i;
      if (lua_type(L, idx) != LUA_TSTRING) wexpect(c, idx, "an enum name");
      s = lua_tolstring(L, idx, &len);
      i = bw_enumvalue(c->S, sf, s, len);
      if (i == BW_NONE) {
        lua_pushfstring(L, "unknown enum value '%s'", s);
        werror(c, lua_tostring(L, -1));
      }
      bw_blobseti(c->w->buf + p, f->ctype, i);
      return;
    }
    case BW_KFLOAT: case BW_KFLOAT32: case BW_KFLOAT64: case BW_KANGLE: {
      double x;
      if (lua_type(L, idx) != LUA_TNUMBER) wexpect(c, idx, "a number");
      x = (double)lua_tonumber(L, idx);
      if (f->dmin <= f->dmax) {  /* the layout's range, as stored */
        double y = f->ctype == BW_CF32 ? (double)bw_tofloat32(x) : x;
        if (!(y >= f->dmin && y <= f->dmax)) {
          if (!sf->clamp || x != x) {
            lua_pushfstring(L, "%f out of range [%f, %f]", (lua_Number)x,
                            (lua_Number)sf->dmin, (lua_Number)sf->dmax);
            werror(c, lua_tostring(L, -1));
          }
          x = y < f->dmin ? f->dmin : f->dmax;
        }
      }
      bw_blobsetf(c->w->buf + p, f->ctype, x);
      return;
    }
    default: {  /* int, uint, tiered */
      int ok = 0;
      lua_Integer v = 0;
      if (lua_type(L, idx) == LUA_TNUMBER) {
        v = lua_tointegerx(L, idx, &ok);
        if (!ok) {  /* a number, but not an integer: show it, as encode */
          lua_pushfstring(L, "expected an integer, got %f",
                          lua_tonumber(L, idx));
          werror(c, lua_tostring(L, -1));
        }
      }
      if (!ok) wexpect(c, idx, "an integer");
      {  /* a range past 2^63 (a 64-bit uint) is unsigned: such values are
         ** negative in Lua; any other range, uint64 or not, is signed, so
         ** clamp sends a negative value to min, as encode does */
        int u = f->ctype == BW_CU64 && f->max < 0;
        int low = u ? (uint64_t)v < (uint64_t)f->min : v < f->min;
        int high = u ? (uint64_t)v > (uint64_t)f->max : v > f->max;
        if ((low || high) && !sf->clamp) {
          lua_pushfstring(L, "%I out of range [%I, %I]", v,
                          (lua_Integer)f->min, (lua_Integer)f->max);
          werror(c, lua_tostring(L, -1));
        }
        if (low) v = (lua_Integer)f->min;  /* clamp = true: as encode sends */
        else if (high) v = (lua_Integer)f->max;
      }
      bw_blobseti(c->w->buf + p, f->ctype, v);
    }
  }
}

static void wcount (Wr *c, const bw_BlobField *f, size_t n, const char *what) {
  if (n < (uint64_t)f->min || n > (uint64_t)f->max) {
    lua_pushfstring(c->L, "%s %I out of range [%I, %I]", what, (lua_Integer)n,
                    (lua_Integer)f->min, (lua_Integer)f->max);
    werror(c, lua_tostring(c->L, -1));
  }
}

static void wvalue (Wr *c, const bw_BlobField *f, int idx, size_t p);

/* 'n' elements of 'e' from the table at 'idx' into 'p', 'stride' apart. */
static void welems (Wr *c, const bw_BlobField *e, int idx, size_t n,
                    size_t p, size_t stride) {
  size_t i;
  for (i = 0; i < n; i++, p += stride) {
    int v;
    wpush(c, NULL, (lua_Integer)i + 1);
    lua_rawgeti(c->L, idx, (lua_Integer)i + 1);
    v = lua_gettop(c->L);
    if (lua_isnil(c->L, v)) werror(c, "missing element");
    wvalue(c, e, v, p);
    lua_pop(c->L, 1);
    c->nframes--;
  }
}

static void wvalue (Wr *c, const bw_BlobField *f, int idx, size_t p) {
  lua_State *L = c->L;
  const bw_BlobLayout *B = c->B;
  switch (f->form) {
    case BW_BSCALAR: wscalar(c, f, idx, p); return;
    case BW_BSTRING: case BW_BBYTES: case BW_BFIXBYTES: {
      size_t len, t;
      const char *s;
      if (lua_type(L, idx) != LUA_TSTRING) wexpect(c, idx, "a string");
      s = lua_tolstring(L, idx, &len);
      if (f->form == BW_BFIXBYTES) {
        if (len != f->count) {
          lua_pushfstring(L, "length %I must be exactly %I", (lua_Integer)len,
                          (lua_Integer)f->count);
          werror(c, lua_tostring(L, -1));
        }
        memcpy(c->w->buf + p, s, len);
        return;
      }
      wcount(c, f, len, "length");
      if (f->form == BW_BSTRING && !bw_utf8valid(s, len))
        werror(c, bw_strerror(BW_EUTF8));
      if (len == 0 && f->form == BW_BBYTES) return;  /* offset 0 */
      t = walloc(c, len + (f->form == BW_BSTRING), 1, 1);
      memcpy(c->w->buf + t, s, len);
      bw_blobwsetrel(c->w, p, t, (int64_t)len);
      return;
    }
    case BW_BARRAY: case BW_BINLINE: {
      const bw_BlobField *e = &B->fields[f->ref];
      size_t n, t;
      if (!lua_istable(L, idx)) wexpect(c, idx, "a table");
      n = (size_t)lua_rawlen(L, idx);
      if (f->form == BW_BINLINE) {
        if (n != f->count) {
          lua_pushfstring(L, "count %I must be exactly %I", (lua_Integer)n,
                          (lua_Integer)f->count);
          werror(c, lua_tostring(L, -1));
        }
        welems(c, e, idx, n, p, f->stride);
        return;
      }
      wcount(c, f, n, "count");
      if (n == 0) return;
      t = walloc(c, n, f->stride, e->align);
      bw_blobwsetrel(c->w, p, t, (int64_t)n);
      welems(c, e, idx, n, t, f->stride);
      return;
    }
    case BW_BSPARSE: {
      const bw_BlobField *e = &B->fields[f->ref];
      lua_Integer i, keys, max = (lua_Integer)f->max, *slots;
      size_t n, k, t;
      if (!lua_istable(L, idx)) wexpect(c, idx, "a table");
      /* the table's keys, not every slot: a max of 2^32 - 2 costs what
      ** the value holds (SECURITY.md, Limits) */
      slots = bw_sparsekeys(L, idx, 0, max, &n, &keys);  /* pushed */
      /* a key that is no slot would be dropped: refuse it, as encode does */
      if ((size_t)keys != n) {
        lua_pushfstring(L, "sparse keys must be integers in [1, %I]", max);
        werror(c, lua_tostring(L, -1));
      }
      if (n > 0) {
        t = walloc(c, n, f->stride, e->align > 4 ? e->align : 4);
        bw_blobwsetrel(c->w, p, t, (int64_t)n);
      }
      for (k = 0; k < n; k++) {
        i = slots[k];
        lua_rawgeti(L, idx, i);
        wpush(c, NULL, i);
        bw_blobstoreu(c->w->buf + t, (uint64_t)(i - 1), 4);
        wvalue(c, e, lua_gettop(L), t + f->voff);
        t += f->stride;
        c->nframes--;
        lua_pop(L, 1);
      }
      lua_pop(L, 1);  /* the slots */
      return;
    }
    case BW_BRECORD:
      if (!lua_istable(L, idx)) wexpect(c, idx, "a table");
      wrecord(c, f->ref, idx, p);
      return;
    case BW_BPTR: {
      const bw_BlobType *ty = &B->types[f->ref];
      size_t t;
      if (!lua_istable(L, idx)) wexpect(c, idx, "a table");
      t = walloc(c, 1, ty->size, ty->align);
      bw_blobwsetrel(c->w, p, t, -1);
      wrecord(c, f->ref, idx, t);
      return;
    }
    case BW_BQUAT: {
      int i;
      if (!lua_istable(L, idx)) wexpect(c, idx, "a table {x, y, z, w}");
      if (lua_rawlen(L, idx) != 4) {  /* a table: say what is wrong with it */
        lua_pushfstring(L, "quaternion needs 4 components, got %I",
                        (lua_Integer)lua_rawlen(L, idx));
        werror(c, lua_tostring(L, -1));
      }
      for (i = 0; i < 4; i++) {
        if (lua_rawgeti(L, idx, i + 1) != LUA_TNUMBER)
          werror(c, "quaternion component is not a number");
        bw_blobsetf(c->w->buf + p + 4 * (size_t)i, BW_CF32,
                    (double)lua_tonumber(L, -1));
        lua_pop(L, 1);
      }
      return;
    }
    default: werror(c, "bad layout");
  }
}

static void wrecord (Wr *c, uint32_t t, int idx, size_t pos) {
  lua_State *L = c->L;
  const bw_BlobType *ty = &c->B->types[t];
  uint32_t i;
  if (c->nframes >= MAXLEVEL) werror(c, "nesting too deep");
  luaL_checkstack(L, 4, "blob nesting");
  for (i = ty->first; i < ty->first + ty->count; i++) {
    const bw_BlobField *f = &c->B->fields[i];
    const bw_Field *sf = &c->S->fields[f->sfield];
    int v;
    wpush(c, f->name, 0);
    lua_rawgeti(L, c->names, (lua_Integer)sf->name + 1);
    lua_rawget(L, idx);
    v = lua_gettop(L);
    if (lua_isnil(L, v)) {
      if (sf->optional) {  /* presence byte and pointer stay 0 */
        lua_pop(L, 1);
        c->nframes--;
        continue;
      }
      if (!sf->hasdefault) werror(c, "missing field");
      lua_pop(L, 1);
      bw_pushfielddefault(L, c->S, sf);
    }
    if (f->presence != BW_BLOBNONE) c->w->buf[pos + f->presence] = 1;
    wvalue(c, f, v, pos + f->offset);
    lua_pop(L, 1);
    c->nframes--;
  }
  if (c->strict && bw_strictkeys(L, c->S, t, idx))
    werror(c, lua_tostring(L, -1));
}

/* s:blob(name, value [, {version = v, strict = b}]) -> blob string */
static int schema_blob (lua_State *L) {
  LSchema *ls = bw_takeschema(L, 4);  /* at 5 */
  uint32_t t = bw_checktype(L, 2);
  uint32_t version;
  Opts o;
  const bw_BlobLayout *B;
  const bw_BlobType *ty;
  WBuf *b;
  Wr c;
  size_t root;
  bw_readopts(L, 4, OPTBIT(OPT_VERSION) | OPTBIT(OPT_STRICT), &o);
  version = bw_optversion(L, &o, ls->S);
  c.strict = bw_optstrict(L, &o, ls->S->strict);
  luaL_checktype(L, 3, LUA_TTABLE);
  lua_settop(L, 5);
  B = bw_blobgetlayout(L, version);  /* at 6 */
  ty = &B->types[t];
  b = (WBuf *)lua_newuserdatauv(L, sizeof(WBuf), 0);
  b->w.buf = NULL;  /* its __gc first: a memory error would lose the buffer */
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, wbuf_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  bw_blobwinit(&b->w, bw_plainalloc, NULL, BW_BLOBMAX);
  lua_getiuservalue(L, 1, UV_NAMES);
  c.L = L;
  c.S = ls->S;
  c.B = B;
  c.w = &b->w;
  c.names = lua_gettop(L);
  c.nframes = 0;
  root = walloc(&c, 1, ty->size, ty->align);
  wrecord(&c, t, 3, root);
  bw_blobwfinish(&b->w, B, t);
  if (b->w.status != BW_OK) werror(&c, "blob too large");
  lua_pushlstring(L, (const char *)b->w.buf, b->w.len);
  bw_blobwfree(&b->w);
  return 1;
}

/* }========================================================== */


/* {===================== layout as Lua data ===================== */

static void setint (lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

static void pushhex (lua_State *L, uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof(buf), "%016" PRIx64, v);
  lua_pushstring(L, buf);
}

/* s:blob_layout([version]) -> { version, fingerprint = {Type = hex},
** types = {...}, fields = {...} }: the core's layout, every number as C
** has it (indices 0-based, as in the generated tables). */
static int schema_bloblayout (lua_State *L) {
  LSchema *ls = bw_takeschema(L, 2);  /* at 3: it allocates as it reads S */
  lua_Integer v = luaL_optinteger(L, 2, (lua_Integer)ls->S->version);
  const bw_BlobLayout *B;
  uint32_t i;
  luaL_argcheck(L, v >= 0 && v <= BW_MAXVERSION, 2, "version out of range");
  B = bw_blobgetlayout(L, (uint32_t)v);  /* kept at 4 */
  lua_createtable(L, 0, 4);
  setint(L, "version", (lua_Integer)B->version);
  setint(L, "header", BW_BLOBHEADER);
  lua_createtable(L, (int)B->ntypes, 0);
  for (i = 0; i < B->ntypes; i++) {
    const bw_BlobType *ty = &B->types[i];
    lua_createtable(L, 0, 10);
    lua_pushstring(L, ty->name);
    lua_setfield(L, -2, "name");
    setint(L, "id", (lua_Integer)i);
    setint(L, "size", ty->size);
    setint(L, "align", ty->align);
    setint(L, "first", ty->first);
    setint(L, "count", ty->count);
    pushhex(L, ty->fingerprint);
    lua_setfield(L, -2, "fingerprint");
    setint(L, "vmin", ty->vmin);
    setint(L, "vmax", ty->vmax);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "types");
  lua_createtable(L, (int)B->nfields, 0);
  for (i = 0; i < B->nfields; i++) {
    const bw_BlobField *f = &B->fields[i];
    const bw_Field *sf = &ls->S->fields[f->sfield];
    lua_createtable(L, 0, 16);
    if (f->name != NULL) {
      lua_pushstring(L, f->name);
      lua_setfield(L, -2, "name");
    }
    setint(L, "index", (lua_Integer)i);
    setint(L, "offset", f->offset);
    if (f->presence != BW_BLOBNONE) setint(L, "presence", f->presence);
    setint(L, "size", f->size);
    setint(L, "align", f->align);
    lua_pushstring(L, formnames[f->form]);
    lua_setfield(L, -2, "form");
    setint(L, "formid", f->form);
    setint(L, "ctypeid", f->ctype);
    if (f->form == BW_BSCALAR) {
      lua_pushstring(L, ctypenames[f->ctype]);
      lua_setfield(L, -2, "ctype");
    }
    setint(L, "ref", f->ref);
    setint(L, "stride", f->stride);
    setint(L, "voff", f->voff);
    setint(L, "count", f->count);
    setint(L, "min", f->min);
    setint(L, "max", f->max);
    lua_pushnumber(L, (lua_Number)f->dmin);
    lua_setfield(L, -2, "dmin");
    lua_pushnumber(L, (lua_Number)f->dmax);
    lua_setfield(L, -2, "dmax");
    lua_pushboolean(L, f->ctype == BW_CBOOL && f->form == BW_BSCALAR);
    lua_setfield(L, -2, "bool");
    lua_pushboolean(L, f->check);
    lua_setfield(L, -2, "check");
    if (sf->kind == BW_KENUM) {
      int64_t k;
      lua_createtable(L, (int)sf->max + 1, 0);
      for (k = 0; k <= sf->max; k++) {
        bw_pushname(L, ls->S, sf->ref + (uint32_t)k);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
      }
      lua_setfield(L, -2, "values");
    }
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "fields");
  return 1;
}

/* }========================================================== */


static const luaL_Reg blob_methods[] = {
  {"blob", schema_blob},
  {"blob_layout", schema_bloblayout},
  {NULL, NULL}
};

void bw_openblob (lua_State *L) {
  bw_openblobview(L);
  luaL_getmetatable(L, SCHEMA_MT);
  lua_getfield(L, -1, "__index");
  luaL_setfuncs(L, blob_methods, 0);
  luaL_setfuncs(L, bw_blobreadmethods, 0);
  lua_pop(L, 2);
}
