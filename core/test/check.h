/*
** check.h - minimal test harness for the C core: CHECK(cond) and a summary
** See LICENSE for copyright and terms.
*/
#ifndef CHECK_H
#define CHECK_H
#include <stdio.h>

static int check_passed, check_failed;

#define CHECK(cond) do { \
    if (cond) check_passed++; \
    else { check_failed++; \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } \
  } while (0)

/* Prints the closing line tools/runtests.lua reads; exit status for main. */
static int check_summary (const char *unit) {
  printf("%s: %d passed, %d failed\n", unit, check_passed, check_failed);
  return check_failed != 0;
}
#endif
