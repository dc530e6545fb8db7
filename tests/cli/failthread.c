/* failthread: an LD_PRELOAD library for tests only. pthread_create fails
 * with EAGAIN (as under a pids limit) once FAILTHREAD_AFTER threads (a
 * number, default 0) have been started. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

typedef int (*CreateFn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
  static int started;
  const char *after = getenv("FAILTHREAD_AFTER");
  if (__atomic_fetch_add(&started, 1, __ATOMIC_RELAXED) >= (after ? atoi(after) : 0)) return EAGAIN;
  CreateFn real = (CreateFn)dlsym(RTLD_NEXT, "pthread_create");
  return real(th, attr, fn, arg);
}
