/* rankview: the ranks side by side, and the straggler of synchronous
 * training.
 *
 * In synchronous data-parallel training (DDP, FSDP, any loop with a
 * collective per step) every rank's step is as long as the slowest rank's:
 * the others wait for it inside a collective (DDP's all-reduce runs in
 * backward). Step times then tell nothing; what differs is where each rank
 * spends the step. So every closed range's exclusive time is also summed
 * per (process, name); the view puts the ranks' main processes side by
 * side for the names whose time differs most, and the straggler is the
 * rank that has much less than every other rank in one name (the others
 * wait there) and much more in another (what it does meanwhile). */
#include "analyze.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static int64_t key_of(size_t trace, uint32_t name) { return (int64_t)((uint64_t)trace << 32 | name); }

void summary_rank_range(Summary *s, size_t trace, uint32_t name, int64_t excl) {
  i64map_add(&s->rank_excl, key_of(trace, name), excl);
}

static __thread const Summary *g_s; /* qsort's context */

static int cmp_col(const void *pa, const void *pb) {
  const RankRow *a = &g_s->ranks.v[*(const size_t *)pa], *b = &g_s->ranks.v[*(const size_t *)pb];
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  return a->trace < b->trace ? -1 : a->trace > b->trace;
}

static int cmp_spread(const void *pa, const void *pb) {
  const RankSpread *a = pa, *b = pb;
  int64_t wa = a->hi - a->lo, wb = b->hi - b->lo;
  if (wa != wb) return wa > wb ? -1 : 1;
  return a->name < b->name ? -1 : a->name > b->name;
}

/* every name some rank's main process spent time in, widest first */
static void all_spreads(const Model *m, Summary *s, RankSpread **out, size_t *nout) {
  size_t nc = s->rank_cols.n, cap = 0, n = 0;
  RankSpread *v = NULL;
  I64Map seen = {0};
  bool *col_trace = xcalloc(m->traces.n ? m->traces.n : 1, sizeof *col_trace);
  for (size_t c = 0; c < nc; c++) col_trace[s->ranks.v[s->rank_cols.v[c]].trace] = true;
  for (size_t k = 0; k < s->rank_excl.cap; k++) {
    int64_t key = s->rank_excl.keys[k];
    if (key == INT64_MIN) continue;
    size_t trace = (size_t)((uint64_t)key >> 32);
    uint32_t name = (uint32_t)((uint64_t)key & 0xffffffffu);
    int64_t dummy;
    if (trace >= m->traces.n || !col_trace[trace] || i64map_get(&seen, name, &dummy)) continue;
    if (fnmatch(s->opt.step_glob, intern_str(&m->names, name), 0) == 0) continue; /* steps are as long everywhere */
    i64map_put(&seen, name, 1);
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      v = xrealloc(v, cap * sizeof *v);
    }
    RankSpread *r = &v[n++];
    r->name = name;
    r->per = xcalloc(nc, sizeof *r->per);
    r->lo = INT64_MAX, r->hi = INT64_MIN, r->lo_at = r->hi_at = 0;
    for (size_t c = 0; c < nc; c++) {
      int64_t x = 0;
      i64map_get(&s->rank_excl, key_of(s->ranks.v[s->rank_cols.v[c]].trace, name), &x);
      r->per[c] = x;
      if (x < r->lo) r->lo = x, r->lo_at = c;
      if (x > r->hi) r->hi = x, r->hi_at = c;
    }
  }
  i64map_free(&seen);
  free(col_trace);
  if (n) qsort(v, n, sizeof *v, cmp_spread);
  *out = v;
  *nout = n;
}

void rankview_build(const Model *m, Summary *s) {
  s->wait_name = -1;
  s->wait_ns = 0;
  for (size_t i = 0; i < s->ranks.n; i++)
    if (s->ranks.v[i].is_rank) vec_push(&s->rank_cols, i);
  g_s = s;
  if (s->rank_cols.n) qsort(s->rank_cols.v, s->rank_cols.n, sizeof *s->rank_cols.v, cmp_col);
  if (s->rank_cols.n < 2) return;
  RankSpread *v;
  size_t n;
  all_spreads(m, s, &v, &n);
  for (size_t i = 0; i < n; i++) {
    if (s->spread.n < RANK_SPREAD_TOP && v[i].hi > v[i].lo) vec_push(&s->spread, v[i]);
    else free(v[i].per);
  }
  free(v);
}

