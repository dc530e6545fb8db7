/* pyrewrite: Python instrumentation. Parse with tree-sitter-python, find what
 * the rules name (functions, call sites, line ranges, full trace), plan
 * "wraps" (a run of whole statements of one block put under a `with`), then
 * lay the wraps out as byte edits that keep original line numbers wherever
 * the layout allows.
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
 * Async functions and generators get start/end spans (ncrt.span), never
 * push/pop ranges, which must not stay open across await/yield. */
#include "pyjit.h"
#include "rewrite.h"
#include "tsnode.h"

#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);

#define NC_PY_MARK "__import__(\"ncrt\")"
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

typedef VEC(TSNode) Nodes;
typedef VEC(char *) Strs;
typedef VEC(size_t) Offsets;

typedef struct Func Func;
struct Func {
  TSNode def;       /* function_definition */
  TSNode outer;     /* decorated_definition or def */
  char *name, *qual, *cls_qual; /* cls_qual: qualname of the class it is a method of */
  bool is_async, is_gen;
  Func *parent;     /* enclosing function, if any */
  bool has_func_wrap;
  bool folded;      /* a row of its header or docstring was given to a range */
  TSNode body;      /* its block */
  Nodes kids;       /* the body's statements, listed once */
};

typedef struct {
  TSNode block;     /* block holding the statements (or module) */
  int i0, i1;       /* first and last wrapped statement, indices into kids */
  Nodes kids;       /* statement children of block */
  size_t b0, b1;    /* bytes: start of first, end of last */
  int r0, r1;       /* rows */
  bool oneline;     /* first wrapped statement is on its block's header row */
  bool inline_;     /* simple statements of one logical line: `with X: stmt` on their own row */
  size_t colon;     /* oneline: offset just after the header's ':' */
  int hrow;         /* oneline: header row */
  char *with;       /* "with X(args):" */
  int depth, k;     /* nesting among multi-line wraps; index among one-line wraps */
  const Rule *rule; /* NULL: full trace */
  Func *fn;         /* function whose body is wrapped whole, or NULL */
  TSNode stmt_outer;/* the compound statement owning a oneline block */
  RangeRec rec;
  bool dropped;
} Wrap;

typedef struct {
  FileJob *job;
  const char *src;  /* after any BOM */
  size_t len, bom;
  TSParser *parser;
  TSTree *tree;
  TSNode root;
  const char *nl;
  char unit[16];
  size_t *rows;     /* byte offset of each row start */
  int nrows;
  VEC(Func *) funcs;
  VEC(Wrap) wraps;
  bool *used_blank; /* rows already taken by a layout decision */
  unsigned char *defedge; /* DEF_FIRST/DEF_LAST rows of definitions; NULL until a blank is sought */
  char *strskip;    /* rows that start inside a multi-line string */
  bool uses_ncrt;    /* the prelude must import ncrt (with its fallback) */
  PyJit *jit;       /* what the file's JIT compilers compile */
  bool uses_torch;  /* the prelude must bind __ncrt_t__ (TorchScript-safe markers) */
  /* context aliases used, in first-use order */
  VEC(char *) alias_names;
  VEC(char *) alias_defs;
} Py;

/* ---- small tree helpers ---------------------------------------------- */

/* Statement (non-comment, named) children, through a cursor: ts_node_child
 * by index is linear per call, which would make big modules quadratic. */
static void statements(TSNode block, Nodes *out) {
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

static bool is_compound(TSNode n) {
  static const char *const t[] = {"function_definition", "class_definition", "decorated_definition",
                                  "if_statement", "for_statement", "while_statement",
                                  "try_statement", "with_statement", "match_statement", NULL};
  for (const char *const *p = t; *p; p++)
    if (is(n, *p)) return true;
  return false;
}

static bool is_clause(TSNode n) {
  return is(n, "elif_clause") || is(n, "else_clause") || is(n, "except_clause") ||
         is(n, "except_group_clause") || is(n, "finally_clause") || is(n, "case_clause");
}

/* The statement blocks directly under a compound statement: its body and the
 * blocks of its clauses (elif/else/except/finally/case). */
static void sub_blocks(TSNode n, Nodes *out) {
  TSTreeCursor c = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&c)) {
    do {
      TSNode k = ts_tree_cursor_current_node(&c);
      if (is(k, "block")) {
        TSNode f = ts_node_named_child(k, 0);
        if (!ts_node_is_null(f) && is(f, "case_clause")) sub_blocks(k, out);
        else vec_push(out, k);
      } else if (is_clause(k)) {
        sub_blocks(k, out);
      }
    } while (ts_tree_cursor_goto_next_sibling(&c));
  }
  ts_tree_cursor_delete(&c);
}

static TSNode def_of(TSNode outer) {
  if (is(outer, "decorated_definition")) return child_by_field(outer, "definition");
  return outer;
}

static bool is_docstring(TSNode stmt) {
  if (!is(stmt, "expression_statement") || ts_node_named_child_count(stmt) != 1) return false;
  TSNode e = ts_node_named_child(stmt, 0);
  return is(e, "string") || is(e, "concatenated_string");
}

/* Does the subtree contain a node of `type`, not looking inside nested
 * functions, classes or lambdas? */
