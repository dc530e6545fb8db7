/* pylayout: the planned wraps (pyplan.c) laid out as byte edits, the
 * prelude, and --explain's moved lines (pyrewrite.h).
 *
 * Layout, in short (every statement keeps its line where it can):
 *  - a wrap over simple statements of one logical line is written on that
 *    line, `with X: stmt`, and moves nothing;
 *  - another wrap's `with` line takes the row of a blank line: for a whole
 *    function one between its header and body, else a row freed by folding
 *    two rows of its docstring or signature into one, else the blank above
 *    its def (only the def and its headers move); for other wraps, the
 *    cheapest blank inside the function or right after it, so a shift stays
 *    inside it; only with no blank below at all does the output gain a line
 *    (every move is in the line map, and --explain names it);
 *  - wrapped lines get one indent unit appended to their leading whitespace
 *    (appending, not prepending, keeps tab/space comparisons consistent);
 *    lines that start inside a multi-line string are never touched;
 *  - a one-line body (`def f(): return 1`) moves onto its own line;
 *  - the module imports each context once, on an existing line: after the
 *    docstring or `from __future__` imports, else on a blank or comment row
 *    above the first statement, else before the first statement; with a
 *    fallback that turns the markers into no-ops when the ncrt module is not
 *    importable.
 * Contract: edits and range records go to the job; nothing is printed. */
#include "pyrewrite.h"

/* One module global, __ncrt__: the ncrt module when it can be found, else
 * a builtin no-op with the same four callables. A dunder name keeps it out
 * of the way of code that lists a module's public or private names, and is
 * never name-mangled inside class bodies. Only builtins and sys are used
 * (never importlib or contextlib), so instrumenting those modules themselves
 * cannot make an import cycle; attributes are looked up at call time, so a
 * partly initialised ncrt is fine too. The line is kept as short as the
 * fallback allows (it sits on an existing line, and every --diff shows it). */
#define NC_PY_PRELUDE \
  "__ncrt__ = __import__(\"sys\").modules.get(\"ncrt\") or (" NC_PY_MARK " if any(hasattr(f, \"find_spec\") " \
  "and f.find_spec(\"ncrt\", None) for f in __import__(\"sys\").meta_path) else type(\"ncrt_nop\", (), " \
  "dict(dict.fromkeys((\"range\", \"span\", \"torch_range\", \"torch_span\", \"__exit__\"), " \
  "staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__=\"ncrt\"))())"
/* The no-op is one instance per module whose callables return the instance
 * itself: a marker then allocates nothing (staticmethods are not bound on
 * lookup, and neither is bool, a class) and costs less than
 * contextlib.nullcontext. bool() is the cheapest callable that takes no
 * argument and returns a false value (a C call: ~30 ns less per `with` than
 * a lambda). __exit__ returns the instance, which is false (its __bool__ is
 * bool()), so an exception raised inside a range is never swallowed.
 *
 * Files in TorchScript territory (pyjit.h) also bind __ncrt_t__: a module
 * object that finds torch's attributes at call time through a PEP 562
 * __getattr__ (torch.jit if it has is_scripting, torch.compiler if it has
 * is_compiling, torch.autograd; any other name is looked up as on a plain
 * module, so introspection sees nothing odd), answering with itself,
 * whose is_scripting() and is_compiling() are bool(), False, where torch
 * has none. Once torch has finished
 * importing (its spec no longer _initializing) the answer is kept, a miss
 * too (torch 1.x has no torch.compiler: a failing lookup per call cost
 * ~1 us); before that nothing is kept, so the markers run while torch is
 * still being imported, or without torch. TorchScript, which resolves
 * __ncrt_t__.jit.is_scripting at compile time, finds the real function. */
#define NC_PY_TORCH_PRELUDE \
  "__ncrt_t__ = (lambda m: m.__dict__.update(is_scripting=bool, is_compiling=bool, " \
  "__getattr__=lambda n, k={\"jit\": \"is_scripting\", \"compiler\": \"is_compiling\", \"autograd\": \"profiler\"}: " \
  "object.__getattribute__(m, n) if n not in k else (lambda t: (lambda v: m.__dict__.setdefault(n, v) if not " \
  "getattr(getattr(t, \"__spec__\", None), \"_initializing\", t is None) else v)((lambda a: a if hasattr(a, k[n]) " \
  "else m)(getattr(t, n, None))))(__import__(\"sys\").modules.get(\"torch\"))) or m)(type(__import__(\"sys\"))(\"ncrt.torch\"))"

