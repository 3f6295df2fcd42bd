/*
** lbw_program.c - s:program(): the compiled program as Lua data
** See LICENSE for copyright and terms.
*/

/*
** Tools that need a schema's wire form (code generators, layout, dissect,
** diff) read it from here: the program C compiled and the driver walks,
** with the widths and bounds C computed. Reading the description instead
** would give every tool its own copy of the rules.
*/

#include <inttypes.h>
#include <stdio.h>

#include "lbw_schema.h"


static const char *const encodings[] = { "mask", "index", "relative", "auto" };

static void setint (lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

static void setnum (lua_State *L, const char *k, double v) {
  lua_pushnumber(L, (lua_Number)v);
  lua_setfield(L, -2, k);
}

static void setbool (lua_State *L, const char *k, int v) {
  lua_pushboolean(L, v);
  lua_setfield(L, -2, k);
}

void bw_pushname (lua_State *L, const bw_Schema *S, uint32_t nm) {
  lua_pushlstring(L, S->names[nm], S->namelens[nm]);
}

/* Bits as an integer, nil when too large to count. */
static void setbits (lua_State *L, const char *k, uint64_t v) {
  if (v == BW_UNBOUNDED || v > (uint64_t)INT64_MAX) return;
  setint(L, k, (lua_Integer)v);
}

static void pushfield (lua_State *L, const bw_Schema *S, const bw_Field *f,
                       const uint64_t *th);

static void sethash (lua_State *L, const char *k, uint64_t h) {
  char hex[17];
  snprintf(hex, sizeof(hex), "%016" PRIx64, h);
  lua_pushstring(L, hex);
  lua_setfield(L, -2, k);
}

void bw_pushfielddefault (lua_State *L, const bw_Schema *S,
                          const bw_Field *f) {
  switch (f->kind) {
    case BW_KBOOL: lua_pushboolean(L, (int)f->def.i); break;
    case BW_KFLOAT: case BW_KFLOAT32: case BW_KFLOAT64: case BW_KANGLE:
      lua_pushnumber(L, (lua_Number)f->def.d);
      break;
    case BW_KENUM: case BW_KSTRING: case BW_KBYTES:
      bw_pushname(L, S, f->def.s);
      break;
    default: lua_pushinteger(L, (lua_Integer)f->def.i); break;
  }
}

static void setdefault (lua_State *L, const bw_Schema *S, const bw_Field *f) {
  if (!f->hasdefault) return;
  bw_pushfielddefault(L, S, f);
  lua_setfield(L, -2, "default");
}

static void settiers (lua_State *L, const bw_Field *f) {
  unsigned i;
  lua_createtable(L, (int)f->ntiers, 0);
  for (i = 0; i < f->ntiers; i++) {
    lua_pushinteger(L, (lua_Integer)f->tierbits[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "tiers");
}

static void pushfield (lua_State *L, const bw_Schema *S, const bw_Field *f,
                       const uint64_t *th) {
  luaL_checkstack(L, 8, "schema nesting");
  lua_createtable(L, 0, 16);
  if (f->name != BW_NONE) {
    bw_pushname(L, S, f->name);
    lua_setfield(L, -2, "name");
  }
  lua_pushstring(L, bw_kindnames[f->kind]);
  lua_setfield(L, -2, "kind");
  setbool(L, "optional", f->optional);
  setbool(L, "fixed", f->fixed);
  setbool(L, "clamp", f->clamp);
  setint(L, "min", (lua_Integer)f->min);
  setint(L, "max", (lua_Integer)f->max);
  setint(L, "bits", (lua_Integer)f->nbits);
  setint(L, "since", (lua_Integer)f->since);
  if (f->removed != UINT32_MAX) setint(L, "removed", (lua_Integer)f->removed);
  setbits(L, "minbits", f->minbits);
  setbits(L, "maxbits", f->maxbits);
  sethash(L, "hash", bw_fieldhash(S, f, th));
  setdefault(L, S, f);
  if (f->relative) {
    setbool(L, "relative", 1);
    settiers(L, f);
  }
  switch (f->kind) {
    case BW_KSTRUCT:
      bw_pushname(L, S, S->types[f->ref].name);
      lua_setfield(L, -2, "type");
      break;
    case BW_KSPARSE:
      lua_pushstring(L, encodings[f->encoding & 3]);
      lua_setfield(L, -2, "encoding");
      settiers(L, f);
      /* FALLTHROUGH */
    case BW_KARRAY:
      pushfield(L, S, &S->fields[f->ref], th);
      lua_setfield(L, -2, "of");
      break;
    case BW_KTIERED:
      settiers(L, f);
      break;
    case BW_KENUM: {
      int64_t i;
      lua_createtable(L, (int)(f->max + 1), 0);
      for (i = 0; i <= f->max; i++) {
        bw_pushname(L, S, f->ref + (uint32_t)i);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
      }
      lua_setfield(L, -2, "values");
      break;
    }
    case BW_KFLOAT: case BW_KQUAT:
      if (f->kind == BW_KFLOAT) {
        setnum(L, "fmin", f->dmin);
        setnum(L, "fmax", f->dmax);
        setnum(L, "res", f->res);
      }
      setnum(L, "qmin", (double)f->q.min);
      setnum(L, "qdelta", (double)f->q.delta);
      setint(L, "qmax", (lua_Integer)f->q.miv);
      break;
    case BW_KCHECK:
      setint(L, "magic", (lua_Integer)f->magic);
      break;
    case BW_KANGLE:
      setnum(L, "period", f->dmax);
      lua_pushstring(L, f->dmax == 360 ? "deg" : "rad");
      lua_setfield(L, -2, "unit");
      break;
    default: break;
  }
}

/* s:program() -> the compiled program (README, "Tools and the compiled
** program"): types in id order, each with its fields as compiled. */
static int schema_program (lua_State *L) {
  LSchema *ls = bw_takeschema(L, 1);  /* it allocates as it reads S */
  const bw_Schema *S = ls->S;
  uint32_t i, j;
  char fp[17];
  /* th: what each type holds; nh: its name, which stands for the type in
  ** its fields' hashes so a change shows once, at the type it is in */
  uint64_t *th = (uint64_t *)lua_newuserdatauv(L, 2 * (S->ntypes + 1) * sizeof(uint64_t), 0);
  uint64_t *nh = th + S->ntypes + 1;
  if (!bw_typehashes(S, th)) return luaL_error(L, "not enough memory");
  for (i = 0; i < S->ntypes; i++) {
    const char *p = S->names[S->types[i].name];
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (; *p; p++) h = (h ^ (uint8_t)*p) * UINT64_C(0x100000001b3);
    nh[i] = h;
  }
  lua_createtable(L, 0, 8);
  setbool(L, "strict", S->strict);
  {   /* the tiers of delta = "relative" when a field names none */
    static const uint8_t rel[] = BW_RELTIERS;
    unsigned k;
    lua_createtable(L, (int)sizeof(rel), 0);
    for (k = 0; k < sizeof(rel); k++) {
      lua_pushinteger(L, (lua_Integer)rel[k]);
      lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, -2, "relative_tiers");
  }
  lua_createtable(L, (int)S->nmessages, 0);   /* messages: id + 1 -> name */
  for (i = 0; i < S->nmessages; i++) {
    bw_pushname(L, S, S->types[bw_msgtype(S, i)].name);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "messages");
  /* ids listed or their width given: the fingerprint covers them */
  lua_pushboolean(L, S->explicitids);
  lua_setfield(L, -2, "explicit_ids");
  setint(L, "version", (lua_Integer)S->version);
  setint(L, "typebits", (lua_Integer)S->typebits);
  snprintf(fp, sizeof(fp), "%016" PRIx64, S->fingerprint);
  lua_pushstring(L, fp);
  lua_setfield(L, -2, "fingerprint");
  lua_createtable(L, (int)S->ntypes, 0);   /* types */
  lua_createtable(L, 0, (int)S->ntypes);   /* byname */
  for (i = 0; i < S->ntypes; i++) {
    const bw_Type *ty = &S->types[i];
    lua_createtable(L, 0, 6);
    bw_pushname(L, S, ty->name);
    lua_setfield(L, -2, "name");
    setint(L, "id", (lua_Integer)i);
    setbits(L, "minbits", ty->minbits);
    setbits(L, "maxbits", ty->maxbits);
    setbool(L, "versioned", ty->versioned);
    if (ty->msgid != BW_NONE) setint(L, "message_id", (lua_Integer)ty->msgid);
    sethash(L, "hash", th[i]);
    lua_createtable(L, (int)ty->count, 0);
    for (j = 0; j < ty->count; j++) {
      pushfield(L, S, &S->fields[ty->first + j], nh);
      lua_rawseti(L, -2, (lua_Integer)j + 1);
    }
    lua_setfield(L, -2, "fields");
    bw_pushname(L, S, ty->name);
    lua_pushvalue(L, -2);
    lua_rawset(L, -4);                      /* byname[name] = type */
    lua_rawseti(L, -3, (lua_Integer)i + 1);
  }
  lua_setfield(L, -3, "byname");
  lua_setfield(L, -2, "types");
  return 1;
}

const luaL_Reg bw_programmethods[] = {
  {"program", schema_program},
  {NULL, NULL}
};
