/*
** lbw_frame.c - framed packets: header, message, end check
** See LICENSE for copyright and terms.
*/

/*
** s:frame_encode(hdr, name, value [, opts]) and s:frame_decode(hdr,
** packet [, opts]) are what bitwire.protocol calls. 'hdr' holds the
** protocol's header options (read once per call into a bw_FrameHeader; the
** layout itself is core/bw_frame.c's):
**   id            integer fed to the CRC, never sent (default 0)
**   fingerprint   fold the schema's fingerprint into the id
**   check         an end check closes the packet
**   tagged        the 32-bit tag of the schema follows the CRC; on decode,
**                 'schemas' (tag -> schema) finds the schema of another tag
**   version_bits  the version travels in that many bits (0: not sent)
**   deltas        bool(delta) and a 16-bit baseline id
**   message       false: no message id; decode reads type 'type'
** Per call: encode takes baseline, baseline_id, strict and version;
** decode takes baselines ({[id] = value}), into, max_values, share and
** version. Unknown keys in either table raise, as every call's options.
*/

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lauxlib.h"

#include "lbw_schema.h"


/* {===================== framed packets ===================== */

static int optbool (lua_State *L, int arg, const char *k, int def) {
  int v;
  if (lua_getfield(L, arg, k) == LUA_TNIL) v = def;
  else v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

/* Header options of the table at 'arg' into 'h' (protocolid: the user's
** id); '*fold' says whether to fold the schema's fingerprint into it,
** '*given' whether the table named the tag ('tag') instead of taking the
** schema's ('tagged'). */
static void checkheader (lua_State *L, int arg, bw_FrameHeader *h,
                         int *fold, int *given) {
  static const char *const keys[] = {"check", "deltas", "fingerprint", "id",
    "message", "schemas", "tag", "tagged", "type", "version_bits", NULL};
  lua_Integer v;
  luaL_checktype(L, arg, LUA_TTABLE);
  bw_checkkeys(L, arg, keys, "header option");
  memset(h, 0, sizeof(*h));
  h->protocolid = (uint64_t)bw_optfield(L, arg, "id", 0);
  *fold = optbool(L, arg, "fingerprint", 0);
  if (optbool(L, arg, "check", 1)) h->flags |= BW_FCHECK;
  if (optbool(L, arg, "tagged", 0)) h->flags |= BW_FTAG;
  lua_getfield(L, arg, "tag");  /* an explicit tag instead of the schema's */
  if (!lua_isnil(L, -1)) {
    v = bw_optfield(L, arg, "tag", 0);
    luaL_argcheck(L, v >= 0 && v <= 0xFFFFFFFF, arg, "'tag' must fit 32 bits");
    h->flags |= BW_FTAG;
    h->tag = (uint32_t)v;
  }
  *given = !lua_isnil(L, -1);
  lua_pop(L, 1);
  luaL_argcheck(L, !(*fold && (h->flags & BW_FTAG)), arg,
                "'fingerprint' and 'tagged' together");
  v = bw_optfield(L, arg, "version_bits", 0);
  if (v < 0 || v > BW_MAXVERSIONBITS)
    luaL_argerror(L, arg, lua_pushfstring(L, "'version_bits' must be 0..%d",
                                          BW_MAXVERSIONBITS));
  if (v > 0) {
    h->flags |= BW_FVERSION;
    h->versionbits = (unsigned)v;
  }
  if (optbool(L, arg, "deltas", 0)) h->flags |= BW_FDELTAS;
  if (optbool(L, arg, "message", 1)) h->flags |= BW_FMESSAGE;
}

/* The header's keys among the positional form's options (below). */
static const char *const oldkeys[] = {"tag", "version_bits", "deltas", NULL};

static int isoldkey (lua_State *L, int idx) {
  int i;
  if (lua_type(L, idx) != LUA_TSTRING) return 0;
  for (i = 0; oldkeys[i] != NULL; i++)
    if (strcmp(oldkeys[i], lua_tostring(L, idx)) == 0) return 1;
  return 0;
}

/* The call's options of the positional form's 'opts': a copy without the
** header's keys, whose other keys the call checks. */
static void pusholdopts (lua_State *L, int opts) {
  if (!lua_istable(L, opts)) {
    lua_pushvalue(L, opts);
    return;
  }
  lua_newtable(L);
  lua_pushnil(L);
  while (lua_next(L, opts)) {
    if (isoldkey(L, -2)) lua_pop(L, 1);
    else {
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, -4);
    }
  }
}