/* ---- layout ---------------------------------------------------------- */

static int cmp_wrap(const void *pa, const void *pb) {
  const Wrap *a = pa, *b = pb;
  if (a->b0 != b->b0) return a->b0 < b->b0 ? -1 : 1;
  if (a->b1 != b->b1) return a->b1 > b->b1 ? -1 : 1; /* outer first */
  return 0;
}

/* Definition edges, for keeping the blank line that separates two
 * definitions: the first row of every def/class (its first decorator) and
 * its last row. Marked once per file, on the first blank sought, by a walk
 * over statement blocks only (expressions hold no definitions). */
enum { DEF_FIRST = 1, DEF_LAST = 2 };

static void mark_defs(Py *py, TSNode block) {
  Nodes kids = {0}, subs = {0};
  py_statements(block, &kids);
  for (size_t i = 0; i < kids.n; i++) {
    TSNode k = kids.v[i];
    if (!py_is_compound(k)) continue;
    TSNode d = py_def_of(k);
    if (!ts_node_is_null(d) && (is(d, "function_definition") || is(d, "class_definition"))) {
      py->defedge[row0(k)] |= DEF_FIRST;
      py->defedge[last_row(k)] |= DEF_LAST;
      k = d;
    }
    py_sub_blocks(k, &subs);
    for (size_t j = 0; j < subs.n; j++) mark_defs(py, subs.v[j]);
    subs.n = 0;
  }
  vec_free(&subs);
  vec_free(&kids);
}

static bool free_blank(Py *py, int r) {
  return !py->strskip[r] && !py->used_blank[r] && py_row_blank(py, r) && !py_continued(py, r);
}

static bool comment_row(Py *py, int r) {
  size_t w = py_ws_len(py, r);
  return !py->strskip[r] && py->rows[r] + w < py->len && py->src[py->rows[r] + w] == '#';
}

/* Is blank row r the last free one between a definition and its neighbour
 * (comments between count as part of the definition)? Taking it would
 * glue two definitions together, which reviewers read as noise. */
static bool separator(Py *py, int r) {
  if (!py->defedge) {
    py->defedge = xcalloc((size_t)py->nrows + 1, 1);
    mark_defs(py, py->root);
  }
  int a = r, b = r, nfree = 0;
  while (a > 0 && py_row_blank(py, a - 1) && !py->strskip[a - 1]) a--;
  while (b + 1 < py->nrows && py_row_blank(py, b + 1) && !py->strskip[b + 1]) b++;
  for (int i = a; i <= b; i++) nfree += free_blank(py, i);
  if (nfree > 1) return false;
  int below = b + 1, above = a - 1;
  while (below < py->nrows && (py_row_blank(py, below) || comment_row(py, below))) below++;
  while (above >= 0 && (py_row_blank(py, above) || comment_row(py, above))) above--;
  return (below < py->nrows && (py->defedge[below] & DEF_FIRST)) || (above >= 0 && (py->defedge[above] & DEF_LAST));
}

/* The closest free blank row above `row`, not before `floor`; -1 if none.
 * Deleting a blank row outside strings never changes meaning, and only the
 * rows between it and `row` move (up by one) to make room for a new line.
 * `headers`: those rows are only a def's header, decorators, docstring and
 * comments (a whole-function wrap), which tracebacks do not point at, while
 * inserting would move the statements below: always take the blank. Else
 * take it only when it moves fewer lines than inserting would. For a
 * whole-function wrap, a blank that is the only one between two definitions
 * is taken last: any other free blank in reach is taken first, which moves
 * only more header rows. (Elsewhere a farther blank would move statements.) */
static int blank_above(Py *py, int row, int floor, bool headers) {
  int last = -1;
  for (int r = row - 1; r >= floor && r >= 0; r--) {
    if (!free_blank(py, r)) continue;
    if (!headers && row - r > py->nrows - row) break;
    if (!headers || !separator(py, r)) return r;
    if (last < 0) last = r;
  }
  return last;
}

/* How far up a wrap may look for a blank row: to the gap above its
 * function's def, climbing through enclosing headers when the def is the
 * first statement of its block (a first method may move its class header
 * up), or the top of the module for module-level code. Only headers and
 * comments move then, never statements of another function. */
