/*
** lbw.c - Lua binding of the bit streams: bitwire.core, Writer, Reader
** See LICENSE for copyright and terms.
*/

/*
** The two directions fail differently, because the blame differs. A write
** that does not fit is the caller's bug, so it raises, naming the operation,
** the value, the range and the bit position. Every write is atomic: the
** arguments are checked before the core runs, and if the core still fails
** (size limit, memory) the writer is rolled back to where the call began, so
** a caught error leaves the writer exactly as it was. A read that fails is
** hostile or broken input, so it returns nil, message, code and leaves the
** reader failed: every later read returns the same three values, and a
** caller may run a sequence of reads and test only the last one.
**
** A writer's buffer comes from the state's allocator (bw_luaalloc) and is
** freed by __gc, so a Lua error can never leak it. A reader keeps its
** string in a user value; Lua strings do not move, so the core may point
** straight into them.
*/

#if defined(__unix__) || defined(__APPLE__)
#define _POSIX_C_SOURCE 200809L  /* stat's st_mtim, for core.filestamp */
#include <sys/stat.h>
#include <time.h>
#define HAVESTAT 1
#endif

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lua.h"
#include "lauxlib.h"
#include "lbw.h"

/* size limit of bitwire.writer() when none is given: 1 MiB */
#define DEFAULTMAXBYTES  ((lua_Integer)1 << 20)

typedef struct LWriter {
  bw_Writer w;
  int frame;             /* 0: no frame, 1: frame_begin done, 2: ended */
} LWriter;

typedef struct LReader {
  bw_Reader r;
  const char *what;      /* operation of the first failure (static) */
} LReader;

/* where a write began, to roll back a failed one */
typedef struct Mark {
  size_t wordpos;
  uint64_t scratch;
  unsigned scratchbits;
} Mark;


/* {===================== shared helpers ===================== */

