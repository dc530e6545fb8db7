/* failalloc: libncrt's out-of-memory paths (issue 34). The program
 * replaces malloc, calloc and realloc (an executable's definitions come
 * before libc's for libncrt too) and, while armed, fails every allocation
 * as an exhausted heap does.
 *   failalloc         main and a second thread each open 20 "open" ranges
 *                     (more than the 16 the collector's first block holds),
 *                     then main arms the failure, prints "armed" and exits 3
 *                     with the ranges still open
 *   failalloc domain  one "before" range; armed, creates the domain "lost";
 *                     disarmed, creates "kept" and records "in.kept" in it
 *                     and "after" in the default domain; exits 0 */
#include <errno.h>
#include <ncrt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int domain(void) {
  nvtxRangePushA("before");
  nvtxRangePop();
  armed = 1;
  nvtxDomainHandle_t lost = nvtxDomainCreateA("lost");
  armed = 0;
  nvtxDomainHandle_t kept = nvtxDomainCreateA("kept");
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "in.kept";
  nvtxDomainRangePushEx(kept, &a);
  nvtxDomainRangePop(kept);
  nvtxRangePushA("after");
  nvtxRangePop();
  (void)lost;
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "domain")) return domain();
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
