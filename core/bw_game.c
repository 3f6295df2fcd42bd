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
#include <string.h>

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
  if (n == 0) return (uint64_t)bw_readerfail(r, BW_ERANGE);  /* as the write */
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

bw_Status bw_quatinit (bw_QFloat *q, unsigned bits) {
  int ok = bits >= 2 && bits <= 31;
  q->min = -0.707106781f;
  q->delta = 1.414213562f;
  q->nbits = ok ? bits : 0;  /* else: components of no bits, all 0 */
  q->miv = ok ? (uint32_t)((UINT64_C(1) << bits) - 1) : 0;
  return ok ? BW_OK : BW_EARG;
}

/* The length of 'in', or 0 when it has none to normalize by. */
static double quatlen (const double in[4]) {
  double len = 0;
  unsigned i;
  for (i = 0; i < 4; i++) len += bw_nofuse(in[i] * in[i]);  /* no FMA */
  len = sqrt(len);
  return len > 0 && isfinite(len) ? len : 0;
}

int bw_quatvalid (const double in[4]) {
  return quatlen(in) > 0;
}

/* The smallest-three code of 'in', before bw_quatencode makes it canonical. */
static int quatraw (const bw_QFloat *q, const double in[4], uint32_t out[4]) {
  double len = quatlen(in), v[4];
  unsigned i, k = 0, largest = 0;
  if (len == 0) return 0;
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

/* The common case of a canonical code, cheaply: the rebuilt largest
** component clearly wins (renormalising keeps that order), and on an exact
** grid the others decode to float32 values that renormalising moves by far
** less than a float32 ulp, so they encode back to their codes. */
static int clearlycanonical (const bw_QFloat *q, double sum, double big) {
  return q->nbits <= BW_QUATEXACT && sum < 1
         && sqrt(1 - sum) > big * (1 + 1e-9);
}

int bw_quatcanonical (const bw_QFloat *q, const uint32_t code[4]) {
  double v[4], sum = 0, big = 0;
  uint32_t again[4];
  int i;
  if (code[0] > 3 || code[1] > q->miv || code[2] > q->miv || code[3] > q->miv)
    return 0;
  for (i = 1; i < 4; i++) {
    double g = (double)bw_qfloatdecode(q, code[i]);
    sum += bw_nofuse(g * g);
    if (fabs(g) > big) big = fabs(g);
  }
  if (clearlycanonical(q, sum, big)) return 1;
  bw_quatdecode(q, code, v);
  return quatraw(q, v, again) && memcmp(code, again, sizeof(again)) == 0;
}

/* Rounding can lift a small component to the rebuilt largest one, and then
** the decoded value would encode with another index: move such components
** a step towards zero until the code comes back from its own decode. */
int bw_quatencode (const bw_QFloat *q, const double in[4], uint32_t out[4]) {
  int round;
  if (!quatraw(q, in, out)) return 0;
  if (q->nbits > BW_QUATEXACT) return 1;
  for (round = 0; round < 16 && !bw_quatcanonical(q, out); round++) {
    double v[4];
    uint32_t again[4];
    unsigned i, k = 0, largest = out[0];
    bw_quatdecode(q, out, v);
    quatraw(q, v, again);  /* v has length 1 */
    if (again[0] == largest) {  /* not for exact grids: keep its own code */
      memcpy(out, again, sizeof(again));
      continue;
    }
    for (i = 0; i < 4; i++) {
      if (i == largest) continue;
      k++;
      if (fabs(v[i]) >= v[largest]) {  /* codes above the middle are > 0 */
        if (v[i] > 0) out[k]--;
        else out[k]++;
      }
    }
  }
  return 1;
}

/* bw_quatdecode in two steps: the three small components of 'in' into
** 'out' (returns the sum of their squares), then the largest from them and
** the whole normalised. */
static inline double decodesmall (const bw_QFloat *q, const uint32_t in[4],
                                  double out[4]) {
  double sum = 0;
  unsigned i, k = 0, largest = in[0] & 3;
  for (i = 0; i < 4; i++) {
    if (i == largest) continue;
    out[i] = (double)bw_qfloatdecode(q, in[++k]);
    sum += bw_nofuse(out[i] * out[i]);
  }
  return sum;
}

static inline void decodelargest (double sum, unsigned largest,
                                  double out[4]) {
  double len = 0;
  unsigned i;
  out[largest] = sum < 1 ? sqrt(1 - sum) : 0;
  for (i = 0; i < 4; i++) len += bw_nofuse(out[i] * out[i]);
  len = sqrt(len);
  for (i = 0; i < 4; i++) out[i] /= len;  /* len >= 1: never zero */
}

void bw_quatdecode (const bw_QFloat *q, const uint32_t in[4], double out[4]) {
  decodelargest(decodesmall(q, in, out), in[0] & 3, out);
}

/* }========================================================== */

bw_Status bw_writequat (bw_Writer *w, const bw_QFloat *q,
                        const uint32_t code[4]) {
  int i;
  /* one write where it writes and fails as the four would */
  if (q->nbits <= 20 && bw_writerhasroom(w) && code[0] <= 3
      && code[1] <= q->miv && code[2] <= q->miv && code[3] <= q->miv)
    return bw_writebits(w, code[0] | (uint64_t)code[1] << 2
                           | (uint64_t)code[2] << (2 + q->nbits)
                           | (uint64_t)code[3] << (2 + 2 * q->nbits),
                        2 + 3 * q->nbits);
  bw_writebits(w, code[0], 2);
  for (i = 1; i < 4; i++) bw_writebits(w, code[i], q->nbits);
  return w->status;
}

/* The code at 'r' (the check is the caller's); 0 when truncated. */
static inline int readcode (bw_Reader *r, const bw_QFloat *q,
                            uint32_t code[4]) {
  unsigned n = q->nbits;
  int i;
  if (n <= 20 && r->status == BW_OK
      && bw_bitsremaining(r) >= 2 + 3 * n) {  /* all there: one read */
    uint64_t u = bw_readbits(r, 2 + 3 * n);
    code[0] = (uint32_t)(u & 3);
    code[1] = (uint32_t)(u >> 2 & q->miv);
    code[2] = (uint32_t)(u >> (2 + n) & q->miv);
    code[3] = (uint32_t)(u >> (2 + 2 * n) & q->miv);
  }
  else {
    code[0] = (uint32_t)bw_readbits(r, 2);
    for (i = 1; i < 4; i++) code[i] = (uint32_t)bw_readbits(r, q->nbits);
  }
  return r->status == BW_OK;
}

int bw_readquat (bw_Reader *r, const bw_QFloat *q, uint32_t code[4]) {
  uint64_t start = r->pos;
  if (!readcode(r, q, code)) return 0;
  if (q->nbits <= BW_QUATEXACT && !bw_quatcanonical(q, code)) {
    r->pos = start;
    return bw_readerfail(r, BW_ERANGE);
  }
  return 1;
}

int bw_readquatdecode (bw_Reader *r, const bw_QFloat *q, uint32_t code[4],
                       double out[4]) {
  uint64_t start = r->pos;
  double sum, big = 0;
  unsigned i;
  if (!readcode(r, q, code)) return 0;
  sum = decodesmall(q, code, out);  /* for the check and the decode */
  for (i = 0; i < 4; i++)
    if (i != code[0] && fabs(out[i]) > big) big = fabs(out[i]);
  if (q->nbits <= BW_QUATEXACT && !clearlycanonical(q, sum, big)
      && !bw_quatcanonical(q, code)) {
    r->pos = start;
    return bw_readerfail(r, BW_ERANGE);
  }
  decodelargest(sum, code[0], out);
  return 1;
}


/* {===================== angles ===================== */

uint32_t bw_angleencode (double x, double period, unsigned bits) {
  double steps, t, u;
  if (bits < 1 || bits > 32) return 0;  /* no code past 32 bits */
  steps = ldexp(1.0, (int)bits);
  t = fmod(x, period);
  if (t < 0) t += period;  /* may round up to the period: step 2^bits */
  u = floor(bw_nofuse(t / period * steps) + 0.5);  /* never an FMA */
  if (!(u < steps)) u = 0;  /* also NaN, for an infinite x */
  return (uint32_t)u;
}

double bw_angledecode (uint32_t q, double period, unsigned bits) {
  if (bits < 1 || bits > 32) return 0;
  return (double)q * period / ldexp(1.0, (int)bits);
}

/* }========================================================== */


/* {===================== relative differences ===================== */

void bw_fielddiff (const bw_Field *f, bw_Diff *d) {
  static const uint8_t deftiers[BW_NRELTIERS] = BW_RELTIERS;
  if (f->kind == BW_KANGLE) {
    d->nbits = f->nbits;
    d->top = (UINT64_C(1) << f->nbits) - 1;
  }
  else {
    d->nbits = f->q.nbits;
    d->top = f->q.miv;
  }
  d->wrap = f->kind == BW_KANGLE;
  d->tiers = f->ntiers > 0 ? f->tierbits : deftiers;
  d->ntiers = f->ntiers > 0 ? f->ntiers : BW_NRELTIERS;
}

int bw_diffbase (const bw_Field *f, double x, uint64_t *code) {
  if (f->kind == BW_KANGLE) {
    if (!isfinite(x)) return 0;
    *code = bw_angleencode(x, f->dmax, f->nbits);
  }
  else *code = bw_qfloatencode(&f->q, x);
  return 1;
}

/* z of 'v' from 'base'. */
static uint64_t zigzag (const bw_Diff *d, uint64_t base, uint64_t v) {
  uint64_t u = v - base;  /* modulo 2^64 */
  int neg;
  if (d->wrap) {
    u &= d->top;  /* the period is top + 1, a power of two */
    neg = u > d->top / 2;
    if (neg) u = d->top - u;  /* |d| - 1 */
    return neg ? 2 * u + 1 : 2 * u;
  }
  neg = v < base;
  return neg ? 2 * (base - v) - 1 : 2 * u;
}

/* The tier holding z (d->ntiers: none shorter than the escape), and the
** first z of that tier in '*lo'. */
static unsigned pick (const bw_Diff *d, uint64_t z, uint64_t *lo) {
  uint64_t first = 0;
  unsigned i;
  for (i = 0; i < d->ntiers; i++) {
    uint64_t size = UINT64_C(1) << d->tiers[i];
    if (z - first < size) {
      *lo = first;
      return i + 1 + d->tiers[i] < d->ntiers + d->nbits ? i : d->ntiers;
    }
    first += size;
  }
  return d->ntiers;
}

unsigned bw_diffbits (const bw_Diff *d, uint64_t base, uint64_t v) {
  uint64_t lo;
  unsigned i = pick(d, zigzag(d, base, v), &lo);
  return i < d->ntiers ? i + 1 + d->tiers[i] : d->ntiers + d->nbits;
}

bw_Status bw_writediff (bw_Writer *w, const bw_Diff *d, uint64_t base,
                        uint64_t v) {
  uint64_t lo = 0, z;
  unsigned i;
  if (v > d->top || base > d->top) return bw_writerfail(w, BW_ERANGE);
  z = zigzag(d, base, v);
  i = pick(d, z, &lo);
  bw_writebits(w, 0, i);  /* i <= BW_MAXTIERS zero bits */
  if (i == d->ntiers) return bw_writebits(w, v, d->nbits);
  bw_writebits(w, 1, 1);
  return bw_writebits(w, z - lo, d->tiers[i]);
}

uint64_t bw_readdiff (bw_Reader *r, const bw_Diff *d, uint64_t base) {
  uint64_t start = r->pos, first = 0, z, v;
  unsigned i;
  for (i = 0; i < d->ntiers; i++) {
    if (bw_readbits(r, 1)) break;
    first += UINT64_C(1) << d->tiers[i];
  }
  if (i == d->ntiers) v = bw_readbits(r, d->nbits);
  else {
    uint64_t mag;
    z = first + bw_readbits(r, d->tiers[i]);
    mag = z >> 1;  /* |difference|, or |difference| - 1 when negative */
    if (d->wrap)
      v = (z & 1 ? base - mag - 1 : base + mag) & d->top;
    else if (z & 1)
      v = mag < base ? base - mag - 1 : UINT64_MAX;  /* below 0: refused */
    else
      v = mag <= d->top - base ? base + mag : UINT64_MAX;
  }
  if (r->status != BW_OK) return 0;
  if (v > d->top || base > d->top) {
    r->pos = start;
    return (uint64_t)bw_readerfail(r, BW_ERANGE);
  }
  return v;
}

bw_Status bw_writequatdiff (bw_Writer *w, const bw_Field *f,
                            const uint32_t base[4], const uint32_t code[4]) {
  bw_Diff d;
  int i;
  if (base[0] != code[0]) {
    bw_writebits(w, 0, 1);
    return bw_writequat(w, &f->q, code);
  }
  bw_fielddiff(f, &d);
  bw_writebits(w, 1, 1);
  for (i = 1; i < 4; i++) bw_writediff(w, &d, base[i], code[i]);
  return w->status;
}

int bw_readquatdiff (bw_Reader *r, const bw_Field *f,
                     const uint32_t base[4], uint32_t code[4]) {
  uint64_t start = r->pos;
  bw_Diff d;
  int i;
  if (!bw_readbits(r, 1)) return r->status == BW_OK && bw_readquat(r, &f->q,
                                                                   code);
  bw_fielddiff(f, &d);
  code[0] = base[0];
  for (i = 1; i < 4; i++) code[i] = (uint32_t)bw_readdiff(r, &d, base[i]);
  if (r->status != BW_OK) return 0;
  if (f->q.nbits <= BW_QUATEXACT && !bw_quatcanonical(&f->q, code)) {
    r->pos = start;
    return bw_readerfail(r, BW_ERANGE);
  }
  return 1;
}

/* The float32 operations of a decode then an encode err by at most
** miv * (6 + M / delta) * 2^-24 steps (M the larger end's magnitude): under
** half a step, no code can move. Other quantizers are scanned when they
** have few codes, so a description cannot make compiling expensive. */
static int withinbound (const bw_QFloat *q) {
  double m = fabs((double)q->min) > fabs((double)q->min + (double)q->delta)
             ? fabs((double)q->min) : fabs((double)q->min + (double)q->delta);
  return (double)q->miv * (8 + m / (double)q->delta) <= 4194304.0;
}

uint32_t bw_qfloattries (const bw_QFloat *q) {
  return withinbound(q) || q->miv > (UINT32_C(1) << 16) ? 0 : q->miv + 1;
}

int bw_qfloatexact (const bw_QFloat *q) {
  uint32_t i, n;
  if (withinbound(q)) return 1;
  if ((n = bw_qfloattries(q)) == 0) return 0;  /* too many codes to try */
  for (i = 0; i < n; i++)
    if (bw_qfloatencode(q, (double)bw_qfloatdecode(q, i)) != i) return 0;
  return 1;
}

/* }========================================================== */
