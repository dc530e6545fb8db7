/* job: the FileJob helpers shared by the language rewriters. */
#include <stdlib.h>
#include <string.h>

#include <tree_sitter/api.h>

#include "rewrite.h"

Lang lang_of_path(const char *path) {
  const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
  if (!dot || (slash && dot < slash)) return LANG_NONE;
  dot++;
  if (!strcmp(dot, "py") || !strcmp(dot, "pyw")) return LANG_PYTHON;
  if (!strcmp(dot, "c")) return LANG_C;
  if (!strcmp(dot, "h")) return LANG_C;
  if (!strcmp(dot, "cc") || !strcmp(dot, "cpp") || !strcmp(dot, "cxx") || !strcmp(dot, "hh") ||
      !strcmp(dot, "hpp") || !strcmp(dot, "hxx"))
    return LANG_CPP;
  if (!strcmp(dot, "cu") || !strcmp(dot, "cuh")) return LANG_CUDA;
  return LANG_NONE;
}

void job_explain(FileJob *job, int line, const char *fmt, ...) {
  if (!job->explain) return;
  buf_printf(&job->explain_text, "%s:%d: ", job->rel, line);
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&job->explain_text, fmt, ap);
  va_end(ap);
  buf_putc(&job->explain_text, '\n');
}

typedef struct {
  long line;
  size_t at, len, seq;
} ExplainLine;

static int explain_cmp(const void *a, const void *b) {
  const ExplainLine *x = a, *y = b;
  if (x->line != y->line) return x->line < y->line ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void job_explain_sort(FileJob *job) {
  Buf *t = &job->explain_text;
  VEC(ExplainLine) lines = {0};
  size_t skip = strlen(job->rel) + 1; /* "rel:" */
  for (size_t at = 0; at < t->len;) {
    const char *nl = memchr(t->s + at, '\n', t->len - at);
    size_t end = nl ? (size_t)(nl - t->s) + 1 : t->len;
    ExplainLine l = {at + skip < end ? strtol(t->s + at + skip, NULL, 10) : 0, at, end - at, lines.n};
    vec_push(&lines, l);
    at = end;
  }
  qsort(lines.v, lines.n, sizeof *lines.v, explain_cmp);
  Buf out = {0};
  for (size_t i = 0; i < lines.n; i++) buf_add(&out, t->s + lines.v[i].at, lines.v[i].len);
  buf_free(t);
  *t = out;
  vec_free(&lines);
}

bool job_too_big(FileJob *job) {
  if (job->len <= NC_MAX_PARSE_BYTES) return false;
  job->unparsable = true;
  diag_at(&job->diags, DIAG_WARNING, job->rel, NULL, 0, 0, 0,
          "%zu MB is more than ncrewrite parses (%zu MB); the file is copied unchanged", job->len >> 20,
          NC_MAX_PARSE_BYTES >> 20);
  return true;
}

void filejob_free(FileJob *job) {
  diags_free(&job->diags);
  buf_free(&job->explain_text);
  edits_free(&job->edits);
  for (size_t i = 0; i < job->ranges.n; i++) free(job->ranges.v[i].name);
  vec_free(&job->ranges);
}

void job_parser_free(void *parser) {
  if (parser) ts_parser_delete(parser);
}
