/* clocks: each host's clock offset from the ends of collectives (clocks.h
 * says why and how). */
#include "clocks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ANCHOR_NAMES = 16 };

typedef struct {
  int64_t start, end; /* ns, the trace's own clock */
} Span2;
typedef VEC(Span2) Ends;
typedef VEC(int64_t) I64Vec;

/* one trace's collectives, by name */
typedef struct ClockEnds {
  size_t n;
  uint32_t name[MAX_ANCHOR_NAMES];
  Ends at[MAX_ANCHOR_NAMES]; /* by end, ascending */
} ClockEnds;

/* A name whose end every rank leaves together: a collective's. Not
 * "backward" (DDP's all-reduce runs in it, but work follows on each rank). */
static bool anchor_name(const char *name) {
  static const char *const words[] = {"barrier", "all_reduce", "allreduce", "all_gather", "allgather",
                                      "reduce_scatter", "reducescatter", "broadcast", "all_to_all", "alltoall",
                                      "nccl", "gloo:", NULL};
  return name_has_any(name, words);
}

static bool main_process(const Trace *t) { return !t->proc.known || t->proc.is_rank; }

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static int cmp_end(const void *a, const void *b) {
  const Span2 *x = a, *y = b;
  return x->end < y->end ? -1 : x->end > y->end;
}

void clock_collect(ClockAlign *ca, const Model *m, size_t ti) {
  while (ca->ends.n <= ti) vec_push(&ca->ends, NULL);
  const Trace *t = m->traces.v[ti];
  if (!main_process(t) || !t->has_base) return;
  ClockEnds *c = xcalloc(1, sizeof *c);
  /* names are judged once each */
  I64Map judged = {0};
  for (size_t i = 0; i < t->ev.n; i++) {
    const Ev *e = &t->ev.v[i];
    if (!kind_is_cpu_range(e->kind) && e->kind != K_KERNEL) continue;
    int64_t slot;
    if (!i64map_get(&judged, e->name, &slot)) {
      slot = -1;
      if (anchor_name(intern_str(&m->names, e->name)) && c->n < MAX_ANCHOR_NAMES) {
        slot = (int64_t)c->n;
        c->name[c->n++] = e->name;
      }
      i64map_put(&judged, e->name, slot);
    }
    if (slot >= 0) vec_push(&c->at[slot], ((Span2){e->ts, e->ts + e->dur}));
  }
  i64map_free(&judged);
  for (size_t k = 0; k < c->n; k++) qsort(c->at[k].v, c->at[k].n, sizeof *c->at[k].v, cmp_end);
  ca->ends.v[ti] = c;
}

static const Ends *ends_of(const ClockAlign *ca, size_t ti, uint32_t name) {
  const ClockEnds *c = ti < ca->ends.n ? ca->ends.v[ti] : NULL;
  for (size_t k = 0; c && k < c->n; k++)
    if (c->name[k] == name) return &c->at[k];
  return NULL;
}

static const char *host_of(const Trace *t) { return t->proc.host ? t->proc.host : ""; }

static size_t host_index(ClockAlign *ca, const Trace *t) {
  for (size_t h = 0; h < ca->hosts.n; h++)
    if (!strcmp(ca->hosts.v[h].id, host_of(t))) return h;
  HostClock hc = {0};
  hc.id = xstrdup(host_of(t));
  hc.name = xstrdup(t->proc.host_name ? t->proc.host_name : "");
  hc.lo_rank = hc.hi_rank = -1;
  vec_push(&ca->hosts, hc);
  return ca->hosts.n - 1;
}

static int64_t median_of(int64_t *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_i64);
  return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

static int cmp_host(const void *a, const void *b) {
  const HostClock *x = a, *y = b;
  int64_t p = x->lo_rank < 0 ? INT64_MAX : x->lo_rank, q = y->lo_rank < 0 ? INT64_MAX : y->lo_rank;
  return p < q ? -1 : p > q;
}

/* The differences (reference minus host h) of the k-th ends of name on
 * every pair of main processes, when every one of them has the same
 * number of ends; n = 0 otherwise. And the bounds causality puts on the
 * offset: no rank leaves a collective before every rank entered it, so
 * off <= end_q - start_r and off >= start_q - end_r for every pair (q on
 * the reference, r on h) and every k; *lo > *hi when they contradict
 * (the name is no collective, or a clock drifted). */
