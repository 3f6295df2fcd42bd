/*
** gen_harness.c - the C side of the generated-code cross test
** (tools/gen_cross.lua): built with a generated messages.h/.c, it reads
** "typeid hex" lines, decodes each with the generated reader and prints
** "O hex bits" (the value written again and T_bits of it) or
** "E code bitpos path" (the read failure), one line per input line.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "messages.h"

#define MAXLINE  (1 << 21)
#define MAXBYTES (MAXLINE / 2)

static char line[MAXLINE];
static uint8_t in[MAXBYTES], out[MAXBYTES];

static int hexval (int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

int main (void) {
  void *values[MESSAGES_NTYPES];
  size_t t;
  for (t = 0; t < MESSAGES_NTYPES; t++) {
    values[t] = malloc(messages_types[t].size);
    if (values[t] == NULL) return 1;
  }
  while (fgets(line, sizeof(line), stdin) != NULL) {
    char *p = line, *end;
    unsigned long id = strtoul(p, &end, 10);
    size_t n = 0, len, i;
    bw_Reader r;
    bw_Writer w;
    bw_Error err;
    const uint8_t *data;
    if (end == p || id >= MESSAGES_NTYPES) return 1;
    p = end + 1;
    while (hexval(p[0]) >= 0 && hexval(p[1]) >= 0 && n < MAXBYTES) {
      in[n++] = (uint8_t)(hexval(p[0]) << 4 | hexval(p[1]));
      p += 2;
    }
    bw_readerinit(&r, in, n);
    if (!messages_types[id].read(&r, values[id], &err)) {
      printf("E %s %llu %s\n", bw_codename(err.code),
             (unsigned long long)err.bitpos, err.path);
      continue;
    }
    bw_writerinit(&w, out, sizeof(out));
    if (!messages_types[id].write(&w, values[id])) {
      printf("W %s\n", bw_codename(w.status));
      continue;
    }
    data = bw_writerdata(&w, &len);
    printf("O ");
    for (i = 0; i < len; i++) printf("%02x", data[i]);
    printf(" %zu\n", messages_types[id].bits(values[id]));
  }
  for (t = 0; t < MESSAGES_NTYPES; t++) free(values[t]);
  return 0;
}