/* The positional form of earlier releases, kept so code written against
** it runs: s:frame_encode(id, endcheck, name, value, message [, opts]) and
** s:frame_decode(packet, id, endcheck, name, message [, opts]), 'opts'
** holding the header options (tag, version_bits, deltas) with the call's.
** Pushes the header table those arguments describe. */
static void pusholdheader (lua_State *L, int id, int check, int name,
                           int msg, int opts) {
  int i;
  lua_createtable(L, 0, 8);
  lua_pushinteger(L, luaL_checkinteger(L, id));
  lua_setfield(L, -2, "id");
  lua_pushboolean(L, lua_toboolean(L, check));
  lua_setfield(L, -2, "check");
  lua_pushboolean(L, lua_toboolean(L, msg));
  lua_setfield(L, -2, "message");
  lua_pushvalue(L, name);
  lua_setfield(L, -2, "type");
  if (lua_istable(L, opts))
    for (i = 0; oldkeys[i] != NULL; i++) {
      lua_getfield(L, opts, oldkeys[i]);
      lua_setfield(L, -2, oldkeys[i]);
    }
}

static int schema_frameencode (lua_State *L);
static int schema_framedecode (lua_State *L);

static int oldencode (lua_State *L) {
  lua_settop(L, 7);
  lua_pushcfunction(L, schema_frameencode);
  lua_pushvalue(L, 1);
  pusholdheader(L, 2, 3, 4, 6, 7);
  lua_pushvalue(L, 4);
  lua_pushvalue(L, 5);
  pusholdopts(L, 7);
  lua_call(L, 5, 1);
  return 1;
}

static int olddecode (lua_State *L) {
  int msg;
  lua_settop(L, 7);
  msg = lua_toboolean(L, 6);
  lua_pushcfunction(L, schema_framedecode);
  lua_pushvalue(L, 1);
  pusholdheader(L, 3, 4, 5, 6, 7);
  lua_pushvalue(L, 2);
  pusholdopts(L, 7);
  lua_call(L, 4, 3);
  if (lua_isnil(L, -3)) return 3;  /* nil, message, code */
  lua_pop(L, 1);                   /* the schema */
  return msg ? 2 : 1;              /* name, value | value */
}

/* s:frame_encode(hdr, name, value [, opts]) -> packet */
static int schema_frameencode (lua_State *L) {
  LSchema *ls;
  bw_FrameHeader h;
  uint32_t t;
  int fold, given, b;
  Opts o;
  Ctx c;
  if (lua_type(L, 2) == LUA_TNUMBER) return oldencode(L);
  ls = bw_takeschema(L, 5);  /* an omitted value is nil */
  checkheader(L, 2, &h, &fold, &given);
  t = bw_checktype(L, 3);
  bw_readopts(L, 5, OPTS_FRAMEENC, &o);
  b = bw_optbaseline(L, &o);
  if (b) {
    int at = o.at[OPT_BASELINEID];
    lua_Integer bid;
    if (at == 0 || !bw_optinteger(L, at, &bid)) bid = -1;
    luaL_argcheck(L, h.flags & BW_FDELTAS, 5,
                  "a baseline needs a protocol with deltas = true");
    luaL_argcheck(L, bid >= 0 && bid < (1 << BW_BASELINEBITS), 5,
                  "'baseline_id' must be an integer in [0, 65535]");
    h.delta = 1;
    h.baseline = (uint32_t)bid;
  }
  luaL_argcheck(L, (h.flags & BW_FVERSION) || o.at[OPT_VERSION] == 0, 5,
                "'version' needs a versioned protocol");
  bw_initheld(L, &c, ls, bw_optversion(L, &o, ls->S));
  c.strict = bw_optstrict(L, &o, c.strict);
  if ((h.flags & BW_FVERSION) && h.versionbits < 32
      && (uint64_t)c.version >> h.versionbits != 0)
    return luaL_error(L, "version %d does not fit in %d bits",
                      (int)c.version, (int)h.versionbits);
  if (fold) h.protocolid = bw_frameprotocolid(h.protocolid, ls->S->fingerprint);
  if (!given) h.tag = bw_frametag(ls->S->fingerprint);
  h.version = c.version;
  h.typebits = ls->S->typebits;
  if (h.flags & BW_FMESSAGE) {  /* the type's message id (its 'messages') */
    h.type = bw_msgid(ls->S, t);
    if (h.type == BW_NONE)
      return luaL_error(L, "'%s' is not a message (not in the schema's "
                        "'messages')", ls->S->names[ls->S->types[t].name]);
  }
  bw_writerreset(c.w);
  bw_framewriteheader(c.w, &h);
  bw_encodebody(&c, t, 4, b);
  if (bw_frameend(c.w, h.protocolid, (h.flags & BW_FCHECK) != 0) != BW_OK)
    return bw_encerror(&c, "%s", bw_strerror(c.w->status));
  return bw_pushencoded(L, c.w);
}

