/* feedback: `ncrewrite feedback` adds one line range to a rule file, checked
 * against the source by the rewriter itself; also the check that drill
 * shares (the subcommand table is subcommands.c).
 *
 *   ncrewrite feedback --config R --src SRC --module M --lines A-B
 *                      [--function F] [--name N] [--context CLASS]
 *                      [--text WHY] [--snap]
 *   ncrewrite feedback --config R --undo
 *
 * The range is proposed as an edit of R, the edited text is loaded as a rule
 * file and the rewriter runs on M with it: what it wraps (lines snapped to
 * whole statements), what it refuses (lines outside the file or function, a
 * partial overlap with another range) is what `ncrewrite` would do. A range
 * that would grow past the lines asked for splits a statement: that is an
 * error unless --snap accepts the whole statements. The rule is then written
 * with the snapped lines and the start line's text (so it re-anchors if the
 * file moves), checked once more, and committed atomically. */
#include "feedback.h"
#include "targets.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* (a TargetHasFile: dir is SRC) */
static bool is_file(void *dir, const char *rel) {
  char *p = xasprintf("%s/%s", (const char *)dir, rel);
  struct stat st;
  bool ok = stat(p, &st) == 0 && S_ISREG(st.st_mode);
  free(p);
  return ok;
}

/* The file a key names under srcdir, as a tree run resolves it
 * (rules/targets.h), with the filePath of the target of that key if the
 * rule file has one; a Python file name ("train.py") names that file. NULL
 * when nothing matches; *tried says what was tried. */
static char *resolve_key(const char *srcdir, const Rules *r, const char *key, char **tried) {
  const char *fp = NULL;
  for (size_t t = 0; r && t < r->targets.n && !fp; t++)
    if (!strcmp(r->targets.v[t].key, key)) fp = r->targets.v[t].file_path;
  char *k = !strchr(key, '/') && lang_of_path(key) == LANG_PYTHON ? xasprintf("./%s", key) : xstrdup(key);
  char *real = realpath(srcdir, NULL);
  TargetHit h;
  target_resolve(k, fp, real, is_file, (void *)srcdir, &h);
  const char *mp = h.module_path;
  *tried = mp ? xasprintf("%s.py and %s/__init__.py", mp, mp) : xstrdup(k[0] == '.' && k[1] == '/' ? k + 2 : k);
  char *rel = h.rel;
  h.rel = NULL;
  target_hit_free(&h);
  free(real), free(k);
  return rel;
}

int modfile_find(const char *srcdir, const Rules *r, const char *module, ModFile *mf, Diags *d) {
  memset(mf, 0, sizeof *mf);
  struct stat st;
  if (stat(srcdir, &st) < 0 || !S_ISDIR(st.st_mode)) {
    diag_at(d, DIAG_ERROR, srcdir, NULL, 0, 0, 0, "SRC is not a directory");
    return -1;
  }
  char *tried;
  mf->rel = resolve_key(srcdir, r, module, &tried);
  if (!mf->rel) {
    /* no file to point at: the message names SRC (it was "SRC: error:", which
     * read as if SRC were the file with the error) */
    diag_at(d, DIAG_ERROR, "ncrewrite", NULL, 0, 0, 0, "module '%s' not found under %s (looked for %s)", module, srcdir,
            tried ? tried : module);
    free(tried);
    return -1;
  }
  free(tried);
  mf->key = xstrdup(module);
  mf->path = xasprintf("%s/%s", srcdir, mf->rel);
  mf->lang = lang_of_path(mf->rel);
  if (mf->lang == LANG_NONE) {
    diag_at(d, DIAG_ERROR, mf->path, NULL, 0, 0, 0, "not a Python, C, C++ or CUDA file");
    return -1;
  }
  if (read_file(mf->path, &mf->text, &mf->len) < 0) {
    diag_at(d, DIAG_ERROR, mf->path, NULL, 0, 0, 0, "cannot read: %s", strerror(errno));
    return -1;
  }
  for (size_t i = 0; i < mf->len; i++) mf->nlines += mf->text[i] == '\n';
  if (mf->len && mf->text[mf->len - 1] != '\n') mf->nlines++;
  return 0;
}