static int blank_floor(Py *py, Func *fn) {
  if (!fn) return 0;
  TSNode node = fn->outer;
  for (;;) {
    TSNode prev = ts_node_prev_named_sibling(node);
    while (!ts_node_is_null(prev) && is(prev, "comment")) prev = ts_node_prev_named_sibling(prev);
    /* a docstring above is a header too, when it opens its block */
    TSNode owner = ts_node_is_null(prev) ? prev : ts_node_parent(ts_node_parent(prev));
    if (!ts_node_is_null(owner) && py_is_docstring(prev) && is(ts_node_parent(prev), "block") &&
        (is(owner, "class_definition") || is(owner, "function_definition"))) {
      TSNode first = prev;
      while (!ts_node_is_null(first = ts_node_prev_named_sibling(first)) && is(first, "comment")) {}
      if (ts_node_is_null(first)) prev = first;
    }
    if (!ts_node_is_null(prev)) return last_row(prev) + 1;
    TSNode parent = ts_node_parent(node);
    while (!ts_node_is_null(parent) && (is(parent, "block") || py_is_clause(parent))) parent = ts_node_parent(parent);
    if (ts_node_is_null(parent) || is(parent, "module")) return 0;
    TSNode up = ts_node_parent(parent);
    node = !ts_node_is_null(up) && is(up, "decorated_definition") ? up : parent;
  }
  (void)py;
}

/* Rows 0-1 may hold a PEP 263 encoding line; code placed above it would
 * disable it, so prelude placement never uses rows before it. */
static int coding_floor(Py *py) {
  for (int r = 0; r < 2 && r < py->nrows; r++) {
    size_t a = py->rows[r], e = py_row_end(py, r);
    const char *p = py->src + a;
    size_t n = e - a;
    size_t w = py_ws_len(py, r);
    if (w < n && p[w] == '#' && (memmem(p, n, "coding:", 7) || memmem(p, n, "coding=", 7))) return r + 1;
  }
  return 0;
}

/* Nesting of the wraps (sorted outer first), with one stack of the wraps
 * still open at each start, so this is linear in the number of wraps: a wrap
 * that ends inside one still open partly overlaps it and is dropped (an
 * error at its rule); otherwise w->depth counts the multi-line wraps around
 * it and w->k its index among one-line wraps at the same place. Also counts,
 * per row, the multi-line wraps covering it (cover[], nrows + 2 entries).
 * Called again after too_deep drops a wrap: dropping makes no new overlap. */
static void nest(Py *py, int *cover) {
  size_t nw = py->wraps.n;
  FileJob *job = py->job;
  VEC(Wrap *) open = {0};
  memset(cover, 0, ((size_t)py->nrows + 2) * sizeof *cover);
  for (size_t i = 0; i < nw; i++) {
    Wrap *w = &py->wraps.v[i];
    w->depth = w->k = 0;
    if (w->dropped) continue;
    while (open.n && open.v[open.n - 1]->b1 <= w->b0) open.n--;
    Wrap *o = NULL; /* the outermost open wrap ending inside w */
    for (size_t j = 0; j < open.n && !o; j++)
      if (open.v[j]->b1 < w->b1) o = open.v[j];
    if (o) {
      w->dropped = true;
      const Rule *r = w->rule ? w->rule : o->rule;
      if (r)
        ruledoc_diag(&job->rules->doc, &job->diags, DIAG_ERROR, r->at,
                     "range '%s' (lines %d-%d of %s) partly overlaps range '%s' (lines %d-%d); ranges must nest",
                     w->rec.name, w->r0 + 1, w->r1 + 1, job->rel, o->rec.name, o->r0 + 1, o->r1 + 1);
      continue;
    }
    for (size_t j = 0; j < open.n; j++) {
      if (w->oneline && open.v[j]->oneline && open.v[j]->b0 == w->b0) w->k++;
      else if (!open.v[j]->oneline && !open.v[j]->inline_) w->depth++;
    }
    vec_push(&open, w);
    if (!w->oneline && !w->inline_) {
      cover[w->r0]++;
      cover[w->r1 + 1]--;
    }
  }
  vec_free(&open);
  for (int r = 1; r <= py->nrows; r++) cover[r] += cover[r - 1];
}

/* Indentation level of each row: the blocks around the node that begins the
 * line (not one after a ':' on the same line, which adds no indentation). */
