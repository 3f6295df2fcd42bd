/*
** bw_frame.c - packet framing: CRC32, the frame header, the end check
** See LICENSE for copyright and terms.
*/

/*
** Every framed path (bitwire.protocol over a schema or a registry, the
** stream API's frame_begin/frame_end, C peers) writes and reads its header
** here, so the header's layout lives in one place. WIRE.md, "Packet
** framing" and "Frame header", is the same layout in prose.
*/

#include <zlib.h>

#include "bw.h"


/* {===================== CRC and end check ===================== */

uint32_t bw_framecrc (uint64_t protocolid, const void *data, size_t n) {
  uint8_t prefix[8];
  uLong crc;
  const uint8_t *p = (const uint8_t *)data;
  bw_store64(prefix, protocolid);
  crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, prefix, 8);
  while (n > 0) {  /* zlib takes uInt lengths */
    uInt chunk = n > 0x40000000u ? 0x40000000u : (uInt)n;
    crc = crc32(crc, p, chunk);
    p += chunk;
    n -= chunk;
  }
  return (uint32_t)crc;
}

bw_Status bw_framebegin (bw_Writer *w) {
  if (bw_bitswritten(w) != 0) return bw_writerfail(w, BW_EARG);
  return bw_writebits(w, 0, 32);
}

bw_Status bw_frameend (bw_Writer *w, uint64_t protocolid, int endcheck) {
  const uint8_t *data;
  size_t len;
  uint32_t crc;
  /* no CRC field before the end check: the check must not be taken for it */
  if (bw_bitswritten(w) < 32) return bw_writerfail(w, BW_EARG);
  if (endcheck) bw_writecheck(w, BW_CHECKMAGIC);
  else bw_writealign(w);
  if (w->status != BW_OK) return w->status;
  data = bw_writerdata(w, &len);
  crc = bw_framecrc(protocolid, data + BW_FRAMEHEADER, len - BW_FRAMEHEADER);
  /* the CRC is the first 32 bits: patch the bytes already out, and the
  ** scratch word while it still holds them (the next flush rewrites them) */
  w->buf[0] = (uint8_t)crc;
  w->buf[1] = (uint8_t)(crc >> 8);
  w->buf[2] = (uint8_t)(crc >> 16);
  w->buf[3] = (uint8_t)(crc >> 24);
  if (w->wordpos == 0)
    w->scratch = (w->scratch & ~(uint64_t)UINT32_MAX) | crc;
  return BW_OK;
}

/* bw_frameopen, naming the part a failure is in '*part'. */
static bw_Status frameopen (bw_Reader *r, const void *data, size_t n,
                            uint64_t protocolid, int endcheck,
                            bw_FramePart *part) {
  const uint8_t *p = (const uint8_t *)data;
  uint32_t crc;
  *part = BW_PFRAME;
  bw_readerinit(r, data, n);
  if (r->status != BW_OK) return r->status;
  if (n < BW_FRAMEMIN(endcheck)) {
    r->pos = r->nbits;
    bw_readerfail(r, BW_ETRUNC);
    return r->status;
  }
  crc = (uint32_t)bw_readbits(r, 32);
  if (crc != bw_framecrc(protocolid, p + BW_FRAMEHEADER, n - BW_FRAMEHEADER)) {
    *part = BW_PCRC;
    r->pos = 0;
    bw_readerfail(r, BW_ECRC);
    return r->status;
  }
  if (endcheck) {
    uint32_t tail = (uint32_t)p[n - 4] | (uint32_t)p[n - 3] << 8
                  | (uint32_t)p[n - 2] << 16 | (uint32_t)p[n - 1] << 24;
    if (tail != BW_CHECKMAGIC) {
      *part = BW_PCHECK;
      r->pos = (uint64_t)(n - 4) * 8;
      bw_readerfail(r, BW_ECHECK);
      return r->status;
    }
    r->nbytes = n - 4;  /* the payload ends where the check starts */
    r->nbits = (uint64_t)r->nbytes * 8;
  }
  return BW_OK;
}

bw_Status bw_frameopen (bw_Reader *r, const void *data, size_t n,
                        uint64_t protocolid, int endcheck) {
  bw_FramePart part;
  return frameopen(r, data, n, protocolid, endcheck, &part);
}

/* }========================================================== */


/* {===================== frame header ===================== */