static bool contains_outside_nested(TSNode n, const char *type) {
  if (is(n, type)) return true;
  if (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda")) return false;
  bool found = false;
  TSTreeCursor c = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&c)) {
    do {
      if (contains_outside_nested(ts_tree_cursor_current_node(&c), type)) { found = true; break; }
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

static void index_rows(Py *py) {
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

static size_t row_end(Py *py, int r) { /* offset of the row's '\n' (or '\r\n') or EOF */
  size_t e = r + 1 < py->nrows ? py->rows[r + 1] - 1 : py->len;
  if (e > py->rows[r] && e <= py->len && e > 0 && py->src[e - 1] == '\r' && e < py->len) e--;
  return e;
}

static size_t ws_len(Py *py, int r) {
  size_t a = py->rows[r], i = a, e = row_end(py, r);
  while (i < e && (py->src[i] == ' ' || py->src[i] == '\t' || py->src[i] == '\f')) i++;
  return i - a;
}

static bool row_blank(Py *py, int r) {
  size_t a = py->rows[r] + ws_len(py, r), e = r + 1 < py->nrows ? py->rows[r + 1] : py->len;
  for (size_t i = a; i < e; i++)
    if (py->src[i] != '\r' && py->src[i] != '\n') return false;
  return true;
}

/* Does row r continue the row above (which ends in a backslash)? Then r,
 * even when blank, belongs to that logical line: `"""doc""" \` over an
 * empty row ends the statement there, and deleting the empty row would
 * join the next line onto it. A backslash ending a comment does not
 * continue, but counting it too only leaves a blank row unused. */
static bool continued(Py *py, int r) {
  if (r <= 0) return false;
  size_t e = row_end(py, r - 1);
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

static void mark_strings(Py *py, TSNode root) {
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
    if (descend && ts_tree_cursor_goto_first_child(&c)) continue;
    bool more = false;
    while (!(more = ts_tree_cursor_goto_next_sibling(&c)))
      if (!ts_tree_cursor_goto_parent(&c)) break;
    if (!more) break;
  }
  ts_tree_cursor_delete(&c);
  vec_free(&h);
}

/* The file's indent unit: a tab if every indented code line uses tabs only,
 * else the width of the first indentation seen (spaces). */
static void pick_unit(Py *py) {
  int width = 0;
  bool tabs_only = true, any = false;
  for (int r = 0; r < py->nrows; r++) {
    if (py->strskip[r] || row_blank(py, r)) continue;
    size_t w = ws_len(py, r);
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

/* ---- contexts -------------------------------------------------------- */

static void py_literal(Buf *b, const char *s) {
  buf_putc(b, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') buf_printf(b, "\\%c", *p);
    else if (*p == '\n') buf_puts(b, "\\n");
    else if (*p == '\t') buf_puts(b, "\\t");
    else if (*p == '\r') buf_puts(b, "\\r");
    else if (*p < 0x20 || *p == 0x7f) buf_printf(b, "\\x%02x", *p);
    else if (*p < 0x80) buf_putc(b, (char)*p);
    else {
      /* non-ASCII: \u escapes keep the emitted text ASCII, valid in any
       * declared source encoding */
      unsigned cp = 0;
      int extra = *p >= 0xf0 ? 3 : *p >= 0xe0 ? 2 : *p >= 0xc0 ? 1 : 0;
      cp = *p & (0x3f >> extra);
      for (int i = 0; i < extra && p[1]; i++) cp = (cp << 6) | (*++p & 0x3f);
      if (cp > 0xffff) buf_printf(b, "\\U%08x", cp);
      else buf_printf(b, "\\u%04x", cp);
    }
  }
  buf_putc(b, '"');
}

/* A `variable` context value must be one Python expression. */
static bool valid_expr(Py *py, const char *expr) {
  Buf b = {0};
  buf_printf(&b, "(%s\n)\n", expr);
  TSTree *t = ts_parser_parse_string(py->parser, NULL, b.s, (uint32_t)b.len);
  TSNode r = ts_tree_root_node(t);
  bool ok = !ts_node_has_error(r) && ts_node_named_child_count(r) == 1 &&
            is(ts_node_named_child(r, 0), "expression_statement") &&
            ts_node_named_child_count(ts_node_named_child(r, 0)) == 1;
  ts_tree_delete(t);
  buf_free(&b);
  return ok && !strchr(expr, '\n');
}

static const char *alias_for(Py *py, const char *cls, bool span) {
  CtxKind k = ctx_kind(cls);
  char *name, *def;
  if (k != CTX_USER) {
    py->uses_ncrt = true;
    return k == CTX_NCRT_TORCH ? (span ? "__ncrt__.torch_span" : "__ncrt__.torch_range")
                               : (span ? "__ncrt__.span" : "__ncrt__.range");
  } else {
    const char *dot = strrchr(cls, '.');
    if (!dot) return cls; /* a global or builtin name: used as written */
    for (size_t i = 0; i < py->alias_names.n; i++)
      if (!strcmp(py->alias_defs.v[i] + strlen(py->alias_names.v[i]) + 1, cls)) return py->alias_names.v[i];
    name = xasprintf("__ncrt_ctx%zu__", py->alias_names.n);
    /* stored as "name=cls" first to find it again; rewritten below */
    def = xasprintf("%s=%s", name, cls);
  }
  for (size_t i = 0; i < py->alias_names.n; i++)
    if (!strcmp(py->alias_names.v[i], name)) {
      free(name), free(def);
      return py->alias_names.v[i];
    }
  vec_push(&py->alias_names, name);
  vec_push(&py->alias_defs, def);
  return name;
}

static char *alias_import(const char *def) {
  const char *eq = strchr(def, '=');
  char *name = xstrndup(def, (size_t)(eq - def));
  const char *cls = eq + 1, *dot = strrchr(cls, '.');
  char *s = xasprintf("from %.*s import %s as %s", (int)(dot - cls), cls, dot + 1, name);
  free(name);
  return s;
}

/* Build "with Alias(args):" for a rule's context (or the default). Returns
 * NULL after a diagnostic if a value is not usable. */
static char *with_text(Py *py, const Rule *rule, const char *dflt_name, bool span) {
  const Context *rc = rule ? &rule->ctx : NULL;
  const Context *dc = &py->job->rules->default_ctx;
  const char *cls = rc && rc->cls ? rc->cls : dc->cls;
  const Context *vals = rc && rc->values.n ? rc : dc->values.n ? dc : NULL;
  Buf b = {0};
  if (!vals) {
    py_literal(&b, dflt_name);
  } else {
    size_t n = vals->values.n;
    if (ctx_kind(cls) != CTX_USER && n > 1) {
      ruledoc_diag(&py->job->rules->doc, &py->job->diags, DIAG_WARNING, vals->values.v[1].at,
                   "the ncrt context takes one value (the range name); extra values are ignored");
      n = 1;
    }
    for (size_t i = 0; i < n; i++) {
      const CtxValue *v = &vals->values.v[i];
      if (i) buf_puts(&b, ", ");
      if (v->variable) {
        if (!valid_expr(py, v->value)) {
          ruledoc_diag(&py->job->rules->doc, &py->job->diags, DIAG_ERROR, v->at,
                       "'%s' is not a single Python expression", v->value);
          buf_free(&b);
          return NULL;
        }
        buf_puts(&b, v->value);
      } else {
        py_literal(&b, v->value);
      }
    }
  }
  char *args = buf_steal(&b);
  char *w;
  if (!span && ctx_kind(cls) != CTX_USER && pyjit_torch(py->jit)) {
    /* TorchScript territory: torch.jit.script(module) compiles every
     * function forward reaches, in any file, and cannot compile an ncrt
     * call. It takes record_function, and folds torch.jit.is_scripting()
     * to True in a conditional expression, so it never sees the ncrt call;
     * dynamo folds torch.compiler.is_compiling() the same way (no graph
     * break). Python evaluates both to False and runs the ncrt range.
     * __ncrt_t__ (the prelude) finds torch at call time, so the line also
     * works while torch itself is being imported. */
    const char *rf = "__ncrt_t__.autograd.profiler.record_function";
    bool expr = vals && vals->values.v[0].variable;
    w = xasprintf("with %s(%s%s%s) if __ncrt_t__.jit.is_scripting() else %s(%s%s%s) if "
                  "__ncrt_t__.compiler.is_compiling() else %s(%s):",
                  rf, expr ? "str(" : "", args, expr ? ")" : "", rf, expr ? "str(" : "", args, expr ? ")" : "",
                  alias_for(py, cls, span), args);
    py->uses_torch = true;
  } else {
    w = xasprintf("with %s(%s):", alias_for(py, cls, span), args);
  }
  free(args);
  return w;
}

/* ---- collecting functions -------------------------------------------- */

static bool is_generator(Py *py, Func *f) {
  if (ts_node_is_null(f->body)) return false;
  uint32_t a = ts_node_start_byte(f->body), b = ts_node_end_byte(f->body);
  if (!memmem(py->src + a, b - a, "yield", 5)) return false; /* cheap text filter first */
  bool gen = false;
  for (size_t i = 0; i < f->kids.n && !gen; i++) gen = contains_outside_nested(f->kids.v[i], "yield");
  return gen;
}

static void collect(Py *py, TSNode block, const char *prefix, const char *cls_qual, Func *parent);
static void collect_list(Py *py, Nodes *kids, const char *prefix, const char *cls_qual, Func *parent);

static void collect_stmt(Py *py, TSNode s, const char *prefix, const char *cls_qual, Func *parent) {
  TSNode d = def_of(s);
  if (!ts_node_is_null(d) && is(d, "function_definition")) {
    Func *f = xcalloc(1, sizeof *f);
    f->def = d;
    f->outer = s;
    f->name = node_text(py->src, child_by_field(d, "name"));
    f->qual = *prefix ? xasprintf("%s.%s", prefix, f->name) : xstrdup(f->name);
    f->cls_qual = cls_qual ? xstrdup(cls_qual) : NULL;
    f->is_async = is_async_def(d);
    f->body = child_by_field(d, "body");
    if (!ts_node_is_null(f->body)) statements(f->body, &f->kids);
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
    collect(py, child_by_field(d, "body"), q, q, parent);
    free(q);
    free(name);
    return;
  }
  if (is_compound(s)) {
    Nodes subs = {0};
    sub_blocks(s, &subs);
    for (size_t i = 0; i < subs.n; i++) collect(py, subs.v[i], prefix, NULL, parent);
    vec_free(&subs);
  }
}

static void collect_list(Py *py, Nodes *kids, const char *prefix, const char *cls_qual, Func *parent) {
  for (size_t i = 0; i < kids->n; i++) collect_stmt(py, kids->v[i], prefix, cls_qual, parent);
}

static void collect(Py *py, TSNode block, const char *prefix, const char *cls_qual, Func *parent) {
  if (ts_node_is_null(block)) return;
  Nodes kids = {0};
  statements(block, &kids);
  for (size_t i = 0; i < kids.n; i++) collect_stmt(py, kids.v[i], prefix, cls_qual, parent);
  vec_free(&kids);
}

/* ---- planning wraps -------------------------------------------------- */

static bool in_span_ctx(const Func *f) { return f && (f->is_async || f->is_gen); }

/* The enclosing function of a byte offset (innermost). */
static Func *func_at(Py *py, size_t off) {
  Func *best = NULL;
  for (size_t i = 0; i < py->funcs.n; i++) {
    Func *f = py->funcs.v[i];
    TSNode body = child_by_field(f->def, "body");
    if (off >= ts_node_start_byte(body) && off < ts_node_end_byte(body))
      if (!best || ts_node_start_byte(f->def) > ts_node_start_byte(best->def)) best = f;
  }
  return best;
}

/* Offset just past the ':' that introduces `block`, if the block's first
 * statement sits on the same row (a one-line body); else 0. */
static size_t oneline_colon(Py *py, TSNode block, TSNode first) {
  size_t i = ts_node_start_byte(first);
  while (i > 0 && (py->src[i - 1] == ' ' || py->src[i - 1] == '\t')) i--;
  if (i > 0 && py->src[i - 1] == ':' && i - 1 >= ts_node_start_byte(ts_node_parent(block))) return i;
  (void)block;
  return 0;
}

/* Add a wrap over kids[i0..i1] of `block`. `owner` is the compound statement
 * whose block it is (null for the module). */
static Wrap *add_wrap(Py *py, TSNode block, Nodes *kids, int i0, int i1, const Rule *rule,
                      const char *name, const char *kind, Func *fn_whole) {
  TSNode a = kids->v[i0], b = kids->v[i1];
  Func *ctx_fn = fn_whole ? fn_whole : func_at(py, ts_node_start_byte(a));
  char *w = with_text(py, rule, name, in_span_ctx(ctx_fn));
  if (!w) return NULL;
  Wrap x = {0};
  x.block = block;
  x.kids.v = xmalloc(kids->n * sizeof *kids->v);
  memcpy(x.kids.v, kids->v, kids->n * sizeof *kids->v);
  x.kids.n = x.kids.cap = kids->n;
  x.i0 = i0, x.i1 = i1;
  x.b0 = ts_node_start_byte(a), x.b1 = ts_node_end_byte(b);
  x.r0 = row0(a), x.r1 = last_row(b);
  x.with = w;
  x.rule = rule;
  x.fn = fn_whole;
  if (!is(block, "module")) {
    x.colon = oneline_colon(py, block, kids->v[0]);
    if (x.colon && row0(kids->v[0]) == x.r0) {
      x.oneline = true;
      x.hrow = x.r0;
      TSNode owner = ts_node_parent(block);
      while (!ts_node_is_null(owner) && is_clause(owner)) owner = ts_node_parent(owner);
      if (!ts_node_is_null(owner) && !ts_node_is_null(ts_node_parent(owner)) &&
          is(ts_node_parent(owner), "decorated_definition"))
        owner = ts_node_parent(owner);
      x.stmt_outer = owner;
    }
  }
  const Context *vc = rule && rule->ctx.values.n ? &rule->ctx : py->job->rules->default_ctx.values.n ? &py->job->rules->default_ctx : NULL;
  x.rec.name = xstrdup(vc ? vc->values.v[0].value : name);
  x.rec.kind = kind;
  x.rec.line0 = x.r0 + 1;
  x.rec.line1 = x.r1 + 1;
  x.rec.rule = rule;
  vec_push(&py->wraps, x);
  return &py->wraps.v[py->wraps.n - 1];
}

static const char *func_body_skip(Py *py, Func *f, Nodes *kids, int *first) {
  kids->n = 0;
  for (size_t i = 0; i < f->kids.n; i++) vec_push(kids, f->kids.v[i]);
  *first = 0;
  if (kids->n && is_docstring(kids->v[0])) *first = 1;
  if ((size_t)*first >= kids->n) return "its body is only a docstring";
  return NULL;
}

static bool trivial_body(Py *py, Nodes *kids, int first) {
  if (kids->n - (size_t)first != 1) return false;
  TSNode s = kids->v[first];
  if (is(s, "pass_statement")) return true;
  if (is(s, "expression_statement") && ts_node_named_child_count(s) == 1 &&
      is(ts_node_named_child(s, 0), "ellipsis"))
    return true;
  (void)py;
  return false;
}

static void wrap_function(Py *py, Func *f, const Rule *rule, const char *name, const char *kind) {
  Nodes kids = {0};
  int first;
  const char *why = pyjit_why(py->jit, f->def);
  if (!why) why = func_body_skip(py, f, &kids, &first);
  if (why) {
    job_explain(py->job, row0(f->def) + 1, "skipped %s: %s", f->qual, why);
  } else {
    Wrap *w = add_wrap(py, f->body, &kids, first, (int)kids.n - 1, rule, name, kind, f);
    if (w) {
      f->has_func_wrap = true;
      job_explain(py->job, row0(f->def) + 1, "%s: %s range '%s'%s", f->qual, kind, w->rec.name,
                  in_span_ctx(f) ? " (start/end span: async or generator)" : "");
    }
  }
  vec_free(&kids);
}



/* A call's callee text without whitespace, e.g. "self.attn" or "F.softmax". */
static bool call_matches(Py *py, TSNode call, const char *pat) {
  TSNode fn = child_by_field(call, "function");
  if (ts_node_is_null(fn)) return false;
  char *t = node_squeezed(py->src, fn);
  bool ok;
  if (strchr(pat, '.')) {
    ok = name_match(pat, t);
  } else {
    const char *last = strrchr(t, '.');
    ok = name_match(pat, last ? last + 1 : t);
  }
  free(t);
  return ok;
}

static bool has_matching_call(Py *py, TSNode n, const char *pat) {
  if (is(n, "function_definition") || is(n, "class_definition")) return false;
  if (is(n, "call") && call_matches(py, n, pat)) return true;
  bool found = false;
  TSTreeCursor c = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&c)) {
    do {
      if (has_matching_call(py, ts_tree_cursor_current_node(&c), pat)) { found = true; break; }
    } while (ts_tree_cursor_goto_next_sibling(&c));
  }
  ts_tree_cursor_delete(&c);
  return found;
}

/* Wrap every assignment, expression statement and return under `block`
 * calling `pat`; nested functions and classes are their own functions. */
static int wrap_calls_in(Py *py, TSNode block, const Rule *rule, const char *fname) {
  Nodes kids = {0};
  statements(block, &kids);
  int hits = 0;
  for (size_t i = 0; i < kids.n; i++) {
    TSNode s = kids.v[i];
    if (is(s, "expression_statement") || is(s, "return_statement")) {
      if (!has_matching_call(py, s, rule->call)) continue;
      /* all statements sharing its rows go together (a; b on one line) */
      size_t j0 = i, j1 = i;
      while (j0 > 0 && last_row(kids.v[j0 - 1]) >= row0(s)) j0--;
      while (j1 + 1 < kids.n && row0(kids.v[j1 + 1]) <= last_row(s)) j1++;
      char *name = xasprintf("%s:%s", fname, rule->call);
      Wrap *w = add_wrap(py, block, &kids, (int)j0, (int)j1, rule, name, rule_kind(rule->kind)->range_kind, NULL);
      if (w) {
        hits++;
        job_explain(py->job, row0(s) + 1, "call to '%s' in %s: range '%s'", rule->call, fname, w->rec.name);
      }
      free(name);
      i = j1;
    } else if (is_compound(s) && !is(s, "function_definition") && !is(s, "class_definition") &&
               !is(s, "decorated_definition")) {
      Nodes subs = {0};
      sub_blocks(s, &subs);
      for (size_t k = 0; k < subs.n; k++) hits += wrap_calls_in(py, subs.v[k], rule, fname);
      vec_free(&subs);
    }
  }
  vec_free(&kids);
  return hits;
}

/* Snap lines [s, e] (0-based rows) to whole statements of one block,
 * descending into a compound statement when the range stays inside one of
 * its blocks and does not include its header. */
/* `base`: the name's prefix; the range is named after the lines it covers
 * once snapped to whole statements ("f:L26-32" for lines 26-28 of a
 * statement running to 32), so the name tells what the range times. */
static Wrap *snap_lines(Py *py, TSNode block, int s, int e, const Rule *rule, const char *base) {
  Nodes kids = {0};
  for (;;) {
    statements(block, &kids);
    int i0 = -1, i1 = -1;
    for (size_t i = 0; i < kids.n; i++)
      if (last_row(kids.v[i]) >= s && row0(kids.v[i]) <= e) {
        if (i0 < 0) i0 = (int)i;
        i1 = (int)i;
      }
    if (i0 < 0) {
      vec_free(&kids);
      return NULL;
    }
    TSNode only = kids.v[i0];
    if (i0 == i1 && is_compound(only) && s > row0(def_of(only))) {
      TSNode d = def_of(only);
      Nodes subs = {0};
      if (is(d, "function_definition") || is(d, "class_definition")) vec_push(&subs, child_by_field(d, "body"));
      else sub_blocks(only, &subs);
      int hit = -1, nhit = 0;
      for (size_t k = 0; k < subs.n; k++)
        if (!ts_node_is_null(subs.v[k]) && last_row(subs.v[k]) >= s && row0(subs.v[k]) <= e) hit = (int)k, nhit++;
      if (nhit == 1 && row0(subs.v[hit]) <= s && last_row(subs.v[hit]) >= e) {
        TSNode nb = subs.v[hit];
        vec_free(&subs);
        /* a one-line block on the header row: the header is in range */
        Nodes inner = {0};
        statements(nb, &inner);
        bool on_header = inner.n && oneline_colon(py, nb, inner.v[0]) && row0(inner.v[0]) == row0(nb) &&
                         row0(nb) >= s;
        vec_free(&inner);
        if (!on_header || row0(nb) > row0(d)) {
          block = nb;
          continue;
        }
      }
      vec_free(&subs);
    }
    for (int i = i0; i <= i1; i++)
      if (is(kids.v[i], "future_import_statement")) {
        ruledoc_diag(&py->job->rules->doc, &py->job->diags, DIAG_ERROR, rule->at,
                     "lines %d-%d include a 'from __future__' import, which must stay at the top of the module",
                     s + 1, e + 1);
        vec_free(&kids);
        return NULL;
      }
    /* a docstring must stay its block's first statement: inside a `with`
     * it is a plain string, the module's (class's, function's) __doc__ is
     * None, and at module level the prelude that binds __ncrt__ would come
     * after the range that uses it */
    if (i0 == 0 && is_docstring(kids.v[0])) {
      if (i1 == 0)
        ruledoc_diag(&py->job->rules->doc, &py->job->diags, DIAG_ERROR, rule->at,
                     "lines %d-%d are only a docstring, which must stay first in its block (it is __doc__): "
                     "nothing there runs", s + 1, e + 1);
      else
        ruledoc_diag(&py->job->rules->doc, &py->job->diags, DIAG_ERROR, rule->at,
                     "lines %d-%d include a docstring, which must stay first in its block (it is __doc__): "
                     "start at line %d", s + 1, e + 1, row0(kids.v[1]) + 1);
      vec_free(&kids);
      return NULL;
    }
    int r0 = row0(kids.v[i0]), r1 = last_row(kids.v[i1]);
    char *name = r0 == r1 ? xasprintf("%s:L%d", base, r0 + 1) : xasprintf("%s:L%d-%d", base, r0 + 1, r1 + 1);
    Wrap *w = add_wrap(py, block, &kids, i0, i1, rule, name, rule_kind(rule->kind)->range_kind, NULL);
    free(name);
    vec_free(&kids);
    return w;
  }
}

static char *trimmed(const char *s, size_t n) {
  while (n && (*s == ' ' || *s == '\t')) s++, n--;
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) n--;
  return xstrndup(s, n);
}

static bool line_is(Py *py, int row, const char *want) {
  if (row < 0 || row >= py->nrows) return false;
  char *have = trimmed(py->src + py->rows[row], row_end(py, row) - py->rows[row]);
  char *w = trimmed(want, strlen(want));
  bool ok = !strcmp(have, w);
  free(have), free(w);
  return ok;
}

static void plan_lines(Py *py, const Rule *r) {
  int s = r->start_line - 1, e = r->end_line - 1;
  if (r->start_content && !line_is(py, s, r->start_content)) {
    /* the file moved under the rule: re-anchor on the nearest line that reads
     * as start_line_content (and end_line_content, if given) */
    int found = -1;
    for (int d = 1; d < py->nrows && found < 0; d++)
      for (int sg = -1; sg <= 1; sg += 2) {
        int c = s + sg * d;
        if (line_is(py, c, r->start_content) &&
            (!r->end_content || line_is(py, c + (e - s), r->end_content))) {
          found = c;
          break;
        }
      }
    if (found < 0) {
      job_rule_miss(py->job, r, xasprintf("line %d of %s does not read '%s' (start_line_content) and no line does",
                             r->start_line, py->job->rel, r->start_content));
      return;
    }
    ruledoc_diag(&py->job->rules->doc, &py->job->diags, DIAG_WARNING, r->at,
                 "start_line_content found at line %d, not %d: range moved to lines %d-%d of %s",
                 found + 1, s + 1, found + 1, found + 1 + (e - s), py->job->rel);
    e = found + (e - s);
    s = found;
  }
  if (s >= py->nrows || e >= py->nrows + 1) {
    job_rule_miss(py->job, r, xasprintf("lines %d-%d are outside %s (%d lines)", s + 1, e + 1, py->job->rel,
                           py->nrows - (py->len && py->src[py->len - 1] == '\n')));
    return;
  }
  TSNode start = py->root;
  Func *fn = NULL;
  if (r->func) {
    int nm = 0;
    for (size_t i = 0; i < py->funcs.n; i++) {
      Func *f = py->funcs.v[i];
      bool m;
      if (strchr(r->func, '.')) {
        char *cm = f->cls_qual ? xasprintf("%s.%s", f->cls_qual, f->name) : NULL;
        m = name_match(r->func, f->qual) || (cm && name_match(r->func, cm));
        free(cm);
      } else {
        m = name_match(r->func, f->name);
      }
      if (!m) continue;
      nm++;
      if (row0(f->def) <= s && last_row(f->def) >= e && (!fn || ts_node_start_byte(f->def) > ts_node_start_byte(fn->def)))
        fn = f;
    }
    if (!fn) {
      job_rule_miss(py->job, r, nm ? xasprintf("lines %d-%d are not inside function '%s' in %s", s + 1, e + 1, r->func,
                                  py->job->rel)
                      : xasprintf("no function '%s' in %s", r->func, py->job->rel));
      return;
    }
    start = child_by_field(fn->def, "body");
  }
  /* lines inside a compiled function: the innermost function around them */
  const Func *in = fn;
  for (size_t i = 0; !fn && i < py->funcs.n; i++) {
    const Func *f = py->funcs.v[i];
    if (row0(f->def) < s && last_row(f->def) >= e && (!in || ts_node_start_byte(f->def) > ts_node_start_byte(in->def)))
      in = f;
  }
  const char *jit_why = in ? pyjit_why(py->jit, in->def) : NULL;
  if (jit_why) {
    job_explain(py->job, s + 1, "skipped lines %d-%d: %s", s + 1, e + 1, jit_why);
    job_rule_miss(py->job, r, xasprintf("lines %d-%d of %s are in %s, which is %s", s + 1, e + 1, py->job->rel, in->qual,
                           jit_why));
    return;
  }
  const char *base = fn ? fn->qual : py->job->module ? py->job->module : py->job->rel;
  Wrap *w = snap_lines(py, start, s, e, r, base);
  if (w) {
    job_rule_hit(py->job, r);
    if (w->r0 != s || w->r1 != e)
      job_explain(py->job, s + 1, "lines %d-%d snapped to whole statements %d-%d: range '%s'", s + 1, e + 1,
                  w->r0 + 1, w->r1 + 1, w->rec.name);
    else
      job_explain(py->job, s + 1, "lines %d-%d: range '%s'", s + 1, e + 1, w->rec.name);
  } else if (!py->job->diags.errors) {
    job_rule_miss(py->job, r, xasprintf("no statement on lines %d-%d of %s", s + 1, e + 1, py->job->rel));
  }
}

static bool cls_match(const char *pat, const Func *f) {
  return f->cls_qual && name_match(pat, f->cls_qual);
}

/* RULE_FUNC, RULE_CALLS: the functions the rule names, whole or their
 * statements calling its pattern. */
static void plan_funcs(Py *py, const Rule *r) {
  int hits = 0, fns = 0, errs = py->job->diags.errors;
  const Func *jitted = NULL;
  const char *jit_why = NULL;
  for (size_t i = 0; i < py->funcs.n; i++) {
    Func *f = py->funcs.v[i];
    if (r->cls ? !cls_match(r->cls, f) : (f->cls_qual != NULL || f->parent != NULL)) continue;
    if (!name_match(r->func, f->name)) continue;
    fns++;
    const char *why = pyjit_why(py->jit, f->def);
    if (why) { /* a marker there would break the compile, or tell nothing */
      job_explain(py->job, row0(f->def) + 1, "skipped %s: %s", f->qual, why);
      jitted = f, jit_why = why;
      continue;
    }
    if (r->kind == RULE_FUNC) {
      const char *nm = f->qual;
      size_t before = py->wraps.n;
      wrap_function(py, f, r, nm, rule_kind(r->kind)->range_kind);
      hits += py->wraps.n > before;
    } else {
      hits += wrap_calls_in(py, child_by_field(f->def, "body"), r, f->qual);
    }
  }
  if (hits) job_rule_hit(py->job, r);
  else if (py->job->diags.errors > errs) {
    /* already reported (e.g. a bad context value) */
  } else if (jitted) {
    job_rule_miss(py->job, r, xasprintf("%s in %s is %s", jitted->qual, py->job->rel, jit_why));
  } else if (!fns) {
    bool any_cls = false;
    for (size_t i = 0; r->cls && i < py->funcs.n; i++) any_cls |= cls_match(r->cls, py->funcs.v[i]);
    /* did you mean: the classes, the class's methods or the module-level
     * functions of the file */
    const char **cands = xcalloc(py->funcs.n + 1, sizeof *cands);
    size_t nc = 0;
    for (size_t i = 0; i < py->funcs.n; i++) {
      const Func *f = py->funcs.v[i];
      const char *c = r->cls && !any_cls ? f->cls_qual
                      : r->cls           ? (cls_match(r->cls, f) ? f->name : NULL)
                                         : (!f->cls_qual && !f->parent ? f->name : NULL);
      if (c) cands[nc++] = c;
    }
    const char *near = nearest_word(r->cls && !any_cls ? r->cls : r->func, cands, nc);
    char *hint = near ? xasprintf(" (did you mean '%s'?)", near) : xstrdup("");
    free(cands);
    job_rule_miss(py->job, r, r->cls && !any_cls ? xasprintf("no class '%s' in %s%s", r->cls, py->job->rel, hint)
                 : r->cls ? xasprintf("no method '%s' in class '%s' in %s%s", r->func, r->cls, py->job->rel, hint)
                          : xasprintf("no module-level function '%s' in %s%s", r->func, py->job->rel, hint));
    free(hint);
  } else if (r->kind == RULE_CALLS) {
    job_rule_miss(py->job, r, xasprintf("no statement calling '%s' in '%s' of %s", r->call, r->func, py->job->rel));
  } else {
    job_rule_miss(py->job, r, xasprintf("'%s' in %s has nothing to wrap", r->func, py->job->rel));
  }
}

/* ---- replacements ---------------------------------------------------- */

/* Replace a definition by an import of its replacement, padded with newlines
 * so every later line keeps its number. */
static void replace_def(Py *py, TSNode outer, const char *stmt) {
  int lines = last_row(outer) - row0(outer);
  Buf b = {0};
  buf_puts(&b, stmt);
  for (int i = 0; i < lines; i++) buf_puts(&b, py->nl);
  edits_add(&py->job->edits, ts_node_start_byte(outer) + py->bom, ts_node_end_byte(outer) + py->bom, b.s, 0);
  buf_free(&b);
}

static bool inside(TSNode n, size_t a, size_t b) { return ts_node_start_byte(n) >= a && ts_node_end_byte(n) <= b; }

static void find_classes(Py *py, TSNode block, const char *prefix, Nodes *out, Strs *quals) {
  Nodes kids = {0};
  statements(block, &kids);
  for (size_t i = 0; i < kids.n; i++) {
    TSNode d = def_of(kids.v[i]);
    if (ts_node_is_null(d)) continue;
    if (is(d, "class_definition")) {
      char *name = node_text(py->src, child_by_field(d, "name"));
      char *q = *prefix ? xasprintf("%s.%s", prefix, name) : xstrdup(name);
      vec_push(out, kids.v[i]);
      vec_push(quals, q);
      find_classes(py, child_by_field(d, "body"), q, out, quals);
      free(name);
    }
  }
  vec_free(&kids);
}

static void plan_replacement(Py *py, const Rule *r) {
  Nodes cls = {0};
  Strs quals = {0};
  find_classes(py, py->root, "", &cls, &quals);
  int hits = 0;
  for (size_t i = 0; i < cls.n; i++) {
    if (!name_match(r->cls, quals.v[i])) continue;
    TSNode outer = cls.v[i], d = def_of(outer);
    char *cname = node_text(py->src, child_by_field(d, "name"));
    if (r->kind == RULE_CLASS_REPL) {
      const char *dot = strrchr(r->replacement, '.');
      char *st = xasprintf("from %.*s import %s as %s", (int)(dot - r->replacement), r->replacement, dot + 1, cname);
      replace_def(py, outer, st);
      job_explain(py->job, row0(outer) + 1, "class %s replaced by %s", quals.v[i], r->replacement);
      free(st);
      /* wraps inside a replaced class are void */
      for (size_t k = 0; k < py->wraps.n; k++)
        if (py->wraps.v[k].b0 >= ts_node_start_byte(outer) && py->wraps.v[k].b1 <= ts_node_end_byte(outer))
          py->wraps.v[k].dropped = true;
      hits++;
    } else {
      for (size_t k = 0; k < py->funcs.n; k++) {
        Func *f = py->funcs.v[k];
        if (!f->cls_qual || strcmp(f->cls_qual, quals.v[i]) || !name_match(r->func, f->name)) continue;
        if (!inside(f->outer, ts_node_start_byte(outer), ts_node_end_byte(outer))) continue;
        /* "pkg.mod.Cls.meth": the module is everything before Cls.meth */
        const char *p = r->replacement, *last = strrchr(p, '.');
        const char *mid = last;
        while (mid > p && mid[-1] != '.') mid--;
        if (mid <= p) continue;
        char *st = xasprintf("%s = __import__(\"importlib\").import_module(\"%.*s\").%s", f->name,
                             (int)(mid - 1 - p), p, mid);
        replace_def(py, f->outer, st);
        job_explain(py->job, row0(f->outer) + 1, "method %s replaced by %s", f->qual, r->replacement);
        free(st);
        for (size_t q = 0; q < py->wraps.n; q++)
          if (py->wraps.v[q].b0 >= ts_node_start_byte(f->outer) && py->wraps.v[q].b1 <= ts_node_end_byte(f->outer))
            py->wraps.v[q].dropped = true;
        hits++;
      }
    }
    free(cname);
  }
  if (hits) job_rule_hit(py->job, r);
  else
    job_rule_miss(py->job, r, r->kind == RULE_CLASS_REPL ? xasprintf("no class '%s' in %s", r->cls, py->job->rel)
                                            : xasprintf("no method '%s' in class '%s' in %s", r->func, r->cls, py->job->rel));
  for (size_t i = 0; i < quals.n; i++) free(quals.v[i]);
  vec_free(&quals);
  vec_free(&cls);
}

/* ---- the planner of each rule kind ----------------------------------- */

/* One per kind Python takes (rules.h's table of kinds, RULE_IN_PYTHON); a
 * kind without one is warned about at its rule. */
static void (*const PY_PLAN[RULE_NKINDS])(Py *, const Rule *) = {
    [RULE_FUNC] = plan_funcs,
    [RULE_CALLS] = plan_funcs,
    [RULE_LINES] = plan_lines,
    [RULE_CLASS_REPL] = plan_replacement,
    [RULE_METHOD_REPL] = plan_replacement,
};

/* The rules of the targets naming the file, in rule-file order: those of
 * the kinds that make ranges (`ranges`), or those of the kinds that make
 * none. */
static void plan_rules(Py *py, bool ranges) {
  const FileJob *job = py->job;
  for (size_t t = 0; t < job->ntargets; t++)
    for (size_t i = 0; i < job->targets[t]->rules.n; i++) {
      const Rule *r = &job->targets[t]->rules.v[i];
      const RuleKindRow *k = rule_kind(r->kind);
      if ((k->range_kind != NULL) != ranges) continue;
      if (!(k->langs & RULE_IN_PYTHON) || !PY_PLAN[r->kind]) job_rule_elsewhere(py->job, r);
      else PY_PLAN[r->kind](py, r);
    }
}

/* ---- full trace ------------------------------------------------------ */

static const char *const default_excludes[] = {
    /* hot, tiny or called at shutdown: ranges here cost more than they tell */
    "__repr__", "__str__", "__format__", "__hash__", "__eq__", "__ne__", "__lt__", "__le__",
    "__gt__", "__ge__", "__bool__", "__len__", "__iter__", "__next__", "__aiter__", "__anext__",
    "__contains__", "__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__del__",
    "__get__", "__set__", "__delete__", "__set_name__", "__init_subclass__", "__class_getitem__",
    "__instancecheck__", "__subclasscheck__", "__sizeof__", "__reduce__", "__reduce_ex__",
    "__getstate__", "__setstate__", "__copy__", "__deepcopy__", "__enter__", "__exit__",
    "__aenter__", "__aexit__", NULL};

static bool decorated_with(Py *py, Func *f, const char *suffix) {
  if (!is(f->outer, "decorated_definition")) return false;
  bool hit = false;
  TSTreeCursor c = ts_tree_cursor_new(f->outer);
  if (ts_tree_cursor_goto_first_child(&c)) {
    do {
      TSNode n = ts_tree_cursor_current_node(&c);
      if (!is(n, "decorator")) continue;
      char *t = node_text(py->src, n);
      size_t tl = strlen(t), sl = strlen(suffix);
      hit = tl >= sl && !strcmp(t + tl - sl, suffix);
      free(t);
    } while (ts_tree_cursor_goto_next_sibling(&c) && !hit);
  }
  ts_tree_cursor_delete(&c);
  return hit;
}

static const char *excluded(Py *py, Func *f) {
  for (const char *const *p = default_excludes; *p; p++)
    if (!strcmp(f->name, *p)) return "default exclusion (hot or shutdown-time dunder)";
  if (decorated_with(py, f, "property") || decorated_with(py, f, ".setter") ||
      decorated_with(py, f, ".deleter") || decorated_with(py, f, "cached_property"))
    return "default exclusion (property)";
  if (decorated_with(py, f, "overload")) return "default exclusion (@overload stub)";
  const Rules *rl = py->job->rules;
  for (size_t i = 0; i < rl->exclude.n; i++)
    if (name_match(rl->exclude.v[i], f->qual) || name_match(rl->exclude.v[i], f->name)) return "excluded by rule";
  for (size_t t = 0; t < py->job->ntargets; t++)
    for (size_t i = 0; i < py->job->targets[t]->exclude.n; i++) {
      const char *g = py->job->targets[t]->exclude.v[i];
      if (name_match(g, f->qual) || name_match(g, f->name)) return "excluded by rule";
    }
  return NULL;
}

static void plan_full_trace(Py *py) {
  for (size_t i = 0; i < py->funcs.n; i++) {
    Func *f = py->funcs.v[i];
    if (f->has_func_wrap) continue;
    const char *why = pyjit_why(py->jit, f->def);
    if (!why) why = excluded(py, f);
    if (why) {
      job_explain(py->job, row0(f->def) + 1, "skipped %s: %s", f->qual, why);
      continue;
    }
    Nodes kids = {0};
    int first;
    if (!func_body_skip(py, f, &kids, &first) && trivial_body(py, &kids, first)) {
      job_explain(py->job, row0(f->def) + 1, "skipped %s: empty body", f->qual);
      vec_free(&kids);
      continue;
    }
    vec_free(&kids);
    char *name = py->job->module ? xasprintf("%s.%s", py->job->module, f->qual) : xstrdup(f->qual);
    wrap_function(py, f, NULL, name, "full-trace");
    free(name);
  }
}

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
  statements(block, &kids);
  for (size_t i = 0; i < kids.n; i++) {
    TSNode k = kids.v[i];
    if (!is_compound(k)) continue;
    TSNode d = def_of(k);
    if (!ts_node_is_null(d) && (is(d, "function_definition") || is(d, "class_definition"))) {
      py->defedge[row0(k)] |= DEF_FIRST;
      py->defedge[last_row(k)] |= DEF_LAST;
      k = d;
    }
    sub_blocks(k, &subs);
    for (size_t j = 0; j < subs.n; j++) mark_defs(py, subs.v[j]);
    subs.n = 0;
  }
  vec_free(&subs);
  vec_free(&kids);
}

static bool free_blank(Py *py, int r) {
  return !py->strskip[r] && !py->used_blank[r] && row_blank(py, r) && !continued(py, r);
}

static bool comment_row(Py *py, int r) {
  size_t w = ws_len(py, r);
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
  while (a > 0 && row_blank(py, a - 1) && !py->strskip[a - 1]) a--;
  while (b + 1 < py->nrows && row_blank(py, b + 1) && !py->strskip[b + 1]) b++;
  for (int i = a; i <= b; i++) nfree += free_blank(py, i);
  if (nfree > 1) return false;
  int below = b + 1, above = a - 1;
  while (below < py->nrows && (row_blank(py, below) || comment_row(py, below))) below++;
  while (above >= 0 && (row_blank(py, above) || comment_row(py, above))) above--;
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
    if (!ts_node_is_null(owner) && is_docstring(prev) && is(ts_node_parent(prev), "block") &&
        (is(owner, "class_definition") || is(owner, "function_definition"))) {
      TSNode first = prev;
      while (!ts_node_is_null(first = ts_node_prev_named_sibling(first)) && is(first, "comment")) {}
      if (ts_node_is_null(first)) prev = first;
    }
    if (!ts_node_is_null(prev)) return last_row(prev) + 1;
    TSNode parent = ts_node_parent(node);
    while (!ts_node_is_null(parent) && (is(parent, "block") || is_clause(parent))) parent = ts_node_parent(parent);
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
    size_t a = py->rows[r], e = row_end(py, r);
    const char *p = py->src + a;
    size_t n = e - a;
    size_t w = ws_len(py, r);
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
    if (r < n && depth > lv[r] && ts_node_start_byte(x) == py->rows[r] + ws_len(py, r)) lv[r] = depth;
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
    size_t k = ws_len(py, r);
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
    if (is_compound(s) || is(s, "decorated_definition") || is(s, "future_import_statement")) return false;
    if (j > w->i0 && row0(s) != last_row(w->kids.v[j - 1])) return false;
  }
  if (w->i0 > 0 && last_row(w->kids.v[w->i0 - 1]) >= w->r0) return false;
  if ((size_t)w->i1 + 1 < w->kids.n && row0(w->kids.v[w->i1 + 1]) <= w->r1) return false;
  if (ts_node_start_byte(w->kids.v[w->i0]) != py->rows[w->r0] + ws_len(py, w->r0)) return false;
  for (size_t k = i + 1; k < py->wraps.n; k++)
    if (!py->wraps.v[k].dropped && py->wraps.v[k].b0 == w->b0 && py->wraps.v[k].b1 == w->b1) return false;
  return true;
}