void modfile_free(ModFile *mf) {
  free(mf->rel), free(mf->path), free(mf->key), free(mf->text);
  memset(mf, 0, sizeof *mf);
}

char *modfile_key_of(const char *srcdir, const Rules *r, const char *rel) {
  for (size_t t = 0; t < r->targets.n; t++) {
    char *tried, *hit = resolve_key(srcdir, r, r->targets.v[t].key, &tried);
    bool same = hit && !strcmp(hit, rel);
    free(hit), free(tried);
    if (same) return xstrdup(r->targets.v[t].key);
  }
  return lang_of_path(rel) == LANG_PYTHON ? module_of_path(rel) : xstrdup(rel);
}

char *modfile_line(const ModFile *mf, int line) {
  const char *p = mf->text, *end = mf->text + mf->len;
  for (int l = 1; l < line && p < end; l++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    p = nl ? nl + 1 : end;
  }
  const char *e = memchr(p, '\n', (size_t)(end - p));
  if (!e) e = end;
  while (p < e && (*p == ' ' || *p == '\t')) p++;
  while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
  return xstrndup(p, (size_t)(e - p));
}

/* Column of the first non-blank character of 1-based `line` (for carets). */
static int first_col(const ModFile *mf, int line) {
  const char *p = mf->text, *end = mf->text + mf->len;
  for (int l = 1; l < line && p < end; l++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    p = nl ? nl + 1 : end;
  }
  int col = 1;
  while (p < end && (*p == ' ' || *p == '\t')) p++, col++;
  return col;
}

/* ---- the check: run the rewriter with the proposed rules -------------- */

int proposal_run(Proposal *p, const char *rules_path, const char *old, size_t oldlen, TextEdits *e,
                 const char *srcdir, const ModFile *mf, Diags *d) {
  memset(p, 0, sizeof *p);
  p->text = ruledit_apply(old, oldlen, e, &p->len);
  Diags rd = {0};
  if (rules_parse(&p->rules, rules_path, p->text, p->len, &rd) < 0 || rd.errors) {
    diag_at(d, DIAG_ERROR, rules_path, NULL, 0, 0, 0,
            "internal error: the proposed rule file does not load (please report):\n%s", rd.text.s ? rd.text.s : "");
    diags_free(&rd);
    return -1;
  }
  diags_free(&rd);
  VEC(Target *) tgs = {0};
  for (size_t t = 0; t < p->rules.targets.n; t++) {
    Target *tg = &p->rules.targets.v[t];
    bool hit;
    if (tg->path_glob && !tg->file_path) {
      hit = target_glob_names(tg->key, mf->rel);
    } else {
      char *tried, *rel = resolve_key(srcdir, &p->rules, tg->key, &tried);
      hit = rel && !strcmp(rel, mf->rel);
      free(rel), free(tried);
    }
    if (hit) vec_push(&tgs, tg);
  }
  FileJob *job = &p->job;
  filejob_init(job, &p->rules, mf->rel, mf->path, mf->text, mf->len, (const Target *const *)tgs.v, tgs.n);
  filejob_full_trace(job, false, 0);
  /* the ranges are what is wanted: the output text is dropped */
  Buf out = {0};
  p->rc = rewrite_run(job, &out, NULL, NULL);
  buf_free(&out);
  /* the job keeps pointers into these only while it runs */
  job->targets = NULL;
  job->ntargets = 0;
  vec_free(&tgs);
  if (p->rc < 0) {
    diag_at(d, DIAG_ERROR, mf->path, NULL, 0, 0, 0, "%s; cannot place ranges in it",
            job->unparsable ? "does not parse" : job->already ? "is already instrumented (give the original source)"
                                                              : "cannot be rewritten");
    return -1;
  }
  return 0;
}

void proposal_free(Proposal *p) {
  free(p->text);
  filejob_free(&p->job);
  rules_free(&p->rules);
  memset(p, 0, sizeof *p);
}

