/* clock_test: a finalizer maps a process's ticks to the same nanoseconds
 * as the process did (clock.c). The process maps the TSC piecewise, a new
 * ratio at doubling run times; a trace whose exit is handed over is
 * converted partly by the process, partly by ncrun's finalizer from the
 * snapshot (.info). With the snapshot's one (tsc, ns) pair the finalizer's
 * part was shifted against the process's (by the pieces' drift: tens of
 * µs after ten seconds), so a 10^8-range run's ranges came out of their
 * end order at the hand-over and nesting could break there. Now the
 * snapshot carries the pieces: every tick, before, inside and after each
 * piece, must map to the same ns both ways. Runs where the TSC is used
 * (x86-64); elsewhere ticks are ns already and it says so. */
#include "rt.h"

#include <stdio.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

RtOptions rt_opt;

int main(void) {
#if !defined(__x86_64__)
  puts("skipped: no TSC here (ticks are CLOCK_MONOTONIC ns)");
  return 77;
#else
  rt_opt.use_tsc = 1;
  rt_clock_init();
  uint64_t ticks[64];
  int nt = 0;
  /* five pieces: calibrations at about 20, 40, 80, 160 and 320 ms */
  for (int i = 0; i < 5; i++) {
    ticks[nt++] = __rdtsc();
    rt_clock_calibrate();
    ticks[nt++] = __rdtsc();
    struct timespec d = {0, (long)(20000000L << i)};
    nanosleep(&d, NULL);
  }
  RtClock c = {1, rt_clock_origin_tsc(), rt_clock_origin_ns(), 0, 0, 0, {{0}}};
  c.npiece = rt_clock_pieces(c.piece);
  c.tsc1 = ticks[nt - 1], c.ns1 = rt_ticks_to_ns(ticks[nt - 1]);
  int fails = 0;
  if (c.npiece < 3) {
    printf("FAILED: %d pieces after five calibrations\n", c.npiece);
    fails++;
  }
  /* the ticks read around each calibration, each piece's start and its
   * neighbours, and a tick far past the last one */
  for (int i = 0; i < c.npiece && nt < 60; i++)
    for (int k = -1; k <= 1 && nt < 64; k++) ticks[nt++] = c.piece[i].tsc + (uint64_t)(int64_t)k;
  ticks[nt++] = ticks[0] + 40ull * 1000 * 1000 * 1000;
  uint64_t prev = 0;
  for (int i = 0; i < nt; i++) {
    uint64_t a = rt_ticks_to_ns(ticks[i]), b = rt_clock_pair_ns(&c, ticks[i]);
    if (a != b) {
      printf("FAILED: tick %llu: the process maps it to %llu ns, the finalizer to %llu\n",
             (unsigned long long)ticks[i], (unsigned long long)a, (unsigned long long)b);
      fails++;
    }
    (void)prev;
  }
  /* and the mapping is monotonic across the pieces' joins */
  for (int i = 0; i < c.npiece; i++) {
    uint64_t t = c.piece[i].tsc;
    if (rt_ticks_to_ns(t - 1) > rt_ticks_to_ns(t) || rt_ticks_to_ns(t) > rt_ticks_to_ns(t + 1)) {
      printf("FAILED: the mapping goes back at piece %d\n", i);
      fails++;
    }
  }
  printf("%d pieces, %d ticks: %s\n", c.npiece, nt, fails ? "FAILED" : "ok");
  return fails ? 1 : 0;
#endif
}
