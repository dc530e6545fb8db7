/* window: the events of a lane overlapping a time window (window.h). */
#include "window.h"

#include <stdlib.h>

enum { BLK = 16 }; /* events per leaf of the tree of ends */

size_t win_scanned;

/* An event's end, saturated: a trace's ts and dur are what the file says */
static int64_t end_of(const Ev *e) {
  int64_t r;
  return __builtin_add_overflow(e->ts, e->dur, &r) ? (e->dur > 0 ? INT64_MAX : INT64_MIN) : r;
}

void win_build(WinLane *w, const Trace *t, const uint32_t *idx, size_t n) {
  w->t = t, w->idx = idx, w->n = n;
  w->maxend = xmalloc((n ? n : 1) * sizeof *w->maxend);
  int64_t m = INT64_MIN;
  for (size_t k = 0; k < n; k++) {
    const Ev *e = &t->ev.v[idx[k]];
    if (end_of(e) > m) m = end_of(e);
    w->maxend[k] = m;
  }
  /* the tree: leaf j the largest end of block j (BLK events), a node the
   * larger of its two children's */
  size_t nb = (n + BLK - 1) / BLK;
  w->leaves = 1;
  while (w->leaves < nb) w->leaves *= 2;
  w->tree = xmalloc(2 * w->leaves * sizeof *w->tree);
  for (size_t j = 0; j < w->leaves; j++) {
    int64_t b = INT64_MIN;
    for (size_t k = j * BLK; j < nb && k < n && k < (j + 1) * BLK; k++)
      if (end_of(&t->ev.v[idx[k]]) > b) b = end_of(&t->ev.v[idx[k]]);
    w->tree[w->leaves + j] = b;
  }
  for (size_t i = w->leaves; i-- > 1;)
    w->tree[i] = w->tree[2 * i] > w->tree[2 * i + 1] ? w->tree[2 * i] : w->tree[2 * i + 1];
}

void win_free(WinLane *w) {
  free(w->maxend);
  free(w->tree);
  w->maxend = NULL;
  w->tree = NULL;
  w->n = 0;
}

typedef struct {
  const WinLane *w;
  int64_t a, b;
  size_t lo; /* no event before it ends at or after a */
  uint32_t *out;
  size_t cap, got;
} Query;

/* The overlapping events of node i's blocks (leaf blocks [j0, j1)), in the
 * lane's order; false once done (an event starting after b, or cap + 1
 * counted). A node whose largest end is before a is passed over whole. */
static bool collect(Query *q, size_t i, size_t j0, size_t j1) {
  const WinLane *w = q->w;
  if (j1 * BLK <= q->lo || j0 * BLK >= w->n || w->tree[i] < q->a) return true;
  if (i < w->leaves) {
    size_t mid = j0 + (j1 - j0) / 2;
    return collect(q, 2 * i, j0, mid) && collect(q, 2 * i + 1, mid, j1);
  }
  for (size_t k = j0 * BLK > q->lo ? j0 * BLK : q->lo; k < w->n && k < j1 * BLK; k++) {
    const Ev *e = &w->t->ev.v[w->idx[k]];
    win_scanned++;
    if (e->ts > q->b) return false;
    if (end_of(e) < q->a) continue;
    if (q->got < q->cap) q->out[q->got] = w->idx[k];
    if (++q->got > q->cap) return false;
  }
  return true;
}

size_t win_query(const WinLane *w, int64_t a, int64_t b, uint32_t *out, size_t cap) {
  win_scanned = 0;
  if (a > b || !w->n) return 0;
  size_t lo = 0, hi = w->n; /* the first k with maxend[k] >= a (maxend never decreases) */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (w->maxend[mid] < a) lo = mid + 1;
    else hi = mid;
  }
  Query q = {w, a, b, lo, out, cap, 0};
  collect(&q, 1, 0, w->leaves);
  return q.got;
}
