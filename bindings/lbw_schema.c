/*
** lbw_schema.c - schema binding (placeholder, replaced next)
** See LICENSE for copyright and terms.
*/
#include "lauxlib.h"
#include "lbw.h"

void bw_openschema (lua_State *L) {
  (void)L;
}
