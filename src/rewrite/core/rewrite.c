/* rewrite: the compiler core's entry (rewrite.h): a file's job
 * (filejob_init, filejob_full_trace), rewrite_run (the per-file pipeline:
 * the file's rewriter, its edits applied, what it made of each rule),
 * rewrite_file, and the one table of the languages the core rewrites. A
 * row says how a file is recognised (its extensions), what a user may call
 * the language (--languages), how messages name it, which rewriter takes
 * it and which walker finds the statements inside a range (drill); adding
 * a language is a row here plus its rewriter (core/<lang>/;
 * docs/architecture.md lists the rest).
 *
 * The entry dispatches to the language rewriters, which call back only
 * into job.c (the helpers they share) and edits.c (and tsnode.h's inline
 * helpers), never into this file: no file of the core calls a file that
 * calls it (tests/arch). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite.h"
#include "util.h"

static int py_inner(const char *src, size_t len, Lang lang, int line0, int line1, bool every, InnerStmts *out) {
  (void)lang;
  return py_inner_statements(src, len, line0, line1, every, out);
}

static const struct {
  Lang lang;
  const char *display;     /* in messages and the summary line */
  const char *names[3];    /* --languages spellings */
  const char *exts[7];     /* file extensions, without the dot */
  int (*rewrite)(FileJob *);
  /* the statements one level inside a range (ncrewrite drill) */
  int (*inner)(const char *, size_t, Lang, int, int, bool, InnerStmts *);
} LANGS[] = {
  {LANG_PYTHON, "Python", {"python", "py"}, {"py", "pyw"}, py_rewrite, py_inner},
  {LANG_C, "C", {"c"}, {"c", "h"}, c_rewrite, c_inner_statements},
  {LANG_CPP, "C++", {"cpp", "c++"}, {"cc", "cpp", "cxx", "hh", "hpp", "hxx"}, c_rewrite, c_inner_statements},
  {LANG_CUDA, "CUDA", {"cuda", "cu"}, {"cu", "cuh"}, c_rewrite, c_inner_statements},
};
enum { NLANGS = sizeof LANGS / sizeof *LANGS };

Lang lang_of_path(const char *path) {
  const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
  if (!dot || (slash && dot < slash)) return LANG_NONE;
  for (int i = 0; i < NLANGS; i++)
    for (int k = 0; k < 7 && LANGS[i].exts[k]; k++)
      if (!strcmp(dot + 1, LANGS[i].exts[k])) return LANGS[i].lang;
  return LANG_NONE;
}

Lang lang_by_name(const char *name, size_t n) {
  for (int i = 0; i < NLANGS; i++)
    for (int k = 0; k < 3 && LANGS[i].names[k]; k++)
      if (strlen(LANGS[i].names[k]) == n && !strncmp(name, LANGS[i].names[k], n)) return LANGS[i].lang;
  return LANG_NONE;
}

const char *lang_display(Lang l) {
  for (int i = 0; i < NLANGS; i++)
    if (LANGS[i].lang == l) return LANGS[i].display;
  return "other";
}

const char *lang_names(void) {
  static char list[NLANGS * 16];
  if (!list[0])
    for (int i = 0, at = 0; i < NLANGS; i++)
      at += snprintf(list + at, sizeof list - (size_t)at, "%s%s", i ? ", " : "", LANGS[i].names[0]);
  return list;
}

int rewrite_file(FileJob *job) {
  for (int i = 0; i < NLANGS; i++)
    if (LANGS[i].lang == job->lang) return LANGS[i].rewrite(job);
  return 0;
}

int inner_statements(Lang lang, const char *src, size_t len, int line0, int line1, bool every, InnerStmts *out) {
  for (int i = 0; i < NLANGS; i++)
    if (LANGS[i].lang == lang) return LANGS[i].inner(src, len, lang, line0, line1, every, out);
  return -1;
}

void filejob_init(FileJob *job, const Rules *rules, const char *rel, const char *origin, const char *src, size_t len,
                  const Target *const *targets, size_t ntargets) {
  memset(job, 0, sizeof *job);
  job->rel = rel;
  job->origin = origin;
  job->src = src;
  job->len = len;
  job->lang = lang_of_path(rel);
  job->module = job->module_owned = job->lang == LANG_PYTHON ? module_of_path(rel) : NULL;
  job->rules = rules;
  job->targets = targets;
  job->ntargets = ntargets;
}

void filejob_full_trace(FileJob *job, bool cli, unsigned languages) {
  /* A full trace instruments every language in the tree (a C project with
   * Sphinx's docs/conf.py is still a C project), unless --languages leaves
   * some out: e.g. a Python package whose C++ files are sources a program
   * compiles at run time (torch.utils.cpp_extension) keeps them as they
   * are with --languages python. A rule naming a file instruments it. */
  const Rules *r = job->rules;
  bool all = (r->full_trace || cli) && r->targets.n == 0;
  bool left_out = all && languages && job->lang != LANG_NONE && !(languages & (1u << job->lang));
  job->full_trace = !left_out && rules_full_trace(r, cli, job->targets, job->ntargets);
  if (left_out)
    job_explain(job, 1, "not instrumented: --languages leaves %s files out of the full trace (a rule naming the "
                        "file instruments it)", lang_display(job->lang));
}

void rule_results_free(RuleResults *v) {
  for (size_t i = 0; i < v->n; i++) free(v->v[i].why);
  vec_free(v);
}

void rule_results_warn(const Rules *rules, const RuleResults *v, Diags *d) {
  for (size_t i = 0; i < v->n; i++)
    if (!v->v[i].hit && v->v[i].why) rule_warn_miss(rules, d, v->v[i].rule, v->v[i].why);
}

/* Each rule of the job's targets: hit (a range of its, or for a kind that
 * makes none, the planner's hits and no reason against), or missed with
 * the planner's reason; neither is left out. */
static void rule_results(const FileJob *job, RuleResults *out) {
  for (size_t t = 0; t < job->ntargets; t++)
    for (size_t k = 0; k < job->targets[t]->rules.n; k++) {
      const Rule *ru = &job->targets[t]->rules.v[k];
      const RuleOutcome *oc = job_rule_outcome(job, ru);
      const char *why = oc ? oc->miss : NULL;
      bool hit = false;
      for (size_t q = 0; q < job->ranges.n && !hit; q++) hit = job->ranges.v[q].rule == ru;
      if (!hit && !rule_kind(ru->kind)->range_kind) hit = oc && oc->hits && !why;
      if (hit) vec_push(out, ((RuleResult){ru, true, NULL}));
      else if (why) vec_push(out, ((RuleResult){ru, false, xstrdup(why)}));
    }
}

int rewrite_run(FileJob *job, Buf *out, LineMap *map, RuleResults *results) {
  int rc = 0;
  if (job->ntargets || job->full_trace) rc = rewrite_file(job);
  if (rc == 0 && job->edits.v.n) {
    if (edits_apply(&job->edits, job->src, job->len, out, map) < 0) {
      diag_at(&job->diags, DIAG_ERROR, job->rel, NULL, 0, 0, 0,
              "internal error: overlapping edits; file copied unchanged (please report)");
      if (map) linemap_free(map);
    } else {
      rc = 1;
    }
  }
  if (results) rule_results(job, results);
  return rc;
}
