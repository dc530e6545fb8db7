/* stream: the summary folded while the trace is read (see stream.h). */
#include "stream.h"

#include "sink.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* Disjoint ranges kept for one pending entry whose parent may never come
 * (then they are top-level for the coverage); past this the fold gives up
 * only if no parent claims them. */
enum { PEND_TOPS = 4096, TOPS_COMPACT = 1 << 16 };

/* Segments kept apart at one depth, so that a range can claim the latest
 * ones only (stream.h): a claimer with more than SEGS children at a depth
 * where a throttled range held the ones before may find them merged. */
enum { SEGS = 32 };

/* ---- per-name tables: name -> outermost time of the name in a subtree ----
 * A dense array of pairs, searched linearly while small (most subtrees have
 * a few names), through an open-addressing index past that. Clearing costs
 * the pairs in use, not the capacity: the tables of a stack's slots are
 * reused by every subtree that passes there. */
enum { TAB_LINEAR = 8 };

typedef struct {
  uint32_t name;
  int64_t v;
} NameVal;

typedef struct {
  NameVal *e;
  uint32_t n, cap;
  uint32_t *idx; /* position + 1, 0: free; icap a power of two or 0 */
  uint32_t icap;
} NameTab;

static uint32_t tab_hash(uint32_t name) { return name * 2654435761u; }

static void tab_reindex(NameTab *t, uint32_t icap) {
  free(t->idx);
  t->idx = xcalloc(icap, sizeof *t->idx);
  t->icap = icap;
  for (uint32_t i = 0; i < t->n; i++) {
    uint32_t h = tab_hash(t->e[i].name) & (icap - 1);
    while (t->idx[h]) h = (h + 1) & (icap - 1);
    t->idx[h] = i + 1;
  }
}

static void tab_append(NameTab *t, uint32_t name) {
  if (t->n == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 4;
    t->e = xrealloc(t->e, t->cap * sizeof *t->e);
  }
  t->e[t->n++] = (NameVal){name, 0};
}

/* The value of name in t, inserted as 0 if absent. */
static int64_t *tab_slot(NameTab *t, uint32_t name) {
  if (!t->icap) {
    for (uint32_t i = 0; i < t->n; i++)
      if (t->e[i].name == name) return &t->e[i].v;
    if (t->n < TAB_LINEAR) {
      tab_append(t, name);
      return &t->e[t->n - 1].v;
    }
    tab_reindex(t, 4 * TAB_LINEAR);
  }
  if ((t->n + 1) * 2 > t->icap) tab_reindex(t, t->icap * 2);
  uint32_t mask = t->icap - 1, h = tab_hash(name) & mask;
  for (uint32_t x; (x = t->idx[h]); h = (h + 1) & mask)
    if (t->e[x - 1].name == name) return &t->e[x - 1].v;
  tab_append(t, name);
  t->idx[h] = t->n;
  return &t->e[t->n - 1].v;
}

/* Empty, capacity kept. Index slots are freed in reverse order of
 * insertion: each pair's probe chain then still holds only pairs inserted
 * before it, so it is found where it was put. */
static void tab_clear(NameTab *t) {
  if (t->icap) {
    uint32_t mask = t->icap - 1;
    for (uint32_t i = t->n; i-- > 0;) {
      uint32_t h = tab_hash(t->e[i].name) & mask;
      while (t->idx[h] != i + 1) h = (h + 1) & mask;
      t->idx[h] = 0;
    }
  }
  t->n = 0;
}

/* *dst gets both tables' sums (the smaller one's pairs added into the
 * larger); *src is left empty. */
static void tab_merge(NameTab *dst, NameTab *src) {
  if (src->n > dst->n) {
    NameTab x = *dst;
    *dst = *src;
    *src = x;
  }
  for (uint32_t i = 0; i < src->n; i++) *tab_slot(dst, src->e[i].name) += src->e[i].v;
  tab_clear(src);
}

static void tab_free(NameTab *t) {
  free(t->e);
  free(t->idx);
  memset(t, 0, sizeof *t);
}

/* ---- per-thread stacks ---- */

/* A segment: ranges at one depth that ended one after the other and whose
 * parent has not come yet (it comes later: it ends after them). */
