/*
** lbw_frame.c - framed packets: header, message, end check
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


/* {===================== framed packets ===================== */

static uint64_t checkid (lua_State *L, int arg) {
  return (uint64_t)luaL_checkinteger(L, arg);
}

/* Frame header options: 'tag' (32 bits naming the schema) and
** 'version_bits' (the version travels in that many bits). */
typedef struct FrameOpts {
  int      hastag;
  uint32_t tag;
  unsigned versionbits;
  int      deltas;      /* frames say whether they are deltas, and of what */
} FrameOpts;

#define BASELINEBITS 16   /* width of a baseline id in a frame */

static void optframe (lua_State *L, int arg, FrameOpts *fo) {
  lua_Integer v;
  memset(fo, 0, sizeof(*fo));
  if (!lua_istable(L, arg)) return;
  lua_getfield(L, arg, "tag");
  if (!lua_isnil(L, -1)) {
    v = bw_optfield(L, arg, "tag", 0);
    luaL_argcheck(L, v >= 0 && v <= 0xFFFFFFFF, arg, "'tag' must fit 32 bits");
    fo->hastag = 1;
    fo->tag = (uint32_t)v;
  }
  lua_pop(L, 1);
  v = bw_optfield(L, arg, "version_bits", 0);
  luaL_argcheck(L, v >= 0 && v <= 32, arg, "'version_bits' must be 0..32");
  fo->versionbits = (unsigned)v;
  lua_getfield(L, arg, "deltas");
  fo->deltas = lua_toboolean(L, -1);
  lua_pop(L, 1);
}

/* s:frame_encode(id, endcheck, name, value, message [, opts]) -> packet.
** Layout: CRC32, [tag], [version], [type id], value, [check]. */
static int schema_frameencode (lua_State *L) {
  LSchema *ls = bw_checkschema(L, 1);
  uint64_t id = checkid(L, 2);
  int endcheck = lua_toboolean(L, 3);
  uint32_t t = bw_checktype(L, 4);
  int msg = lua_toboolean(L, 6);
  FrameOpts fo;
  Ctx c;
  int b;
  lua_Integer bid = 0;
  optframe(L, 7, &fo);
  b = bw_optbaseline(L, 7);
  if (b) {
    luaL_argcheck(L, fo.deltas, 7, "a baseline needs a protocol with deltas");
    lua_getfield(L, 7, "baseline_id");
    bid = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : -1;
    luaL_argcheck(L, bid >= 0 && bid < (1 << BASELINEBITS), 7,
                  "'baseline_id' must be an integer in [0, 65535]");
    lua_pop(L, 1);
  }
  bw_initctx(L, &c, ls, bw_optversion(L, 7, ls->S), 1);
  if (fo.versionbits < 32 && (uint64_t)c.version >> fo.versionbits != 0
      && fo.versionbits > 0)
    return luaL_error(L, "version %d does not fit in %d bits",
                      (int)c.version, (int)fo.versionbits);
  bw_writerreset(c.w);
  bw_framebegin(c.w);
  if (fo.hastag) bw_writebits(c.w, fo.tag, 32);
  if (fo.versionbits) bw_writebits(c.w, c.version, fo.versionbits);
  if (fo.deltas) {
    bw_writebits(c.w, b != 0, 1);
    if (b) bw_writebits(c.w, (uint64_t)bid, BASELINEBITS);
  }
  if (msg) bw_writemessageid(&c, t);
  bw_encodebody(&c, t, 5, b);
  if (bw_frameend(c.w, id, endcheck) != BW_OK)
    return bw_encerror(&c, "%s", bw_strerror(c.w->status));
  return bw_pushencoded(L, c.w);
}

/* s:frame_decode(packet, id, endcheck, name, message [, opts]) ->
** value, or name, value for a message | nil, message, code */
static int schema_framedecode (lua_State *L) {
  LSchema *ls = bw_checkschema(L, 1);
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  uint64_t id = checkid(L, 3);
  int endcheck = lua_toboolean(L, 4);
  int msg = lua_toboolean(L, 6);
  uint32_t version = bw_optversion(L, 7, ls->S);
  int into = bw_optinto(L, 7), b = 0, baselines = 0;
  uint32_t t = msg ? 0 : bw_checktype(L, 5);
  FrameOpts fo;
  Ctx c;
  optframe(L, 7, &fo);
  if (fo.deltas && lua_istable(L, 7)) {
    lua_getfield(L, 7, "baselines");
    baselines = lua_istable(L, -1) ? lua_gettop(L) : 0;
  }
  bw_initctx(L, &c, ls, version, 1);
  bw_optmaxvalues(L, 7, &c);
  if (bw_frameopen(&c.r, s, len, id, endcheck) != BW_OK) {
    bw_readfail(&c);
    return bw_pushdecodeerror(L, &c);
  }
  if (fo.hastag) {
    uint64_t tag = bw_readbits(&c.r, 32);
    if (c.r.status != BW_OK) {
      bw_readfail(&c);
      return bw_pushdecodeerror(L, &c);
    }
    if (tag != fo.tag) {
      bw_decfail(&c, BW_ESCHEMA, 32, "packet for schema %08" PRIx64
              ", this is %08" PRIx32, tag, fo.tag);
      return bw_pushdecodeerror(L, &c);
    }
  }
  if (fo.versionbits) {
    uint64_t start = c.r.pos;
    c.version = (uint32_t)bw_readbits(&c.r, fo.versionbits);
    if (c.r.status != BW_OK) {
      bw_readfail(&c);
      return bw_pushdecodeerror(L, &c);
    }
    if (c.version == UINT32_MAX) {  /* no encode writes it (optversion) */
      bw_decfail(&c, BW_ERANGE, start, "version %" PRIu32 " out of range [0, %"
              PRIu32 "]", c.version, UINT32_MAX - 1);
      return bw_pushdecodeerror(L, &c);
    }
  }
  if (fo.deltas && bw_readbits(&c.r, 1)) {
    uint64_t start = c.r.pos;
    lua_Integer bid = (lua_Integer)bw_readbits(&c.r, BASELINEBITS);
    if (c.r.status != BW_OK) {
      bw_readfail(&c);
      return bw_pushdecodeerror(L, &c);
    }
    if (baselines == 0 || lua_rawgeti(L, baselines, bid) != LUA_TTABLE) {
      bw_decfail(&c, BW_EBASELINE, start, "unknown baseline %lld",
              (long long)bid);
      return bw_pushdecodeerror(L, &c);
    }
    b = lua_gettop(L);
    into = 0;
  }
  if (c.r.status != BW_OK) {
    bw_readfail(&c);
    return bw_pushdecodeerror(L, &c);
  }
  if (msg && !bw_readmessageid(&c, &t)) return bw_pushdecodeerror(L, &c);
  if (!bw_decodefrom(&c, t, into, b)) return bw_pushdecodeerror(L, &c);
  return msg ? 2 : 1;
}

/* s:share() -> handle: a light userdata holding one more reference, for
** core.adopt in another lua_State of this process. */


const luaL_Reg bw_framemethods[] = {
  {"frame_encode", schema_frameencode},
  {"frame_decode", schema_framedecode},
  {NULL, NULL}
};
