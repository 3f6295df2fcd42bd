/*
** test_handle.c - schema handles: ids looked up, never dereferenced
** See LICENSE for copyright and terms.
*/

#include <stdint.h>

#include "bw_schema.h"
#include "check.h"

/* take ends a handle; a second take of it finds nothing */
static void test_take_once (void) {
  bw_Schema *S = bw_schemanew();
  uintptr_t h;
  CHECK(S != NULL);
  if (S == NULL) return;
  h = bw_handlenew(S);
  CHECK(h != 0);
  CHECK(S->refs == 2);                  /* the handle holds a reference */
  CHECK(bw_handletake(h) == S);
  CHECK(bw_handletake(h) == NULL);
  CHECK(S->refs == 2);                  /* passed on, not dropped */
  bw_schemarelease(S);
  bw_schemarelease(S);
}

/* A handle whose schema was freed is refused without reading the schema
** (ASan in make sanitize would report a use after free). */
static void test_stale_after_free (void) {
  bw_Schema *S = bw_schemanew();
  uintptr_t h;
  CHECK(S != NULL);
  if (S == NULL) return;
  h = bw_handlenew(S);
  bw_schemarelease(bw_handletake(h));   /* unshare */
  bw_schemarelease(S);                   /* freed */
  CHECK(bw_handletake(h) == NULL);
  CHECK(bw_handletake(0) == NULL);
  CHECK(bw_handletake(UINTPTR_MAX) == NULL);
}

/* ids are never reused: an old handle cannot take a newer share */
static void test_ids_fresh (void) {
  bw_Schema *S = bw_schemanew();
  uintptr_t h[100], old;
  int i;
  CHECK(S != NULL);
  if (S == NULL) return;
  old = bw_handlenew(S);
  bw_schemarelease(bw_handletake(old));
  for (i = 0; i < 100; i++) {
    h[i] = bw_handlenew(S);
    CHECK(h[i] != 0 && h[i] != old && (i == 0 || h[i] > h[i - 1]));
  }
  CHECK(bw_handletake(old) == NULL);
  for (i = 99; i >= 0; i -= 2) CHECK(bw_handletake(h[i]) == S);
  for (i = 0; i < 100; i += 2) CHECK(bw_handletake(h[i]) == S);
  for (i = 0; i < 100; i++) CHECK(bw_handletake(h[i]) == NULL);
  CHECK(S->refs == 101);
  for (i = 0; i < 101; i++) bw_schemarelease(S);
}

int main (void) {
  test_take_once();
  test_stale_after_free();
  test_ids_fresh();
  return check_summary("test_handle");
}
