/* pushpop: the cost of one NVTX push/pop pair as instrumented code makes
 * it (NCRT_RANGE: domain "ncrt", registered string), N pairs (argv[1]).
 * Prints "ns_per_pair <x>". Run with and without NVTX_INJECTION64_PATH.
 * Time is the thread's CPU time (user + kernel, page faults included), not
 * wall time: on a shared 2-core machine wall time mostly measures the
 * neighbours. */
#include <ncrt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

__attribute__((noinline)) static void body(volatile long *x) { *x += 1; }

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  volatile long x = 0;
  { NCRT_RANGE("warm"); }
  double t0 = now();
  for (long i = 0; i < n; i++) {
    NCRT_RANGE("pair");
    body(&x);
  }
  double t1 = now();
  for (long i = 0; i < n; i++) body(&x);
  double t2 = now();
  printf("ns_per_pair %.2f\n", ((t1 - t0) - (t2 - t1)) / (double)n);
  fflush(stdout);
  return 0;
}
