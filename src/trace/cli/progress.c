/* progress: see progress.h. The reader reports how many bytes of the file
 * (compressed, for .gz: gzoffset) it has consumed after each refill. */
#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Files of at least this size get a bar at once, others once reading has
 * taken this long: a small trace is read before a bar could tell anything. */
#define PROGRESS_MIN_BYTES (16ull << 20)
#define PROGRESS_MIN_NS 300000000LL
#define PROGRESS_EVERY_NS 100000000LL
#define PROGRESS_WIDTH 30

static struct {
  bool quiet, active, drawn;
  const char *name;
  uint64_t size;
  int64_t start_ns, last_ns;
} P;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void progress_set_quiet(bool quiet) { P.quiet = quiet; }

void progress_begin(const char *path, uint64_t size) {
  progress_clear();
  const char *slash = strrchr(path, '/');
  P.name = slash ? slash + 1 : path;
  P.size = size;
  P.active = !P.quiet && size > 0 && isatty(STDERR_FILENO);
  P.start_ns = P.last_ns = now_ns();
}

void progress_update(uint64_t done) {
  if (!P.active) return;
  int64_t t = now_ns();
  if (P.size < PROGRESS_MIN_BYTES && t - P.start_ns < PROGRESS_MIN_NS) return;
  if (P.drawn && t - P.last_ns < PROGRESS_EVERY_NS) return;
  if (done > P.size) done = P.size;
  int fill = (int)(done * PROGRESS_WIDTH / P.size);
  char bar[PROGRESS_WIDTH + 1];
  for (int i = 0; i < PROGRESS_WIDTH; i++) bar[i] = i < fill ? '#' : '.';
  bar[PROGRESS_WIDTH] = 0;
  fprintf(stderr, "\rnctrace: reading %s [%s] %3d%%", P.name, bar, (int)(done * 100 / P.size));
  fflush(stderr);
  P.drawn = true;
  P.last_ns = t;
}

void progress_clear(void) {
  if (!P.drawn) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  P.drawn = false;
}

void progress_say(const char *level, const char *where, const char *msg) {
  progress_clear();
  if (level) fprintf(stderr, "%s: %s: %s\n", where ? where : "nctrace", level, msg);
  else fprintf(stderr, "%s: %s\n", where ? where : "nctrace", msg);
}
