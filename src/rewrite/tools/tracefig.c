/* tracefig: per-name figures of a trace's ranges (tracefig.h). */
#include <stdlib.h>
#include <string.h>

#include "tracefig.h"
#include "tracescan.h"

static long intern_find(const Intern *in, const char *s) {
  if (!in->cap) return -1;
  for (size_t h = fnv1a64(s, strlen(s)) & (in->cap - 1);; h = (h + 1) & (in->cap - 1)) {
    if (!in->slot[h]) return -1;
    if (!strcmp(in->s.v[in->slot[h] - 1], s)) return (long)(in->slot[h] - 1);
  }
}

static size_t intern_add(Intern *in, const char *s, bool *fresh) {
  long i = intern_find(in, s);
  *fresh = i < 0;
  if (i >= 0) return (size_t)i;
  if (2 * (in->s.n + 1) > in->cap) { /* keep it at most half full */
    size_t cap = in->cap ? 2 * in->cap : 64;
    size_t *slot = xcalloc(cap, sizeof *slot);
    for (size_t k = 0; k < in->s.n; k++) {
      size_t h = fnv1a64(in->s.v[k], strlen(in->s.v[k])) & (cap - 1);
      while (slot[h]) h = (h + 1) & (cap - 1);
      slot[h] = k + 1;
    }
    free(in->slot);
    in->slot = slot, in->cap = cap;
  }
  size_t h = fnv1a64(s, strlen(s)) & (in->cap - 1);
  while (in->slot[h]) h = (h + 1) & (in->cap - 1);
  vec_push(&in->s, xstrdup(s));
  in->slot[h] = in->s.n;
  return in->s.n - 1;
}

static void intern_free(Intern *in) {
  for (size_t i = 0; i < in->s.n; i++) free(in->s.v[i]);
  vec_free(&in->s);
  free(in->slot);
}

static int on_range(void *ctx, const TraceRange *r) {
  Figures *f = ctx;
  bool fresh;
  size_t i = intern_add(&f->names, r->name, &fresh);
  if (fresh) {
    Agg a = {f->names.s.v[i], r->file ? xstrdup(r->file) : NULL, r->line, 0, 0, 0};
    vec_push(&f->aggs, a);
  }
  Agg *a = &f->aggs.v[i];
  a->count++;
  a->incl += r->dur;
  if (!a->file && r->file) a->file = xstrdup(r->file), a->line = r->line;
  vec_push(&f->occs, ((Occ){intern_add(&f->threads, r->thread, &fresh), r->ts, r->dur, 0, i}));
  return 0;
}

bool figures_ran(const Figures *f, const char *name) { return intern_find(&f->names, name) >= 0; }

static int cmp_occ(const void *pa, const void *pb) {
  const Occ *a = pa, *b = pb;
  if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  return a->dur > b->dur ? -1 : a->dur < b->dur; /* the outer one first */
}

/* Exclusive time: a range's duration minus that of the ranges directly
 * nested in it on its thread. */
int figures_load(const char *trace, Figures *f) {
  memset(f, 0, sizeof *f);
  if (tracescan_ranges(trace, on_range, f) < 0) return -1;
  qsort(f->occs.v, f->occs.n, sizeof *f->occs.v, cmp_occ);
  VEC(size_t) stack = {0};
  for (size_t i = 0; i < f->occs.n; i++) {
    Occ *o = &f->occs.v[i];
    if (i && o->thread != f->occs.v[i - 1].thread) stack.n = 0;
    while (stack.n) {
      Occ *top = &f->occs.v[stack.v[stack.n - 1]];
      if (top->ts + top->dur > o->ts) break;
      stack.n--;
    }
    if (stack.n) f->occs.v[stack.v[stack.n - 1]].child += o->dur;
    vec_push(&stack, i);
  }
  vec_free(&stack);
  for (size_t i = 0; i < f->occs.n; i++) {
    Occ *o = &f->occs.v[i];
    int64_t ex = o->dur - o->child;
    f->aggs.v[o->agg].excl += ex > 0 ? ex : 0;
  }
  return 0;
}

void figures_free(Figures *f) {
  for (size_t i = 0; i < f->aggs.n; i++) free(f->aggs.v[i].file);
  vec_free(&f->aggs);
  vec_free(&f->occs);
  intern_free(&f->names);
  intern_free(&f->threads);
}