typedef struct {
  int64_t depth;
  int64_t child;               /* their durations: the parent's children's time */
  int64_t first_ts, first_dur; /* the earliest of them */
  int64_t last_ts, last_dur;   /* the latest */
  NameTab tab;                 /* outermost time per name in their subtrees */
  VEC(Interval) tops;          /* their extents, merged where they touch (depth > 0) */
  bool tops_over;              /* more than PEND_TOPS of them */
} Pend;

typedef struct {
  Pend *v;
  size_t n, cap; /* slots past n are empty with their memory kept */
  int64_t last_end;
  bool used;
} Stack;

typedef VEC(RangeRow) Rows;

typedef struct {
  EvSink sink; /* first: the callbacks get the Fold */
  Model *m;
  Summary *s;
  const char *why;
  Rows rows, annots;          /* by name id, grown as names come */
  VEC(uint8_t) step;          /* by name id: 0 not known yet, 1 no, 2 a step */
  NameTab scratch;
  /* the trace being read */
  size_t ti;
  VEC(Stack) threads;
  VEC(Interval) tops;         /* its top-level ranges so far */
  size_t tops_compact;        /* compact tops when it gets this long */
  uint64_t nest, async;       /* nesting ranges, start/end ranges */
  size_t steps_from;          /* its first row in Summary.steps */
  VEC(uint32_t) step_thread;  /* the thread of each of its step rows */
  int64_t cpu_first, cpu_last;
} Fold;

static int give_up(EvSink *k, const char *why) {
  Fold *f = (Fold *)k;
  if (!f->why) f->why = why;
  return -1;
}

static RangeRow *row_of(Rows *rows, uint32_t name) {
  if (name >= rows->n) {
    vec_grow(rows, (size_t)name + 1);
    memset(rows->v + rows->n, 0, ((size_t)name + 1 - rows->n) * sizeof *rows->v);
    rows->n = (size_t)name + 1;
  }
  return &rows->v[name];
}

static bool is_step(Fold *f, uint32_t name) {
  if (name >= f->step.n) {
    vec_grow(&f->step, (size_t)name + 1);
    memset(f->step.v + f->step.n, 0, (size_t)name + 1 - f->step.n);
    f->step.n = (size_t)name + 1;
  }
  if (!f->step.v[name]) f->step.v[name] = fnmatch(f->s->opt.step_glob, intern_str(&f->m->names, name), 0) ? 1 : 2;
  return f->step.v[name] == 2;
}

static int cmp_iv(const void *pa, const void *pb) {
  const Interval *a = pa, *b = pb;
  return a->a < b->a ? -1 : a->a > b->a;
}

/* A top-level range of the trace: merged into the last one if they touch
 * (the coverage needs their union, its first start and last end); the list
 * is compacted (sorted, touching ones merged) when it doubles, so that it
 * holds about the union's pieces, not the ranges. */
static void tops_add(Fold *f, int64_t a, int64_t b) {
  Interval *l = f->tops.n ? &f->tops.v[f->tops.n - 1] : NULL;
  if (l && a <= l->b && b >= l->a) {
    if (a < l->a) l->a = a;
    if (b > l->b) l->b = b;
    return;
  }
  vec_push(&f->tops, ((Interval){a, b}));
  if (f->tops.n < f->tops_compact) return;
  qsort(f->tops.v, f->tops.n, sizeof *f->tops.v, cmp_iv);
  size_t k = 0;
  for (size_t i = 1; i < f->tops.n; i++) {
    Interval *c = &f->tops.v[k];
    if (f->tops.v[i].a <= c->b) {
      if (f->tops.v[i].b > c->b) c->b = f->tops.v[i].b;
    } else {
      f->tops.v[++k] = f->tops.v[i];
    }
  }
  f->tops.n = k + 1;
  f->tops_compact = 2 * f->tops.n > TOPS_COMPACT ? 2 * f->tops.n : TOPS_COMPACT;
}

static void pend_top(Pend *p, int64_t a, int64_t b) {
  if (p->tops.n && a <= p->tops.v[p->tops.n - 1].b) {
    if (b > p->tops.v[p->tops.n - 1].b) p->tops.v[p->tops.n - 1].b = b;
  } else if (p->tops.n < PEND_TOPS) {
    vec_push(&p->tops, ((Interval){a, b}));
  } else {
    p->tops_over = true;
  }
}