/* 1 if the flags and widths of 'h' are ones a header can have. */
static int headervalid (const bw_FrameHeader *h) {
  if ((h->flags & ~BW_FALL) != 0) return 0;
  if ((h->flags & BW_FVERSION)
      && (h->versionbits < 1 || h->versionbits > BW_MAXVERSIONBITS)) return 0;
  if ((h->flags & BW_FMESSAGE) && h->typebits > 32) return 0;
  return 1;
}

bw_Status bw_framewriteheader (bw_Writer *w, const bw_FrameHeader *h) {
  if (!headervalid(h)) return bw_writerfail(w, BW_EARG);
  if (bw_framebegin(w) != BW_OK) return w->status;
  if (h->flags & BW_FTAG) bw_writebits(w, h->tag, 32);
  if (h->flags & BW_FVERSION) {
    if (h->version > BW_MAXVERSION) return bw_writerfail(w, BW_ERANGE);
    bw_writebits(w, h->version, h->versionbits);
  }
  if (h->flags & BW_FDELTAS) {
    bw_writebits(w, h->delta != 0, 1);
    if (h->delta) bw_writebits(w, h->baseline, BW_BASELINEBITS);
  }
  if (h->flags & BW_FMESSAGE) bw_writebits(w, h->type, h->typebits);
  return w->status;
}

/* Read header field 'part' of 'nbits' bits: a failure is in it. Nothing
** after a failure. */
static uint32_t readfield (bw_Reader *r, bw_FrameHeader *h, bw_FramePart part,
                           unsigned nbits) {
  uint32_t v;
  if (r->status != BW_OK) return 0;
  v = (uint32_t)bw_readbits(r, nbits);
  if (r->status != BW_OK) h->part = part;
  return v;
}

bw_Status bw_framereadheader (bw_Reader *r, const void *data, size_t n,
                              bw_FrameHeader *h) {
  h->part = BW_PFRAME;
  if (!headervalid(h)) {
    bw_readerinit(r, data, n);
    bw_readerfail(r, BW_EARG);
    return r->status;
  }
  if (frameopen(r, data, n, h->protocolid, (h->flags & BW_FCHECK) != 0,
                &h->part) != BW_OK)
    return r->status;
  if (h->flags & BW_FTAG) {
    h->tag = readfield(r, h, BW_PTAG, 32);
    if (r->status == BW_OK && h->lookup != NULL
        && !h->lookup(h->ud, h->tag, &h->typebits)) {
      h->part = BW_PTAG;
      r->pos = 32;
      bw_readerfail(r, BW_ESCHEMA);
      return r->status;
    }
    if (!headervalid(h)) {  /* the width the lookup gave, as the writer's */
      h->part = BW_PTAG;
      bw_readerfail(r, BW_EARG);
      return r->status;
    }
  }
  if (h->flags & BW_FVERSION) {
    h->version = readfield(r, h, BW_PVERSION, h->versionbits);
    if (r->status == BW_OK && h->version > BW_MAXVERSION) {
      h->part = BW_PVERSION;
      r->pos -= 32;  /* no writer sends it: report it where it starts */
      bw_readerfail(r, BW_ERANGE);
    }
  }
  h->delta = 0;
  if (h->flags & BW_FDELTAS) {
    h->delta = (int)readfield(r, h, BW_PDELTA, 1);
    if (h->delta)
      h->baseline = readfield(r, h, BW_PBASELINE, BW_BASELINEBITS);
  }
  h->typepos = r->pos;
  if (h->flags & BW_FMESSAGE) h->type = readfield(r, h, BW_PTYPE, h->typebits);
  return r->status;
}

#define BW_FRAMEPARTPATH(e, key, path)  path,
static const char *const partpath[] = { BW_FRAMEPARTS(BW_FRAMEPARTPATH) };
#undef BW_FRAMEPARTPATH

const char *bw_framepath (bw_FramePart p) {
  return (unsigned)p < BW_NFRAMEPARTS ? partpath[p] : partpath[BW_PFRAME];
}

uint64_t bw_frameprotocolid (uint64_t id, uint64_t fingerprint) {
  static const char hex[] = "0123456789abcdef";
  uint64_t h = id ^ UINT64_C(0xcbf29ce484222325);  /* FNV-1a 64 basis */
  int i;
  for (i = 60; i >= 0; i -= 4) {
    h ^= (uint64_t)(unsigned char)hex[(fingerprint >> i) & 15];
    h *= UINT64_C(0x100000001b3);
  }
  return h;
}

/* }========================================================== */
