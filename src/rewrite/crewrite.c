/* crewrite: C, C++ and CUDA instrumentation — matching rules, planning
 * ranges, emitting edits (functions are found by cfuncs.c, statement lists
 * and the safety checks for new blocks live in cstmts.c).
 *
 * Parse with the official tree-sitter-c, -cpp or -cuda grammar, find host
 * functions with bodies (by name, qualified C++ name or glob), call sites
 * (including kernel launches `kern<<<...>>>(...)`) and line ranges, and
 * insert the scope macro from ncrt.h:
 *   - a whole function: ` NCRT_RANGE("name");` right after the body's `{`;
 *   - statements (a line range or a call site): `{ NCRT_RANGE("name"); `
 *     before the first and ` }` after the last, on the same lines.
 * The macro declares an object whose destructor (C++) or cleanup function (C)
 * closes the range, so it closes on every path out: return, break,
 * continue, goto, exceptions. No edit adds a line except the include at the
 * top, which is followed by `#line 1 "<original path>"`, so compiler
 * messages, assert() and debuggers point at the original file and lines;
 * those two lines are also the marker of an instrumented file.
 *
 * What is never instrumented, and why, is decided in cfuncs.c and listed
 * by --explain. A range that would change the program's meaning (hide a
 * declaration, let a goto jump into it, split a preprocessor block,
 * partly overlap another) is refused with an error at the rule. */
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "crewrite.h"

const TSLanguage *tree_sitter_c(void);
const TSLanguage *tree_sitter_cpp(void);
const TSLanguage *tree_sitter_cuda(void);

#define NC_C_MARK "#include <ncrt.h>"

static void rule_hit(Rule *r) { __atomic_fetch_add(&r->matched, 1, __ATOMIC_RELAXED); }

static void rule_miss(Rule *r, char *why) {
  char *expected = NULL;
  if (!__atomic_compare_exchange_n(&r->miss, &expected, why, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) free(why);
}

/* ncrewrite's own first lines: the include, then `#line 1 "..."`. A file
 * that includes <ncrt.h> itself (to call ncrt_step()) is not ours. */
static bool already_instrumented(const char *s, size_t n) {
  size_t k = strlen(NC_C_MARK);
  if (n < k || memcmp(s, NC_C_MARK, k)) return false;
  s += k, n -= k;
  if (n && *s == '\r') s++, n--;
  return n >= 10 && !memcmp(s, "\n#line 1 \"", 10);
}

static bool name_match(const char *pat, const char *name) { return !strcmp(pat, name) || glob_match(pat, name); }

/* A name without template arguments: `f<int>` -> `f`, `A<T>::g` -> `A::g`
 * (operator< and friends keep theirs). Malloc'ed. */
static char *no_targs(const char *s) {
  char *out = xstrdup(s), *w = out;
  int depth = 0;
  for (const char *p = s; *p; p++) {
    if (!strncmp(p, "operator", 8)) {
      strcpy(w, p);
      return out;
    }
    if (*p == '<') depth++;
    else if (*p == '>' && depth) depth--;
    else if (!depth) *w++ = *p;
  }
  *w = 0;
  return out;
}

static bool func_matches(const char *pat, const CFunc *f) {
  char *qual = no_targs(f->qual), *name = no_targs(f->name);
  bool m;
  if (strstr(pat, "::")) {
    m = name_match(pat, f->qual) || name_match(pat, f->name) || name_match(pat, qual) || name_match(pat, name);
  } else {
    const char *last = f->qual, *last2 = qual;
    for (const char *p = f->qual; (p = strstr(p, "::")); p += 2) last = p + 2;
    for (const char *p = qual; (p = strstr(p, "::")); p += 2) last2 = p + 2;
    m = name_match(pat, last) || name_match(pat, f->name) || name_match(pat, last2) || name_match(pat, name);
  }
  free(qual), free(name);
  return m;
}

/* ---- rules ----------------------------------------------------------- */

static const char *range_name(const Rule *r, const char *dflt) {
  if (r && r->ctx.values.n) return r->ctx.values.v[0].value;
  return dflt;
}

/* Explain a skipped function once. A prototype is worth a line only when
 * the file has no definition of the same name. */
static void explain_skip(CFile *c, CFunc *f) {
  if (f->explained) return;
  f->explained = true;
  if (f->proto) {
    char *q = no_targs(f->qual);
    bool defined = false;
    for (size_t i = 0; i < c->funcs.n && !defined; i++)
      if (!c->funcs.v[i].proto) {
        char *q2 = no_targs(c->funcs.v[i].qual);
        defined = !strcmp(q, q2);
        free(q2);
      }
    free(q);
    if (defined) return;
  }
  job_explain(c->job, row0(f->def) + 1, "skipped %s: %s", f->qual, f->skip);
}

/* The macro that produces `name`, if a macro call's arguments or a #define
 * body name it. */
static const char *macro_making(CFile *c, const char *name) {
  if (has_glob_chars(name)) return NULL;
  const char *last = name;
  for (const char *p = name; (p = strstr(p, "::")); p += 2) last = p + 2;
  for (size_t i = 0; i < c->macros.n; i++) {
    TSNode n = c->macros.v[i].node;
    if (c_word_in(c->src + ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n), last))
      return c->macros.v[i].macro;
  }
  return NULL;
}

