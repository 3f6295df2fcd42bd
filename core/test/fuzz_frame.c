/*
** fuzz_frame.c - libFuzzer target: packet framing (CRC32, end check)
** See LICENSE for copyright and terms.
*/

/*
** Pass 1 opens the whole input as a packet, for a few protocol ids, with
** and without the end check, and compares the verdict with a bitwise CRC32
** written here (not zlib's): BW_ETRUNC, BW_ECRC, BW_ECHECK or a reader on
** exactly the payload. The same bytes with their CRC field fixed up must
** then open.
**
** Pass 2 reads the input as [flags][protocol id: 8][flip: 4][payload],
** frames the payload (after 0..7 leading bits, written in odd-sized chunks
** or as bytes()) with a growable writer and with fixed writers of exactly
** the packet size and one byte less, and checks that the packet opens and
** reads back, and that one flipped bit or another protocol id is refused.
**
** Pass 3 reads the header options from the first 3 bytes (flags, version
** and message id widths), fixes up the CRC of the rest and checks what
** bw_framereadheader gives against a reference parse of the bits (WIRE.md,
** "Frame header"); then writes the fields it read and gets the same bytes.
*/

#include "fuzz.h"

#define NPROTO  4


/* {===================== reference CRC32 ===================== */

static uint32_t crctab[256];

