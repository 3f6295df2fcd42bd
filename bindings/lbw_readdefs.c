/*
** lbw_readdefs.c - definitions files: the bounded read of one, before it
** runs in the sandbox (lbw_sandbox.c)
** See LICENSE for copyright and terms.
*/

#if defined(__unix__) || defined(__APPLE__)
#define _POSIX_C_SOURCE 200809L  /* open, fstat */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#define HAVEPOSIX 1
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lua.h"
#include "lauxlib.h"
#include "lbw.h"

#define FILEBOX_MT  "bitwire.DefsFile"

/* {===================== reading a file ===================== */

typedef struct FileBox {
  int fd;  /* -1 when closed */
} FileBox;

static int filebox_gc (lua_State *L) {
  FileBox *fb = (FileBox *)luaL_checkudata(L, 1, FILEBOX_MT);
#ifdef HAVEPOSIX
  if (fb->fd >= 0) close(fb->fd);
#endif
  fb->fd = -1;
  return 0;
}

#ifdef HAVEPOSIX

static const char *filekind (mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}
#endif

/* nil, "path: msg"; closes the file of 'fb' */
static int readfail (lua_State *L, FileBox *fb, const char *path,
                     const char *msg) {
#ifdef HAVEPOSIX
  if (fb->fd >= 0) close(fb->fd);
  fb->fd = -1;
#else
  (void)fb;
#endif
  return bw_deffail(L, path, 0, msg);
}

/* core.readdefs(path, max_size) -> content | nil, message. Opens only a
** regular file, without blocking (a FIFO or a device is refused, not
** opened), and reads at most max_size bytes. */
static int core_readdefs (lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer cap = luaL_checkinteger(L, 2);
  size_t total = 0, maxsize;
  luaL_Buffer b;
  FileBox *fb;
  luaL_argcheck(L, cap >= 0, 2, "size limit must not be negative");
  maxsize = (lua_Unsigned)cap > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)cap;
  fb = (FileBox *)lua_newuserdatauv(L, sizeof *fb, 0);
  fb->fd = -1;
  luaL_setmetatable(L, FILEBOX_MT);
  lua_toclose(L, -1);                /* closes the file if L raises */
#ifdef HAVEPOSIX
  {
    struct stat st;
    /* opening a device can act (a watchdog starts, a tape rewinds): what
    ** is no regular file is not opened; fstat sees one swapped in after */
    if (stat(path, &st) != 0) return readfail(L, fb, path, strerror(errno));
    if (S_ISREG(st.st_mode)) {
      fb->fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
      if (fb->fd < 0) return readfail(L, fb, path, strerror(errno));
      if (fstat(fb->fd, &st) != 0)
        return readfail(L, fb, path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
      return readfail(L, fb, path, lua_pushfstring(L, "%s, not a regular "
                      "file", filekind(st.st_mode)));
    if ((uintmax_t)st.st_size > (uintmax_t)maxsize)
      return readfail(L, fb, path, lua_pushfstring(L, "file of %I bytes "
                      "exceeds the size limit of %I bytes",
                      (LUAI_UACINT)st.st_size, (LUAI_UACINT)maxsize));
    luaL_buffinit(L, &b);
    for (;;) {         /* the size fstat gave, then more if it grew */
      size_t want = total == 0 ? (size_t)st.st_size + 1 : 65536;
      if (want > maxsize + 1 - total) want = maxsize + 1 - total;
      char *p = luaL_prepbuffsize(&b, want);
      ssize_t got = read(fb->fd, p, want);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return readfail(L, fb, path, strerror(errno));
      if (got == 0) break;
      luaL_addsize(&b, (size_t)got);
      total += (size_t)got;
      if (total > maxsize)
        return readfail(L, fb, path, lua_pushfstring(L, "file exceeds the "
                        "size limit of %I bytes", (LUAI_UACINT)maxsize));
    }
    close(fb->fd);
    fb->fd = -1;
  }
#else
  {
    FILE *f = fopen(path, "rb");   /* no stat: a size cap only */
    size_t got;
    if (f == NULL) return readfail(L, fb, path, strerror(errno));
    luaL_buffinit(L, &b);
    do {
      size_t want = maxsize + 1 - total > 65536 ? 65536 : maxsize + 1 - total;
      got = fread(luaL_prepbuffsize(&b, want), 1, want, f);
      luaL_addsize(&b, got);
      total += got;
    } while (got > 0 && total <= maxsize);
    fclose(f);
    if (total > maxsize)
      return readfail(L, fb, path, lua_pushfstring(L, "file exceeds the "
                      "size limit of %I bytes", (LUAI_UACINT)maxsize));
  }
#endif
  luaL_pushresult(&b);
  return 1;
}

/* }========================================================== */


/* core.replaceable(path) -> true when 'path' names a regular file (not a
** link) or nothing: what the command line may write whole to a temporary
** file and rename over it; a device, FIFO or link is written in place. */
static int core_replaceable (lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int ok = 0;
#ifdef HAVEPOSIX
  struct stat st;
  if (lstat(path, &st) == 0) ok = S_ISREG(st.st_mode);
  else ok = errno == ENOENT;
#else
  (void)path;
#endif
  lua_pushboolean(L, ok);
  return 1;
}

void bw_openreaddefs (lua_State *L) {
  if (luaL_newmetatable(L, FILEBOX_MT)) {
    lua_pushcfunction(L, filebox_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, filebox_gc);
    lua_setfield(L, -2, "__close");
  }
  lua_pop(L, 1);
  lua_pushcfunction(L, core_readdefs);
  lua_setfield(L, -2, "readdefs");
  lua_pushcfunction(L, core_replaceable);
  lua_setfield(L, -2, "replaceable");
}