/*
** lua_Alloc adaptor: 'ud' is a lua_State of the state whose allocator is
** used; pass the main thread for memory that outlives the current call.
** The allocator is looked up on every call, as Lua itself does.
*/
void *bw_plainalloc (void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud; (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

void *bw_luaalloc (void *ud, void *ptr, size_t osize, size_t nsize) {
  void *aud;
  lua_Alloc f = lua_getallocf((lua_State *)ud, &aud);
  return f(aud, ptr, osize, nsize);
}

int bw_pushreaderror (lua_State *L, const bw_Reader *r, const char *what) {
  lua_pushnil(L);
  if (what != NULL && *what != '\0')
    lua_pushfstring(L, "%s: %s (bit %I)", what, bw_strerror(r->status),
                    (lua_Integer)r->errpos);
  else
    lua_pushfstring(L, "%s (bit %I)", bw_strerror(r->status),
                    (lua_Integer)r->errpos);
  lua_pushstring(L, bw_codename(r->status));
  return 3;
}

/* lua_Integer with the two's complement pattern 'u' */
static lua_Integer u2i (uint64_t u) {
  return u <= (uint64_t)LUA_MAXINTEGER ? (lua_Integer)u
                                       : -(lua_Integer)(~u) - 1;
}

/* A string's maxlen argument: it sets the length field's width, so it is
** taken whole or refused, never saturated (a size_t of 32 bits cannot hold
** every maxlen a 64-bit peer writes with). */
static size_t checkmaxlen (lua_State *L, int arg) {
  lua_Integer n = luaL_checkinteger(L, arg);
  luaL_argcheck(L, n >= 0, arg, "maxlen must be >= 0");
  luaL_argcheck(L, (lua_Unsigned)n <= (lua_Unsigned)(SIZE_MAX / 2), arg,
                "maxlen too large for this platform's sizes");
  return (size_t)n;
}

/* a non-negative integer argument as a size_t, saturating */
static size_t checksize (lua_State *L, int arg, const char *msg) {
  lua_Integer n = luaL_checkinteger(L, arg);
  luaL_argcheck(L, n >= 0, arg, msg);
  return (lua_Unsigned)n > (lua_Unsigned)(SIZE_MAX / 2) ? SIZE_MAX / 2
                                                        : (size_t)n;
}

static int checkbitcount (lua_State *L, int arg) {
  lua_Integer n = luaL_checkinteger(L, arg);
  luaL_argcheck(L, 0 <= n && n <= 64, arg, "bit count must be in 0..64");
  return (int)n;
}

static void checkrange (lua_State *L, int arg, lua_Integer *min,
                        lua_Integer *max) {
  *min = luaL_checkinteger(L, arg);
  *max = luaL_checkinteger(L, arg + 1);
  luaL_argcheck(L, *min <= *max, arg, "min > max");
}

static void checkqfloat (lua_State *L, int arg, const char *what,
                         bw_QFloat *q) {
  lua_Number min = luaL_checknumber(L, arg);
  lua_Number max = luaL_checknumber(L, arg + 1);
  lua_Number res = luaL_checknumber(L, arg + 2);
  if (bw_qfloatinit(q, min, max, res) != BW_OK)
    luaL_error(L, "%s: bad range [%f, %f] or resolution %f "
               "(need finite min < max, res > 0)", what, min, max, res);
}

static uint32_t checkmagic (lua_State *L, int arg) {
  lua_Integer m = luaL_optinteger(L, arg, (lua_Integer)BW_CHECKMAGIC);
  luaL_argcheck(L, 0 <= m && m <= (lua_Integer)UINT32_MAX, arg,
                "magic must fit in 32 bits");
  return (uint32_t)m;
}

/* }========================================================== */


/* {===================== writer ===================== */

#define checkwriter(L, i)  ((LWriter *)luaL_checkudata(L, i, WRITER_MT))

static uint64_t markbits (const Mark *m) {
  return (uint64_t)m->wordpos * 8 + m->scratchbits;
}

/* Start a write: refuse one after frame_end, remember the position. */
static void beginwrite (lua_State *L, LWriter *lw, const char *what,
                        Mark *m) {
  if (lw->frame == 2)
    luaL_error(L, "%s: the frame has ended; no more writes", what);
  m->wordpos = lw->w.wordpos;
  m->scratch = lw->w.scratch;
  m->scratchbits = lw->w.scratchbits;
}

/* Finish a write: return the writer, or roll back and raise. */
static int endwrite (lua_State *L, LWriter *lw, const char *what,
                     const Mark *m) {
  bw_Writer *w = &lw->w;
  bw_Status code = w->status;
  /* the core checks its limit only when it grows the buffer */
  if (code == BW_OK && (bw_bitswritten(w) + 7) / 8 > w->maxbytes)
    code = BW_ETRUNC;
  if (code == BW_OK) {
    lua_settop(L, 1);
    return 1;
  }
  w->wordpos = m->wordpos;
  w->scratch = m->scratch;
  w->scratchbits = m->scratchbits;
  w->status = BW_OK;
  w->errpos = 0;
  if (code == BW_ETRUNC)
    return luaL_error(L, "%s: writer size limit of %I bytes reached (bit %I)",
                      what, (lua_Integer)w->maxbytes,
                      (lua_Integer)markbits(m));
  return luaL_error(L, "%s: %s (bit %I)", what, bw_strerror(code),
                    (lua_Integer)markbits(m));
}

/* raise "<what>: <detail> (bit N)" for a value that does not fit */
static int fiterror (lua_State *L, LWriter *lw, const char *what,
                     const char *detail) {
  return luaL_error(L, "%s: %s (bit %I)", what, detail,
                    (lua_Integer)bw_bitswritten(&lw->w));
}

static int core_writer (lua_State *L) {
  lua_Integer max = luaL_optinteger(L, 1, DEFAULTMAXBYTES);
  lua_State *main;
  LWriter *lw;
  luaL_argcheck(L, max >= 0, 1, "size limit must be >= 0");
  if ((lua_Unsigned)max > (lua_Unsigned)(SIZE_MAX / 2))
    max = (lua_Integer)(SIZE_MAX / 2);
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  main = lua_tothread(L, -1);
  lua_pop(L, 1);
  lw = (LWriter *)lua_newuserdatauv(L, sizeof(LWriter), 0);
  bw_writerinitgrow(&lw->w, bw_luaalloc, main, (size_t)max);
  lw->frame = 0;
  luaL_setmetatable(L, WRITER_MT);
  return 1;
}

static int writer_gc (lua_State *L) {
  bw_writerfree(&checkwriter(L, 1)->w);
  return 0;
}

static int writer_bits (lua_State *L) {
  LWriter *lw = checkwriter(L, 1);
  lua_Integer v = luaL_checkinteger(L, 2);
  int n = checkbitcount(L, 3);
  Mark m;
  beginwrite(L, lw, "bits", &m);
  if (n < 64 && (v < 0 || ((lua_Unsigned)v >> n) != 0)) {
    lua_pushfstring(L, "%I does not fit in %d bits", v, n);
    return fiterror(L, lw, "bits", lua_tostring(L, -1));
  }
  bw_writebits(&lw->w, (lua_Unsigned)v, (unsigned)n);
  return endwrite(L, lw, "bits", &m);
}

static int writer_bool (lua_State *L) {
  LWriter *lw = checkwriter(L, 1);
  Mark m;
  luaL_checktype(L, 2, LUA_TBOOLEAN);
  beginwrite(L, lw, "bool", &m);
  bw_writebool(&lw->w, lua_toboolean(L, 2));
  return endwrite(L, lw, "bool", &m);
}

static int writer_int (lua_State *L) {
  LWriter *lw = checkwriter(L, 1);
  lua_Integer v = luaL_checkinteger(L, 2), min, max;
  Mark m;
  checkrange(L, 3, &min, &max);
  beginwrite(L, lw, "int", &m);
  if (v < min || v > max) {
    lua_pushfstring(L, "%I out of range [%I, %I]", v, min, max);
    return fiterror(L, lw, "int", lua_tostring(L, -1));
  }
  bw_writeint(&lw->w, v, min, max);
  return endwrite(L, lw, "int", &m);
}

/* float32 conversion rounds to nearest; beyond float range it gives
** +-inf (IEEE 754, C99 Annex F), as serialize.h's float cast does */
static int writer_float (lua_State *L) {
  LWriter *lw = checkwriter(L, 1);
  lua_Number x = luaL_checknumber(L, 2);
  Mark m;
  beginwrite(L, lw, "float", &m);
  bw_writefloat(&lw->w, bw_tofloat32((double)x));
  return endwrite(L, lw, "float", &m);
}

static int writer_double (lua_State *L) {
  LWriter *lw = checkwriter(L, 1);
  lua_Number x = luaL_checknumber(L, 2);
  Mark m;
  beginwrite(L, lw, "double", &m);
  bw_writedouble(&lw->w, (double)x);
  return endwrite(L, lw, "double", &m);
}

static int writer_compressed_float (lua_State *L) {
  LWriter *lw = checkwriter(L, 1);
  lua_Number x = luaL_checknumber(L, 2);
  bw_QFloat q;
  Mark m;
  checkqfloat(L, 3, "compressed_float", &q);
  beginwrite(L, lw, "compressed_float", &m);
  bw_writecompressedfloat(&lw->w, x, &q);
  return endwrite(L, lw, "compressed_float", &m);
}

static int writer_align (lua_State *L) {
  LWriter *lw = checkwriter(L, 1);
  Mark m;
  beginwrite(L, lw, "align", &m);
  bw_writealign(&lw->w);
  return endwrite(L, lw, "align", &m);
}

static int writer_bytes (lua_State *L) {
  LWriter *lw = checkwriter(L, 1);
  size_t n;
  const char *s = luaL_checklstring(L, 2, &n);
  Mark m;
  beginwrite(L, lw, "bytes", &m);
  bw_writebytes(&lw->w, s, n);
  return endwrite(L, lw, "bytes", &m);
}

static int writer_string (lua_State *L) {
  LWriter *lw = checkwriter(L, 1);
  size_t n;
  const char *s = luaL_checklstring(L, 2, &n);
  size_t maxlen = checkmaxlen(L, 3);
  Mark m;
  beginwrite(L, lw, "string", &m);
  if (n > maxlen) {
    lua_pushfstring(L, "length %I exceeds maxlen %I", (lua_Integer)n,
                    (lua_Integer)maxlen);
    return fiterror(L, lw, "string", lua_tostring(L, -1));
  }
  if (!bw_utf8valid(s, n))
    return fiterror(L, lw, "string", "invalid UTF-8 or NUL byte");
  bw_writestring(&lw->w, s, n, maxlen);
  return endwrite(L, lw, "string", &m);
}

static int writer_int_relative (lua_State *L) {
  LWriter *lw = checkwriter(L, 1);
  lua_Integer prev = luaL_checkinteger(L, 2);
  lua_Integer cur = luaL_checkinteger(L, 3);
  Mark m;
  beginwrite(L, lw, "int_relative", &m);
  /* signed 32-bit ints, as serialize.h's serialize_int_relative */
  if (!(INT32_MIN <= prev && prev < cur && cur <= INT32_MAX)) {
    lua_pushfstring(L, "%I after %I is not rising in [-2147483648, 2147483647]",
                    cur, prev);
    return fiterror(L, lw, "int_relative", lua_tostring(L, -1));
  }
  bw_writeint32relative(&lw->w, (int32_t)prev, (int32_t)cur);
  return endwrite(L, lw, "int_relative", &m);
}

static int writer_check (lua_State *L) {
  LWriter *lw = checkwriter(L, 1);
  uint32_t magic = checkmagic(L, 2);
  Mark m;
  beginwrite(L, lw, "check", &m);
  bw_writecheck(&lw->w, magic);
  return endwrite(L, lw, "check", &m);
}

static int writer_bits_written (lua_State *L) {
  lua_pushinteger(L, (lua_Integer)bw_bitswritten(&checkwriter(L, 1)->w));
  return 1;
}

static int writer_tostring (lua_State *L) {
  LWriter *lw = checkwriter(L, 1);
  size_t len;
  const uint8_t *data = bw_writerdata(&lw->w, &len);
  lua_pushlstring(L, (const char *)data, len);
  return 1;
}

static int writer_frame_begin (lua_State *L) {
  LWriter *lw = checkwriter(L, 1);
  Mark m;
  beginwrite(L, lw, "frame_begin", &m);
  if (lw->frame != 0 || bw_bitswritten(&lw->w) != 0)
    return fiterror(L, lw, "frame_begin", "the writer is not empty");
  bw_framebegin(&lw->w);
  endwrite(L, lw, "frame_begin", &m);
  lw->frame = 1;
  return 1;
}

static int writer_frame_end (lua_State *L) {
  LWriter *lw = checkwriter(L, 1);
  lua_Integer pid = luaL_checkinteger(L, 2);
  int endcheck = lua_toboolean(L, 3);
  Mark m;
  beginwrite(L, lw, "frame_end", &m);
  if (lw->frame != 1)
    return fiterror(L, lw, "frame_end", "no frame_begin before it");
  bw_frameend(&lw->w, (lua_Unsigned)pid, endcheck);
  endwrite(L, lw, "frame_end", &m);
  lw->frame = 2;
  return 1;
}

static const luaL_Reg writer_methods[] = {
  {"bits", writer_bits},
  {"bool", writer_bool},
  {"int", writer_int},
  {"float", writer_float},
  {"double", writer_double},
  {"compressed_float", writer_compressed_float},
  {"align", writer_align},
  {"bytes", writer_bytes},
  {"string", writer_string},
  {"int_relative", writer_int_relative},
  {"check", writer_check},
  {"bits_written", writer_bits_written},
  {"tostring", writer_tostring},
  {"frame_begin", writer_frame_begin},
  {"frame_end", writer_frame_end},
  {"__gc", writer_gc},
  {NULL, NULL}
};

/* }========================================================== */


/* {===================== reader ===================== */

#define checkreader(L, i)  ((LReader *)luaL_checkudata(L, i, READER_MT))

/* nil, message, code of the reader's first failure */
static int readfail (lua_State *L, LReader *lr, const char *what) {
  if (lr->what == NULL) lr->what = what;
  return bw_pushreaderror(L, &lr->r, lr->what);
}

#define FAILED(lr)  ((lr)->r.status != BW_OK)

/* a new reader over the string at 'arg', which it keeps alive */
static LReader *newreader (lua_State *L, int arg, const char **s,
                           size_t *n) {
  LReader *lr;
  *s = luaL_checklstring(L, arg, n);
  lr = (LReader *)lua_newuserdatauv(L, sizeof(LReader), 1);
  bw_readerinit(&lr->r, *s, *n);
  lr->what = NULL;
  lua_pushvalue(L, arg);
  lua_setiuservalue(L, -2, 1);
  luaL_setmetatable(L, READER_MT);
  return lr;
}

static int core_reader (lua_State *L) {
  const char *s;
  size_t n;
  newreader(L, 1, &s, &n);
  return 1;
}

/* frame_open(s, id [, endcheck]) -> reader | nil, message, code, path: the
** path of the frame part that failed (bitwire.core.frame_paths) */
static int core_frame_open (lua_State *L) {
  const char *s;
  size_t n;
  bw_FrameHeader h;
  lua_Integer pid = luaL_checkinteger(L, 2);
  int endcheck = lua_toboolean(L, 3);
  LReader *lr = newreader(L, 1, &s, &n);
  memset(&h, 0, sizeof(h));  /* no header fields: bw_frameopen, parts named */
  h.protocolid = (lua_Unsigned)pid;
  h.flags = endcheck ? BW_FCHECK : 0;
  if (bw_framereadheader(&lr->r, s, n, &h) != BW_OK) {
    readfail(L, lr, "frame");
    lua_pushstring(L, bw_framepath(h.part));
    return 4;
  }
  return 1;
}

static int reader_bits (lua_State *L) {
  LReader *lr = checkreader(L, 1);
  int n = checkbitcount(L, 2);
  uint64_t v = bw_readbits(&lr->r, (unsigned)n);
  if (FAILED(lr)) return readfail(L, lr, "bits");
  lua_pushinteger(L, u2i(v));
  return 1;
}

static int reader_bool (lua_State *L) {
  LReader *lr = checkreader(L, 1);
  int b = bw_readbool(&lr->r);
  if (FAILED(lr)) return readfail(L, lr, "bool");
  lua_pushboolean(L, b);
  return 1;
}

static int reader_int (lua_State *L) {
  LReader *lr = checkreader(L, 1);
  lua_Integer min, max, v;
  checkrange(L, 2, &min, &max);
  v = bw_readint(&lr->r, min, max);
  if (FAILED(lr)) return readfail(L, lr, "int");
  lua_pushinteger(L, v);
  return 1;
}

static int reader_float (lua_State *L) {
  LReader *lr = checkreader(L, 1);
  float x = bw_readfloat(&lr->r);
  if (FAILED(lr)) return readfail(L, lr, "float");
  lua_pushnumber(L, (lua_Number)x);
  return 1;
}

static int reader_double (lua_State *L) {
  LReader *lr = checkreader(L, 1);
  double x = bw_readdouble(&lr->r);
  if (FAILED(lr)) return readfail(L, lr, "double");
  lua_pushnumber(L, (lua_Number)x);
  return 1;
}

static int reader_compressed_float (lua_State *L) {
  LReader *lr = checkreader(L, 1);
  bw_QFloat q;
  float x;
  checkqfloat(L, 2, "compressed_float", &q);
  x = bw_readcompressedfloat(&lr->r, &q);
  if (FAILED(lr)) return readfail(L, lr, "compressed_float");
  lua_pushnumber(L, (lua_Number)x);
  return 1;
}

static int reader_align (lua_State *L) {
  LReader *lr = checkreader(L, 1);
  bw_readalign(&lr->r);
  if (FAILED(lr)) return readfail(L, lr, "align");
  lua_pushboolean(L, 1);
  return 1;
}

static int reader_bytes (lua_State *L) {
  LReader *lr = checkreader(L, 1);
  size_t n = checksize(L, 2, "length must be >= 0");
  const uint8_t *p;
  if (n > lr->r.nbytes) n = lr->r.nbytes + 1;  /* cannot fit: truncated */
  p = bw_readbytes(&lr->r, n);
  if (FAILED(lr)) return readfail(L, lr, "bytes");
  lua_pushlstring(L, (const char *)p, n);
  return 1;
}

static int reader_string (lua_State *L) {
  LReader *lr = checkreader(L, 1);
  size_t maxlen = checkmaxlen(L, 2), n;
  const char *s = bw_readstring(&lr->r, maxlen, &n);
  if (FAILED(lr)) return readfail(L, lr, "string");
  lua_pushlstring(L, s, n);
  return 1;
}

static int reader_int_relative (lua_State *L) {
  LReader *lr = checkreader(L, 1);
  lua_Integer prev = luaL_checkinteger(L, 2);
  int32_t v;
  luaL_argcheck(L, INT32_MIN <= prev && prev <= INT32_MAX, 2,
                "previous must be in [-2147483648, 2147483647]");
  v = bw_readint32relative(&lr->r, (int32_t)prev);
  if (FAILED(lr)) return readfail(L, lr, "int_relative");
  lua_pushinteger(L, (lua_Integer)v);
  return 1;
}

/* The unsigned chain of a sparse array's relative encoding (bw_readintrelative):
** prev in [0, 2^32 - 2], a result in (prev, 2^32 - 1]. int_relative is
** serialize.h's signed one, whose escape past 2^31 - 1 reads as negative. */
static int reader_uint_relative (lua_State *L) {
  LReader *lr = checkreader(L, 1);
  lua_Integer prev = luaL_checkinteger(L, 2);
  uint64_t v;
  luaL_argcheck(L, 0 <= prev && prev < (lua_Integer)UINT32_MAX, 2,
                "previous must be in [0, 4294967294]");
  v = bw_readintrelative(&lr->r, (uint64_t)prev);
  if (FAILED(lr)) return readfail(L, lr, "uint_relative");
  lua_pushinteger(L, (lua_Integer)v);
  return 1;
}

static int reader_check (lua_State *L) {
  LReader *lr = checkreader(L, 1);
  uint32_t magic = checkmagic(L, 2);
  bw_readcheck(&lr->r, magic);
  if (FAILED(lr)) return readfail(L, lr, "check");
  lua_pushboolean(L, 1);
  return 1;
}

static int reader_bits_read (lua_State *L) {
  lua_pushinteger(L, (lua_Integer)checkreader(L, 1)->r.pos);
  return 1;
}

static int reader_bits_remaining (lua_State *L) {
  lua_pushinteger(L, (lua_Integer)bw_bitsremaining(&checkreader(L, 1)->r));
  return 1;
}

static const luaL_Reg reader_methods[] = {
  {"bits", reader_bits},
  {"bool", reader_bool},
  {"int", reader_int},
  {"float", reader_float},
  {"double", reader_double},
  {"compressed_float", reader_compressed_float},
  {"align", reader_align},
  {"bytes", reader_bytes},
  {"string", reader_string},
  {"int_relative", reader_int_relative},
  {"uint_relative", reader_uint_relative},
  {"check", reader_check},
  {"bits_read", reader_bits_read},
  {"bits_remaining", reader_bits_remaining},
  {NULL, NULL}
};

/* }========================================================== */


/* {===================== module ===================== */

static int core_bits_required (lua_State *L) {
  lua_Integer min, max;
  checkrange(L, 1, &min, &max);
  lua_pushinteger(L, (lua_Integer)bw_bitsrequired(min, max));
  return 1;
}

/* core.filestamp(path) -> "mtime.ns:size:ctime.ns:dev:ino", fresh |
** nil, message. What a watch registry compares before it reads a
** definitions file again; false where the platform has no stat (the
** registry then reads on every poll). The change time and the inode are
** there because the modification time can be set back (touch -r, cp -p,
** tar, a store of files dated 1): a same-size edit or another file renamed
** or linked in its place. 'fresh': changed less than 2 s ago (or in the
** future), so a later write within the filesystem's timestamp tick (up to
** 2 s) may leave the same stamp, which then cannot be trusted. */
static int core_filestamp (lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
#ifdef HAVESTAT
  struct stat st;
  if (stat(path, &st) != 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", path, strerror(errno));
    return 2;
  }
  lua_pushfstring(L, "%I.%I:%I:%I.%I:%I:%I", (lua_Integer)st.st_mtim.tv_sec,
                  (lua_Integer)st.st_mtim.tv_nsec, (lua_Integer)st.st_size,
                  (lua_Integer)st.st_ctim.tv_sec, (lua_Integer)st.st_ctim.tv_nsec,
                  (lua_Integer)st.st_dev, (lua_Integer)st.st_ino);
  {
    struct timespec now;
    lua_pushboolean(L, clock_gettime(CLOCK_REALTIME, &now) != 0
                       || st.st_ctim.tv_sec >= now.tv_sec - 2);
  }
  return 2;
#else
  (void)path;
  lua_pushboolean(L, 0);
  return 1;
#endif
}

static const luaL_Reg core_funcs[] = {
  {"filestamp", core_filestamp},
  {"writer", core_writer},
  {"reader", core_reader},
  {"frame_open", core_frame_open},
  {"bits_required", core_bits_required},
  {NULL, NULL}
};

/* a metatable that is its own __index */
static void newclass (lua_State *L, const char *name, const luaL_Reg *l) {
  luaL_newmetatable(L, name);
  luaL_setfuncs(L, l, 0);
  lua_pushvalue(L, -1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

LUAMOD_API int luaopen_bitwire_core (lua_State *L);

LUAMOD_API int luaopen_bitwire_core (lua_State *L) {
  newclass(L, WRITER_MT, writer_methods);
  newclass(L, READER_MT, reader_methods);
  luaL_newlib(L, core_funcs);
  lua_pushliteral(L, BW_VERSION);
  lua_setfield(L, -2, "version");
  lua_createtable(L, 0, 4);  /* what the Lua side and the command check
                                (bw_openschema adds packet and blob) */
  lua_pushinteger(L, BW_MAXVERSIONBITS);
  lua_setfield(L, -2, "version_bits");
  lua_pushinteger(L, (lua_Integer)BW_MAXVERSION);
  lua_setfield(L, -2, "version");
  lua_setfield(L, -2, "limits");
  {  /* code -> message, for code written elsewhere (the dissector) */
    int k;
    lua_createtable(L, 0, BW_NSTATUS);
    for (k = 1; k < BW_NSTATUS; k++) {
      lua_pushstring(L, bw_strerror((bw_Status)k));
      lua_setfield(L, -2, bw_codename((bw_Status)k));
    }
    lua_setfield(L, -2, "messages");
  }
  {  /* frame part key -> path, as decode and the walk name them */
#define PUSHPART(e, key, path)  \
    lua_pushstring(L, bw_framepath(e)); lua_setfield(L, -2, key);
    lua_createtable(L, 0, BW_NFRAMEPARTS);
    BW_FRAMEPARTS(PUSHPART)
    lua_setfield(L, -2, "frame_paths");
#undef PUSHPART
  }
  lua_pushinteger(L, BW_FRAMEMIN(0));  /* the shortest frame, without and */
  lua_setfield(L, -2, "FRAME_MIN");    /* with an end check */
  lua_pushinteger(L, BW_FRAMEMIN(1));
  lua_setfield(L, -2, "FRAME_MIN_CHECK");
  bw_openschema(L);
  bw_openblob(L);
  bw_opensandbox(L);
  return 1;
}

/* }========================================================== */
