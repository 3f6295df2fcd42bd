/*
** test_strings.c - strings: UTF-8 validation, round trips, hostile lengths
** See LICENSE for copyright and terms.
*/

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bw.h"
#include "check.h"
#include "streamcheck.h"


/* {===================== strings and UTF-8 ===================== */

static void test_utf8valid (void) {
  static const struct { const char *s; size_t n; int ok; } cases[] = {
#define U(lit, ok)  {lit, sizeof(lit) - 1, ok}
    U("", 1), U("abc", 1), U("h\xc3\xa9llo", 1),
    U("\xc2\x80", 1), U("\xdf\xbf", 1),                 /* U+0080, U+07FF */
    U("\xe0\xa0\x80", 1), U("\xed\x9f\xbf", 1),         /* U+0800, U+D7FF */
    U("\xee\x80\x80", 1), U("\xef\xbf\xbf", 1),         /* U+E000, U+FFFF */
    U("\xf0\x90\x80\x80", 1), U("\xf4\x8f\xbf\xbf", 1), /* U+10000..10FFFF */
    U("\x7f", 1),
    U("\0", 0), U("a\0b", 0), U("abc\0", 0),            /* NUL */
    U("\xc0\x80", 0), U("\xc1\xbf", 0),                 /* overlong 2-byte */
    U("\xe0\x80\x80", 0), U("\xe0\x9f\xbf", 0),         /* overlong 3-byte */
    U("\xf0\x80\x80\x80", 0), U("\xf0\x8f\xbf\xbf", 0), /* overlong 4-byte */
    U("\xed\xa0\x80", 0), U("\xed\xbf\xbf", 0),         /* surrogates */
    U("\xed\xa0\x80\xed\xb0\x80", 0),                   /* CESU pair */
    U("\xf4\x90\x80\x80", 0), U("\xf7\xbf\xbf\xbf", 0), /* > U+10FFFF */
    U("\xf5\x80\x80\x80", 0), U("\xf8\x88\x80\x80\x80", 0),
    U("\xff", 0), U("\xfe", 0), U("\x80", 0), U("\xbf", 0),
    U("\xc2", 0), U("\xe2\x82", 0), U("\xf0\x9f\x98", 0), /* truncated */
    U("abc\xe2\x82", 0), U("\xe2\x82" "abc", 0),
    U("\xc2\x41", 0), U("\xe2\x28\xa1", 0), U("\xf0\x9f\x28\x80", 0),
    U("\xc3\x28", 0),
#undef U
  };
  size_t i;
  int bad = 0;
  for (i = 0; i < NELEMS(cases); i++)
    EXPECT(bad, bw_utf8valid(cases[i].s, cases[i].n) == cases[i].ok,
           "case %zu", i);
  CHECK(bad == 0);
  CHECK(bw_utf8valid(NULL, 0) == 1);
}

static void test_string_roundtrip (void) {
  static const struct { const char *s; size_t n, maxlen; } cases[] = {
    {"", 0, 0}, {"", 0, 10}, {"a", 1, 1}, {"h\xc3\xa9llo", 6, 6},
    {"\xf0\x9f\x98\x80", 4, 255}, {"abcde", 5, 5}, {"golden", 6, 15},
    {"x", 1, 65535},
  };
  size_t i;
  int bad = 0;
  for (i = 0; i < NELEMS(cases); i++) {
    uint8_t buf[64];
    const uint8_t *data;
    const char *s;
    size_t len, n, lenbits = bw_bitsrequired(0, (int64_t)cases[i].maxlen);
    bw_Writer w;
    bw_Reader r;
    bw_writerinit(&w, buf, sizeof(buf));
    bw_writebits(&w, 1, 1);
    bw_writestring(&w, cases[i].s, cases[i].n, cases[i].maxlen);
    EXPECT(bad, w.status == BW_OK && bw_bitswritten(&w)
           == ((1 + lenbits + 7) / 8 + cases[i].n) * 8, "case %zu", i);
    data = bw_writerdata(&w, &len);
    bw_readerinit(&r, data, len);
    bw_readbits(&r, 1);
    s = bw_readstring(&r, cases[i].maxlen, &n);
    EXPECT(bad, s != NULL && n == cases[i].n
           && memcmp(s, cases[i].s, n) == 0 && r.status == BW_OK
           && (const uint8_t *)s == data + (1 + lenbits + 7) / 8,
           "case %zu", i);
  }
  CHECK(bad == 0);
}

static void test_string_errors (void) {
  uint8_t buf[32], bytes[8];
  const uint8_t *data;
  size_t len, n = 99;
  bw_Writer w;
  bw_Reader r;
  /* the writer refuses, writing nothing */
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, 0, 3);
  CHECK(bw_writestring(&w, "abcdef", 6, 5) == BW_ERANGE);
  CHECK(w.errpos == 3 && bw_bitswritten(&w) == 3);
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writestring(&w, "a\0b", 3, 10) == BW_EUTF8);
  CHECK(w.errpos == 0 && bw_bitswritten(&w) == 0);
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writestring(&w, "\xc3\x28", 2, 10) == BW_EUTF8);
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writestring(&w, "\xed\xa0\x80", 3, 10) == BW_EUTF8);
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writestring(&w, "a", 1, 0) == BW_ERANGE);
  bw_writerinit(&w, buf, sizeof(buf));
  CHECK(bw_writestring(&w, "a", 1, (size_t)INT64_MAX + 1) == BW_ERANGE);
  /* the reader refuses an interior NUL, reported after the length field */
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, 0, 2);
  bw_writeint(&w, 3, 0, 10);
  bw_writebytes(&w, "a\0b", 3);
  data = bw_writerdata(&w, &len);
  bw_readerinit(&r, data, len);
  bw_readbits(&r, 2);
  CHECK(bw_readstring(&r, 10, &n) == NULL && n == 0);
  CHECK(r.status == BW_EUTF8 && r.errpos == 6);
  /* a length over maxlen: 5 in 3 bits when maxlen is 4 */
  bytes[0] = 5;
  bw_readerinit(&r, bytes, 1);
  CHECK(bw_readstring(&r, 4, &n) == NULL && r.status == BW_ERANGE);
  CHECK(r.errpos == 0);
  /* fewer bytes than the length says */
  bytes[0] = 5; bytes[1] = 'a'; bytes[2] = 'b';
  bw_readerinit(&r, bytes, 3);
  CHECK(bw_readstring(&r, 7, &n) == NULL && r.status == BW_ETRUNC);
  CHECK(r.errpos == 8);
  /* a maxlen the length field cannot hold */
  bw_readerinit(&r, bytes, 3);
  CHECK(bw_readstring(&r, (size_t)INT64_MAX + 1, &n) == NULL);
  CHECK(r.status == BW_EARG);
}

/* }========================================================== */


int main (void) {
  test_utf8valid();
  test_string_roundtrip();
  test_string_errors();
  return check_summary("test_strings");
}