static Pend *stack_push(Stack *st) {
  if (st->n == st->cap) {
    size_t cap = st->cap ? st->cap * 2 : 16;
    st->v = xrealloc(st->v, cap * sizeof *st->v);
    memset(st->v + st->cap, 0, (cap - st->cap) * sizeof *st->v);
    st->cap = cap;
  }
  return &st->v[st->n++];
}

/* ---- the sink ---- */

static void fold_trace_begin(EvSink *k, Trace *t) {
  Fold *f = (Fold *)k;
  (void)t;
  f->ti = f->m->traces.n - 1;
  f->tops.n = 0;
  f->tops_compact = TOPS_COMPACT;
  f->nest = f->async = 0;
  f->steps_from = f->s->steps.n;
  f->step_thread.n = 0;
  f->cpu_first = INT64_MAX;
  f->cpu_last = INT64_MIN;
}

static const char *const NOT_NESTED = "ranges whose depths do not give the nesting their times give";

/* Entry c's ranges all start inside range e and sort after it in the
 * in-memory walk (by start, longer first): its children. A zero-length
 * range has none. (They end no later than e: the end order.) */
static bool inside(const Pend *c, const Ev *e) {
  return c->last_ts < e->ts + e->dur && (c->first_ts > e->ts || (c->first_ts == e->ts && c->first_dur < e->dur));
}

/* Entry c's ranges all end before e starts, and the walk pops them before
 * it comes (a zero-length one at e's start sorts after e if e is longer). */
static bool before(const Pend *c, const Ev *e) {
  return c->last_ts + c->last_dur <= e->ts && !(c->last_dur == 0 && c->last_ts == e->ts && e->dur > 0);
}

/* The later entry b into the earlier one a (both pending under the same
 * parent-to-be). */
static void pend_merge(Pend *a, Pend *b) {
  a->child += b->child;
  a->last_ts = b->last_ts;
  a->last_dur = b->last_dur;
  tab_merge(&a->tab, &b->tab);
  for (size_t q = 0; q < b->tops.n; q++) pend_top(a, b->tops.v[q].a, b->tops.v[q].b);
  a->tops_over |= b->tops_over;
  b->tops.n = 0;
  b->tops_over = false;
}

/* A range of the nesting (not start/end), in its thread's end order.
 *
 * The stack's entries are segments (consecutive ranges at one depth whose
 * parent has not come), depths not decreasing upwards, earlier downwards.
 * The range claims, from the top, the segments deeper than it that lie
 * inside it (its children: whatever depths throttled ranges left out); it
 * must come after the segment then on top. A segment its claimer only
 * partly contains is a nesting the depths cannot tell: given up. */
