/* tracescan: user-annotation ranges out of a trace through nctrace's reader.
 * Only this file sees src/trace's headers (see tracescan.h). */
#include "../../trace/core/reader.h"
#include "tracescan.h"

#include <sys/stat.h>

#include <stdio.h>
#include <string.h>

/* The trace core reports through nct_say; here it speaks as ncrewrite (no
 * progress bar). */
static void say(const char *level, const char *where, const char *msg) {
  if (level) fprintf(stderr, "%s: %s: %s\n", where ? where : "ncrewrite", level, msg);
}

typedef struct {
  int (*fn)(void *, const TraceRange *);
  void *ctx;
  Buf name, file, thread, tmp;
} Scan;

static void set_str(Buf *b, Span s) {
  b->len = 0;
  buf_add(b, s.s, s.n);
  buf_putc(b, 0);
}

static int on_event(void *ctx, Walker *w, const Member *m, size_t n, Span raw) {
  (void)raw;
  Scan *sc = ctx;
  Span ph = {0}, cat = {0}, name = {0}, pid = {0}, tid = {0}, ts = {0}, dur = {0};
  for (size_t i = 0; i < n; i++) {
    Span k = m[i].key;
    if (span_eq(k, "ph")) ph = m[i].val;
    else if (span_eq(k, "cat")) cat = m[i].val;
    else if (span_eq(k, "name")) name = m[i].val;
    else if (span_eq(k, "pid")) pid = m[i].val;
    else if (span_eq(k, "tid")) tid = m[i].val;
    else if (span_eq(k, "ts")) ts = m[i].val;
    else if (span_eq(k, "dur")) dur = m[i].val;
  }
  Span s;
  if (!ph.s || !span_string(ph, &sc->tmp, &s) || s.n != 1 || s.s[0] != 'X') return 0;
  if (cat.s && (!span_string(cat, &sc->tmp, &s) || !span_eq(s, "user_annotation"))) return 0;
  TraceRange r = {0};
  if (!name.s || !span_string(name, &sc->tmp, &s)) return 0;
  set_str(&sc->name, s);
  r.name = sc->name.s;
  if (!ts.s || !dur.s || !span_us_to_ns(ts, &r.ts) || !span_us_to_ns(dur, &r.dur) || r.dur < 0) return 0;
  sc->thread.len = 0;
  if (pid.s) buf_add(&sc->thread, pid.s, pid.n);
  buf_putc(&sc->thread, '/');
  if (tid.s) buf_add(&sc->thread, tid.s, tid.n);
  buf_putc(&sc->thread, 0);
  r.thread = sc->thread.s;
  size_t na;
  const Member *am = walk_args(w, &na);
  for (size_t k = 0; k < na; k++) {
    if (span_eq(am[k].key, "file") && span_string(am[k].val, &sc->tmp, &s)) {
      set_str(&sc->file, s);
      r.file = sc->file.s;
    } else if (span_eq(am[k].key, "line")) {
      span_int(am[k].val, &r.line);
    }
  }
  return sc->fn(sc->ctx, &r);
}

int tracescan_ranges(const char *path, int (*fn)(void *ctx, const TraceRange *r), void *ctx) {
  nct_say = say;
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) { /* a run directory: each of its traces */
    char **files;
    int n = trace_dir_files(path, &files), rc = n < 0 ? -1 : 0;
    for (int i = 0; i < n; i++) {
      if (!rc) rc = tracescan_ranges(files[i], fn, ctx);
      free(files[i]);
    }
    free(files);
    return rc;
  }
  Scan sc = {fn, ctx, {0}, {0}, {0}, {0}};
  Visitor v = {NULL, on_event, &sc, NULL, NULL};
  bool legacy;
  int rc = trace_walk(path, &v, &legacy);
  buf_free(&sc.name), buf_free(&sc.file), buf_free(&sc.thread), buf_free(&sc.tmp);
  return rc;
}
