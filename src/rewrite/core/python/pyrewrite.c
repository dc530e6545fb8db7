/* pyrewrite: the Python rewriter's entry (rewrite.h's py_rewrite) and
 * drill's py_inner_statements. py_rewrite parses (tree-sitter-python, with
 * the file's syntax errors kept local when they can be), then runs the
 * rewriter's stages in order: collect (pycollect.c), plan (pyplan.c),
 * layout and prelude (pylayout.c). The parts and their contract:
 * pyrewrite.h. */
#include "pyrewrite.h"

const TSLanguage *tree_sitter_python(void);

/* ---- entry ----------------------------------------------------------- */

/* Where a syntax error is. tree-sitter's error recovery often wraps
 * everything before the error in one ERROR node (a missing ':' on line 14
 * makes the whole module an ERROR starting at 1:1), so the start of the
 * first ERROR is not the place: inside an ERROR, the statements that parsed
 * whole are skipped, and the first piece that is not one is the place. */
static bool whole_statement(TSNode n) {
  if (!ts_node_is_named(n) || ts_node_has_error(n) || ts_node_is_missing(n)) return false;
  const char *t = ts_node_type(n);
  size_t l = strlen(t);
  return !strcmp(t, "comment") || (l > 10 && !strcmp(t + l - 10, "_statement")) ||
         (l > 11 && !strcmp(t + l - 11, "_definition"));
}

static TSNode error_place(TSNode n) {
  for (int depth = 0; depth < 10000; depth++) {
    if (ts_node_is_missing(n)) return n;
    uint32_t k = ts_node_child_count(n);
    TSNode next = {0};
    bool found = false;
    for (uint32_t i = 0; i < k && !found; i++) {
      TSNode c = ts_node_child(n, i);
      if (ts_node_is_error(c) || ts_node_is_missing(c) || ts_node_has_error(c)) next = c, found = true;
      else if (ts_node_is_error(n) && !whole_statement(c)) return c; /* a loose piece inside an ERROR */
    }
    if (!found) return n;
    n = next;
  }
  return n;
}

static void report_syntax_error(Py *py) {
  TSNode bad = error_place(py->root);
  TSPoint p = ts_node_start_point(bad);
  int line = (int)p.row + 1, col = (int)p.column + 1 + (p.row == 0 ? (int)py->bom : 0);
  if (ts_node_is_missing(bad))
    diag_at(&py->job->diags, DIAG_WARNING, py->job->rel, py->job->src, py->job->len, line, col,
            "syntax error: missing '%s'; the file is copied unchanged", ts_node_type(bad));
  else
    diag_at(&py->job->diags, DIAG_WARNING, py->job->rel, py->job->src, py->job->len, line, col,
            "syntax error: this does not parse as Python; the file is copied unchanged");
}

/* tree-sitter-python has gaps (0.25 rejects `host, *rest = endpoint, *[]`,
 * valid since Python 3.5). An error confined to one simple statement on
 * one row leaves the block structure around it intact (indentation is
 * tracked by the scanner, not the expression grammar): that statement is
 * kept as it is, and the rest of the file is instrumented. Anything larger
 * (an error across rows, in a compound statement's header, or that opens
 * a string) makes the file unparsable. */
static TSNode statement_of(TSNode n) {
  for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); n = p, p = ts_node_parent(p))
    if (is(p, "block") || is(p, "module")) return n;
  return (TSNode){0};
}

static bool error_is_local(Py *py, TSNode bad) {
  TSNode st = statement_of(bad);
  if (ts_node_is_null(st) || ts_node_is_error(st) || ts_node_is_missing(st) || py_is_compound(st) ||
      is(st, "decorated_definition") || row0(st) != last_row(st))
    return false;
  /* no quote or backslash-newline that the misparse could hide a string in */
  uint32_t a = ts_node_start_byte(st), b = ts_node_end_byte(st);
  for (uint32_t i = a; i + 2 < b; i++)
    if ((py->src[i] == '"' || py->src[i] == '\'') && py->src[i + 1] == py->src[i] && py->src[i + 2] == py->src[i])
      return false;
  return true;
}

/* tree-sitter-python 0.25 takes only a name after the star of an
 * unpacking in a bare expression list (`a, *b` parses, `a, *[]` and
 * `a, *(x or y)` do not). A copy of the text for the parser has such
 * operands (a bracketed group on one line, after a unary star) replaced by
 * as many underscores: a name, at the same byte offsets and rows, so the
 * tree fits the real text. Returns NULL when there is nothing to mask. */