static int *block_levels(Py *py) {
  int n = py->nrows, depth = 0;
  int *lv = xcalloc((size_t)n + 1, sizeof *lv);
  TSTreeCursor c = ts_tree_cursor_new(py->root);
  for (;;) {
    TSNode x = ts_tree_cursor_current_node(&c);
    int r = row0(x);
    if (r < n && depth > lv[r] && ts_node_start_byte(x) == py->rows[r] + py_ws_len(py, r)) lv[r] = depth;
    if (ts_tree_cursor_goto_first_child(&c)) {
      depth += is(x, "block");
      continue;
    }
    bool moved = false;
    while (!(moved = ts_tree_cursor_goto_next_sibling(&c))) {
      if (!ts_tree_cursor_goto_parent(&c)) break;
      depth -= is(ts_tree_cursor_current_node(&c), "block");
    }
    if (!moved) break;
  }
  ts_tree_cursor_delete(&c);
  return lv;
}

/* CPython's tokenizer refuses a line nested more than 99 indentation levels
 * deep ("too many levels of indentation"), and each wrap adds one, so code
 * that compiles could stop compiling. A row past the limit loses its
 * innermost wrap (with a warning) and the caller recomputes the nesting.
 * Returns true if it dropped one. *levels is computed on first need only:
 * a level takes at least one character, so shallow files skip the walk. */
#define PY_MAX_INDENT 99
static bool too_deep(Py *py, const int *cover, int **levels) {
  int n = py->nrows, most = 0, worst = -1;
  size_t ws = 0;
  for (int r = 0; r < n; r++) {
    most = cover[r] > most ? cover[r] : most;
    size_t k = py_ws_len(py, r);
    ws = k > ws ? k : ws;
  }
  int oneline = 0; /* levels a one-line body gains: see below */
  for (size_t i = 0; i < py->wraps.n; i++) {
    const Wrap *w = &py->wraps.v[i];
    if (!w->dropped && w->oneline && w->k + 2 > oneline) oneline = w->k + 2;
  }
  if (ws + (size_t)most + (size_t)oneline <= PY_MAX_INDENT) return false;
  if (!*levels) *levels = block_levels(py);
  const int *lv = *levels;
  Wrap *drop = NULL;
  for (size_t i = 0; i < py->wraps.n && !drop; i++) {
    Wrap *w = &py->wraps.v[i];
    /* a one-line body moves under a new `with` inside its block: two levels */
    if (!w->dropped && w->oneline && lv[w->hrow] + cover[w->hrow] + w->k + 2 > PY_MAX_INDENT)
      drop = w, worst = w->hrow;
  }
  for (int r = 0; r < n && !drop; r++) {
    if (lv[r] + cover[r] <= PY_MAX_INDENT) continue;
    for (size_t i = 0; i < py->wraps.n; i++) {
      Wrap *w = &py->wraps.v[i];
      if (!w->dropped && !w->oneline && !w->inline_ && w->r0 <= r && r <= w->r1 &&
          (!drop || w->depth > drop->depth))
        drop = w;
    }
    worst = r;
  }
  if (!drop) return false;
  drop->dropped = true;
  diag_at(&py->job->diags, DIAG_WARNING, py->job->rel, py->job->src, py->job->len, drop->r0 + 1, 1,
          "range '%s' left out: line %d would be nested deeper than Python's limit of %d indentation levels",
          drop->rec.name, worst + 1, PY_MAX_INDENT);
  return true;
}

/* Can the wrap be written on its statements' own row, `with X: stmt`, so
 * that it moves nothing? Python takes a simple statement list after the
 * colon of a `with` (`with X: a = f(b); c = 1`), also one spanning rows
 * inside brackets or after a backslash, whose indentation is free. So: the
 * wrapped statements are simple, form one logical line (each starts on
 * the row the previous one ends) that holds nothing else of the block, and
 * no wrap inside it covers the same statements (`with A: with B: s` is not
 * Python: the outer ones take lines of their own; wraps are sorted outer
 * first, so only those after i can be inside it). A header-row body
 * (`if x: y`) keeps its own layout. */
