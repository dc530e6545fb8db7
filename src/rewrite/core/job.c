/* job: the FileJob helpers shared by the language rewriters. */
#include <stdlib.h>
#include <string.h>

#include <tree_sitter/api.h>

#include "rewrite.h"

void job_explain(FileJob *job, int line, const char *fmt, ...) {
  if (!job->explain) return;
  vec_push(&job->explain_at, ((struct ExplainAt){line, job->explain_text.len, 0}));
  buf_printf(&job->explain_text, "%s:%d: ", job->rel, line);
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&job->explain_text, fmt, ap);
  va_end(ap);
  buf_putc(&job->explain_text, '\n');
}

static int explain_cmp(const void *a, const void *b) {
  const struct ExplainAt *x = a, *y = b;
  if (x->line != y->line) return x->line < y->line ? -1 : 1;
  return x->at < y->at ? -1 : x->at > y->at; /* stable: in the order written */
}

void job_explain_sort(FileJob *job) {
  Buf *t = &job->explain_text;
  struct ExplainAt *v = job->explain_at.v;
  size_t n = job->explain_at.n;
  /* each entry runs to the start of the one written after it */
  for (size_t i = 0; i < n; i++) v[i].len = (i + 1 < n ? v[i + 1].at : t->len) - v[i].at;
  qsort(v, n, sizeof *v, explain_cmp);
  Buf out = {0};
  for (size_t i = 0; i < n; i++) buf_add(&out, t->s + v[i].at, v[i].len);
  buf_free(t);
  *t = out;
  vec_free(&job->explain_at);
}

bool job_too_big(FileJob *job) {
  if (job->len <= NC_MAX_PARSE_BYTES) return false;
  job->unparsable = true;
  diag_at(&job->diags, DIAG_WARNING, job->rel, NULL, 0, 0, 0,
          "%zu MB is more than ncrewrite parses (%zu MB); the file is copied unchanged", job->len >> 20,
          NC_MAX_PARSE_BYTES >> 20);
  return true;
}

static RuleOutcome *outcome(FileJob *job, const Rule *r) {
  for (size_t i = 0; i < job->outcomes.n; i++)
    if (job->outcomes.v[i].rule == r) return &job->outcomes.v[i];
  vec_push(&job->outcomes, ((RuleOutcome){r, 0, NULL}));
  return &job->outcomes.v[job->outcomes.n - 1];
}

void job_rule_hit(FileJob *job, const Rule *r) { outcome(job, r)->hits++; }

void job_rule_miss(FileJob *job, const Rule *r, char *why) {
  RuleOutcome *o = outcome(job, r);
  if (o->miss) free(why);
  else o->miss = why;
}

const RuleOutcome *job_rule_outcome(const FileJob *job, const Rule *r) {
  for (size_t i = 0; i < job->outcomes.n; i++)
    if (job->outcomes.v[i].rule == r) return &job->outcomes.v[i];
  return NULL;
}

void job_rule_elsewhere(FileJob *job, const Rule *r) {
  const RuleKindRow *k = rule_kind(r->kind);
  ruledoc_diag(&job->rules->doc, &job->diags, DIAG_WARNING, r->at, "%s apply to %s only; ignored for %s", k->plural,
               k->langs == RULE_IN_PYTHON ? "Python modules" : "C, C++ and CUDA files", job->rel);
}

void rule_warn_miss(const Rules *rules, Diags *d, const Rule *r, const char *why) {
  RNode *at = r->cls_at && !strncmp(why, "no class '", 10) ? r->cls_at : r->at;
  ruledoc_diag(&rules->doc, d, DIAG_WARNING, at, "rule matches nothing: %s", why);
}

void filejob_free(FileJob *job) {
  free(job->module_owned);
  job->module = job->module_owned = NULL;
  for (size_t i = 0; i < job->outcomes.n; i++) free(job->outcomes.v[i].miss);
  vec_free(&job->outcomes);
  diags_free(&job->diags);
  buf_free(&job->explain_text);
  vec_free(&job->explain_at);
  edits_free(&job->edits);
  for (size_t i = 0; i < job->ranges.n; i++) free(job->ranges.v[i].name), free(job->ranges.v[i].unranged);
  vec_free(&job->ranges);
}

void job_parser_free(void *parser) {
  if (parser) ts_parser_delete(parser);
}