static void crcinit (void) {
  uint32_t i, c;
  int k;
  if (crctab[1] != 0) return;
  for (i = 0; i < 256; i++) {
    for (c = i, k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crctab[i] = c;
  }
}

static uint32_t crcbytes (uint32_t crc, const uint8_t *p, size_t n) {
  while (n-- > 0) crc = crctab[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
  return crc;
}

/* CRC32 of the 8-byte little-endian 'pid' followed by 'p' (WIRE.md). */
static uint32_t refcrc (uint64_t pid, const uint8_t *p, size_t n) {
  uint8_t prefix[8];
  int i;
  for (i = 0; i < 8; i++) prefix[i] = (uint8_t)(pid >> (8 * i));
  return ~crcbytes(crcbytes(~0u, prefix, 8), p, n);
}

static uint32_t getle32 (const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
         | (uint32_t)p[3] << 24;
}

static void putle32 (uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

/* }========================================================== */


/* {===================== pass 1: hostile packets ===================== */

/* What bw_frameopen must say about 'p' of 'n' bytes. */
static bw_Status verdict (const uint8_t *p, size_t n, uint64_t pid,
                          int endcheck) {
  if (n < (size_t)(BW_FRAMEHEADER + (endcheck ? 4 : 0))) return BW_ETRUNC;
  if (getle32(p) != refcrc(pid, p + 4, n - 4)) return BW_ECRC;
  if (endcheck && getle32(p + n - 4) != BW_CHECKMAGIC) return BW_ECHECK;
  return BW_OK;
}

/* Open 'p' and check the reader against the verdict. */
static void openpacket (const uint8_t *p, size_t n, uint64_t pid,
                        int endcheck, bw_Status want) {
  bw_Reader r;
  bw_Status st = bw_frameopen(&r, p, n, pid, endcheck);
  FCHECK(st == want && r.status == st);
  FCHECK(r.pos <= r.nbits && r.nbits == (uint64_t)r.nbytes * 8);
  if (st != BW_OK) {
    FCHECK(r.errpos == r.pos && r.errpos <= r.nbits);
    FCHECK(bw_readbits(&r, 1) == 0 && r.status == st);
    return;
  }
  FCHECK(r.data == p && r.pos == 32);
  FCHECK(r.nbytes == n - (endcheck ? 4 : 0));
  while (bw_bitsremaining(&r) > 0) {  /* the payload, and no more */
    uint64_t at = r.pos, left = bw_bitsremaining(&r);
    unsigned k = left < 61 ? (unsigned)left : 61;
    FCHECK(bw_readbits(&r, k) == refbits(p, at, k) && r.status == BW_OK);
  }
  FCHECK(bw_readbits(&r, 1) == 0 && r.status == BW_ETRUNC);
  FCHECK(r.errpos == r.nbits);
}

static void hostile (const uint8_t *data, size_t size, uint64_t inpid) {
  const uint64_t pids[NPROTO] = {0, BW_CHECKMAGIC, UINT64_MAX, inpid};
  int i, ec;
  for (i = 0; i < NPROTO; i++)
    for (ec = 0; ec <= 1; ec++)
      openpacket(data, size, pids[i], ec, verdict(data, size, pids[i], ec));
  if (size >= 4) {  /* zlib agrees with the reference */
    FCHECK(bw_framecrc(inpid, data + 4, size - 4)
           == refcrc(inpid, data + 4, size - 4));
    FCHECK(bw_framecrc(inpid, NULL, 0) == refcrc(inpid, NULL, 0));
  }
  if (size >= 4) {  /* the same bytes with a good CRC field */
    uint8_t *copy = (uint8_t *)malloc(size);
    FCHECK(copy != NULL);
    memcpy(copy, data, size);
    putle32(copy, refcrc(inpid, copy + 4, size - 4));
    openpacket(copy, size, inpid, 0, BW_OK);
    openpacket(copy, size, inpid, 1, verdict(copy, size, inpid, 1));
    free(copy);
  }
}

/* }========================================================== */


/* {===================== pass 2: frames ===================== */

/* Leading bits and the payload, the way 'flags' says. */
static bw_Status writepayload (bw_Writer *w, unsigned flags,
                               const uint8_t *p, size_t n) {
  unsigned nlead = (flags >> 1) & 7, wseed = flags >> 5;
  uint64_t pos, nbits = (uint64_t)n * 8;
  size_t i;
  bw_writebits(w, 0x5A & mask64(nlead), nlead);
  if (flags & 0x10) return bw_writebytes(w, p, n);
  for (pos = 0, i = 0; pos < nbits; i++) {  /* chunks of 1..64 bits */
    unsigned k = 1 + (unsigned)((i * 37 + wseed * 11) % 64);
    if (k > nbits - pos) k = (unsigned)(nbits - pos);
    bw_writebits(w, refbits(p, pos, k), k);
    pos += k;
  }
  return w->status;
}

/* Packet size of the frame 'writepayload' writes. */
static size_t framesize (unsigned flags, size_t n, int endcheck) {
  uint64_t bits = 32 + ((flags >> 1) & 7);
  if (flags & 0x10) bits += refpad(bits);
  bits += (uint64_t)n * 8;
  bits += refpad(bits) + (endcheck ? 32 : 0);
  return (size_t)(bits / 8);
}

static void frames (const uint8_t *data, size_t size) {
  Src s;
  unsigned flags;
  uint64_t pid;
  uint32_t flip;
  int ec;
  const uint8_t *payload, *out;
  size_t npayload, len, want, k;
  bw_Writer g, w;
  Heap h;
  uint8_t *buf;
  bw_Reader r;
  srcinit(&s, data, size);
  flags = getu8(&s);
  pid = getu64(&s);
  flip = getu32(&s);
  payload = data + (size < 13 ? size : 13);
  npayload = size - (size_t)(payload - data);
  ec = (int)(flags & 1);
  want = framesize(flags, npayload, ec);
  /* growable writer */
  heapinit(&h, -1);
  bw_writerinitgrow(&g, heapalloc, &h, SIZE_MAX);
  FCHECK(bw_framebegin(&g) == BW_OK);
  FCHECK(writepayload(&g, flags, payload, npayload) == BW_OK);
  FCHECK(bw_frameend(&g, pid, ec) == BW_OK);
  out = bw_writerdata(&g, &len);
  FCHECK(len == want && bw_bitswritten(&g) == (uint64_t)want * 8);
  FCHECK(getle32(out) == refcrc(pid, out + 4, len - 4));
  if (ec) FCHECK(getle32(out + len - 4) == BW_CHECKMAGIC);
  /* fixed writers: exactly the size, then a byte short */
  for (k = 0; k <= 1; k++) {
    size_t cap = want - k;
    bw_Status st;
    buf = (uint8_t *)malloc(cap);
    FCHECK(buf != NULL);
    bw_writerinit(&w, buf, cap);
    bw_framebegin(&w);
    writepayload(&w, flags, payload, npayload);
    st = bw_frameend(&w, pid, ec);
    if (k == 0) {
      const uint8_t *o = bw_writerdata(&w, &len);
      FCHECK(st == BW_OK && len == want && memcmp(o, out, len) == 0);
    }
    else {
      FCHECK(st == BW_ETRUNC && w.status == BW_ETRUNC);
      FCHECK(w.errpos <= (uint64_t)cap * 8);
      FCHECK(bw_bitswritten(&w) == w.errpos);
    }
    free(buf);
  }
  /* open an exact copy and read the payload back */
  buf = (uint8_t *)malloc(want);
  FCHECK(buf != NULL);
  memcpy(buf, out, want);
  FCHECK(bw_frameopen(&r, buf, want, pid, ec) == BW_OK);
  k = (flags >> 1) & 7;  /* the leading bits */
  FCHECK(bw_readbits(&r, (unsigned)k) == (0x5A & mask64((unsigned)k)));
  if (flags & 0x10) {
    const uint8_t *p = bw_readbytes(&r, npayload);
    FCHECK(p != NULL && (npayload == 0 || memcmp(p, payload, npayload) == 0));
  }
  else {
    uint64_t pos;
    for (pos = 0; pos < (uint64_t)npayload * 8; ) {
      unsigned n = (uint64_t)npayload * 8 - pos < 64
                   ? (unsigned)((uint64_t)npayload * 8 - pos) : 64;
      FCHECK(bw_readbits(&r, n) == refbits(payload, pos, n));
      pos += n;
    }
  }
  bw_readalign(&r);
  FCHECK(r.status == BW_OK && bw_bitsremaining(&r) == 0);
  /* the other end-check setting */
  openpacket(buf, want, pid, !ec, verdict(buf, want, pid, !ec));
  /* another protocol id differs in one bit: CRC32 catches it */
  openpacket(buf, want, pid ^ (UINT64_C(1) << (flip >> 26)), ec, BW_ECRC);
  /* one flipped bit anywhere, CRC field and end check included */
  k = (size_t)(flip % ((uint64_t)want * 8));
  buf[k / 8] ^= (uint8_t)(1u << (k % 8));
  openpacket(buf, want, pid, ec, BW_ECRC);
  free(buf);
  bw_writerfree(&g);
  FCHECK(h.size == 0);
}

/* Frames the caller builds wrong: misuse is refused, nothing is written. */
static void misuse (void) {
  bw_Writer w;
  uint8_t buf[16];
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebool(&w, 1);
  FCHECK(bw_framebegin(&w) == BW_EARG && w.errpos == 1);
  bw_writerinit(&w, buf, sizeof(buf));
  bw_writebits(&w, 0xAB, 8);
  FCHECK(bw_frameend(&w, 0, 0) == BW_EARG);
  bw_writerinit(&w, buf, 7);  /* room for the CRC, not the end check */
  bw_framebegin(&w);
  FCHECK(bw_frameend(&w, 0, 1) == BW_ETRUNC);
}

/* }========================================================== */


/* {===================== pass 3: frame headers ===================== */

static void headers (const uint8_t *data, size_t size) {
  bw_FrameHeader h, g;
  bw_Reader r;
  uint8_t *pk;
  size_t n, hdrbits;
  uint64_t pos, payload;
  int ec;
  bw_Status want = BW_OK, st;
  if (size < 3) return;
  memset(&h, 0, sizeof(h));
  h.flags = data[0] & BW_FALL;
  h.versionbits = 1 + data[1] % 32;
  h.typebits = data[2] % 33;
  h.protocolid = data[1] * UINT64_C(0x9E3779B97F4A7C15);
  ec = (h.flags & BW_FCHECK) != 0;
  n = size - 3;
  if (n < 4) n = 4;
  pk = (uint8_t *)calloc(n, 1);
  FCHECK(pk != NULL);
  memcpy(pk, data + 3, size - 3);
  if (ec && n >= 8) putle32(pk + n - 4, BW_CHECKMAGIC);
  putle32(pk, refcrc(h.protocolid, pk + 4, n - 4));
  /* the reference parse */
  payload = (uint64_t)(n - (ec ? 4 : 0)) * 8;
  pos = 32;
  hdrbits = (h.flags & BW_FTAG ? 32 : 0) + (h.flags & BW_FVERSION
             ? h.versionbits : 0) + (h.flags & BW_FDELTAS ? 1 : 0);
  if (ec && n < 8) want = BW_ETRUNC;
  g = h;
  st = bw_framereadheader(&r, pk, n, &g);
  if (want == BW_OK) {
    int delta = 0;
    uint64_t need = 32 + hdrbits;
    if (need <= payload && (h.flags & BW_FDELTAS))
      delta = (int)refbits(pk, 32 + hdrbits - 1, 1);
    need += (delta ? 16 : 0) + (h.flags & BW_FMESSAGE ? h.typebits : 0);
    pos = 32 + (h.flags & BW_FTAG ? 32 : 0);  /* where the version is */
    if ((h.flags & BW_FVERSION) && h.versionbits == 32 && pos + 32 <= payload
        && refbits(pk, pos, 32) == UINT32_MAX)
      want = BW_ERANGE;
    else if (need > payload) want = BW_ETRUNC;
    pos = 32;
    FCHECK(st == want);
    if (st == BW_OK) {
      bw_Writer w;
      Heap heap;
      const uint8_t *out;
      size_t len;
      if (h.flags & BW_FTAG) {
        FCHECK(g.tag == refbits(pk, pos, 32));
        pos += 32;
      }
      if (h.flags & BW_FVERSION) {
        FCHECK(g.version == refbits(pk, pos, h.versionbits));
        pos += h.versionbits;
      }
      if (h.flags & BW_FDELTAS) {
        FCHECK(g.delta == delta);
        pos += 1;
        if (delta) {
          FCHECK(g.baseline == refbits(pk, pos, 16));
          pos += 16;
        }
      }
      FCHECK(g.typepos == pos && r.pos == pos + (h.flags & BW_FMESSAGE
                                                  ? h.typebits : 0));
      if (h.flags & BW_FMESSAGE) FCHECK(g.type == refbits(pk, pos, h.typebits));
      /* writing what was read gives the same header bits */
      heapinit(&heap, -1);
      bw_writerinitgrow(&w, heapalloc, &heap, SIZE_MAX);
      FCHECK(bw_framewriteheader(&w, &g) == BW_OK);
      FCHECK(bw_bitswritten(&w) == r.pos);
      out = bw_writerdata(&w, &len);
      FCHECK(samebits(out + 4, pk + 4, r.pos - 32));
      bw_writerfree(&w);
      FCHECK(heap.size == 0);
    }
  }
  else FCHECK(st == want);
  free(pk);
}

/* }========================================================== */


int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  static int once = 0;
  crcinit();
  if (!once) {
    misuse();
    once = 1;
  }
  hostile(data, size, size >= 9 ? getle32(data + 1)
                                  | (uint64_t)getle32(data + 5) << 32 : 7);
  frames(data, size);
  headers(data, size);
  return 0;
}


/* {===================== seeds ===================== */

#ifdef FUZZ_SEEDGEN

/* A valid packet for 'pid' around random payload bytes. */
static size_t makepacket (uint8_t *out, size_t cap, uint64_t pid, int ec) {
  bw_Writer w;
  const uint8_t *p;
  size_t n = rnd() % 64, i, len;
  bw_writerinitgrow(&w, seedalloc, NULL, SIZE_MAX);
  bw_framebegin(&w);
  for (i = 0; i < n; i++) bw_writebits(&w, rnd() & 0xFF, 1 + rnd() % 8);
  bw_frameend(&w, pid, ec);
  p = bw_writerdata(&w, &len);
  if (len > cap) len = cap;
  memcpy(out, p, len);
  bw_writerfree(&w);
  return len;
}

int main (int argc, char **argv) {
  static uint8_t buf[4096];
  const uint64_t pids[3] = {0, BW_CHECKMAGIC, UINT64_MAX};
  int k;
  size_t n, i;
  if (argc != 2) {
    fprintf(stderr, "usage: %s corpus-dir\n", argv[0]);
    return 2;
  }
  crcinit();
  for (k = 0; k < 48; k++) {
    if (k < 12) n = makepacket(buf, sizeof(buf), pids[k % 3], k % 2);
    else {  /* [flags][pid][flip][payload] */
      n = 13 + (k < 16 ? (size_t)k - 12 : rnd() % 300);
      for (i = 0; i < n; i++) buf[i] = (uint8_t)rnd();
      if (k % 4 == 0) memcpy(buf + n - 4, "\x78\x56\x34\x12", 4);
    }
    if (writeseed(argv[1], k, buf, n)) return 1;
  }
  printf("fuzz_frame: %d seeds\n", k);
  return 0;
}
#endif

/* }========================================================== */