static bool can_inline(Py *py, size_t i) {
  const Wrap *w = &py->wraps.v[i];
  if (w->oneline || w->dropped) return false;
  for (int j = w->i0; j <= w->i1; j++) {
    TSNode s = w->kids.v[j];
    if (py_is_compound(s) || is(s, "decorated_definition") || is(s, "future_import_statement")) return false;
    if (j > w->i0 && row0(s) != last_row(w->kids.v[j - 1])) return false;
  }
  if (w->i0 > 0 && last_row(w->kids.v[w->i0 - 1]) >= w->r0) return false;
  if ((size_t)w->i1 + 1 < w->kids.n && row0(w->kids.v[w->i1 + 1]) <= w->r1) return false;
  if (ts_node_start_byte(w->kids.v[w->i0]) != py->rows[w->r0] + py_ws_len(py, w->r0)) return false;
  for (size_t k = i + 1; k < py->wraps.n; k++)
    if (!py->wraps.v[k].dropped && py->wraps.v[k].b0 == w->b0 && py->wraps.v[k].b1 == w->b1) return false;
  return true;
}

/* Rows in [a, b] that hold something (they move when a row is taken
 * beyond them). */
static int filled_rows(Py *py, int a, int b) {
  int n = 0;
  for (int r = a; r <= b; r++) n += !py_row_blank(py, r);
  return n;
}

/* A blank row for the `with` line of a wrap over rows r0..r1 inside
 * function fn (not the whole of it), so that a shift stays inside fn: the
 * closest free blank above inside fn's body, or below it inside fn, or one
 * of the blank rows right after fn, whichever moves fewer rows (ties: the
 * one above). The last blank between fn and the next definition is taken
 * only when nothing else is free. -1: none (the output gains a line). */
static int blank_near(Py *py, int r0, int r1, const Func *fn) {
  int top = row0(fn->def) + 1, end = last_row(fn->outer), best = -1, cost = 0, sep = -1;
  for (int r = r0 - 1; r >= top; r--)
    if (free_blank(py, r)) {
      best = r, cost = filled_rows(py, r + 1, r0 - 1);
      break;
    }
  for (int r = r1 + 1; r < py->nrows && (r <= end || (py_row_blank(py, r) && !py->strskip[r])); r++) {
    if (!free_blank(py, r)) continue;
    int c = filled_rows(py, r0, r - 1);
    if (r > end && separator(py, r)) {
      if (sep < 0) sep = r;
      continue;
    }
    if (best < 0 || c < cost) best = r, cost = c;
    break;
  }
  return best >= 0 ? best : sep;
}

/* A row for a whole-function range's `with` line that moves neither the
 * def nor a statement: two rows of the function's header (decorators
 * excepted) or docstring become one, and the rows below them up to the
 * body, all header, move up by one into the room. Returns true when it
 * added that edit. In order:
 *  - a docstring over several rows: the line break before its last row
 *    is written as the escape `\n`, which is the same string (a plain or
 *    u"" triple-quoted literal; never raw, bytes or f-strings, and not
 *    where the row ends in a backslash, which would escape the break);
 *  - a signature over several rows: the last break inside its
 *    parentheses becomes a space (not after a comment).
 * __doc__, the signature and every statement's line stay as they were. */
static bool fold_header(Py *py, Func *f) {
  if (f->folded) return false;
  if (f->kids.n && py_is_docstring(f->kids.v[0]) && is(ts_node_named_child(f->kids.v[0], 0), "string")) {
    TSNode d = f->kids.v[0];
    const char *t = py->src + ts_node_start_byte(d);
    size_t k = 0;
    while (t[k] == 'u' || t[k] == 'U') k++;
    int s0 = row0(d), e = last_row(d);
    if ((t[k] == '"' || t[k] == '\'') && t[k + 1] == t[k] && t[k + 2] == t[k] && e > s0) {
      size_t end = py_row_end(py, e - 1), bs = 0;
      while (end - bs > py->rows[e - 1] && py->src[end - bs - 1] == '\\') bs++;
      if (bs % 2 == 0) {
        edits_add(&py->job->edits, py->bom + end, py->bom + py->rows[e], "\\n", 0);
        return f->folded = true;
      }
    }
  }
  TSNode params = child_by_field(f->def, "parameters");
  if (ts_node_is_null(params)) return false;
  for (int r = last_row(params) - 1; r >= row0(params); r--) {
    size_t end = py_row_end(py, r), a = py->rows[r];
    while (end > a && (py->src[end - 1] == ' ' || py->src[end - 1] == '\t')) end--;
    if (end <= ts_node_start_byte(params) || py->strskip[r + 1] || (end > a && py->src[end - 1] == '\\')) continue;
    TSNode last = ts_node_descendant_for_byte_range(params, (uint32_t)end - 1, (uint32_t)end);
    if (is(last, "comment") || ts_node_start_byte(last) < ts_node_start_byte(params)) continue;
    edits_add(&py->job->edits, py->bom + py_row_end(py, r), py->bom + py->rows[r + 1] + py_ws_len(py, r + 1), " ", 0);
    return f->folded = true;
  }
  return false;
}