/* Returns false if f cannot be instrumented; a function already wrapped
 * by an earlier rule keeps that one range. */
static bool wrap_function(CFile *c, CFunc *f, Rule *r, const char *name) {
  if (f->skip) {
    explain_skip(c, f);
    return false;
  }
  if (f->wrapped) {
    if (r) job_explain(c->job, row0(f->def) + 1, "%s: already has a function range; no second one", f->qual);
    return true;
  }
  f->wrapped = true;
  CWrap w = {ts_node_start_byte(f->body), ts_node_start_byte(f->body) + 1, row0(f->body), row0(f->body), r,
             xstrdup(name), r ? "function" : "full-trace", false};
  vec_push(&c->wraps, w);
  job_explain(c->job, row0(f->def) + 1, "%s: %s range '%s'", f->qual, w.kind, name);
  return true;
}

static bool call_matches(CFile *c, TSNode call, const char *pat) {
  TSNode fn = ts_node_child_by_field_name(call, "function", 8);
  if (ts_node_is_null(fn)) return false;
  bool launch = false;
  TSTreeCursor cur = ts_tree_cursor_new(call);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do launch |= is(ts_tree_cursor_current_node(&cur), "kernel_call_syntax");
    while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
  size_t pl = strlen(pat);
  bool want_launch = pl >= 6 && !strcmp(pat + pl - 6, "<<<>>>");
  if (want_launch && !launch) return false;
  char *p = xstrndup(pat, want_launch ? pl - 6 : pl);
  /* the callee without blanks and template arguments: `ns::kern<float>`
   * is matched as `ns::kern` */
  char *t = c_text(c, fn), *w = t;
  int depth = 0;
  for (char *q = t; *q; q++) {
    if (*q == '<') depth++;
    else if (*q == '>' && depth) depth--;
    else if (!depth && *q != ' ' && *q != '\t' && *q != '\n' && *q != '\r') *w++ = *q;
  }
  *w = 0;
  bool ok;
  if (!*p) ok = true; /* "<<<>>>": every launch */
  else if (strchr(p, '.') || strstr(p, "::") || strstr(p, "->")) ok = name_match(p, t);
  else {
    const char *last = t;
    for (const char *q = t; *q; q++)
      if (*q == '.' || *q == ':' || *q == '>') last = q + 1;
    ok = name_match(p, last);
  }
  free(p), free(t);
  return ok;
}

