/* exit10m: N ranges (argv[1], default 10 million) over 1000 names, two
 * deep, so that the default throttle (10^5 calls per name) records them
 * all, as fast as the program can; then prints "end_ns T" (CLOCK_MONOTONIC
 * as main returns) and exits: what is left to convert then is almost
 * everything. The driver times the exit from T to the process's end. */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define K 1000
static char names[K][8];

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10000000;
  for (int i = 0; i < K; i++) snprintf(names[i], sizeof names[i], "f%d", i);
  for (long i = 0; i + 1 < n; i += 2) {
    nvtxRangePushA(names[i % K]);
    nvtxRangePushA(names[(i * 7 + 3) % K]);
    nvtxRangePop();
    nvtxRangePop();
  }
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  printf("end_ns %lld\n", (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
  fflush(stdout);
  return 0;
}