void rankview_free(Summary *s) {
  for (size_t i = 0; i < s->spread.n; i++) free(s->spread.v[i].per);
  vec_free(&s->spread);
  vec_free(&s->rank_cols);
  i64map_free(&s->rank_excl);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* the median of per[] without column skip */
static int64_t median_without(const int64_t *per, size_t n, size_t skip) {
  int64_t *t = xmalloc((n ? n : 1) * sizeof *t);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (i != skip) t[k++] = per[i];
  qsort(t, k, sizeof *t, cmp_i64);
  int64_t med = k ? t[k / 2] : 0;
  free(t);
  return med;
}

/* "ranks 0–2", "ranks 0, 2 and 5", "rank 1": the columns but skip */
static void others_text(const Summary *s, size_t skip, Buf *b) {
  size_t nc = s->rank_cols.n, k = 0;
  VEC(int64_t) r = {0};
  for (size_t c = 0; c < nc; c++)
    if (c != skip) vec_push(&r, s->ranks.v[s->rank_cols.v[c]].rank);
  buf_puts(b, r.n == 1 ? "rank " : "ranks ");
  bool consecutive = r.n > 2;
  for (size_t i = 1; i < r.n; i++) consecutive &= r.v[i] == r.v[i - 1] + 1;
  if (consecutive) {
    buf_printf(b, "%lld\u2013%lld", (long long)r.v[0], (long long)r.v[r.n - 1]);
  } else {
    for (k = 0; k < r.n; k++)
      buf_printf(b, "%s%lld", k == 0 ? "" : k + 1 == r.n ? " and " : ", ", (long long)r.v[k]);
  }
  vec_free(&r);
}

/* a name that says collective, or where one runs (DDP's all-reduce runs
 * in backward) */
static bool collective_name(const char *name) {
  static const char *const words[] = {"backward", "all_reduce", "allreduce", "all_gather", "allgather",
                                      "reduce_scatter", "barrier", "broadcast", "all_to_all", "alltoall",
                                      "nccl", "gloo", "collective", "sync", "wait", NULL};
  return name_has_any(name, words);
}

static void ms_text(Buf *b, int64_t ns) { buf_printf(b, "%.1f ms", (double)ns / 1e6); }

bool rankview_straggler(const Model *m, Summary *s, Buf *t, Buf *e, Buf *r, int64_t *score) {
  size_t nc = s->rank_cols.n;
  if (nc < 2) return false;
  RankSpread *v;
  size_t n;
  all_spreads(m, s, &v, &n);
  /* steps per rank: the figures per step when every rank has them */
  uint64_t steps = UINT64_MAX;
  for (size_t c = 0; c < nc; c++) {
    uint64_t k = s->ranks.v[s->rank_cols.v[c]].steps.count;
    if (k < steps) steps = k;
  }
  if (steps == UINT64_MAX) steps = 0;
  int64_t per = steps ? (int64_t)steps : 1;
  /* the name the others wait in: one every rank has (a collective is
   * called by all), with one column far below every other (the smallest
   * other value exceeds it by at least 1 ms per step and by a fifth of
   * itself); the widest such gap, a collective's name first (with two
   * ranks "rank 0 waits in backward for rank 1's slow_down" and "rank 1
   * waits in slow_down for rank 0's backward" fit the figures alike) */
  size_t wi = n, slow = 0;
  int64_t gap = 0;
  bool wcoll = false;
  for (size_t i = 0; i < n; i++) {
    size_t lo = v[i].lo_at;
    if (v[i].lo <= 0) continue;
    int64_t second = INT64_MAX;
    for (size_t c = 0; c < nc; c++)
      if (c != lo && v[i].per[c] < second) second = v[i].per[c];
    int64_t g = second - v[i].lo;
    if (g < i64_sat_mul(1000000, per) || i64_sat_mul(g, 5) < second) continue;
    bool coll = collective_name(intern_str(&m->names, v[i].name));
    if ((coll && !wcoll) || (coll == wcoll && g > gap)) gap = g, wi = i, slow = lo, wcoll = coll;
  }
  /* what the slow rank does meanwhile: a name where it has far more than
   * the others (at least half the others' wait) */
  size_t xi = n;
  int64_t extra = 0;
  for (size_t i = 0; wi < n && i < n; i++) {
    if (i == wi) continue;
    int64_t x = v[i].per[slow] - median_without(v[i].per, nc, slow);
    if (x * 2 >= gap && x > extra) extra = x, xi = i;
  }
  bool found = wi < n && xi < n;
  if (found) {
    const RankSpread *w = &v[wi], *x = &v[xi];
    long long sr = (long long)s->ranks.v[s->rank_cols.v[slow]].rank;
    const char *wn = intern_str(&m->names, w->name), *xn = intern_str(&m->names, x->name);
    int64_t wait_med = median_without(w->per, nc, slow) - w->per[slow];
    int64_t x_others = median_without(x->per, nc, slow);
    const char *unit = steps ? " per step" : "";
    buf_printf(t, "Straggler: rank %lld", sr);
    buf_printf(e, "rank %lld is the straggler: ", sr);
    others_text(s, slow, e);
    buf_puts(e, " wait ~");
    ms_text(e, wait_med / per);
    buf_printf(e, "%s in %s (rank %lld: ", unit, wn, sr);
    ms_text(e, w->per[slow] / per);
    buf_printf(e, ") while rank %lld spends ~", sr);
    ms_text(e, x->per[slow] / per);
    buf_printf(e, "%s in %s (the others: ", unit, xn);
    ms_text(e, x_others / per);
    buf_puts(e, ")");
    buf_printf(r, "In synchronous training every rank waits for the slowest at each collective (DDP's all-reduce "
               "runs in backward; a barrier; an all-gather): step times are equal on every rank, and the wait "
               "shows in the other ranks' %s, not in rank %lld. Make rank %lld's %s cheaper or give that rank "
               "less work; %s is not slow in itself (rank %lld's shows what it costs).", wn, sr, sr, xn, wn, sr);
    int64_t total = 0;
    for (size_t c = 0; c < nc; c++)
      if (c != slow) total = i64_sat(total, w->per[c] - w->per[slow]);
    s->wait_name = w->name;
    s->wait_ns = total;
    *score = total;
  }
  for (size_t i = 0; i < n; i++) free(v[i].per);
  free(v);
  return found;
}