static bool has_call(CFile *c, TSNode n, const char *pat) {
  if (is(n, "lambda_expression") || is(n, "compound_statement")) return false;
  if (is(n, "call_expression") && call_matches(c, n, pat)) return true;
  bool found = false;
  TSTreeCursor cur = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do found = has_call(c, ts_tree_cursor_current_node(&cur), pat);
    while (!found && ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
  return found;
}

/* Does the head of a compound statement (the condition of if, while, do
 * and switch; the three clauses of for; the range of a range-for) call the
 * pattern? Then the whole statement is the call site. */
static bool head_calls(CFile *c, TSNode s, const char *pat) {
  static const char *const fields[] = {"condition", "initializer", "update", "right", NULL};
  if (!is(s, "if_statement") && !is(s, "while_statement") && !is(s, "do_statement") && !is(s, "switch_statement") &&
      !is(s, "for_statement") && !is(s, "for_range_loop"))
    return false;
  for (int i = 0; fields[i]; i++) {
    TSNode h = ts_node_child_by_field_name(s, fields[i], (uint32_t)strlen(fields[i]));
    if (!ts_node_is_null(h) && has_call(c, h, pat)) return true;
  }
  return false;
}

static bool has_word(CFile *c, TSNode n, const char *w) {
  return c_word_in(c->src + ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n), w);
}

/* A declaration that calls the pattern, whose names later code uses, so
 * that a block around it is refused: put the range around each initializer
 * that calls it instead, as a GNU statement expression
 * `x = __extension__ ({ NCRT_RANGE("n"); f(); })` (GCC, Clang, nvcc; C and
 * C++), which closes the range once the value is computed. Only where
 * that keeps the meaning: a plain `=` initializer (not a brace or
 * parenthesized list) of a variable or pointer (not a reference, whose
 * binding would change, nor decltype(auto)), not constexpr or constinit.
 * Returns false if not so. */
static bool wrap_initializers(CFile *c, TSNode decl, Rule *r, const char *name) {
  TSNode type = ts_node_child_by_field_name(decl, "type", 4);
  if ((!ts_node_is_null(type) && has_word(c, type, "decltype")) || has_word(c, decl, "constexpr") ||
      has_word(c, decl, "constinit"))
    return false; /* a constant initializer cannot be a statement expression */
  CWrap w[16];
  int n = 0;
  for (uint32_t i = 0; i < ts_node_child_count(decl); i++) {
    const char *f = ts_node_field_name_for_child(decl, i);
    TSNode d = ts_node_child(decl, i);
    if (!f || strcmp(f, "declarator")) continue;
    if (!is(d, "init_declarator")) {
      if (has_call(c, d, r->call)) return false;
      continue;
    }
    TSNode v = ts_node_child_by_field_name(d, "value", 5), x = ts_node_child_by_field_name(d, "declarator", 10);
    if (ts_node_is_null(v) || !has_call(c, v, r->call)) continue;
    if (is(v, "initializer_list") || is(v, "argument_list") || n == 16) return false;
    while (!ts_node_is_null(x) && is(x, "pointer_declarator")) x = ts_node_child_by_field_name(x, "declarator", 10);
    if (ts_node_is_null(x) || !is(x, "identifier")) return false;
    w[n++] = (CWrap){ts_node_start_byte(v), ts_node_end_byte(v), row0(v), row1(v), r, NULL, "calls", true};
  }
  for (int i = 0; i < n; i++) {
    w[i].name = xstrdup(name);
    vec_push(&c->wraps, w[i]);
  }
  return n > 0;
}

/* Every statement in `block` (nested blocks included) that calls the
 * pattern: expression statements, declarations, returns, and compound
 * statements whose head calls it. */
static int calls_in(CFile *c, TSNode block, Rule *r, const char *fname) {
  CNodes kids = {0};
  c_stmts_list(block, &kids);
  int hits = 0;
  for (size_t i = 0; i < kids.n; i++) {
    TSNode s = kids.v[i];
    bool simple = is(s, "expression_statement") || is(s, "declaration") || is(s, "return_statement");
    if (simple ? has_call(c, s, r->call) : head_calls(c, s, r->call)) {
      char *dflt = xasprintf("%s:%s", fname, r->call);
      char *hidden = is(s, "declaration") ? c_stmts_hidden(c, &kids, (int)i, (int)i) : NULL;
      if (hidden && wrap_initializers(c, s, r, range_name(r, dflt))) {
        hits++;
        job_explain(c->job, row0(s) + 1, "call to '%s' in %s: range '%s' around the initializer (later code uses '%s')",
                    r->call, fname, range_name(r, dflt), hidden);
      } else if (c_stmts_wrap(c, &kids, (int)i, (int)i, r, range_name(r, dflt), "calls")) {
        hits++;
        job_explain(c->job, row0(s) + 1, "call to '%s' in %s: range '%s'", r->call, fname, range_name(r, dflt));
      }
      free(dflt);
      free(hidden);
    }
    if (!simple) {
      CNodes subs = {0};
      c_stmts_sub_blocks(s, &subs);
      for (size_t k = 0; k < subs.n; k++) hits += calls_in(c, subs.v[k], r, fname);
      vec_free(&subs);
    }
  }
  vec_free(&kids);
  return hits;
}

