/* pycollect: the Python rewriter's view of a file (pyrewrite.h): the
 * statement lists and blocks of the tree, the row index (blank rows, line
 * continuations, rows inside multi-line strings, the indent unit), and the
 * file's functions with their qualified names (collect). It reads the tree
 * and fills Py; it plans nothing and edits nothing. */
#include "pyrewrite.h"

/* ---- small tree helpers ---------------------------------------------- */

/* Statement (non-comment, named) children, through a cursor: ts_node_child
 * by index is linear per call, which would make big modules quadratic. */
void py_statements(TSNode block, Nodes *out) {
  out->n = 0;
  TSTreeCursor c = ts_tree_cursor_new(block);
  if (ts_tree_cursor_goto_first_child(&c)) {
    do {
      TSNode n = ts_tree_cursor_current_node(&c);
      if (ts_node_is_named(n) && !is(n, "comment") && !is(n, "line_continuation")) vec_push(out, n);
    } while (ts_tree_cursor_goto_next_sibling(&c));
  }
  ts_tree_cursor_delete(&c);
}

bool py_is_compound(TSNode n) {
  static const char *const t[] = {"function_definition", "class_definition", "decorated_definition",
                                  "if_statement", "for_statement", "while_statement",
                                  "try_statement", "with_statement", "match_statement", NULL};
  for (const char *const *p = t; *p; p++)
    if (is(n, *p)) return true;
  return false;
}

bool py_is_clause(TSNode n) {
  return is(n, "elif_clause") || is(n, "else_clause") || is(n, "except_clause") ||
         is(n, "except_group_clause") || is(n, "finally_clause") || is(n, "case_clause");
}

/* The statement blocks directly under a compound statement: its body and the
 * blocks of its clauses (elif/else/except/finally/case). */
void py_sub_blocks(TSNode n, Nodes *out) {
  TSTreeCursor c = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&c)) {
    do {
      TSNode k = ts_tree_cursor_current_node(&c);
      if (is(k, "block")) {
        TSNode f = ts_node_named_child(k, 0);
        if (!ts_node_is_null(f) && is(f, "case_clause")) py_sub_blocks(k, out);
        else vec_push(out, k);
      } else if (py_is_clause(k)) {
        py_sub_blocks(k, out);
      }
    } while (ts_tree_cursor_goto_next_sibling(&c));
  }
  ts_tree_cursor_delete(&c);
}

TSNode py_def_of(TSNode outer) {
  if (is(outer, "decorated_definition")) return child_by_field(outer, "definition");
  return outer;
}

bool py_is_docstring(TSNode stmt) {
  if (!is(stmt, "expression_statement") || ts_node_named_child_count(stmt) != 1) return false;
  TSNode e = ts_node_named_child(stmt, 0);
  return is(e, "string") || is(e, "concatenated_string");
}

/* Does the subtree contain a node of `type`, not looking inside nested
 * functions, classes or lambdas? */
bool py_contains_outside_nested(TSNode n, const char *type) {
  if (is(n, type)) return true;
  if (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda")) return false;
  bool found = false;
  TSTreeCursor c = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&c)) {
    do {
      if (py_contains_outside_nested(ts_tree_cursor_current_node(&c), type)) { found = true; break; }
    } while (ts_tree_cursor_goto_next_sibling(&c));
  }
  ts_tree_cursor_delete(&c);
  return found;
}



static bool is_async_def(TSNode def) {
  TSNode first = ts_node_child(def, 0);
  return !ts_node_is_null(first) && is(first, "async");
}

/* ---- rows ------------------------------------------------------------ */

void py_index_rows(Py *py) {
  int cap = 1024, n = 0;
  size_t *r = xmalloc((size_t)cap * sizeof *r);
  r[n++] = 0;
  for (const char *p = py->src, *e = py->src + py->len; (p = memchr(p, '\n', (size_t)(e - p)));) {
    p++;
    if (n == cap) r = xrealloc(r, (size_t)(cap *= 2) * sizeof *r);
    r[n++] = (size_t)(p - py->src);
  }
  py->rows = r;
  py->nrows = n;
}

size_t py_row_end(Py *py, int r) { /* offset of the row's '\n' (or '\r\n') or EOF */
  size_t e = r + 1 < py->nrows ? py->rows[r + 1] - 1 : py->len;
  if (e > py->rows[r] && e <= py->len && e > 0 && py->src[e - 1] == '\r' && e < py->len) e--;
  return e;
}

size_t py_ws_len(Py *py, int r) {
  size_t a = py->rows[r], i = a, e = py_row_end(py, r);
  while (i < e && (py->src[i] == ' ' || py->src[i] == '\t' || py->src[i] == '\f')) i++;
  return i - a;
}

bool py_row_blank(Py *py, int r) {
  size_t a = py->rows[r] + py_ws_len(py, r), e = r + 1 < py->nrows ? py->rows[r + 1] : py->len;
  for (size_t i = a; i < e; i++)
    if (py->src[i] != '\r' && py->src[i] != '\n') return false;
  return true;
}

/* Does row r continue the row above (which ends in a backslash)? Then r,
 * even when blank, belongs to that logical line: `"""doc""" \` over an
 * empty row ends the statement there, and deleting the empty row would
 * join the next line onto it. A backslash ending a comment does not
 * continue, but counting it too only leaves a blank row unused. */
bool py_continued(Py *py, int r) {
  if (r <= 0) return false;
  size_t e = py_row_end(py, r - 1);
  return e > py->rows[r - 1] && py->src[e - 1] == '\\';
}

