/* 8 threads, each opening 10000 nested ranges (2 levels) through ncrt.h. */
#include <ncrt.h>
#include <pthread.h>
#include <stdio.h>

static void *work(void *arg) {
  long sum = 0;
  for (int i = 0; i < 10000; i++) {
    NCRT_RANGE("outer");
    {
      NCRT_RANGE("inner");
      sum += i;
    }
  }
  *(long *)arg = sum;
  return NULL;
}

int main(void) {
  pthread_t t[8];
  long s[8];
  for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, work, &s[i]);
  for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
  printf("%ld\n", s[0] + s[7]);
  return 0;
}
