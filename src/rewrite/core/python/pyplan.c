/* pyplan: the Python rewriter's planners (pyrewrite.h). Contexts (the
 * `with` text a range opens with, context aliases) and, per rule kind
 * (PY_PLAN, one planner a row of rules.h's table of kinds), the wraps the
 * rule asks for, with its hit or the reason it matched nothing
 * (job_rule_hit, job_rule_miss); the full trace; replacements (byte edits
 * of their own, voiding the wraps inside what they replace). Wraps are
 * only planned here: pylayout.c turns them into edits. */
#include "pyrewrite.h"

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

char *py_alias_import(const char *def) {
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

/* ---- planning wraps -------------------------------------------------- */

static bool in_span_ctx(const Func *f) { return f && (f->is_async || f->is_gen); }

/* The enclosing function of a byte offset (innermost). */
Func *py_func_at(Py *py, size_t off) {
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
  Func *ctx_fn = fn_whole ? fn_whole : py_func_at(py, ts_node_start_byte(a));
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
      while (!ts_node_is_null(owner) && py_is_clause(owner)) owner = ts_node_parent(owner);
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
  if (kids->n && py_is_docstring(kids->v[0])) *first = 1;
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
  py_statements(block, &kids);
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
    } else if (py_is_compound(s) && !is(s, "function_definition") && !is(s, "class_definition") &&
               !is(s, "decorated_definition")) {
      Nodes subs = {0};
      py_sub_blocks(s, &subs);
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
    py_statements(block, &kids);
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
    if (i0 == i1 && py_is_compound(only) && s > row0(py_def_of(only))) {
      TSNode d = py_def_of(only);
      Nodes subs = {0};
      if (is(d, "function_definition") || is(d, "class_definition")) vec_push(&subs, child_by_field(d, "body"));
      else py_sub_blocks(only, &subs);
      int hit = -1, nhit = 0;
      for (size_t k = 0; k < subs.n; k++)
        if (!ts_node_is_null(subs.v[k]) && last_row(subs.v[k]) >= s && row0(subs.v[k]) <= e) hit = (int)k, nhit++;
      if (nhit == 1 && row0(subs.v[hit]) <= s && last_row(subs.v[hit]) >= e) {
        TSNode nb = subs.v[hit];
        vec_free(&subs);
        /* a one-line block on the header row: the header is in range */
        Nodes inner = {0};
        py_statements(nb, &inner);
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
    if (i0 == 0 && py_is_docstring(kids.v[0])) {
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
  char *have = trimmed(py->src + py->rows[row], py_row_end(py, row) - py->rows[row]);
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
  py_statements(block, &kids);
  for (size_t i = 0; i < kids.n; i++) {
    TSNode d = py_def_of(kids.v[i]);
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
    TSNode outer = cls.v[i], d = py_def_of(outer);
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
void py_plan_rules(Py *py, bool ranges) {
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
  /* the qualified name, the plain name, and the range's own name (the
   * module's qualified name: what `ncrewrite prune` writes) */
  char *full = py->job->module ? xasprintf("%s.%s", py->job->module, f->qual) : NULL;
  const char *why = NULL;
  for (size_t i = 0; i < rl->exclude.n && !why; i++)
    if (name_match(rl->exclude.v[i], f->qual) || name_match(rl->exclude.v[i], f->name) ||
        (full && name_match(rl->exclude.v[i], full)))
      why = "excluded by rule";
  for (size_t t = 0; t < py->job->ntargets && !why; t++)
    for (size_t i = 0; i < py->job->targets[t]->exclude.n && !why; i++) {
      const char *g = py->job->targets[t]->exclude.v[i];
      if (name_match(g, f->qual) || name_match(g, f->name) || (full && name_match(g, full))) why = "excluded by rule";
    }
  free(full);
  return why;
}

void py_plan_full_trace(Py *py) {
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