static bool unary_star_at(const char *s, size_t i) {
  size_t k = i;
  while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t')) k--;
  if (k == 0 || s[k - 1] == '\n' || strchr(",([{=:", s[k - 1])) return true;
  static const char *const kw[] = {"return", "yield", "in", "else", NULL};
  for (const char *const *w = kw; *w; w++) {
    size_t l = strlen(*w);
    if (k >= l && !memcmp(s + k - l, *w, l) &&
        (k == l || !(s[k - l - 1] == '_' || (unsigned)((s[k - l - 1] | 32) - 'a') < 26u ||
                     (unsigned)(s[k - l - 1] - '0') < 10u)))
      return true;
  }
  return false;
}

static char *mask_splats(const char *s, size_t n) {
  char *m = NULL;
  for (size_t i = 0; i + 1 < n; i++) {
    if (s[i] != '*' || s[i + 1] == '*' || (i > 0 && s[i - 1] == '*') || !unary_star_at(s, i)) continue;
    size_t j = i + 1;
    while (j < n && (s[j] == ' ' || s[j] == '\t')) j++;
    if (j >= n || !strchr("([{", s[j])) continue;
    int depth = 0;
    size_t k = j;
    for (; k < n && s[k] != '\n' && s[k] != '#' && s[k] != '"' && s[k] != '\'' && s[k] != '\\'; k++) {
      if (strchr("([{", s[k])) depth++;
      else if (strchr(")]}", s[k]) && --depth == 0) break;
    }
    if (k >= n || depth != 0 || !strchr(")]}", s[k])) continue;
    if (!m) m = xstrndup(s, n);
    memset(m + j, '_', k - j + 1);
    i = k;
  }
  return m;
}

/* Parse text, through mask_splats when it does not parse as it is. */
static TSTree *parse_py(TSParser *parser, const char *s, size_t n) {
  TSTree *t = ts_parser_parse_string(parser, NULL, s, (uint32_t)n);
  if (!ts_node_has_error(ts_tree_root_node(t))) return t;
  char *m = mask_splats(s, n);
  if (!m) return t;
  /* the masked text has the same syntax errors, if any, and no false ones */
  TSTree *t2 = ts_parser_parse_string(parser, NULL, m, (uint32_t)n);
  free(m);
  ts_tree_delete(t);
  return t2;
}

/* Every ERROR or MISSING node local? Counts them in *n; the first goes to
 * *first. py NULL: only count (a tree of another text than py->src). */
static bool errors_local(Py *py, TSNode root, int *n, TSNode *first) {
  TSTreeCursor c = ts_tree_cursor_new(root);
  bool ok = true;
  *n = 0;
  for (;;) {
    TSNode x = ts_tree_cursor_current_node(&c);
    bool descend = ts_node_has_error(x);
    if (ts_node_is_error(x) || ts_node_is_missing(x)) {
      if (!(*n)++) *first = x;
      if (ok && py && !error_is_local(py, x)) ok = false;
      descend = false;
    }
    if (!walk_next(&c, descend)) break;
  }
  ts_tree_cursor_delete(&c);
  return ok;
}

/* After planning around local errors: does the output parse with exactly
 * as many errors? If not, the edits touched what the parser misread. */
static bool output_keeps_errors(Py *py, int nerr) {
  FileJob *job = py->job;
  Buf out = {0};
  bool ok = false;
  if (edits_apply(&job->edits, job->src, job->len, &out, NULL) == 0) {
    size_t bom = out.len >= 3 && !memcmp(out.s, "\xef\xbb\xbf", 3) ? 3 : 0;
    TSTree *t = parse_py(py->parser, out.s + bom, out.len - bom);
    int n = 0;
    TSNode first;
    errors_local(NULL, ts_tree_root_node(t), &n, &first);
    ts_tree_delete(t);
    ok = n == nerr;
  }
  buf_free(&out);
  return ok;
}

