/*
** bw_game.c - game-state encodings: tiered integers and smallest-three quats
** See LICENSE for copyright and terms.
*/

/*
** Tiered integers spend a few prefix bits to pick a range, then just enough
** bits for that range: cheap when small values are likely (the gaps between
** sorted object indices). A quaternion of unit length is sent as the index
** of its largest component and the other three, each quantized in
** [-1/sqrt(2), 1/sqrt(2)]: the largest is implied by the unit length.
*/

#include <math.h>

#include "bw_schema.h"

/* Upper end of tier 'i' starting at 'lo'; the last tier runs to 'max'. */
static uint64_t tierhi (uint64_t lo, uint64_t max, const uint8_t *bits,
                        unsigned i, unsigned n) {
  uint64_t span;
  if (i + 1 == n || bits[i] >= 63) return max;
  span = (UINT64_C(1) << bits[i]) - 1;
  return span > max - lo ? max : lo + span;
}

uint64_t bw_tierhi (uint64_t lo, uint64_t max, const uint8_t *bits,
                    unsigned i, unsigned n) {
  return tierhi(lo, max, bits, i, n);
}

bw_Status bw_writetiered (bw_Writer *w, uint64_t v, uint64_t min, uint64_t max,
                          const uint8_t *bits, unsigned n) {
  uint64_t lo = min;
  unsigned i;
  if (v < min || v > max || n == 0) return bw_writerfail(w, BW_ERANGE);
  for (i = 0; i < n; i++) {
    uint64_t hi = tierhi(lo, max, bits, i, n);
    if (v <= hi) {
      if (i + 1 < n) bw_writebits(w, 1, 1);
      return bw_writebits(w, v - lo, bw_bitsrequired(0, (int64_t)(hi - lo)));
    }
    bw_writebits(w, 0, 1);
    lo = hi + 1;
  }
  return bw_writerfail(w, BW_ERANGE);  /* unreachable: the last runs to max */
}

unsigned bw_tieredbits (uint64_t v, uint64_t min, uint64_t max,
                        const uint8_t *bits, unsigned n) {
  uint64_t lo = min;
  unsigned i;
  for (i = 0; i < n; i++) {
    uint64_t hi = tierhi(lo, max, bits, i, n);
    if (v <= hi)
      return i + (i + 1 < n) + bw_bitsrequired(0, (int64_t)(hi - lo));
    lo = hi + 1;
  }
  return 0;
}

uint64_t bw_readtiered (bw_Reader *r, uint64_t min, uint64_t max,
                        const uint8_t *bits, unsigned n) {
  uint64_t lo = min, start = r->pos;
  unsigned i;
  for (i = 0; i < n; i++) {
    uint64_t hi;
    if (lo > max) {  /* a tier past 'max': no writer sends its flags */
      r->pos = start;
      return (uint64_t)bw_readerfail(r, BW_ERANGE);
    }
    hi = tierhi(lo, max, bits, i, n);
    if (i + 1 == n || bw_readbits(r, 1)) {
      unsigned nb = bw_bitsrequired(0, (int64_t)(hi - lo));
      uint64_t u = bw_readbits(r, nb);
      if (r->status != BW_OK) return 0;
      if (u > hi - lo) {
        r->pos = start;
        return (uint64_t)bw_readerfail(r, BW_ERANGE);
      }
      return lo + u;
    }
    if (r->status != BW_OK) return 0;
    lo = hi + 1;
  }
  return 0;
}

/* {===================== quaternions ===================== */

void bw_quatinit (bw_QFloat *q, unsigned bits) {
  q->min = -0.707106781f;
  q->delta = 1.414213562f;
  q->miv = (uint32_t)((UINT64_C(1) << bits) - 1);
  q->nbits = bits;
}

int bw_quatencode (const bw_QFloat *q, const double in[4], uint32_t out[4]) {
  double len = 0, v[4];
  unsigned i, k = 0, largest = 0;
  for (i = 0; i < 4; i++) len += in[i] * in[i];
  len = sqrt(len);
  if (!(len > 0) || !isfinite(len)) return 0;
  for (i = 0; i < 4; i++) {
    v[i] = in[i] / len;
    if (fabs(v[i]) > fabs(v[largest])) largest = i;
  }
  if (v[largest] < 0)  /* q and -q are the same rotation */
    for (i = 0; i < 4; i++) v[i] = -v[i];
  out[0] = largest;
  for (i = 0; i < 4; i++)
    if (i != largest) out[++k] = bw_qfloatencode(q, v[i]);
  return 1;
}

void bw_quatdecode (const bw_QFloat *q, const uint32_t in[4], double out[4]) {
  double sum = 0, len = 0;
  unsigned i, k = 0, largest = in[0] & 3;
  for (i = 0; i < 4; i++) {
    if (i == largest) continue;
    out[i] = (double)bw_qfloatdecode(q, in[++k]);
    sum += out[i] * out[i];
  }
  out[largest] = sum < 1 ? sqrt(1 - sum) : 0;
  for (i = 0; i < 4; i++) len += out[i] * out[i];
  len = sqrt(len);
  for (i = 0; i < 4; i++) out[i] /= len;  /* len >= 1: never zero */
}

/* }========================================================== */
