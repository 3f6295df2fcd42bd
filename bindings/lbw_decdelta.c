/*
** lbw_decdelta.c - decode against a baseline; which schema decoded a table
** See LICENSE for copyright and terms.
*/

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lbw_decode.h"


/* {===================== decode against a baseline ===================== */

/* Protected call (schema, field index, value, version): encode the value
** as that field into the schema's writer, raising where it does not fit. */
static int encodefield (lua_State *L) {
  LSchema *ls = bw_checkschema(L, 1);
  Ctx c;
  bw_initinner(L, &c, ls, (uint32_t)lua_tointeger(L, 4));  /* one field */
  c.strict = 0;  /* a rule for the caller's values: a baseline's keys that
                    the type lacks (dropped by a reload) are dropped */
  bw_writerreset(c.w);
  bw_encvalue(&c, &ls->S->fields[lua_tointeger(L, 2)], 3, lua_type(L, 3));
  return 0;
}

/* A delta keeps from its baseline what it does not send, and the packet
** picks the message type and the version: what it keeps (the value at 'v',
** for field 'f') must be a value of that field, or the result would not be
** a value of its type. Checked by encoding it; the schema is at index 1. */
int bw_keepbaseline (Ctx *c, const bw_Field *f, int v) {
  lua_State *L = c->L;
  const char *msg, *p;
  size_t len;
  int st;
  if (c->checked > 0) return 1;  /* part of a baseline checked whole */
  if (lua_isnil(L, v)) {
    if (f->optional) return 1;
    return bw_decfail(c, BW_EBASELINE, c->r.pos, "unchanged, but the baseline "
                   "has no value");
  }
  lua_pushcfunction(L, encodefield);
  lua_pushvalue(L, 1);
  lua_pushinteger(L, (lua_Integer)(f - c->S->fields));
  lua_pushvalue(L, v);
  lua_pushinteger(L, (lua_Integer)c->version);
  st = lua_pcall(L, 4, 0, 0);
  if (st == LUA_OK) return 1;
  if (st == LUA_ERRMEM) lua_error(L);
  msg = lua_tostring(L, -1);
  if (msg == NULL) msg = "?";
  len = strlen(msg);
  for (p = msg; (p = strstr(p, " (bit ")) != NULL; p++)
    len = (size_t)(p - msg);  /* cut the encoder's bit position */
  bw_decfail(c, BW_EBASELINE, c->r.pos, "baseline value does not fit: %.*s",
          (int)len, msg);
  lua_pop(L, 1);
  return 0;
}

/* Push the decode of the bits bw_keepbaseline left in the schema's writer
** for field 'f': what a full decode of the kept value gives. */
static int pushrecoded (Ctx *c, const bw_Field *f) {
  bw_Reader outer = c->r;
  size_t len;
  const uint8_t *p = bw_writerdata(c->w, &len);
  int ok;
  bw_readerinit(&c->r, p, len);
  ok = bw_decvalue(c, f, 0);
  c->r = outer;
  return ok;
}

int bw_keep (Ctx *c, const bw_Field *f, int v) {
  if (lua_isnil(c->L, v)) {
    if (f->optional) lua_pushnil(c->L);
    else if (f->hasdefault) bw_pushdefault(c, f);
    else return bw_decfail(c, BW_EBASELINE, c->r.pos, "unchanged, but the "
                           "baseline has no value");
    return 1;
  }
  if (c->checked > 0) return bw_pushkept(c, f, v);
  return bw_keepbaseline(c, f, v) && pushrecoded(c, f);
}