/* A comment row between a function's header (or docstring) and its first
 * statement, the last one: a whole-function range's `with` line can go
 * there, the comment kept after it (`with X:  # why`), and nothing moves.
 * Never above the docstring, which must stay the body's first statement.
 * -1: none. */
static int header_comment(Py *py, const Func *f, int r0) {
  int floor = -1;
  if (f->kids.n > 1 && py_is_docstring(f->kids.v[0])) {
    floor = last_row(f->kids.v[0]) + 1;
  } else {
    TSNode prev = ts_node_prev_sibling(f->body);
    while (!ts_node_is_null(prev) && is(prev, "comment")) prev = ts_node_prev_sibling(prev);
    if (!ts_node_is_null(prev) && is(prev, ":")) floor = row0(prev) + 1;
  }
  for (int r = r0 - 1; floor >= 0 && r >= floor; r--)
    if (comment_row(py, r) && !py->used_blank[r]) return r;
  return -1;
}

void py_layout(Py *py) {
  FileJob *job = py->job;
  size_t nw = 0;
  for (size_t i = 0; i < py->wraps.n; i++)
    if (!py->wraps.v[i].dropped) py->wraps.v[nw++] = py->wraps.v[i];
    else free(py->wraps.v[i].with), free(py->wraps.v[i].kids.v), free(py->wraps.v[i].rec.name);
  py->wraps.n = nw;
  if (!nw) return;
  qsort(py->wraps.v, nw, sizeof *py->wraps.v, cmp_wrap);

  int n = py->nrows;
  int *cover = xcalloc((size_t)n + 2, sizeof *cover);
  int *levels = NULL;
  for (size_t i = 0; i < nw; i++) py->wraps.v[i].inline_ = can_inline(py, i);
  do nest(py, cover);
  while (too_deep(py, cover, &levels));
  free(levels);

  /* indentation of wrapped lines */
  for (int r = 0; r < n; r++) {
    if (!cover[r] || py->strskip[r] || py_row_blank(py, r)) continue;
    Buf b = {0};
    for (int k = 0; k < cover[r]; k++) buf_puts(&b, py->unit);
    /* after any `with` line inserted at the same place (a row with no
     * indentation starts where its with line goes) */
    edits_add(&job->edits, py->bom + py->rows[r] + py_ws_len(py, r), py->bom + py->rows[r] + py_ws_len(py, r), b.s, 1000);
    buf_free(&b);
  }

  /* Whole-function wraps choose their rows first: they have room that
   * moves no statement (their header, the blank above the def), which a
   * range in the function above could otherwise take from the blank
   * lines after it. */
  for (int pass = 0; pass < 2; pass++)
  for (size_t i = 0; i < nw; i++) {
    Wrap *w = &py->wraps.v[i];
    if (w->dropped || (pass == 0) != (w->fn && !w->oneline && !w->inline_)) continue;
    TSNode first = w->kids.v[w->i0];
    if (w->inline_) {
      /* after the row's indentation and any appended to it (order 1000) */
      edits_addf(&job->edits, py->bom + w->b0, py->bom + w->b0, 2000, "%s ", w->with);
      continue;
    }
    if (!w->oneline) {
      /* a multi-line block: the with line goes at the start of row r0 */
      Buf line = {0};
      buf_add(&line, py->src + py->rows[w->r0], py_ws_len(py, w->r0));
      for (int k = 0; k < w->depth; k++) buf_puts(&line, py->unit);
      buf_printf(&line, "%s%s", w->with, py->nl);
      Func *fn = w->fn ? w->fn : py_func_at(py, w->b0);
      /* Where the with line's row comes from. A whole function: a blank
       * between its header and body, else a comment row there, which
       * keeps its comment after the with, else two rows of its docstring
       * or signature folded into one (nothing moves so far), else the
       * blank above its def (the def and its headers move up, never a
       * statement). Other wraps, and a whole function with none of that:
       * a blank inside the function or right after it, then the same in
       * the functions around it, so a shift does not reach into the next
       * definition; then the next blank below. */
      int b = -1, c = -1;
      bool folded = false;
      if (w->fn) {
        b = blank_above(py, w->r0, row0(w->fn->def) + 1, true);
        if (b < 0) c = header_comment(py, w->fn, w->r0);
        if (c >= 0) {
          /* the with line without its newline, then the comment */
          py->used_blank[c] = 1;
          edits_addf(&job->edits, py->bom + py->rows[c], py->bom + py->rows[c] + py_ws_len(py, c), 0, "%.*s  ",
                     (int)(line.len - strlen(py->nl)), line.s);
          buf_free(&line);
          continue;
        }
        if (b < 0) folded = fold_header(py, w->fn);
      }
      if (b < 0 && !folded && (w->fn || !fn)) b = blank_above(py, w->r0, blank_floor(py, fn), w->fn != NULL);
      for (const Func *f = fn; b < 0 && !folded && f; f = f->parent) b = blank_near(py, w->r0, w->r1, f);
      /* none in reach: the next blank below still moves fewer rows than
       * a new line, which moves every row to the end of the file */
      for (int r = w->r1 + 1; b < 0 && !folded && r < n; r++)
        if (free_blank(py, r)) b = r;
      if (b >= 0) {
        py->used_blank[b] = 1;
        size_t end = b + 1 < n ? py->rows[b + 1] : py->len;
        edits_add(&job->edits, py->bom + py->rows[b], py->bom + end, "", 0);
      }
      edits_add(&job->edits, py->bom + py->rows[w->r0], py->bom + py->rows[w->r0], line.s, 10 + w->depth);
      buf_free(&line);
      continue;
    }
    /* a one-line body: move it onto its own line(s) */
    Buf base = {0};
    buf_add(&base, py->src + py->rows[w->hrow], py_ws_len(py, w->hrow));
    for (int k = 0; k <= cover[w->hrow]; k++) buf_puts(&base, py->unit);
    if (w->k == 0) {
      size_t s0 = ts_node_start_byte(w->kids.v[0]);
      edits_addf(&job->edits, py->bom + w->colon, py->bom + s0, 0, "%s%s", py->nl, base.s);
      if (w->i0 > 0) {
        size_t pe = ts_node_end_byte(w->kids.v[w->i0 - 1]);
        edits_addf(&job->edits, py->bom + pe, py->bom + ts_node_start_byte(first), 0, "%s%s", py->nl, base.s);
      }
      if (!ts_node_is_null(w->stmt_outer)) {
        int b = blank_above(py, row0(w->stmt_outer), blank_floor(py, w->fn ? w->fn : py_func_at(py, w->b0)), w->fn != NULL);
        if (b >= 0) {
          py->used_blank[b] = 1;
          size_t end = b + 1 < n ? py->rows[b + 1] : py->len;
          edits_add(&job->edits, py->bom + py->rows[b], py->bom + end, "", 0);
        }
      }
    }
    Buf t = {0};
    buf_printf(&t, "%s%s%s", w->with, py->nl, base.s);
    for (int k = 0; k <= w->k; k++) buf_puts(&t, py->unit);
    edits_add(&job->edits, py->bom + ts_node_start_byte(first), py->bom + ts_node_start_byte(first), t.s, 100 + w->k);
    buf_free(&t);
    buf_free(&base);
  }
  free(cover);
}

