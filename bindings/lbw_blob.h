/*
** lbw_blob.h - shared declarations of the blob binding (bindings/ only)
** See LICENSE for copyright and terms.
*/
#ifndef LBW_BLOB_H
#define LBW_BLOB_H

#include "bw_blob.h"
#include "lbw_schema.h"

#define BLOB_MT  "bitwire.BlobView"

/* The layout of the schema at stack index 1 at 'version', its userdata
** pushed (lbw_blob.c); raises when it has none. */
const bw_BlobLayout *bw_blobgetlayout (lua_State *L, uint32_t version);
/* The same, or NULL (nothing pushed) with the reason in 'msg': a version
** a blob's header names may have no layout. */
const bw_BlobLayout *bw_blobtrylayout (lua_State *L, uint32_t version,
                                       char *msg, size_t msgsize);
/* Push name 'nm' of 'S'; push the default of field 'f'. */
/* lbw_blobread.c: unblob and blobview, and the views' metatable. */
extern const luaL_Reg bw_blobreadmethods[];
void bw_openblobview (lua_State *L);

#endif
