/* analyze: the figures behind `summary` and `report` (see analyze.h and
 * docs/nctrace.md for what each one means).
 *
 * Per trace (= per rank): CPU ranges are ordered per thread by (start,
 * longest first, file order) and walked with a stack, which gives nesting,
 * exclusive time and GPU attribution (a GPU op's time goes to the runtime
 * call with its correlation id, then up through every enclosing range).
 * GPU ops are ordered by start for the union-of-intervals figures and per
 * stream for the idle split. */
#include "analyze.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const COPY_NAMES[COPY_KINDS] = {"HtoD", "DtoH", "DtoD", "other copy", "memset"};
const char *copy_kind_name(int k) { return COPY_NAMES[k]; }
const char *class_name(int c) {
  return c == CLASS_COMM ? "communication" : c == CLASS_MEMORY ? "memory" : "computation";
}

int kernel_class(const char *name, int kind) {
  if (kind == K_GPU_MEMCPY || kind == K_GPU_MEMSET) return CLASS_MEMORY;
  if (!strncmp(name, "nccl", 4)) return CLASS_COMM;
  if (!strncmp(name, "Memcpy", 6) || !strncmp(name, "Memset", 6) || !strncmp(name, "dma", 3))
    return CLASS_MEMORY;
  return CLASS_COMPUTE;
}

/* ---- sorting ---- */

static __thread const Ev *g_ev; /* qsort has no context argument in C11; a thread's own (partial.h folds on two) */

