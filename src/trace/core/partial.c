/* partial: a summary's state, folded a trace at a time on two threads,
 * merged, written and read back (partial.h). */
#include "partial.h"

#include "reader.h"
#include "stream.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- merging ---- */

static uint64_t u64_sat(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

static void row_add(RangeRow *a, const RangeRow *b, uint32_t name) {
  a->name = name;
  range_row_add(a, b);
}

static void krow_add(KernelRow *a, const KernelRow *b, uint32_t name) {
  if (!b->count) return;
  if (!a->count) {
    *a = *b;
    a->name = name;
    return;
  }
  /* Chan et al.: the two runs' means and squared deviations as one */
  double na = (double)a->count, nb = (double)b->count, n = na + nb, d = b->mean - a->mean;
  a->mean += d * nb / n;
  a->m2 += b->m2 + d * d * na * nb / n;
  a->count = u64_sat(a->count, b->count);
  a->total = i64_sat(a->total, b->total);
  if (b->min < a->min) a->min = b->min;
  if (b->max > a->max) a->max = b->max;
}

static void grow_parts(SumParts *p, size_t nn) {
  if (nn <= p->nn && p->rows) return;
  size_t old = p->rows ? p->nn : 0, cap = nn ? nn : 1;
  p->rows = xrealloc(p->rows, cap * sizeof *p->rows);
  p->annots = xrealloc(p->annots, cap * sizeof *p->annots);
  p->krows = xrealloc(p->krows, cap * sizeof *p->krows);
  memset(p->rows + old, 0, (cap - old) * sizeof *p->rows);
  memset(p->annots + old, 0, (cap - old) * sizeof *p->annots);
  memset(p->krows + old, 0, (cap - old) * sizeof *p->krows);
  p->nn = nn;
}

/* the five worst launch delays, as keep_worst (analyze.c) keeps them: b's
 * come after a's (later traces), so an equal delay stays behind */
static void worst_add(LaunchStats *a, const LaunchStats *b, size_t off, const uint32_t *names) {
  for (size_t i = 0; i < b->nworst; i++) {
    size_t n = a->nworst;
    int64_t delay = b->worst[i].delay;
    if (n == 5 && delay <= a->worst[4].delay) continue;
    size_t at = n < 5 ? n : 4;
    while (at > 0 && a->worst[at - 1].delay < delay) {
      if (at < 5) a->worst[at] = a->worst[at - 1];
      at--;
    }
    a->worst[at] = b->worst[i];
    a->worst[at].trace += off;
    a->worst[at].name = names[b->worst[i].name];
    if (n < 5) a->nworst++;
  }
}

/* the ranks' main processes with distinct ranks, as summary_add_rank counts them */
static size_t distinct_ranks(const Summary *s) {
  size_t n = 0;
  for (size_t i = 0; i < s->ranks.n; i++) {
    const RankRow *r = &s->ranks.v[i];
    bool seen = !r->is_rank;
    for (size_t k = 0; !seen && k < i; k++) seen = s->ranks.v[k].is_rank && s->ranks.v[k].rank == r->rank;
    n += !seen;
  }
  return n;
}

void sumstate_merge(SumState *into, SumState *from) {
  size_t off = into->m.traces.n, bnn = from->p.nn;
  uint32_t *names = model_adopt(&into->m, &from->m);
  grow_parts(&into->p, intern_count(&into->m.names));
  for (size_t i = 0; i < bnn; i++) {
    if (from->p.rows[i].count) row_add(&into->p.rows[names[i]], &from->p.rows[i], names[i]);
    if (from->p.annots[i].count) row_add(&into->p.annots[names[i]], &from->p.annots[i], names[i]);
    krow_add(&into->p.krows[names[i]], &from->p.krows[i], names[i]);
  }
  Summary *a = &into->s, *b = &from->s;
  for (size_t i = 0; i < b->steps.n; i++) {
    StepRow r = b->steps.v[i];
    r.trace += off;
    r.name = names[r.name];
    vec_push(&a->steps, r);
  }
  for (size_t i = 0; i < b->ranks.n; i++) {
    RankRow r = b->ranks.v[i];
    r.trace += off;
    if (into->m.traces.v[r.trace]->rank < 0) r.rank = (int64_t)r.trace; /* the file's position (rank_row_init) */
    vec_push(&a->ranks, r);
  }
  a->nranks = distinct_ranks(a);
  for (size_t i = 0; i < b->streams.n; i++) {
    StreamRow r = b->streams.v[i];
    r.trace += off;
    vec_push(&a->streams, r);
  }
  for (size_t i = 0; i < b->rank_excl.cap; i++) {
    int64_t k = b->rank_excl.keys[i];
    if (k == INT64_MIN) continue;
    uint64_t trace = (uint64_t)k >> 32, name = (uint64_t)k & 0xffffffffu;
    int64_t key = (int64_t)((trace + off) << 32 | names[name]), have = 0;
    i64map_get(&a->rank_excl, key, &have);
    i64map_put(&a->rank_excl, key, i64_sat(have, b->rank_excl.vals[i]));
  }
  LaunchStats *la = &a->launch, *lb = &b->launch;
  la->count = u64_sat(la->count, lb->count), la->cpu_outliers = u64_sat(la->cpu_outliers, lb->cpu_outliers);
  la->delay_outliers = u64_sat(la->delay_outliers, lb->delay_outliers);
  la->unmatched = u64_sat(la->unmatched, lb->unmatched), la->cpu_total = i64_sat(la->cpu_total, lb->cpu_total);
  la->delay_total = i64_sat(la->delay_total, lb->delay_total);
  la->delay_outlier_total = i64_sat(la->delay_outlier_total, lb->delay_outlier_total);
  if (lb->cpu_max > la->cpu_max) la->cpu_max = lb->cpu_max;
  if (lb->delay_max > la->delay_max) la->delay_max = lb->delay_max;
  worst_add(la, lb, off, names);
  for (int k = 0; k < COPY_KINDS; k++) {
    CopyRow *x = &a->copies[k], *y = &b->copies[k];
    x->count = u64_sat(x->count, y->count), x->unknown_bytes = u64_sat(x->unknown_bytes, y->unknown_bytes);
    x->pageable = u64_sat(x->pageable, y->pageable), x->bytes = i64_sat(x->bytes, y->bytes);
    x->time = i64_sat(x->time, y->time);
  }
  a->sync_calls = u64_sat(a->sync_calls, b->sync_calls), a->sync_copies = u64_sat(a->sync_copies, b->sync_copies);
  a->sync_time = i64_sat(a->sync_time, b->sync_time), a->sync_copy_time = i64_sat(a->sync_copy_time, b->sync_copy_time);
  a->clipped = u64_sat(a->clipped, b->clipped), a->unattributed_gpu = u64_sat(a->unattributed_gpu, b->unattributed_gpu);
  a->zero_ranges = u64_sat(a->zero_ranges, b->zero_ranges);
  a->stream_overlaps = u64_sat(a->stream_overlaps, b->stream_overlaps);
  a->async_ranges = u64_sat(a->async_ranges, b->async_ranges);
  a->range_excl_total = i64_sat(a->range_excl_total, b->range_excl_total);
  a->kernel_total = i64_sat(a->kernel_total, b->kernel_total);
  a->kernel_count = u64_sat(a->kernel_count, b->kernel_count);
  a->tiny_kernels = u64_sat(a->tiny_kernels, b->tiny_kernels);
  a->tiny_launch_cpu = i64_sat(a->tiny_launch_cpu, b->tiny_launch_cpu);
  if (!into->env) into->env = from->env, from->env = NULL;
  if (!into->mem_why) into->mem_why = from->mem_why;
  free(names);
  summary_free(b);
  sumparts_free(&from->p);
  free(from->env);
  memset(from, 0, sizeof *from);
}

/* ---- run-directory order ---- */

static const char *base_of(const char *path) {
  const char *b = strrchr(path, '/');
  return b ? b + 1 : path;
}

typedef struct {
  const char *name;
  size_t at;
} Key;

static int cmp_key(const void *pa, const void *pb) {
  const Key *a = pa, *b = pb;
  int c = trace_name_cmp(a->name, b->name);
  return c ? c : a->at < b->at ? -1 : a->at > b->at;
}

/* rows[0..n) (each size bytes, a size_t trace index at trace_at) given
 * their trace's new index and put in that order, keeping their order
 * within a trace: a counting sort, linear in the rows */
static void regroup(void *rows, size_t n, size_t size, size_t trace_at, const size_t *newof, size_t ntraces) {
  if (!n) return;
  char *v = rows, *out = xmalloc(n * size);
  size_t *at = xcalloc(ntraces + 1, sizeof *at), t;
  for (size_t j = 0; j < n; j++) {
    memcpy(&t, v + j * size + trace_at, sizeof t);
    t = newof[t];
    memcpy(v + j * size + trace_at, &t, sizeof t);
    at[t + 1]++;
  }
  for (size_t i = 0; i < ntraces; i++) at[i + 1] += at[i];
  for (size_t j = 0; j < n; j++) {
    memcpy(&t, v + j * size + trace_at, sizeof t);
    memcpy(out + at[t]++ * size, v + j * size, size);
  }
  memcpy(v, out, n * size);
  free(out);
  free(at);
}

void sumstate_sort(SumState *st) {
  size_t n = st->m.traces.n;
  Summary *s = &st->s;
  if (n < 2 || s->ranks.n != n) return;
  Key *k = xmalloc(n * sizeof *k);
  for (size_t i = 0; i < n; i++) k[i] = (Key){base_of(st->m.traces.v[i]->path), i};
  qsort(k, n, sizeof *k, cmp_key);
  size_t *newof = xmalloc(n * sizeof *newof);
  Trace **tv = xmalloc(n * sizeof *tv);
  RankRow *rv = xmalloc(n * sizeof *rv);
  for (size_t i = 0; i < n; i++) {
    newof[k[i].at] = i;
    tv[i] = st->m.traces.v[k[i].at];
    rv[i] = s->ranks.v[k[i].at];
    rv[i].trace = i;
    if (tv[i]->rank < 0) rv[i].rank = (int64_t)i; /* the file's position (rank_row_init) */
  }
  memcpy(st->m.traces.v, tv, n * sizeof *tv);
  memcpy(s->ranks.v, rv, n * sizeof *rv);
  /* steps and streams: by their trace's new place, in their order within it */
  regroup(s->steps.v, s->steps.n, sizeof *s->steps.v, offsetof(StepRow, trace), newof, n);
  regroup(s->streams.v, s->streams.n, sizeof *s->streams.v, offsetof(StreamRow, trace), newof, n);
  I64Map ex = {0};
  for (size_t i = 0; i < s->rank_excl.cap; i++) {
    int64_t key = s->rank_excl.keys[i];
    if (key == INT64_MIN) continue;
    uint64_t t = (uint64_t)key >> 32, name = (uint64_t)key & 0xffffffffu;
    i64map_put(&ex, (int64_t)((uint64_t)newof[t] << 32 | name), s->rank_excl.vals[i]);
  }
  i64map_free(&s->rank_excl);
  s->rank_excl = ex;
  /* the worst launches: by delay, ties by trace, then start (keep_worst's order) */
  LaunchStats *l = &s->launch;
  for (size_t i = 0; i < l->nworst; i++) l->worst[i].trace = newof[l->worst[i].trace];
  for (size_t i = 1; i < l->nworst; i++)
    for (size_t j = i; j > 0; j--) {
      __typeof__(l->worst[0]) *x = &l->worst[j - 1], *y = &l->worst[j];
      bool after = x->delay < y->delay || (x->delay == y->delay && (x->trace > y->trace ||
                                                                    (x->trace == y->trace && x->ts > y->ts)));
      if (!after) break;
      __typeof__(l->worst[0]) tmp = *x;
      *x = *y, *y = tmp;
    }
  free(k), free(newof), free(tv), free(rv);
}

void sumstate_finish(SumState *st) {
  grow_parts(&st->p, intern_count(&st->m.names));
  summary_finish(&st->m, &st->s, st->p.rows, st->p.annots, st->p.krows, st->p.nn);
}

void sumstate_free(SumState *st) {
  summary_free(&st->s);
  sumparts_free(&st->p);
  model_free(&st->m);
  free(st->env);
  memset(st, 0, sizeof *st);
}

/* ---- folding ---- */

static void state_init(SumState *st, const SummaryOptions *opt, bool strict) {
  memset(st, 0, sizeof *st);
  st->m.strict = strict;
  st->s.opt = *opt;
  st->s.wait_name = -1;
}

/* One trace file into st (empty before): streamed, else in memory (its
 * events freed once folded). */
static int fold_one(SumState *st, const char *path, const SummaryOptions *opt, bool strict, bool stream) {
  if (stream) {
    const char *why = NULL;
    int r = stream_fold(&st->m, &path, 1, opt, &st->s, &st->p, &why);
    if (r < 0) return -1;
    if (r == 1) return 0;
    model_free(&st->m);
    summary_free(&st->s);
    state_init(st, opt, strict);
    st->mem_why = why;
  } else {
    st->mem_why = "NCTRACE_STREAM=0";
  }
  if (model_load(&st->m, path) < 0) return -1;
  summary_fold(&st->m, opt, &st->s, &st->p);
  for (size_t i = 0; i < st->m.traces.n; i++) vec_free(&st->m.traces.v[i]->ev);
  return 0;
}

typedef struct {
  const char *const *paths;
  size_t n;
  const SummaryOptions *opt;
  bool strict, stream, worker;
  SumState st;
  Buf said;
  int rc;
  pthread_t th;
} Share;

static void *fold_share(void *arg) {
  Share *sh = arg;
  Buf *said = nct_capture;
  bool alone = trace_one_thread;
  if (sh->worker) { /* (this thread may be the caller's: put back after) */
    nct_capture = &sh->said;
    trace_one_thread = true;
  }
  state_init(&sh->st, sh->opt, sh->strict);
  for (size_t i = 0; i < sh->n && !sh->rc; i++) {
    SumState one;
    state_init(&one, sh->opt, sh->strict);
    if (fold_one(&one, sh->paths[i], sh->opt, sh->strict, sh->stream) < 0) {
      sh->rc = -1;
      sumstate_free(&one);
    } else {
      sumstate_merge(&sh->st, &one);
    }
  }
  nct_capture = said;
  trace_one_thread = alone;
  return NULL;
}

typedef VEC(char *) Paths;

/* paths with run directories expanded into their traces */
static int expand(const char *const *paths, size_t n, Paths *out) {
  for (size_t i = 0; i < n; i++) {
    struct stat sb;
    if (stat(paths[i], &sb) == 0 && S_ISDIR(sb.st_mode)) {
      char **files;
      int k = trace_dir_files(paths[i], &files);
      if (k < 0) return -1;
      for (int j = 0; j < k; j++) vec_push(out, files[j]);
      free(files);
    } else {
      vec_push(out, xstrdup(paths[i]));
    }
  }
  return 0;
}

static uint64_t file_size(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

int sumstate_fold(SumState *st, const char *const *paths, size_t n, const SummaryOptions *opt, bool strict,
                  bool stream, bool keep_events, unsigned threads) {
  state_init(st, opt, strict);
  if (keep_events) {
    for (size_t i = 0; i < n; i++)
      if (model_load(&st->m, paths[i]) < 0) return -1;
    summary_fold(&st->m, opt, &st->s, &st->p);
    st->mem_why = "the events are kept";
    return 0;
  }
  if (!threads) { /* the whole set as one fold: what the merged folds are tested against */
    const char *why = NULL;
    int r = stream ? stream_fold(&st->m, paths, n, opt, &st->s, &st->p, &why) : 0;
    if (r < 0) return -1;
    if (r == 1) return 0;
    model_free(&st->m);
    state_init(st, opt, strict);
    st->mem_why = stream ? why : "NCTRACE_STREAM=0";
    for (size_t i = 0; i < n; i++)
      if (model_load(&st->m, paths[i]) < 0) return -1;
    summary_fold(&st->m, opt, &st->s, &st->p);
    return 0;
  }
  Paths files = {0};
  int rc = expand(paths, n, &files);
  if (threads < 1) threads = 1;
  if (threads > files.n) threads = files.n ? (unsigned)files.n : 1;
  /* contiguous shares of about equal bytes: merged in order, the traces
   * keep the order one reader gives them */
  Share sh[8];
  if (threads > 8) threads = 8;
  uint64_t total = 0, acc = 0;
  for (size_t i = 0; i < files.n; i++) total += file_size(files.v[i]);
  size_t from = 0;
  for (unsigned k = 0; k < threads; k++) {
    size_t to = from;
    if (k + 1 == threads) to = files.n;
    else
      while (to < files.n && (to == from || acc + file_size(files.v[to]) / 2 <= total * (k + 1) / threads)) {
        acc += file_size(files.v[to]);
        to++;
      }
    if (files.n - to < threads - k - 1) to = files.n - (threads - k - 1); /* one file at least each */
    memset(&sh[k], 0, sizeof sh[k]);
    sh[k].paths = (const char *const *)files.v + from, sh[k].n = to - from, sh[k].opt = opt;
    sh[k].strict = strict, sh[k].stream = stream, sh[k].worker = threads > 1;
    from = to;
  }
  if (!rc) {
    unsigned started = 0;
    for (unsigned k = 1; k < threads; k++, started++)
      if (pthread_create(&sh[k].th, NULL, fold_share, &sh[k])) break;
    fold_share(&sh[0]); /* this thread's share: the first */
    for (unsigned k = 1; k <= started; k++) pthread_join(sh[k].th, NULL);
    for (unsigned k = started + 1; k < threads; k++) {
      sh[k].worker = false;
      fold_share(&sh[k]); /* no thread for it: here */
    }
    state_init(st, opt, strict);
    for (unsigned k = 0; k < threads; k++) {
      nct_replay(&sh[k].said);
      buf_free(&sh[k].said);
      if (sh[k].rc) rc = -1;
      sumstate_merge(st, &sh[k].st);
    }
  }
  for (size_t i = 0; i < files.n; i++) free(files.v[i]);
  vec_free(&files);
  return rc;
}

/* ---- the file ---- */

#define MAGIC "nctrace-partial 1\n"

static void put_str(Buf *b, const char *s, size_t n) {
  if (!s) {
    buf_putc(b, '-');
    return;
  }
  buf_putc(b, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') buf_printf(b, "\\%c", c);
    else if (c < 0x20 || c == 0x7f) buf_printf(b, "\\x%02x", c);
    else buf_putc(b, (char)c);
  }
  buf_putc(b, '"');
}
static void put_cstr(Buf *b, const char *s) { put_str(b, s, s ? strlen(s) : 0); }

static void put_row(Buf *b, char tag, const RangeRow *r) {
  buf_printf(b, "%c %u %u %llu %lld %lld %lld %lld %lld %lld\n", tag, r->name, r->kinds, (unsigned long long)r->count,
             (long long)r->incl, (long long)r->excl, (long long)r->gpu, (long long)r->sum, (long long)r->max,
             (long long)r->async_excl);
}

#define LL(x) ((long long)(x))

void sumstate_write(const SumState *st, Buf *b) {
  const Model *m = &st->m;
  const Summary *s = &st->s;
  buf_puts(b, MAGIC);
  buf_puts(b, "glob ");
  put_cstr(b, s->opt.step_glob);
  buf_putc(b, '\n');
  if (st->env) {
    buf_puts(b, "env ");
    put_cstr(b, st->env);
    buf_putc(b, '\n');
  }
  for (size_t i = 0; i < intern_count(&m->names); i++) {
    buf_puts(b, "n ");
    put_str(b, intern_str(&m->names, (uint32_t)i), m->names.len.v[i]);
    buf_putc(b, '\n');
  }
  for (size_t i = 0; i < intern_count(&m->ids); i++) {
    buf_puts(b, "i ");
    put_str(b, intern_str(&m->ids, (uint32_t)i), m->ids.len.v[i]);
    buf_putc(b, '\n');
  }
  for (size_t ti = 0; ti < m->traces.n; ti++) {
    const Trace *t = m->traces.v[ti];
    buf_puts(b, "t ");
    put_cstr(b, t->path);
    buf_printf(b, " %d %lld %lld %d %lld %lld %lld\n", t->legacy, LL(t->rank), LL(t->world_size), t->has_base,
               LL(t->base_ns), LL(t->budget_bytes), LL(t->budget_hit_ts));
    for (size_t i = 0; i < t->threads.n; i++) {
      const Thread *h = &t->threads.v[i];
      buf_printf(b, "th %u %u %lld %d %lld\n", h->pid, h->tid, LL(h->label), h->gpu, LL(h->lane_of));
    }
    for (size_t i = 0; i < t->process_label.cap; i++)
      if (t->process_label.keys[i] != INT64_MIN)
        buf_printf(b, "pl %lld %lld\n", LL(t->process_label.keys[i]), LL(t->process_label.vals[i]));
    const LoadNotes *no = &t->notes;
    buf_printf(b, "nt %lld %lld ", LL(no->events), LL(no->malformed));
    put_cstr(b, no->first_malformed);
    buf_printf(b, " %lld ", LL(no->negative));
    put_cstr(b, no->first_negative);
    buf_printf(b, " %lld %lld %lld %lld %lld\n", LL(no->unknown_cat), LL(no->unmatched_end), LL(no->unclosed_begin),
               LL(no->ignored_ph), LL(no->cuda_sync));
    for (size_t i = 0; i < no->unknown_cats.n; i++) buf_printf(b, "uc %u\n", no->unknown_cats.v[i]);
    for (size_t i = 0; i < t->throttled.n; i++) {
      const Throttled *h = &t->throttled.v[i];
      buf_printf(b, "tt %u %lld %lld %.17g %lld %lld %lld %lld %lld %lld %d\n", h->name, LL(h->calls),
                 LL(h->total_calls), h->avg_us, LL(h->from_ts), LL(h->tid), LL(h->u_calls), LL(h->u_incl),
                 LL(h->u_excl), LL(h->u_sum), h->measured);
    }
    for (size_t i = 0; i < t->hidden.n; i++) buf_printf(b, "hd %u %lld\n", t->hidden.v[i].name, LL(t->hidden.v[i].ns));
    const ProcInfo *p = &t->proc;
    buf_printf(b, "pr %d %d %lld %lld ", p->known, p->is_rank, LL(p->pid), LL(p->ppid));
    const char *ps[] = {p->start, p->role, p->detail, p->host, p->host_name};
    for (int i = 0; i < 5; i++) {
      put_cstr(b, ps[i]);
      buf_putc(b, i < 4 ? ' ' : '\n');
    }
    const Lifetime *l = &t->life;
    buf_printf(b, "lf %d %d %d %d %lld %lld %lld\n", l->has_start, l->has_exit, l->has_written, l->died, LL(l->start),
               LL(l->exit), LL(l->written));
  }
  for (size_t i = 0; i < s->ranks.n; i++) {
    const RankRow *r = &s->ranks.v[i];
    const Coverage *c = &r->cov;
    buf_printf(b,
               "rk %zu %lld %d %d %d %d %lld %lld %lld %lld %lld %lld %lld %lld %llu %llu %llu %lld %lld %lld %lld "
               "%lld %lld %lld %lld %lld %lld %lld %lld %llu %lld %lld %lld %lld %lld\n",
               r->trace, LL(r->rank), r->is_rank, c->start_known, c->end_known, c->died, LL(c->start), LL(c->end),
               LL(c->wall), LL(c->covered), LL(c->before), LL(c->gaps), LL(c->after), LL(c->profiler_exit),
               (unsigned long long)r->events, (unsigned long long)r->ranges, (unsigned long long)r->gpu_ops,
               LL(r->cpu_first), LL(r->cpu_last), LL(r->gpu_first), LL(r->gpu_last), LL(r->gpu_span), LL(r->busy),
               LL(r->compute), LL(r->comm), LL(r->memory), LL(r->noncompute), LL(r->idle), LL(r->overlap),
               (unsigned long long)r->steps.count, LL(r->steps.mean), LL(r->steps.min), LL(r->steps.max),
               LL(r->steps.median), LL(r->steps.std));
  }
  for (size_t i = 0; i < st->p.nn; i++) {
    if (st->p.rows[i].count) put_row(b, 'r', &st->p.rows[i]);
    if (st->p.annots[i].count) put_row(b, 'a', &st->p.annots[i]);
    const KernelRow *k = &st->p.krows[i];
    if (k->count)
      buf_printf(b, "k %u %u %u %llu %lld %lld %lld %.17g %.17g\n", k->name, k->kind, k->cls,
                 (unsigned long long)k->count, LL(k->total), LL(k->min), LL(k->max), k->mean, k->m2);
  }
  for (size_t i = 0; i < s->steps.n; i++) {
    const StepRow *r = &s->steps.v[i];
    buf_printf(b, "st %zu %u %lld %lld %lld\n", r->trace, r->name, LL(r->ts), LL(r->dur), LL(r->gpu));
  }
  for (size_t i = 0; i < s->streams.n; i++) {
    const StreamRow *r = &s->streams.v[i];
    buf_printf(b, "sr %zu %u %llu %lld %lld %lld %lld %lld %lld\n", r->trace, r->thread, (unsigned long long)r->ops,
               LL(r->span), LL(r->busy), LL(r->idle), LL(r->host_wait), LL(r->kernel_wait), LL(r->other));
  }
  /* the per-rank times in key order: the file is the same however the map was filled */
  VEC(int64_t) keys = {0};
  for (size_t i = 0; i < s->rank_excl.cap; i++)
    if (s->rank_excl.keys[i] != INT64_MIN) vec_push(&keys, s->rank_excl.keys[i]);
  for (size_t i = 1; i < keys.n; i++)
    for (size_t j = i; j > 0 && keys.v[j - 1] > keys.v[j]; j--) {
      int64_t x = keys.v[j];
      keys.v[j] = keys.v[j - 1], keys.v[j - 1] = x;
    }
  for (size_t i = 0; i < keys.n; i++) {
    int64_t v = 0;
    i64map_get(&s->rank_excl, keys.v[i], &v);
    buf_printf(b, "x %llu %llu %lld\n", (unsigned long long)((uint64_t)keys.v[i] >> 32),
               (unsigned long long)((uint64_t)keys.v[i] & 0xffffffffu), LL(v));
  }
  vec_free(&keys);
  const LaunchStats *l = &s->launch;
  buf_printf(b, "l %llu %llu %llu %llu %lld %lld %lld %lld %lld\n", (unsigned long long)l->count,
             (unsigned long long)l->cpu_outliers, (unsigned long long)l->delay_outliers,
             (unsigned long long)l->unmatched, LL(l->cpu_total), LL(l->cpu_max), LL(l->delay_total), LL(l->delay_max),
             LL(l->delay_outlier_total));
  for (size_t i = 0; i < l->nworst; i++)
    buf_printf(b, "lw %zu %u %lld %lld %lld\n", l->worst[i].trace, l->worst[i].name, LL(l->worst[i].ts),
               LL(l->worst[i].cpu), LL(l->worst[i].delay));
  for (int k = 0; k < COPY_KINDS; k++) {
    const CopyRow *c = &s->copies[k];
    if (c->count)
      buf_printf(b, "cp %d %llu %llu %llu %lld %lld\n", k, (unsigned long long)c->count,
                 (unsigned long long)c->unknown_bytes, (unsigned long long)c->pageable, LL(c->bytes), LL(c->time));
  }
  buf_printf(b, "c %llu %llu %lld %lld %llu %llu %llu %llu %llu %lld %lld %llu %llu %lld\n",
             (unsigned long long)s->sync_calls, (unsigned long long)s->sync_copies, LL(s->sync_time),
             LL(s->sync_copy_time), (unsigned long long)s->clipped, (unsigned long long)s->unattributed_gpu,
             (unsigned long long)s->zero_ranges, (unsigned long long)s->stream_overlaps,
             (unsigned long long)s->async_ranges, LL(s->range_excl_total), LL(s->kernel_total),
             (unsigned long long)s->kernel_count, (unsigned long long)s->tiny_kernels, LL(s->tiny_launch_cpu));
  buf_puts(b, "end\n");
}

bool sumstate_is_partial(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  char head[sizeof MAGIC] = {0};
  size_t n = fread(head, 1, sizeof MAGIC - 1, f);
  fclose(f);
  return n == sizeof MAGIC - 1 && !memcmp(head, MAGIC, n);
}

/* ---- reading ---- */

typedef struct {
  const char *path;
  size_t line;
  const char *p, *e; /* the rest of the line */
  bool bad;
} Lx;

static void say_at(const Lx *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say_at(const Lx *L, const char *fmt, ...) {
  if (nct_silent) return;
  char where[512];
  if (L->line) snprintf(where, sizeof where, "%s:%zu", L->path, L->line);
  else snprintf(where, sizeof where, "%s", L->path);
  va_list ap;
  va_start(ap, fmt);
  nct_vsay("error", where, fmt, ap);
  va_end(ap);
}

static bool lx_fail(Lx *L, const char *what) {
  if (!L->bad) say_at(L, "%s (not a partial summary nctrace wrote, or damaged)", what);
  L->bad = true;
  return false;
}

static bool lx_sep(Lx *L) {
  if (L->p < L->e && *L->p == ' ') {
    L->p++;
    return true;
  }
  return lx_fail(L, "a field is missing");
}

static bool lx_i64(Lx *L, int64_t *out, int64_t lo, int64_t hi) {
  if (L->bad || !lx_sep(L)) return false;
  const char *q = L->p;
  bool neg = q < L->e && *q == '-';
  if (neg) q++;
  if (q >= L->e || *q < '0' || *q > '9') return lx_fail(L, "a number was expected");
  uint64_t v = 0;
  for (; q < L->e && *q >= '0' && *q <= '9'; q++) {
    if (v > (UINT64_MAX - 9) / 10) return lx_fail(L, "a number out of range");
    v = v * 10 + (uint64_t)(*q - '0');
  }
  if (q < L->e && *q != ' ') return lx_fail(L, "a number was expected");
  if (v > (uint64_t)INT64_MAX + neg) return lx_fail(L, "a number out of range");
  int64_t x = neg ? (int64_t)(0 - v) : (int64_t)v;
  if (x < lo || x > hi) return lx_fail(L, "a number out of range");
  *out = x;
  L->p = q;
  return true;
}

static bool lx_dbl(Lx *L, double *out, double lo, double hi) {
  if (L->bad || !lx_sep(L)) return false;
  char tmp[64];
  size_t n = 0;
  while (L->p + n < L->e && L->p[n] != ' ' && n + 1 < sizeof tmp) n++;
  memcpy(tmp, L->p, n);
  tmp[n] = 0;
  char *end;
  errno = 0;
  double d = strtod(tmp, &end);
  if (!n || *end || !isfinite(d) || strchr(tmp, 'x') || strchr(tmp, 'X')) return lx_fail(L, "a number was expected");
  if (d < lo || d > hi) return lx_fail(L, "a number out of range");
  *out = d;
  L->p += n;
  return true;
}

static int hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* a quoted string (malloc'ed, NUL-terminated, its length in *len) or "-" (NULL) */
static bool lx_str(Lx *L, char **out, size_t *len, bool may_be_none) {
  *out = NULL;
  if (len) *len = 0;
  if (L->bad || !lx_sep(L)) return false;
  if (L->p < L->e && *L->p == '-' && may_be_none) {
    L->p++;
    return L->p >= L->e || *L->p == ' ' || lx_fail(L, "a string was expected");
  }
  if (L->p >= L->e || *L->p != '"') return lx_fail(L, "a string was expected");
  Buf b = {0};
  const char *q = L->p + 1;
  for (; q < L->e && *q != '"'; q++) {
    if (*q != '\\') {
      buf_putc(&b, *q);
      continue;
    }
    if (++q >= L->e) break;
    if (*q == '"' || *q == '\\') {
      buf_putc(&b, *q);
    } else if (*q == 'x' && q + 2 < L->e && hexval(q[1]) >= 0 && hexval(q[2]) >= 0) {
      buf_putc(&b, (char)(hexval(q[1]) << 4 | hexval(q[2])));
      q += 2;
    } else {
      buf_free(&b);
      return lx_fail(L, "a string with an unknown escape");
    }
  }
  if (q >= L->e) {
    buf_free(&b);
    return lx_fail(L, "a string without its closing quote");
  }
  L->p = q + 1;
  if (len) *len = b.len;
  *out = b.s ? b.s : xstrdup("");
  return true;
}

static bool lx_end(Lx *L) {
  return L->bad ? false : L->p == L->e || lx_fail(L, "more fields than expected");
}

/* What the records refer to, checked once all are read. */
typedef struct {
  size_t nnames, nids;
  bool bad;
} Refs;

/* Every figure a file gives is within +-LIM (2^60 ns: 36 years; counts to
 * 1e18): more than a fold of real traces gives, and room for the summary's
 * arithmetic on them (differences, small multiples; its sums saturate:
 * i64_sat). base_ns, a clock's, may be up to 2^62. */
#define LIM ((int64_t)1 << 60)
#define BIG LIM

/* The records of a partial file into st; refs checked after */
static int parse_lines(SumState *st, Lx *L, const char *text, size_t len, const SummaryOptions *opt) {
  const char *p = text + sizeof MAGIC - 1, *end = text + len;
  L->line = 1;
  Trace *t = NULL;
  bool ended = false, have_glob = false;
  int64_t v[40];
  while (p < end && !ended) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) {
      L->line++;
      return lx_fail(L, "the file ends inside a line (cut short?)"), -1;
    }
    L->line++;
    L->p = p;
    L->e = nl;
    p = nl + 1;
    const char *sp = memchr(L->p, ' ', (size_t)(L->e - L->p));
    size_t tl = (size_t)((sp ? sp : L->e) - L->p);
    char tag[5] = {0};
    if (tl == 0 || tl > 4) return lx_fail(L, "a record of an unknown kind"), -1;
    memcpy(tag, L->p, tl);
    L->p += tl;
    char padded[8];
    snprintf(padded, sizeof padded, " %s ", tag);
    bool of_trace = strstr(" th pl nt uc tt hd pr lf ", padded) != NULL; /* a record of the last "t" */
    if (of_trace && !t) return lx_fail(L, "a trace's record before any trace"), -1;
#define NUM(i, lo, hi) lx_i64(L, &v[i], lo, hi)
    if (!strcmp(tag, "end")) {
      if (!lx_end(L)) return -1;
      ended = true;
    } else if (!strcmp(tag, "glob")) {
      char *g;
      if (!lx_str(L, &g, NULL, false) || !lx_end(L)) return free(g), -1;
      bool same = !strcmp(g, opt->step_glob);
      if (!same)
        say_at(L, "folded with --step '%s', not '%s': give the same --step here, or fold the traces again", g,
               opt->step_glob);
      free(g);
      if (!same) return -1;
      have_glob = true;
    } else if (!strcmp(tag, "env")) {
      char *e;
      if (!lx_str(L, &e, NULL, false) || !lx_end(L)) return free(e), -1;
      free(st->env);
      st->env = e;
    } else if (!strcmp(tag, "n") || !strcmp(tag, "i")) {
      char *s;
      size_t n;
      if (!lx_str(L, &s, &n, false) || !lx_end(L)) return free(s), -1;
      Intern *it = tag[0] == 'n' ? &st->m.names : &st->m.ids;
      size_t before = intern_count(it);
      intern(it, s, n);
      free(s);
      if (intern_count(it) == before) return lx_fail(L, "a name listed twice"), -1;
    } else if (!strcmp(tag, "t")) {
      char *path;
      if (!lx_str(L, &path, NULL, false)) return -1;
      if (!NUM(0, 0, 1) || !NUM(1, -1, BIG) || !NUM(2, -1, BIG) || !NUM(3, 0, 1) ||
          !NUM(4, -((int64_t)1 << 62), (int64_t)1 << 62) ||
          !NUM(5, 0, BIG) || !NUM(6, -1, BIG) || !lx_end(L))
        return free(path), -1;
      t = xcalloc(1, sizeof *t);
      t->path = path;
      t->legacy = v[0], t->rank = v[1], t->world_size = v[2], t->has_base = v[3], t->base_ns = v[4];
      t->budget_bytes = v[5], t->budget_hit_ts = v[6];
      vec_push(&st->m.traces, t);
    } else if (!strcmp(tag, "th")) {
      if (!NUM(0, 0, UINT32_MAX) || !NUM(1, 0, UINT32_MAX) || !NUM(2, -1, UINT32_MAX) || !NUM(3, 0, 1) ||
          !NUM(4, -1, UINT32_MAX) || !lx_end(L))
        return -1;
      if ((size_t)v[0] >= intern_count(&st->m.ids) || (size_t)v[1] >= intern_count(&st->m.ids) ||
          (v[2] >= 0 && (size_t)v[2] >= intern_count(&st->m.names)))
        return lx_fail(L, "a thread's id or name not listed before it"), -1;
      int64_t key = (int64_t)((uint64_t)v[0] << 32 | (uint64_t)v[1]), dummy;
      if (i64map_get(&t->thread_of, key, &dummy)) return lx_fail(L, "a thread listed twice"), -1;
      Thread h = {.pid = (uint32_t)v[0], .tid = (uint32_t)v[1], .label = v[2], .gpu = v[3], .lane_of = v[4]};
      vec_push(&t->threads, h);
      i64map_put(&t->thread_of, key, (int64_t)t->threads.n - 1);
    } else if (!strcmp(tag, "pl")) {
      if (!NUM(0, 0, UINT32_MAX) || !NUM(1, 0, UINT32_MAX) || !lx_end(L)) return -1;
      if ((size_t)v[0] >= intern_count(&st->m.ids) || (size_t)v[1] >= intern_count(&st->m.names))
        return lx_fail(L, "a process label's id or name not listed before it"), -1;
      i64map_put(&t->process_label, v[0], v[1]);
    } else if (!strcmp(tag, "nt")) {
      LoadNotes *no = &t->notes;
      char *fm = NULL, *fn = NULL;
      if (!NUM(0, 0, BIG) || !NUM(1, 0, BIG) || !lx_str(L, &fm, NULL, true) || !NUM(2, 0, BIG) ||
          !lx_str(L, &fn, NULL, true) || !NUM(3, 0, BIG) || !NUM(4, 0, BIG) || !NUM(5, 0, BIG) || !NUM(6, 0, BIG) ||
          !NUM(7, 0, BIG) || !lx_end(L))
        return free(fm), free(fn), -1;
      free(no->first_malformed), free(no->first_negative);
      no->events = (uint64_t)v[0], no->malformed = (uint64_t)v[1], no->first_malformed = fm;
      no->negative = (uint64_t)v[2], no->first_negative = fn, no->unknown_cat = (uint64_t)v[3];
      no->unmatched_end = (uint64_t)v[4], no->unclosed_begin = (uint64_t)v[5], no->ignored_ph = (uint64_t)v[6];
      no->cuda_sync = (uint64_t)v[7];
    } else if (!strcmp(tag, "uc")) {
      if (!NUM(0, 0, UINT32_MAX) || !lx_end(L)) return -1;
      if ((size_t)v[0] >= intern_count(&st->m.names)) return lx_fail(L, "a name not listed before it"), -1;
      if (t->notes.unknown_cats.n >= 8) return lx_fail(L, "more than 8 unknown categories"), -1;
      vec_push(&t->notes.unknown_cats, (uint32_t)v[0]);
    } else if (!strcmp(tag, "tt")) {
      Throttled h = {0};
      if (!NUM(0, 0, UINT32_MAX) || !NUM(1, -LIM, BIG) || !NUM(2, -1, BIG) || !lx_dbl(L, &h.avg_us, 0, 1e15) ||
          !NUM(3, -LIM, BIG) || !NUM(4, -1, BIG) || !NUM(5, 0, BIG) || !NUM(6, -LIM, BIG) ||
          !NUM(7, -LIM, BIG) || !NUM(8, -LIM, BIG) || !NUM(9, 0, 1) || !lx_end(L))
        return -1;
      if ((size_t)v[0] >= intern_count(&st->m.names)) return lx_fail(L, "a name not listed before it"), -1;
      h.name = (uint32_t)v[0], h.calls = v[1], h.total_calls = v[2], h.from_ts = v[3], h.tid = v[4];
      h.u_calls = v[5], h.u_incl = v[6], h.u_excl = v[7], h.u_sum = v[8], h.measured = v[9];
      vec_push(&t->throttled, h);
    } else if (!strcmp(tag, "hd")) {
      if (!NUM(0, 0, UINT32_MAX) || !NUM(1, -LIM, BIG) || !lx_end(L)) return -1;
      if ((size_t)v[0] >= intern_count(&st->m.names)) return lx_fail(L, "a name not listed before it"), -1;
      vec_push(&t->hidden, ((Hidden){(uint32_t)v[0], v[1]}));
    } else if (!strcmp(tag, "pr")) {
      char *ps[5] = {0};
      bool ok = NUM(0, 0, 1) && NUM(1, 0, 1) && NUM(2, -LIM, BIG) && NUM(3, -LIM, BIG);
      for (int i = 0; i < 5 && ok; i++) ok = lx_str(L, &ps[i], NULL, true);
      if (!ok || !lx_end(L)) {
        for (int i = 0; i < 5; i++) free(ps[i]);
        return -1;
      }
      ProcInfo *pi = &t->proc;
      free(pi->start), free(pi->role), free(pi->detail), free(pi->host), free(pi->host_name);
      *pi = (ProcInfo){v[0], v[1], v[2], v[3], ps[0], ps[1], ps[2], ps[3], ps[4]};
    } else if (!strcmp(tag, "lf")) {
      if (!NUM(0, 0, 1) || !NUM(1, 0, 1) || !NUM(2, 0, 1) || !NUM(3, 0, 1) || !NUM(4, -LIM, BIG) ||
          !NUM(5, -LIM, BIG) || !NUM(6, -LIM, BIG) || !lx_end(L))
        return -1;
      t->life = (Lifetime){v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
    } else if (!strcmp(tag, "rk")) {
      for (int i = 0; i < 35; i++)
        if (!NUM(i, i == 0 || (i >= 2 && i <= 5) || (i >= 14 && i <= 16) || i == 29 ? 0 : -LIM, BIG)) return -1;
      if (!lx_end(L)) return -1;
      for (int i = 2; i <= 5; i++)
        if (v[i] > 1) return lx_fail(L, "a flag other than 0 or 1"), -1;
      RankRow r = {0};
      r.trace = (size_t)v[0], r.rank = v[1], r.is_rank = v[2];
      r.cov = (Coverage){v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13]};
      r.events = (uint64_t)v[14], r.ranges = (uint64_t)v[15], r.gpu_ops = (uint64_t)v[16];
      r.cpu_first = v[17], r.cpu_last = v[18], r.gpu_first = v[19], r.gpu_last = v[20], r.gpu_span = v[21];
      r.busy = v[22], r.compute = v[23], r.comm = v[24], r.memory = v[25], r.noncompute = v[26];
      r.idle = v[27], r.overlap = v[28];
      r.steps = (Stats){(uint64_t)v[29], v[30], v[31], v[32], v[33], v[34]};
      vec_push(&st->s.ranks, r);
    } else if (!strcmp(tag, "r") || !strcmp(tag, "a")) {
      for (int i = 0; i < 9; i++)
        if (!NUM(i, i < 3 ? 0 : -LIM, i == 0 || i == 1 ? UINT32_MAX : BIG)) return -1;
      if (!lx_end(L)) return -1;
      size_t nn = intern_count(&st->m.names);
      if ((size_t)v[0] >= nn) return lx_fail(L, "a name not listed before it"), -1;
      grow_parts(&st->p, nn);
      RangeRow *r = tag[0] == 'r' ? &st->p.rows[v[0]] : &st->p.annots[v[0]];
      if (r->count) return lx_fail(L, "a row listed twice"), -1;
      *r = (RangeRow){(uint32_t)v[0], (uint32_t)v[1], (uint64_t)v[2], v[3], v[4], v[5], v[6], v[7], v[8], 0};
      if (!r->count) return lx_fail(L, "a row of no calls"), -1;
    } else if (!strcmp(tag, "k")) {
      double mean, m2;
      if (!NUM(0, 0, UINT32_MAX) || !NUM(1, 0, K_COUNT - 1) || !NUM(2, 0, CLASS_MEMORY) || !NUM(3, 1, BIG) ||
          !NUM(4, -LIM, BIG) || !NUM(5, -LIM, BIG) || !NUM(6, -LIM, BIG) || !lx_dbl(L, &mean, -(double)LIM, (double)LIM) ||
          !lx_dbl(L, &m2, 0, 1e300) || !lx_end(L))
        return -1;
      size_t nn = intern_count(&st->m.names);
      if ((size_t)v[0] >= nn) return lx_fail(L, "a name not listed before it"), -1;
      grow_parts(&st->p, nn);
      KernelRow *k = &st->p.krows[v[0]];
      if (k->count) return lx_fail(L, "a row listed twice"), -1;
      *k = (KernelRow){(uint32_t)v[0], (uint8_t)v[1], (uint8_t)v[2], (uint64_t)v[3], v[4], v[5], v[6], mean, m2};
    } else if (!strcmp(tag, "st")) {
      if (!NUM(0, 0, BIG) || !NUM(1, 0, UINT32_MAX) || !NUM(2, -LIM, BIG) || !NUM(3, -LIM, BIG) ||
          !NUM(4, -LIM, BIG) || !lx_end(L))
        return -1;
      vec_push(&st->s.steps, ((StepRow){(size_t)v[0], (uint32_t)v[1], v[2], v[3], v[4]}));
    } else if (!strcmp(tag, "sr")) {
      for (int i = 0; i < 9; i++)
        if (!NUM(i, i < 3 ? 0 : -LIM, i == 1 ? UINT32_MAX : BIG)) return -1;
      if (!lx_end(L)) return -1;
      vec_push(&st->s.streams,
               ((StreamRow){(size_t)v[0], (uint32_t)v[1], (uint64_t)v[2], v[3], v[4], v[5], v[6], v[7], v[8]}));
    } else if (!strcmp(tag, "x")) {
      if (!NUM(0, 0, UINT32_MAX) || !NUM(1, 0, UINT32_MAX) || !NUM(2, -LIM, BIG) || !lx_end(L)) return -1;
      int64_t key = (int64_t)((uint64_t)v[0] << 32 | (uint64_t)v[1]), dummy;
      if (i64map_get(&st->s.rank_excl, key, &dummy)) return lx_fail(L, "a per-rank time listed twice"), -1;
      i64map_put(&st->s.rank_excl, key, v[2]);
    } else if (!strcmp(tag, "l")) {
      for (int i = 0; i < 9; i++)
        if (!NUM(i, i < 4 ? 0 : -LIM, BIG)) return -1;
      if (!lx_end(L)) return -1;
      LaunchStats *l = &st->s.launch;
      l->count = (uint64_t)v[0], l->cpu_outliers = (uint64_t)v[1], l->delay_outliers = (uint64_t)v[2];
      l->unmatched = (uint64_t)v[3], l->cpu_total = v[4], l->cpu_max = v[5], l->delay_total = v[6];
      l->delay_max = v[7], l->delay_outlier_total = v[8];
    } else if (!strcmp(tag, "lw")) {
      if (!NUM(0, 0, BIG) || !NUM(1, 0, UINT32_MAX) || !NUM(2, -LIM, BIG) || !NUM(3, -LIM, BIG) ||
          !NUM(4, -LIM, BIG) || !lx_end(L))
        return -1;
      LaunchStats *l = &st->s.launch;
      if (l->nworst == 5) return lx_fail(L, "more than five worst launches"), -1;
      l->worst[l->nworst].trace = (size_t)v[0], l->worst[l->nworst].name = (uint32_t)v[1];
      l->worst[l->nworst].ts = v[2], l->worst[l->nworst].cpu = v[3], l->worst[l->nworst].delay = v[4];
      l->nworst++;
    } else if (!strcmp(tag, "cp")) {
      if (!NUM(0, 0, COPY_KINDS - 1) || !NUM(1, 0, BIG) || !NUM(2, 0, BIG) || !NUM(3, 0, BIG) ||
          !NUM(4, -LIM, BIG) || !NUM(5, -LIM, BIG) || !lx_end(L))
        return -1;
      st->s.copies[v[0]] = (CopyRow){(uint64_t)v[1], (uint64_t)v[2], (uint64_t)v[3], v[4], v[5]};
    } else if (!strcmp(tag, "c")) {
      for (int i = 0; i < 14; i++)
        if (!NUM(i, (i >= 4 && i <= 8) || i == 0 || i == 1 || i == 11 || i == 12 ? 0 : -LIM, BIG)) return -1;
      if (!lx_end(L)) return -1;
      Summary *s = &st->s;
      s->sync_calls = (uint64_t)v[0], s->sync_copies = (uint64_t)v[1], s->sync_time = v[2];
      s->sync_copy_time = v[3], s->clipped = (uint64_t)v[4], s->unattributed_gpu = (uint64_t)v[5];
      s->zero_ranges = (uint64_t)v[6], s->stream_overlaps = (uint64_t)v[7], s->async_ranges = (uint64_t)v[8];
      s->range_excl_total = v[9], s->kernel_total = v[10], s->kernel_count = (uint64_t)v[11];
      s->tiny_kernels = (uint64_t)v[12], s->tiny_launch_cpu = v[13];
    } else {
      return lx_fail(L, "a record of an unknown kind"), -1;
    }
#undef NUM
  }
  if (!ended) return lx_fail(L, "the file ends before its \"end\" (cut short?)"), -1;
  if (p < end) return lx_fail(L, "text after \"end\""), -1;
  if (!have_glob) return lx_fail(L, "no step glob"), -1;
  return 0;
}

/* Every trace, name and thread a summary record names must be in the file;
 * each trace has its one rank row. */
static int check_refs(SumState *st, Lx *L) {
  size_t nt = st->m.traces.n, nn = intern_count(&st->m.names);
  const Summary *s = &st->s;
  const char *bad = NULL;
  if (s->ranks.n != nt) bad = "not one rank row per trace";
  for (size_t i = 0; i < s->ranks.n && !bad; i++)
    if (s->ranks.v[i].trace != i) bad = "a rank row out of order";
  for (size_t i = 0; i < s->steps.n && !bad; i++)
    if (s->steps.v[i].trace >= nt || s->steps.v[i].name >= nn) bad = "a step of a trace or name not listed";
  for (size_t i = 0; i < s->streams.n && !bad; i++)
    if (s->streams.v[i].trace >= nt || s->streams.v[i].thread >= st->m.traces.v[s->streams.v[i].trace]->threads.n)
      bad = "a stream of a trace or thread not listed";
  for (size_t i = 0; i < s->launch.nworst && !bad; i++)
    if (s->launch.worst[i].trace >= nt || s->launch.worst[i].name >= nn) bad = "a launch of a trace or name not listed";
  for (size_t i = 0; i < s->rank_excl.cap && !bad; i++) {
    int64_t k = s->rank_excl.keys[i];
    if (k != INT64_MIN && ((uint64_t)k >> 32 >= nt || ((uint64_t)k & 0xffffffffu) >= nn))
      bad = "a per-rank time of a trace or name not listed";
  }
  for (size_t ti = 0; ti < nt && !bad; ti++) {
    const Trace *t = st->m.traces.v[ti];
    for (size_t i = 0; i < t->threads.n && !bad; i++)
      if (t->threads.v[i].lane_of >= (int64_t)t->threads.n) bad = "a lane of a thread not listed";
  }
  if (!bad) return 0;
  L->line = 0;
  lx_fail(L, bad);
  return -1;
}

int sumstate_parse(SumState *st, const char *path, const char *text, size_t len, const SummaryOptions *opt) {
  state_init(st, opt, false);
  Lx L = {path, 1, NULL, NULL, false};
  if (len < sizeof MAGIC - 1 || memcmp(text, MAGIC, sizeof MAGIC - 1)) {
    say_at(&L, "not a partial summary (it does not start \"nctrace-partial 1\")");
    return -1;
  }
  if (parse_lines(st, &L, text, len, opt) < 0 || check_refs(st, &L) < 0) return -1;
  grow_parts(&st->p, intern_count(&st->m.names));
  /* each rank row's step statistics from the step rows, as summary_add_rank
   * makes them: never a count the rows do not back */
  size_t nt = st->m.traces.n, *at = xcalloc(nt + 1, sizeof *at);
  for (size_t j = 0; j < st->s.steps.n; j++) at[st->s.steps.v[j].trace + 1]++;
  for (size_t i = 0; i < nt; i++) at[i + 1] += at[i];
  int64_t *durs = xmalloc((st->s.steps.n ? st->s.steps.n : 1) * sizeof *durs);
  size_t *fill = xmalloc((nt + 1) * sizeof *fill);
  memcpy(fill, at, (nt + 1) * sizeof *fill);
  for (size_t j = 0; j < st->s.steps.n; j++) durs[fill[st->s.steps.v[j].trace]++] = st->s.steps.v[j].dur;
  for (size_t i = 0; i < nt; i++) st->s.ranks.v[i].steps = stats_of(durs + at[i], at[i + 1] - at[i]);
  free(durs), free(fill), free(at);
  st->s.nranks = distinct_ranks(&st->s);
  return 0;
}

int sumstate_read(SumState *st, const char *path, const SummaryOptions *opt) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    state_init(st, opt, false);
    return nct_error("%s: cannot open: %s", path, strerror(errno));
  }
  Buf b = {0};
  char chunk[1 << 16];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_add(&b, chunk, n);
  bool err = ferror(f);
  fclose(f);
  int rc;
  if (err) {
    state_init(st, opt, false);
    rc = nct_error("%s: cannot read: %s", path, strerror(errno));
  } else {
    rc = sumstate_parse(st, path, b.s ? b.s : "", b.len, opt);
  }
  buf_free(&b);
  return rc;
}
