/* progress: see progress.h. */
#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* A bar for trees of at least this many files, or once a run has taken this
 * long: small runs finish before a bar could tell anyone anything. */
#define PROGRESS_MIN_FILES 100
#define PROGRESS_MIN_NS 300000000LL
#define PROGRESS_EVERY_NS 100000000LL /* redraw at most 10 times a second */
#define PROGRESS_WIDTH 30

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void draw(Progress *p, size_t done) {
  int fill = p->total ? (int)(done * PROGRESS_WIDTH / p->total) : PROGRESS_WIDTH;
  char bar[PROGRESS_WIDTH + 1];
  for (int i = 0; i < PROGRESS_WIDTH; i++) bar[i] = i < fill ? '#' : '.';
  bar[PROGRESS_WIDTH] = 0;
  fprintf(stderr, "\rncrewrite: [%s] %zu/%zu files", bar, done, p->total);
  fflush(stderr);
  p->drawn = true;
}

void progress_start(Progress *p, size_t total, bool quiet) {
  p->total = total;
  p->done = 0;
  p->enabled = !quiet && total > 0 && isatty(STDERR_FILENO);
  p->drawn = false;
  p->start_ns = p->last_ns = now_ns();
  pthread_mutex_init(&p->lock, NULL);
}

void progress_step(Progress *p) {
  size_t done = __atomic_add_fetch(&p->done, 1, __ATOMIC_RELAXED);
  if (!p->enabled || pthread_mutex_trylock(&p->lock)) return; /* another worker is drawing */
  int64_t t = now_ns();
  bool worth = p->total >= PROGRESS_MIN_FILES || t - p->start_ns >= PROGRESS_MIN_NS;
  if (worth && (!p->drawn || t - p->last_ns >= PROGRESS_EVERY_NS || done == p->total)) {
    draw(p, done);
    p->last_ns = t;
  }
  pthread_mutex_unlock(&p->lock);
}

void progress_end(Progress *p) {
  if (p->drawn) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
  }
  pthread_mutex_destroy(&p->lock);
}