static int64_t *pair_diffs(const ClockAlign *ca, const Model *m, size_t ref, size_t h, uint32_t name, size_t *n,
                           int64_t *lo, int64_t *hi) {
  *n = 0;
  *lo = INT64_MIN, *hi = INT64_MAX;
  size_t len = SIZE_MAX;
  for (size_t ti = 0; ti < m->traces.n; ti++) {
    const Trace *t = m->traces.v[ti];
    if (!main_process(t) || !t->has_base) continue;
    size_t hx = SIZE_MAX;
    for (size_t k = 0; k < ca->hosts.n; k++)
      if (!strcmp(ca->hosts.v[k].id, host_of(t))) hx = k;
    if (hx != ref && hx != h) continue;
    const Ends *e = ends_of(ca, ti, name);
    if (!e || !e->n || (len != SIZE_MAX && e->n != len)) return NULL;
    len = e->n;
  }
  if (len == SIZE_MAX) return NULL;
  I64Vec d = {0};
  for (size_t a = 0; a < m->traces.n; a++) {
    const Trace *ta = m->traces.v[a];
    if (!main_process(ta) || !ta->has_base || strcmp(host_of(ta), ca->hosts.v[ref].id)) continue;
    const Ends *ea = ends_of(ca, a, name);
    for (size_t b = 0; b < m->traces.n; b++) {
      const Trace *tb = m->traces.v[b];
      if (!main_process(tb) || !tb->has_base || strcmp(host_of(tb), ca->hosts.v[h].id)) continue;
      const Ends *eb = ends_of(ca, b, name);
      for (size_t k = 0; k < len; k++) {
        int64_t qs = ea->v[k].start + ta->base_ns, qe = ea->v[k].end + ta->base_ns;
        int64_t rs = eb->v[k].start + tb->base_ns, re = eb->v[k].end + tb->base_ns;
        vec_push(&d, qe - re);
        if (qe - rs < *hi) *hi = qe - rs;
        if (qs - re > *lo) *lo = qs - re;
      }
    }
  }
  *n = d.n;
  return d.v;
}