/* Import each context once, on an existing line where possible. */
void py_prelude(Py *py) {
  FileJob *job = py->job;
  if (!py->alias_names.n && !py->uses_ncrt) return;
  Buf p = {0};
  if (py->uses_ncrt)
    /* Import ncrt if it can be found, else use a no-op context. Only
     * builtins and sys (never importlib or contextlib), so instrumenting
     * those modules themselves cannot make an import cycle. */
    buf_puts(&p, NC_PY_PRELUDE);
  if (py->uses_torch) buf_printf(&p, "; %s", NC_PY_TORCH_PRELUDE);
  for (size_t i = 0; i < py->alias_defs.n; i++) {
    char *s = py_alias_import(py->alias_defs.v[i]);
    buf_printf(&p, "%s%s", p.len ? "; " : "", s);
    free(s);
  }
  Nodes kids = {0};
  py_statements(py->root, &kids);
  TSNode after = {0};
  bool have_after = false;
  size_t i = 0;
  if (kids.n && py_is_docstring(kids.v[0])) after = kids.v[i++], have_after = true;
  while (i < kids.n && is(kids.v[i], "future_import_statement")) after = kids.v[i++], have_after = true;
  /* the first statement may open a range: then the prelude needs a line of
   * its own before the range's `with` line, like a compound statement */
  bool first_wrapped = false;
  for (size_t w = 0; w < py->wraps.n && kids.n && !have_after; w++)
    first_wrapped |= !py->wraps.v[w].dropped && py->wraps.v[w].b0 == ts_node_start_byte(kids.v[0]);
  /* Without a docstring or future import to follow, a blank or comment
   * row above the first statement holds it (`PRELUDE  # Copyright ...`),
   * so no line moves and no traceback of the user's code shows it; the
   * shebang and a PEP 263 coding line stay first. */
  int b = -1;
  if (!have_after && kids.n) {
    b = blank_above(py, row0(kids.v[0]), coding_floor(py), false);
    for (int r = row0(kids.v[0]) - 1; b < 0 && r >= coding_floor(py) && r > 0; r--)
      if (comment_row(py, r) && !py->used_blank[r]) b = r;
    if (b < 0 && coding_floor(py) == 0 && row0(kids.v[0]) > 0 && comment_row(py, 0) &&
        memcmp(py->src + py->rows[0], "#!", 2) && !py->used_blank[0])
      b = 0;
  }
  if (have_after) {
    edits_addf(&job->edits, py->bom + ts_node_end_byte(after), py->bom + ts_node_end_byte(after), -1, "; %s", p.s);
  } else if (b >= 0 && py_row_blank(py, b)) {
    py->used_blank[b] = 1;
    edits_add(&job->edits, py->bom + py->rows[b], py->bom + py_row_end(py, b), p.s, -1);
  } else if (b >= 0) {
    py->used_blank[b] = 1;
    edits_addf(&job->edits, py->bom + py->rows[b], py->bom + py->rows[b], -1, "%s  ", p.s);
  } else if (kids.n && !py_is_compound(kids.v[0]) && !first_wrapped) {
    edits_addf(&job->edits, py->bom + ts_node_start_byte(kids.v[0]), py->bom + ts_node_start_byte(kids.v[0]), -1,
               "%s; ", p.s);
  } else if (kids.n) {
    edits_addf(&job->edits, py->bom + ts_node_start_byte(kids.v[0]), py->bom + ts_node_start_byte(kids.v[0]), -1,
               "%s%s", p.s, py->nl);
  }
  vec_free(&kids);
  buf_free(&p);
}

