/*
** lbw_sandboxcopy.c - a definitions file's result copied out of its
** sandbox state into the host's, bounded in nodes, bytes and depth, and
** its text made safe for a terminal (lbw_sandbox.c runs the file)
** See LICENSE for copyright and terms.
*/

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "lua.h"
#include "lauxlib.h"
#include "lbw.h"

/* {===================== copying the description out ===================== */

typedef struct Copy {
  lua_State *S, *L;
  lua_Integer nodes, maxnodes;   /* tables and fields copied, and the cap */
  size_t bytes, maxbytes;        /* string bytes copied, and the cap */
  int keys[BW_MAXCOPYDEPTH];        /* S index of the key at each depth */
} Copy;

/* Add 's' to 'b' while 'b' stays within 'max' bytes, as text no terminal
** acts on: C0, DEL, C1 and bytes that are no UTF-8 written as %q writes
** a control byte (\27, or \027 before a digit), so a NUL does not end
** it either; never a part of a character or of an escape. Returns the
** bytes of 's' taken. */
size_t bw_sbaddtext (luaL_Buffer *b, const char *s, size_t len,
                       size_t max) {
  size_t i = 0;
  while (i < len) {
    unsigned char c = (unsigned char)s[i];
    size_t n = c < 0xc0 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    int raw = c >= 0x20 && c != 0x7f
              && (c < 0x80 ? 1 : n > 1 && n <= len - i
                  && bw_utf8valid(s + i, n)
                  && !(c == 0xc2 && (unsigned char)s[i + 1] < 0xa0));
    if (raw) {
      if (luaL_bufflen(b) + n > max) break;
      luaL_addlstring(b, s + i, n);
      i += n;
    }
    else {
      char esc[8];
      int digit = i + 1 < len && isdigit((unsigned char)s[i + 1]);
      int k = snprintf(esc, sizeof esc, digit ? "\\%03u" : "\\%u", (unsigned)c);
      if (luaL_bufflen(b) + (size_t)k > max) break;
      luaL_addlstring(b, esc, (size_t)k);
      i++;
    }
  }
  return i;
}

/* Push on L where the key at 'depth' is: "Entity[2].min". */
static void pushpath (Copy *c, int depth) {
  luaL_Buffer b;
  int d;
  luaL_buffinit(c->L, &b);
  for (d = 0; d <= depth && luaL_bufflen(&b) < 200; d++) {
    int k = c->keys[d];
    switch (lua_type(c->S, k)) {
      case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(c->S, k, &len);
        if (d > 0) luaL_addchar(&b, '.');
        bw_sbaddtext(&b, s, len, 200);
        break;
      }
      case LUA_TNUMBER:
        if (lua_isinteger(c->S, k))
          lua_pushfstring(c->L, "[%I]", (LUAI_UACINT)lua_tointeger(c->S, k));
        else
          lua_pushfstring(c->L, "[%f]", (LUAI_UACNUMBER)lua_tonumber(c->S, k));
        luaL_addvalue(&b);
        break;
      default:
        luaL_addstring(&b, lua_toboolean(c->S, k) ? "[true]" : "[false]");
    }
  }
  luaL_pushresult(&b);
}

static int copytable (Copy *c, int t, int depth);

/* Push on L a copy of the value at S index 'v', which sits under the keys
** of depths 0..depth-1. Returns 0, or 1 with a message pushed on L. */
static int copyvalue (Copy *c, int v, int depth) {
  lua_State *S = c->S, *L = c->L;
  switch (lua_type(S, v)) {
    case LUA_TBOOLEAN:
      lua_pushboolean(L, lua_toboolean(S, v));
      return 0;
    case LUA_TNUMBER:  /* the bits of a float, NaN payloads included */
      if (lua_isinteger(S, v)) lua_pushinteger(L, lua_tointeger(S, v));
      else lua_pushnumber(L, lua_tonumber(S, v));
      return 0;
    case LUA_TSTRING: {
      size_t len;
      const char *s = lua_tolstring(S, v, &len);
      if (len > c->maxbytes - c->bytes) {
        lua_pushfstring(L, "description's strings take more than max_size, "
                        "%I bytes (a string reached twice counts twice)",
                        (LUAI_UACINT)c->maxbytes);
        return 1;
      }
      c->bytes += len;
      lua_pushlstring(L, s, len);
      return 0;
    }
    case LUA_TTABLE:
      return copytable(c, v, depth);
    default:
      pushpath(c, depth - 1);
      lua_pushfstring(L, "description holds a %s at %s: only tables, "
                      "strings, numbers and booleans are kept",
                      luaL_typename(S, v), lua_tostring(L, -1));
      return 1;
  }
}

static int toomany (Copy *c) {
  lua_pushfstring(c->L, "description has more than %I tables and fields "
                  "(max_nodes; a table reached twice counts twice)",
                  (LUAI_UACINT)c->maxnodes);
  return 1;
}

/* The table at S index 't' (its keys at 'depth'), as copyvalue. */
static int copytable (Copy *c, int t, int depth) {
  lua_State *S = c->S, *L = c->L;
  if (depth >= BW_MAXCOPYDEPTH) {
    pushpath(c, depth - 1);
    lua_pushfstring(L, "description nests deeper than %d tables at %s",
                    BW_MAXCOPYDEPTH, lua_tostring(L, -1));
    return 1;
  }
  if (++c->nodes > c->maxnodes) return toomany(c);
  luaL_checkstack(L, 4, "copying a description");
  lua_newtable(L);
  lua_pushnil(S);  /* run reserved S's stack for BW_MAXCOPYDEPTH levels */
  while (lua_next(S, t)) {
    int k = lua_gettop(S) - 1, kt = lua_type(S, k);
    c->keys[depth] = k;
    if (++c->nodes > c->maxnodes) return toomany(c);
    if (kt != LUA_TSTRING && kt != LUA_TNUMBER && kt != LUA_TBOOLEAN) {
      pushpath(c, depth - 1);
      lua_pushfstring(L, "description has a %s key in %s: only strings, "
                      "numbers and booleans are kept", luaL_typename(S, k),
                      depth > 0 ? lua_tostring(L, -1) : "the returned table");
      return 1;
    }
    if (copyvalue(c, k, depth) || copyvalue(c, k + 1, depth + 1)) return 1;
    lua_rawset(L, -3);
    lua_pop(S, 1);
  }
  return 0;
}

/* }========================================================== */

int bw_sbcopy (lua_State *S, lua_State *L, lua_Integer maxnodes,
               size_t maxbytes) {
  Copy c;
  c.S = S;
  c.L = L;
  c.nodes = 0;
  c.maxnodes = maxnodes;
  c.bytes = 0;
  c.maxbytes = maxbytes;
  return copyvalue(&c, lua_gettop(S), 0);
}
