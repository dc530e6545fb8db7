/* kernels: GPU kernels launched inside ranges matching a glob (see
 * kernels.h). Per trace: the matching ranges become one union of
 * intervals per thread; each kernel's launch call (found by correlation
 * id) is looked up in its thread's union by binary search. */
#include "kernels.h"
#include "analyze.h" /* trace_sort_by_thread */

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint32_t thread;
  int64_t s, e;
} Iv;
typedef VEC(Iv) Ivs;

static int cmp_iv(const void *a, const void *b) {
  const Iv *x = a, *y = b;
  if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
  if (x->s != y->s) return x->s < y->s ? -1 : 1;
  return x->e < y->e ? -1 : x->e > y->e;
}

/* Sorted by (thread, start) and merged: one union per thread. */
static void merge_ivs(Ivs *v) {
  if (!v->n) return;
  qsort(v->v, v->n, sizeof *v->v, cmp_iv);
  size_t o = 0;
  for (size_t i = 1; i < v->n; i++) {
    Iv *last = &v->v[o];
    if (v->v[i].thread == last->thread && v->v[i].s <= last->e) {
      if (v->v[i].e > last->e) last->e = v->v[i].e;
    } else {
      v->v[++o] = v->v[i];
    }
  }
  v->n = o + 1;
}

/* Is (thread, ts) inside one of the merged intervals? */
static bool inside(const Ivs *v, uint32_t thread, int64_t ts) {
  size_t lo = 0, hi = v->n; /* the first interval after (thread, ts) */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const Iv *x = &v->v[mid];
    if (x->thread < thread || (x->thread == thread && x->s <= ts)) lo = mid + 1;
    else hi = mid;
  }
  if (!lo) return false;
  const Iv *x = &v->v[lo - 1];
  return x->thread == thread && ts <= x->e;
}

static __thread const Model *g_m; /* qsort has no context argument in C11 */

static int cmp_name(const void *a, const void *b) {
  return strcmp(intern_str(&g_m->names, *(const uint32_t *)a), intern_str(&g_m->names, *(const uint32_t *)b));
}

static int cmp_row(const void *a, const void *b) {
  const RangeKernelRow *x = a, *y = b;
  if (x->total != y->total) return x->total > y->total ? -1 : 1;
  return strcmp(intern_str(&g_m->names, x->name), intern_str(&g_m->names, y->name));
}

static __thread const int64_t *g_incl;

static int cmp_incl(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  if (g_incl[x] != g_incl[y]) return g_incl[x] > g_incl[y] ? -1 : 1;
  return strcmp(intern_str(&g_m->names, x), intern_str(&g_m->names, y));
}

/* One trace's kernels into rows (by name id). */
static void trace_kernels(const Trace *t, const bool *match, RangeKernels *out, RangeKernelRow *rows) {
  const Ev *ev = t->ev.v;
  Ivs ivs = {0};
  int64_t clo = INT64_MAX, chi = INT64_MIN;
  size_t ncorr = 0;
  for (size_t i = 0; i < t->ev.n; i++) {
    const Ev *e = &ev[i];
    if (!kind_is_cpu_range(e->kind)) continue;
    if (match[e->name]) {
      Iv iv = {e->thread, e->ts, e->ts + e->dur};
      vec_push(&ivs, iv);
      out->instances++;
      if (e->flags & EV_ASYNC) out->async_instances++;
    }
    if ((e->kind == K_CUDA_RUNTIME || e->kind == K_CUDA_DRIVER) && e->corr >= 0) {
      ncorr++;
      if (e->corr < clo) clo = e->corr;
      if (e->corr > chi) chi = e->corr;
    }
  }
  merge_ivs(&ivs);
  CorrMap launch = {0}; /* correlation id -> its runtime call */
  corrmap_init(&launch, clo, chi, ncorr);
  for (size_t i = 0; i < t->ev.n; i++) {
    const Ev *e = &ev[i];
    if ((e->kind == K_CUDA_RUNTIME || e->kind == K_CUDA_DRIVER) && e->corr >= 0)
      corrmap_put(&launch, e->corr, (int64_t)i);
  }
  for (size_t i = 0; i < t->ev.n; i++) {
    const Ev *e = &ev[i];
    if (e->kind != K_KERNEL) continue;
    out->all_count++;
    out->all_total += e->dur;
    int64_t li;
    if (e->corr < 0 || !corrmap_get(&launch, e->corr, &li)) {
      out->unlaunched++;
      continue;
    }
    if (!inside(&ivs, ev[li].thread, ev[li].ts)) continue;
    RangeKernelRow *r = &rows[e->name];
    r->name = e->name;
    r->count++;
    r->total += e->dur;
    out->inside_count++;
    out->inside_total += e->dur;
  }
  corrmap_free(&launch);
  vec_free(&ivs);
}

