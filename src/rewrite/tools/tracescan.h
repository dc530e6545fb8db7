/* tracescan: the CPU ranges of a Chrome-trace file (ncrt's .json.gz, or any
 * Kineto-layout or legacy trace), for drill and prune. The reading is
 * nctrace's streaming reader (src/trace/reader.c), linked in as is; this
 * adapter keeps its headers away from the rewriter's, whose util.h declares
 * the same helpers.
 *
 * Ownership: strings handed to the callback are valid only during the call. */
#ifndef NC_TRACESCAN_H
#define NC_TRACESCAN_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
  const char *name;   /* range name */
  const char *file;   /* args.file, or NULL */
  int64_t line;       /* args.line, or 0 */
  const char *thread; /* "pid/tid" as written */
  int64_t ts, dur;    /* ns */
} TraceRange;

/* Calls fn for every complete (ph X) user_annotation range (or a range
 * without category: torch's legacy layout); fn returns 0 to go on. Returns 0,
 * or -1 after printing "path:line:col: error: ..." (unreadable, corrupt or
 * not a trace). */
int tracescan_ranges(const char *path, int (*fn)(void *ctx, const TraceRange *r), void *ctx);

#endif
