/*
** lbw.h - shared declarations of the Lua binding (bindings/ only)
** See LICENSE for copyright and terms.
*/
#ifndef LBW_H
#define LBW_H
#include "lua.h"
#include "lauxlib.h"
#include "bw.h"

#define WRITER_MT  "bitwire.Writer"
#define READER_MT  "bitwire.Reader"
#define SCHEMA_MT  "bitwire.Schema"

/* Add the schema functions to the module table at the top of the stack. */
void bw_openschema (lua_State *L);
/* Add the blob methods to schemas (lbw_blob.c). */
void bw_openblob (lua_State *L);
/* Add core.sandbox and core.readdefs (definitions files) likewise. */
void bw_opensandbox (lua_State *L);
/* core.readdefs (lbw_readdefs.c), which bw_opensandbox registers. */
void bw_openreaddefs (lua_State *L);
/* nil, "path:line: msg" (no line when 'line' is 0): how a definitions
** file fails. Returns 2. */
int bw_deffail (lua_State *L, const char *path, int line, const char *msg);
/* The copy of a sandbox's result (lbw_sandboxcopy.c): tables it may nest
** (the schema's own limit is 32 types deep); the value on top of 'S'
** pushed onto 'L' within 'maxnodes' tables and fields and 'maxbytes'
** string bytes: 0, or 1 with the failure's message pushed onto 'L'. */
#define BW_MAXCOPYDEPTH  100
int bw_sbcopy (lua_State *S, lua_State *L, lua_Integer maxnodes,
               size_t maxbytes);
/* Add 's' to 'b' as text no terminal acts on, within 'max' bytes of 'b';
** returns the bytes of 's' taken (lbw_sandboxcopy.c). */
size_t bw_sbaddtext (luaL_Buffer *b, const char *s, size_t len, size_t max);
/* Push the failure of a read as nil, message, code; returns 3. */
int bw_pushreaderror (lua_State *L, const bw_Reader *r, const char *what);
/* Plain malloc memory for buffers that outlive a call (a schema's writer,
** a blob being built): no Lua state involved. */
void *bw_plainalloc (void *ud, void *ptr, size_t osize, size_t nsize);
/* lua_Alloc adaptor for growable writers. */
void *bw_luaalloc (void *ud, void *ptr, size_t osize, size_t nsize);
#endif