static int fold_range(Fold *f, const Ev *e, int64_t depth) {
  Summary *s = f->s;
  if (e->thread >= f->threads.n) {
    vec_grow(&f->threads, (size_t)e->thread + 1);
    memset(f->threads.v + f->threads.n, 0, ((size_t)e->thread + 1 - f->threads.n) * sizeof *f->threads.v);
    f->threads.n = (size_t)e->thread + 1;
  }
  Stack *st = &f->threads.v[e->thread];
  int64_t end = e->ts + e->dur;
  if (st->used && end < st->last_end) return give_up(&f->sink, "ranges not in the order they end");
  st->used = true;
  st->last_end = end;
  /* its children */
  NameTab *T = &f->scratch;
  int64_t child = 0;
  while (st->n && st->v[st->n - 1].depth > depth && inside(&st->v[st->n - 1], e)) {
    Pend *c = &st->v[--st->n];
    child += c->child;
    tab_merge(T, &c->tab);
    c->tops.n = 0;
    c->tops_over = false;
  }
  if (st->n && !before(&st->v[st->n - 1], e)) {
    tab_clear(T);
    return give_up(&f->sink, NOT_NESTED);
  }
  RangeRow *r = row_of(&f->rows, e->name);
  r->name = e->name;
  r->kinds |= 1u << e->kind;
  r->count++;
  int64_t excl = e->dur - child;
  if (excl < 0) excl = 0;
  r->excl += excl;
  s->range_excl_total += excl;
  summary_rank_range(s, f->ti, e->name, excl);
  r->sum += e->dur;
  if (e->dur > r->max) r->max = e->dur;
  /* outermost instances only: what its subtree counted for its name was
   * counted by the outermost instances below it, which it now contains */
  int64_t *own = tab_slot(T, e->name);
  r->incl += e->dur - *own;
  *own = e->dur;
  if (e->dur == 0) s->zero_ranges++;
  if (is_step(f, e->name)) {
    StepRow sr = {f->ti, e->name, e->ts, e->dur, 0};
    vec_push(&s->steps, sr);
    vec_push(&f->step_thread, e->thread);
  }
  if (e->ts < f->cpu_first) f->cpu_first = e->ts;
  if (end > f->cpu_last) f->cpu_last = end;
  f->nest++;
  /* the entries left deeper than it: the ranges that claim them are
   * shallower than it (one at its depth or deeper would contain it), so
   * they move to its depth, each still a segment of its own: a claimer may
   * take only the latest segments of a depth (a throttled range held the
   * earlier ones) */
  for (size_t i = st->n; i-- > 0 && st->v[i].depth > depth;) st->v[i].depth = depth;
  if (depth == 0) {
    /* nothing claims depth 0: the whole stack is top-level, and only its
     * last range matters to what comes next */
    for (size_t i = 0; i < st->n; i++) {
      Pend *q = &st->v[i];
      for (size_t k = 0; k < q->tops.n; k++) tops_add(f, q->tops.v[k].a, q->tops.v[k].b);
      q->tops.n = 0;
      q->tops_over = false;
      tab_clear(&q->tab);
    }
    tab_clear(T);
    tops_add(f, e->ts, end);
    st->n = 0;
  }
  Pend *p = stack_push(st);
  p->depth = depth;
  p->child = e->dur;
  p->first_ts = p->last_ts = e->ts;
  p->first_dur = p->last_dur = e->dur;
  p->tops.n = 0;
  p->tops_over = false;
  if (depth == 0) return 0;
  tab_merge(&p->tab, T);
  pend_top(p, e->ts, end);
  /* at most 2 SEGS segments at one depth: past that the oldest SEGS + 1
   * become one (a claimer can still split among the SEGS latest) */
  if (st->n >= 2 * SEGS && st->v[st->n - 2 * SEGS].depth == depth) {
    size_t b = st->n - 2 * SEGS;
    for (size_t i = b + 1; i <= b + SEGS; i++) pend_merge(&st->v[b], &st->v[i]);
    for (size_t i = b + SEGS + 1; i < st->n; i++) {
      Pend x = st->v[i - SEGS]; /* swapped, not copied: each slot owns its memory */
      st->v[i - SEGS] = st->v[i];
      st->v[i] = x;
    }
    st->n -= SEGS;
  }
  return 0;
}

static int fold_event(EvSink *k, Trace *t, const Ev *e, int64_t depth) {
  Fold *f = (Fold *)k;
  (void)t;
  if (kind_is_gpu_op(e->kind) || e->kind == K_CUDA_RUNTIME || e->kind == K_CUDA_DRIVER)
    return give_up(k, "GPU ops or CUDA runtime calls");
  if (e->kind == K_GPU_USER_ANNOTATION) {
    RangeRow *r = row_of(&f->annots, e->name);
    r->name = e->name;
    r->count++;
    r->incl += e->dur;
    if (e->dur > r->max) r->max = e->dur;
    return 0;
  }
  if (!kind_is_cpu_range(e->kind)) return 0;
  if (e->flags & EV_ASYNC) {
    range_row_async(row_of(&f->rows, e->name), e);
    f->s->async_ranges++;
    f->async++;
    tops_add(f, e->ts, e->ts + e->dur);
    return 0;
  }
  if (depth < 0) return give_up(k, "ranges without \"depth\" (not written by ncrt)");
  return fold_range(f, e, depth);
}

/* The trace's step rows in the in-memory walk's order: thread by thread
 * (the fold has them in the file's order, threads interleaved), each
 * thread's in the order they end. Rows with equal starts then tie in
 * summary_finish's sort the same way on both paths. */
static __thread const uint32_t *g_thread; /* qsort has no context argument in C11; a thread's own (partial.h) */
static int cmp_step_thread(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (g_thread[a] != g_thread[b]) return g_thread[a] < g_thread[b] ? -1 : 1;
  return a < b ? -1 : a > b;
}