const Rule *proposal_new_rule(const Proposal *p, size_t from, size_t k) {
  /* the inserted rules are the line rules written at or after `from`, in
   * text order: step k+1 times to the next one by position */
  const Rule *best = NULL;
  for (size_t want = 0; want <= k; want++) {
    const Rule *next = NULL;
    for (size_t t = 0; t < p->rules.targets.n; t++)
      for (size_t i = 0; i < p->rules.targets.v[t].rules.n; i++) {
        const Rule *r = &p->rules.targets.v[t].rules.v[i];
        if (r->kind != RULE_LINES || r->at->off < from) continue;
        if (best && r->at->off <= best->at->off) continue;
        if (!next || r->at->off < next->at->off) next = r;
      }
    if (!next) return NULL;
    best = next;
  }
  return best;
}

const RangeRec *proposal_range_of(const Proposal *p, const Rule *r) {
  for (size_t i = 0; i < p->job.ranges.n; i++)
    if (p->job.ranges.v[i].rule == r) return &p->job.ranges.v[i];
  return NULL;
}

char *proposal_error(const Proposal *p) {
  const char *t = p->job.diags.text.s;
  const char *e = t ? strstr(t, ": error: ") : NULL;
  if (!e) return NULL;
  e += 9;
  const char *nl = strchr(e, '\n');
  return xstrndup(e, nl ? (size_t)(nl - e) : strlen(e));
}

/* ---- ncrewrite feedback ------------------------------------------------ */

static void usage_feedback(FILE *f) {
  fputs("usage: ncrewrite feedback --config RULES --src SRC --module M --lines A-B [options]\n"
        "       ncrewrite feedback --config RULES --undo\n"
        "\n"
        "Add a line range of module M to the rule file RULES (written back in place,\n"
        "the rest of it unchanged), checked against the source under SRC.\n"
        "\n"
        "  --module M        dotted module name (or a path under SRC for C/C++/CUDA)\n"
        "  --lines A-B       1-based, inclusive (A alone: one line)\n"
        "  --function F      the range must lie inside function F (bare name or Class.method)\n"
        "  --name N          range name (default: func:LA-B)\n"
        "  --context CLASS   context_class of the range\n"
        "  --text WHY        why: kept as the rule's reasoning and in the history\n"
        "  --snap            accept widening a range that splits a statement to whole statements\n"
        "  --undo            step back over the last change recorded in RULES.history.jsonl\n",
        f);
}

static int parse_lines(const char *s, int *a, int *b) {
  char *end;
  long x = strtol(s, &end, 10), y = x;
  if (end == s) return -1;
  if (*end == '-') {
    const char *s2 = end + 1;
    y = strtol(s2, &end, 10);
    if (end == s2) return -1;
  }
  if (*end || x < 1 || y < x || y > 100000000) return -1;
  *a = (int)x, *b = (int)y;
  return 0;
}

typedef struct {
  const char *config, *src, *module, *lines, *function, *name, *context, *text;
  bool snap, undo;
} FbOpts;

/* Check one range against the proposal: 0 when it is what will be written. */
static int check_range(const Proposal *p, const Rule *nr, const ModFile *mf, int a, int b, bool snap, int *s0,
                       int *s1, Diags *d) {
  const RangeRec *rr = nr ? proposal_range_of(p, nr) : NULL;
  char *err = proposal_error(p);
  if (err || !rr) {
    const RuleOutcome *oc = nr ? job_rule_outcome(&p->job, nr) : NULL;
    const char *why = err ? err : oc && oc->miss ? oc->miss : "no statement there";
    diag_at(d, DIAG_ERROR, mf->path, mf->text, mf->len, a, first_col(mf, a), "lines %d-%d: %s", a, b,
            why);
    free(err);
    return -1;
  }
  for (size_t i = 0; i < p->job.ranges.n; i++) {
    const RangeRec *o = &p->job.ranges.v[i];
    if (o != rr && o->line0 == rr->line0 && o->line1 == rr->line1 && !strcmp(o->kind, rr->kind)) {
      diag_at(d, DIAG_ERROR, mf->path, mf->text, mf->len, rr->line0, first_col(mf, rr->line0),
              "lines %d-%d are already a range ('%s'); nothing to add", rr->line0, rr->line1, o->name);
      return -1;
    }
  }
  if ((rr->line0 < a || rr->line1 > b) && !snap) {
    diag_at(d, DIAG_ERROR, mf->path, mf->text, mf->len, rr->line0 < a ? a : b, first_col(mf, rr->line0 < a ? a : b),
            "lines %d-%d split a statement: the whole statements are lines %d-%d (give --lines %d-%d, or --snap)", a, b,
            rr->line0, rr->line1, rr->line0, rr->line1);
    return -1;
  }
  *s0 = rr->line0, *s1 = rr->line1;
  return 0;
}