/* Rows in [a, b] that hold something (they move when a row is taken
 * beyond them). */
static int filled_rows(Py *py, int a, int b) {
  int n = 0;
  for (int r = a; r <= b; r++) n += !row_blank(py, r);
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
  for (int r = r1 + 1; r < py->nrows && (r <= end || (row_blank(py, r) && !py->strskip[r])); r++) {
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
  if (f->kids.n && is_docstring(f->kids.v[0]) && is(ts_node_named_child(f->kids.v[0], 0), "string")) {
    TSNode d = f->kids.v[0];
    const char *t = py->src + ts_node_start_byte(d);
    size_t k = 0;
    while (t[k] == 'u' || t[k] == 'U') k++;
    int s0 = row0(d), e = last_row(d);
    if ((t[k] == '"' || t[k] == '\'') && t[k + 1] == t[k] && t[k + 2] == t[k] && e > s0) {
      size_t end = row_end(py, e - 1), bs = 0;
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
    size_t end = row_end(py, r), a = py->rows[r];
    while (end > a && (py->src[end - 1] == ' ' || py->src[end - 1] == '\t')) end--;
    if (end <= ts_node_start_byte(params) || py->strskip[r + 1] || (end > a && py->src[end - 1] == '\\')) continue;
    TSNode last = ts_node_descendant_for_byte_range(params, (uint32_t)end - 1, (uint32_t)end);
    if (is(last, "comment") || ts_node_start_byte(last) < ts_node_start_byte(params)) continue;
    edits_add(&py->job->edits, py->bom + row_end(py, r), py->bom + py->rows[r + 1] + ws_len(py, r + 1), " ", 0);
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
  if (f->kids.n > 1 && is_docstring(f->kids.v[0])) {
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

static void layout(Py *py) {
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
    if (!cover[r] || py->strskip[r] || row_blank(py, r)) continue;
    Buf b = {0};
    for (int k = 0; k < cover[r]; k++) buf_puts(&b, py->unit);
    /* after any `with` line inserted at the same place (a row with no
     * indentation starts where its with line goes) */
    edits_add(&job->edits, py->bom + py->rows[r] + ws_len(py, r), py->bom + py->rows[r] + ws_len(py, r), b.s, 1000);
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
      buf_add(&line, py->src + py->rows[w->r0], ws_len(py, w->r0));
      for (int k = 0; k < w->depth; k++) buf_puts(&line, py->unit);
      buf_printf(&line, "%s%s", w->with, py->nl);
      Func *fn = w->fn ? w->fn : func_at(py, w->b0);
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
          edits_addf(&job->edits, py->bom + py->rows[c], py->bom + py->rows[c] + ws_len(py, c), 0, "%.*s  ",
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
    buf_add(&base, py->src + py->rows[w->hrow], ws_len(py, w->hrow));
    for (int k = 0; k <= cover[w->hrow]; k++) buf_puts(&base, py->unit);
    if (w->k == 0) {
      size_t s0 = ts_node_start_byte(w->kids.v[0]);
      edits_addf(&job->edits, py->bom + w->colon, py->bom + s0, 0, "%s%s", py->nl, base.s);
      if (w->i0 > 0) {
        size_t pe = ts_node_end_byte(w->kids.v[w->i0 - 1]);
        edits_addf(&job->edits, py->bom + pe, py->bom + ts_node_start_byte(first), 0, "%s%s", py->nl, base.s);
      }
      if (!ts_node_is_null(w->stmt_outer)) {
        int b = blank_above(py, row0(w->stmt_outer), blank_floor(py, w->fn ? w->fn : func_at(py, w->b0)), w->fn != NULL);
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
static void prelude(Py *py) {
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
    char *s = alias_import(py->alias_defs.v[i]);
    buf_printf(&p, "%s%s", p.len ? "; " : "", s);
    free(s);
  }
  Nodes kids = {0};
  statements(py->root, &kids);
  TSNode after = {0};
  bool have_after = false;
  size_t i = 0;
  if (kids.n && is_docstring(kids.v[0])) after = kids.v[i++], have_after = true;
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
  } else if (b >= 0 && row_blank(py, b)) {
    py->used_blank[b] = 1;
    edits_add(&job->edits, py->bom + py->rows[b], py->bom + row_end(py, b), p.s, -1);
  } else if (b >= 0) {
    py->used_blank[b] = 1;
    edits_addf(&job->edits, py->bom + py->rows[b], py->bom + py->rows[b], -1, "%s  ", p.s);
  } else if (kids.n && !is_compound(kids.v[0]) && !first_wrapped) {
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
static void explain_moves(Py *py) {
  FileJob *job = py->job;
  if (!job->explain || !job->edits.v.n) return;
  Buf out = {0};
  LineMap map = {0};
  if (edits_apply(&job->edits, job->src, job->len, &out, &map) == 0) {
    for (size_t i = 0; i < py->funcs.n; i++) {
      const Func *f = py->funcs.v[i];
      int dl = row0(f->def) + 1, dm = linemap_get(&map, dl), first = 0, nmoved = 0;
      size_t k0 = f->kids.n && is_docstring(f->kids.v[0]); /* not a statement that runs */
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
  if (ts_node_is_null(st) || ts_node_is_error(st) || ts_node_is_missing(st) || is_compound(st) ||
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
    if (descend && ts_tree_cursor_goto_first_child(&c)) continue;
    bool more = false;
    while (!(more = ts_tree_cursor_goto_next_sibling(&c)))
      if (!ts_tree_cursor_goto_parent(&c)) break;
    if (!more) break;
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
  index_rows(&py);
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
  mark_strings(&py, py.root);
  pick_unit(&py);
  py.jit = pyjit_scan(py.src, py.root, job->origin);
  collect(&py, py.root, "", NULL, NULL);

  plan_rules(&py, true); /* the kinds that make ranges */
  if (job->full_trace) plan_full_trace(&py);
  plan_rules(&py, false); /* then those that replace code: a replacement voids the ranges inside it */
  layout(&py);
  prelude(&py);
  if (nerr && !output_keeps_errors(&py, nerr)) {
    edits_free(&job->edits);
    job->unparsable = true;
    report_syntax_error(&py);
    rc = -1;
    goto done;
  }
  explain_moves(&py);
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
    if (contains_outside_nested(n, *p)) return true;
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
  return is_docstring(s);
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
  return is_compound(s) || does_work(s);
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
    statements(block, &kids);
    i0 = i1 = -1;
    for (size_t i = 0; i < kids.n; i++)
      if (last_row(kids.v[i]) >= s && row0(kids.v[i]) <= e) {
        if (i0 < 0) i0 = (int)i;
        i1 = (int)i;
      }
    if (i0 < 0) goto done;
    TSNode only = kids.v[i0];
    if (i0 != i1 || !is_compound(only) || s <= row0(def_of(only))) break;
    TSNode d = def_of(only);
    subs.n = 0;
    if (is(d, "function_definition") || is(d, "class_definition")) vec_push(&subs, child_by_field(d, "body"));
    else sub_blocks(only, &subs);
    int hit = -1;
    for (size_t k = 0; k < subs.n; k++)
      if (row0(subs.v[k]) <= s && last_row(subs.v[k]) >= e) hit = (int)k;
    if (hit < 0) break;
    block = subs.v[hit];
  }
  /* one compound statement: its blocks' statements; several: each one */
  Nodes pick = {0};
  if (i0 == i1 && is_compound(kids.v[i0])) {
    TSNode d = def_of(kids.v[i0]);
    subs.n = 0;
    if (is(d, "function_definition") || is(d, "class_definition")) vec_push(&subs, child_by_field(d, "body"));
    else sub_blocks(kids.v[i0], &subs);
    Nodes inner = {0};
    for (size_t k = 0; k < subs.n; k++) {
      statements(subs.v[k], &inner);
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
