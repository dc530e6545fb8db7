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
 * continue, goto, exceptions. No edit adds a line except the include, on
 * line 1 or after the file's feature-test macros (include_at), which is
 * followed by `#line N "<original path>"`, so compiler messages, assert()
 * and debuggers point at the original file and lines; those two lines are
 * also the marker of an instrumented file. Macros that only decorate a
 * declaration are blanked in the text tree-sitter parses (cfuncs.c).
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


/* ncrewrite's own lines: the include, then `#line N "..."`, among the
 * directives before the first code (on line 1, or after the file's
 * feature-test macros). A file that includes <ncrt.h> itself (to call
 * ncrt_step()) is not ours. */
static bool already_instrumented(CFile *c) {
  size_t k = strlen(NC_C_MARK);
  for (size_t i = 0; i < c->dirs.n && c->dirs.v[i].at < c->code0; i++) {
    const char *s = c->src + c->dirs.v[i].at;
    size_t n = c->len - c->dirs.v[i].at;
    if (n < k || memcmp(s, NC_C_MARK, k)) continue;
    s += k, n -= k;
    if (n && *s == '\r') s++, n--;
    if (n < 8 || memcmp(s, "\n#line ", 7) || s[7] < '0' || s[7] > '9') continue;
    for (s += 7, n -= 7; n && *s >= '0' && *s <= '9'; s++, n--) {
    }
    if (n >= 2 && s[0] == ' ' && s[1] == '"') return true;
  }
  return false;
}

