/* window: the events of one lane that overlap a time window, answered from
 * an index built once (the report's served mode, cli/serve.c).
 *
 * A lane is a list of event indexes into one Trace, sorted by start (ts;
 * ties in any order). win_build keeps, per position, the largest end
 * (ts + dur) of the events up to it: 8 bytes per event besides the caller's
 * index list, which it borrows (it must outlive the WinLane), and the tree
 * below.
 *
 * win_query(a, b) gives exactly the events with ts <= b and ts + dur >= a
 * (closed intervals: an event touching the window is in it), in the lane's
 * order. It finds the first position whose running end reaches a by binary
 * search, then walks a tree of the largest ends of blocks of 16 events
 * (1 to 2 more bytes per event), passing over every block whose events all
 * end before a, while ts <= b: O(log n + k) when the lane's events do not
 * overlap each other (the report's lanes: one nesting depth, or first-fit
 * start/end lanes), O((k + 1) (16 + log n)) in general: one early long
 * event no longer makes every window scan the lane from it (issue 42). At
 * most cap are written to out; the return is how many overlap, counting
 * stops at cap + 1 (so "more than cap" is seen without scanning the rest).
 *
 * No printing, no exit: allocation failure aborts in xmalloc like the rest
 * of core. */
#ifndef NCT_WINDOW_H
#define NCT_WINDOW_H

#include "model.h"

typedef struct {
  const Trace *t;
  const uint32_t *idx; /* borrowed, sorted by t->ev.v[idx[k]].ts */
  size_t n;
  int64_t *maxend;     /* owned: maxend[k] = max end of idx[0..k] */
  int64_t *tree;       /* owned: the tree of block ends, nodes 1..2 leaves - 1 */
  size_t leaves;
} WinLane;

/* Events the last win_query looked at (a test's measure of its cost) */
extern size_t win_scanned;

void win_build(WinLane *w, const Trace *t, const uint32_t *idx, size_t n);
void win_free(WinLane *w);
/* Times in the trace's own clock (ns). out: room for cap indexes (into
 * t->ev), may be NULL when cap is 0. */
size_t win_query(const WinLane *w, int64_t a, int64_t b, uint32_t *out, size_t cap);

#endif
