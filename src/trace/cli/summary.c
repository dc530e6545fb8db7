/* summary: `nctrace summary` -- load, analyse, print the summary document
 * as Markdown (doc_write_md) or the JSON (summary_json); with Nsight
 * Compute / Systems CSVs named or found in the run directory, their
 * sections joined to the kernel table (deep_section.h).
 *
 * The events are folded as they are read when the traces allow it
 * (stream.h: ncrt's CPU-only traces), else, or with NCTRACE_STREAM=0 (the
 * tests' way to compare both), loaded into memory (model.h) and analysed
 * there (analyze.h); both give the same Summary. NCTRACE_STREAM_REPORT
 * set: a note says which path ran and why.
 *
 * The traces are folded one at a time on every core (partial.h: each
 * thread a share of the files, their states merged in order); with
 * NCTRACE_THREADS=N on N threads, and NCTRACE_FOLD=whole all as one fold
 * (what the tests compare the merged folds with). --partial writes the
 * state instead of the summary; partial files given as the traces are
 * merged into the summary of all their traces. */
#include "render.h"
#include "commands.h"
#include "deep_section.h"
#include "output.h"
#include "partial.h"
#include "report_source.h"
#include "stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* threads to fold on: NCTRACE_THREADS, else the cores (at most 8); 0 with
 * NCTRACE_FOLD=whole */
static unsigned fold_threads(void) {
  const char *whole = getenv("NCTRACE_FOLD"), *env = getenv("NCTRACE_THREADS");
  if (whole && !strcmp(whole, "whole")) return 0;
  long n = env && atoi(env) > 0 ? atoi(env) : sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 8 ? 8 : (unsigned)n;
}

/* Partial summaries given as the traces: merged in the order given. */
static int read_partials(SumState *st, const char *const *files, size_t n, const SummaryOptions *opt) {
  for (size_t i = 0; i < n; i++) {
    SumState one;
    if (sumstate_read(i ? &one : st, files[i], opt) < 0) {
      if (i) sumstate_free(&one);
      return -1;
    }
    if (i) sumstate_merge(st, &one);
  }
  sumstate_sort(st); /* as one run directory would list them */
  return 0;
}

int cmd_summary(int argc, char **argv) {
  SumState st = {0};
  bool strict = false, partial = false;
  SummaryOptions opt = {"ProfilerStep#*", 20, 20};
  const char *format = "md", *out = "-";
  VEC(const char *) files = {0};
  VEC(const char *) ncu = {0};
  VEC(const char *) nsys = {0};
  Deep deep = {0};
  int rc = 1;
  for (int i = 1; i < argc; i++) {
    const char *v;
    switch (opt_next("summary", argc, argv, &i, &v)) {
    case SUM_FORMAT: format = v; break;
    case SUM_OUT: out = v; break;
    case SUM_TOP:
      if (!opt_count("summary", "--top", v, &opt.top_ranges)) {
        rc = 2;
        goto done;
      }
      opt.top_kernels = opt.top_ranges;
      break;
    case SUM_STEP: opt.step_glob = v; break;
    case SUM_STRICT: strict = true; break;
    case SUM_NCU: vec_push(&ncu, v); break;
    case SUM_NSYS: vec_push(&nsys, v); break;
    case SUM_PARTIAL: partial = true; break;
    case OPT_ARG: vec_push(&files, argv[i]); break;
    default: rc = 2; goto done;
    }
  }
  if (!files.n || (strcmp(format, "md") && strcmp(format, "json"))) {
    rc = usage_error("summary", NULL);
    goto done;
  }
  size_t nparts = 0;
  for (size_t i = 0; i < files.n; i++) nparts += sumstate_is_partial(files.v[i]);
  if (nparts && nparts < files.n) {
    rc = usage_error("summary", "give traces or partial summaries (--partial's files), not both");
    goto done;
  }
  bool deep_csv = ncu.n || nsys.n;
  if (deep_csv && (partial || nparts)) {
    rc = usage_error("summary", "--ncu and --nsys join the kernels of traces read here: not with partial summaries");
    goto done;
  }
  const char *env = getenv("NCTRACE_STREAM");
  bool report = getenv("NCTRACE_STREAM_REPORT") != NULL, stream = !(env && !strcmp(env, "0")) && !deep_csv;
  if (nparts) {
    if (read_partials(&st, files.v, files.n, &opt) < 0) goto done;
  } else {
    if (sumstate_fold(&st, files.v, files.n, &opt, strict, stream, deep_csv, fold_threads()) < 0) goto done;
    /* the calls without a range, from the run's shadow tree (env.json) */
    st.env = source_env_read(files.v[0], NULL);
    if (report) {
      if (!stream) nct_note("summary read into memory: %s", deep_csv ? "Nsight CSVs are joined to the kernels"
                                                                       : "NCTRACE_STREAM=0");
      else if (st.mem_why) nct_note("summary read into memory: %s", st.mem_why);
      else nct_note("summary streamed");
    }
  }
  Buf b = {0};
  if (partial) {
    sumstate_write(&st, &b);
    rc = out_write_file(out, &b) < 0 ? 1 : 0;
    buf_free(&b);
    goto done;
  }
  model_check_ranks(&st.m);
  if (deep_load(&st.m, ncu.v, ncu.n, nsys.v, nsys.n, &deep) < 0) goto done;
  sumstate_finish(&st);
  source_unranged(&st.m, &st.s, NULL, st.env);
  if (!strcmp(format, "json")) summary_json(&st.m, &st.s, &deep, &b);
  else {
    Doc doc = {0};
    summary_doc_deep(&st.m, &st.s, &deep, &doc);
    doc_write_md(&doc, &b);
    doc_free(&doc);
  }
  rc = out_write_file(out, &b) < 0 ? 1 : 0;
  buf_free(&b);
done:
  deep_free(&deep);
  vec_free(&files);
  vec_free(&ncu);
  vec_free(&nsys);
  sumstate_free(&st);
  return rc;
}
