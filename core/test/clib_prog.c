/*
** clib_prog.c - a C program built against the installed libbitwire with
** pkg-config (tools/test_clib.sh checks what it prints)
*/
#include <stdio.h>

#include "bw.h"
#include "bw_schema.h"
#include "bw_gen.h"

static const unsigned widths[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static const uint64_t values[8] = { 1, 2, 5, 10, 19, 42, 85, 195 };

int main (void) {
  uint8_t buf[64];
  bw_Writer w;
  bw_Reader r;
  bw_Schema *S;
  const uint8_t *p;
  size_t n, i;
  uint32_t ty, f, nm;
  char msg[128];
  bw_writerinit(&w, buf, sizeof(buf));
  for (i = 0; i < 8; i++) bw_writebits(&w, values[i], widths[i]);
  p = bw_writerdata(&w, &n);
  for (i = 0; i < n; i++) printf("%s%02x", i ? " " : "", p[i]);
  printf(" |");
  bw_readerinit(&r, p, n);
  for (i = 0; i < 8; i++) printf(" %u", (unsigned)bw_readbits(&r, widths[i]));
  /* WIRE.md's framing example */
  bw_writerinit(&w, buf, sizeof(buf));
  bw_framebegin(&w);
  bw_writebits(&w, 0x1234, 16);
  bw_writebool(&w, 1);
  bw_frameend(&w, UINT64_C(0x0123456789abcdef), 0);
  p = bw_writerdata(&w, &n);
  printf(" | frame");
  for (i = 0; i < n; i++) printf(" %02x", p[i]);
  if (bw_frameopen(&r, p, n, UINT64_C(0x0123456789abcdef), 0) != BW_OK
      || bw_readbits(&r, 16) != 0x1234 || !bw_readbool(&r))
    return 1;
  /* a compiled schema: one type of one int field in [0, 100] */
  S = bw_schemanew();
  if (S == NULL) return 1;
  nm = bw_schemaaddname(S, "health", 6);
  ty = bw_schemaaddtype(S, bw_schemaaddname(S, "P", 1));
  f = bw_schemaaddfields(S, 1);
  S->types[ty].first = f;
  S->types[ty].count = 1;
  S->fields[f].kind = BW_KINT;
  S->fields[f].name = nm;
  S->fields[f].max = 100;
  S->fields[f].nbits = bw_bitsrequired(0, 100);
  if (bw_schemaseal(S, msg, sizeof(msg)) != BW_OK
      || S->types[ty].maxbits != 7)
    return 1;
  bw_schemarelease(S);
  printf(" | ok\n");
  return 0;
}