/* Lines that are a whole Python function, from its `def` (or first
 * decorator) to its last line: the user means the function's run time, and
 * a range around the def statement would time only the def, once, at
 * import. The body's statements (docstring left out) become the lines, so
 * the range times each call. */
static void whole_function(const ModFile *mf, int *a, int *b) {
  size_t pl = strlen(mf->path);
  if (pl < 3 || strcmp(mf->path + pl - 3, ".py")) return;
  char *first = modfile_line(mf, *a);
  const char *t = first;
  while (*t == ' ' || *t == '\t') t++;
  bool def = !strncmp(t, "def ", 4) || !strncmp(t, "async def ", 10) || *t == '@';
  free(first);
  if (!def) return;
  InnerStmts in = {0};
  if (py_inner_statements(mf->text, mf->len, *a, *b, true, &in) < 0 || !in.n) {
    for (size_t i = 0; i < in.n; i++) free(in.v[i].func);
    vec_free(&in);
    return;
  }
  int lo = in.v[0].line0, hi = in.v[0].line1;
  for (size_t i = 0; i < in.n; i++) {
    if (in.v[i].line0 < lo) lo = in.v[i].line0;
    if (in.v[i].line1 > hi) hi = in.v[i].line1;
  }
  /* the body ends where the lines do (blank or comment lines after it) */
  bool to_end = lo > *a && hi <= *b;
  for (int l = hi + 1; to_end && l <= *b; l++) {
    char *x = modfile_line(mf, l);
    const char *u = x;
    while (*u == ' ' || *u == '\t') u++;
    to_end = !*u || *u == '#' || *u == '\r' || *u == '\n';
    free(x);
  }
  if (to_end) {
    fprintf(stderr, "ncrewrite: lines %d-%d are a whole function%s%s: its body, lines %d-%d, is the range (it "
            "times each call; the def statement runs once, at import)\n", *a, *b, in.v[0].func ? " " : "",
            in.v[0].func ? in.v[0].func : "", lo, hi);
    *a = lo, *b = hi;
  }
  for (size_t i = 0; i < in.n; i++) free(in.v[i].func);
  vec_free(&in);
}