/* Reading a tagged frame: the schema the tag names becomes the one at
** index 1 (and '*ls'): this one, or one of 'hdr.schemas' (tag -> schema). */
typedef struct Lookup {
  lua_State *L;
  LSchema  **ls;
  int        given;   /* the header named its tag: only that one */
  uint32_t   tag;
} Lookup;

static int picktagged (void *ud, uint32_t tag, unsigned *typebits) {
  Lookup *lk = (Lookup *)ud;
  lua_State *L = lk->L;
  LSchema *o;
  if (lk->given) {
    if (tag != lk->tag) return 0;
  }
  else if (tag != bw_frametag((*lk->ls)->S->fingerprint)) {
    lua_pushliteral(L, "schemas");
    if (lua_rawget(L, 2) != LUA_TTABLE) {
      lua_pop(L, 1);
      return 0;
    }
    lua_rawgeti(L, -1, (lua_Integer)tag);
    o = (LSchema *)luaL_testudata(L, -1, SCHEMA_MT);
    if (o == NULL || o->S == NULL || bw_frametag(o->S->fingerprint) != tag) {
      lua_pop(L, 2);
      return 0;
    }
    *lk->ls = o;
    lua_replace(L, 1);
    lua_pop(L, 1);
  }
  *typebits = (*lk->ls)->S->typebits;
  return 1;
}

