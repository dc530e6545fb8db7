/* diff: the sides' summaries compared name by name (diff.h states the
 * contract). Rows are gathered in one table per kind, keyed by the name's
 * text in a local interner (the runs' Models intern separately). Each run
 * is added on its own: its figures scaled per step when asked, summed into
 * its side, and kept per run (for the run-to-run spread) together with
 * the per-call moments of its names; then each row gets its verdict and
 * the tables are sorted. */
#include "diff.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One side of one row while runs are added. */
typedef struct {
  DiffSide sum;   /* over runs, each run scaled */
  DiffSide cur;   /* the run being added, raw */
  size_t cur_run; /* the run cur belongs to, + 1 (0: none) */
  Moments calls;  /* per-call durations of the tested figure, pooled over runs */
  double w;       /* sum over runs of scale^2 * calls: scales the per-call variance */
  int64_t *run;   /* [runs]: the tested figure of each run, scaled */
} Acc;

typedef struct {
  Intern names; /* row i has name id i */
  DiffRows rows;
  VEC(Acc) acc; /* 2 per row: [2i] side A, [2i+1] side B */
  size_t runs[2];
} Table;

static DiffRow *row_for(Table *t, const char *name) {
  uint32_t id = intern(&t->names, name, strlen(name));
  if (id == t->rows.n) {
    DiffRow r = {0};
    r.name = xstrdup(name);
    vec_push(&t->rows, r);
    for (int side = 0; side < 2; side++) {
      Acc a = {0};
      a.run = xcalloc(t->runs[side], sizeof *a.run);
      vec_push(&t->acc, a);
    }
  }
  return &t->rows.v[id];
}

static Acc *acc_of(Table *t, const DiffRow *r, bool is_b) { return &t->acc.v[2 * (size_t)(r - t->rows.v) + is_b]; }

/* The name a range row is matched by: every step name is the step glob, so
 * a run with one `ProfilerStep#7` meets another's merged `ProfilerStep#*`. */
static const char *range_key_name(const Summary *s, const char *nm) {
  return fnmatch(s->opt.step_glob, nm, 0) == 0 ? s->opt.step_glob : nm;
}

/* The run's current values of a row, raw; run is the run's number + 1. */
static DiffSide *cur_side(Table *t, DiffRow *d, bool is_b, size_t run) {
  Acc *a = acc_of(t, d, is_b);
  if (a->cur_run != run) {
    memset(&a->cur, 0, sizeof a->cur);
    a->cur_run = run;
  }
  d->in |= is_b ? DIFF_IN_B : DIFF_IN_A;
  return &a->cur;
}

static void add_ranges(Table *t, const Model *m, const Summary *s, bool is_b, size_t run) {
  for (size_t i = 0; i < s->ranges.n; i++) {
    const RangeRow *r = &s->ranges.v[i];
    DiffRow *d = row_for(t, range_key_name(s, range_row_name(m, s, r)));
    DiffSide *side = cur_side(t, d, is_b, run);
    /* added, not set: keys are unique within a run, but a sum stays right
     * if two rows ever share one */
    side->count += (double)r->count;
    side->incl += r->incl;
    side->excl += r->excl;
    side->gpu += r->gpu;
    *(is_b ? &d->count_b : &d->count_a) += r->count;
    d->kinds |= r->kinds;
  }
}

static void add_kernels(Table *t, const Model *m, const Summary *s, bool is_b, size_t run) {
  for (size_t i = 0; i < s->kernels.n; i++) {
    const KernelRow *k = &s->kernels.v[i];
    DiffRow *d = row_for(t, intern_str(&m->names, k->name));
    DiffSide *side = cur_side(t, d, is_b, run);
    side->count += (double)k->count;
    side->gpu += k->total;
    *(is_b ? &d->count_b : &d->count_a) += k->count;
    d->kinds |= 1u << k->kind;
  }
}

/* Per-call durations of one run, by Model name id: CPU ranges (all
 * instances, start/end ranges too: a range's calls) and GPU ops. One pass
 * over the events, memory per name. */
static void call_moments(const Model *m, Moments *ranges, Moments *gpu) {
  for (size_t ti = 0; ti < m->traces.n; ti++) {
    const Trace *t = m->traces.v[ti];
    for (size_t i = 0; i < t->ev.n; i++) {
      const Ev *e = &t->ev.v[i];
      if (kind_is_cpu_range(e->kind)) moments_add(&ranges[e->name], (double)e->dur);
      else if (kind_is_gpu_op(e->kind)) moments_add(&gpu[e->name], (double)e->dur);
    }
  }
}