static void order_steps(Fold *f) {
  size_t n = f->step_thread.n;
  bool sorted = true;
  for (size_t i = 1; i < n && sorted; i++) sorted = f->step_thread.v[i - 1] <= f->step_thread.v[i];
  if (sorted) return;
  uint32_t *idx = xmalloc(n * sizeof *idx);
  StepRow *rows = xmalloc(n * sizeof *rows);
  for (size_t i = 0; i < n; i++) idx[i] = (uint32_t)i;
  g_thread = f->step_thread.v;
  qsort(idx, n, sizeof *idx, cmp_step_thread);
  StepRow *at = f->s->steps.v + f->steps_from;
  for (size_t i = 0; i < n; i++) rows[i] = at[idx[i]];
  memcpy(at, rows, n * sizeof *rows);
  free(idx);
  free(rows);
}

static int fold_trace_end(EvSink *k, Trace *t) {
  Fold *f = (Fold *)k;
  int rc = 0;
  for (size_t i = 0; i < f->threads.n; i++) {
    Stack *st = &f->threads.v[i];
    if (st->used && i < t->threads.n && t->threads.v[i].lane_of >= 0 && !rc)
      rc = give_up(k, "ranges on a start/end lane");
    /* entries no parent claimed: top-level (their parents were not recorded) */
    for (size_t j = 0; j < st->n; j++) {
      Pend *p = &st->v[j];
      if (p->tops_over && !rc) rc = give_up(k, "many ranges under a parent that was not recorded");
      for (size_t q = 0; q < p->tops.n && !rc; q++) tops_add(f, p->tops.v[q].a, p->tops.v[q].b);
      tab_clear(&p->tab);
      p->tops.n = 0;
      p->tops_over = false;
    }
    st->n = 0;
    st->used = false;
  }
  if (rc) return rc;
  order_steps(f);
  RankRow rr;
  rank_row_init(&rr, t, f->ti); /* now: the process's metadata follows the events */
  rr.ranges = f->nest + f->async;
  rr.cpu_first = f->nest ? f->cpu_first : 0;
  rr.cpu_last = f->nest ? f->cpu_last : 0;
  rr.gpu_first = rr.gpu_last = 0;
  summary_add_rank(f->s, t, &rr, false, f->tops.v, f->tops.n);
  return 0;
}

int stream_fold(Model *m, const char *const *paths, size_t n, const SummaryOptions *opt, Summary *s, SumParts *p,
                const char **why) {
  memset(s, 0, sizeof *s);
  memset(p, 0, sizeof *p);
  s->opt = *opt;
  s->wait_name = -1;
  Fold f = {.sink = {fold_trace_begin, fold_event, fold_trace_end, give_up}, .m = m, .s = s};
  m->sink = &f.sink;
  int rc = 1;
  for (size_t i = 0; i < n && rc == 1; i++)
    if (model_load(m, paths[i]) < 0) rc = f.why ? 0 : -1;
  m->sink = NULL;
  if (rc == 1) {
    size_t nn = intern_count(&m->names);
    if (nn) {
      row_of(&f.rows, (uint32_t)nn - 1);
      row_of(&f.annots, (uint32_t)nn - 1);
    }
    /* the rows become the caller's (f.rows.n may exceed nn: never less) */
    *p = (SumParts){f.rows.v, f.annots.v, xcalloc(nn ? nn : 1, sizeof(KernelRow)), nn};
    if (!nn) {
      p->rows = xcalloc(1, sizeof(RangeRow));
      p->annots = xcalloc(1, sizeof(RangeRow));
    }
    f.rows = (Rows){0};
    f.annots = (Rows){0};
  } else {
    summary_free(s);
    memset(s, 0, sizeof *s);
  }
  *why = f.why;
  for (size_t i = 0; i < f.threads.n; i++) {
    Stack *st = &f.threads.v[i];
    for (size_t j = 0; j < st->cap; j++) {
      tab_free(&st->v[j].tab);
      vec_free(&st->v[j].tops);
    }
    free(st->v);
  }
  vec_free(&f.threads);
  vec_free(&f.tops);
  vec_free(&f.rows);
  vec_free(&f.annots);
  vec_free(&f.step);
  vec_free(&f.step_thread);
  tab_free(&f.scratch);
  return rc;
}

int stream_summary(Model *m, const char *const *paths, size_t n, const SummaryOptions *opt, Summary *s,
                   const char **why) {
  SumParts p;
  int rc = stream_fold(m, paths, n, opt, s, &p, why);
  if (rc == 1) summary_finish(m, s, p.rows, p.annots, p.krows, p.nn);
  sumparts_free(&p);
  return rc;
}