int py_rewrite(FileJob *job) {
  Py py = {0};
  py.job = job;
  py.bom = job->len >= 3 && !memcmp(job->src, "\xef\xbb\xbf", 3) ? 3 : 0;
  py.src = job->src + py.bom;
  py.len = job->len - py.bom;
  if (memmem(py.src, py.len, NC_PY_MARK, strlen(NC_PY_MARK)) || memmem(py.src, py.len, " as __ncrt_ctx", 14)) {
    job->already = true;
    diag_at(&job->diags, DIAG_NOTE, job->rel, NULL, 0, 0, 0,
            "already instrumented by ncrewrite; copied unchanged");
    return -1;
  }
  if (job_too_big(job)) return -1;
  const char *crlf = memchr(py.src, '\n', py.len);
  py.nl = crlf && crlf > py.src && crlf[-1] == '\r' ? "\r\n" : "\n";
  /* reuse the worker's parser: a fresh one per file costs allocations */
  if (job->parser && *job->parser) py.parser = *job->parser;
  else py.parser = ts_parser_new();
  ts_parser_set_language(py.parser, tree_sitter_python());
  py.tree = parse_py(py.parser, py.src, py.len);
  py.root = ts_tree_root_node(py.tree);
  int rc = 0, nerr = 0;
  py_index_rows(&py);
  if (ts_node_has_error(py.root)) {
    TSNode first;
    if (!errors_local(&py, py.root, &nerr, &first)) {
      job->unparsable = true;
      report_syntax_error(&py);
      rc = -1;
      goto done;
    }
    TSPoint p = ts_node_start_point(first);
    diag_at(&job->diags, DIAG_NOTE, job->rel, job->src, job->len, (int)p.row + 1,
            (int)p.column + 1 + (p.row == 0 ? (int)py.bom : 0),
            "tree-sitter-python does not parse %s; %s kept as %s, the rest of the file is instrumented",
            nerr > 1 ? "these statements" : "this statement", nerr > 1 ? "they are" : "it is",
            nerr > 1 ? "they are" : "it is");
  }
  py.strskip = xcalloc((size_t)py.nrows + 1, 1);
  py.used_blank = xcalloc((size_t)py.nrows + 1, sizeof *py.used_blank);
  py_mark_strings(&py, py.root);
  py_pick_unit(&py);
  py.jit = pyjit_scan(py.src, py.root, job->origin);
  py_collect(&py, py.root, "", NULL, NULL);

  py_plan_rules(&py, true); /* the kinds that make ranges */
  if (job->full_trace) py_plan_full_trace(&py);
  py_plan_rules(&py, false); /* then those that replace code: a replacement voids the ranges inside it */
  py_layout(&py);
  py_prelude(&py);
  if (nerr && !output_keeps_errors(&py, nerr)) {
    edits_free(&job->edits);
    job->unparsable = true;
    report_syntax_error(&py);
    rc = -1;
    goto done;
  }
  py_explain_moves(&py);
  for (size_t i = 0; i < py.wraps.n; i++) {
    Wrap *w = &py.wraps.v[i];
    if (!w->dropped) {
      vec_push(&job->ranges, w->rec);
      w->rec.name = NULL;
    }
  }
done:
  for (size_t i = 0; i < py.wraps.n; i++) {
    free(py.wraps.v[i].with);
    free(py.wraps.v[i].kids.v);
    free(py.wraps.v[i].rec.name);
  }
  vec_free(&py.wraps);
  for (size_t i = 0; i < py.funcs.n; i++) {
    free(py.funcs.v[i]->name), free(py.funcs.v[i]->qual), free(py.funcs.v[i]->cls_qual);
    vec_free(&py.funcs.v[i]->kids);
    free(py.funcs.v[i]);
  }
  vec_free(&py.funcs);
  for (size_t i = 0; i < py.alias_names.n; i++) free(py.alias_names.v[i]), free(py.alias_defs.v[i]);
  vec_free(&py.alias_names);
  vec_free(&py.alias_defs);
  free(py.rows);
  free(py.strskip);
  free(py.used_blank);
  free(py.defedge);
  pyjit_free(py.jit);
  ts_tree_delete(py.tree);
  if (job->parser) *job->parser = py.parser;
  else ts_parser_delete(py.parser);
  return rc;
}

/* ---- the next level inside a range (ncrewrite drill) ------------------ */

/* Qualified name of the function around node n ("Class.method",
 * "outer.<locals>.inner"), or NULL at module level. */
static char *enclosing_qual(const char *src, TSNode n) {
  char *q = NULL; /* built from the inside out */
  for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); p = ts_node_parent(p)) {
    bool fn = is(p, "function_definition");
    if (!fn && !is(p, "class_definition")) continue;
    TSNode nm = child_by_field(p, "name");
    uint32_t a = ts_node_start_byte(nm), b = ts_node_end_byte(nm);
    char *next = q ? xasprintf("%.*s%s.%s", (int)(b - a), src + a, fn ? ".<locals>" : "", q)
                   : xasprintf("%.*s", (int)(b - a), src + a);
    free(q);
    q = next;
  }
  return q;
}

/* Does the statement do work that can take time? Calls and awaits, and
 * what Python turns into calls of dunder methods that may be heavy (a
 * tensor's `a @ b`, `x * s + b`, `h += r`, `t[i]`, `not x`, `a < b`) or
 * loops of their own (comprehensions). Found by the attention of a real
 * model: `out = weights @ v` held 8-16 % of its time and was never offered
 * while only calls counted. */
