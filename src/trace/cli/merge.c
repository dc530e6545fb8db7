/* merge: `nctrace merge` -- several per-rank traces on one timeline.
 *
 * Each input becomes one process row (pid = its rank, from
 * distributedInfo.rank, else its position on the command line); its CPU
 * threads and GPU streams become threads of that row, named after their
 * original process/thread names. Clocks are aligned on
 * baseTimeNanoseconds: every ts is shifted by (base - smallest base), so
 * the output's baseTimeNanoseconds is the smallest. Flow ids get the rank
 * in their high digits so arrows of different ranks never pair up.
 * Two passes per file: the model for names and threads, then a stream that
 * rewrites pid, tid, ts (and flow ids) and copies every other member. */
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
  int64_t rank, shift;
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
      buf_printf(b, "%lld", (long long)(th >= 0 ? th + 1 : 0));
    } else if (span_eq(k, "ts") && span_us_to_ns(mem[i].val, &v)) {
      put_ts(b, v + c->shift);
    } else if (span_eq(k, "id") && span_int(mem[i].val, &v) && v >= 0 && v < FLOW_ID_STRIDE) {
      buf_printf(b, "%lld", (long long)(c->rank * FLOW_ID_STRIDE + v));
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
  int rc = 1;
  for (size_t i = 0; i < files.n; i++) {
    if (model_load(&m, files.v[i]) < 0) goto done;
    vec_free(&m.traces.v[i]->ev); /* only names and threads are needed */
  }
  /* ranks: from distributedInfo unless missing or repeated */
  bool by_position = false;
  for (size_t i = 0; i < m.traces.n; i++) {
    if (m.traces.v[i]->rank < 0) by_position = true;
    for (size_t j = 0; j < i; j++)
      if (m.traces.v[j]->rank == m.traces.v[i]->rank) by_position = true;
  }
  if (by_position) nct_warning("merge: ranks missing or repeated in distributedInfo; using file order as rank");
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
    buf_printf(&b, "\"distributedInfo\": {\"world_size\": %zu}, \"traceName\": \"merged\",\n\"traceEvents\": [\n",
               m.traces.n);
    out_write(o, b.s, b.len);
    buf_free(&b);
  }
  int wrc = 0;
  for (size_t i = 0; i < m.traces.n && wrc == 0; i++) {
    const Trace *t = m.traces.v[i];
    int64_t rank = by_position ? (int64_t)i : t->rank;
    Buf name = {0}, tmp = {0};
    buf_printf(&name, "rank %lld", (long long)rank);
    meta(o, &written, "process_name", rank, 0, "name", name.s, 0, -1);
    meta(o, &written, "process_sort_index", rank, 0, "sort_index", NULL, rank, -1);
    for (size_t k = 0; k < t->threads.n; k++) {
      const Thread *th = &t->threads.v[k];
      name.len = 0;
      int64_t plabel;
      if (i64map_get(&t->process_label, th->pid, &plabel))
        buf_printf(&name, "%s / ", intern_str(&m.names, (uint32_t)plabel));
      model_thread_label(&m, t, (uint32_t)k, &name);
      /* a lane of start/end ranges stays a thread of its own, beside the
       * thread it belongs to, and says so */
      long long lane = th->lane_of >= 0 ? th->lane_of + 1 : -1;
      meta(o, &written, "thread_name", rank, (int64_t)k + 1, "name", name.s, 0, lane);
      meta(o, &written, "thread_sort_index", rank, (int64_t)k + 1, "sort_index", NULL,
           (th->gpu ? 100000 : 0) + (lane >= 0 ? lane - 1 : (long long)k), -1);
    }
    buf_free(&name);
    buf_free(&tmp);
    MergeCtx c = {&m, t, o, rank, t->has_base ? t->base_ns - base : 0, &written, {0}, {0}, 0};
    Visitor v = {NULL, merge_event, &c, NULL, NULL};
    bool lg;
    wrc = trace_walk(t->path, &v, &lg);
    buf_free(&c.line);
    buf_free(&c.tmp);
  }
  out_puts(o, "\n]}\n");
  rc = (out_close(o) < 0 || wrc < 0) ? 1 : 0;
done:
  vec_free(&files);
  model_free(&m);
  return rc;
}
