/*
** fpcheck.c - the float results of quantized floats, quaternions and angles
** See LICENSE for copyright and terms.
*/

/*
** Prints, one per line, what the core makes of many inputs: quantized float
** codes and decoded values, quaternion codes, canonical checks and decoded
** components, angle codes. tools/test_fpcontract.sh builds it twice, with
** -ffp-contract=off and with -ffp-contract=fast on an FMA target, and the
** two outputs must be the same: the core's float steps may not depend on
** whether the compiler fuses multiply-adds (WIRE.md, compressed_float).
*/

#include <math.h>
#include <stdio.h>

#include "bw_schema.h"

#define PI2 6.283185307179586
#define NRANGES 48
#define NVALUES 400
#define NQUATS  6000
#define NANGLES 6000

static uint64_t seed = 20261123;
static double rnd (void) {  /* [0, 1), own LCG: the same on every libc */
  seed = seed * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
  return bw_nofuse((double)(seed >> 11) / 9007199254740992.0);
}

static void qfloats (void) {
  static const double fixed[][3] = {  /* serialize.h's usual ones */
    { -512, 512, 0.01 }, { 0, PI2, 0.35 * PI2 / 360 }, { -1, 1, 1 / 65535.0 },
    { -1000, 1000, 0.001 }, { 0, 1, 1 / 255.0 }, { -3e5, 3e5, 0.07 }
  };
  int r, k;
  for (r = 0; r < NRANGES; r++) {
    bw_QFloat q;
    double mn, mx, res;
    if (r < (int)(sizeof(fixed) / sizeof(fixed[0]))) {
      mn = fixed[r][0]; mx = fixed[r][1]; res = fixed[r][2];
    } else {
      /* the inputs' own products go through bw_nofuse too, so that both
      ** builds test the same inputs */
      double span = pow(10, bw_nofuse(rnd() * 7) - 2);
      mn = bw_nofuse((rnd() - 0.5) * 2000);
      mx = mn + span;
      res = span / pow(2, 4 + bw_nofuse(rnd() * 28));  /* 4 to 32 bits */
    }
    if (bw_qfloatinit(&q, mn, mx, res) != BW_OK) continue;
    printf("range %a %a %a: %u %u\n", mn, mx, res, (unsigned)q.miv, q.nbits);
    for (k = 0; k < NVALUES; k++) {
      /* a code, its value, the midpoint to the next (where rounding
      ** decides) and a random point around the range */
      uint32_t i = (uint32_t)(rnd() * q.miv);
      float a = bw_qfloatdecode(&q, i), b = bw_qfloatdecode(&q, i + 1);
      double mid = ((double)a + (double)b) / 2;
      double t = bw_nofuse(rnd() * 1.1) - 0.05;
      double x = mn + bw_nofuse(t * (mx - mn));
      printf("%u %a %u %u %u\n", (unsigned)i, (double)a,
             (unsigned)bw_qfloatencode(&q, (double)a),
             (unsigned)bw_qfloatencode(&q, mid),
             (unsigned)bw_qfloatencode(&q, x));
    }
  }
}

static void quats (void) {
  int k;
  for (k = 0; k < NQUATS; k++) {
    bw_QFloat q;
    double in[4], out[4];
    uint32_t code[4];
    int i;
    bw_quatinit(&q, 9 + (unsigned)(k % 23));  /* 9 to 31 bits */
    for (i = 0; i < 4; i++) in[i] = bw_nofuse(rnd() * 2) - 1;
    if (!bw_quatencode(&q, in, code)) continue;
    bw_quatdecode(&q, code, out);
    printf("quat %u %u %u %u %d %a %a %a %a\n", (unsigned)code[0],
           (unsigned)code[1], (unsigned)code[2], (unsigned)code[3],
           bw_quatcanonical(&q, code), out[0], out[1], out[2], out[3]);
  }
}

static void angles (void) {
  int k;
  for (k = 0; k < NANGLES; k++) {
    unsigned bits = 4 + (unsigned)(k % 29);
    double period = k % 2 ? PI2 : 360, x = (rnd() - 0.5) * 8 * period;
    uint32_t u = bw_angleencode(x, period, bits);
    printf("angle %u %a\n", (unsigned)u, bw_angledecode(u, period, bits));
  }
}

int main (void) {
  qfloats();
  quats();
  angles();
  return 0;
}
