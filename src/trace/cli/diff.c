/* diff: `nctrace diff A B` -- each run loaded into its own Model (a trace
 * file or a run directory, as summary takes them), summarised with the
 * same options, compared by diff_compute (core/diff.h) and written as
 * Markdown (diff_doc) or JSON (diff_json).
 *
 * Exit status as diff(1) has it for trouble: 2 for a usage error and for
 * a run that cannot be read (the reader's message says where), 0 when the
 * comparison was written. Differences are the normal outcome here, not a
 * status. */
#include "commands.h"
#include "diff_render.h"
#include "output.h"

#include <stdint.h>
#include <string.h>

static const char USAGE[] = "usage: nctrace diff A B [--format md|json] [-o OUT] [--top N] [--step GLOB]";

typedef struct {
  const char *format, *out, *runs[2];
  size_t nruns, top;
  SummaryOptions opt;
} DiffArgs;

/* 0, or 2 after saying what is wrong. */
static int parse_args(int argc, char **argv, DiffArgs *a) {
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "--format") && i + 1 < argc) a->format = argv[++i];
    else if (!strcmp(s, "-o") && i + 1 < argc) a->out = argv[++i];
    else if (!strcmp(s, "--step") && i + 1 < argc) a->opt.step_glob = argv[++i];
    else if (!strcmp(s, "--top") && i + 1 < argc) {
      if (!parse_count(argv[++i], &a->top)) return nct_error("diff: --top takes a count (0: all), not '%s'", argv[i]), 2;
    } else if (s[0] == '-' && s[1]) return nct_error("diff: unknown or incomplete option '%s'", s), 2;
    else if (a->nruns == 2) return nct_error("diff: compares two runs; '%s' is a third\n%s", s, USAGE), 2;
    else a->runs[a->nruns++] = s;
  }
  if (a->nruns != 2 || (strcmp(a->format, "md") && strcmp(a->format, "json"))) return nct_error("%s", USAGE), 2;
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
  if (rc) return rc;
  Model m[2];
  memset(m, 0, sizeof m);
  Summary s[2];
  int loaded = 0;
  for (; loaded < 2; loaded++)
    if (load_run(a.runs[loaded], &a.opt, &m[loaded], &s[loaded]) < 0) break;
  rc = 2;
  if (loaded == 2) {
    DiffResult d;
    diff_compute(&(DiffRun){&m[0], &s[0]}, &(DiffRun){&m[1], &s[1]}, &d);
    Buf b = {0};
    if (!strcmp(a.format, "json")) diff_json(&d, a.runs[0], a.runs[1], a.top, &b);
    else {
      Doc doc = {0};
      diff_doc(&d, a.runs[0], a.runs[1], a.top, &doc);
      doc_write_md(&doc, &b);
      doc_free(&doc);
    }
    rc = out_write_file(a.out, &b) < 0 ? 2 : 0;
    buf_free(&b);
    diff_free(&d);
  }
  for (int i = 0; i < loaded; i++) summary_free(&s[i]);
  model_free(&m[0]);
  model_free(&m[1]);
  return rc;
}