/* Push a copy of the value at 'idx' of field 'f', which bw_keepbaseline has
** checked: tables are copied along the schema (sized as decode sizes them),
** so a decoded value never shares a table with its baseline; unless the
** call asked to share them and the baseline is this schema's decode
** (c->share == 2), when the value itself is pushed. A sparse array is
** still copied then (its slots are set in the copy), its records not. The
** tables copied count against max_values as a full decode counts them:
** returns 0 when they run out. */
int bw_pushkept (Ctx *c, const bw_Field *f, int idx) {
  lua_State *L = c->L;
  int t;
  if (lua_type(L, idx) != LUA_TTABLE  /* scalars, absent optionals */
      || (c->share == 2 && f->kind != BW_KSPARSE)) {
    lua_pushvalue(L, idx);
    return 1;
  }
  switch (f->kind) {
    case BW_KSTRUCT: {
      const bw_Type *ty = &c->S->types[f->ref];
      const bw_Field *g = &c->S->fields[ty->first], *end = g + ty->count;
      int defer;
      if (!bw_decspendrecord(c, ty)) return 0;
      defer = bw_openrecord(L, ty);
      t = lua_gettop(L);
      for (; g < end; g++) {
        int tt;
        if (g->name == BW_NONE) continue;
        if (ty->versioned && !bw_fieldpresent(g, c->version)) {
          if (bw_pushabsent(c, g) && !defer) lua_rawset(L, t);
          continue;
        }
        pushkey(c, g->name);
        pushkey(c, g->name);
        tt = lua_rawget(L, idx);  /* stack: key, value */
        if (tt == LUA_TTABLE) {
          if (!bw_pushkept(c, g, lua_gettop(L))) return 0;
          lua_replace(L, -2);
        }
        else if (tt == LUA_TNIL) {
          lua_pop(L, 1);
          if (g->optional || !g->hasdefault) {  /* checked: optional */
            lua_pop(L, 1);
            continue;
          }
          bw_pushdefault(c, g);  /* a field the baseline's schema lacked */
        }
        if (!defer) lua_rawset(L, t);
      }
      if (defer) bw_closerecord(L, t);
      return 1;
    }
    case BW_KARRAY: case BW_KQUAT: {  /* a quat is {x, y, z, w}: 5 */
      const bw_Field *e = f->kind == BW_KARRAY ? &c->S->fields[f->ref] : f;
      lua_Integer i, n = (lua_Integer)lua_rawlen(L, idx);
      if (!bw_decspendlist(c, n)) return 0;
      lua_createtable(L, (int)n, 0);
      t = lua_gettop(L);
      for (i = 1; i <= n; i++) {
        int et = lua_rawgeti(L, idx, i);
        if (et == LUA_TTABLE && e != f) {
          if (!bw_pushkept(c, e, lua_gettop(L))) return 0;
          lua_remove(L, -2);
        }
        lua_rawseti(L, t, i);
      }
      return 1;
    }
    case BW_KSPARSE: {
      const bw_Field *e = &c->S->fields[f->ref];
      if (!bw_decspend(c, 1)) return 0;
      lua_createtable(L, (int)lua_rawlen(L, idx), 0);
      t = lua_gettop(L);
      lua_pushnil(L);
      while (lua_next(L, idx)) {
        if (bw_slotof(L, -2, (lua_Integer)f->max) == 0) {  /* one a decode */
          lua_pop(L, 1);                          /* 'into' it left there */
          continue;
        }
        if (!bw_decspend(c, 1)) return 0;  /* a slot */
        lua_pushvalue(L, -2);
        if (lua_type(L, -2) != LUA_TTABLE) lua_pushvalue(L, -2);
        else if (!bw_pushkept(c, e, lua_gettop(L) - 1)) return 0;
        lua_rawset(L, t);
        lua_pop(L, 1);
      }
      return 1;
    }
    default:
      lua_pushvalue(L, idx);
      return 1;
  }
}

