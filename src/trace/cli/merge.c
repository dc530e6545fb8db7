/* merge: `nctrace merge` -- several per-rank traces on one timeline.
 *
 * Each rank becomes one process row (pid = its rank, from
 * distributedInfo.rank, else its position among the ranks' main processes
 * on the command line); the CPU threads and GPU streams of its main process
 * and of its helper processes (DataLoader and Pool workers, subprocesses:
 * ncrt.process says which, and distributedInfo.rank is the rank they serve)
 * become threads of that row, a helper's named after its role and pid, so
 * the rows are the job's ranks and world_size counts ranks, not files. Clocks are aligned on
 * baseTimeNanoseconds: every ts is shifted by (base - smallest base), so
 * the output's baseTimeNanoseconds is the smallest. Flow ids get the rank
 * in their high digits so arrows of different files never pair up.
 * Two passes per file: the model for names and threads, then a stream that
 * rewrites pid, tid, ts (and flow ids) and copies every other member. */
#include "clocks.h"
#include "commands.h"
#include "model.h"
#include "output.h"
#include "reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLOW_ID_STRIDE 1000000000000LL

typedef struct {
  const Model *m;
  const Trace *t;
  Output *o;
  int64_t rank, shift, flow, tid0;
  uint64_t *written;
  Buf line, tmp;
  int rc;
} MergeCtx;

