/*
** server.c - a C server for the messages a Lua prototype sends
** (examples/c_server/client.lua), with the code `bitwire gen c` wrote from
** defs.lua (game.h, game.c). Packets are framed by the core (bw_frameopen,
** bw_frameend: a CRC32 over the protocol id and the bytes, then the message
** id, the message and an end check), as the client's s:frame_encode frames
** them. It answers UDP datagrams on 127.0.0.1 and stops by itself: after a
** Bye, or after 3 seconds without a packet.
** usage: server PORT
*/
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "game.h"

#define PROTOCOL_ID UINT64_C(0x6269747769726531)  /* the client's, never sent */

typedef struct Player {
  char name[17];
  Hello_team team;  /* enums arrive as C enums */
  float x, y, z;
} Player;

static void answer (int fd, const struct sockaddr_in *to, const uint8_t *p,
                    size_t n) {
  sendto(fd, p, n, 0, (const struct sockaddr *)to, sizeof(*to));
}

int main (int argc, char **argv) {
  struct sockaddr_in addr, from;
  struct timeval tv = { 3, 0 };
  Player player = { "", Hello_team_red, 0, 0, 0 };
  uint8_t in[1500], out[1500];
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0 || argc < 2) return 1;
  memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)atoi(argv[1]));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0
      || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
    perror("server");
    return 1;
  }
  for (;;) {
    socklen_t fromlen = sizeof(from);
    ssize_t got = recvfrom(fd, in, sizeof(in), 0, (struct sockaddr *)&from,
                           &fromlen);
    bw_Reader r;
    bw_Writer w;
    bw_Error err;
    unsigned id;
    size_t n;
    const uint8_t *p;
    if (got < 0) {
      printf("server: no packet for 3 s, stopping\n");
      break;
    }
    if (bw_frameopen(&r, in, (size_t)got, PROTOCOL_ID, 1) != BW_OK) {
      printf("server: dropped a packet: %s\n", bw_codename(r.status));
      continue;
    }
    bw_writerinit(&w, out, sizeof(out));
    bw_framebegin(&w);
    if (!game_read_id(&r, &id, &err)) {
      printf("server: bad packet: %s at bit %llu\n", bw_codename(err.code),
             (unsigned long long)err.bitpos);
      continue;
    }
    if (id == Hello_ID) {
      Hello hello;
      Welcome welcome;
      if (!Hello_read_err(&r, &hello, &err)) goto bad;
      memcpy(player.name, hello.name, sizeof(player.name));
      player.team = hello.team;
      printf("server: Hello from %s (team %s)\n", hello.name,
             hello.team == Hello_team_red ? "red" : "blue");
      welcome.player = 7;
      snprintf(welcome.greeting, sizeof(welcome.greeting), "welcome, %s",
               hello.name);
      welcome.spawn.x = 10.5f;
      welcome.spawn.y = 0;
      welcome.spawn.z = -3.25f;
      Welcome_write_message(&w, &welcome);
    }
    else if (id == Input_ID) {
      Input input;
      Ack ack;
      if (!Input_read_err(&r, &input, &err)) goto bad;
      player.x += input.move.x;
      player.y += input.move.y;
      player.z += input.move.z;
      printf("server: Input tick %u move (%.2f, %.2f, %.2f)%s\n",
             (unsigned)input.tick, input.move.x, input.move.y, input.move.z,
             input.fire ? " fire" : "");
      ack.tick = input.tick;
      ack.pos.x = player.x;
      ack.pos.y = player.y;
      ack.pos.z = player.z;
      Ack_write_message(&w, &ack);
    }
    else if (id == Bye_ID) {
      Bye bye;
      if (!Bye_read_err(&r, &bye, &err)) goto bad;
      printf("server: Bye (%s), stopping\n", bye.has_reason ? bye.reason : "-");
      break;
    }
    else {
      printf("server: message %u not served\n", id);
      continue;
    }
    bw_frameend(&w, PROTOCOL_ID, 1);
    p = bw_writerdata(&w, &n);
    if (w.status == BW_OK) answer(fd, &from, p, n);
    continue;
  bad:  /* the same code, bit and path the Lua driver reports */
    printf("server: bad packet: %s: %s at bit %llu\n", err.path,
           bw_codename(err.code), (unsigned long long)err.bitpos);
  }
  close(fd);
  return 0;
}
