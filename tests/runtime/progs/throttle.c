/* "tiny" is called 5000 times and takes nanoseconds; "slow" 300 times at
 * ~30 us: with NCRT_THROTTLE=1000:10 only "tiny" is throttled. */
#include <ncrt.h>
#include <stdio.h>
#include <time.h>

int main(void) {
  volatile long x = 0;
  for (int i = 0; i < 5000; i++) {
    NCRT_RANGE("tiny");
    x += i;
  }
  for (int i = 0; i < 300; i++) {
    NCRT_RANGE("slow");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do clock_gettime(CLOCK_MONOTONIC, &t1);
    while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 30000);
  }
  printf("%ld\n", (long)x);
  return 0;
}