/* A run's per-call moments into the rows its names match (names the
 * summary has no row for are left out, as their figures are). */
static void add_moments(Table *t, const Model *m, const Summary *s, const Moments *mo, bool ranges, bool is_b,
                        size_t run) {
  for (size_t id = 0; id < intern_count(&m->names); id++) {
    if (!mo[id].n) continue;
    const char *nm = intern_str(&m->names, (uint32_t)id);
    if (ranges) nm = range_key_name(s, nm);
    int64_t row = intern_find(&t->names, nm, strlen(nm));
    if (row < 0) continue;
    Acc *a = &t->acc.v[2 * (size_t)row + is_b];
    if (a->cur_run == run) moments_merge(&a->calls, &mo[id]);
  }
}

/* v / n rounded half away from zero (n > 0). */
static int64_t div_round(int64_t v, uint64_t n) {
  int64_t q = (int64_t)n;
  return v >= 0 ? (v + q / 2) / q : -((-v + q / 2) / q);
}

/* The run's rows into their side: scaled by 1/steps when per step. */
static void end_run(Table *t, bool is_b, size_t run, uint64_t steps, bool ranges) {
  for (size_t i = 0; i < t->rows.n; i++) {
    Acc *a = &t->acc.v[2 * i + is_b];
    if (a->cur_run != run) continue;
    DiffSide c = a->cur;
    uint64_t calls = (uint64_t)c.count;
    if (steps > 1) {
      c.count /= (double)steps;
      c.incl = div_round(c.incl, steps);
      c.excl = div_round(c.excl, steps);
      c.gpu = div_round(c.gpu, steps);
    }
    a->sum.count += c.count;
    a->sum.incl += c.incl;
    a->sum.excl += c.excl;
    a->sum.gpu += c.gpu;
    a->run[run - 1] = ranges ? c.incl : c.gpu;
    double scale = steps > 1 ? 1.0 / (double)steps : 1.0;
    a->w += scale * scale * (double)calls;
  }
}

/* The side's figures: the mean over its runs. */
static void side_mean(const Acc *a, size_t runs, DiffSide *out) {
  *out = a->sum;
  if (runs > 1) {
    out->count /= (double)runs;
    out->incl = div_round(out->incl, runs);
    out->excl = div_round(out->excl, runs);
    out->gpu = div_round(out->gpu, runs);
  }
}

/* The verdict from the run-to-run spread: each side's runs are a sample
 * of the figure (the mean over k runs has the variance s^2 / k). */
static void verdict_runs(const int64_t *va, size_t ka, const int64_t *vb, size_t kb, NoiseVerdict *out) {
  Moments ma = {0}, mb = {0};
  for (size_t i = 0; i < ka; i++) moments_add(&ma, (double)va[i]);
  for (size_t i = 0; i < kb; i++) moments_add(&mb, (double)vb[i]);
  NoiseSide a = {ma.mean, moments_var(&ma) / (double)ka, (double)ka - 1};
  NoiseSide b = {mb.mean, moments_var(&mb) / (double)kb, (double)kb - 1};
  noise_welch(&a, &b, NOISE_RUNS, out);
  out->effect = noise_cohen_d(ma.mean, sqrt(moments_var(&ma)), mb.mean, sqrt(moments_var(&mb)));
}

/* The verdict from the per-call spread: a side's figure is a sum of its
 * calls, so its variance is (calls x per-call variance), scaled as the
 * figure is (w) and divided by runs^2 for the mean over runs. A side with
 * one call has no spread to measure: unknown. */
static void verdict_calls(const Acc *a, const Acc *b, size_t ka, size_t kb, double va, double vb,
                          NoiseVerdict *out) {
  if (a->calls.n == 1 || b->calls.n == 1 || (!a->calls.n && !b->calls.n)) {
    noise_unknown(out);
    return;
  }
  double sa = moments_var(&a->calls), sb = moments_var(&b->calls);
  NoiseSide A = {va, sa * a->w / ((double)ka * (double)ka), a->calls.n ? (double)a->calls.n - 1 : 0};
  NoiseSide B = {vb, sb * b->w / ((double)kb * (double)kb), b->calls.n ? (double)b->calls.n - 1 : 0};
  noise_welch(&A, &B, NOISE_CALLS, out);
  out->effect = a->calls.n && b->calls.n ? noise_cohen_d(a->calls.mean, sqrt(sa), b->calls.mean, sqrt(sb)) : NAN;
}

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

static int64_t max3(int64_t x, int64_t y, int64_t z) { return x > y ? (x > z ? x : z) : (y > z ? y : z); }

