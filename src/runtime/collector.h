/* collector: libncrt's in-process state. NVTX calls from the host program
 * land in per-thread buffers (no lock on the hot path); at exit the writer
 * turns them into one Chrome-trace file. The runtime lives inside other
 * people's programs: it never exits or aborts; on failure it prints one line
 * ("ncrt: ...") and stops collecting.
 * Ownership: all buffers belong to the collector and live until exit. */
#ifndef NCRT_COLLECTOR_H
#define NCRT_COLLECTOR_H

#include <stdint.h>
#include <sys/types.h>

#define NCRT_EXPORT __attribute__((visibility("default")))

typedef struct {
  uint32_t name;     /* index into the name table */
  uint32_t depth;    /* nesting depth on its thread (push/pop ranges) */
  int64_t start, end;/* ns since the collector started (monotonic clock) */
} NcrtEvent;

typedef struct NcrtThread NcrtThread;
struct NcrtThread {
  pid_t tid;
  NcrtEvent *ev;     /* completed ranges */
  size_t n, cap;
  struct { uint32_t name; int64_t start; } *stack; /* open push ranges */
  size_t depth, stack_cap;
  NcrtThread *next;  /* all threads, for the writer */
};

/* Collector-wide state, read by the writer. */
typedef struct {
  int64_t mono0;            /* monotonic ns at start */
  int64_t real0;            /* wall-clock ns at start (baseTimeNanoseconds) */
  NcrtThread *threads;
  char **names;
  uint32_t nnames;
  int disabled;
} NcrtState;

extern NcrtState ncrt_state;

int64_t ncrt_now(void);
uint32_t ncrt_name_intern(const char *s);
void ncrt_fail(const char *what);

/* writer.c: write the trace at exit. */
void ncrt_write_trace(void);

#endif