static void put_ts(Buf *b, int64_t ns) {
  if (ns < 0) {
    buf_putc(b, '-');
    ns = -ns;
  }
  buf_printf(b, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

static int merge_event(void *ctx, Walker *w, const Member *mem, size_t n, Span raw) {
  MergeCtx *c = ctx;
  Span pid = {"0", 1}, tid = {"0", 1}, ph = {0};
  for (size_t i = 0; i < n; i++) {
    if (span_eq(mem[i].key, "pid")) pid = mem[i].val;
    else if (span_eq(mem[i].key, "tid")) tid = mem[i].val;
    else if (span_eq(mem[i].key, "ph")) span_string(mem[i].val, &c->tmp, &ph);
  }
  if (ph.n == 1 && ph.s[0] == 'M') return 0; /* replaced by our own names */
  int64_t p = intern_find(&c->m->ids, pid.s, pid.n), q = intern_find(&c->m->ids, tid.s, tid.n), th = -1;
  if (p >= 0 && q >= 0) i64map_get(&c->t->thread_of, (int64_t)((uint64_t)p << 32 | (uint64_t)q), &th);
  Buf *b = &c->line;
  b->len = 0;
  buf_putc(b, '{');
  bool first = true;
  for (size_t i = 0; i < n; i++) {
    Span k = mem[i].key;
    if (!first) buf_puts(b, ", ");
    first = false;
    buf_putc(b, '"');
    buf_add(b, k.s, k.n);
    buf_puts(b, "\": ");
    int64_t v;
    if (span_eq(k, "pid")) {
      buf_printf(b, "%lld", (long long)c->rank);
    } else if (span_eq(k, "tid")) {
      buf_printf(b, "%lld", (long long)(th >= 0 ? c->tid0 + th + 1 : 0));
    } else if (span_eq(k, "ts") && span_us_to_ns(mem[i].val, &v)) {
      put_ts(b, v + c->shift);
    } else if (span_eq(k, "id") && span_int(mem[i].val, &v) && v >= 0 && v < FLOW_ID_STRIDE) {
      buf_printf(b, "%lld", (long long)(c->flow * FLOW_ID_STRIDE + v));
    } else {
      buf_add(b, mem[i].val.s, mem[i].val.n);
    }
  }
  (void)raw;
  buf_putc(b, '}');
  if ((*c->written)++) out_puts(c->o, ",\n");
  out_write(c->o, b->s, b->len);
  (void)w;
  return 0;
}

/* A rank's main process: ncrt says so, or (torch.profiler's, older
 * traces) nothing says otherwise */
static bool main_process(const Trace *t) { return !t->proc.known || t->proc.is_rank; }

/* row order: by rank, a rank's main process first, then file order */
static bool row_before(const Model *m, const int64_t *rank_of, size_t a, size_t b) {
  if (rank_of[a] != rank_of[b]) return rank_of[a] < rank_of[b];
  bool ma = main_process(m->traces.v[a]), mb = main_process(m->traces.v[b]);
  if (ma != mb) return ma;
  return a < b;
}

/* lane_of >= 0: the thread is a lane of start/end ranges of that tid */
static void meta(Output *o, uint64_t *written, const char *name, int64_t pid, int64_t tid, const char *key,
                 const char *sval, long long ival, long long lane_of) {
  Buf b = {0};
  buf_printf(&b, "{\"ph\": \"M\", \"name\": \"%s\", \"pid\": %lld, \"tid\": %lld, \"args\": {\"%s\": ", name,
             (long long)pid, (long long)tid, key);
  if (sval) buf_json_string(&b, sval);
  else buf_printf(&b, "%lld", ival);
  if (lane_of >= 0) buf_printf(&b, ", \"ncrt lane of\": %lld", lane_of);
  buf_puts(&b, "}}");
  if ((*written)++) out_puts(o, ",\n");
  out_write(o, b.s, b.len);
  buf_free(&b);
}

int cmd_merge(int argc, char **argv) {
  const char *out = NULL;
  VEC(const char *) files = {0};
  for (int i = 1; i < argc; i++) {
    const char *v;
    switch (opt_next("merge", argc, argv, &i, &v)) {
    case MRG_OUT: out = v; break;
    case OPT_ARG: vec_push(&files, argv[i]); break;
    default: vec_free(&files); return 2;
    }
  }
  if (!out || !files.n) {
    vec_free(&files);
    return usage_error("merge", NULL);
  }
  Model m = {0};
  ClockAlign ca = {0};
  int rc = 1;
  int64_t *rank_of = NULL;
  for (size_t i = 0; i < files.n; i++) {
    size_t before = m.traces.n;
    if (model_load(&m, files.v[i]) < 0) goto done;
    for (size_t k = before; k < m.traces.n; k++) { /* a directory is many traces */
      clock_collect(&ca, &m, k);                     /* the collectives' ends: the hosts' clocks */
      vec_free(&m.traces.v[k]->ev);                  /* only names and threads are needed */
    }
  }
  clock_align(&ca, &m); /* each host's traces on the first host's clock */
  {
    Buf note = {0};
    clock_align_text(&ca, &note);
    for (char *l = note.s, *e; l && *l; l = e + 1) {
      e = strchr(l, '\n');
      *e = 0;
      nct_note("merge: %s", l);
    }
    buf_free(&note);
  }
  /* ranks: the main processes' distributedInfo.rank unless one is missing
   * or two repeat; a helper process goes with the rank it serves */
  size_t nt = m.traces.n;
  rank_of = xmalloc((nt ? nt : 1) * sizeof *rank_of);
  bool by_position = false;
  for (size_t i = 0; i < nt; i++) {
    const Trace *a = m.traces.v[i];
    if (!main_process(a)) continue;
    if (a->rank < 0) by_position = true;
    for (size_t j = 0; j < i; j++)
      if (main_process(m.traces.v[j]) && m.traces.v[j]->rank == a->rank) by_position = true;
  }
  if (by_position) nct_warning("merge: ranks missing or repeated in distributedInfo; using file order as rank");
  int64_t next = 0, world = 0;
  for (size_t i = 0; i < nt; i++) {
    const Trace *a = m.traces.v[i];
    if (main_process(a)) rank_of[i] = by_position ? next++ : a->rank;
  }
  for (size_t i = 0; i < nt; i++) {
    const Trace *a = m.traces.v[i];
    if (main_process(a)) continue;
    /* a helper: its rank's row; by position, the row of the main process
     * with its distributedInfo.rank, else a row of its own */
    rank_of[i] = -1;
    for (size_t j = 0; j < nt && rank_of[i] < 0; j++)
      if (main_process(m.traces.v[j]) && m.traces.v[j]->rank == a->rank) rank_of[i] = rank_of[j];
    if (rank_of[i] < 0) rank_of[i] = by_position || a->rank < 0 ? next++ : a->rank;
  }
  /* world_size: the ranks seen, or more when the traces say so (a run
   * given in part) */
  for (size_t i = 0; i < nt; i++) {
    if (rank_of[i] + 1 > world) world = rank_of[i] + 1;
    if (!by_position && main_process(m.traces.v[i]) && m.traces.v[i]->world_size > world)
      world = m.traces.v[i]->world_size;
  }
  int64_t base = INT64_MAX;
  for (size_t i = 0; i < m.traces.n; i++)
    if (m.traces.v[i]->has_base && m.traces.v[i]->base_ns < base) base = m.traces.v[i]->base_ns;
  for (size_t i = 0; i < m.traces.n; i++)
    if (!m.traces.v[i]->has_base)
      nct_warning("%s: no baseTimeNanoseconds; its timestamps are taken as already aligned", m.traces.v[i]->path);
  Output *o = out_open(out);
  if (!o) goto done;
  uint64_t written = 0;
  out_puts(o, "{\"schemaVersion\": 1, \"displayTimeUnit\": \"ms\", ");
  if (base != INT64_MAX) {
    Buf b = {0};
    buf_printf(&b, "\"baseTimeNanoseconds\": %lld, ", (long long)base);
    out_write(o, b.s, b.len);
    buf_free(&b);
  }
  {
    Buf b = {0};
    buf_printf(&b, "\"distributedInfo\": {\"world_size\": %lld}, \"traceName\": \"merged\",\n", (long long)world);
    /* the hosts' clock offsets applied (clocks.h), when there are hosts to align */
    if (ca.hosts.n > 1) buf_puts(&b, "\"ncrt\": {\"clocks\": [");
    for (size_t h = 0; ca.hosts.n > 1 && h < ca.hosts.n; h++) {
      const HostClock *hc = &ca.hosts.v[h];
      buf_printf(&b, "%s{\"host\": ", h ? ", " : "");
      buf_json_string(&b, hc->id);
      buf_puts(&b, ", \"name\": ");
      buf_json_string(&b, hc->name);
      buf_printf(&b, ", \"ranks\": [%lld, %lld], \"reference\": %s, \"aligned\": %s, \"offset_ns\": %lld, "
                 "\"uncertainty_ns\": %lld, \"spread_ns\": %lld, \"anchors\": %zu, \"anchor\": ",
                 (long long)hc->lo_rank, (long long)hc->hi_rank, hc->reference ? "true" : "false",
                 hc->aligned ? "true" : "false", (long long)hc->offset_ns, (long long)hc->uncert_ns,
                 (long long)hc->spread_ns, hc->anchors);
      buf_json_string(&b, hc->anchor ? hc->anchor : "");
      if (hc->bounded) buf_printf(&b, ", \"bounds_ns\": [%lld, %lld]", (long long)hc->lo_ns, (long long)hc->hi_ns);
      buf_putc(&b, '}');
    }
    if (ca.hosts.n > 1) buf_puts(&b, "]},\n");
    buf_puts(&b, "\"traceEvents\": [\n");
    out_write(o, b.s, b.len);
    buf_free(&b);
  }
  int wrc = 0;
  /* rows in rank order, each rank's main process first, then its helpers */
  size_t *order = xmalloc((nt ? nt : 1) * sizeof *order);
  for (size_t i = 0; i < nt; i++) order[i] = i;
  for (size_t i = 1; i < nt; i++)
    for (size_t j = i; j > 0 && row_before(&m, rank_of, order[j], order[j - 1]); j--) {
      size_t x = order[j];
      order[j] = order[j - 1], order[j - 1] = x;
    }
  int64_t tid0 = 0;
  for (size_t oi = 0; oi < nt && wrc == 0; oi++) {
    size_t i = order[oi];
    const Trace *t = m.traces.v[i];
    int64_t rank = rank_of[i];
    bool first_of_rank = oi == 0 || rank_of[order[oi - 1]] != rank;
    if (first_of_rank) tid0 = 0;
    Buf name = {0}, tmp = {0};
    if (first_of_rank) {
      buf_printf(&name, "rank %lld", (long long)rank);
      meta(o, &written, "process_name", rank, 0, "name", name.s, 0, -1);
      meta(o, &written, "process_sort_index", rank, 0, "sort_index", NULL, rank, -1);
    }
    for (size_t k = 0; k < t->threads.n; k++) {
      const Thread *th = &t->threads.v[k];
      name.len = 0;
      if (!main_process(t)) {
        buf_puts(&name, t->proc.role && *t->proc.role ? t->proc.role : "helper process");
        if (t->proc.detail && *t->proc.detail) buf_printf(&name, " (%s)", t->proc.detail);
        buf_puts(&name, " / ");
      }
      int64_t plabel;
      if (i64map_get(&t->process_label, th->pid, &plabel))
        buf_printf(&name, "%s / ", intern_str(&m.names, (uint32_t)plabel));
      model_thread_label(&m, t, (uint32_t)k, &name);
      /* a lane of start/end ranges stays a thread of its own, beside the
       * thread it belongs to, and says so */
      long long lane = th->lane_of >= 0 ? tid0 + th->lane_of + 1 : -1;
      meta(o, &written, "thread_name", rank, tid0 + (int64_t)k + 1, "name", name.s, 0, lane);
      meta(o, &written, "thread_sort_index", rank, tid0 + (int64_t)k + 1, "sort_index", NULL,
           (th->gpu ? 100000 : 0) + (lane >= 0 ? lane - 1 : (long long)(tid0 + (int64_t)k)), -1);
    }
    buf_free(&name);
    buf_free(&tmp);
    MergeCtx c = {&m, t, o, rank, t->has_base ? t->base_ns - base : 0, (int64_t)i, tid0, &written, {0}, {0}, 0};
    Visitor v = {NULL, merge_event, &c, NULL, NULL};
    bool lg;
    wrc = trace_walk(t->path, &v, &lg);
    buf_free(&c.line);
    buf_free(&c.tmp);
    tid0 += (int64_t)t->threads.n;
  }
  free(order);
  out_puts(o, "\n]}\n");
  rc = (out_close(o) < 0 || wrc < 0) ? 1 : 0;
done:
  free(rank_of);
  clock_align_free(&ca);
  vec_free(&files);
  model_free(&m);
  return rc;
}
