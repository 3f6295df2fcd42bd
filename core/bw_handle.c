/*
** bw_handle.c - handles: schemas passed to other owners by id
** See LICENSE for copyright and terms.
*/

/*
** A handle passes a compiled schema to another lua_State or thread of the
** process. It used to be the schema's address, so a handle used after its
** schema was freed (unshared, then collected) made adopt read freed
** memory, and an old handle could take a newer share of the same schema.
** A handle is now an id in one table for the process, under a lock: taking
** a handle looks the id up and never touches a schema through it. Ids only
** grow and are never reused, so the table stays sorted and a stale id
** finds nothing.
*/

#if defined(__unix__) || defined(__APPLE__)
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#define LOCK()    pthread_mutex_lock(&lock)
#define UNLOCK()  pthread_mutex_unlock(&lock)
#elif defined(__GNUC__) || defined(__clang__)
static int lock;
#define LOCK()    while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE)) {}
#define UNLOCK()  __atomic_store_n(&lock, 0, __ATOMIC_RELEASE)
#else
#define LOCK()    ((void)0)  /* no known lock: one thread only */
#define UNLOCK()  ((void)0)
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bw_schema.h"

typedef struct Handle {
  uintptr_t id;
  bw_Schema *S;           /* one reference, held for the handle */
} Handle;

static Handle *handles;  /* live handles, by increasing id */
static size_t nhandles, caphandles;
static uintptr_t lastid;

uintptr_t bw_handlenew (bw_Schema *S) {
  uintptr_t id = 0;
  LOCK();
  if (nhandles == caphandles && caphandles <= SIZE_MAX / 2 / sizeof *handles) {
    size_t n = caphandles ? caphandles * 2 : 16;
    Handle *p = (Handle *)realloc(handles, n * sizeof *handles);
    if (p != NULL) {
      handles = p;
      caphandles = n;
    }
  }
  if (nhandles < caphandles && lastid < UINTPTR_MAX) {
    id = ++lastid;
    handles[nhandles].id = id;
    handles[nhandles].S = S;
    nhandles++;
    bw_schemaretain(S);
  }
  UNLOCK();
  return id;
}

/* The index of handle 'id', or nhandles; under the lock. */
static size_t find (uintptr_t id) {
  size_t lo = 0, hi = nhandles;
  while (lo < hi) {                               /* first id >= 'id' */
    size_t mid = lo + (hi - lo) / 2;
    if (handles[mid].id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < nhandles && handles[lo].id == id ? lo : nhandles;
}

/* The schema of handle 'id' (NULL: none): retained, the handle kept; or
** with 'take', the handle ended and its reference the caller's. */
static bw_Schema *lookup (uintptr_t id, int take) {
  bw_Schema *S = NULL;
  size_t i;
  LOCK();
  i = find(id);
  if (i < nhandles) {
    S = handles[i].S;
    if (!take) bw_schemaretain(S);
    else {
      memmove(&handles[i], &handles[i + 1],
              (nhandles - i - 1) * sizeof *handles);
      if (--nhandles == 0) {       /* nothing left for a leak checker */
        free(handles);
        handles = NULL;
        caphandles = 0;
      }
    }
  }
  UNLOCK();
  return S;
}

bw_Schema *bw_handleget (uintptr_t id) {
  return lookup(id, 0);
}

bw_Schema *bw_handletake (uintptr_t id) {
  return lookup(id, 1);
}