static int cmp_range(const void *a, const void *b) {
  const Ev *x = &g_ev[*(const uint32_t *)a], *y = &g_ev[*(const uint32_t *)b];
  if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1;
  return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static int cmp_start(const void *a, const void *b) {
  const Ev *x = &g_ev[*(const uint32_t *)a], *y = &g_ev[*(const uint32_t *)b];
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* Order idx by thread (stable counting sort), then by cmp within a thread;
 * a thread already in order (the usual case) is not sorted again. */
void trace_sort_by_thread(const Trace *t, uint32_t *idx, size_t n) {
  size_t nt = t->threads.n;
  size_t *start = xcalloc(nt + 1, sizeof *start);
  for (size_t i = 0; i < n; i++) start[t->ev.v[idx[i]].thread + 1]++;
  for (size_t i = 0; i < nt; i++) start[i + 1] += start[i];
  uint32_t *out = xmalloc((n ? n : 1) * sizeof *out);
  size_t *pos = xmalloc((nt + 1) * sizeof *pos);
  memcpy(pos, start, (nt + 1) * sizeof *pos);
  for (size_t i = 0; i < n; i++) out[pos[t->ev.v[idx[i]].thread]++] = idx[i];
  if (n) memcpy(idx, out, n * sizeof *idx);
  g_ev = t->ev.v;
  for (size_t th = 0; th < nt; th++) {
    size_t a = start[th], b = start[th + 1];
    bool sorted = true;
    for (size_t i = a + 1; i < b && sorted; i++) sorted = cmp_range(&idx[i - 1], &idx[i]) < 0;
    if (!sorted) qsort(idx + a, b - a, sizeof *idx, cmp_range);
  }
  free(out);
  free(pos);
  free(start);
}

/* ---- intervals ---- */

typedef struct {
  int64_t s, e;
} Iv;
typedef VEC(Iv) Ivs;

/* Append [s, e) to a union built from starts in increasing order. */
static void iv_add(Ivs *u, int64_t s, int64_t e) {
  if (e <= s) return;
  if (u->n && s <= u->v[u->n - 1].e) {
    if (e > u->v[u->n - 1].e) u->v[u->n - 1].e = e;
    return;
  }
  Iv iv = {s, e};
  vec_push(u, iv);
}

static int64_t iv_len(const Ivs *u) {
  int64_t t = 0;
  for (size_t i = 0; i < u->n; i++) t += u->v[i].e - u->v[i].s;
  return t;
}

static int64_t iv_overlap(const Ivs *a, const Ivs *b) {
  int64_t t = 0;
  size_t i = 0, j = 0;
  while (i < a->n && j < b->n) {
    int64_t s = a->v[i].s > b->v[j].s ? a->v[i].s : b->v[j].s;
    int64_t e = a->v[i].e < b->v[j].e ? a->v[i].e : b->v[j].e;
    if (e > s) t += e - s;
    if (a->v[i].e < b->v[j].e) i++;
    else j++;
  }
  return t;
}

/* ---- statistics ---- */

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

Stats stats_of(int64_t *v, size_t n) {
  Stats st = {0};
  st.count = n;
  if (!n) return st;
  qsort(v, n, sizeof *v, cmp_i64);
  double sum = 0, sq = 0;
  for (size_t i = 0; i < n; i++) sum += (double)v[i];
  double mean = sum / (double)n;
  for (size_t i = 0; i < n; i++) sq += ((double)v[i] - mean) * ((double)v[i] - mean);
  st.mean = llround(mean);
  st.std = llround(sqrt(sq / (double)n));
  st.min = v[0];
  st.max = v[n - 1];
  st.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return st;
}

/* ---- per-trace analysis ---- */

typedef struct {
  uint32_t ev;
  int64_t end;   /* clipped to the parent's end */
  int64_t eff;   /* duration counted in the parent */
  int64_t child; /* sum of children's eff */
  int64_t gpu;
} Frame;

typedef struct {
  const Model *m;
  Summary *s;
  RangeRow *rows;   /* by name id */
  RangeRow *annots; /* gpu_user_annotation by name id */
  KernelRow *krows;
  uint32_t *depth;  /* open instances of each name on the current thread */
  bool *is_step;
  bool *is_launch;
} Ctx;

static bool is_launch_name(const char *n) {
  static const char *const L[] = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel",
                                  "cuLaunchKernelEx", "cudaMemcpyAsync", "cudaMemsetAsync",
                                  "cudaLaunchCooperativeKernel", "cudaGraphLaunch"};
  for (size_t i = 0; i < sizeof L / sizeof *L; i++) {
    size_t k = strlen(L[i]);
    /* also with a _vNNNN suffix */
    if (!strncmp(n, L[i], k) && (n[k] == 0 || (n[k] == '_' && n[k + 1] == 'v'))) return true;
  }
  return false;
}

static int copy_kind(const char *name, int kind) {
  if (kind == K_GPU_MEMSET) return COPY_MEMSET;
  if (strstr(name, "HtoD")) return COPY_H2D;
  if (strstr(name, "DtoH")) return COPY_D2H;
  if (strstr(name, "DtoD")) return COPY_D2D;
  return COPY_OTHER;
}

/* One trace's analysis, in phases that run in this order (each reads what
 * the ones before left): split_events, walk_nesting, launch_stats, gpu_ops,
 * stream_idle, finish_trace. What they share: */
typedef VEC(uint32_t) EvIdx; /* event indices into the trace */
typedef VEC(Frame) Frames;

typedef struct {
  Ctx *c;
  size_t ti;
  const Trace *t;
  const Ev *ev;
  RankRow rr; /* this trace's row, pushed by finish_trace */
  /* correlation id -> GPU time of its ops, -> its first GPU op, -> its
   * runtime call (event indices) */
  CorrMap corr_gpu, corr_op, corr_rt;
  EvIdx ranges; /* CPU ranges in the nesting (start/end ranges are not) */
  EvIdx gpu;    /* GPU ops */
  VEC(Interval) tops; /* top-level ranges of every thread: the coverage */
} TracePass;

void rank_row_init(RankRow *rr, const Trace *t, size_t ti) {
  memset(rr, 0, sizeof *rr);
  rr->trace = ti;
  rr->rank = t->rank >= 0 ? t->rank : (int64_t)ti;
  rr->is_rank = !t->proc.known || t->proc.is_rank;
  rr->events = t->notes.events;
  rr->cpu_first = rr->gpu_first = INT64_MAX;
  rr->cpu_last = rr->gpu_last = INT64_MIN;
}

static void begin_trace(TracePass *p, Ctx *c, size_t ti) {
  memset(p, 0, sizeof *p);
  p->c = c;
  p->ti = ti;
  p->t = c->m->traces.v[ti];
  p->ev = p->t->ev.v;
  rank_row_init(&p->rr, p->t, ti);
  /* corrmap_init wants the ids' range and count: an array when they are
   * dense (Kineto's are), a hash map otherwise */
  int64_t clo = INT64_MAX, chi = INT64_MIN;
  size_t ncorr = 0;
  for (size_t i = 0; i < p->t->ev.n; i++) {
    int64_t k = p->ev[i].corr;
    if (k < 0) continue;
    ncorr++;
    if (k < clo) clo = k;
    if (k > chi) chi = k;
  }
  corrmap_init(&p->corr_gpu, clo, chi, ncorr);
  corrmap_init(&p->corr_op, clo, chi, ncorr);
  corrmap_init(&p->corr_rt, clo, chi, ncorr);
}

/* A start/end range overlaps others freely: no parent, no children, so
 * its whole duration is its exclusive time. */
void range_row_async(RangeRow *r, const Ev *e) {
  r->name = e->name;
  r->kinds |= 1u << e->kind;
  r->count++;
  r->incl += e->dur;
  r->excl += e->dur;
  r->async_excl += e->dur;
  r->sum += e->dur;
  if (e->dur > r->max) r->max = e->dur;
}

static void add_async_range(TracePass *p, const Ev *e) {
  range_row_async(&p->c->rows[e->name], e);
  p->c->s->async_ranges++;
  p->rr.ranges++;
  vec_push(&p->tops, ((Interval){e->ts, e->ts + e->dur})); /* outside the nesting: top-level for coverage */
}

/* Events into ranges and GPU ops, the correlation maps filled, GPU user
 * annotations counted; then the GPU ops no runtime call of this trace
 * launched. */
static void split_events(TracePass *p) {
  const Ev *ev = p->ev;
  for (size_t i = 0; i < p->t->ev.n; i++) {
    const Ev *e = &ev[i];
    if (kind_is_cpu_range(e->kind) && (e->flags & EV_ASYNC)) {
      add_async_range(p, e);
    } else if (kind_is_cpu_range(e->kind)) {
      vec_push(&p->ranges, (uint32_t)i);
      if (e->kind == K_CUDA_RUNTIME || e->kind == K_CUDA_DRIVER) {
        if (e->corr >= 0) corrmap_put(&p->corr_rt, e->corr, (int64_t)i);
      }
    } else if (kind_is_gpu_op(e->kind)) {
      vec_push(&p->gpu, (uint32_t)i);
      if (e->corr >= 0) {
        corrmap_add(&p->corr_gpu, e->corr, e->dur);
        int64_t prev;
        if (!corrmap_get(&p->corr_op, e->corr, &prev) || ev[prev].ts > e->ts)
          corrmap_put(&p->corr_op, e->corr, (int64_t)i);
      }
    } else if (e->kind == K_GPU_USER_ANNOTATION) {
      RangeRow *r = &p->c->annots[e->name];
      r->name = e->name;
      r->count++;
      r->incl += e->dur;
      if (e->dur > r->max) r->max = e->dur;
    }
  }
  p->rr.ranges += p->ranges.n;
  p->rr.gpu_ops = p->gpu.n;
  for (size_t i = 0; i < p->gpu.n; i++) {
    int64_t x;
    if (ev[p->gpu.v[i]].corr < 0 || !corrmap_get(&p->corr_rt, ev[p->gpu.v[i]].corr, &x)) p->c->s->unattributed_gpu++;
  }
}

/* The range on top of the stack ends: its row gets the instance (inclusive
 * time and GPU time only for the outermost instance of its name, so
 * recursion counts once), a step its StepRow, the parent its child's time
 * and GPU time. */
static void close_range(TracePass *p, Frames *st) {
  Ctx *c = p->c;
  Summary *s = c->s;
  Frame f = st->v[--st->n];
  const Ev *x = &p->ev[f.ev];
  RangeRow *r = &c->rows[x->name];
  r->name = x->name;
  r->kinds |= 1u << x->kind;
  r->count++;
  int64_t excl = x->dur - f.child;
  if (excl < 0) excl = 0;
  r->excl += excl;
  s->range_excl_total += excl;
  summary_rank_range(s, p->ti, x->name, excl);
  r->sum += x->dur;
  if (x->dur > r->max) r->max = x->dur;
  if (--c->depth[x->name] == 0) {
    r->incl += x->dur;
    r->gpu += f.gpu;
  }
  if (x->dur == 0) s->zero_ranges++;
  if (c->is_step[x->name]) {
    StepRow sr = {p->ti, x->name, x->ts, x->dur, f.gpu};
    vec_push(&s->steps, sr);
  }
  if (st->n) {
    st->v[st->n - 1].child += f.eff;
    st->v[st->n - 1].gpu += f.gpu;
  }
}

/* Range i starts inside whatever is on the stack. */
static void open_range(TracePass *p, Frames *st, uint32_t i) {
  const Ev *e = &p->ev[i];
  if (e->ts < p->rr.cpu_first) p->rr.cpu_first = e->ts;
  if (e->ts + e->dur > p->rr.cpu_last) p->rr.cpu_last = e->ts + e->dur;
  Frame f = {i, e->ts + e->dur, e->dur, 0, 0};
  if (st->n && f.end > st->v[st->n - 1].end) {
    /* starts inside the parent, ends after it: counted up to the
     * parent's end (stated in the summary's notes) */
    p->c->s->clipped++;
    f.end = st->v[st->n - 1].end;
    f.eff = f.end - e->ts;
  }
  if ((e->kind == K_CUDA_RUNTIME || e->kind == K_CUDA_DRIVER) && e->corr >= 0) {
    int64_t g;
    if (corrmap_get(&p->corr_gpu, e->corr, &g)) f.gpu = g;
  }
  p->c->depth[e->name]++;
  if (!st->n) vec_push(&p->tops, ((Interval){e->ts, e->ts + e->dur}));
  vec_push(st, f);
}

/* The CPU ranges per thread in nesting order, with a stack: nesting,
 * exclusive time, GPU time attributed up the enclosing ranges, steps. */
static void walk_nesting(TracePass *p) {
  const Ev *ev = p->ev;
  trace_sort_by_thread(p->t, p->ranges.v, p->ranges.n);
  Frames st = {0};
  for (size_t k = 0; k <= p->ranges.n; k++) {
    const Ev *e = k < p->ranges.n ? &ev[p->ranges.v[k]] : NULL;
    bool new_thread = e && k > 0 && ev[p->ranges.v[k - 1]].thread != e->thread;
    /* pop what ended before e starts (everything at a thread change or the end) */
    while (st.n && (!e || new_thread || st.v[st.n - 1].end <= e->ts)) close_range(p, &st);
    if (!e) break;
    open_range(p, &st, p->ranges.v[k]);
  }
  vec_free(&st);
}

/* Keep the five worst delays (ties: earlier trace, earlier start -- the
 * order they come in). */
static void keep_worst(LaunchStats *ls, size_t ti, const Ev *e, int64_t delay) {
  size_t n = ls->nworst;
  if (n == 5 && delay <= ls->worst[4].delay) return;
  size_t at = n < 5 ? n : 4;
  while (at > 0 && ls->worst[at - 1].delay < delay) {
    if (at < 5) ls->worst[at] = ls->worst[at - 1];
    at--;
  }
  ls->worst[at].trace = ti;
  ls->worst[at].name = e->name;
  ls->worst[at].ts = e->ts;
  ls->worst[at].cpu = e->dur;
  ls->worst[at].delay = delay;
  if (n < 5) ls->nworst++;
}

/* Runtime calls: synchronous copies and synchronize calls; launch calls
 * matched to their first GPU op, for the launch time and delay. */
static void launch_stats(TracePass *p) {
  Summary *s = p->c->s;
  LaunchStats *ls = &s->launch;
  for (size_t k = 0; k < p->ranges.n; k++) {
    const Ev *e = &p->ev[p->ranges.v[k]];
    if (e->kind != K_CUDA_RUNTIME && e->kind != K_CUDA_DRIVER) continue;
    const char *nm = intern_str(&p->c->m->names, e->name);
    if (strstr(nm, "Synchronize")) {
      s->sync_calls++;
      s->sync_time += e->dur;
    } else if ((!strncmp(nm, "cudaMemcpy", 10) || !strncmp(nm, "cuMemcpy", 8)) && !strstr(nm, "Async")) {
      s->sync_copies++;
      s->sync_copy_time += e->dur;
    }
    if (!p->c->is_launch[e->name]) continue;
    int64_t oi;
    if (e->corr < 0 || !corrmap_get(&p->corr_op, e->corr, &oi)) {
      ls->unmatched++;
      continue;
    }
    int64_t delay = p->ev[oi].ts - (e->ts + e->dur);
    if (delay < 0) delay = 0;
    ls->count++;
    ls->cpu_total += e->dur;
    ls->delay_total += delay;
    if (e->dur > ls->cpu_max) ls->cpu_max = e->dur;
    if (delay > ls->delay_max) ls->delay_max = delay;
    if (e->dur > LAUNCH_CPU_OUTLIER_NS) ls->cpu_outliers++;
    if (delay > LAUNCH_DELAY_OUTLIER_NS) {
      ls->delay_outliers++;
      ls->delay_outlier_total += delay;
    }
    keep_worst(ls, p->ti, e, delay);
  }
}

/* One GPU op into its name's row (count, total, min, max; mean and
 * variance by Welford) and into the kernel or copy totals. */
static void add_gpu_op(TracePass *p, const Ev *e, const char *nm, int cls) {
  Summary *s = p->c->s;
  KernelRow *r = &p->c->krows[e->name];
  if (!r->count) {
    r->name = e->name;
    r->kind = e->kind;
    r->cls = (uint8_t)cls;
    r->min = e->dur;
  }
  r->count++;
  r->total += e->dur;
  if (e->dur < r->min) r->min = e->dur;
  if (e->dur > r->max) r->max = e->dur;
  double d = (double)e->dur - r->mean;
  r->mean += d / (double)r->count;
  r->m2 += d * ((double)e->dur - r->mean);
  if (e->kind == K_KERNEL) {
    s->kernel_count++;
    s->kernel_total += e->dur;
    if (e->dur < TINY_KERNEL_NS) {
      s->tiny_kernels++;
      int64_t ri;
      if (e->corr >= 0 && corrmap_get(&p->corr_rt, e->corr, &ri)) s->tiny_launch_cpu += p->ev[ri].dur;
    }
  } else {
    CopyRow *cr = &s->copies[copy_kind(nm, e->kind)];
    cr->count++;
    cr->time += e->dur;
    if (e->bytes >= 0) cr->bytes += e->bytes;
    else cr->unknown_bytes++;
    if (strstr(nm, "Pageable")) cr->pageable++;
  }
}

/* The GPU ops by start: their rows, and the unions of all ops, of
 * computation and of communication, from which busy, compute, idle and
 * overlap come. */
static void gpu_ops(TracePass *p) {
  RankRow *rr = &p->rr;
  g_ev = p->ev;
  bool in_order = true;
  for (size_t k = 1; k < p->gpu.n && in_order; k++) in_order = cmp_start(&p->gpu.v[k - 1], &p->gpu.v[k]) < 0;
  if (!in_order) qsort(p->gpu.v, p->gpu.n, sizeof *p->gpu.v, cmp_start);
  Ivs all = {0}, comp = {0}, comm = {0};
  for (size_t k = 0; k < p->gpu.n; k++) {
    const Ev *e = &p->ev[p->gpu.v[k]];
    const char *nm = intern_str(&p->c->m->names, e->name);
    int cls = kernel_class(nm, e->kind);
    int64_t end = e->ts + e->dur;
    if (e->ts < rr->gpu_first) rr->gpu_first = e->ts;
    if (end > rr->gpu_last) rr->gpu_last = end;
    iv_add(&all, e->ts, end);
    if (cls == CLASS_COMPUTE) iv_add(&comp, e->ts, end);
    else if (cls == CLASS_COMM) iv_add(&comm, e->ts, end);
    add_gpu_op(p, e, nm, cls);
  }
  if (p->gpu.n) {
    rr->gpu_span = rr->gpu_last - rr->gpu_first;
    rr->busy = iv_len(&all);
    rr->compute = iv_len(&comp);
    rr->comm = iv_len(&comm);
    rr->overlap = iv_overlap(&comm, &comp);
    rr->noncompute = rr->busy - rr->compute;
    rr->idle = rr->gpu_span - rr->busy;
  } else {
    rr->gpu_first = rr->gpu_last = 0;
  }
  if (!p->ranges.n) rr->cpu_first = rr->cpu_last = 0;
  vec_free(&all);
  vec_free(&comp);
  vec_free(&comm);
}

/* The gaps between the ops [a, b) of one stream (in start order), split
 * into host wait (the next op's launch came after the previous op ended),
 * kernel wait (short gaps) and other. */
static void stream_row(TracePass *p, size_t a, size_t b) {
  const Ev *ev = p->ev;
  const uint32_t *g = p->gpu.v;
  StreamRow sr = {0};
  sr.trace = p->ti;
  sr.thread = ev[g[a]].thread;
  sr.ops = b - a;
  int64_t first = ev[g[a]].ts, prev_end = first + ev[g[a]].dur;
  int64_t busy = ev[g[a]].dur;
  for (size_t k = a + 1; k < b; k++) {
    const Ev *e = &ev[g[k]];
    int64_t gap = e->ts - prev_end;
    int64_t end = e->ts + e->dur;
    if (gap > 0) {
      int64_t ri;
      busy += e->dur;
      if (e->corr >= 0 && corrmap_get(&p->corr_rt, e->corr, &ri) && ev[ri].ts >= prev_end) sr.host_wait += gap;
      else if (gap <= KERNEL_WAIT_NS) sr.kernel_wait += gap;
      else sr.other += gap;
    } else {
      p->c->s->stream_overlaps++;
      if (end > prev_end) busy += end - prev_end;
    }
    if (end > prev_end) prev_end = end;
  }
  sr.span = prev_end - first;
  sr.busy = busy;
  sr.idle = sr.host_wait + sr.kernel_wait + sr.other;
  vec_push(&p->c->s->streams, sr);
}

static void stream_idle(TracePass *p) {
  trace_sort_by_thread(p->t, p->gpu.v, p->gpu.n);
  for (size_t a = 0; a < p->gpu.n;) {
    size_t b = a;
    uint32_t th = p->ev[p->gpu.v[a]].thread;
    while (b < p->gpu.n && p->ev[p->gpu.v[b]].thread == th) b++;
    stream_row(p, a, b);
    a = b;
  }
}

static int cmp_interval(const void *pa, const void *pb) {
  const Interval *a = pa, *b = pb;
  return a->a < b->a ? -1 : a->a > b->a ? 1 : (a->b > b->b) - (a->b < b->b);
}

/* Coverage (analyze.h): the union of the top-level ranges of all threads
 * (start/end ranges included: add_async_range and open_range collect them
 * in tops) within the process's life. */
static void coverage(const Trace *t, RankRow *rr, bool gpu, Interval *tops, size_t ntops) {
  const Lifetime *l = &t->life;
  Coverage *c = &rr->cov;
  int64_t first = rr->cpu_first, last = rr->cpu_last;
  for (size_t i = 0; i < ntops; i++) {
    if (tops[i].a < first) first = tops[i].a;
    if (tops[i].b > last) last = tops[i].b;
  }
  if (gpu && rr->gpu_first < first) first = rr->gpu_first;
  if (gpu && rr->gpu_last > last) last = rr->gpu_last;
  if (first > last) return; /* no events */
  c->start_known = l->has_start;
  c->start = l->has_start && l->start < first ? l->start : first;
  c->died = l->died;
  c->end_known = l->has_exit || l->died;
  c->end = l->has_exit ? l->exit : l->died && l->has_written ? l->written : last;
  if (c->end < last) c->end = last;
  if (l->has_exit && l->has_written && l->written > l->exit) c->profiler_exit = l->written - l->exit;
  c->wall = c->end - c->start;
  if (ntops > 1) qsort(tops, ntops, sizeof *tops, cmp_interval);
  int64_t cur_a = 0, cur_b = INT64_MIN, lo = INT64_MAX, hi = INT64_MIN;
  for (size_t i = 0; i <= ntops; i++) {
    if (i < ntops && tops[i].a <= cur_b) {
      if (tops[i].b > cur_b) cur_b = tops[i].b;
      continue;
    }
    if (cur_b != INT64_MIN) {
      c->covered += cur_b - cur_a;
      if (cur_a < lo) lo = cur_a;
      if (cur_b > hi) hi = cur_b;
    }
    if (i < ntops) cur_a = tops[i].a, cur_b = tops[i].b;
  }
  if (lo == INT64_MAX) {
    c->gaps = c->wall; /* no CPU range at all */
    return;
  }
  c->before = lo - c->start;
  c->after = c->end - hi;
  c->gaps = c->wall - c->covered - c->before - c->after;
  if (c->gaps < 0) c->gaps = 0;
}

void summary_add_rank(Summary *s, const Trace *t, RankRow *rr, bool gpu, Interval *tops, size_t ntops) {
  coverage(t, rr, gpu, tops, ntops);
  VEC(int64_t) durs = {0};
  for (size_t k = 0; k < s->steps.n; k++)
    if (s->steps.v[k].trace == rr->trace) vec_push(&durs, s->steps.v[k].dur);
  rr->steps = stats_of(durs.v, durs.n);
  vec_free(&durs);
  if (rr->is_rank) {
    bool seen = false;
    for (size_t k = 0; k < s->ranks.n; k++) seen |= s->ranks.v[k].is_rank && s->ranks.v[k].rank == rr->rank;
    s->nranks += !seen;
  }
  vec_push(&s->ranks, *rr);
}

/* The step statistics of this trace, its RankRow pushed, the pass freed. */
static void finish_trace(TracePass *p) {
  summary_add_rank(p->c->s, p->t, &p->rr, p->gpu.n > 0, p->tops.v, p->tops.n);
  vec_free(&p->tops);
  corrmap_free(&p->corr_gpu);
  corrmap_free(&p->corr_op);
  corrmap_free(&p->corr_rt);
  vec_free(&p->ranges);
  vec_free(&p->gpu);
}

static void analyze_trace(Ctx *c, size_t ti) {
  TracePass p;
  begin_trace(&p, c, ti);
  split_events(&p);
  walk_nesting(&p);
  launch_stats(&p);
  gpu_ops(&p);
  stream_idle(&p);
  finish_trace(&p);
}

/* ---- ordering of tables ---- */

static __thread const Model *g_m;

static int cmp_range_row(const void *a, const void *b) {
  const RangeRow *x = a, *y = b;
  if (x->incl != y->incl) return x->incl > y->incl ? -1 : 1;
  return strcmp(intern_str(&g_m->names, x->name), intern_str(&g_m->names, y->name));
}

static int cmp_kernel_row(const void *a, const void *b) {
  const KernelRow *x = a, *y = b;
  if (x->total != y->total) return x->total > y->total ? -1 : 1;
  return strcmp(intern_str(&g_m->names, x->name), intern_str(&g_m->names, y->name));
}

static int cmp_step_row(const void *a, const void *b) {
  const StepRow *x = a, *y = b;
  if (x->trace != y->trace) return x->trace < y->trace ? -1 : 1;
  return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int cmp_bottleneck(const void *a, const void *b) {
  const Bottleneck *x = a, *y = b;
  if (x->score != y->score) return x->score > y->score ? -1 : 1;
  return (int)x->kind - (int)y->kind;
}

/* ---- bottlenecks ---- */

static char *fmt_ms(int64_t ns) {
  Buf b = {0};
  buf_ms(&b, ns);
  buf_puts(&b, " ms");
  return b.s;
}

static void add_bottleneck(Summary *s, BottleneckKind k, int64_t score, Buf *title, Buf *ev, Buf *rec) {
  Bottleneck b = {k, score, title->s, ev->s, rec->s};
  vec_push(&s->bottlenecks, b);
  memset(title, 0, sizeof *title);
  memset(ev, 0, sizeof *ev);
  memset(rec, 0, sizeof *rec);
}

static double pct(int64_t a, int64_t b) { return b > 0 ? 100.0 * (double)a / (double)b : 0.0; }

/* GPU idle waiting on the host */
static void detect_host_wait(const Model *m, Summary *s) {
  (void)m;
  Buf t = {0}, e = {0}, r = {0};
  char *a, *b2, *c3;
  int64_t host = 0, span = 0, idle = 0;
  size_t nstreams = 0;
  for (size_t i = 0; i < s->streams.n; i++) {
    host = i64_sat(host, s->streams.v[i].host_wait);
    nstreams += s->streams.v[i].host_wait > 0;
  }
  for (size_t i = 0; i < s->ranks.n; i++) {
    span = i64_sat(span, s->ranks.v[i].gpu_span);
    idle = i64_sat(idle, s->ranks.v[i].idle);
  }
  if (host > 0 && span > 0 && i64_sat_mul(host, 20) >= span) {
    buf_puts(&t, "GPU idle waiting on the host");
    a = fmt_ms(idle), b2 = fmt_ms(span), c3 = fmt_ms(host);
    buf_printf(&e, "GPU idle %s of %s GPU span (%.1f%%); streams waited %s on the host (%zu stream(s); "
               "the next op was launched only after the previous one had finished)",
               a, b2, pct(idle, span), c3, nstreams);
    buf_printf(&r, "The GPU is starved by the CPU (%s of host wait). Cut host work per launch: "
               "capture the step in a CUDA graph (or torch.compile with mode=\"reduce-overhead\"), "
               "fuse small ops, raise the batch size, and move Python-side work (logging, .item(), "
               "data preparation) out of the hot loop.", c3);
    free(a), free(b2), free(c3);
    add_bottleneck(s, B_HOST_WAIT, host, &t, &e, &r);
  }
}

/* many tiny kernels */
static void detect_tiny_kernels(const Model *m, Summary *s) {
  (void)m;
  Buf t = {0}, e = {0}, r = {0};
  char *a;
  if (s->tiny_kernels >= 10 && s->tiny_kernels * 2 >= s->kernel_count) {
    int64_t score = s->tiny_launch_cpu ? s->tiny_launch_cpu : i64_sat_mul(s->tiny_kernels > INT64_MAX ? INT64_MAX : (int64_t)s->tiny_kernels, 5000);
    buf_puts(&t, "Many tiny kernels");
    a = fmt_ms(s->tiny_launch_cpu);
    buf_printf(&e, "%llu of %llu kernels (%.1f%%) run for less than 10 us; launching them took %s of CPU time",
               (unsigned long long)s->tiny_kernels, (unsigned long long)s->kernel_count,
               pct((int64_t)s->tiny_kernels, (int64_t)s->kernel_count), a);
    buf_printf(&r, "%llu kernels are shorter than their launch cost. Fuse them (torch.compile, fused "
               "optimizers such as foreach/fused=True, fused layer norms/activations) or batch the work "
               "so each launch does more.", (unsigned long long)s->tiny_kernels);
    free(a);
    add_bottleneck(s, B_TINY_KERNELS, score, &t, &e, &r);
  }
}

/* synchronous copies and synchronisation */
static void detect_sync(const Model *m, Summary *s) {
  (void)m;
  Buf t = {0}, e = {0}, r = {0};
  char *a, *b2;
  uint64_t pageable = 0;
  for (int k = 0; k < COPY_KINDS; k++) pageable += s->copies[k].pageable;
  if (s->sync_calls + s->sync_copies > 0) {
    buf_puts(&t, "Synchronous copies and synchronisation");
    a = fmt_ms(s->sync_copy_time), b2 = fmt_ms(s->sync_time);
    buf_printf(&e, "%llu synchronous memcpy call(s) blocked the host for %s; %llu synchronize call(s) for %s",
               (unsigned long long)s->sync_copies, a, (unsigned long long)s->sync_calls, b2);
    if (pageable) buf_printf(&e, "; %llu copies use pageable host memory", (unsigned long long)pageable);
    buf_printf(&r, "The host blocks on the GPU (%s in copies, %s in synchronize). Use pinned memory "
               "(pin_memory=True) with non_blocking=True copies, avoid .item()/.cpu()/print of GPU "
               "tensors inside the step, and synchronise once per step at most.", a, b2);
    free(a), free(b2);
    add_bottleneck(s, B_SYNC, s->sync_time + s->sync_copy_time, &t, &e, &r);
  }
}

/* one range dominating (self time of nested ranges: start/end ranges
 * overlap, so their time is not a share of anything) */
/* The step range itself counts too: its self time is the step's code
 * outside every range nested in it, often the largest (a train_step with
 * 58.8 % of the self time was hidden behind a 38.2 % ConvBlock.forward). */
static void detect_dominant_range(const Model *m, Summary *s) {
  Buf t = {0}, e = {0}, r = {0};
  char *a, *b2;
  size_t step_names = 0;
  for (size_t i = 0; i < s->ranges.n; i++)
    step_names += fnmatch(s->opt.step_glob, intern_str(&m->names, s->ranges.v[i].name), 0) == 0;
  const RangeRow *top = NULL;
  for (size_t i = 0; i < s->ranges.n; i++) {
    const RangeRow *x = &s->ranges.v[i];
    /* ...when the steps share one name (--step train_step); torch's
     * ProfilerStep#1, #2, ... are one name per step, none of them a place */
    if (step_names > 1 && fnmatch(s->opt.step_glob, intern_str(&m->names, x->name), 0) == 0) continue;
    /* the others' wait for a straggler is not the range's own cost (the
     * straggler finding says so) */
    int64_t xe = x->excl - x->async_excl - ((int64_t)x->name == s->wait_name ? s->wait_ns : 0);
    int64_t te = top ? top->excl - top->async_excl - ((int64_t)top->name == s->wait_name ? s->wait_ns : 0) : 0;
    if (!top || xe > te || (xe == te && strcmp(intern_str(&m->names, x->name), intern_str(&m->names, top->name)) < 0))
      top = x;
  }
  int64_t top_excl = top ? top->excl - top->async_excl - ((int64_t)top->name == s->wait_name ? s->wait_ns : 0) : 0;
  if (top && s->range_excl_total > 0 && top_excl > 0 && top_excl * 4 >= s->range_excl_total) {
    const char *nm = range_row_name(m, s, top);
    buf_printf(&t, "One range dominates: %s", nm);
    a = fmt_ms(top_excl), b2 = fmt_ms(s->range_excl_total);
    buf_printf(&e, "%s has %.1f%% of all self (exclusive) CPU time: %s of %s, over %llu call(s)", nm,
               pct(top_excl, s->range_excl_total), a, b2, (unsigned long long)top->count);
    if (fnmatch(s->opt.step_glob, nm, 0) == 0)
      buf_printf(&r, "Most of the self CPU time (%.1f%%) is in the step range %s itself, outside the ranges "
                 "nested in it: add ranges inside %s (ncrewrite drill) to see which part costs the most.",
                 pct(top_excl, s->range_excl_total), nm, nm);
    else if (!(top->kinds & (1u << K_USER_ANNOTATION)) && !(top->kinds & (1u << K_NONE)))
      /* an operator or runtime call: no rule can put ranges inside it */
      buf_printf(&r, "Optimise %s first: it holds %.1f%% of the self CPU time. It is an operator, not your "
                 "code: run with `ncrun --backend torch` to see its shapes and callers, or `ncrun --ncu` for "
                 "its kernels.", nm, pct(top_excl, s->range_excl_total));
    else
      buf_printf(&r, "Optimise %s first: it holds %.1f%% of the self CPU time. `ncrewrite drill` adds ranges "
                 "inside it if it is your code; if it is one call into a library (e.g. loss.backward()), "
                 "`ncrun --backend torch` shows the operators it runs.", nm, pct(top_excl, s->range_excl_total));
    free(a), free(b2);
    add_bottleneck(s, B_DOMINANT_RANGE, top_excl, &t, &e, &r);
  }
}

/* one kernel dominating */
static void detect_dominant_kernel(const Model *m, Summary *s) {
  Buf t = {0}, e = {0}, r = {0};
  char *a, *b2;
  if (s->kernels.n && s->kernel_total > 0) {
    const KernelRow *k = NULL;
    for (size_t i = 0; i < s->kernels.n; i++)
      if (s->kernels.v[i].kind == K_KERNEL) {
        k = &s->kernels.v[i];
        break;
      }
    if (k && k->total * 2 >= s->kernel_total && s->kernel_count > 1) {
      const char *nm = intern_str(&m->names, k->name);
      buf_printf(&t, "One kernel dominates: %s", nm);
      a = fmt_ms(k->total), b2 = fmt_ms(s->kernel_total);
      buf_printf(&e, "%s takes %.1f%% of kernel time: %s of %s over %llu launches", nm,
                 pct(k->total, s->kernel_total), a, b2, (unsigned long long)k->count);
      buf_printf(&r, "%s holds %.1f%% of GPU kernel time: check its shapes, precision (TF32/bf16) and "
                 "occupancy, or replace it with a better implementation.", nm, pct(k->total, s->kernel_total));
      free(a), free(b2);
      add_bottleneck(s, B_DOMINANT_KERNEL, k->total, &t, &e, &r);
    }
  }
}

/* a slow rank: ranks' main processes only (a DataLoader worker is not a
 * rank that others wait for at a collective) */
static void detect_slow_rank(const Model *m, Summary *s) {
  (void)m;
  Buf t = {0}, e = {0}, r = {0};
  char *a, *b2;
  /* a straggler found by what the others wait for: synchronous steps are
   * equally long on every rank, so their times tell nothing more */
  if (s->nranks >= 2 && s->wait_name < 0) {
    bool steps = true, gpu = true;
    size_t nr = 0;
    for (size_t i = 0; i < s->ranks.n; i++) {
      if (!s->ranks.v[i].is_rank) continue;
      steps &= s->ranks.v[i].steps.count > 0;
      gpu &= s->ranks.v[i].gpu_ops > 0;
      nr++;
    }
    int64_t sum = 0, mx = INT64_MIN;
    size_t slow = 0;
    for (size_t i = 0; i < s->ranks.n; i++) {
      const RankRow *rk = &s->ranks.v[i];
      if (!rk->is_rank) continue;
      int64_t v = steps ? rk->steps.mean : gpu ? rk->busy : rk->cpu_last - rk->cpu_first;
      sum = i64_sat(sum, v);
      if (v > mx) {
        mx = v;
        slow = i;
      }
    }
    int64_t mean = sum / (int64_t)nr;
    if (mean > 0 && (__int128)mx * 10 > (__int128)mean * 11) {
      const char *what = steps ? "mean step time" : gpu ? "GPU busy time" : "CPU time span";
      buf_printf(&t, "Slow rank: rank %lld", (long long)s->ranks.v[slow].rank);
      a = fmt_ms(mx), b2 = fmt_ms(mean);
      buf_printf(&e, "rank %lld %s is %s against a mean of %s over %zu ranks (+%.1f%%)",
                 (long long)s->ranks.v[slow].rank, what, a, b2, nr, pct(mx - mean, mean));
      buf_printf(&r, "Rank %lld is %.1f%% slower than the mean and the others wait for it at every "
                 "collective: balance the data (sequence lengths, shard sizes), and check that rank's "
                 "host (data loading, CPU contention) and GPU (clocks, thermal).",
                 (long long)s->ranks.v[slow].rank, pct(mx - mean, mean));
      free(a), free(b2);
      uint64_t n = steps ? s->ranks.v[slow].steps.count : 1;
      add_bottleneck(s, B_SLOW_RANK, i64_sat_mul(mx - mean, n > INT64_MAX ? INT64_MAX : (int64_t)n), &t, &e, &r);
    }
  }
}

/* the straggler of synchronous training (rankview.c) */
static void detect_straggler(const Model *m, Summary *s) {
  Buf t = {0}, e = {0}, r = {0};
  int64_t score = 0;
  if (rankview_straggler(m, s, &t, &e, &r, &score)) add_bottleneck(s, B_STRAGGLER, score, &t, &e, &r);
  buf_free(&t), buf_free(&e), buf_free(&r);
}

/* a rank's main process waiting on its workers: workers busy through
 * most of their active span (from their first range to their last)
 * produce as fast as they can, so the consumer waits for their batches.
 * Half is the line: workers that keep up with the main process sit idle
 * most of the time (prefetching a few batches, then waiting), and the
 * span includes the wait between epochs, which a data-bound loop also
 * has (a DataLoader-bound run of tests/project: 74 %; the same loop not
 * data-bound: 1 %). */
static void detect_waits_on_workers(const Model *m, Summary *s) {
  Buf t = {0}, e = {0}, r = {0};
  char *a, *b2;
  for (size_t i = 0; i < s->ranks.n; i++) {
    const RankRow *rk = &s->ranks.v[i];
    if (!rk->is_rank) continue;
    int64_t busy = 0, active = 0;
    size_t nw = 0;
    const char *role = NULL;
    for (size_t k = 0; k < s->ranks.n; k++) {
      const RankRow *w = &s->ranks.v[k];
      const Trace *wt = m->traces.v[w->trace];
      if (w->is_rank || w->rank != rk->rank || !wt->proc.role || !strstr(wt->proc.role, "worker")) continue;
      int64_t sp = w->cov.wall - w->cov.before - w->cov.after;
      if (sp <= 0) continue;
      busy += w->cov.covered;
      active += sp;
      role = wt->proc.role;
      nw++;
    }
    if (!nw || active <= 0 || busy * 2 < active) continue;
    buf_printf(&t, "Rank %lld waits on its %s%s", (long long)rk->rank, role, nw == 1 ? "" : "s");
    a = fmt_ms(busy), b2 = fmt_ms(active);
    buf_printf(&e, "its %zu %s%s were busy %.1f%% of their active time (%s of %s in their ranges): they produce "
               "as fast as they can, so the main process waits for them", nw, role, nw == 1 ? "" : "s",
               pct(busy, active), a, b2);
    buf_printf(&r, "Rank %lld's %ss are the bottleneck: make each item cheaper (the worker's top ranges show "
               "where its time goes), use more workers (num_workers), or move the work to the GPU.",
               (long long)rk->rank, role);
    free(a), free(b2);
    add_bottleneck(s, B_WAITS_ON_WORKERS, busy / (int64_t)nw, &t, &e, &r);
  }
}

/* a slow step */
static void detect_slow_step(const Model *m, Summary *s) {
  Buf t = {0}, e = {0}, r = {0};
  char *a, *b2;
  for (size_t i = 0; i < s->ranks.n; i++) {
    const RankRow *rk = &s->ranks.v[i];
    if (rk->steps.count < 3 || (__int128)rk->steps.max * 2 < (__int128)rk->steps.median * 3) continue;
    const StepRow *worst = NULL;
    for (size_t k = 0; k < s->steps.n; k++)
      if (s->steps.v[k].trace == rk->trace && (!worst || s->steps.v[k].dur > worst->dur)) worst = &s->steps.v[k];
    if (!worst) continue; /* (a partial file's rows may disagree with its counts) */
    const char *nm = intern_str(&m->names, worst->name);
    buf_printf(&t, "Slow step: %s", nm);
    a = fmt_ms(worst->dur), b2 = fmt_ms(rk->steps.median);
    buf_printf(&e, "rank %lld: %s took %s against a median step of %s", (long long)rk->rank, nm, a, b2);
    buf_printf(&r, "%s is %.1fx the median step. If it is the first step, exclude warm-up from "
               "measurements (schedule with wait/warmup); otherwise look for periodic work in it "
               "(checkpointing, evaluation, logging, garbage collection).", nm,
               (double)worst->dur / (double)rk->steps.median);
    free(a), free(b2);
    add_bottleneck(s, B_SLOW_STEP, worst->dur - rk->steps.median, &t, &e, &r);
  }
}

/* launch delay outliers */
static void detect_launch_delay(const Model *m, Summary *s) {
  (void)m;
  Buf t = {0}, e = {0}, r = {0};
  char *a;
  if (s->launch.delay_outliers) {
    buf_puts(&t, "Kernel launch delay outliers");
    a = fmt_ms(s->launch.delay_max);
    buf_printf(&e, "%llu of %llu launches started on the GPU more than 100 us after the launch call "
               "returned (worst %s)", (unsigned long long)s->launch.delay_outliers,
               (unsigned long long)s->launch.count, a);
    buf_printf(&r, "Launches queue behind earlier GPU work: the GPU, not the host, is the limit there. "
               "Look at what runs before the worst launches (listed under Kernel launches), overlap "
               "independent work on other streams, or reduce the queued work.");
    free(a);
    add_bottleneck(s, B_LAUNCH_DELAY, s->launch.delay_outlier_total, &t, &e, &r);
  }
}

/* communication not hidden */
static void detect_low_overlap(const Model *m, Summary *s) {
  (void)m;
  Buf t = {0}, e = {0}, r = {0};
  char *a, *b2;
  int64_t comm = 0, ov = 0;
  for (size_t i = 0; i < s->ranks.n; i++) {
    comm = i64_sat(comm, s->ranks.v[i].comm);
    ov = i64_sat(ov, s->ranks.v[i].overlap);
  }
  if (comm > 0 && i64_sat_mul(ov, 2) < comm) {
    buf_puts(&t, "Communication not overlapped with computation");
    a = fmt_ms(comm), b2 = fmt_ms(ov);
    buf_printf(&e, "communication kernels run %s, of which only %s (%.1f%%) overlaps computation", a, b2,
               pct(ov, comm));
    buf_printf(&r, "Only %.1f%% of communication is hidden behind computation. Overlap it: DDP bucketing "
               "(bucket_cap_mb), FSDP prefetching, or issue collectives on a side stream while "
               "independent computation runs.", pct(ov, comm));
    free(a), free(b2);
    add_bottleneck(s, B_LOW_OVERLAP, comm - ov, &t, &e, &r);
  }
}

/* The bottleneck detectors, in the order they are tried (each adds what
 * it finds to s->bottlenecks; they are ranked by score afterwards). Adding
 * one is a function above and a row here. */
static void (*const DETECTORS[])(const Model *, Summary *) = {
  detect_host_wait,
  detect_tiny_kernels,
  detect_sync,
  detect_straggler, /* before the dominant range and the slow rank, which read what it found */
  detect_dominant_range,
  detect_dominant_kernel,
  detect_slow_rank,
  detect_waits_on_workers,
  detect_slow_step,
  detect_launch_delay,
  detect_low_overlap,
};

static void find_bottlenecks(const Model *m, Summary *s) {
  for (size_t i = 0; i < sizeof DETECTORS / sizeof *DETECTORS; i++) DETECTORS[i](m, s);
  if (s->bottlenecks.n) qsort(s->bottlenecks.v, s->bottlenecks.n, sizeof *s->bottlenecks.v, cmp_bottleneck);
}

const char *range_row_name(const Model *m, const Summary *s, const RangeRow *r) {
  return r->merged > 1 ? s->opt.step_glob : intern_str(&m->names, r->name);
}

void summary_fold(const Model *m, const SummaryOptions *opt, Summary *s, SumParts *p) {
  memset(s, 0, sizeof *s);
  s->opt = *opt;
  s->wait_name = -1;
  size_t nn = intern_count(&m->names);
  Ctx c = {m, s, xcalloc(nn ? nn : 1, sizeof(RangeRow)), xcalloc(nn ? nn : 1, sizeof(RangeRow)),
           xcalloc(nn ? nn : 1, sizeof(KernelRow)), xcalloc(nn ? nn : 1, sizeof(uint32_t)),
           xcalloc(nn ? nn : 1, sizeof(bool)), xcalloc(nn ? nn : 1, sizeof(bool))};
  for (size_t i = 0; i < nn; i++) {
    const char *nm = intern_str(&m->names, (uint32_t)i);
    c.is_step[i] = fnmatch(opt->step_glob, nm, 0) == 0;
    c.is_launch[i] = is_launch_name(nm);
  }
  for (size_t ti = 0; ti < m->traces.n; ti++) analyze_trace(&c, ti);
  *p = (SumParts){c.rows, c.annots, c.krows, nn};
  free(c.depth);
  free(c.is_step);
  free(c.is_launch);
}

void sumparts_free(SumParts *p) {
  free(p->rows);
  free(p->annots);
  free(p->krows);
  memset(p, 0, sizeof *p);
}

void summary_compute(const Model *m, const SummaryOptions *opt, Summary *s) {
  SumParts p;
  summary_fold(m, opt, s, &p);
  summary_finish(m, s, p.rows, p.annots, p.krows, p.nn);
  sumparts_free(&p);
}

/* ncrt's throttled names (issue 40): a trace holds only their first calls
 * as ranges, and the time of the later ones sits inside the recorded
 * ranges around them. ncrt counted and timed those calls: their time moves
 * from the ranges around them (ncrt.throttled_inside) to the names
 * themselves, so every call is counted once, each name's figures are of
 * all its calls, and the exclusive times still add up to the time the
 * ranges cover. A trace without the timings (older ncrt) is left as it is:
 * its throttled rows are scaled estimates, marked so (render.c). */
static void add_unrecorded(const Model *m, Summary *s, RangeRow *rows, size_t nn) {
  for (size_t ti = 0; ti < m->traces.n; ti++) {
    const Trace *t = m->traces.v[ti];
    for (size_t k = 0; k < t->hidden.n; k++) {
      const Hidden *h = &t->hidden.v[k];
      if (h->name >= nn) continue;
      RangeRow *r = &rows[h->name];
      int64_t own = r->excl - r->async_excl, take = h->ns < own ? h->ns : own;
      if (take <= 0) continue;
      r->excl -= take;
      s->range_excl_total -= take;
    }
    for (size_t k = 0; k < t->throttled.n; k++) {
      const Throttled *th = &t->throttled.v[k];
      if (!th->measured || th->name >= nn) continue;
      RangeRow *r = &rows[th->name];
      if (th->u_calls <= 0) continue;
      if (!r->count) r->kinds |= 1u << K_USER_ANNOTATION;
      r->count += (uint64_t)th->u_calls;
      r->incl = i64_sat(r->incl, th->u_incl);
      r->excl = i64_sat(r->excl, th->u_excl);
      r->sum = i64_sat(r->sum, th->u_sum);
      /* the longest unrecorded call is not known: at least their mean */
      int64_t mean = (th->u_sum + th->u_calls - 1) / th->u_calls;
      if (mean > r->max) r->max = mean;
      s->range_excl_total = i64_sat(s->range_excl_total, th->u_excl);
    }
  }
}

void range_row_add(RangeRow *a, const RangeRow *b) {
  a->kinds |= b->kinds;
  a->count = a->count + b->count < a->count ? UINT64_MAX : a->count + b->count;
  a->incl = i64_sat(a->incl, b->incl);
  a->excl = i64_sat(a->excl, b->excl);
  a->gpu = i64_sat(a->gpu, b->gpu);
  a->sum = i64_sat(a->sum, b->sum);
  a->async_excl = i64_sat(a->async_excl, b->async_excl);
  if (b->max > a->max) a->max = b->max;
}

void summary_finish(const Model *m, Summary *s, RangeRow *rows, RangeRow *annots, KernelRow *krows, size_t nn) {
  struct {
    RangeRow *rows, *annots;
    KernelRow *krows;
    bool *is_step;
  } c = {rows, annots, krows, xcalloc(nn ? nn : 1, sizeof(bool))};
  for (size_t i = 0; i < nn; i++) c.is_step[i] = fnmatch(s->opt.step_glob, intern_str(&m->names, (uint32_t)i), 0) == 0;
  add_unrecorded(m, s, c.rows, nn);
  /* steps named one per step (torch's ProfilerStep#1, #2, ...) are one row:
   * ten of them took ten of the top twenty rows and said nothing a place */
  size_t first_step = nn, nsteps = 0;
  for (size_t i = 0; i < nn; i++)
    if (c.rows[i].count && c.is_step[i]) nsteps++, first_step = first_step < nn ? first_step : i;
  for (size_t i = first_step + 1; nsteps > 1 && i < nn; i++) {
    RangeRow *a = &c.rows[first_step], *x = &c.rows[i];
    if (!x->count || !c.is_step[i]) continue;
    range_row_add(a, x);
    x->count = 0;
  }
  if (nsteps > 1) c.rows[first_step].merged = (uint32_t)nsteps;
  for (size_t i = 0; i < nn; i++) {
    if (c.rows[i].count) vec_push(&s->ranges, c.rows[i]);
    if (c.krows[i].count) vec_push(&s->kernels, c.krows[i]);
    if (c.annots[i].count) vec_push(&s->gpu_annotations, c.annots[i]);
  }
  g_m = m;
  if (s->ranges.n) qsort(s->ranges.v, s->ranges.n, sizeof *s->ranges.v, cmp_range_row);
  if (s->gpu_annotations.n)
    qsort(s->gpu_annotations.v, s->gpu_annotations.n, sizeof *s->gpu_annotations.v, cmp_range_row);
  if (s->kernels.n) qsort(s->kernels.v, s->kernels.n, sizeof *s->kernels.v, cmp_kernel_row);
  if (s->steps.n) qsort(s->steps.v, s->steps.n, sizeof *s->steps.v, cmp_step_row);
  rankview_build(m, s);
  find_bottlenecks(m, s);
  free(c.is_step);
}

void summary_free(Summary *s) {
  vec_free(&s->ranges);
  vec_free(&s->kernels);
  vec_free(&s->gpu_annotations);
  vec_free(&s->streams);
  vec_free(&s->steps);
  vec_free(&s->ranks);
  for (size_t i = 0; i < s->bottlenecks.n; i++) {
    free(s->bottlenecks.v[i].title);
    free(s->bottlenecks.v[i].evidence);
    free(s->bottlenecks.v[i].recommendation);
  }
  vec_free(&s->bottlenecks);
  rankview_free(s);
  for (size_t i = 0; i < s->unranged.n; i++) free(s->unranged.v[i].calls);
  vec_free(&s->unranged);
}
