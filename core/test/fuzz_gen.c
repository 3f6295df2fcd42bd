/*
** fuzz_gen.c - libFuzzer target: the code `bitwire gen c` writes, for the
** descriptions of spec/fixtures/gen/ (kinds, sparse, game, relative)
** See LICENSE for copyright and terms.
*/

/*
** The input is [schema][type][split: 2][bytes]. The bytes before 'split'
** are read as a value of the type, the rest as a delta against it. Any
** read may fail; the sanitizers watch that hostile bytes never take the
** generated code outside the struct or the input. A value that reads is
** written again and must read back to the same bytes (the same size where
** quaternions renormalize), and a delta that reads must do the same against
** its baseline.
*/

#include "fuzz.h"
#include "kinds.h"
#include "sparse.h"
#include "game.h"
#include "relative.h"

typedef struct Table {
  const kinds_Type *types;  /* the tables share one layout */
  size_t n;
  int exact;  /* no quaternions: reading renormalizes those, so their bits
              ** may move by a step when written again */
} Table;

#define NTABLES 4
static const Table tables[NTABLES] = {
  { kinds_types, KINDS_NTYPES, 1 },
  { (const kinds_Type *)sparse_types, SPARSE_NTYPES, 0 },
  { (const kinds_Type *)game_types, GAME_NTYPES, 0 },
  { (const kinds_Type *)relative_types, RELATIVE_NTYPES, 0 },
};

#define MAXVALUE (1 << 20)
static uint8_t value[MAXVALUE], base[MAXVALUE], again[MAXVALUE];
static uint8_t out1[1 << 16], out2[1 << 16];

/* Write 'v' with 'write' (or as a delta against 'b') into 'out'; 0 when it
** does not fit. */
static size_t put (const kinds_Type *t, const void *v, const void *b,
                   uint8_t *out, size_t cap) {
  bw_Writer w;
  size_t len;
  bw_writerinit(&w, out, cap);
  if (!(b ? t->write_delta(&w, v, b) : t->write(&w, v))) return 0;
  bw_writerdata(&w, &len);
  return len;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  const Table *tab;
  const kinds_Type *t;
  size_t split, n1, n2;
  bw_Reader r;
  bw_Error err;
  if (size < 4) return 0;
  tab = &tables[data[0] % NTABLES];
  t = &tab->types[data[1] % tab->n];
  FCHECK(t->size <= MAXVALUE);
  split = (size_t)(data[2] | data[3] << 8);
  data += 4;
  size -= 4;
  if (split > size) split = size;
  bw_readerinit(&r, data, split);
  if (!t->read(&r, base, &err)) {
    FCHECK(err.code != BW_OK && err.bitpos <= 8 * (uint64_t)split);
    return 0;
  }
  /* a value read writes back to bytes that read to the same bytes */
  n1 = put(t, base, NULL, out1, sizeof(out1));
  if (n1 > 0) {
    bw_readerinit(&r, out1, n1);
    FCHECK(t->read(&r, again, &err));
    n2 = put(t, again, NULL, out2, sizeof(out2));
    FCHECK(n2 == n1 && (!tab->exact || memcmp(out1, out2, n1) == 0));
  }
  /* the rest as a delta against it */
  bw_readerinit(&r, data + split, size - split);
  if (!t->read_delta(&r, value, base, &err)) {
    FCHECK(err.code != BW_OK);
    return 0;
  }
  n1 = put(t, value, base, out1, sizeof(out1));
  if (n1 > 0) {
    bw_readerinit(&r, out1, n1);
    FCHECK(t->read_delta(&r, again, base, &err));
    n2 = put(t, again, base, out2, sizeof(out2));
    FCHECK(n2 > 0 && (!tab->exact || (n2 == n1 && memcmp(out1, out2, n1) == 0)));
  }
  return 0;
}

#ifdef FUZZ_SEEDGEN
/* Seeds: for each type, values found by reading random bytes, written
** again, followed by a delta against themselves (every field unchanged). */
int main (int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  unsigned s, t, k = 0;
  for (s = 0; s < NTABLES; s++)
    for (t = 0; t < tables[s].n; t++) {
      const kinds_Type *ty = &tables[s].types[t];
      unsigned found = 0, tries;
      for (tries = 0; tries < 20000 && found < 3; tries++) {
        uint8_t raw[96], in[4 + sizeof(out1)];
        size_t n = 1 + rnd() % sizeof(raw), i, nv, nd;
        bw_Reader r;
        bw_Error err;
        for (i = 0; i < n; i++) raw[i] = (uint8_t)(rnd() & (tries % 2 ? 0x0f : 0xff));
        bw_readerinit(&r, raw, n);
        if (!ty->read(&r, base, &err)) continue;
        nv = put(ty, base, NULL, out1, sizeof(out1));
        nd = put(ty, base, base, out2, sizeof(out2));
        if (nv == 0 || nd == 0 || 4 + nv + nd > sizeof(in)) continue;
        in[0] = (uint8_t)s;
        in[1] = (uint8_t)t;
        in[2] = (uint8_t)(nv & 0xff);
        in[3] = (uint8_t)(nv >> 8);
        memcpy(in + 4, out1, nv);
        memcpy(in + 4 + nv, out2, nd);
        if (writeseed(dir, (int)k++, in, 4 + nv + nd) != 0) return 1;
        found++;
      }
    }
  return 0;
}
#endif
