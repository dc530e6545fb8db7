/* diff: two runs' summaries compared name by name (diff.h states the
 * contract). Rows are gathered in one table per kind, keyed by the name's
 * text in a local interner (the runs' Models intern separately), then
 * scaled per step when the step counts differ, then sorted by change. */
#include "diff.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  Intern names; /* row i has name id i */
  DiffRows rows;
} Table;

static DiffRow *row_for(Table *t, const char *name) {
  uint32_t id = intern(&t->names, name, strlen(name));
  if (id == t->rows.n) {
    DiffRow r = {0};
    r.name = xstrdup(name);
    vec_push(&t->rows, r);
  }
  return &t->rows.v[id];
}

/* The name a range row is matched by: every step name is the step glob, so
 * a run with one `ProfilerStep#7` meets another's merged `ProfilerStep#*`. */
static const char *range_key(const Model *m, const Summary *s, const RangeRow *r) {
  const char *nm = range_row_name(m, s, r);
  return fnmatch(s->opt.step_glob, nm, 0) == 0 ? s->opt.step_glob : nm;
}

static void add_ranges(Table *t, const Model *m, const Summary *s, bool is_b) {
  for (size_t i = 0; i < s->ranges.n; i++) {
    const RangeRow *r = &s->ranges.v[i];
    DiffRow *d = row_for(t, range_key(m, s, r));
    DiffSide *side = is_b ? &d->b : &d->a;
    /* added, not set: keys are unique within a run, but a sum stays right
     * if two rows ever share one */
    side->count += (double)r->count;
    side->incl += r->incl;
    side->excl += r->excl;
    side->gpu += r->gpu;
    *(is_b ? &d->count_b : &d->count_a) += r->count;
    d->kinds |= r->kinds;
    d->in |= is_b ? DIFF_IN_B : DIFF_IN_A;
  }
}

static void add_kernels(Table *t, const Model *m, const Summary *s, bool is_b) {
  for (size_t i = 0; i < s->kernels.n; i++) {
    const KernelRow *k = &s->kernels.v[i];
    DiffRow *d = row_for(t, intern_str(&m->names, k->name));
    DiffSide *side = is_b ? &d->b : &d->a;
    side->count += (double)k->count;
    side->gpu += k->total;
    *(is_b ? &d->count_b : &d->count_a) += k->count;
    d->kinds |= 1u << k->kind;
    d->in |= is_b ? DIFF_IN_B : DIFF_IN_A;
  }
}

/* v / n rounded half away from zero (n > 0). */
static int64_t div_round(int64_t v, uint64_t n) {
  int64_t q = (int64_t)n;
  return v >= 0 ? (v + q / 2) / q : -((-v + q / 2) / q);
}

static void scale_side(DiffSide *s, uint64_t steps) {
  s->count /= (double)steps;
  s->incl = div_round(s->incl, steps);
  s->excl = div_round(s->excl, steps);
  s->gpu = div_round(s->gpu, steps);
}

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

static int64_t max3(int64_t x, int64_t y, int64_t z) { return x > y ? (x > z ? x : z) : (y > z ? y : z); }

static void set_change(DiffRow *r) {
  r->change = max3(abs64(r->b.incl - r->a.incl), abs64(r->b.excl - r->a.excl), abs64(r->b.gpu - r->a.gpu));
}

static int cmp_rows(const void *pa, const void *pb) {
  const DiffRow *x = pa, *y = pb;
  if (x->change != y->change) return x->change > y->change ? -1 : 1;
  double cx = fabs(x->b.count - x->a.count), cy = fabs(y->b.count - y->a.count);
  if (cx != cy) return cx > cy ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Move a table's rows into out, scaled and sorted; count the one-sided. */
static void finish(Table *t, const DiffResult *d, size_t *only_a, size_t *only_b, DiffRows *out) {
  for (size_t i = 0; i < t->rows.n; i++) {
    DiffRow *r = &t->rows.v[i];
    if (d->per_step) {
      scale_side(&r->a, d->a.steps);
      scale_side(&r->b, d->b.steps);
    }
    set_change(r);
    *only_a += r->in == DIFF_IN_A;
    *only_b += r->in == DIFF_IN_B;
  }
  if (t->rows.n) qsort(t->rows.v, t->rows.n, sizeof *t->rows.v, cmp_rows);
  *out = t->rows;
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

static void run_info(const DiffRun *r, DiffRunInfo *info) {
  const Summary *s = r->s;
  int64_t sum = 0;
  for (size_t i = 0; i < s->steps.n; i++) sum += s->steps.v[i].dur;
  info->files = r->m->traces.n;
  info->ranks = distinct_ranks(s);
  info->steps = s->steps.n;
  info->step_mean = s->steps.n ? sum / (int64_t)s->steps.n : 0;
  info->range_self = s->range_excl_total;
  info->gpu_total = s->kernel_total;
}

void diff_compute(const DiffRun *a, const DiffRun *b, DiffResult *out) {
  memset(out, 0, sizeof *out);
  out->step_glob = a->s->opt.step_glob;
  run_info(a, &out->a);
  run_info(b, &out->b);
  /* one step of each run is the common unit only when both have steps */
  out->per_step = out->a.steps && out->b.steps && out->a.steps != out->b.steps;
  if (out->per_step) {
    out->a.range_self = div_round(out->a.range_self, out->a.steps);
    out->a.gpu_total = div_round(out->a.gpu_total, out->a.steps);
    out->b.range_self = div_round(out->b.range_self, out->b.steps);
    out->b.gpu_total = div_round(out->b.gpu_total, out->b.steps);
  }
  Table ranges = {0}, kernels = {0};
  add_ranges(&ranges, a->m, a->s, false);
  add_ranges(&ranges, b->m, b->s, true);
  add_kernels(&kernels, a->m, a->s, false);
  add_kernels(&kernels, b->m, b->s, true);
  finish(&ranges, out, &out->only_a[0], &out->only_b[0], &out->ranges);
  finish(&kernels, out, &out->only_a[1], &out->only_b[1], &out->kernels);
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