/* Inclusive time per name, as the summary counts it: per thread, ranges
 * nest with a stack (one that ends after its parent is clipped to the
 * parent's end); only the outermost open instance of a name adds its
 * duration. Start/end ranges stay out of the nesting and add their whole
 * duration. */
static void inclusive_times(const Trace *t, int64_t *incl, uint64_t *count, uint32_t *depth) {
  const Ev *ev = t->ev.v;
  VEC(uint32_t) idx = {0};
  for (size_t i = 0; i < t->ev.n; i++) {
    const Ev *e = &ev[i];
    if (!kind_is_cpu_range(e->kind)) continue;
    count[e->name]++;
    if (e->flags & EV_ASYNC) incl[e->name] += e->dur;
    else vec_push(&idx, (uint32_t)i);
  }
  trace_sort_by_thread(t, idx.v, idx.n);
  struct Open {
    uint32_t name;
    int64_t end;
  };
  VEC(struct Open) st = {0};
  for (size_t k = 0; k <= idx.n; k++) {
    const Ev *e = k < idx.n ? &ev[idx.v[k]] : NULL;
    bool new_thread = e && k > 0 && ev[idx.v[k - 1]].thread != e->thread;
    while (st.n && (!e || new_thread || st.v[st.n - 1].end <= e->ts)) depth[st.v[--st.n].name]--;
    if (!e) break;
    struct Open o = {e->name, e->ts + e->dur};
    if (st.n && o.end > st.v[st.n - 1].end) o.end = st.v[st.n - 1].end;
    if (depth[e->name]++ == 0) incl[e->name] += e->dur;
    vec_push(&st, o);
  }
  vec_free(&st);
  vec_free(&idx);
}

static void seen_ranges(const Model *m, RangeKernels *out) {
  size_t nn = intern_count(&m->names);
  int64_t *incl = xcalloc(nn ? nn : 1, sizeof *incl);
  uint64_t *count = xcalloc(nn ? nn : 1, sizeof *count);
  uint32_t *depth = xcalloc(nn ? nn : 1, sizeof *depth);
  for (size_t ti = 0; ti < m->traces.n; ti++) inclusive_times(m->traces.v[ti], incl, count, depth);
  for (size_t i = 0; i < nn; i++)
    if (count[i]) vec_push(&out->seen, (uint32_t)i);
  g_m = m;
  g_incl = incl;
  if (out->seen.n) qsort(out->seen.v, out->seen.n, sizeof *out->seen.v, cmp_incl);
  free(incl);
  free(count);
  free(depth);
}

void range_kernels(const Model *m, const char *glob, RangeKernels *out) {
  memset(out, 0, sizeof *out);
  size_t nn = intern_count(&m->names);
  bool *match = xcalloc(nn ? nn : 1, sizeof *match);
  bool *used = xcalloc(nn ? nn : 1, sizeof *used);
  RangeKernelRow *rows = xcalloc(nn ? nn : 1, sizeof *rows);
  for (size_t i = 0; i < nn; i++) match[i] = fnmatch(glob, intern_str(&m->names, (uint32_t)i), 0) == 0;
  for (size_t ti = 0; ti < m->traces.n; ti++) {
    const Trace *t = m->traces.v[ti];
    for (size_t i = 0; i < t->ev.n; i++)
      if (kind_is_cpu_range(t->ev.v[i].kind) && match[t->ev.v[i].name]) used[t->ev.v[i].name] = true;
    trace_kernels(t, match, out, rows);
  }
  for (size_t i = 0; i < nn; i++) {
    if (used[i]) vec_push(&out->ranges, (uint32_t)i);
    if (rows[i].count) vec_push(&out->kernels, rows[i]);
  }
  g_m = m;
  if (out->ranges.n) qsort(out->ranges.v, out->ranges.n, sizeof *out->ranges.v, cmp_name);
  if (out->kernels.n) qsort(out->kernels.v, out->kernels.n, sizeof *out->kernels.v, cmp_row);
  if (!out->instances) seen_ranges(m, out);
  free(match);
  free(used);
  free(rows);
}

void range_kernels_free(RangeKernels *k) {
  vec_free(&k->ranges);
  vec_free(&k->kernels);
  vec_free(&k->seen);
}
