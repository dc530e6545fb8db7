/* clock.c: the process's one clock. Ranges are stamped in raw ticks on
 * the hot path (the TSC where it is invariant, else CLOCK_MONOTONIC ns,
 * rt_opt.use_tsc); this file maps ticks to CLOCK_MONOTONIC nanoseconds,
 * the clock CUPTI is given too, so GPU records and ranges share a time line.
 *
 * Contract: rt_clock_init once per process (collector.c, a forked child
 * again); rt_clock_calibrate from the writer before it converts (it may
 * sleep up to 20 ms once, in a short run); rt_ticks_to_ns anywhere, lock
 * free. A finalizer maps a dead process's ticks with rt_clock_pair_ns on
 * the pair that process saved (.info), never through this file's state. */
#define _GNU_SOURCE
#include "rt.h"

#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

static uint64_t tsc0, ns0, tsc1, ns1;
static int npiece; /* pieces of the TSC mapping (rt_clock_calibrate), published with release */

void rt_clock_init(void) {
  npiece = 0; /* (a forked child starts its own clock) */
  ns0 = rt_mono_ns();
#if defined(__x86_64__)
  if (rt_opt.use_tsc) tsc0 = __rdtsc();
#endif
}

uint64_t rt_clock_origin_ns(void) { return ns0; }
uint64_t rt_clock_origin_tsc(void) { return tsc0; }

/* The TSC→ns mapping is piecewise linear and continuous. Records are
 * converted at different times (the flusher converts while the program
 * runs, the exit converts the rest), and one tick must give the same ns
 * whenever it is converted: with a single ratio re-measured at each
 * conversion, two neighbouring records converted a flush apart could be
 * ~100 ns out of order, an inner range starting before its outer one. So a
 * new ratio (measured over the whole run so far: the longer, the better)
 * applies only to ticks after the moment it is measured, from where the
 * previous piece ends. Pieces start at doubling run times (20 ms, 40 ms,
 * 80 ms, ...): at most RT_CLOCK_PIECES over any run; the last one stays.
 * The snapshot (.info) carries them, and a finalizer maps the ticks the
 * process left with the same pieces (rt_clock_pair_ns). */
static RtClockPiece piece[RT_CLOCK_PIECES];
static double piece_r[RT_CLOCK_PIECES]; /* each piece's ratio, from its measurement */
static uint64_t piece_at[RT_CLOCK_PIECES]; /* CLOCK_MONOTONIC ns when it was measured */
static int piece_busy;     /* one calibration at a time (the flusher, the exit) */

/* A piece's ratio from its measurement: the process and a finalizer, given
 * the same integers, compute the same double */
static double ratio(uint64_t tsc0_, uint64_t ns0_, const RtClockPiece *p) {
  return (double)(p->mn - ns0_) / (double)(p->mt - tsc0_);
}

/* A double of ns as int64, saturated: a finalizer's pieces come from a
 * file (a piece measured at its own start gives an infinite ratio), and a
 * cast of inf or NaN is undefined (issue 42) */
static int64_t ns_of(double x) {
  if (x != x) return 0;
  if (x >= 9.2e18) return INT64_MAX;
  if (x <= -9.2e18) return INT64_MIN;
  return (int64_t)x;
}

static uint64_t map_piece(const RtClockPiece *p, double r, uint64_t t) {
  int64_t d = (int64_t)(t - p->tsc);
  return p->ns + (uint64_t)ns_of((double)d * r);
}

/* The line through (tsc0_, ns0_) and (tsc1_, ns1_), at t */
static uint64_t pair_map(uint64_t tsc0_, uint64_t ns0_, uint64_t tsc1_, uint64_t ns1_, uint64_t t) {
  if (tsc1_ == tsc0_) return ns0_;
  double r = (double)(ns1_ - ns0_) / (double)(tsc1_ - tsc0_);
  return ns0_ + (uint64_t)ns_of((double)(int64_t)(t - tsc0_) * r);
}

/* Pin the TSC→ns ratio on two (tsc, ns) pairs at least 20 ms apart: the
 * run start and now. Short runs wait the difference once, at write time. */
void rt_clock_calibrate(void) {
#if defined(__x86_64__)
  if (!rt_opt.use_tsc) return;
  uint64_t n = rt_mono_ns();
  while (n - ns0 < 20000000u) {
    struct timespec d = {0, (long)(20000000u - (n - ns0))};
    nanosleep(&d, NULL);
    n = rt_mono_ns();
  }
  /* one (tsc, ns) pair: the TSC read on both sides of the clock, the
   * tightest of a few tries (a preemption between the two reads would
   * skew the ratio by its length over the run time) */
  uint64_t t = 0, best = UINT64_MAX;
  for (int i = 0; i < 8 && best > 2000; i++) {
    uint64_t a = __rdtsc(), m = rt_mono_ns(), b = __rdtsc();
    if (b - a < best) best = b - a, t = a + (b - a) / 2, n = m;
  }
  tsc1 = t;
  ns1 = n;
  if (__atomic_exchange_n(&piece_busy, 1, __ATOMIC_ACQUIRE)) return;
  int k = __atomic_load_n(&npiece, __ATOMIC_ACQUIRE);
  if (k < RT_CLOCK_PIECES && t > tsc0 && (k == 0 || n - ns0 >= 2 * (piece_at[k - 1] - ns0))) {
    piece[k].mt = t;
    piece[k].mn = n;
    piece_r[k] = ratio(tsc0, ns0, &piece[k]);
    piece[k].tsc = k ? t : tsc0;
    piece[k].ns = k ? map_piece(&piece[k - 1], piece_r[k - 1], t) : ns0;
    piece_at[k] = n;
    __atomic_store_n(&npiece, k + 1, __ATOMIC_RELEASE);
  }
  __atomic_store_n(&piece_busy, 0, __ATOMIC_RELEASE);
#endif
}

uint64_t rt_ticks_to_ns(uint64_t t) {
  if (!rt_opt.use_tsc) return t;
  int k = __atomic_load_n(&npiece, __ATOMIC_ACQUIRE);
  if (k) {
    while (k > 1 && t < piece[k - 1].tsc) k--;
    return map_piece(&piece[k - 1], piece_r[k - 1], t);
  }
  /* not calibrated yet: the one (tsc, ns) pair */
  return pair_map(tsc0, ns0, tsc1, ns1, t);
}

int rt_clock_pieces(RtClockPiece *out) {
  int k = __atomic_load_n(&npiece, __ATOMIC_ACQUIRE);
  for (int i = 0; i < k; i++) out[i] = piece[i];
  return k;
}

uint64_t rt_clock_pair_ns(const RtClock *c, uint64_t t) {
  if (!c->use_tsc) return t;
  if (c->npiece > 0) { /* the process's own pieces: the same ns as it gave */
    int k = c->npiece;
    while (k > 1 && t < c->piece[k - 1].tsc) k--;
    return map_piece(&c->piece[k - 1], ratio(c->tsc0, c->ns0, &c->piece[k - 1]), t);
  }
  return pair_map(c->tsc0, c->ns0, c->tsc1, c->ns1, t);
}