/* Rows that begin inside a multi-line string must keep their bytes. A string
 * spans rows only through a triple quote or a backslash-newline, so the
 * offsets of those ("hints", found by one scan of the text) tell which
 * subtrees can hold one; all others are skipped unvisited. One cursor walks
 * the tree (a cursor per node would cost more than the parse saves). */
static void find_hints(Py *py, Offsets *h) {
  const char *s = py->src;
  for (size_t i = 0; i + 1 < py->len; i++) {
    char c = s[i];
    if ((c == '"' || c == '\'') && i + 2 < py->len && s[i + 1] == c && s[i + 2] == c) {
      vec_push(h, i);
      i += 2;
    } else if (c == '\\' && (s[i + 1] == '\n' || (s[i + 1] == '\r' && i + 2 < py->len && s[i + 2] == '\n'))) {
      vec_push(h, i);
    }
  }
}

static bool hint_in(const size_t *h, size_t n, size_t a, size_t b) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (h[mid] < a) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && h[lo] < b;
}

void py_mark_strings(Py *py, TSNode root) {
  Offsets h = {0};
  find_hints(py, &h);
  if (!h.n) return;
  TSTreeCursor c = ts_tree_cursor_new(root);
  for (;;) {
    TSNode n = ts_tree_cursor_current_node(&c);
    int r0 = row0(n), r1 = (int)ts_node_end_point(n).row;
    bool descend = false;
    if (r1 > r0 && hint_in(h.v, h.n, ts_node_start_byte(n), ts_node_end_byte(n))) {
      if (is(n, "string")) {
        for (int r = r0 + 1; r <= r1 && r < py->nrows; r++) py->strskip[r] = 1;
      } else {
        descend = true;
      }
    }
    if (!walk_next(&c, descend)) break;
  }
  ts_tree_cursor_delete(&c);
  vec_free(&h);
}

/* The file's indent unit: a tab if every indented code line uses tabs only,
 * else the width of the first indentation seen (spaces). */
void py_pick_unit(Py *py) {
  int width = 0;
  bool tabs_only = true, any = false;
  for (int r = 0; r < py->nrows; r++) {
    if (py->strskip[r] || py_row_blank(py, r)) continue;
    size_t w = py_ws_len(py, r);
    if (!w) continue;
    const char *s = py->src + py->rows[r];
    char c = s[w];
    if (c == '#') continue;
    any = true;
    for (size_t i = 0; i < w; i++)
      if (s[i] != '\t') tabs_only = false;
    if (!width && s[0] == ' ') {
      size_t k = 0;
      while (k < w && s[k] == ' ') k++;
      width = (int)k;
    }
  }
  if (any && tabs_only) {
    strcpy(py->unit, "\t");
    return;
  }
  if (width <= 0 || width > 8) width = 4;
  memset(py->unit, ' ', (size_t)width);
  py->unit[width] = 0;
}

/* ---- collecting functions -------------------------------------------- */

static bool is_generator(Py *py, Func *f) {
  if (ts_node_is_null(f->body)) return false;
  uint32_t a = ts_node_start_byte(f->body), b = ts_node_end_byte(f->body);
  if (!memmem(py->src + a, b - a, "yield", 5)) return false; /* cheap text filter first */
  bool gen = false;
  for (size_t i = 0; i < f->kids.n && !gen; i++) gen = py_contains_outside_nested(f->kids.v[i], "yield");
  return gen;
}

static void collect_list(Py *py, Nodes *kids, const char *prefix, const char *cls_qual, Func *parent);

static void collect_stmt(Py *py, TSNode s, const char *prefix, const char *cls_qual, Func *parent) {
  TSNode d = py_def_of(s);
  if (!ts_node_is_null(d) && is(d, "function_definition")) {
    Func *f = xcalloc(1, sizeof *f);
    f->def = d;
    f->outer = s;
    f->name = node_text(py->src, child_by_field(d, "name"));
    f->qual = *prefix ? xasprintf("%s.%s", prefix, f->name) : xstrdup(f->name);
    f->cls_qual = cls_qual ? xstrdup(cls_qual) : NULL;
    f->is_async = is_async_def(d);
    f->body = child_by_field(d, "body");
    if (!ts_node_is_null(f->body)) py_statements(f->body, &f->kids);
    f->is_gen = is_generator(py, f);
    f->parent = parent;
    vec_push(&py->funcs, f);
    char *inner = xasprintf("%s.<locals>", f->qual);
    collect_list(py, &f->kids, inner, NULL, f);
    free(inner);
    return;
  }
  if (!ts_node_is_null(d) && is(d, "class_definition")) {
    char *name = node_text(py->src, child_by_field(d, "name"));
    char *q = *prefix ? xasprintf("%s.%s", prefix, name) : xstrdup(name);
    py_collect(py, child_by_field(d, "body"), q, q, parent);
    free(q);
    free(name);
    return;
  }
  if (py_is_compound(s)) {
    Nodes subs = {0};
    py_sub_blocks(s, &subs);
    for (size_t i = 0; i < subs.n; i++) py_collect(py, subs.v[i], prefix, NULL, parent);
    vec_free(&subs);
  }
}

static void collect_list(Py *py, Nodes *kids, const char *prefix, const char *cls_qual, Func *parent) {
  for (size_t i = 0; i < kids->n; i++) collect_stmt(py, kids->v[i], prefix, cls_qual, parent);
}

void py_collect(Py *py, TSNode block, const char *prefix, const char *cls_qual, Func *parent) {
  if (ts_node_is_null(block)) return;
  Nodes kids = {0};
  py_statements(block, &kids);
  for (size_t i = 0; i < kids.n; i++) collect_stmt(py, kids.v[i], prefix, cls_qual, parent);
  vec_free(&kids);
}