/* Lines [s, e] (0-based) snapped to whole statements of one list. */
static bool snap(CFile *c, TSNode block, int s, int e, Rule *r, const char *name) {
  CNodes kids = {0};
  for (;;) {
    c_stmts_list(block, &kids);
    int i0 = -1, i1 = -1;
    for (size_t i = 0; i < kids.n; i++)
      if (row1(kids.v[i]) >= s && row0(kids.v[i]) <= e && !is(kids.v[i], "comment")) {
        if (i0 < 0) i0 = (int)i;
        i1 = (int)i;
      }
    if (i0 < 0) {
      vec_free(&kids);
      return false;
    }
    if (i0 == i1 && s > row0(kids.v[i0])) {
      CNodes subs = {0};
      c_stmts_sub_blocks(kids.v[i0], &subs);
      int hit = -1, nhit = 0;
      for (size_t k = 0; k < subs.n; k++)
        if (row1(subs.v[k]) >= s && row0(subs.v[k]) <= e) hit = (int)k, nhit++;
      if (nhit == 1 && row0(subs.v[hit]) <= s && row1(subs.v[hit]) >= e) {
        block = subs.v[hit];
        vec_free(&subs);
        continue;
      }
      vec_free(&subs);
    }
    bool ok = c_stmts_wrap(c, &kids, i0, i1, r, name, "lines");
    if (ok && (row0(kids.v[i0]) != s || row1(kids.v[i1]) != e))
      job_explain(c->job, s + 1, "lines %d-%d snapped to whole statements %d-%d: range '%s'", s + 1, e + 1,
                  row0(kids.v[i0]) + 1, row1(kids.v[i1]) + 1, name);
    else if (ok)
      job_explain(c->job, s + 1, "lines %d-%d: range '%s'", s + 1, e + 1, name);
    vec_free(&kids);
    return ok;
  }
}

