/* failalloc: a process that runs out of memory at exit with ranges open on
 * two threads (issue 34, defect 2). The program replaces malloc, calloc and
 * realloc (an executable's definitions come before libc's for libncrt too)
 * and, once armed, fails every allocation as an exhausted heap does.
 *   failalloc       main and a second thread each open 20 "open" ranges
 *                   (more than the 16 the collector's first block holds),
 *                   then main arms the failure, prints "armed" and exits 3
 *                   with the ranges still open */
#include <errno.h>
#include <ncrt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static volatile int armed;

void *malloc(size_t n) {
  if (armed) return errno = ENOMEM, NULL;
  return __libc_malloc(n);
}
void *calloc(size_t k, size_t n) {
  if (armed) return errno = ENOMEM, NULL;
  return __libc_calloc(k, n);
}
void *realloc(void *p, size_t n) {
  if (armed) return errno = ENOMEM, NULL;
  return __libc_realloc(p, n);
}

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int opened;

static void *second(void *arg) {
  (void)arg;
  for (int i = 0; i < 20; i++) nvtxRangePushA("open");
  pthread_mutex_lock(&m);
  opened = 1;
  pthread_cond_signal(&cv);
  pthread_mutex_unlock(&m);
  for (;;) pause(); /* its ranges stay open until the process ends */
}

int main(void) {
  pthread_t t;
  for (int i = 0; i < 20; i++) nvtxRangePushA("open");
  if (pthread_create(&t, NULL, second, NULL)) return 1;
  pthread_mutex_lock(&m);
  while (!opened) pthread_cond_wait(&cv, &m);
  pthread_mutex_unlock(&m);
  printf("armed\n");
  fflush(stdout);
  armed = 1;
  exit(3);
}