/* An array against the baseline array at 'bidx': its count, then for each
** element the baseline also has, bool(changed) and what changed; the
** elements past the baseline's length in full. */
int bw_decdeltacount (Ctx *c, const bw_Field *f, int64_t bn, int64_t *n) {
  const bw_Field *e = &c->S->fields[f->ref];
  uint64_t start = c->r.pos;
  if (!bw_readrange(c, f, W_COUNT, n)) return 0;
  if (!bw_decspendlist(c, *n)) return 0;
  /* a kept element costs a bit, a new one minbits: refuse before
  ** allocating (a product of the two wrapped past 2^64 and let a count
  ** through that the generated code refuses) */
  if (!bw_countfits((uint64_t)*n, (uint64_t)bn, e->minbits,
                    bw_bitsremaining(&c->r)))
    return bw_needfail(c, start, *n, bw_countbits((uint64_t)*n, (uint64_t)bn,
                                                  e->minbits));
  return 1;
}

static int decdeltaarray (Ctx *c, const bw_Field *f, int bidx, int64_t bn) {
  lua_State *L = c->L;
  const bw_Field *e = &c->S->fields[f->ref];
  int64_t i, n;
  int t;
  if (!bw_decdeltacount(c, f, bn, &n)) return 0;
  bw_newlist(L, n);
  t = lua_gettop(L);
  for (i = 1; i <= n; i++) {
    pushframe(c, BW_NONE, (lua_Integer)i);
    if (i <= bn) {
      uint64_t changed = bw_readbits(&c->r, 1);
      if (c->r.status != BW_OK) return bw_readfail(c);
      if (lua_rawgeti(L, bidx, (lua_Integer)i) == LUA_TTABLE && !changed
          && c->checked > 0) {  /* the common case: a trusted element */
        if (!bw_pushkept(c, e, t + 1)) return 0;
      }
      else if (!(changed ? bw_decdeltavalue(c, e, t + 1) : bw_keep(c, e, t + 1)))
        return 0;
      lua_remove(L, t + 1);
    }
    else if (!bw_decvalue(c, e, 0)) return 0;
    lua_rawseti(L, t, (lua_Integer)i);
    popframe(c);
  }
  return 1;
}

/* delta = "relative" (see encrelative): push the value sent as a difference
** from the baseline value at 'b'. Returns 1, 0 on failure, or -1 when 'b'
** is no value to start from and the value comes whole. */
static int decrelative (Ctx *c, const bw_Field *f, int b) {
  lua_State *L = c->L;
  uint32_t bq[4] = { 0, 0, 0, 0 }, q[4];
  uint64_t base = 0, u;
  if (f->kind == BW_KQUAT ? !bw_quatof(f, L, b, bq)
      : lua_type(L, b) != LUA_TNUMBER
        || !bw_diffbase(f, (double)lua_tonumber(L, b), &base))
    return -1;
  return bw_readrelative(c, f, base, bq, &u, q);
}

int bw_readrelative (Ctx *c, const bw_Field *f, uint64_t base,
                     const uint32_t bq[4], uint64_t *code, uint32_t q[4]) {
  uint64_t start = c->r.pos;
  if (f->kind == BW_KQUAT) {
    if (!bw_readquatdiff(&c->r, f, bq, q)) {
      /* a component's difference out of range fails at its own first
      ** bit, past the flag, and says so, as a relative number does */
      bw_Reader flag = c->r;
      flag.status = BW_OK;
      flag.pos = start;
      if (c->r.status == BW_ERANGE && c->r.errpos > start
          && bw_readbits(&flag, 1))
        return bw_decsay(c, BW_ERANGE, c->r.errpos, W_DIFF, NULL, NULL, NULL);
      return bw_quatfail(c);
    }
    return bw_pushquat(c, f, q, 0);
  }
  else {
    bw_Diff d;
    bw_fielddiff(f, &d);
    *code = bw_readdiff(&c->r, &d, base);
    if (c->r.status == BW_ERANGE)
      return bw_decsay(c, BW_ERANGE, start, W_DIFF, NULL, NULL, NULL);
    if (c->r.status != BW_OK) return bw_readfail(c);
    return pushfixed(c, f, *code, start);
  }
}