static void plan_rule(CFile *c, Rule *r) {
  int errs = c->job->diags.errors;
  if (r->kind == RULE_FUNC || r->kind == RULE_CALLS) {
    int fns = 0, hits = 0, protos = 0;
    for (size_t i = 0; i < c->funcs.n; i++) {
      CFunc *f = &c->funcs.v[i];
      char *pat = r->cls ? xasprintf("%s::%s", r->cls, r->func ? r->func : "*") : xstrdup(r->func ? r->func : "*");
      bool m = func_matches(pat, f);
      free(pat);
      if (!m) continue;
      fns++;
      protos += f->proto;
      if (f->skip) {
        if (r->func) explain_skip(c, f);
        continue;
      }
      if (r->kind == RULE_FUNC) {
        hits += wrap_function(c, f, r, range_name(r, f->qual));
      } else {
        c->fbody = f->body;
        hits += calls_in(c, f->body, r, f->qual);
      }
    }
    if (hits) rule_hit(r);
    else if (c->job->diags.errors > errs) {
    } else if ((!fns || fns == protos) && r->func && macro_making(c, r->func))
      rule_miss(r, xasprintf("'%s' in %s is produced by the macro %s; code produced by macros is never "
                             "instrumented", r->func, c->job->rel, macro_making(c, r->func)));
    else if (!fns)
      rule_miss(r, xasprintf("no function '%s' in %s", r->func ? r->func : "*", c->job->rel));
    else if (fns == protos)
      rule_miss(r, xasprintf("'%s' is only declared in %s (no body)", r->func ? r->func : "*", c->job->rel));
    else if (r->kind == RULE_CALLS)
      rule_miss(r, xasprintf("no statement calling '%s' in %s", r->call, c->job->rel));
    else
      rule_miss(r, xasprintf("'%s' in %s cannot be instrumented (see --explain)", r->func, c->job->rel));
    return;
  }
  if (r->kind != RULE_LINES) {
    ruledoc_diag((RuleDoc *)&c->job->rules->doc, &c->job->diags, DIAG_WARNING, r->at,
                 "replacements apply to Python modules only; ignored for %s", c->job->rel);
    return;
  }
  int s = r->start_line - 1, e = r->end_line - 1;
  int nrows = row1(c->root) + 1;
  if (s >= nrows) {
    rule_miss(r, xasprintf("lines %d-%d are outside %s (%d lines)", s + 1, e + 1, c->job->rel, nrows));
    return;
  }
  CFunc *fn = NULL;
  for (size_t i = 0; i < c->funcs.n; i++) {
    CFunc *f = &c->funcs.v[i];
    if (f->skip || row0(f->body) > s || row1(f->body) < e) continue;
    if (r->func && !func_matches(r->func, f)) continue;
    fn = f;
  }
  if (!fn) {
    rule_miss(r, xasprintf("lines %d-%d are not inside the body of %s%s%s in %s", s + 1, e + 1,
                           r->func ? "function '" : "a host function", r->func ? r->func : "",
                           r->func ? "'" : "", c->job->rel));
    return;
  }
  char *dflt = s == e ? xasprintf("%s:L%d", fn->qual, s + 1) : xasprintf("%s:L%d-%d", fn->qual, s + 1, e + 1);
  c->fbody = fn->body;
  if (snap(c, fn->body, s, e, r, range_name(r, dflt))) rule_hit(r);
  else if (c->job->diags.errors == errs)
    rule_miss(r, xasprintf("no statement on lines %d-%d of %s", s + 1, e + 1, c->job->rel));
  free(dflt);
}

/* ---- emission -------------------------------------------------------- */

static void c_literal(Buf *b, const char *s) {
  buf_putc(b, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') buf_printf(b, "\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f || *p == '?') buf_printf(b, "\\%03o", *p); /* '?': no trigraphs */
    else buf_putc(b, (char)*p);
  }
  buf_putc(b, '"');
}

