/* progress: a one-line progress bar on stderr while a tree is rewritten.
 * Shown only when stderr is a terminal, not under --quiet, and only for
 * work worth watching (many files, or a run that is taking a while); it is
 * erased before anything else is printed, so logs and pipes never see it.
 * progress_step is called by every worker thread; drawing is throttled. */
#ifndef NC_PROGRESS_H
#define NC_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  size_t total;
  size_t done;        /* updated atomically */
  bool enabled;       /* stderr is a terminal and not --quiet */
  bool drawn;         /* a bar is on screen and must be erased */
  int64_t start_ns, last_ns;
  pthread_mutex_t lock;
} Progress;

void progress_start(Progress *p, size_t total, bool quiet);
void progress_step(Progress *p);
/* Erase the bar (if drawn). */
void progress_end(Progress *p);

#endif
