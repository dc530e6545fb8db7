/* rewrite_check: see rewrite_check.h. */
#include "rewrite_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>
#include <unistd.h>

const TSLanguage *tree_sitter_python(void);
const TSLanguage *tree_sitter_c(void);
const TSLanguage *tree_sitter_cpp(void);
const TSLanguage *tree_sitter_cuda(void);

static const TSLanguage *grammar(Lang lang) {
  switch (lang) {
  case LANG_PYTHON: return tree_sitter_python();
  case LANG_C: return tree_sitter_c();
  case LANG_CUDA: return tree_sitter_cuda();
  default: return tree_sitter_cpp();
  }
}

static bool parses(const char *s, size_t n, Lang lang) {
  TSParser *p = ts_parser_new();
  ts_parser_set_language(p, grammar(lang));
  TSTree *t = ts_parser_parse_string(p, NULL, s, (uint32_t)n);
  bool ok = t && !ts_node_has_error(ts_tree_root_node(t));
  ts_tree_delete(t);
  ts_parser_delete(p);
  return ok;
}

/* tree-sitter's Python grammar accepts some text CPython refuses (an
 * unexpected indent after a simple statement, say), and the promise is about
 * code that compiles. So when the output does not parse, CPython has the
 * last word on the input (a rare path: a process per finding only). */
static bool cpython_compiles(const char *s, size_t n) {
  char path[] = "/tmp/nc-fuzz-py-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return true;
  bool ok = write(fd, s, n) == (ssize_t)n;
  close(fd);
  char *cmd = xasprintf("/usr/bin/python3 -c \"import sys; compile(open(sys.argv[1], 'rb').read(), 'm', 'exec')\" "
                        "%s 2>/dev/null", path);
  int rc = ok ? system(cmd) : 0;
  free(cmd);
  unlink(path);
  return rc == 0;
}

static void fail(const char *what, const char *rel, const char *in, size_t inlen, const char *out, size_t outlen) {
  fprintf(stderr, "fuzz: %s (%s)\n--- input (%zu bytes) ---\n%.*s\n--- output (%zu bytes) ---\n%.*s\n", what, rel,
          inlen, (int)(inlen > 4000 ? 4000 : inlen), in, outlen, (int)(outlen > 4000 ? 4000 : outlen), out);
  abort();
}

/* One rewrite; the output (or the input, copied) in *out. Returns whether the
 * rewriter took the file (0) and whether it saw it as already instrumented. */
static int rewrite(const char *src, size_t len, Lang lang, const char *rel, Rules *rules, bool full, Buf *out,
                   bool *already) {
  FileJob job;
  const Target *tg[8];
  size_t ntg = 0;
  for (size_t i = 0; i < rules->targets.n && i < 8; i++) tg[ntg++] = &rules->targets.v[i];
  filejob_init(&job, rules, rel, rel, src, len, tg, ntg);
  job.lang = lang; /* (the name's extension may say otherwise) */
  job.full_trace = full;
  void *parser = NULL;
  job.parser = &parser;
  LineMap map = {0};
  out->len = 0;
  int rc = rewrite_run(&job, out, &map, NULL);
  if (rc == 1) {
    /* every range's lines map inside the output */
    for (size_t i = 0; i < job.ranges.n; i++) {
      int a = linemap_get(&map, job.ranges.v[i].line0), b = linemap_get(&map, job.ranges.v[i].line1);
      if (a < 1 || b < a) fail("range lines map outside the output", rel, src, len, out->s, out->len);
    }
    rc = 0;
  } else {
    if (rc == 0 && job.edits.v.n) fail("overlapping edits", rel, src, len, "", 0); /* edits, not applied */
    buf_add(out, src, len);
  }
  *already = job.already;
  linemap_free(&map);
  filejob_free(&job);
  job_parser_free(parser);
  return rc;
}

static void check_with(const char *src, size_t len, Lang lang, const char *rel, Rules *rules, bool full) {
  Buf out = {0}, again = {0};
  bool already = false, already2 = false;
  int rc = rewrite(src, len, lang, rel, rules, full, &out, &already);
  buf_putc(&out, 0);
  out.len--;
  if (rc == 0 && (out.len != len || memcmp(out.s, src, len))) {
    if (parses(src, len, lang) && !parses(out.s, out.len, lang) &&
        (lang != LANG_PYTHON || cpython_compiles(src, len)))
      fail("output does not parse though the input does", rel, src, len, out.s, out.len);
    int rc2 = rewrite(out.s, out.len, lang, rel, rules, full, &again, &already2);
    if (!(rc2 < 0 && already2) && (again.len != out.len || memcmp(again.s, out.s, out.len)))
      fail("a second rewrite changed the output", rel, out.s, out.len, again.s, again.len);
  }
  buf_free(&out);
  buf_free(&again);
}

void fuzz_rewrite_check(const uint8_t *data, size_t size, Lang lang, const char *rel, const char *rules_yaml) {
  char *src = xmalloc(size + 1);
  memcpy(src, data, size);
  src[size] = 0;
  Rules rules = {0}, none = {0};
  Diags d = {0};
  if (rules_parse(&rules, "fuzz.yaml", rules_yaml, strlen(rules_yaml), &d) < 0) {
    fprintf(stderr, "fuzz: the target's own rules do not load:\n%s", d.text.s);
    abort();
  }
  check_with(src, size, lang, rel, &rules, false);
  check_with(src, size, lang, rel, &none, true);
  rules_free(&rules);
  rules_free(&none);
  diags_free(&d);
  free(src);
}
