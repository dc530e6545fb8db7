/* faults: a program that ends in each of the ways atexit does not cover,
 * with ranges closed and still open (on itself and on another thread).
 *   faults MODE   MODE = exit | sigterm | sigint | abort | _exit | _Exit |
 *                        own-handler | kill
 * Prints "work done" to stdout before it ends, so the test can check the
 * program's output is unchanged. */
#include <ncrt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int opened;

/* another thread opens "worker.open" and never closes it */
static void *worker(void *arg) {
  (void)arg;
  for (int i = 0; i < 3; i++) {
    NCRT_RANGE("worker.done");
  }
  nvtxDomainRangePushEx(nvtxDomainCreateA("ncrt"), &(nvtxEventAttributes_t){
                                                       .version = NVTX_VERSION,
                                                       .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
                                                       .messageType = NVTX_MESSAGE_TYPE_ASCII,
                                                       .message.ascii = "worker.open"});
  pthread_mutex_lock(&m);
  opened = 1;
  pthread_cond_signal(&cv);
  pthread_mutex_unlock(&m);
  for (;;) pause();
  return NULL;
}

static void on_term(int sig) {
  (void)sig;
  static const char msg[] = "own handler\n";
  ssize_t r = write(1, msg, sizeof msg - 1);
  (void)r;
  exit(5);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "exit";
  if (!strcmp(mode, "own-handler")) signal(SIGTERM, on_term);
  pthread_t th;
  pthread_create(&th, NULL, worker, NULL);
  pthread_mutex_lock(&m);
  while (!opened) pthread_cond_wait(&cv, &m);
  pthread_mutex_unlock(&m);
  for (int i = 0; i < 5; i++) {
    NCRT_RANGE("main.done");
  }
  nvtxRangePushA("main.open");
  puts("work done");
  fflush(stdout);
  if (!strcmp(mode, "sigterm") || !strcmp(mode, "own-handler")) raise(SIGTERM);
  else if (!strcmp(mode, "sigint")) raise(SIGINT);
  else if (!strcmp(mode, "abort")) abort();
  else if (!strcmp(mode, "_exit")) _exit(3);
  else if (!strcmp(mode, "_Exit")) _Exit(4);
  else if (!strcmp(mode, "kill")) raise(SIGKILL);
  exit(2);
}
