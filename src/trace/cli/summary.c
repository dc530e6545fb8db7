/* summary: `nctrace summary` -- load, analyse, print the summary document
 * as Markdown (doc_write_md) or the JSON (summary_json). */
#include "render.h"
#include "commands.h"
#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_summary(int argc, char **argv) {
  Model m = {0};
  SummaryOptions opt = {"ProfilerStep#*", 20, 20};
  const char *format = "md", *out = "-";
  VEC(const char *) files = {0};
  int rc = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--format") && i + 1 < argc) format = argv[++i];
    else if (!strcmp(a, "-o") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(a, "--top") && i + 1 < argc) opt.top_ranges = opt.top_kernels = (size_t)atol(argv[++i]);
    else if (!strcmp(a, "--step") && i + 1 < argc) opt.step_glob = argv[++i];
    else if (!strcmp(a, "--strict")) m.strict = true;
    else if (a[0] == '-' && a[1]) {
      nct_error("summary: unknown or incomplete option '%s'", a);
      rc = 2;
      goto done;
    } else vec_push(&files, a);
  }
  if (!files.n || (strcmp(format, "md") && strcmp(format, "json"))) {
    nct_error("usage: nctrace summary TRACE... [--format md|json] [-o OUT] [--top N] [--step GLOB] [--strict]");
    rc = 2;
    goto done;
  }
  for (size_t i = 0; i < files.n; i++)
    if (model_load(&m, files.v[i]) < 0) goto done;
  Summary s;
  summary_compute(&m, &opt, &s);
  Buf b = {0};
  if (!strcmp(format, "json")) summary_json(&m, &s, &b);
  else {
    Doc doc = {0};
    summary_doc(&m, &s, &doc);
    doc_write_md(&doc, &b);
    doc_free(&doc);
  }
  Output *o = out_open(out);
  if (o) {
    out_write(o, b.s, b.len);
    rc = out_close(o) < 0 ? 1 : 0;
  }
  buf_free(&b);
  summary_free(&s);
done:
  vec_free(&files);
  model_free(&m);
  return rc;
}