/* ---- moved lines (--explain) ------------------------------------------ */

/* Say which functions' def line or body statements moved in the output
 * (tracebacks, co_firstlineno and debuggers see the new numbers). The
 * layout keeps them wherever a blank line gives room; this tells where it
 * could not. Only with --explain: it applies the edits once more. */
void py_explain_moves(Py *py) {
  FileJob *job = py->job;
  if (!job->explain || !job->edits.v.n) return;
  Buf out = {0};
  LineMap map = {0};
  if (edits_apply(&job->edits, job->src, job->len, &out, &map) == 0) {
    for (size_t i = 0; i < py->funcs.n; i++) {
      const Func *f = py->funcs.v[i];
      int dl = row0(f->def) + 1, dm = linemap_get(&map, dl), first = 0, nmoved = 0;
      size_t k0 = f->kids.n && py_is_docstring(f->kids.v[0]); /* not a statement that runs */
      for (size_t k = k0; k < f->kids.n; k++) {
        int l = row0(f->kids.v[k]) + 1;
        if (linemap_get(&map, l) != l && !nmoved++) first = l;
      }
      if (dm == dl && !nmoved) continue;
      Buf b = {0};
      if (dm != dl) buf_printf(&b, "def line %d is line %d", dl, dm);
      if (nmoved)
        buf_printf(&b, "%s%d of %zu body statements moved (line %d is line %d)", b.len ? "; " : "", nmoved,
                   f->kids.n - k0, first, linemap_get(&map, first));
      job_explain(job, dl, "%s: moved in the output: %s", f->qual, b.s);
      buf_free(&b);
    }
  }
  buf_free(&out);
  linemap_free(&map);
}
