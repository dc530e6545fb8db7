/* N threads (argv[1], default 8) x M (argv[2], default 100000) ranges each,
 * two levels deep: "outer" every 2nd iteration around "inner". */
#include <ncrt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long m = 100000;

static void *work(void *arg) {
  long sum = 0;
  for (long i = 0; i < m; i += 2) {
    NCRT_RANGE("outer");
    {
      NCRT_RANGE("inner");
      sum += i;
    }
  }
  *(long *)arg = sum;
  return NULL;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 8;
  if (argc > 2) m = atol(argv[2]);
  pthread_t t[64];
  long s[64];
  for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, work, &s[i]);
  for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
  printf("%ld\n", s[0]);
  return 0;
}