static bool does_work(TSNode n) {
  static const char *const t[] = {"call", "await", "binary_operator", "boolean_operator", "comparison_operator",
                                  "unary_operator", "not_operator", "augmented_assignment", "subscript",
                                  "list_comprehension", "set_comprehension", "dictionary_comprehension",
                                  "generator_expression", NULL};
  for (const char *const *p = t; *p; p++)
    if (py_contains_outside_nested(n, *p)) return true;
  return false;
}

/* Never a range of its own: definitions (their bodies are the function's
 * ranges), docstrings, and statements that take no time or cannot be
 * wrapped (pass, break, continue, global, nonlocal, from __future__). */
static bool never_a_range(TSNode s) {
  static const char *const t[] = {"function_definition", "class_definition", "decorated_definition",
                                  "future_import_statement", "pass_statement", "break_statement",
                                  "continue_statement", "global_statement", "nonlocal_statement", NULL};
  for (const char *const *p = t; *p; p++)
    if (is(s, *p)) return true;
  return py_is_docstring(s);
}

/* Worth a range of its own: a compound statement (taken whole), or one
 * that does work (an assignment of a constant or a name tells nothing; an
 * import's time is the module's first import, not the line's). With
 * `every` (drill --lines, one range per line as line_profiler shows them)
 * all statements but those never a range. */
static bool worth_a_range(TSNode s, bool every) {
  if (never_a_range(s)) return false;
  if (every) return true;
  if (is(s, "import_statement") || is(s, "import_from_statement")) return false;
  return py_is_compound(s) || does_work(s);
}

int py_inner_statements(const char *src, size_t len, int line0, int line1, bool every, InnerStmts *out) {
  TSParser *parser = ts_parser_new();
  ts_parser_set_language(parser, tree_sitter_python());
  TSTree *tree = ts_parser_parse_string(parser, NULL, src, (uint32_t)len);
  TSNode block = ts_tree_root_node(tree);
  int s = line0 - 1, e = line1 - 1, rc = 0;
  Nodes kids = {0}, subs = {0};
  if (ts_node_has_error(block)) {
    rc = -1;
    goto done;
  }
  /* find the statements the range covers, descending like snap_lines */
  int i0 = -1, i1 = -1;
  for (;;) {
    py_statements(block, &kids);
    i0 = i1 = -1;
    for (size_t i = 0; i < kids.n; i++)
      if (last_row(kids.v[i]) >= s && row0(kids.v[i]) <= e) {
        if (i0 < 0) i0 = (int)i;
        i1 = (int)i;
      }
    if (i0 < 0) goto done;
    TSNode only = kids.v[i0];
    if (i0 != i1 || !py_is_compound(only) || s <= row0(py_def_of(only))) break;
    TSNode d = py_def_of(only);
    subs.n = 0;
    if (is(d, "function_definition") || is(d, "class_definition")) vec_push(&subs, child_by_field(d, "body"));
    else py_sub_blocks(only, &subs);
    int hit = -1;
    for (size_t k = 0; k < subs.n; k++)
      if (row0(subs.v[k]) <= s && last_row(subs.v[k]) >= e) hit = (int)k;
    if (hit < 0) break;
    block = subs.v[hit];
  }
  /* one compound statement: its blocks' statements; several: each one */
  Nodes pick = {0};
  if (i0 == i1 && py_is_compound(kids.v[i0])) {
    TSNode d = py_def_of(kids.v[i0]);
    subs.n = 0;
    if (is(d, "function_definition") || is(d, "class_definition")) vec_push(&subs, child_by_field(d, "body"));
    else py_sub_blocks(kids.v[i0], &subs);
    Nodes inner = {0};
    for (size_t k = 0; k < subs.n; k++) {
      py_statements(subs.v[k], &inner);
      for (size_t j = 0; j < inner.n; j++) vec_push(&pick, inner.v[j]);
    }
    vec_free(&inner);
  } else if (i0 != i1) {
    for (int i = i0; i <= i1; i++) vec_push(&pick, kids.v[i]);
  }
  for (size_t i = 0; i < pick.n; i++) {
    TSNode st = pick.v[i];
    if (!worth_a_range(st, every) || row0(st) == last_row(st) + 1) continue;
    /* a one-line block on its header's row cannot take a range of its own */
    TSNode par = ts_node_parent(st);
    if (!ts_node_is_null(par) && is(par, "block") && row0(st) == row0(ts_node_parent(par))) continue;
    InnerStmt x = {row0(st) + 1, last_row(st) + 1, enclosing_qual(src, st)};
    vec_push(out, x);
  }
  vec_free(&pick);
done:
  vec_free(&kids);
  vec_free(&subs);
  ts_tree_delete(tree);
  ts_parser_delete(parser);
  return rc;
}