/* A changed value of field 'f' against its baseline value at 'bidx':
** records, arrays and sparse arrays as deltas when the baseline has one,
** anything else in full. */
int bw_decdeltavalue (Ctx *c, const bw_Field *f, int bidx) {
  if (f->relative) {  /* a difference from the baseline value, if usable */
    int rel = decrelative(c, f, bidx);
    if (rel >= 0) return rel;
  }
  if (lua_istable(c->L, bidx)) {
    lua_Integer bn = 0;
    switch (f->kind) {
      case BW_KSTRUCT: return bw_decdeltastruct(c, f->ref, bidx);
      case BW_KSPARSE: return bw_decsparse(c, f, 0, bidx);
      case BW_KARRAY:
        bw_arraybase(c->L, bidx, &bn);  /* a table: always */
        return decdeltaarray(c, f, bidx, (int64_t)bn);
      default: break;
    }
  }
  return bw_decvalue(c, f, 0);
}

/* A record against its baseline at 'bidx' (see bw_encdeltastruct). The
** changed bit comes first, so the baseline's value is fetched only where it
** is needed: to keep it, or to decode a delta of it. */
int bw_decdeltastruct (Ctx *c, uint32_t t, int bidx) {
  lua_State *L = c->L;
  const bw_Type *ty = &c->S->types[t];
  const bw_Field *f = &c->S->fields[ty->first];
  const bw_Field *end = f + ty->count;
  int tbl, hasb = lua_istable(L, bidx);
  Frame *fr;
  if ((tbl = bw_opendeltarecord(c, ty, &fr)) == 0) return 0;
  for (; f < end; f++) {
    uint64_t changed;
    if (ty->versioned && !bw_fieldpresent(f, c->version)) {
      bw_setabsent(c, f, tbl);
      continue;
    }
    setframe(fr, f);
    if (f->name == BW_NONE) {  /* align or check */
      if (!bw_decleaf(c, f)) return 0;
      continue;
    }
    changed = bw_readbits(&c->r, 1);
    if (c->r.status != BW_OK) return bw_readfail(c);
    pushkey(c, f->name);
    if (!changed) {
      int tt = bw_pushbasefield(c, f, bidx, hasb);
      /* a scalar of a baseline this schema decoded is kept as it is */
      if (tt == LUA_TTABLE || tt == LUA_TNIL || c->checked == 0) {
        if (!bw_keep(c, f, tbl + 2)) return 0;
        lua_replace(L, tbl + 2);
      }
    }
    else {
      uint64_t present = 1;
      if (f->optional) {
        present = bw_readbits(&c->r, 1);
        if (c->r.status != BW_OK) return bw_readfail(c);
      }
      if (!present) lua_pushnil(L);
      else if (f->kind < BW_KARRAY && !f->relative) {  /* no baseline needed */
        if (!bw_decleaf(c, f)) return 0;
      }
      else {
        bw_pushbasefield(c, f, bidx, hasb);
        if (!bw_decdeltavalue(c, f, tbl + 2)) return 0;
        lua_remove(L, tbl + 2);
      }
    }
    lua_rawset(L, tbl);
  }
  c->nframes--;
  return 1;
}

/* }========================================================== */


/* {===================== decoded values and their schema ===================== */
/* Each schema keeps a weak-keyed table (a user value) from the tables its
** decode returned to their type id, when it decoded at the schema's own
** version. A delta against such a baseline, for the same type, keeps its
** values unchecked (they are values of the type already); any other
** baseline (built by hand, of another type, decoded under other definitions
** or at another version) has each kept value checked, the fields it lacks
** take their default and the fields the type lacks are dropped. A baseline
** is taken as it was decoded: a table changed by hand afterwards is the
** caller's to keep valid. */

/* Make the table at 'into' hold the keys of the table on top, and put it
** on top instead: a delta decoded 'into' a table. The tape the top one
** kept ('taped') is now 'into's. */
static void moveinto (lua_State *L, int into, int taped) {
  int top = lua_gettop(L);
  if (taped) bw_tapemove(L, top, into);
  lua_pushnil(L);
  while (lua_next(L, into)) {  /* clearing fields while traversing is
                                  allowed */
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    lua_pushnil(L);
    lua_rawset(L, into);
  }
  lua_pushnil(L);
  while (lua_next(L, top)) {
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, into);
  }
  lua_pushvalue(L, into);
  lua_replace(L, top);
}

