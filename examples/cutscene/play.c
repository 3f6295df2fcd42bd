/*
** play.c - plays a cutscene blob in place: mmap, check once, read
** See LICENSE for copyright and terms.
*/

/*
** The blob comes from the build step (`bitwire blob cutscene_defs.lua
** Cutscene cutscene.json -o cutscene.bin`); cutscene_blob.h from
** bitwire.gen.blob. Nothing is parsed or copied: after Cutscene_blob_check
** every string and array is read where it lies in the mapped file.
*/

#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cutscene_blob.h"

static void play (const Cutscene *cs) {
  uint32_t i, n = Cutscene_commands_count(cs);
  printf("scene \"%s\": %u commands\n", Cutscene_scene(cs), (unsigned)n);
  for (i = 0; i < n; i++) {
    const Command *c = Cutscene_commands_at(cs, i);
    switch (c->type) {
      case Command_type_fade:
        printf("  fade %.2f -> %.2f over %.2f s\n",
               c->has_start ? c->start : 0.0, c->has_end ? c->end : 1.0,
               c->has_duration ? c->duration : 0.0);
        break;
      case Command_type_move_entity:
        printf("  move %s to (%d, %d)%s\n",
               c->has_entity_name ? Command_entity_name(c) : "?",
               c->has_x ? c->x : 0, c->has_y ? c->y : 0,
               c->has_instant && c->instant ? " instantly" : "");
        break;
      case Command_type_dialogue:
        printf("  say \"%s\"\n", c->has_text ? Command_text(c) : "");
        break;
      default:
        break;
    }
  }
}

int main (int argc, char **argv) {
  struct stat st;
  void *blob;
  bw_Error err;
  int fd;
  if (argc != 2) {
    fprintf(stderr, "usage: %s cutscene.bin\n", argv[0]);
    return 2;
  }
  fd = open(argv[1], O_RDONLY);
  if (fd < 0 || fstat(fd, &st) != 0) {
    perror(argv[1]);
    return 1;
  }
  blob = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (blob == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  if (!Cutscene_blob_check(blob, (size_t)st.st_size, &err)) {
    fprintf(stderr, "%s: not a valid cutscene: %s at %s (byte %lu)\n",
            argv[1], bw_strerror(err.code), err.path[0] ? err.path : "header",
            (unsigned long)(err.bitpos / 8));
    return 1;
  }
  play(Cutscene_blob_root(blob));
  munmap(blob, (size_t)st.st_size);
  return 0;
}
