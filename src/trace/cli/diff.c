/* diff: `nctrace diff A B` or `nctrace diff A1 A2 ... -- B1 B2 ...` -- each
 * run loaded into its own Model (a trace file or a run directory, as
 * summary takes them), summarised with the same options, compared by
 * diff_compute (core/diff.h: several runs per side give each change a
 * verdict from the run-to-run spread) and written as Markdown (diff_doc)
 * or JSON (diff_json).
 *
 * Exit status as diff(1) has it for trouble: 2 for a usage error and for
 * a run that cannot be read (the reader's message says where), 0 when the
 * comparison was written. Differences are the normal outcome here, not a
 * status. */
#include "commands.h"
#include "diff_render.h"
#include "output.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *format, *out;
  VEC(const char *) runs[2]; /* side A's runs, side B's */
  size_t top;
  SummaryOptions opt;
} DiffArgs;

/* 0, or 2 after saying what is wrong. Without "--", exactly two runs (A,
 * B); with it, one or more on each side of it. */
static int parse_args(int argc, char **argv, DiffArgs *a) {
  int side = 0;
  bool sides = false, dashes = false; /* "--" is somewhere; it was passed */
  for (int i = 1; i < argc; i++) {
    if (opt_takes_value("diff", argv[i])) i++;
    else if (!strcmp(argv[i], "--")) sides = true;
  }
  for (int i = 1; i < argc; i++) {
    const char *v, *s = argv[i];
    switch (opt_next("diff", argc, argv, &i, &v)) {
    case DIF_FORMAT: a->format = v; break;
    case DIF_OUT: a->out = v; break;
    case DIF_STEP: a->opt.step_glob = v; break;
    case DIF_TOP:
      if (!opt_count("diff", "--top", v, &a->top)) return 2;
      break;
    case OPT_ARG:
      if (!strcmp(s, "--")) {
        if (dashes) return usage_error("diff", "diff: '--' separates the two sides once");
        dashes = true;
        side = 1;
      } else if (!sides && a->runs[0].n == 2) {
        Buf why = {0};
        buf_printf(&why, "diff: compares two runs; '%s' is a third (several runs per side: A1 A2 -- B1 B2)", s);
        int rc = usage_error("diff", why.s);
        buf_free(&why);
        return rc;
      } else {
        vec_push(&a->runs[side], s);
      }
      break;
    default: return 2;
    }
  }
  if (!dashes && a->runs[0].n == 2) { /* A B */
    vec_push(&a->runs[1], a->runs[0].v[1]);
    a->runs[0].n = 1;
  }
  if (!a->runs[0].n || !a->runs[1].n || (strcmp(a->format, "md") && strcmp(a->format, "json")))
    return usage_error("diff", NULL);
  return 0;
}

/* Load one run (its files as summary reads them) and summarise it. */
static int load_run(const char *path, const SummaryOptions *opt, Model *m, Summary *s) {
  if (model_load(m, path) < 0) return -1;
  model_check_ranks(m);
  summary_compute(m, opt, s);
  return 0;
}

int cmd_diff(int argc, char **argv) {
  DiffArgs a = {.format = "md", .out = "-", .top = 20, .opt = {"ProfilerStep#*", 0, 0}};
  int rc = parse_args(argc, argv, &a);
  if (rc) {
    vec_free(&a.runs[0]);
    vec_free(&a.runs[1]);
    return rc;
  }
  size_t na = a.runs[0].n, n = na + a.runs[1].n;
  Model *m = xcalloc(n, sizeof *m);
  Summary *s = xcalloc(n, sizeof *s);
  DiffRun *runs = xcalloc(n, sizeof *runs);
  const char **paths = xcalloc(n, sizeof *paths);
  for (size_t i = 0; i < n; i++) paths[i] = i < na ? a.runs[0].v[i] : a.runs[1].v[i - na];
  size_t loaded = 0;
  for (; loaded < n; loaded++) {
    if (load_run(paths[loaded], &a.opt, &m[loaded], &s[loaded]) < 0) break;
    runs[loaded] = (DiffRun){&m[loaded], &s[loaded]};
  }
  rc = 2;
  if (loaded == n) {
    DiffResult d;
    diff_compute(runs, na, runs + na, n - na, &d);
    DiffLabels lb = {paths, na, paths + na, n - na};
    Buf b = {0};
    if (!strcmp(a.format, "json")) diff_json(&d, &lb, a.top, &b);
    else {
      Doc doc = {0};
      diff_doc(&d, &lb, a.top, &doc);
      doc_write_md(&doc, &b);
      doc_free(&doc);
    }
    rc = out_write_file(a.out, &b) < 0 ? 2 : 0;
    buf_free(&b);
    diff_free(&d);
  }
  for (size_t i = 0; i < loaded; i++) summary_free(&s[i]);
  for (size_t i = 0; i <= loaded && i < n; i++) model_free(&m[i]);
  free(m);
  free(s);
  free(runs);
  free(paths);
  vec_free(&a.runs[0]);
  vec_free(&a.runs[1]);
  return rc;
}
