/* onefile: ncrewrite on named files, for build systems and hooks.
 *
 * --file is the tree pipeline cut down to one file: load rules, find the
 * targets that name the file, rewrite it, write the result atomically, then
 * a make-style depfile (the output, the input and the rule file: everything
 * this mode reads), so make, ninja or Bazel can run it as a cacheable
 * action. There is no manifest and no cache: the build system is the cache.
 *
 * --validate loads rule files and reports every problem at its place, for
 * pre-commit hooks and editors. */
#include "onefile.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emit.h"
#include "rewrite.h"
#include "rules.h"

/* The path rules see: --as, else the input relative to the current
 * directory when it is below it, else its base name. */
static char *rel_of(const OneFile *o) {
  const char *p = o->as ? o->as : o->file;
  if (o->as || (p[0] != '/' && strncmp(p, "../", 3))) {
    while (p[0] == '.' && p[1] == '/') p += 2;
    return xstrdup(p);
  }
  char *real = realpath(o->file, NULL), *cwd = getcwd(NULL, 0), *rel = NULL;
  size_t n = cwd ? strlen(cwd) : 0;
  if (real && cwd && !strncmp(real, cwd, n) && real[n] == '/') rel = xstrdup(real + n + 1);
  if (!rel) {
    const char *b = strrchr(o->file, '/');
    rel = xstrdup(b ? b + 1 : o->file);
  }
  free(real), free(cwd);
  return rel;
}

/* Split OUT into a root and a path below it, as emit_file wants them. */
static void split_out(const char *out, const char **root, const char **rel) {
  if (out[0] == '/') *root = "/", *rel = out + 1;
  else *root = ".", *rel = out;
}

/* Make-style escaping of one path in a rule. */
static void dep_path(Buf *b, const char *p) {
  for (; *p; p++) {
    if (*p == ' ' || *p == '#' || *p == '\\') buf_putc(b, '\\');
    if (*p == '$') buf_putc(b, '$');
    buf_putc(b, *p);
  }
}

/* Is `out` the same file as `in` (which exists)? Then writing it would
 * write into the sources. */
static bool same_file(const char *out, const struct stat *in) {
  struct stat st;
  return out && stat(out, &st) == 0 && st.st_dev == in->st_dev && st.st_ino == in->st_ino;
}

static int write_depfile(const OneFile *o, Diags *d) {
  Buf b = {0};
  dep_path(&b, o->out);
  buf_puts(&b, ": ");
  dep_path(&b, o->file);
  if (o->config) {
    buf_putc(&b, ' ');
    dep_path(&b, o->config);
  }
  buf_putc(&b, '\n');
  const char *root, *rel;
  split_out(o->depfile, &root, &rel);
  int rc = emit_file(root, rel, b.s, b.len, 0666 & ~0022, d);
  buf_free(&b);
  return rc;
}

int onefile_run(const OneFile *o) {
  Rules rules = {0};
  Diags top = {0}, fd = {0};
  top.strict = fd.strict = o->strict;
  top.quiet = fd.quiet = o->quiet;
  int status = 1;
  char *src = NULL, *rel = rel_of(o);
  size_t len = 0;
  FileJob job = {0};
  Buf out = {0};
  LineMap map = {0};
  TargetList tgs = {0};
  RuleResults results = {0};
  void *parser = NULL;

  if (o->config && rules_load(&rules, o->config, &top) < 0) {
    diags_print(&top);
    fprintf(stderr, "ncrewrite: rule file has errors; nothing written\n");
    goto done;
  }
  struct stat st;
  if (stat(o->file, &st) < 0 || !S_ISREG(st.st_mode) || read_file(o->file, &src, &len) < 0) {
    diag_at(&top, DIAG_ERROR, o->file, NULL, 0, 0, 0, "cannot read: %s",
            errno ? strerror(errno) : "not a regular file");
    diags_print(&top);
    goto done;
  }
  if (same_file(o->out, &st) || same_file(o->depfile, &st) || (o->depfile && !strcmp(o->depfile, o->out))) {
    diag_at(&top, DIAG_ERROR, o->out, NULL, 0, 0, 0,
            "-o and --depfile must name two new files, neither of them the input: ncrewrite never writes into sources");
    diags_print(&top);
    goto done;
  }
  rules_targets_naming(&rules, rel, NULL, &tgs);
  filejob_init(&job, &rules, rel, o->file, src, len, tgs.v, tgs.n);
  filejob_full_trace(&job, o->full_trace, o->languages);
  job.diags.strict = o->strict;
  job.diags.quiet = o->quiet;
  job.parser = &parser;
  const char *data = src;
  size_t dlen = len;
  if (rewrite_run(&job, &out, &map, &results) == 1) data = out.s, dlen = out.len;
  /* rules of the targets that name this file, which matched nothing here */
  rule_results_warn(&rules, &results, &fd);
  diags_append(&fd, &job.diags);
  if (fd.errors == 0) {
    const char *root, *orel;
    split_out(o->out, &root, &orel);
    if (emit_file(root, orel, data ? data : "", dlen, st.st_mode, &fd) == 0 &&
        (!o->depfile || write_depfile(o, &fd) == 0))
      status = 0;
  }
  diags_print(&top);
  diags_print(&fd);
  if (fd.errors && !o->quiet) fprintf(stderr, "ncrewrite: %s: errors; nothing written\n", o->file);

done:
  vec_free(&tgs);
  rule_results_free(&results);
  buf_free(&out);
  linemap_free(&map);
  filejob_free(&job);
  job_parser_free(parser);
  rules_free(&rules);
  diags_free(&top), diags_free(&fd);
  free(src), free(rel);
  return status;
}

int onefile_validate(char **paths, int n, bool strict, bool quiet) {
  int bad = 0;
  for (int i = 0; i < n; i++) {
    Rules r = {0};
    Diags d = {0};
    d.strict = strict;
    d.quiet = quiet;
    if (rules_load(&r, paths[i], &d) < 0 || d.errors) bad++;
    diags_print(&d);
    rules_free(&r);
    diags_free(&d);
  }
  if (!quiet)
    fprintf(stderr, "ncrewrite: %d rule file%s checked, %d with errors\n", n, n == 1 ? "" : "s", bad);
  return bad ? 1 : 0;
}