static int feedback_add(const FbOpts *o, Diags *d) {
  int a, b;
  if (parse_lines(o->lines, &a, &b) < 0) {
    fprintf(stderr, "ncrewrite: error: --lines needs A-B with 1 <= A <= B, not '%s'\n", o->lines);
    return 2;
  }
  Rules rules = {0};
  struct stat st;
  /* a rule file that does not exist yet starts empty */
  int lrc = stat(o->config, &st) < 0 && errno == ENOENT ? rules_parse(&rules, o->config, "", 0, d)
                                                        : rules_load(&rules, o->config, d);
  if (lrc < 0) {
    diag_at(d, DIAG_ERROR, o->config, NULL, 0, 0, 0, "rule file has errors; left unchanged");
    rules_free(&rules);
    return 1;
  }
  ModFile mf;
  int status = 1;
  Proposal p1 = {0}, p2 = {0};
  TextEdits e1 = {0}, e2 = {0};
  if (modfile_find(o->src, &rules, o->module, &mf, d) < 0) goto out;
  if (b > mf.nlines) {
    diag_at(d, DIAG_ERROR, mf.path, mf.text, mf.len, mf.nlines ? mf.nlines : 1, 1,
            "lines %d-%d are outside the file (%d lines)", a, b, mf.nlines);
    goto out;
  }
  whole_function(&mf, &a, &b);
  LineRule lr = {o->function, a, b, NULL, o->name, o->context, o->text};
  if (ruledit_add_lines(&rules.doc, o->module, &lr, 1, &e1, d) < 0) goto out;
  if (proposal_run(&p1, o->config, rules.doc.src, rules.doc.len, &e1, o->src, &mf, d) < 0) goto out;
  int s0, s1;
  if (check_range(&p1, proposal_new_rule(&p1, e1.v[0].at, 0), &mf, a, b, o->snap, &s0, &s1, d) < 0) goto out;
  /* write the lines as snapped, anchored on the start line's text */
  char *content = modfile_line(&mf, s0);
  LineRule lr2 = {o->function, s0, s1, content, o->name, o->context, o->text};
  if (ruledit_add_lines(&rules.doc, o->module, &lr2, 1, &e2, d) < 0 ||
      proposal_run(&p2, o->config, rules.doc.src, rules.doc.len, &e2, o->src, &mf, d) < 0) {
    free(content);
    goto out;
  }
  free(content);
  int t0, t1;
  if (check_range(&p2, proposal_new_rule(&p2, e2.v[0].at, 0), &mf, s0, s1, false, &t0, &t1, d) < 0) goto out;
  const RangeRec *rr = proposal_range_of(&p2, proposal_new_rule(&p2, e2.v[0].at, 0));
  char *what = xasprintf("%s lines %d-%d (range '%s')", o->module, s0, s1, rr->name);
  if (history_commit(o->config, rules.doc.src, rules.doc.len, p2.text, p2.len, &e2, "feedback", what, o->text, d) == 0) {
    if (s0 != a || s1 != b) fprintf(stderr, "ncrewrite: lines %d-%d snapped to whole statements %d-%d\n", a, b, s0, s1);
    fprintf(stderr, "ncrewrite: added %s to %s\n", what, o->config);
    status = 0;
  }
  free(what);
out:
  proposal_free(&p1), proposal_free(&p2);
  textedits_free(&e1), textedits_free(&e2);
  modfile_free(&mf);
  rules_free(&rules);
  return status;
}

int cmd_feedback(int argc, char **argv) {
  enum { O_SRC = 256, O_MODULE, O_LINES, O_FUNCTION, O_NAME, O_CONTEXT, O_TEXT, O_SNAP, O_UNDO };
  static const struct option longs[] = {
      {"config", required_argument, 0, 'c'},    {"src", required_argument, 0, O_SRC},
      {"module", required_argument, 0, O_MODULE}, {"lines", required_argument, 0, O_LINES},
      {"function", required_argument, 0, O_FUNCTION}, {"name", required_argument, 0, O_NAME},
      {"context", required_argument, 0, O_CONTEXT}, {"text", required_argument, 0, O_TEXT},
      {"snap", no_argument, 0, O_SNAP},         {"undo", no_argument, 0, O_UNDO},
      {"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
  FbOpts o = {0};
  o.src = ".";
  optind = 1;
  for (int c; (c = getopt_long(argc, argv, "c:h", longs, NULL)) != -1;) {
    switch (c) {
    case 'c': o.config = optarg; break;
    case O_SRC: o.src = optarg; break;
    case O_MODULE: o.module = optarg; break;
    case O_LINES: o.lines = optarg; break;
    case O_FUNCTION: o.function = optarg; break;
    case O_NAME: o.name = optarg; break;
    case O_CONTEXT: o.context = optarg; break;
    case O_TEXT: o.text = optarg; break;
    case O_SNAP: o.snap = true; break;
    case O_UNDO: o.undo = true; break;
    case 'h': usage_feedback(stdout); return 0;
    default: usage_feedback(stderr); return 2;
    }
  }
  if (!o.config || optind != argc || (!o.undo && (!o.module || !o.lines))) {
    fprintf(stderr, "ncrewrite feedback: error: %s\n",
            optind != argc ? "unexpected argument" : !o.config ? "--config is required" : "--module and --lines are required");
    usage_feedback(stderr);
    return 2;
  }
  Diags d = {0};
  int rc = o.undo ? (history_undo(o.config, &d) < 0 ? 1 : 0) : feedback_add(&o, &d);
  diags_print(&d);
  if (rc == 1) fprintf(stderr, "ncrewrite: %s left unchanged\n", o.config);
  diags_free(&d);
  return rc;
}