int clock_align(ClockAlign *ca, Model *m) {
  for (size_t ti = 0; ti < m->traces.n; ti++) {
    const Trace *t = m->traces.v[ti];
    size_t hi = host_index(ca, t); /* may grow hosts: index first */
    HostClock *h = &ca->hosts.v[hi];
    if (!main_process(t) || t->rank < 0) continue;
    if (h->lo_rank < 0 || t->rank < h->lo_rank) h->lo_rank = t->rank;
    if (t->rank > h->hi_rank) h->hi_rank = t->rank;
  }
  if (ca->hosts.n < 2) return 0;
  qsort(ca->hosts.v, ca->hosts.n, sizeof *ca->hosts.v, cmp_host);
  ca->hosts.v[0].reference = ca->hosts.v[0].aligned = true;
  int rc = 0;
  for (size_t h = 1; h < ca->hosts.n; h++) {
    HostClock *hc = &ca->hosts.v[h];
    /* every collective name the two hosts share, pooled; their causal
     * bounds intersected */
    I64Vec pool = {0}, names = {0};
    int64_t blo = INT64_MIN, bhi = INT64_MAX;
    for (size_t ti = 0; ti < ca->ends.n; ti++) {
      const ClockEnds *c = ca->ends.v[ti];
      if (!c || strcmp(host_of(m->traces.v[ti]), ca->hosts.v[0].id)) continue;
      for (size_t k = 0; k < c->n; k++) {
        bool seen = false;
        for (size_t j = 0; j < names.n; j++) seen |= names.v[j] == (int64_t)c->name[k];
        if (seen) continue;
        size_t n;
        int64_t lo, hi;
        int64_t *d = pair_diffs(ca, m, 0, h, c->name[k], &n, &lo, &hi);
        if (n) {
          vec_push(&names, (int64_t)c->name[k]);
          for (size_t j = 0; j < n; j++) vec_push(&pool, d[j]);
          if (lo > blo) blo = lo;
          if (hi < bhi) bhi = hi;
        }
        free(d);
      }
    }
    int64_t *best = pool.v;
    size_t bn = pool.n;
    if (!bn) {
      vec_free(&names);
      nct_warning("clocks: host %s (ranks %lld-%lld) has no collective range (barrier, all_reduce, an NCCL kernel, "
                  "...) in common with host %s (ranks %lld-%lld), the same number of times on every rank: its "
                  "traces are placed by its own real-time clock (baseTimeNanoseconds), off by as much as the two "
                  "hosts' clocks differ",
                  *hc->name ? hc->name : hc->id, (long long)hc->lo_rank, (long long)hc->hi_rank,
                  *ca->hosts.v[0].name ? ca->hosts.v[0].name : ca->hosts.v[0].id, (long long)ca->hosts.v[0].lo_rank,
                  (long long)ca->hosts.v[0].hi_rank);
      rc = -1;
      continue;
    }
    int64_t off = median_of(best, bn);
    /* within what causality allows: the tighter the later ranks' entry
     * before the others' exit (a straggler's), the closer */
    hc->bounded = blo <= bhi;
    if (hc->bounded) {
      hc->lo_ns = blo, hc->hi_ns = bhi;
      if (off < blo) off = blo;
      if (off > bhi) off = bhi;
    }
    for (size_t i = 0; i < bn; i++) best[i] = best[i] > off ? best[i] - off : off - best[i];
    int64_t mad = median_of(best, bn);
    free(best);
    hc->aligned = true;
    hc->offset_ns = off;
    hc->spread_ns = (int64_t)(1.4826 * (double)mad);
    hc->uncert_ns = (int64_t)(1.4826 * (double)mad / sqrt((double)bn));
    hc->anchors = bn;
    Buf an = {0};
    for (size_t j = 0; j < names.n; j++)
      buf_printf(&an, "%s%s", j ? ", " : "", intern_str(&m->names, (uint32_t)names.v[j]));
    hc->anchor = an.s;
    vec_free(&names);
    for (size_t ti = 0; ti < m->traces.n; ti++) {
      Trace *t = m->traces.v[ti];
      if (t->has_base && !strcmp(host_of(t), hc->id)) t->base_ns += off;
    }
  }
  return rc;
}

static void host_text(const HostClock *h, Buf *b) {
  buf_printf(b, "host %s", *h->name ? h->name : "?");
  if (*h->id) buf_printf(b, " [%s]", h->id);
  if (h->lo_rank >= 0) {
    if (h->lo_rank == h->hi_rank) buf_printf(b, " (rank %lld)", (long long)h->lo_rank);
    else buf_printf(b, " (ranks %lld-%lld)", (long long)h->lo_rank, (long long)h->hi_rank);
  }
}

void clock_align_text(const ClockAlign *ca, Buf *out) {
  for (size_t h = 1; h < ca->hosts.n; h++) {
    const HostClock *hc = &ca->hosts.v[h];
    if (!hc->aligned) continue;
    buf_puts(out, "clocks: ");
    host_text(hc, out);
    buf_printf(out, " is %+.3f ms from ", -(double)hc->offset_ns / 1e6);
    host_text(&ca->hosts.v[0], out);
    buf_printf(out, ", \xc2\xb1 %.3f ms (one end spreads %.3f ms), from %zu ends of %s", (double)hc->uncert_ns / 1e6,
               (double)hc->spread_ns / 1e6, hc->anchors, hc->anchor);
    if (hc->bounded)
      buf_printf(out, "; by causality between %+.3f and %+.3f ms", -(double)hc->hi_ns / 1e6, -(double)hc->lo_ns / 1e6);
    buf_puts(out, ": corrected\n");
  }
}

void clock_align_free(ClockAlign *ca) {
  for (size_t h = 0; h < ca->hosts.n; h++) {
    free(ca->hosts.v[h].id);
    free(ca->hosts.v[h].name);
    free(ca->hosts.v[h].anchor);
  }
  vec_free(&ca->hosts);
  for (size_t i = 0; i < ca->ends.n; i++) {
    ClockEnds *c = ca->ends.v[i];
    if (!c) continue;
    for (size_t k = 0; k < c->n; k++) vec_free(&c->at[k]);
    free(c);
  }
  vec_free(&ca->ends);
}
