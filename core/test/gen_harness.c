/*
** gen_harness.c - the C side of the generated-code cross test
** (tools/gen_cross.lua): built with a generated messages.h/.c, it reads
** "typeid hex" lines, decodes each with the generated reader and prints
** "O hex bits" (the value written again and T_bits of it) or
** "E code bitpos path" (the read failure), one line per input line.
** "D typeid basehex hex" lines read a delta against the baseline that
** basehex decodes to and print the delta written again the same way.
** "M hex" lines read a message (its id, then its type's value).
** "P typeid k idx val hex" lines read the value, set integer 'k' of it
** (pokes.inc, from the cross test; element 'idx' of an array) to 'val',
** maybe out of its range, and write it: clamped, or "W range".
** Lines and packets may be of any length (the driver encodes up to 64 MiB):
** the buffers grow to the longest line.
*/
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "messages.h"

/* the growable writer's memory */
static void *alloc (void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

static char *line;
static size_t linecap;
static uint8_t *in, *basein;

/* Read a line of any length into 'line' (its newline kept); 0 at the end. */
static int readline (FILE *f) {
  size_t n = 0;
  if (line == NULL) {
    linecap = 1 << 16;
    if ((line = (char *)malloc(linecap)) == NULL) return 0;
  }
  while (fgets(line + n, (int)(linecap - n > INT_MAX ? INT_MAX : linecap - n),
               f) != NULL) {
    char *grown;
    n += strlen(line + n);
    if (n > 0 && line[n - 1] == '\n') break;
    if (n + 1 < linecap) break;  /* the last line, without a newline */
    if ((grown = (char *)realloc(line, 2 * linecap)) == NULL) exit(1);
    line = grown;
    linecap *= 2;
  }
  if (n == 0) return 0;
  /* room for every byte the line's hex can hold */
  free(in);
  free(basein);
  in = (uint8_t *)malloc(n / 2 + 1);
  basein = (uint8_t *)malloc(n / 2 + 1);
  if (in == NULL || basein == NULL) exit(1);
  return 1;
}

static int hexval (int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* Parse hex at 'p' into 'dst' (half the line's length or more); returns
** the byte count, '*end' after it. */
static size_t unhex (const char *p, uint8_t *dst, const char **end) {
  size_t n = 0;
  while (hexval(p[0]) >= 0 && hexval(p[1]) >= 0) {
    dst[n++] = (uint8_t)(hexval(p[0]) << 4 | hexval(p[1]));
    p += 2;
  }
  *end = p;
  return n;
}

#define SET(lhs) ((lhs) = (val))
#define POKE(n, kk, T, stmt) \
  if (id == (n) && k == (kk)) { T *v = (T *)p; stmt; return 1; }

static int poke (unsigned long id, void *p, unsigned long k, size_t idx,
                 long long val) {
#include "pokes.inc"
  (void)id; (void)p; (void)k; (void)idx; (void)val;  /* none to poke */
  return 0;
}

int main (void) {
  void *values[MESSAGES_NTYPES], *bases[MESSAGES_NTYPES];
  size_t t;
  for (t = 0; t < MESSAGES_NTYPES; t++) {
    values[t] = malloc(messages_types[t].size);
    bases[t] = malloc(messages_types[t].size);
    if (values[t] == NULL || bases[t] == NULL) return 1;
  }
  while (readline(stdin)) {
    char *p = line, *end;
    const char *q;
    int delta = line[0] == 'D', message = line[0] == 'M', poking = line[0] == 'P';
    unsigned long id = message ? 0 : strtoul(p + delta + poking, &end, 10);
    unsigned long k = 0;
    size_t n = 0, len, i, idx = 0;
    long long val = 0;
    bw_Reader r;
    bw_Writer w;
    bw_Error err;
    const uint8_t *data;
    int ok;
    if (message) end = p + 1;
    else if (end == p || id >= MESSAGES_NTYPES) return 1;
    if (poking) {
      k = strtoul(end + 1, &end, 10);
      idx = (size_t)strtoul(end + 1, &end, 10);
      val = strtoll(end + 1, &end, 10);
    }
    if (delta) {  /* the baseline: valid bytes of the type */
      n = unhex(end + 1, basein, &q);
      bw_readerinit(&r, basein, n);
      if (!messages_types[id].read(&r, bases[id], &err)) return 1;
      end = (char *)q;
    }
    n = unhex(end + 1, in, &q);
    bw_readerinit(&r, in, n);
    if (message) {
      unsigned mid;
      if (!messages_read_id(&r, &mid, &err)) {
        printf("E %s %llu %s\n", bw_codename(err.code),
               (unsigned long long)err.bitpos, err.path);
        continue;
      }
      id = messages_message_type[mid];
    }
    ok = delta ? messages_types[id].read_delta(&r, values[id], bases[id], &err)
               : messages_types[id].read(&r, values[id], &err);
    if (!ok) {
      printf("E %s %llu %s\n", bw_codename(err.code),
             (unsigned long long)err.bitpos, err.path);
      continue;
    }
    if (poking && !poke(id, values[id], k, idx, val)) return 1;
    bw_writerinitgrow(&w, alloc, NULL, (size_t)1 << 40);
    if (message) {  /* the id back from the type: the table's inverse */
      unsigned mid;
      for (mid = 0; messages_message_type[mid] != id; mid++) {}
      bw_writebits(&w, mid, MESSAGES_TYPEBITS);
    }
    ok = delta ? messages_types[id].write_delta(&w, values[id], bases[id])
               : messages_types[id].write(&w, values[id]);
    if (!ok) {
      printf("W %s\n", bw_codename(w.status));
      bw_writerfree(&w);
      continue;
    }
    data = bw_writerdata(&w, &len);
    printf("O ");
    for (i = 0; i < len; i++) printf("%02x", data[i]);
    if (message) printf(" -\n");  /* T_bits counts from bit 0, not after an id */
    else printf(" %zu\n", delta ? (size_t)bw_bitswritten(&w)
                                 : messages_types[id].bits(values[id]));
    bw_writerfree(&w);
  }
  free(line);
  free(in);
  free(basein);
  for (t = 0; t < MESSAGES_NTYPES; t++) {
    free(values[t]);
    free(bases[t]);
  }
  return 0;
}
