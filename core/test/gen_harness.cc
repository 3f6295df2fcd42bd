// gen_harness.cc - the C++ side of the generated-code cross test
// (tools/gen_cross.lua): the serialize functions of a generated
// messages.hpp over the serialize.h-contract streams of
// spec/fixtures/serialize_compat.h. Reads "typeid hex" lines and prints
// "O hex" (the value read, written again) or "E" (the read failed);
// "P typeid k idx val hex" lines set integer 'k' of the value read to 'val'
// (pokes.inc, as gen_harness.c) before writing it: "W" if refused.
// Lines and packets may be of any length, as gen_harness.c's.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "serialize_compat.h"
#include "messages.hpp"

struct Poke {
  bool on;
  unsigned long id, k;
  size_t idx;
  long long val;
};

#define SET(lhs) ((lhs) = static_cast<std::remove_reference<decltype(lhs)>::type>(val))
#define POKE(n, kk, T, stmt) \
  if (id == (n) && k == (kk)) { messages::T *v = static_cast<messages::T *>(p); stmt; return true; }

static bool poke (unsigned long id, void *p, unsigned long k, size_t idx, long long val) {
#include "pokes.inc"
  (void)id; (void)p; (void)k; (void)idx; (void)val;  // none to poke
  return false;
}

template <typename T>
static void roundtrip (const std::vector<uint8_t> &in, const Poke &pk) {
  static T value;
  serialize::ReadStream rs(in.data(), in.size());
  if (!messages::serialize(rs, value)) {
    std::printf("E\n");
    return;
  }
  if (pk.on && !poke(pk.id, &value, pk.k, pk.idx, pk.val)) std::exit(1);
  // a value read writes as many bits again: room for those and a poke's
  static std::vector<uint8_t> out;
  if (out.size() < in.size() + 4096) out.resize(in.size() + 4096);
  serialize::WriteStream ws(out.data(), out.size());
  if (!messages::serialize(ws, value)) {
    std::printf("W\n");
    return;
  }
  size_t n;
  const uint8_t *p = ws.GetData(&n);
  std::string hex;
  char buf[4];
  for (size_t i = 0; i < n; i++) {
    std::snprintf(buf, sizeof(buf), "%02x", p[i]);
    hex += buf;
  }
  std::printf("O %s %llu\n", hex.c_str(),
              (unsigned long long)ws.GetBitsProcessed());
}

// A line of any length into 'line', its newline dropped; false at the end.
static bool readline (std::string &line) {
  int c;
  line.clear();
  while ((c = std::getchar()) != EOF && c != '\n') line += (char)c;
  return c != EOF || !line.empty();
}

int main () {
  std::string text;
  while (readline(text)) {
    char *line = &text[0], *p = line, *end;
    Poke pk = { line[0] == 'P', 0, 0, 0, 0 };
    unsigned long id = std::strtoul(p + pk.on, &end, 10);
    if (pk.on) {
      pk.id = id;
      pk.k = std::strtoul(end + 1, &end, 10);
      pk.idx = (size_t)std::strtoul(end + 1, &end, 10);
      pk.val = std::strtoll(end + 1, &end, 10);
    }
    std::vector<uint8_t> in;
    for (p = end + 1; std::isxdigit((unsigned char)p[0]) && p[1]; p += 2) {
      char hx[3] = { p[0], p[1], 0 };
      in.push_back((uint8_t)std::strtoul(hx, nullptr, 16));
    }
    switch (id) {
#define MESSAGE_TYPE(n, T) case n: roundtrip<messages::T>(in, pk); break;
#include "messages_types.inc"
#undef MESSAGE_TYPE
      default: return 1;
    }
  }
  return 0;
}