static bool ident_char_c(char ch) {
  return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

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
static bool wrap_function(CFile *c, CFunc *f, const Rule *r, const char *name) {
  if (f->skip) {
    f->targeted = true;
    explain_skip(c, f);
    return false;
  }
  if (f->wrapped) {
    if (r) job_explain(c->job, row0(f->def) + 1, "%s: already has a function range; no second one", f->qual);
    return true;
  }
  f->wrapped = true;
  CWrap w = {ts_node_start_byte(f->body), ts_node_start_byte(f->body) + 1, row0(f->body), row0(f->body), r,
             xstrdup(name), r ? rule_kind(r->kind)->range_kind : "full-trace", false};
  vec_push(&c->wraps, w);
  job_explain(c->job, row0(f->def) + 1, "%s: %s range '%s'%s%s", f->qual, w.kind, name,
              f->rough ? " (its body does not parse in places, macros tree-sitter cannot expand; its header and "
                         "braces are certain, so the range covers the whole function)" : "",
              f->addr && !r ? " (straight-line, but its address is taken: a call through a pointer is not "
                              "inlined)" : "");
  return true;
}

static bool call_matches(CFile *c, TSNode call, const char *pat) {
  TSNode fn = child_by_field(call, "function");
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
  char *t = node_text(c->src, fn), *w = t;
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
static bool wrap_initializers(CFile *c, TSNode decl, const Rule *r, const char *name) {
  TSNode type = child_by_field(decl, "type");
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
    TSNode v = child_by_field(d, "value"), x = child_by_field(d, "declarator");
    if (ts_node_is_null(v) || !has_call(c, v, r->call)) continue;
    if (is(v, "initializer_list") || is(v, "argument_list") || n == 16) return false;
    while (!ts_node_is_null(x) && is(x, "pointer_declarator")) x = child_by_field(x, "declarator");
    if (ts_node_is_null(x) || !is(x, "identifier")) return false;
    w[n++] = (CWrap){ts_node_start_byte(v), ts_node_end_byte(v), row0(v), row1(v), r, NULL, rule_kind(r->kind)->range_kind, true};
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
static int calls_in(CFile *c, TSNode block, const Rule *r, const char *fname) {
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
      } else if (c_stmts_wrap(c, &kids, (int)i, (int)i, r, range_name(r, dflt), rule_kind(r->kind)->range_kind)) {
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
static bool snap(CFile *c, TSNode block, int s, int e, const Rule *r, const char *name) {
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
    bool ok = c_stmts_wrap(c, &kids, i0, i1, r, name, rule_kind(r->kind)->range_kind);
    if (ok && (row0(kids.v[i0]) != s || row1(kids.v[i1]) != e))
      job_explain(c->job, s + 1, "lines %d-%d snapped to whole statements %d-%d: range '%s'", s + 1, e + 1,
                  row0(kids.v[i0]) + 1, row1(kids.v[i1]) + 1, name);
    else if (ok)
      job_explain(c->job, s + 1, "lines %d-%d: range '%s'", s + 1, e + 1, name);
    vec_free(&kids);
    return ok;
  }
}

/* RULE_FUNC, RULE_CALLS: the functions the rule names, whole or their
 * statements calling its pattern. */
static void plan_funcs(CFile *c, const Rule *r) {
  int errs = c->job->diags.errors;
  int fns = 0, hits = 0, protos = 0, rough = 0;
  for (size_t i = 0; i < c->funcs.n; i++) {
    CFunc *f = &c->funcs.v[i];
    char *pat = r->cls ? xasprintf("%s::%s", r->cls, r->func ? r->func : "*") : xstrdup(r->func ? r->func : "*");
    bool m = func_matches(pat, f);
    free(pat);
    if (!m) continue;
    fns++;
    protos += f->proto;
    if (f->skip) {
      f->targeted = true;
      if (r->func) explain_skip(c, f);
      continue;
    }
    if (r->kind == RULE_FUNC) {
      hits += wrap_function(c, f, r, range_name(r, f->qual));
    } else {
      if (f->rough) {
        f->targeted = true;
        rough++;
        job_explain(c->job, row0(f->def) + 1, "skipped the calls in %s: its body does not parse in places (macros "
                    "tree-sitter cannot expand), so its statements are not certain; a function rule still ranges "
                    "it whole", f->qual);
        continue;
      }
      c->fbody = f->body;
      hits += calls_in(c, f->body, r, f->qual);
    }
  }
  if (hits) job_rule_hit(c->job, r);
  else if (c->job->diags.errors > errs) {
  } else if ((!fns || fns == protos) && r->func && macro_making(c, r->func))
    job_rule_miss(c->job, r, xasprintf("'%s' in %s is produced by the macro %s; code produced by macros is never "
                           "instrumented", r->func, c->job->rel, macro_making(c, r->func)));
  else if (!fns)
    job_rule_miss(c->job, r, xasprintf("no function '%s' in %s", r->func ? r->func : "*", c->job->rel));
  else if (fns == protos)
    job_rule_miss(c->job, r, xasprintf("'%s' is only declared in %s (no body)", r->func ? r->func : "*", c->job->rel));
  else if (r->kind == RULE_CALLS && rough)
    job_rule_miss(c->job, r, xasprintf("no statement calling '%s' in %s that can be instrumented: the body of '%s' "
                                       "does not parse in places (macros tree-sitter cannot expand)",
                                       r->call, c->job->rel, r->func ? r->func : "*"));
  else if (r->kind == RULE_CALLS)
    job_rule_miss(c->job, r, xasprintf("no statement calling '%s' in %s", r->call, c->job->rel));
  else
    job_rule_miss(c->job, r, xasprintf("'%s' in %s cannot be instrumented (see --explain)", r->func, c->job->rel));
}

/* RULE_LINES: a line range inside a host function's body, snapped to whole
 * statements. */
static void plan_lines(CFile *c, const Rule *r) {
  int errs = c->job->diags.errors;
  int s = r->start_line - 1, e = r->end_line - 1;
  int nrows = row1(c->root) + 1;
  if (s >= nrows) {
    job_rule_miss(c->job, r, xasprintf("lines %d-%d are outside %s (%d lines)", s + 1, e + 1, c->job->rel, nrows));
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
    job_rule_miss(c->job, r, xasprintf("lines %d-%d are not inside the body of %s%s%s in %s", s + 1, e + 1,
                           r->func ? "function '" : "a host function", r->func ? r->func : "",
                           r->func ? "'" : "", c->job->rel));
    return;
  }
  if (fn->rough) {
    job_rule_miss(c->job, r, xasprintf("lines %d-%d are inside %s, whose body does not parse in places (macros "
                           "tree-sitter cannot expand): only a range over the whole function can be placed there",
                           s + 1, e + 1, fn->qual));
    return;
  }
  char *dflt = s == e ? xasprintf("%s:L%d", fn->qual, s + 1) : xasprintf("%s:L%d-%d", fn->qual, s + 1, e + 1);
  c->fbody = fn->body;
  if (snap(c, fn->body, s, e, r, range_name(r, dflt))) job_rule_hit(c->job, r);
  else if (c->job->diags.errors == errs)
    job_rule_miss(c->job, r, xasprintf("no statement on lines %d-%d of %s", s + 1, e + 1, c->job->rel));
  free(dflt);
}

/* The planner of each rule kind the C family takes (rules.h's table of
 * kinds, RULE_IN_C); a kind without one is warned about at its rule. */
static void (*const C_PLAN[RULE_NKINDS])(CFile *, const Rule *) = {
    [RULE_FUNC] = plan_funcs,
    [RULE_CALLS] = plan_funcs,
    [RULE_LINES] = plan_lines,
};

static void plan_rule(CFile *c, const Rule *r) {
  if (!(rule_kind(r->kind)->langs & RULE_IN_C) || !C_PLAN[r->kind]) job_rule_elsewhere(c->job, r);
  else C_PLAN[r->kind](c, r);
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

/* ---- where the include goes ----------------------------------------------
 *
 * ncrt.h reads system headers (stdint.h, string.h, and through NVTX
 * stdlib.h, dlfcn.h, pthread.h, ...). The first system header a translation
 * unit reads fixes what all of them declare: glibc's features.h looks at
 * _GNU_SOURCE, _XOPEN_SOURCE, _POSIX_C_SOURCE, _FILE_OFFSET_BITS once. So
 * the include goes after everything among the file's leading directives
 * (those before its first code) that may set a feature-test macro: a
 * #define or #undef of one, or an #include of a header that may (a local
 * header that sets one, itself or through its own includes; one that
 * cannot be found: config.h, Python.h; never a C, POSIX, C++ or CUDA
 * system header). It goes right after the last of these, and on line 1
 * when there is none. An #if block counts as a whole (the include goes
 * after its #endif), except an include guard around the whole file, which
 * the include may go into. After a #line directive of the file's own
 * (bison's output has them before the user's prologue) the #line that
 * follows the include goes on with the file's numbering. */

/* Is directive i an include guard around the rest of the file: `#ifndef X`
 * (or `#if !defined(X)`) then `#define X`, no #else, and its #endif after
 * all the code? */
static bool whole_file_guard(CFile *c, size_t i) {
  const char *s = c->src;
  const CDir *d = &c->dirs.v[i];
  size_t e, w;
  if (c_dir_is(s, d, "ifndef")) {
    w = c_dir_word(s, d->a0, d->a1, &e);
  } else if (c_dir_is(s, d, "if")) {
    size_t p = d->a0;
    while (p < d->a1 && (s[p] == ' ' || s[p] == '\t')) p++;
    if (p >= d->a1 || s[p] != '!') return false;
    w = c_dir_word(s, p + 1, d->a1, &e);
    if (w == d->a1 || e - w != 7 || memcmp(s + w, "defined", 7)) return false;
    size_t q = e;
    while (q < d->a1 && (s[q] == ' ' || s[q] == '\t' || s[q] == '(')) q++;
    w = c_dir_word(s, q, d->a1, &e);
  } else {
    return false;
  }
  if (w == d->a1 || i + 1 >= c->dirs.n) return false;
  const CDir *def = &c->dirs.v[i + 1];
  size_t e2, w2 = c_dir_word(s, def->a0, def->a1, &e2);
  if (!c_dir_is(s, def, "define") || def->at >= c->code0 || e2 - w2 != e - w || memcmp(s + w2, s + w, e - w))
    return false;
  int depth = 0;
  for (size_t j = i + 1; j < c->dirs.n; j++) {
    const CDir *x = &c->dirs.v[j];
    if (c_dir_is(s, x, "if") || c_dir_is(s, x, "ifdef") || c_dir_is(s, x, "ifndef")) {
      depth++;
    } else if (depth == 0 && (c_dir_is(s, x, "else") || c_dir_is(s, x, "elif") || c_dir_is(s, x, "elifdef") ||
                              c_dir_is(s, x, "elifndef"))) {
      return false;
    } else if (c_dir_is(s, x, "endif") && depth-- == 0) {
      if (x->at < c->code0) return false; /* a block of directives, closed before the code */
      size_t tail;
      c_lex(s + x->end, c->len - x->end, NULL, &tail, NULL, NULL);
      return tail == c->len - x->end; /* no code after it */
    }
  }
  return false;
}

/* Where the line at byte offset `at` is said to be by the file's own #line
 * directives before it: *line, and the file name as written (with its
 * quotes) in *file and *flen (*flen 0: the file itself). False if no
 * #line comes before `at`. */
static bool mapped_line(CFile *c, size_t at, int *line, const char **file, size_t *flen) {
  const char *s = c->src;
  bool any = false;
  *flen = 0;
  for (size_t i = 0; i < c->dirs.n && c->dirs.v[i].end <= at; i++) {
    const CDir *d = &c->dirs.v[i];
    size_t p = d->a0;
    if (!c_dir_is(s, d, "line")) {
      if (!(d->k0 < d->k1 && s[d->k0] >= '0' && s[d->k0] <= '9')) continue;
      p = d->k0; /* GNU: `# 12 "file"` */
    }
    while (p < d->a1 && (s[p] == ' ' || s[p] == '\t')) p++;
    long n = 0;
    size_t q = p;
    while (q < d->a1 && s[q] >= '0' && s[q] <= '9' && n < 100000000) n = n * 10 + (s[q++] - '0');
    if (q == p) continue; /* `#line MACRO`: not followed */
    while (q < d->a1 && (s[q] == ' ' || s[q] == '\t')) q++;
    if (q < d->a1 && s[q] == '"') {
      const char *e = s + q + 1;
      while (e < s + d->a1 && *e != '"') e += *e == '\\' ? 2 : 1;
      if (e < s + d->a1) *file = s + q, *flen = (size_t)(e - (s + q)) + 1;
    }
    int rows = 0;
    for (const char *x = s + d->end; (x = memchr(x, '\n', (size_t)(s + at - x))); x++) rows++;
    *line = (int)n + rows;
    any = true;
  }
  return any;
}

/* The byte offset (a line start) where the include goes; see above. */
static size_t include_at(CFile *c) {
  enum { MAXD = 64 };
  struct {
    bool guard;
    bool pending;        /* a line in this block may set a feature-test macro */
    const CDir *sure;    /* the first that surely does (not a header that cannot be found) */
  } st[MAXD];
  int sp = 0;
  size_t best = 0;
  const char *s = c->src;
  for (size_t i = 0; i < c->dirs.n && c->dirs.v[i].at < c->code0; i++) {
    const CDir *d = &c->dirs.v[i];
    if (c_dir_is(s, d, "if") || c_dir_is(s, d, "ifdef") || c_dir_is(s, d, "ifndef")) {
      if (sp < MAXD) st[sp].guard = whole_file_guard(c, i), st[sp].pending = false, st[sp].sure = NULL;
      sp++;
      continue;
    }
    if (c_dir_is(s, d, "endif")) {
      if (sp > 0 && --sp < MAXD && st[sp].pending) best = d->end; /* (an #endif too many closes nothing) */
      continue;
    }
    int conf = CONF_NO;
    if (c_dir_is(s, d, "define") || c_dir_is(s, d, "undef")) {
      size_t e, w = c_dir_word(s, d->a0, d->a1, &e);
      conf = w < d->a1 && c_feature_macro(s + w, e - w) ? CONF_SETS : CONF_NO;
    } else if (c_dir_is(s, d, "include") || c_dir_is(s, d, "include_next") || c_dir_is(s, d, "import")) {
      conf = c_include_configures(c, d);
    }
    if (conf == CONF_NO || sp > MAXD) continue;
    int outer = -1; /* the outermost #if block that is no include guard */
    for (int k = 0; k < sp && outer < 0; k++)
      if (!st[k].guard) outer = k;
    if (outer < 0) best = d->end;
    else {
      st[outer].pending = true;
      if (conf == CONF_SETS && !st[outer].sure) st[outer].sure = d;
    }
  }
  for (int k = 0; k < sp && k < MAXD; k++)
    if (st[k].sure) {
      diag_at(&c->job->diags, DIAG_WARNING, c->job->rel, c->src, c->len, st[k].sure->row + 1, 1,
              "this line may set a feature-test macro inside an #if block that goes on into the code: <ncrt.h> "
              "(and the system headers it reads) must come before that block; move the line above the block, or "
              "define the macro on the command line");
      break;
    }
  return best;
}

static int cmp_wrap(const void *pa, const void *pb) {
  const CWrap *a = pa, *b = pb;
  if (a->b0 != b->b0) return a->b0 < b->b0 ? -1 : 1;
  return a->b1 > b->b1 ? -1 : a->b1 < b->b1;
}

/* Where a block around statements starts when the text was parsed with
 * macros blanked: before the blanked words just in front of the first
 * statement (`LOCAL_API int x = f();`, or `PNG_UNUSED(` of a statement
 * macro), which belong to it. */
static size_t unblanked_start(CFile *c, size_t b0) {
  size_t j = b0, first = b0;
  while (j > 0 && (c->psrc[j - 1] == ' ' || c->psrc[j - 1] == '\t' || c->psrc[j - 1] == '\n' ||
                   c->psrc[j - 1] == '\r')) {
    j--;
    if (c->psrc[j] != c->src[j]) first = j;
  }
  return first;
}

/* The functions f calls that have no range of their own in this file
 * (left out by full trace, never instrumented, or defined elsewhere: a
 * library's, or another file's, which the trace tells apart by its own
 * ranges), ", "-separated in the order of first call, at most
 * UNRANGED_MAX; calls through a pointer are one entry. Macros the file or
 * its local headers define are not functions and are left out (a macro
 * that expands to a call is not seen). NULL when there are none. The
 * manifest keeps the list, so that nctrace can name what a range's
 * exclusive time may hold unseen (issue 40). */
#define UNRANGED_MAX 24
typedef struct {
  CFile *c;
  const CFunc *f;
  CStrs seen;
  Buf out;
  int more;
  bool pointer;
} CalleeScan;

static bool callee_visit(void *ctx, TSNode k) {
  CalleeScan *x = ctx;
  if (!is(k, "call_expression")) return true;
  TSNode fn = child_by_field(k, "function");
  if (!ts_node_is_null(fn) && is(fn, "template_function")) fn = child_by_field(fn, "name");
  if (ts_node_is_null(fn)) return true;
  if (!is(fn, "identifier") && !is(fn, "qualified_identifier")) {
    x->pointer = true;
    return true;
  }
  char *nm = node_text(x->c->src, fn);
  bool skip = !strcmp(nm, x->f->name) || !strcmp(nm, x->f->qual);
  for (size_t i = 0; i < x->seen.n && !skip; i++) skip = !strcmp(x->seen.v[i], nm);
  for (size_t i = 0; i < x->c->funcs.n && !skip; i++) {
    const CFunc *g = &x->c->funcs.v[i];
    skip = g->wrapped && (!strcmp(g->name, nm) || !strcmp(g->qual, nm));
  }
  if (skip || c_is_macro(x->c, nm)) {
    free(nm);
    return true;
  }
  vec_push(&x->seen, nm);
  if (x->seen.n <= UNRANGED_MAX) buf_printf(&x->out, "%s%s", x->out.len ? ", " : "", nm);
  else x->more++;
  return true;
}

static char *unranged_calls(CFile *c, const CFunc *f) {
  if (ts_node_is_null(f->body) || f->rough) return NULL;
  CalleeScan x = {c, f, {0}, {0}, 0, false};
  c_walk(f->body, callee_visit, &x);
  if (x.more) buf_printf(&x.out, ", %d more", x.more);
  if (x.pointer) buf_printf(&x.out, "%s(calls through a pointer)", x.out.len ? ", " : "");
  for (size_t i = 0; i < x.seen.n; i++) free(x.seen.v[i]);
  vec_free(&x.seen);
  return x.out.len ? buf_steal(&x.out) : (buf_free(&x.out), NULL);
}

static void emit(CFile *c) {
  FileJob *job = c->job;
  for (size_t i = 0; c->psrc && i < c->wraps.n; i++) {
    CWrap *w = &c->wraps.v[i];
    if (!w->expr && strcmp(w->kind, "function") && strcmp(w->kind, "full-trace")) w->b0 = unblanked_start(c, w->b0);
  }
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
          ruledoc_diag(&job->rules->doc, &job->diags, DIAG_ERROR, r->at,
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
    RangeRec rec = {xstrdup(w->name), w->kind, w->r0 + 1, w->r1 + 1, w->rule, NULL};
    if (!strcmp(w->kind, "function") || !strcmp(w->kind, "full-trace")) {
      for (size_t k = 0; k < c->funcs.n; k++)
        if (!c->funcs.v[k].proto && ts_node_start_byte(c->funcs.v[k].body) == w->b0) {
          rec.line1 = row1(c->funcs.v[k].body) + 1;
          rec.unranged = unranged_calls(c, &c->funcs.v[k]);
        }
    }
    vec_push(&job->ranges, rec);
  }
  /* the include, then #line so every original line keeps its number and the
   * original file name; after the feature-test macros */
  size_t at = include_at(c);
  int row = 0;
  for (const char *p = c->src; (p = memchr(p, '\n', (size_t)(c->src + at - p))); p++) row++;
  if (row) job_explain(job, row + 1, "<ncrt.h> included here: the lines above may set feature-test macros");
  Buf inc = {0};
  int mline;
  const char *mfile;
  size_t mflen;
  if (mapped_line(c, at, &mline, &mfile, &mflen)) {
    /* after the file's own #line: go on with its numbering */
    buf_printf(&inc, NC_C_MARK "%s#line %d ", c->nl, mline);
    if (mflen) buf_add(&inc, mfile, mflen);
    else c_literal(&inc, job->origin ? job->origin : job->rel);
  } else {
    buf_printf(&inc, NC_C_MARK "%s#line %d ", c->nl, row + 1);
    c_literal(&inc, job->origin ? job->origin : job->rel);
  }
  buf_puts(&inc, c->nl);
  edits_add(&job->edits, c->bom + at, c->bom + at, inc.s, -1000000);
  buf_free(&inc);
}

/* Functions a rule or full trace asked for that are skipped because their
 * header does not parse around a macro with no known definition: one
 * warning per macro (or set of macros) and file, naming the functions. */
/* Where f's first unknown word is (1-based line and column): in its
 * header, or in the lines just above it that tree-sitter left out. */
static void unknown_at(CFile *c, const CFunc *f, int *line, int *col) {
  const char *w = f->unknown, *comma = strchr(w, ',');
  size_t wl = comma ? (size_t)(comma - w) : strlen(w);
  size_t a = ts_node_start_byte(f->def), b = ts_node_is_null(f->body) ? ts_node_end_byte(f->def)
                                                                       : ts_node_start_byte(f->body);
  size_t from = a > 2048 ? a - 2048 : 0, at = a;
  bool found = false;
  /* in the header; else the closest one above it */
  for (size_t i = a; i + wl <= b && !found; i++)
    if (!memcmp(c->src + i, w, wl) && !(i && ident_char_c(c->src[i - 1])) &&
        !(i + wl < c->len && ident_char_c(c->src[i + wl])))
      at = i, found = true;
  for (size_t i = a; !found && i-- > from;)
    if (i + wl <= c->len && !memcmp(c->src + i, w, wl) && !(i && ident_char_c(c->src[i - 1])) &&
        !(i + wl < c->len && ident_char_c(c->src[i + wl])))
      at = i, found = true;
  size_t ls = at;
  while (ls > 0 && c->src[ls - 1] != '\n') ls--;
  int row = 0;
  for (const char *p = c->src; (p = memchr(p, '\n', (size_t)(c->src + ls - p))); p++) row++;
  *line = row + 1, *col = (int)(at - ls) + 1;
}

static void warn_unknown_macros(CFile *c) {
  for (size_t i = 0; i < c->funcs.n; i++) {
    CFunc *f = &c->funcs.v[i];
    if (!f->unknown || !f->targeted || !f->why) continue;
    bool first = true;
    for (size_t j = 0; j < i && first; j++)
      first = !(c->funcs.v[j].unknown && c->funcs.v[j].targeted && c->funcs.v[j].why &&
                !strcmp(c->funcs.v[j].unknown, f->unknown));
    if (!first) continue;
    Buf names = {0};
    int count = 0, more = 0;
    for (size_t j = i; j < c->funcs.n; j++) {
      CFunc *g = &c->funcs.v[j];
      if (!g->unknown || !g->targeted || !g->why || strcmp(g->unknown, f->unknown)) continue;
      bool seen = false; /* overloads: one name */
      for (size_t k = i; k < j && !seen; k++)
        seen = c->funcs.v[k].unknown && c->funcs.v[k].targeted && c->funcs.v[k].why &&
               !strcmp(c->funcs.v[k].unknown, f->unknown) && !strcmp(c->funcs.v[k].qual, g->qual);
      count++;
      if (seen) continue;
      if (names.len < 60) buf_printf(&names, "%s%s", names.len ? ", " : "", g->qual);
      else more++;
    }
    if (more) buf_printf(&names, " and %d more", more);
    bool one = !strchr(f->unknown, ',');
    int line, col;
    unknown_at(c, f, &line, &col);
    diag_at(&c->job->diags, DIAG_WARNING, c->job->rel, c->src, c->len, line, col,
            "skipped %s: %s %s no definition in the file or its local headers, and %s not parse without one; if %s "
            "only %s the declaration (a storage class, attribute or export decoration), list %s under "
            "c_attribute_macros in the rule file",
            names.s, f->unknown, one ? "looks like a macro with" : "look like macros with",
            count > 1 ? "their headers do" : "its header does", one ? "it" : "they", one ? "decorates" : "decorate",
            one ? "it" : "them");
    buf_free(&names);
  }
}

static int cmp_span(const void *pa, const void *pb) {
  const CSpan *a = pa, *b = pb;
  return a->a < b->a ? -1 : a->a > b->a;
}

/* Parse c->psrc again, as an edit of the tree of c->src: tree-sitter keeps
 * what the blanked bytes do not touch (a file of 8 MB is parsed once, not
 * twice). */
static void reparse_blanked(CFile *c) {
  if (c->blanks.n) qsort(c->blanks.v, c->blanks.n, sizeof *c->blanks.v, cmp_span);
  size_t n = 0;
  for (size_t i = 0; i < c->blanks.n; i++) {
    if (n && c->blanks.v[i].a <= c->blanks.v[n - 1].b) {
      if (c->blanks.v[i].b > c->blanks.v[n - 1].b) c->blanks.v[n - 1].b = c->blanks.v[i].b;
    } else {
      c->blanks.v[n++] = c->blanks.v[i];
    }
  }
  c->blanks.n = n;
  size_t pos = 0, ls = 0;
  uint32_t row = 0;
  for (size_t i = 0; i < n; i++) {
    TSPoint p[2];
    size_t at[2] = {c->blanks.v[i].a, c->blanks.v[i].b};
    for (int k = 0; k < 2; k++) {
      for (; pos < at[k]; pos++)
        if (c->src[pos] == '\n') row++, ls = pos + 1;
      p[k] = (TSPoint){row, (uint32_t)(at[k] - ls)};
    }
    TSInputEdit e = {(uint32_t)at[0], (uint32_t)at[1], (uint32_t)at[1], p[0], p[1], p[1]};
    ts_tree_edit(c->tree, &e);
  }
  TSTree *t = ts_parser_parse_string(c->parser, c->tree, c->psrc, (uint32_t)c->len);
  ts_tree_delete(c->tree);
  c->tree = t;
}

/* A function whose body does not parse (a macro tree-sitter cannot expand:
 * Lua's vmdispatch, computed gotos) still gets a range when its own extent
 * is certain: the range is a scope object declared after the opening
 * brace, so it needs only a clean header and a '{' and '}' that the
 * compiler pairs too (checked on the text, not on tree-sitter's recovery).
 * A definition tree-sitter found inside text it could not parse (recovery
 * after an earlier error) qualifies the same way: what is certain is the
 * block after a clean function declarator. */
static bool extent_certain(CFile *c, const CFunc *f) {
  if (ts_node_is_null(f->body) || !is(f->body, "compound_statement")) return false;
  for (uint32_t i = 0; i < ts_node_child_count(f->def); i++) {
    TSNode k = ts_node_child(f->def, i);
    if (ts_node_eq(k, f->body)) continue;
    if (ts_node_has_error(k) || ts_node_is_missing(k)) return false;
  }
  uint32_t n = ts_node_child_count(f->body);
  if (n < 2) return false;
  TSNode open = ts_node_child(f->body, 0), close = ts_node_child(f->body, n - 1);
  if (!is(open, "{") || !is(close, "}") || ts_node_is_missing(open) || ts_node_is_missing(close)) return false;
  return c_braces_match(c->src, ts_node_start_byte(f->body), ts_node_end_byte(f->body));
}

int c_rewrite(FileJob *job) {
  CFile c = {0};
  c.job = job;
  c.bom = job->len >= 3 && !memcmp(job->src, "\xef\xbb\xbf", 3) ? 3 : 0;
  c.src = job->src + c.bom;
  c.len = job->len - c.bom;
  c_lex(c.src, c.len, &c.dirs, &c.code0, NULL, NULL);
  if (already_instrumented(&c)) {
    vec_free(&c.dirs);
    job->already = true;
    diag_at(&job->diags, DIAG_NOTE, job->rel, NULL, 0, 0, 0, "already instrumented by ncrewrite; copied unchanged");
    return -1;
  }
  if (job_too_big(job)) {
    vec_free(&c.dirs);
    return -1;
  }
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
  if (ts_node_has_error(c.root) || (job->rules && job->rules->attr_macros.n)) {
    /* a macro that only decorates a declaration (`LUA_API int f(...)`,
     * `png_uint_32 PNGAPI f(void)`) leaves tree-sitter with two types or
     * two names: parse the text with such macros blanked (same bytes, same
     * rows), which is what the compiler sees but for their expansion */
    if (c_macros_blank(&c)) {
      reparse_blanked(&c);
      c.root = ts_tree_root_node(c.tree);
    }
  }
  int rc = 0;
  c_funcs_collect(&c, c.root, "");
  if (ts_node_has_error(c.root)) {
    /* C parses with errors around unexpanded macros more often than Python;
     * go on only for functions whose own subtree is clean */
    for (size_t i = 0; i < c.funcs.n; i++) {
      CFunc *f = &c.funcs.v[i];
      if (f->skip || !ts_node_has_error(f->def)) continue;
      if (f->unknown) {
        bool one = !strchr(f->unknown, ',');
        f->skip = f->why = xasprintf("its header does not parse around %s, which %s whose definition is not "
                                     "in the file or its local headers; if %s only %s the declaration, list %s "
                                     "under c_attribute_macros", f->unknown,
                                     one ? "looks like a macro" : "look like macros", one ? "it" : "they",
                                     one ? "decorates" : "decorate", one ? "it" : "them");
      }
      else if (extent_certain(&c, f))
        f->rough = true;
      else
        f->skip = "its text does not parse where its own extent is decided (its header, or braces a macro or an "
                  "#if may open or close)";
    }
  }
  for (size_t t = 0; t < job->ntargets; t++)
    for (size_t i = 0; i < job->targets[t]->rules.n; i++) plan_rule(&c, &job->targets[t]->rules.v[i]);
  if (job->full_trace) {
    c_funcs_addr_taken(&c);
    /* functions the compiler would inline are left out unless the rule
     * file, or a target naming this file, says full_trace_inline: true */
    bool keep_inline = job->rules->full_trace_inline;
    for (size_t t = 0; t < job->ntargets; t++) keep_inline |= job->targets[t]->full_trace_inline;
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
      else if (f->inl && !keep_inline && !f->wrapped)
        job_explain(job, row0(f->def) + 1, "left out of full trace %s: %s (full_trace_inline: true puts it back)",
                    f->qual, f->inl);
      else wrap_function(&c, f, NULL, f->qual);
    }
  }
  warn_unknown_macros(&c);
  emit(&c);
  for (size_t i = 0; i < c.wraps.n; i++) free(c.wraps.v[i].name);
  vec_free(&c.wraps);
  for (size_t i = 0; i < c.funcs.n; i++)
    free(c.funcs.v[i].name), free(c.funcs.v[i].qual), free(c.funcs.v[i].why), free(c.funcs.v[i].unknown);
  c_macros_free(&c);
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

/* A compound assignment (`h += r`) anywhere under n. */
static bool c_compound_assign(TSNode n) {
  if (is(n, "assignment_expression")) {
    TSNode op = child_by_field(n, "operator");
    if (!ts_node_is_null(op) && strcmp(ts_node_type(op), "=")) return true;
  }
  for (uint32_t i = 0; i < ts_node_named_child_count(n); i++)
    if (c_compound_assign(ts_node_named_child(n, i))) return true;
  return false;
}

/* Does the statement do work? A call; in C++ and CUDA also what operator
 * overloading makes a call (`out = weights * v`, `h += r`, `t[i]`, new,
 * delete, co_await): a matrix class's operators are where its time goes.
 * In C an operator is an instruction or two, less than a range costs. */
static bool c_does_work(TSNode s, Lang lang) {
  if (c_contains(s, "call_expression")) return true;
  if (lang == LANG_C) return false;
  static const char *const t[] = {"binary_expression", "subscript_expression", "new_expression", "delete_expression",
                                  "co_await_expression", NULL};
  for (const char *const *p = t; *p; p++)
    if (c_contains(s, *p)) return true;
  return c_compound_assign(s);
}

/* Worth a range of its own: a statement with blocks under it, or one that
 * does work; with `every` (drill --lines) any statement but a jump.
 * Declarations are left out: a block around one would hide its name from
 * the code after it (the rewriter refuses that). */
static bool c_worth_a_range(TSNode s, Lang lang, bool every) {
  if (is(s, "declaration") || is(s, "labeled_statement") || is(s, "case_statement")) return false;
  if (is(s, "break_statement") || is(s, "continue_statement") || is(s, "goto_statement")) return false;
  if (is(s, "expression_statement") && !ts_node_named_child_count(s)) return false; /* a lone `;` */
  if (every) return true;
  CNodes subs = {0};
  c_stmts_sub_blocks(s, &subs);
  bool compound = subs.n > 0;
  vec_free(&subs);
  return compound || c_does_work(s, lang);
}

int c_inner_statements(const char *src, size_t len, Lang lang, int line0, int line1, bool every, InnerStmts *out) {
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
      body = child_by_field(n, "body");
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
        body = child_by_field(c, "body");
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
    /* a body of one statement: a range around it would time what the
     * function's range does; the next level is inside it, if anything */
    if (whole && pick.n == 1) {
      TSNode only = pick.v[0];
      pick.n = subs.n = 0;
      c_stmts_sub_blocks(only, &subs);
      for (size_t k = 0; k < subs.n; k++) {
        c_stmts_list(subs.v[k], &inner);
        for (size_t j = 0; j < inner.n; j++) vec_push(&pick, inner.v[j]);
      }
    }
    vec_free(&inner);
  } else if (i0 != i1) {
    for (int i = i0; i <= i1; i++) vec_push(&pick, kids.v[i]);
  }
  for (size_t i = 0; i < pick.n; i++)
    if (c_worth_a_range(pick.v[i], lang, every) && (row0(pick.v[i]) != s || row1(pick.v[i]) != e || whole))
      vec_push(out, ((InnerStmt){row0(pick.v[i]) + 1, row1(pick.v[i]) + 1, NULL}));
done:
  vec_free(&kids);
  vec_free(&subs);
  vec_free(&pick);
  ts_tree_delete(tree);
  ts_parser_delete(parser);
  return 0;
}
