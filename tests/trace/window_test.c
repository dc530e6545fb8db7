/* window_test: core/window.h against a brute force. Lanes of random events
 * (overlapping each other, nested, zero-length, equal starts), random and
 * edge windows: win_query must give exactly the events with ts <= b and
 * ts + dur >= a, in the lane's order, and count past cap as cap + 1.
 * Exit 0, or 1 after naming the first wrong answer of each kind. */
#include "window.h"

#include <stdio.h>
#include <stdlib.h>

static uint64_t rng = 88172645463325252ull;
static int64_t rnd(int64_t n) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (int64_t)(rng % (uint64_t)n);
}

static const Trace *g_t;
static int by_ts(const void *x, const void *y) {
  int64_t a = g_t->ev.v[*(const uint32_t *)x].ts, b = g_t->ev.v[*(const uint32_t *)y].ts;
  return a < b ? -1 : a > b;
}

int main(void) {
  int fails = 0;
  for (int lane = 0; lane < 40; lane++) {
    Trace t = {0};
    size_t n = lane == 0 ? 0 : (size_t)rnd(lane < 20 ? 50 : 3000) + 1;
    int64_t maxdur = lane % 3 == 0 ? 5 : lane % 3 == 1 ? 200 : 100000; /* short, medium, long overlaps */
    for (size_t i = 0; i < n; i++) {
      Ev e = {0};
      e.ts = rnd(100000);
      e.dur = rnd(4) == 0 ? 0 : rnd(maxdur);
      vec_push(&t.ev, e);
    }
    uint32_t *idx = xmalloc((n ? n : 1) * sizeof *idx);
    /* every other event only (a lane is a subset of the trace's events) */
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
      if (i % 2 == 0 || lane % 2) idx[m++] = (uint32_t)i;
    g_t = &t;
    qsort(idx, m, sizeof *idx, by_ts);
    WinLane w;
    win_build(&w, &t, idx, m);
    uint32_t *out = xmalloc((m + 1) * sizeof *out), *want = xmalloc((m + 1) * sizeof *want);
    for (int q = 0; q < 300; q++) {
      int64_t a = rnd(110000) - 5000, b = a + (q % 5 == 0 ? 0 : rnd(q % 2 ? 100 : 30000));
      if (q % 7 == 0 && m) { /* ends on an event's end and start */
        const Ev *e = &t.ev.v[idx[rnd((int64_t)m)]];
        a = e->ts + e->dur, b = a + rnd(50);
      }
      size_t nw = 0;
      for (size_t k = 0; k < m; k++) {
        const Ev *e = &t.ev.v[idx[k]];
        if (e->ts <= b && e->ts + e->dur >= a) want[nw++] = idx[k];
      }
      size_t got = win_query(&w, a, b, out, m + 1);
      bool same = got == nw;
      for (size_t k = 0; same && k < nw; k++) same = out[k] == want[k];
      if (!same) {
        printf("FAIL: lane %d window [%lld, %lld]: %zu events, the brute force %zu\n", lane, (long long)a,
               (long long)b, got, nw);
        fails++;
        break;
      }
      size_t cap = nw / 2;
      size_t capped = win_query(&w, a, b, out, cap);
      if (capped != (nw > cap ? cap + 1 : nw)) {
        printf("FAIL: lane %d window [%lld, %lld] cap %zu: counted %zu of %zu\n", lane, (long long)a, (long long)b,
               cap, capped, nw);
        fails++;
        break;
      }
      for (size_t k = 0; k < cap && k < nw; k++)
        if (out[k] != want[k]) {
          printf("FAIL: lane %d cap %zu: the first events differ\n", lane, cap);
          fails++;
          break;
        }
    }
    if (win_query(&w, 10, 9, out, m + 1) != 0) printf("FAIL: a window ending before it starts\n"), fails++;
    win_free(&w);
    free(out);
    free(want);
    free(idx);
    vec_free(&t.ev);
  }
  /* one early long event (a whole-run range on a lane of short ones):
   * a window looks at about the events it answers, not at the lane from
   * that event on (issue 42; it was every event up to the window) */
  {
    Trace t = {0};
    size_t n = 200000;
    for (size_t i = 0; i < n; i++) {
      Ev e = {0};
      e.ts = (int64_t)i * 10, e.dur = i ? 5 : (int64_t)n * 10;
      vec_push(&t.ev, e);
    }
    uint32_t *idx = xmalloc(n * sizeof *idx), out[64];
    for (size_t i = 0; i < n; i++) idx[i] = (uint32_t)i;
    WinLane w;
    win_build(&w, &t, idx, n);
    size_t worst = 0;
    for (int q = 0; q < 1000; q++) {
      int64_t a = rnd((int64_t)n * 10), b = a + 100;
      size_t got = win_query(&w, a, b, out, 64);
      if (got < 2 || got > 12) printf("FAIL: the long lane's window [%lld, %lld]: %zu events\n", (long long)a, (long long)b, got), fails++;
      if (win_scanned > worst) worst = win_scanned;
    }
    if (worst > 200) printf("FAIL: a window of ~11 events looked at %zu of a lane with one early long event\n", worst), fails++;
    win_free(&w);
    free(idx);
    vec_free(&t.ev);
  }
  if (!fails) printf("ok: 40 lanes, 300 windows each, as the brute force\n");
  return fails ? 1 : 0;
}
