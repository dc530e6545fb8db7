/* window: the events of a lane overlapping a time window (window.h). */
#include "window.h"

#include <stdlib.h>

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
}

void win_free(WinLane *w) {
  free(w->maxend);
  w->maxend = NULL;
  w->n = 0;
}

size_t win_query(const WinLane *w, int64_t a, int64_t b, uint32_t *out, size_t cap) {
  if (a > b) return 0;
  size_t lo = 0, hi = w->n; /* the first k with maxend[k] >= a (maxend never decreases) */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (w->maxend[mid] < a) lo = mid + 1;
    else hi = mid;
  }
  size_t got = 0;
  for (size_t k = lo; k < w->n; k++) {
    const Ev *e = &w->t->ev.v[w->idx[k]];
    if (e->ts > b) break;
    if (end_of(e) < a) continue;
    if (got < cap) out[got] = w->idx[k];
    if (++got > cap) break;
  }
  return got;
}
