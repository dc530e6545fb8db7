/* write10m: N ranges (argv[1], default 10 million) in a nested pattern
 * (1 outer per 10 inner), then exit: the collector writes them at exit.
 * Prints the time recording ended, on CLOCK_MONOTONIC, so the driver can
 * time the write alone. */
#include <ncrt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10000000;
  volatile long x = 0;
  for (long i = 0; i < n; i += 11) {
    NCRT_RANGE("outer");
    for (int j = 0; j < 10; j++) {
      NCRT_RANGE("inner");
      x += j;
    }
  }
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  printf("recorded_at %.6f\n", (double)t.tv_sec + (double)t.tv_nsec / 1e9);
  fflush(stdout);
  return 0;
}