/* A share decode's result and its baseline hold the same record and array
** tables: each is marked lent, and a decode into a lent table makes fresh
** tables and moves them in, as a delta does, instead of refilling the
** shared ones in place under the other's feet. A decode into it that
** shares nothing leaves it its own again. The marks are the state's, not
** a schema's: a reload's schema decodes into tables the last one lent. */
static const char LENT = 'l';  /* its address: the registry's key */

static int islent (lua_State *L, int idx) {
  int top = lua_gettop(L), lent = 0;
  if (bw_pushweakreg(L, &LENT, 0)) {
    lua_pushvalue(L, idx);
    lent = lua_rawget(L, -2) != LUA_TNIL;
  }
  lua_settop(L, top);
  return lent;
}

static void setlent (lua_State *L, int idx, int lent) {
  int top = lua_gettop(L);
  if (bw_pushweakreg(L, &LENT, lent)) {
    lua_pushvalue(L, idx);
    if (lent) lua_pushboolean(L, 1);
    else lua_pushnil(L);
    lua_rawset(L, -3);
  }
  lua_settop(L, top);
}

/* Pushes the value (1) or returns 0 with the failure in 'c'. */
int bw_decodetop (Ctx *c, uint32_t t, int into, int b) {
  int ok, taped = 0, fresh = into && islent(c->L, into), inplace;
  const struct Tape *tape;
  if (into && !fresh) bw_intoprepare(c, t, into, b);
  /* a delta's tape walk refills 'into' in place, as a full decode does,
  ** unless 'into' is the baseline, which a failure partway would leave
  ** half written */
  inplace = into && !fresh && b && !lua_rawequal(c->L, into, b);
  if (b) {
    int hold;
    lua_pushnil(c->L);  /* holds the baseline's tape through the walk */
    hold = lua_gettop(c->L);
    c->checked = bw_decodedas(c, t, b, &tape, hold);
    if (c->share && c->checked) c->share = 2;
    /* a tape holds what a baseline of this schema's own decoded to */
    ok = c->share || !c->checked ? -1
         : bw_dectape(c, t, b, tape, inplace ? into : 0);
    if (ok == 1) lua_replace(c->L, hold);  /* the value pushed above it */
    else lua_settop(c->L, hold - 1);
    taped = ok > 0;  /* the tape it keeps says it was decoded */
    if (ok < 0) ok = bw_decdeltastruct(c, t, b);
    c->checked = 0;
    /* the result holds the baseline's tables: both are lent before 'into'
    ** takes them, as lending allocates, and a memory error after the move
    ** would leave 'into' holding them unlent, under its old tape */
    if (ok && c->share == 2) {
      setlent(c->L, into ? into : lua_gettop(c->L), 1);
      setlent(c->L, b, 1);
    }
    if (ok == 1 && into) moveinto(c->L, into, taped);
  }
  else {
    ok = bw_decstruct(c, t, fresh ? 0 : into);
    if (ok && fresh) moveinto(c->L, into, 0);
  }
  /* a table met twice (one the caller put in two places) was refilled
  ** where the walk met it first, maybe as another type than the one it
  ** held keys of: cleared now along the type, each table in one place */
  if (ok == 2 && c->claims->twice) bw_intoclean(c, t, into, 0);
  if (ok == 2) lua_pushvalue(c->L, into);  /* refilled in place */
  if (ok && into && c->share != 2) setlent(c->L, into, 0);
  if (ok && !taped) bw_setdecoded(c, t, lua_gettop(c->L), 1);
  else if (!ok && into) bw_setdecoded(c, t, into, 0);
  return ok != 0;
}

/* }========================================================== */
