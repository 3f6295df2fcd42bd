// clib_prog.cc - a C++ program built against the installed libbitwire with
// pkg-config (tools/test_clib.sh checks what it prints)
#include <cstdio>
#include <string>
#include <vector>

#include "bw.h"
#include "bw_schema.h"
#include "bw_gen.h"
#include "bw_blob.h"

int main () {
  const unsigned widths[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
  const std::vector<uint64_t> values = { 1, 2, 5, 10, 19, 42, 85, 195 };
  std::vector<uint8_t> buf(64);
  bw_Writer w;
  bw_writerinit(&w, buf.data(), buf.size());
  for (size_t i = 0; i < values.size(); i++)
    bw_writebits(&w, values[i], widths[i]);
  size_t n;
  const uint8_t *p = bw_writerdata(&w, &n);
  std::string out;
  char hex[8];
  for (size_t i = 0; i < n; i++) {
    std::snprintf(hex, sizeof(hex), "%s%02x", i ? " " : "", p[i]);
    out += hex;
  }
  out += " |";
  bw_Reader r;
  bw_readerinit(&r, p, n);
  for (size_t i = 0; i < values.size(); i++)
    out += " " + std::to_string(bw_readbits(&r, widths[i]));
  bw_writerinit(&w, buf.data(), buf.size());
  bw_framebegin(&w);
  bw_writebits(&w, 0x1234, 16);
  bw_writebool(&w, 1);
  bw_frameend(&w, UINT64_C(0x0123456789abcdef), 0);
  p = bw_writerdata(&w, &n);
  out += " | frame";
  for (size_t i = 0; i < n; i++) {
    std::snprintf(hex, sizeof(hex), " %02x", p[i]);
    out += hex;
  }
  if (bw_frameopen(&r, p, n, UINT64_C(0x0123456789abcdef), 0) != BW_OK)
    return 1;
  bw_Schema *S = bw_schemanew();
  if (S == nullptr) return 1;
  uint32_t nm = bw_schemaaddname(S, "health", 6);
  uint32_t ty = bw_schemaaddtype(S, bw_schemaaddname(S, "P", 1));
  uint32_t f = bw_schemaaddfields(S, 1);
  S->types[ty].first = f;
  S->types[ty].count = 1;
  S->fields[f].kind = BW_KINT;
  S->fields[f].name = nm;
  S->fields[f].max = 100;
  S->fields[f].nbits = bw_bitsrequired(0, 100);
  char msg[128];
  if (bw_schemaseal(S, msg, sizeof(msg)) != BW_OK
      || S->types[ty].maxbits != 7)
    return 1;
  // bw_blob.h's functions link with C names too
  std::vector<uint64_t> mem(bw_bloblayoutsize(S) / 8 + 1);
  bw_BlobLayout L;
  bw_BlobHeader h;
  const uint8_t zeros[BW_BLOBHEADER] = { 0 };
  if (bw_bloblayout(S, 0, mem.data(), &L, msg, sizeof(msg)) != BW_OK
      || L.ntypes != 1 || bw_blobheader(zeros, sizeof(zeros), &h) != BW_ETAG)
    return 1;
  bw_schemarelease(S);
  std::printf("%s | ok\n", out.c_str());
  return 0;
}
