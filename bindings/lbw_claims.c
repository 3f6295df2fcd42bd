/*
** lbw_claims.c - the tables a decode into has refilled (Claims)
** See LICENSE for copyright and terms.
*/

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lbw_decode.h"


/* {===================== tables refilled (Claims) ===================== */
/* A decode into the same tables as last time claims them in the same order:
** while this decode's claims repeat the last decode's sequence (whose
** tables were all distinct) a claim is one compare. From the first
** difference on, every table goes through a hash set of this decode's
** claims. Either way each claim is recorded, so the next decode can
** follow it. */

void bw_claimsstart (Claims *cl) {
  cl->prev = cl->done;  /* a decode that raised left no trusted sequence */
  cl->done = 0;
  cl->k = 0;
  cl->hashed = 0;
  cl->lost = 0;
  cl->twice = 0;
  cl->n = 0;
  if (++cl->gen == 0) {  /* wrapped: no entry may look current */
    uint32_t i;
    for (i = 0; i < cl->cap; i++) cl->e[i].gen = 0;
    cl->gen = 1;
  }
}

void bw_claimsend (Claims *cl) {
  cl->done = cl->lost ? 0 : cl->k;
}

void bw_claimsfree (Claims *cl) {
  free(cl->e);
  free(cl->seq);
  memset(cl, 0, sizeof(*cl));
}

static INLINE uint32_t claimslot (const Claims *cl, const void *p) {
  uint64_t h = (uint64_t)(uintptr_t)p * UINT64_C(0x9E3779B97F4A7C15);
  return (uint32_t)(h >> 32) & (cl->cap - 1);
}

/* Double the set, keeping this decode's entries; 0 without memory. */
static int claimsgrow (Claims *cl) {
  uint32_t i, cap = cl->cap ? 2 * cl->cap : 256;
  Claim *old = cl->e, *e;
  if (cap == 0 || (e = (Claim *)calloc(cap, sizeof(Claim))) == NULL) return 0;
  cl->e = e;
  cl->cap = cap;
  for (i = 0; i < cap / 2 && old != NULL; i++)
    if (old[i].gen == cl->gen) {
      uint32_t h = claimslot(cl, old[i].p);
      while (e[h].gen == cl->gen) h = (h + 1) & (cap - 1);
      e[h] = old[i];
    }
  free(old);
  return 1;
}

/* Add 'p' to the hash set: 1, or 0 if it is there (or without memory). */
static int claimshash (Claims *cl, const void *p) {
  uint32_t h;
  if (cl->n >= cl->cap / 2 && !claimsgrow(cl)) return 0;
  h = claimslot(cl, p);
  while (cl->e[h].gen == cl->gen) {
    if (cl->e[h].p == p) return 0;
    h = (h + 1) & (cl->cap - 1);
  }
  cl->e[h].p = p;
  cl->e[h].gen = cl->gen;
  cl->n++;
  return 1;
}

/* Claim 'p' off the common path: the sequence differs from the last one
** (or has ended). */
int bw_claimslow (Claims *cl, const void *p) {
  if (!cl->hashed) {  /* the claims so far are distinct: hash them */
    uint32_t i;
    for (i = 0; i < cl->k; i++)
      if (!claimshash(cl, cl->seq[i])) break;
    if (i < cl->k) {  /* without memory: as if 'p' were met twice */
      cl->twice = 1;
      return 0;
    }
    cl->hashed = 1;
  }
  if (!claimshash(cl, p)) {
    cl->twice = 1;
    return 0;
  }
  if (cl->k == cl->seqcap) {  /* record it for the next decode */
    uint32_t cap = cl->seqcap ? 2 * cl->seqcap : 256;
    const void **seq = cap == 0 ? NULL
      : (const void **)realloc((void *)cl->seq, cap * sizeof(*seq));
    if (seq == NULL) {
      cl->lost = 1;  /* this decode stays exact; the next one hashes */
      return 1;
    }
    cl->seq = seq;
    cl->seqcap = cap;
  }
  if (!cl->lost) cl->seq[cl->k++] = p;
  return 1;
}

void bw_dropped (Ctx *c, int tbl) {
  lua_pushvalue(c->L, -1);
  lua_rawget(c->L, tbl);
  bw_droptop(c);
}

/* }========================================================== */