/* Colors: "#RRGGBB", "0xAARRGGBB" or "0xRRGGBB" (opaque). */
static unsigned long parse_color(const char *s) {
  if (!s) return 0;
  const char *h = s[0] == '#' ? s + 1 : (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? s + 2 : s;
  unsigned long v = strtoul(h, NULL, 16);
  if (strlen(h) <= 6) v |= 0xff000000ul;
  return v;
}

/* The NVTX attributes of a range: those of the target its rule belongs to;
 * for full-trace ranges, of the first target naming the file that sets
 * them. */
static const Target *nvtx_target(CFile *c, const Rule *r) {
  const Target *any = NULL;
  for (size_t i = 0; i < c->job->ntargets; i++) {
    const Target *t = c->job->targets[i];
    if (r && r >= t->rules.v && r < t->rules.v + t->rules.n) return t;
    if (!any && (t->domain || t->category || t->color)) any = t;
  }
  return r ? NULL : any;
}

static char *macro(CFile *c, const Rule *r, const char *name) {
  Buf b = {0};
  const Target *t = nvtx_target(c, r);
  if (t && (t->domain || t->category || t->color)) {
    buf_puts(&b, "NCRT_RANGE_EX(");
    c_literal(&b, t->domain ? t->domain : "ncrt");
    buf_puts(&b, ", ");
    c_literal(&b, name);
    buf_printf(&b, ", %lu, 0x%08lxu)", t->category ? strtoul(t->category, NULL, 10) : 0ul, parse_color(t->color));
  } else {
    buf_puts(&b, "NCRT_RANGE(");
    c_literal(&b, name);
    buf_putc(&b, ')');
  }
  return buf_steal(&b);
}

static int cmp_wrap(const void *pa, const void *pb) {
  const CWrap *a = pa, *b = pb;
  if (a->b0 != b->b0) return a->b0 < b->b0 ? -1 : 1;
  return a->b1 > b->b1 ? -1 : a->b1 < b->b1;
}

static void emit(CFile *c) {
  FileJob *job = c->job;
  if (c->wraps.n) qsort(c->wraps.v, c->wraps.n, sizeof *c->wraps.v, cmp_wrap);
  size_t n = 0;
  for (size_t i = 0; i < c->wraps.n; i++) {
    CWrap *w = &c->wraps.v[i];
    bool bad = false;
    for (size_t j = 0; j < i && !bad; j++) {
      CWrap *o = &c->wraps.v[j];
      if (o->b1 > w->b0 && o->b1 < w->b1 && o->b0 < w->b0) {
        bad = true;
        const Rule *r = w->rule ? w->rule : o->rule;
        if (r)
          ruledoc_diag((RuleDoc *)&job->rules->doc, &job->diags, DIAG_ERROR, r->at,
                       "range '%s' (lines %d-%d of %s) partly overlaps range '%s' (lines %d-%d); ranges must nest",
                       w->name, w->r0 + 1, w->r1 + 1, job->rel, o->name, o->r0 + 1, o->r1 + 1);
      }
    }
    if (bad) {
      free(w->name);
      continue;
    }
    c->wraps.v[n++] = *w;
  }
  c->wraps.n = n;
  if (!n) return;
  int order = 0;
  for (size_t i = 0; i < n; i++) {
    CWrap *w = &c->wraps.v[i];
    char *m = macro(c, w->rule, w->name);
    if (!strcmp(w->kind, "function") || !strcmp(w->kind, "full-trace")) {
      /* right after the body's '{' */
      edits_addf(&job->edits, c->bom + w->b1, c->bom + w->b1, order++, " %s;", m);
    } else if (w->expr) {
      edits_addf(&job->edits, c->bom + w->b0, c->bom + w->b0, order++, "__extension__ ({ %s; ", m);
      edits_add(&job->edits, c->bom + w->b1, c->bom + w->b1, "; })", -order);
    } else {
      edits_addf(&job->edits, c->bom + w->b0, c->bom + w->b0, order++, "{ %s; ", m);
      edits_add(&job->edits, c->bom + w->b1, c->bom + w->b1, " }", -order);
    }
    free(m);
    RangeRec rec = {xstrdup(w->name), w->kind, w->r0 + 1, w->r1 + 1, w->rule};
    if (!strcmp(w->kind, "function") || !strcmp(w->kind, "full-trace")) {
      for (size_t k = 0; k < c->funcs.n; k++)
        if (!c->funcs.v[k].proto && ts_node_start_byte(c->funcs.v[k].body) == w->b0) rec.line1 = row1(c->funcs.v[k].body) + 1;
    }
    vec_push(&job->ranges, rec);
  }
  /* the include, then #line so every original line keeps its number and the
   * original file name */
  Buf inc = {0};
  buf_printf(&inc, NC_C_MARK "%s#line 1 ", c->nl);
  c_literal(&inc, job->origin ? job->origin : job->rel);
  buf_puts(&inc, c->nl);
  edits_add(&job->edits, c->bom, c->bom, inc.s, -1000000);
  buf_free(&inc);
}

int c_rewrite(FileJob *job) {
  CFile c = {0};
  c.job = job;
  c.bom = job->len >= 3 && !memcmp(job->src, "\xef\xbb\xbf", 3) ? 3 : 0;
  c.src = job->src + c.bom;
  c.len = job->len - c.bom;
  if (already_instrumented(c.src, c.len)) {
    job->already = true;
    diag_at(&job->diags, DIAG_NOTE, job->rel, NULL, 0, 0, 0, "already instrumented by ncrewrite; copied unchanged");
    return -1;
  }
  if (job_too_big(job)) return -1;
  const char *nlp = memchr(c.src, '\n', c.len);
  c.nl = nlp && nlp > c.src && nlp[-1] == '\r' ? "\r\n" : "\n";
  if (job->parser && *job->parser) c.parser = *job->parser;
  else c.parser = ts_parser_new();
  c.lang = job->lang;
  size_t rl = strlen(job->rel);
  if (c.lang == LANG_C && rl > 2 && !strcmp(job->rel + rl - 2, ".h")) {
    const char *m = c_cpp_marker(c.src, c.len);
    if (m) {
      c.lang = LANG_CPP;
      job_explain(job, 1, "read as C++: a .h file that uses '%s'", m);
    }
  }
  ts_parser_set_language(c.parser, c.lang == LANG_C ? tree_sitter_c()
                                   : c.lang == LANG_CUDA ? tree_sitter_cuda()
                                                         : tree_sitter_cpp());
  c.tree = ts_parser_parse_string(c.parser, NULL, c.src, (uint32_t)c.len);
  c.root = ts_tree_root_node(c.tree);
  int rc = 0;
  c_funcs_collect(&c, c.root, "");
  if (ts_node_has_error(c.root)) {
    /* C parses with errors around unexpanded macros more often than Python;
     * go on only for functions whose own subtree is clean */
    for (size_t i = 0; i < c.funcs.n; i++)
      if (!c.funcs.v[i].skip && ts_node_has_error(c.funcs.v[i].def))
        c.funcs.v[i].skip = "its text does not parse (macros tree-sitter cannot expand?)";
  }
  for (size_t t = 0; t < job->ntargets; t++)
    for (size_t i = 0; i < job->targets[t]->rules.n; i++) plan_rule(&c, &job->targets[t]->rules.v[i]);
  if (job->full_trace) {
    for (size_t i = 0; i < c.macros.n; i++) {
      TSNode n = c.macros.v[i].node;
      job_explain(job, row0(n) + 1, is(n, "expression_statement")
                  ? "skipped %s(...): code produced by macros is never instrumented"
                  : "skipped #define %s: code inside macro definitions is never instrumented", c.macros.v[i].macro);
    }
    for (size_t i = 0; i < c.funcs.n; i++) {
      CFunc *f = &c.funcs.v[i];
      bool ex = false;
      if (f->proto) continue;
      for (size_t k = 0; k < job->rules->exclude.n; k++) ex |= func_matches(job->rules->exclude.v[k], f);
      for (size_t t = 0; t < job->ntargets; t++)
        for (size_t k = 0; k < job->targets[t]->exclude.n; k++) ex |= func_matches(job->targets[t]->exclude.v[k], f);
      if (ex) job_explain(job, row0(f->def) + 1, "skipped %s: excluded by rule", f->qual);
      else wrap_function(&c, f, NULL, f->qual);
    }
  }
  emit(&c);
  for (size_t i = 0; i < c.wraps.n; i++) free(c.wraps.v[i].name);
  vec_free(&c.wraps);
  for (size_t i = 0; i < c.funcs.n; i++) free(c.funcs.v[i].name), free(c.funcs.v[i].qual), free(c.funcs.v[i].why);
  for (size_t i = 0; i < c.risky.n; i++) free(c.risky.v[i]);
  vec_free(&c.risky);
  vec_free(&c.funcs);
  for (size_t i = 0; i < c.macros.n; i++) free(c.macros.v[i].macro);
  vec_free(&c.macros);
  ts_tree_delete(c.tree);
  if (job->parser) *job->parser = c.parser;
  else ts_parser_delete(c.parser);
  return rc;
}


/* ---- the next level inside a range (ncrewrite drill) ------------------ */

static bool c_contains(TSNode n, const char *type) {
  if (is(n, type)) return true;
  for (uint32_t i = 0; i < ts_node_named_child_count(n); i++)
    if (c_contains(ts_node_named_child(n, i), type)) return true;
  return false;
}

/* Worth a range of its own: a statement with blocks under it, or one that
 * calls something. Declarations are left out: a block around one would
 * hide its name from the code after it (the rewriter refuses that). */
static bool c_worth_a_range(TSNode s) {
  if (is(s, "declaration") || is(s, "labeled_statement") || is(s, "case_statement")) return false;
  CNodes subs = {0};
  c_stmts_sub_blocks(s, &subs);
  bool compound = subs.n > 0;
  vec_free(&subs);
  return compound || c_contains(s, "call_expression");
}

int c_inner_statements(const char *src, size_t len, Lang lang, int line0, int line1, InnerStmts *out) {
  TSParser *parser = ts_parser_new();
  ts_parser_set_language(parser, lang == LANG_C      ? tree_sitter_c()
                                 : lang == LANG_CUDA ? tree_sitter_cuda()
                                                     : tree_sitter_cpp());
  TSTree *tree = ts_parser_parse_string(parser, NULL, src, (uint32_t)len);
  int s = line0 - 1, e = line1 - 1;
  CNodes kids = {0}, subs = {0}, pick = {0};
  /* the innermost function body holding the lines */
  TSNode body = {0};
  bool found = false;
  TSNode at = ts_node_named_descendant_for_point_range(ts_tree_root_node(tree), (TSPoint){(uint32_t)s, 0},
                                                       (TSPoint){(uint32_t)s, 0});
  for (TSNode n = at; !ts_node_is_null(n); n = ts_node_parent(n))
    if (is(n, "function_definition")) {
      body = ts_node_child_by_field_name(n, "body", 4);
      found = !ts_node_is_null(body) && row0(body) <= s && row1(body) >= e;
      break;
    }
  /* `extern "C" int f(...) {` and `template <...> T f(...) {`: the node at
   * the line's start is the wrapper, the function is inside it */
  for (int depth = 0; !found && !ts_node_is_null(at) && depth < 3; depth++) {
    TSNode next = {0};
    for (uint32_t k = 0; k < ts_node_named_child_count(at); k++) {
      TSNode c = ts_node_named_child(at, k);
      if (row0(c) > s || row1(c) < e) continue; /* not around the lines */
      if (is(c, "function_definition")) {
        body = ts_node_child_by_field_name(c, "body", 4);
        found = !ts_node_is_null(body) && row0(body) <= s && row1(body) >= e;
      }
      next = c;
      break;
    }
    at = next;
  }
  if (!found) goto done;
  TSNode block = body;
  int i0, i1;
  for (;;) {
    c_stmts_list(block, &kids);
    i0 = i1 = -1;
    for (size_t i = 0; i < kids.n; i++)
      if (row1(kids.v[i]) >= s && row0(kids.v[i]) <= e) {
        if (i0 < 0) i0 = (int)i;
        i1 = (int)i;
      }
    if (i0 < 0) goto done;
    if (i0 != i1 || s <= row0(kids.v[i0])) break;
    subs.n = 0;
    c_stmts_sub_blocks(kids.v[i0], &subs);
    int hit = -1;
    for (size_t k = 0; k < subs.n; k++)
      if (row0(subs.v[k]) <= s && row1(subs.v[k]) >= e && !ts_node_eq(subs.v[k], kids.v[i0])) hit = (int)k;
    if (hit < 0) break;
    block = subs.v[hit];
  }
  /* the whole body, or one statement with blocks: what is under them */
  bool whole = row0(body) >= s && row1(body) <= e;
  if (whole || (i0 == i1 && row0(kids.v[i0]) >= s)) {
    subs.n = 0;
    if (whole) vec_push(&subs, body);
    else c_stmts_sub_blocks(kids.v[i0], &subs);
    CNodes inner = {0};
    for (size_t k = 0; k < subs.n; k++) {
      c_stmts_list(subs.v[k], &inner);
      for (size_t j = 0; j < inner.n; j++) vec_push(&pick, inner.v[j]);
    }
    vec_free(&inner);
  } else if (i0 != i1) {
    for (int i = i0; i <= i1; i++) vec_push(&pick, kids.v[i]);
  }
  for (size_t i = 0; i < pick.n; i++)
    if (c_worth_a_range(pick.v[i]) && (row0(pick.v[i]) != s || row1(pick.v[i]) != e || whole))
      vec_push(out, ((InnerStmt){row0(pick.v[i]) + 1, row1(pick.v[i]) + 1, NULL}));
done:
  vec_free(&kids);
  vec_free(&subs);
  vec_free(&pick);
  ts_tree_delete(tree);
  ts_parser_delete(parser);
  return 0;
}
