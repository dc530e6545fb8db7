/* summary: `nctrace summary` -- load, analyse, print the summary document
 * as Markdown (doc_write_md) or the JSON (summary_json); with Nsight
 * Compute / Systems CSVs named or found in the run directory, their
 * sections joined to the kernel table (deep_section.h).
 *
 * The events are folded as they are read when the traces allow it
 * (stream.h: ncrt's CPU-only traces), else, or with NCTRACE_STREAM=0 (the
 * tests' way to compare both), loaded into memory (model.h) and analysed
 * there (analyze.h); both give the same Summary. NCTRACE_STREAM_REPORT
 * set: a note says which path ran and why. */
#include "render.h"
#include "commands.h"
#include "deep_section.h"
#include "output.h"
#include "report_source.h"
#include "stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_summary(int argc, char **argv) {
  Model m = {0};
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
    case SUM_STRICT: m.strict = true; break;
    case SUM_NCU: vec_push(&ncu, v); break;
    case SUM_NSYS: vec_push(&nsys, v); break;
    case OPT_ARG: vec_push(&files, argv[i]); break;
    default: rc = 2; goto done;
    }
  }
  if (!files.n || (strcmp(format, "md") && strcmp(format, "json"))) {
    rc = usage_error("summary", NULL);
    goto done;
  }
  Summary s;
  const char *env = getenv("NCTRACE_STREAM");
  bool report = getenv("NCTRACE_STREAM_REPORT") != NULL, streamed = false;
  if (env && !strcmp(env, "0")) {
    if (report) nct_note("summary read into memory: NCTRACE_STREAM=0");
  } else if (ncu.n || nsys.n) {
    if (report) nct_note("summary read into memory: Nsight CSVs are joined to the kernels");
  } else {
    const char *why = NULL;
    int r = stream_summary(&m, files.v, files.n, &opt, &s, &why);
    if (r < 0) goto done;
    streamed = r == 1;
    if (report) {
      if (streamed) nct_note("summary streamed");
      else nct_note("summary read into memory: %s", why);
    }
    if (!streamed) {
      bool strict = m.strict;
      model_free(&m);
      memset(&m, 0, sizeof m);
      m.strict = strict;
    }
  }
  if (!streamed)
    for (size_t i = 0; i < files.n; i++)
      if (model_load(&m, files.v[i]) < 0) goto done;
  model_check_ranks(&m);
  if (deep_load(&m, ncu.v, ncu.n, nsys.v, nsys.n, &deep) < 0) {
    if (streamed) summary_free(&s);
    goto done;
  }
  if (!streamed) summary_compute(&m, &opt, &s);
  {
    /* the calls without a range, from the run's shadow tree (env.json) */
    char *env_text = source_env_read(files.v[0], NULL);
    source_unranged(&m, &s, NULL, env_text);
    free(env_text);
  }
  Buf b = {0};
  if (!strcmp(format, "json")) summary_json(&m, &s, &deep, &b);
  else {
    Doc doc = {0};
    summary_doc_deep(&m, &s, &deep, &doc);
    doc_write_md(&doc, &b);
    doc_free(&doc);
  }
  rc = out_write_file(out, &b) < 0 ? 1 : 0;
  buf_free(&b);
  summary_free(&s);
done:
  deep_free(&deep);
  vec_free(&files);
  vec_free(&ncu);
  vec_free(&nsys);
  model_free(&m);
  return rc;
}