/* s:frame_decode(hdr, packet [, opts]) -> name, value, schema |
** nil, message, code. 'schema' is the one the packet's tag named. */
static int schema_framedecode (lua_State *L) {
  LSchema *ls, *held;
  bw_FrameHeader h;
  bw_Reader r;
  size_t len;
  const char *s;
  int fold, given, into, baselines, ok, b = 0;
  Lookup lk;
  uint32_t version, t;
  Opts o;
  Ctx c;
  char t1[BW_NUMTEXT], t2[BW_NUMTEXT];
  if (lua_type(L, 3) == LUA_TNUMBER) return olddecode(L);
  held = ls = bw_takeschema(L, 4);
  checkheader(L, 2, &h, &fold, &given);
  s = luaL_checklstring(L, 3, &len);
  bw_readopts(L, 4, OPTS_FRAMEDEC, &o);
  into = bw_optinto(L, &o);
  baselines = bw_opttable(L, &o, OPT_BASELINES);
  if (fold) h.protocolid = bw_frameprotocolid(h.protocolid, ls->S->fingerprint);
  h.typebits = ls->S->typebits;
  lk.L = L;
  lk.ls = &ls;
  lk.given = given;
  lk.tag = h.tag;
  h.lookup = picktagged;
  h.ud = &lk;
  bw_framereadheader(&r, s, len, &h);
  if (h.flags & BW_FVERSION) {
    luaL_argcheck(L, o.at[OPT_VERSION] == 0, 4,
                  "'version' comes from the packet of a versioned protocol");
    version = h.version;
  }
  else version = bw_optversion(L, &o, ls->S);
  if (ls != held) bw_entercall(L, ls);  /* the one the packet's tag named */
  bw_initheld(L, &c, ls, version);
  bw_optdecode(L, &o, &c);
  c.r = r;
  if (r.status != BW_OK) {  /* named by the part it is in, as the walk */
    c.head = bw_framepath(h.part);
    if (r.status == BW_ECRC) bw_decsay(&c, BW_ECRC, 0, W_CRC, NULL, NULL, NULL);
    else if (r.status == BW_ERANGE)  /* the one version no encode writes */
      bw_decsayi(&c, BW_ERANGE, r.errpos, W_VERSION, h.version,
                 BW_MAXVERSION, 0);
    else if (r.status == BW_ESCHEMA) {
      snprintf(t1, sizeof(t1), "%08" PRIx32, h.tag);
      if (lk.given) snprintf(t2, sizeof(t2), "%08" PRIx32, lk.tag);
      else snprintf(t2, sizeof(t2), "%016" PRIx64, ls->S->fingerprint);
      bw_decsay(&c, BW_ESCHEMA, 32, lk.given ? W_TAGGED : W_SCHEMA, t1, t2,
                NULL);
    }
    else if (r.status == BW_ETRUNC && h.part == BW_PFRAME)
      bw_decsayi(&c, BW_ETRUNC, r.errpos, W_FRAMESIZE, (int64_t)len,
                 BW_FRAMEMIN((h.flags & BW_FCHECK) != 0), 0);
    else bw_readfail(&c);
    return bw_pushdecodeerror(L, &c);
  }
  if (h.delta) {
    lua_Integer bid = (lua_Integer)h.baseline;
    if (baselines == 0 || lua_rawgeti(L, baselines, bid) != LUA_TTABLE) {
      c.head = bw_framepath(BW_PBASELINE);
      bw_decsayi(&c, BW_EBASELINE, h.typepos - BW_BASELINEBITS, W_BASELINE,
                 bid, 0, 0);
      return bw_pushdecodeerror(L, &c);
    }
    b = lua_gettop(L);
  }
  if (h.flags & BW_FMESSAGE) {  /* a message id: its type */
    t = bw_msgtype(ls->S, h.type);
    if (t == BW_NONE) {
      c.head = bw_framepath(BW_PTYPE);
      bw_decsayi(&c, BW_ETAG, h.typepos, W_MSGTYPE, h.type,
                 (int64_t)ls->S->nmessages - 1, 0);
      return bw_pushdecodeerror(L, &c);
    }
    lua_rawgeti(L, c.names, (lua_Integer)ls->S->types[t].name + 1);
  }
  else {
    lua_getfield(L, 2, "type");
    t = bw_checktype(L, lua_gettop(L));
  }
  ok = bw_decodefrom(&c, t, into, b);
  if (!ok) return bw_pushdecodeerror(L, &c);
  lua_pushvalue(L, 1);
  return 3;
}

/* s:tag() -> the 32-bit tag that names the schema in tagged frames */
static int schema_tag (lua_State *L) {
  LSchema *ls = bw_checkschema(L, 1);
  lua_pushinteger(L, (lua_Integer)bw_frametag(ls->S->fingerprint));
  return 1;
}

/* core.protocol_id(id, fingerprint) -> the id a protocol over a schema of
** that fingerprint (16 hex digits) feeds its CRC */
static int core_protocolid (lua_State *L) {
  lua_Integer id = luaL_checkinteger(L, 1);
  size_t n;
  const char *fp = luaL_checklstring(L, 2, &n);
  uint64_t f = 0;
  size_t i;
  luaL_argcheck(L, n == 16, 2, "expected 16 hex digits");
  for (i = 0; i < n; i++) {
    int d = fp[i] >= '0' && fp[i] <= '9' ? fp[i] - '0'
          : fp[i] >= 'a' && fp[i] <= 'f' ? fp[i] - 'a' + 10 : -1;
    luaL_argcheck(L, d >= 0, 2, "expected 16 lowercase hex digits");
    f = f << 4 | (uint64_t)d;
  }
  lua_pushinteger(L, (lua_Integer)bw_frameprotocolid((uint64_t)id, f));
  return 1;
}

const luaL_Reg bw_framemethods[] = {
  {"frame_encode", schema_frameencode},
  {"frame_decode", schema_framedecode},
  {"tag", schema_tag},
  {NULL, NULL}
};

const luaL_Reg bw_framefuncs[] = {
  {"protocol_id", core_protocolid},
  {NULL, NULL}
};

/* }========================================================== */
