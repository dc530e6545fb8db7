/* filter: `nctrace filter` -- keep user annotations and, on request, the
 * GPU ops they launched and their direct children; drop short events.
 *
 * Two passes over the input: the first loads the compact model and marks
 * the events to keep (by their index in traceEvents); the second streams
 * the file again and copies kept events byte for byte, so args and every
 * other field survive unchanged. Metadata events (ph "M") are always kept;
 * top-level members other than traceEvents are copied after the events. */
#include "analyze.h"
#include "commands.h"
#include "output.h"
#include "reader.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *name_glob;
  int64_t min_dur;
  bool kernels, children;
} FilterOptions;

typedef struct {
  Output *o;
  const uint8_t *keep;
  size_t nkeep;
  uint64_t written;
  Buf headers;
  Buf tmp;
} Pass2;

static bool is_annotation(const Model *m, const Trace *t, const Ev *e, const FilterOptions *f) {
  if (e->kind != K_USER_ANNOTATION && !(t->legacy && e->kind == K_NONE)) return false;
  if (e->dur < f->min_dur) return false;
  return !f->name_glob || fnmatch(f->name_glob, intern_str(&m->names, e->name), 0) == 0;
}

/* Mark kept events in keep[ord]. */
static void mark(const Model *m, const Trace *t, const FilterOptions *f, uint8_t *keep) {
  const Ev *ev = t->ev.v;
  VEC(uint32_t) idx = {0};
  for (size_t i = 0; i < t->ev.n; i++)
    if (kind_is_cpu_range(ev[i].kind)) vec_push(&idx, (uint32_t)i);
  trace_sort_by_thread(t, idx.v, idx.n);
  I64Map launched = {0}; /* correlation ids launched under a kept annotation */
  bool *kept_name = xcalloc(intern_count(&m->names), sizeof *kept_name);
  typedef struct {
    int64_t end;
    bool kept;
  } Fr;
  VEC(Fr) st = {0};
  size_t kept_depth = 0;
  for (size_t k = 0; k < idx.n; k++) {
    const Ev *e = &ev[idx.v[k]];
    bool new_thread = k > 0 && ev[idx.v[k - 1]].thread != e->thread;
    while (st.n && (new_thread || st.v[st.n - 1].end <= e->ts)) kept_depth -= st.v[--st.n].kept;
    bool parent_kept = st.n && st.v[st.n - 1].kept;
    bool ann = is_annotation(m, t, e, f);
    if (ann) {
      keep[e->ord] = 1;
      kept_name[e->name] = true;
    } else if (f->children && parent_kept && e->dur >= f->min_dur) {
      keep[e->ord] = 1;
    }
    if (f->kernels && kept_depth && e->corr >= 0 && (e->kind == K_CUDA_RUNTIME || e->kind == K_CUDA_DRIVER))
      i64map_put(&launched, e->corr, 1);
    Fr fr = {e->ts + e->dur, ann};
    if (st.n && fr.end > st.v[st.n - 1].end) fr.end = st.v[st.n - 1].end;
    kept_depth += ann;
    vec_push(&st, fr);
  }
  if (f->kernels) {
    for (size_t i = 0; i < t->ev.n; i++) {
      const Ev *e = &ev[i];
      int64_t x;
      if (e->dur < f->min_dur) continue;
      if (kind_is_gpu_op(e->kind) && e->corr >= 0 && i64map_get(&launched, e->corr, &x)) keep[e->ord] = 1;
      if (e->kind == K_GPU_USER_ANNOTATION && kept_name[e->name]) keep[e->ord] = 1;
    }
  }
  vec_free(&st);
  vec_free(&idx);
  i64map_free(&launched);
  free(kept_name);
}

static int p2_header(void *ctx, Walker *w, Span key, Span val) {
  Pass2 *p = ctx;
  (void)w;
  buf_puts(&p->headers, ",\n");
  buf_putc(&p->headers, '"');
  buf_add(&p->headers, key.s, key.n);
  buf_puts(&p->headers, "\": ");
  buf_add(&p->headers, val.s, val.n);
  return 0;
}

static int p2_event(void *ctx, Walker *w, const Member *mem, size_t n, Span raw) {
  Pass2 *p = ctx;
  uint64_t ord = walk_ordinal(w);
  bool keep = ord < p->nkeep && p->keep[ord];
  if (!keep) {
    for (size_t i = 0; i < n; i++) {
      Span ph;
      if (span_eq(mem[i].key, "ph") && span_string(mem[i].val, &p->tmp, &ph) && span_eq(ph, "M")) keep = true;
    }
  }
  if (!keep) return 0;
  if (p->written++) out_puts(p->o, ",\n");
  out_write(p->o, raw.s, raw.n);
  return 0;
}

int cmd_filter(int argc, char **argv) {
  FilterOptions f = {NULL, 0, false, false};
  const char *in = NULL, *out = NULL;
  for (int i = 1; i < argc; i++) {
    const char *v;
    char *end;
    double us;
    switch (opt_next("filter", argc, argv, &i, &v)) {
    case FIL_OUT: out = v; break;
    case FIL_MIN_DUR:
      us = strtod(v, &end);
      if (*end || us < 0) return nct_error("filter: --min-dur-us wants a number >= 0, not '%s'", v), 2;
      f.min_dur = (int64_t)(us * 1000.0 + 0.5);
      break;
    case FIL_KERNELS: f.kernels = true; break;
    case FIL_CHILDREN: f.children = true; break;
    case FIL_NAME: f.name_glob = v; break;
    case OPT_ARG:
      if (in) return nct_error("filter: one input trace only (got '%s' and '%s')", in, argv[i]), 2;
      in = argv[i];
      break;
    default: return 2;
    }
  }
  if (!in || !out) return usage_error("filter", NULL);
  Model m = {0};
  if (model_load(&m, in) < 0) {
    model_free(&m);
    return 1;
  }
  const Trace *t = m.traces.v[0];
  size_t nkeep = t->notes.events;
  uint8_t *keep = xcalloc(nkeep ? nkeep : 1, 1);
  mark(&m, t, &f, keep);
  bool legacy = t->legacy;
  Pass2 p = {0};
  p.keep = keep;
  p.nkeep = nkeep;
  p.o = out_open(out);
  int rc = 1;
  if (p.o) {
    out_puts(p.o, legacy ? "[\n" : "{\"traceEvents\": [\n");
    Visitor v = {p2_header, p2_event, &p, NULL, NULL};
    bool lg;
    int wrc = trace_walk(in, &v, &lg);
    out_puts(p.o, legacy ? "\n]\n" : "\n]");
    if (!legacy) {
      out_write(p.o, p.headers.s ? p.headers.s : "", p.headers.len);
      out_puts(p.o, "\n}\n");
    }
    rc = (out_close(p.o) < 0 || wrc < 0) ? 1 : 0;
    if (!rc) fprintf(stderr, "nctrace: kept %llu of %llu events\n", (unsigned long long)p.written,
                     (unsigned long long)t->notes.events);
  }
  buf_free(&p.headers);
  buf_free(&p.tmp);
  free(keep);
  model_free(&m);
  return rc;
}
