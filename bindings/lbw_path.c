/*
** lbw_path.c - field paths and the error messages that carry them
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


/* {===================== paths and errors ===================== */

/* Write the current field path into 'buf'; returns its length. */
static size_t formatpath (const Ctx *c, char *buf, size_t size) {
  size_t n = 0;
  int i;
  buf[0] = '\0';
  if (c->head != NULL) {  /* a frame part: a failure before any field */
    int k = snprintf(buf, size, "%s", c->head);
    if (k > 0) n = (size_t)k;
  }
  for (i = 0; i < c->nframes && i < MAXFRAMES && n < size; i++) {
    const Frame *fr = &c->frames[i];
    int k;
    if (fr->name == BW_NONE && fr->index < 0) continue;
    if (fr->name == BW_NONE)
      k = snprintf(buf + n, size - n, "[%lld]", (long long)fr->index);
    else
      k = snprintf(buf + n, size - n, "%s%s", n > 0 ? "." : "",
                   c->S->names[fr->name]);
    if (k < 0) break;
    n += (size_t)k;
  }
  return n < size ? n : size - 1;
}

/* Raise "path: detail (bit N)" for a value that cannot be encoded. The
** format is lua_pushfstring's. */
int bw_encerror (Ctx *c, const char *fmt, ...) {
  char path[MAXMSG];
  const char *detail;
  va_list ap;
  formatpath(c, path, sizeof(path));
  va_start(ap, fmt);
  detail = lua_pushvfstring(c->L, fmt, ap);
  va_end(ap);
  return luaL_error(c->L, "%s%s%s (bit %I)", path, path[0] ? ": " : "",
                    detail, (lua_Integer)(bw_bitswritten(c->w) + c->pending));
}

int bw_enctype (Ctx *c, int idx, const char *expected) {
  return bw_encerror(c, "expected %s, got %s", expected,
                  lua_typename(c->L, lua_type(c->L, idx)));
}

/* Record the first decode failure: "path: detail (bit N)". Returns 0. */
int bw_decfail (Ctx *c, bw_Status code, uint64_t bitpos,
                    const char *fmt, ...) {
  char detail[MAXMSG];
  size_t n;
  va_list ap;
  if (c->code != BW_OK) return 0;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof(detail), fmt, ap);
  va_end(ap);
  n = formatpath(c, c->msg, sizeof(c->msg));
  snprintf(c->msg + n, sizeof(c->msg) - n, "%s%s (bit %" PRIu64 ")",
           n > 0 ? ": " : "", detail, bitpos);
  c->code = code;
  c->bitpos = bitpos;
  return 0;
}

/* A failure of the reader's own (truncation, padding, string checks). */
int bw_readfail (Ctx *c) {
  return bw_decfail(c, c->r.status, c->r.errpos, "%s", bw_strerror(c->r.status));
}

#define BW_WORDTEXT(e, name, text)  text,
#define BW_WORDNAME(e, name, text)  name,
static const char *const wordtext[] = { BW_WORDLIST(BW_WORDTEXT) NULL };
static const char *const wordname[] = { BW_WORDLIST(BW_WORDNAME) NULL };

int bw_decsay (Ctx *c, bw_Status code, uint64_t bitpos, bw_Word w,
               const char *a, const char *b, const char *d) {
  return bw_decfail(c, code, bitpos, wordtext[w], a, b, d);
}

int bw_decsayi (Ctx *c, bw_Status code, uint64_t bitpos, bw_Word w,
                int64_t a, int64_t b, int64_t d) {
  char ta[BW_NUMTEXT], tb[BW_NUMTEXT], td[BW_NUMTEXT];
  return bw_decsay(c, code, bitpos, w, bw_i64text(ta, a), bw_i64text(tb, b),
                   bw_i64text(td, d));
}

void bw_pushwords (lua_State *L) {
  int i;
  lua_createtable(L, 0, BW_NWORDS);
  for (i = 0; i < BW_NWORDS; i++) {
    lua_pushstring(L, wordtext[i]);
    lua_setfield(L, -2, wordname[i]);
  }
}

const char *bw_i64text (char *buf, int64_t v) {
  snprintf(buf, BW_NUMTEXT, "%" PRId64, v);
  return buf;
}

const char *bw_u64text (char *buf, uint64_t v) {
  snprintf(buf, BW_NUMTEXT, "%" PRIu64, v);
  return buf;
}

const char *bw_sumtext (char *buf, int64_t min, uint64_t u) {
  uint64_t val = (uint64_t)min + u;
  /* below 0 only when min is and u does not reach -min */
  if (min < 0 && u < (uint64_t)0 - (uint64_t)min)
    return bw_i64text(buf, -(int64_t)(~val) - 1);
  return bw_u64text(buf, val);
}

/* }========================================================== */