/* significant first, then unknown (it may be real), then within noise */
static int sig_rank(int sig) { return sig == SIG_SIGNIFICANT ? 0 : sig == SIG_UNKNOWN ? 1 : 2; }

static int cmp_rows(const void *pa, const void *pb) {
  const DiffRow *x = pa, *y = pb;
  int gx = sig_rank(x->noise.sig), gy = sig_rank(y->noise.sig);
  if (gx != gy) return gx < gy ? -1 : 1;
  if (x->change != y->change) return x->change > y->change ? -1 : 1;
  double cx = fabs(x->b.count - x->a.count), cy = fabs(y->b.count - y->a.count);
  if (cx != cy) return cx > cy ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Move a table's rows into out with their verdicts, sorted; count the
 * one-sided; free the accumulators. */
static void finish(Table *t, bool ranges, size_t *only_a, size_t *only_b, DiffRows *out) {
  size_t ka = t->runs[0], kb = t->runs[1];
  for (size_t i = 0; i < t->rows.n; i++) {
    DiffRow *r = &t->rows.v[i];
    Acc *a = &t->acc.v[2 * i], *b = &t->acc.v[2 * i + 1];
    side_mean(a, ka, &r->a);
    side_mean(b, kb, &r->b);
    r->change = max3(abs64(r->b.incl - r->a.incl), abs64(r->b.excl - r->a.excl), abs64(r->b.gpu - r->a.gpu));
    if (ka > 1 && kb > 1) verdict_runs(a->run, ka, b->run, kb, &r->noise);
    else if (ranges) verdict_calls(a, b, ka, kb, (double)r->a.incl, (double)r->b.incl, &r->noise);
    else verdict_calls(a, b, ka, kb, (double)r->a.gpu, (double)r->b.gpu, &r->noise);
    *only_a += r->in == DIFF_IN_A;
    *only_b += r->in == DIFF_IN_B;
    free(a->run);
    free(b->run);
  }
  if (t->rows.n) qsort(t->rows.v, t->rows.n, sizeof *t->rows.v, cmp_rows);
  *out = t->rows;
  vec_free(&t->acc);
  intern_free(&t->names);
}

static size_t distinct_ranks(const Summary *s) {
  size_t n = 0;
  for (size_t i = 0; i < s->ranks.n; i++) {
    size_t j = 0;
    while (j < i && s->ranks.v[j].rank != s->ranks.v[i].rank) j++;
    n += j == i;
  }
  return n;
}

/* A side's overview figures, per run (scaled when per step) and summed. */
typedef struct {
  int64_t *self, *gpu, *step_mean; /* [runs] */
  Moments steps;                   /* step durations over all runs */
  size_t with_steps;               /* runs that have steps */
} SideTotals;

static void side_info(const DiffRun *runs, size_t k, bool per_step, DiffRunInfo *info, SideTotals *tot) {
  memset(info, 0, sizeof *info);
  tot->self = xcalloc(k, sizeof *tot->self);
  tot->gpu = xcalloc(k, sizeof *tot->gpu);
  tot->step_mean = xcalloc(k, sizeof *tot->step_mean);
  tot->steps = (Moments){0};
  tot->with_steps = 0;
  info->runs = k;
  int64_t self = 0, gpu = 0, mean_sum = 0;
  for (size_t r = 0; r < k; r++) {
    const Summary *s = runs[r].s;
    Moments st = {0};
    for (size_t i = 0; i < s->steps.n; i++) moments_add(&st, (double)s->steps.v[i].dur);
    moments_merge(&tot->steps, &st);
    int64_t sum = 0;
    for (size_t i = 0; i < s->steps.n; i++) sum += s->steps.v[i].dur;
    info->files += runs[r].m->traces.n;
    size_t ranks = distinct_ranks(s);
    if (ranks > info->ranks) info->ranks = ranks;
    info->steps += s->steps.n;
    if (s->steps.n) {
      tot->step_mean[r] = sum / (int64_t)s->steps.n;
      mean_sum += tot->step_mean[r];
      tot->with_steps++;
    }
    tot->self[r] = per_step ? div_round(s->range_excl_total, s->steps.n) : s->range_excl_total;
    tot->gpu[r] = per_step ? div_round(s->kernel_total, s->steps.n) : s->kernel_total;
    self += tot->self[r];
    gpu += tot->gpu[r];
  }
  info->step_mean = tot->with_steps ? div_round(mean_sum, tot->with_steps) : 0;
  info->range_self = div_round(self, k);
  info->gpu_total = div_round(gpu, k);
}

static void side_totals_free(SideTotals *t) {
  free(t->self);
  free(t->gpu);
  free(t->step_mean);
}

/* The overview's verdicts. The mean step: its calls are the steps. The
 * totals are one sample per run. */
static void overview_noise(DiffResult *d, const SideTotals *ta, const SideTotals *tb) {
  size_t ka = d->a.runs, kb = d->b.runs;
  bool runs = ka > 1 && kb > 1;
  noise_unknown(&d->step_noise);
  noise_unknown(&d->self_noise);
  noise_unknown(&d->gpu_noise);
  if (runs) {
    verdict_runs(ta->self, ka, tb->self, kb, &d->self_noise);
    verdict_runs(ta->gpu, ka, tb->gpu, kb, &d->gpu_noise);
  }
  if (runs && ta->with_steps == ka && tb->with_steps == kb) {
    verdict_runs(ta->step_mean, ka, tb->step_mean, kb, &d->step_noise);
  } else if (!runs && ta->steps.n >= 2 && tb->steps.n >= 2) {
    const Moments *a = &ta->steps, *b = &tb->steps;
    double va = moments_var(a), vb = moments_var(b);
    NoiseSide A = {a->mean, va / (double)a->n, (double)a->n - 1};
    NoiseSide B = {b->mean, vb / (double)b->n, (double)b->n - 1};
    noise_welch(&A, &B, NOISE_CALLS, &d->step_noise);
    d->step_noise.effect = noise_cohen_d(a->mean, sqrt(va), b->mean, sqrt(vb));
  }
}

/* Every run has steps and not all have the same number: compare one step. */
static bool wants_per_step(const DiffRun *a, size_t na, const DiffRun *b, size_t nb) {
  size_t first = a[0].s->steps.n;
  bool differ = false;
  for (size_t side = 0; side < 2; side++) {
    const DiffRun *r = side ? b : a;
    for (size_t i = 0; i < (side ? nb : na); i++) {
      if (!r[i].s->steps.n) return false;
      differ |= r[i].s->steps.n != first;
    }
  }
  return differ;
}

static void add_side(Table *ranges, Table *kernels, const DiffRun *runs, size_t k, bool is_b, bool per_step) {
  for (size_t r = 0; r < k; r++) {
    const Model *m = runs[r].m;
    const Summary *s = runs[r].s;
    uint64_t steps = per_step ? s->steps.n : 1;
    size_t names = intern_count(&m->names);
    Moments *mr = xcalloc(names + 1, sizeof *mr), *mg = xcalloc(names + 1, sizeof *mg);
    call_moments(m, mr, mg);
    add_ranges(ranges, m, s, is_b, r + 1);
    add_kernels(kernels, m, s, is_b, r + 1);
    add_moments(ranges, m, s, mr, true, is_b, r + 1);
    add_moments(kernels, m, s, mg, false, is_b, r + 1);
    end_run(ranges, is_b, r + 1, steps, true);
    end_run(kernels, is_b, r + 1, steps, false);
    free(mr);
    free(mg);
  }
}

void diff_compute(const DiffRun *a, size_t na, const DiffRun *b, size_t nb, DiffResult *out) {
  if (na < 1 || nb < 1) BUG("diff_compute: a side without runs");
  memset(out, 0, sizeof *out);
  out->step_glob = a->s->opt.step_glob;
  out->per_step = wants_per_step(a, na, b, nb);
  SideTotals ta, tb;
  side_info(a, na, out->per_step, &out->a, &ta);
  side_info(b, nb, out->per_step, &out->b, &tb);
  overview_noise(out, &ta, &tb);
  side_totals_free(&ta);
  side_totals_free(&tb);
  Table ranges = {.runs = {na, nb}}, kernels = {.runs = {na, nb}};
  add_side(&ranges, &kernels, a, na, false, out->per_step);
  add_side(&ranges, &kernels, b, nb, true, out->per_step);
  finish(&ranges, true, &out->only_a[0], &out->only_b[0], &out->ranges);
  finish(&kernels, false, &out->only_a[1], &out->only_b[1], &out->kernels);
}

void diff_free(DiffResult *d) {
  for (size_t i = 0; i < d->ranges.n; i++) free(d->ranges.v[i].name);
  for (size_t i = 0; i < d->kernels.n; i++) free(d->kernels.v[i].name);
  vec_free(&d->ranges);
  vec_free(&d->kernels);
}

bool diff_pct(int64_t a, int64_t b, double *pct) {
  if (a == 0) return false;
  *pct = 100.0 * (double)(b - a) / (double)a;
  return true;
}
