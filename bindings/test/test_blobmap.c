/*
** test_blobmap.c - a blob written from Lua, mapped and read in place from C
** See LICENSE for copyright and terms.
*/

/*
** bindings/test/blobmap.lua writes build/blobmap/snapshot.bin with s:blob,
** the header bitwire.gen.blob prints for its description, and the values it
** wrote as C initializers. This program maps the file read-only, checks it
** with the generated Snapshot_blob_check, and reads every field through the
** generated structs and accessors: no copy, no fix-up. Built with ASan and
** UBSan, so a read outside the mapping or a misaligned access fails. Then a
** few corruptions (in a private copy) must fail the check.
*/

#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blobmap.h"
#include "expected.h"
#include "check.h"

#define BLOBFILE "build/blobmap/snapshot.bin"

static void readall (const void *blob, size_t size) {
  bw_Error err;
  const Snapshot *s;
  uint32_t i;
  CHECK(Snapshot_blob_check(blob, size, &err));
  CHECK(err.code == BW_OK);
  s = Snapshot_blob_root(blob);
  CHECK(s->tick == EXPECT_TICK);
  CHECK(strcmp(Snapshot_title(s), EXPECT_TITLE) == 0);
  CHECK(Snapshot_title_len(s) == strlen(EXPECT_TITLE));
  CHECK(Snapshot_entities_count(s) == EXPECT_N);
  for (i = 0; i < Snapshot_entities_count(s) && i < EXPECT_N; i++) {
    const Entity *e = Snapshot_entities_at(s, i);
    const struct Expect *x = &expected[i];
    uint32_t k;
    CHECK(e->id == x->id);
    CHECK(e->kind == x->kind);
    CHECK(e->health == x->health);
    CHECK(e->alive == x->alive);
    CHECK(e->pos.x == x->x && e->pos.y == x->y && e->pos.z == x->z);
    CHECK(e->has_name == (x->name != NULL));
    if (e->has_name && x->name != NULL)
      CHECK(strcmp(Entity_name(e), x->name) == 0);
    CHECK((Entity_target(e) != NULL) == x->has_target);
    if (Entity_target(e) != NULL) CHECK(Entity_target(e)->y == x->ty);
    CHECK(Entity_tags_count(e) == (uint32_t)x->ntags);
    for (k = 0; k < Entity_tags_count(e) && k < 4; k++)
      CHECK(*Entity_tags_at(e, k) == x->tags[k]);
    CHECK(Entity_near_count(e) == (uint32_t)x->nnear);
    if (Entity_near_count(e) == 1) {
      CHECK(Entity_near_at(e, 0)->index == (uint32_t)x->near_index);
      CHECK(Entity_near_at(e, 0)->value.x == x->near_x);
    }
    CHECK(e->mass == x->mass);
    CHECK((int64_t)e->big == x->big);
    for (k = 0; k < 3; k++) CHECK(e->grid[k] == x->grid[k]);
  }
}

/* Corruptions of a private copy fail the generated check. */
static void corrupt (const void *blob, size_t size) {
  uint8_t *copy = (uint8_t *)malloc(size + 8);
  uint8_t *b = copy + (((uintptr_t)copy & 7) ? 8 - ((uintptr_t)copy & 7) : 0);
  bw_Error err;
  const Snapshot *s = Snapshot_blob_root(blob);
  size_t entities = (size_t)((const uint8_t *)&s->entities
                             - (const uint8_t *)blob);
  memcpy(b, blob, size);
  CHECK(Snapshot_blob_check(b, size, &err));
  CHECK(!Snapshot_blob_check(b, size - 8, &err) && err.code == BW_ERANGE);
  CHECK(!Snapshot_blob_check(b, 31, &err) && err.code == BW_ETRUNC);
  CHECK(!Snapshot_blob_check(b + 1, size - 1, &err) && err.code == BW_EALIGN);
  CHECK(!Entity_blob_check(b, size, &err) && err.code == BW_ESCHEMA);
  b[8] ^= 1;  /* fingerprint */
  CHECK(!Snapshot_blob_check(b, size, &err) && err.code == BW_ESCHEMA);
  b[8] ^= 1;
  b[entities + 4] = 0xFF;  /* entity count */
  CHECK(!Snapshot_blob_check(b, size, &err) && err.code == BW_ERANGE);
  CHECK(strcmp(err.path, "entities") == 0);
  free(copy);
}

int main (void) {
  struct stat st;
  void *blob;
  int fd = open(BLOBFILE, O_RDONLY);
  CHECK(fd >= 0);
  if (fd < 0) return check_summary("test_blobmap");
  CHECK(fstat(fd, &st) == 0);
  blob = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  CHECK(blob != MAP_FAILED);
  close(fd);
  if (blob == MAP_FAILED) return check_summary("test_blobmap");
  readall(blob, (size_t)st.st_size);
  corrupt(blob, (size_t)st.st_size);
  munmap(blob, (size_t)st.st_size);
  return check_summary("test_blobmap");
}
