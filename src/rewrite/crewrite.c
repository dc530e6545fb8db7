/* crewrite: C, C++ and CUDA instrumentation.
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
 * messages, assert() and debuggers point at the original file and lines.
 *
 * Never instrumented (and listed by --explain): __global__ and __device__
 * functions (NVTX is host-only), constexpr/consteval functions, defaulted
 * or deleted functions and declarations without bodies, and code inside
 * macro definitions (tree-sitter leaves #define bodies unparsed). A range
 * that would move a declaration into a new block while later code uses the
 * name is refused with an error. */
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "rewrite.h"

const TSLanguage *tree_sitter_c(void);
const TSLanguage *tree_sitter_cpp(void);
const TSLanguage *tree_sitter_cuda(void);

#define NC_C_MARK "#include <ncrt.h>"

typedef VEC(TSNode) CNodes;
typedef VEC(char *) CStrs;

typedef struct {
  TSNode def, body;
  char *name, *qual;  /* qual: ns::Class::name for C++ */
  const char *skip;   /* why it is never instrumented, or NULL */
  bool proto;         /* a declaration without a body (body is null) */
  bool wrapped, explained;
  char *why;          /* owned text behind skip, if built */
} CFunc;

/* Code that macros produce: a macro called at file or class scope
 * (`MAKE_GETTER(get_seven, 7)`) or a #define whose body holds a block. */
typedef struct {
  TSNode node;
  char *macro;
} CMacro;

typedef struct {
  size_t b0, b1;      /* bytes: start of first, end of last statement */
  int r0, r1;
  const Rule *rule;
  char *name;
  const char *kind;
} CWrap;

typedef struct {
  FileJob *job;
  const char *src;
  size_t len, bom;
  TSParser *parser;
  TSTree *tree;
  TSNode root;
  const char *nl;
  VEC(CFunc) funcs;
  VEC(CWrap) wraps;
  VEC(CMacro) macros;
  CStrs risky;         /* object-like macros defined to constexpr/device words */
  TSNode fbody;        /* body of the function being matched */
  Lang lang;           /* the grammar used: a .h may turn out to be C++ */
} C;

static bool is(TSNode n, const char *t) { return !strcmp(ts_node_type(n), t); }
static int row0(TSNode n) { return (int)ts_node_start_point(n).row; }
static int row1(TSNode n) { return (int)ts_node_end_point(n).row; }

static char *text_of(C *c, TSNode n) {
  return xstrndup(c->src + ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
}

static bool word_in(const char *s, size_t n, const char *w) {
  size_t wl = strlen(w);
  for (const char *p = s; (p = memmem(p, n - (size_t)(p - s), w, wl)); p += wl) {
    bool l = p == s || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z') ||
                         (p[-1] >= '0' && p[-1] <= '9'));
    char r = (size_t)(p - s) + wl < n ? p[wl] : ' ';
    bool rr = !(r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'));
    if (l && rr) return true;
  }
  return false;
}

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

/* ---- collecting functions -------------------------------------------- */

/* The declarator's name: identifier, field_identifier, qualified_identifier,
 * operator_name, destructor_name... */
static TSNode decl_name(TSNode d) {
  while (!ts_node_is_null(d)) {
    if (is(d, "function_declarator") || is(d, "pointer_declarator") || is(d, "reference_declarator") ||
        is(d, "parenthesized_declarator") || is(d, "attributed_declarator")) {
      TSNode inner = ts_node_child_by_field_name(d, "declarator", 10);
      if (ts_node_is_null(inner)) inner = ts_node_named_child(d, 0);
      d = inner;
      continue;
    }
    return d;
  }
  return d;
}

/* Is the declarator that of a function (not a pointer to one)? */
static bool declares_function(TSNode d) {
  while (!ts_node_is_null(d)) {
    if (is(d, "function_declarator")) {
      TSNode in = ts_node_child_by_field_name(d, "declarator", 10);
      return !ts_node_is_null(in) && !is(in, "parenthesized_declarator");
    }
    if (!is(d, "pointer_declarator") && !is(d, "reference_declarator") && !is(d, "attributed_declarator"))
      return false;
    TSNode in = ts_node_child_by_field_name(d, "declarator", 10);
    d = ts_node_is_null(in) ? ts_node_named_child(d, ts_node_named_child_count(d) - 1) : in;
  }
  return false;
}

/* Prototypes and in-class member declarations: never instrumented, but
 * known, so that a rule naming one says why it matched nothing. */
static void add_protos(C *c, TSNode decl, const char *scope) {
  for (uint32_t i = 0; i < ts_node_child_count(decl); i++) {
    const char *f = ts_node_field_name_for_child(decl, i);
    TSNode d = ts_node_child(decl, i);
    if (!f || strcmp(f, "declarator") || !declares_function(d)) continue;
    CFunc fn = {0};
    fn.def = decl;
    fn.proto = true;
    fn.skip = "a declaration without a body";
    TSNode nm = decl_name(d);
    fn.name = ts_node_is_null(nm) ? xstrdup("?") : text_of(c, nm);
    fn.qual = *scope ? xasprintf("%s::%s", scope, fn.name) : xstrdup(fn.name);
    vec_push(&c->funcs, fn);
  }
}

static bool ident_char(char ch) {
  return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/* A macro in a function's header (before its parameters) that may make it
 * constexpr or GPU code, which tree-sitter cannot expand: one defined in
 * this file to such words, or one whose upper-case name says so
 * (NVTX3_CONSTEXPR_IF_CPP14, CUTLASS_HOST_DEVICE, C10_DEVICE, ...).
 * Returns the macro name (malloc'ed) or NULL. */
static char *risky_macro(C *c, const char *h, size_t n) {
  for (size_t i = 0; i < n;) {
    if (!ident_char(h[i]) || (h[i] >= '0' && h[i] <= '9')) {
      i++;
      continue;
    }
    size_t j = i;
    bool upper = true;
    while (j < n && ident_char(h[j])) upper &= !(h[j] >= 'a' && h[j] <= 'z'), j++;
    const char *tok = h + i;
    size_t tl = j - i;
    bool bad = false;
    for (size_t k = 0; k < c->risky.n && !bad; k++) bad = strlen(c->risky.v[k]) == tl && !memcmp(c->risky.v[k], tok, tl);
    if (!bad && upper && tl >= 6)
      bad = memmem(tok, tl, "DEVICE", 6) || memmem(tok, tl, "CONSTEXPR", 9) || memmem(tok, tl, "CONSTEVAL", 9) ||
            memmem(tok, tl, "GLOBAL", 6);
    if (bad) return xstrndup(tok, tl);
    i = j;
  }
  return NULL;
}

/* Lines [l0, e) that hold no code for the compiler's view of a header:
 * blank, a preprocessor directive, or (heuristically) a comment line. */
static bool not_code(const char *s, size_t l0, size_t e) {
  while (l0 < e && (s[l0] == ' ' || s[l0] == '\t' || s[l0] == '\r')) l0++;
  return l0 == e || s[l0] == '#' || s[l0] == '*' || (s[l0] == '/' && l0 + 1 < e && (s[l0 + 1] == '/' || s[l0 + 1] == '*'));
}

/* The end of a line's code, before a // comment and trailing blanks. */
static size_t code_end(const char *s, size_t l0, size_t e) {
  for (size_t j = l0; j + 1 < e; j++)
    if (s[j] == '/' && s[j + 1] == '/') {
      e = j;
      break;
    }
  while (e > l0 && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) e--;
  return e;
}

/* A function's header as the compiler sees it: the code lines just before
 * the definition that end no other declaration (an unknown macro there,
 * `_GLIBCXX20_CONSTEXPR` or `CUTLASS_DEVICE`, leaves tree-sitter starting
 * the definition after it, even across #if/#else lines), without comments
 * and preprocessor lines, then the header itself [a, b). Malloc'ed. */
static char *header_text(C *c, size_t a, size_t b) {
  const char *s = c->src;
  size_t ls = a, start;
  while (ls > 0 && s[ls - 1] != '\n') ls--;
  bool more = true; /* the lead-in may go on above this line */
  for (size_t i = ls; i < a; i++)
    if (s[i] == ';' || s[i] == '}' || s[i] == '{') ls = i + 1, more = false;
  start = ls;
  for (int lines = 0; more && start > 0 && lines < 24; lines++) {
    size_t e = start - 1, l0 = e; /* s[e] == '\n' */
    while (l0 > 0 && s[l0 - 1] != '\n') l0--;
    if (!not_code(s, l0, e)) {
      size_t end = code_end(s, l0, e);
      char last = end > l0 ? s[end - 1] : 0;
      if (last == ';' || last == '}' || last == '{' || last == ':' || last == '/') break;
    }
    start = l0;
  }
  Buf out = {0};
  for (size_t p = start; p < ls;) {
    size_t q = p;
    while (q < ls && s[q] != '\n') q++;
    if (!not_code(s, p, q)) {
      buf_add(&out, s + p, code_end(s, p, q) - p);
      buf_putc(&out, ' ');
    }
    p = q + 1;
  }
  buf_add(&out, s + ls, b - ls);
  return buf_steal(&out);
}

static bool has_word(C *c, TSNode n, const char *w) {
  return word_in(c->src + ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n), w);
}

/* Where a function's parameter list starts (its header ends there). */
static size_t params_start(TSNode d, size_t dflt) {
  while (!ts_node_is_null(d)) {
    if (is(d, "function_declarator")) {
      TSNode p = ts_node_child_by_field_name(d, "parameters", 10);
      return ts_node_is_null(p) ? dflt : ts_node_start_byte(p);
    }
    TSNode in = ts_node_child_by_field_name(d, "declarator", 10);
    d = ts_node_is_null(in) ? ts_node_named_child(d, 0) : in;
  }
  return dflt;
}

static void collect(C *c, TSNode n, const char *scope) {
  TSTreeCursor cur = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do {
      TSNode k = ts_tree_cursor_current_node(&cur);
      if (!ts_node_is_named(k)) continue;
      if (is(k, "function_definition")) {
        CFunc f = {0};
        f.def = k;
        f.body = ts_node_child_by_field_name(k, "body", 4);
        TSNode nm = decl_name(ts_node_child_by_field_name(k, "declarator", 10));
        f.name = ts_node_is_null(nm) ? xstrdup("?") : text_of(c, nm);
        for (char *p = f.name; *p; p++)
          if (*p == ' ' || *p == '\n' || *p == '\t') *p = ' ';
        f.qual = *scope ? xasprintf("%s::%s", scope, f.name) : xstrdup(f.name);
        /* the header: everything before the body */
        size_t a = ts_node_start_byte(k), b = ts_node_is_null(f.body) ? ts_node_end_byte(k) : ts_node_start_byte(f.body);
        char *hdr = header_text(c, a, b), *h = hdr;
        size_t pe = params_start(ts_node_child_by_field_name(k, "declarator", 10), b);
        size_t lead = strlen(hdr) - (b - a);
        b = strlen(hdr), a = 0;
        if (!declares_function(ts_node_child_by_field_name(k, "declarator", 10)) &&
            !is(ts_node_child_by_field_name(k, "declarator", 10), "operator_cast"))
          f.skip = "not a function (a macro tree-sitter cannot expand makes it look like one)";
        else if (ts_node_is_null(f.body) || !is(f.body, "compound_statement"))
          f.skip = "no body to instrument (defaulted, deleted or a function-try-block)";
        else if (word_in(h, b - a, "__global__"))
          f.skip = "a __global__ kernel runs on the GPU (NVTX is host-only)";
        else if (word_in(h, b - a, "__device__"))
          f.skip = "a __device__ function runs on the GPU (NVTX is host-only)";
        else if (word_in(h, b - a, "constexpr") || word_in(h, b - a, "consteval"))
          f.skip = "constexpr/consteval: a range cannot run at compile time";
        else if (c->lang != LANG_C && (has_word(c, f.body, "co_await") || has_word(c, f.body, "co_yield") ||
                                       has_word(c, f.body, "co_return")))
          f.skip = "a coroutine may resume on another thread, and a push/pop range must end on the thread "
                   "that opened it";
        else if (c->lang == LANG_C && !word_in(h, b - a, "static") &&
                 (word_in(h, b - a, "inline") || word_in(h, b - a, "__inline") || word_in(h, b - a, "__inline__")))
          f.skip = "a C inline function with external linkage may not hold the range's static variables (C11 "
                   "6.7.4p3); make it static inline to instrument it";
        else {
          char *m = risky_macro(c, h, lead + (pe - ts_node_start_byte(k)));
          if (m) {
            f.skip = f.why = xasprintf("its header uses %s, a macro that may expand to constexpr, __device__ or "
                                       "__global__", m);
            free(m);
          }
        }
        free(hdr);
        vec_push(&c->funcs, f);
        continue;
      }
      if (is(k, "namespace_definition") || is(k, "class_specifier") || is(k, "struct_specifier") ||
          is(k, "union_specifier")) {
        TSNode nm = ts_node_child_by_field_name(k, "name", 4);
        TSNode body = ts_node_child_by_field_name(k, "body", 4);
        if (ts_node_is_null(body)) continue;
        char *name = ts_node_is_null(nm) ? xstrdup("") : text_of(c, nm);
        char *sc = !*name ? xstrdup(scope) : *scope ? xasprintf("%s::%s", scope, name) : xstrdup(name);
        collect(c, body, sc);
        free(sc), free(name);
        continue;
      }
      if (is(k, "declaration") || is(k, "field_declaration")) {
        add_protos(c, k, scope);
        /* a declaration may still hold a class body: fall through */
      } else if (is(k, "expression_statement") && ts_node_named_child_count(k) &&
                 is(ts_node_named_child(k, 0), "call_expression")) {
        /* an expression at file or class scope is a macro call */
        TSNode fn = ts_node_child_by_field_name(ts_node_named_child(k, 0), "function", 8);
        CMacro m = {k, ts_node_is_null(fn) ? xstrdup("?") : text_of(c, fn)};
        vec_push(&c->macros, m);
        continue;
      } else if (is(k, "preproc_def") || is(k, "preproc_function_def")) {
        TSNode v = ts_node_child_by_field_name(k, "value", 5), nm = ts_node_child_by_field_name(k, "name", 4);
        if (is(k, "preproc_def") && !ts_node_is_null(v) && !ts_node_is_null(nm)) {
          const char *vs = c->src + ts_node_start_byte(v);
          size_t vn = ts_node_end_byte(v) - ts_node_start_byte(v);
          if (word_in(vs, vn, "constexpr") || word_in(vs, vn, "consteval") || word_in(vs, vn, "__device__") ||
              word_in(vs, vn, "__global__"))
            vec_push(&c->risky, text_of(c, nm));
        }
        if (!ts_node_is_null(v) && !ts_node_is_null(nm) &&
            memchr(c->src + ts_node_start_byte(v), '{', ts_node_end_byte(v) - ts_node_start_byte(v))) {
          CMacro m = {k, text_of(c, nm)};
          vec_push(&c->macros, m);
        }
        continue;
      }
      if (is(k, "compound_statement")) continue;
      /* declaration lists, templates, extern "C", #if blocks, declarations
       * holding a class body */
      collect(c, k, scope);
    } while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
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

/* ---- statements ------------------------------------------------------ */

static bool is_stmt(TSNode n) {
  const char *t = ts_node_type(n);
  return ts_node_is_named(n) && strcmp(t, "comment") && strncmp(t, "preproc_", 8) != 0;
}

static void statements(TSNode block, CNodes *out) {
  out->n = 0;
  TSTreeCursor cur = ts_tree_cursor_new(block);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do {
      TSNode k = ts_tree_cursor_current_node(&cur);
      if (ts_node_is_named(k) && !is(k, "comment")) vec_push(out, k);
    } while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
}

/* The end of a statement: a `;` that follows as a sibling belongs to it
 * (tree-sitter-c leaves `struct S { ... };` in a block as a struct_specifier
 * and an anonymous `;`). */
static TSNode stmt_last(TSNode n) {
  TSNode nx = ts_node_next_sibling(n);
  return !ts_node_is_null(nx) && !ts_node_is_named(nx) && is(nx, ";") ? nx : n;
}

/* A statement that can stand as a body without braces: `if (x) f();`. */
static bool is_bare_body(TSNode n) {
  const char *t = ts_node_type(n);
  size_t l = strlen(t);
  return ts_node_is_named(n) && l > 10 && !strcmp(t + l - 10, "_statement") && strcmp(t, "compound_statement") &&
         strcmp(t, "case_statement");
}

/* Statement lists directly under a statement: compound bodies of if/else,
 * loops, try/catch, switch cases, bare blocks, and a body without braces
 * (`if (x) f();`, `else if`, a loop body, the statement after a label),
 * which is a list of one: wrapping it in `{ ... }` keeps it one statement,
 * and a label stays outside the new block. */
static void sub_blocks(TSNode s, CNodes *out) {
  TSTreeCursor cur = ts_tree_cursor_new(s);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do {
      TSNode k = ts_tree_cursor_current_node(&cur);
      if (is(k, "compound_statement")) {
        if (is(s, "switch_statement")) sub_blocks(k, out); /* its case_statements */
        else vec_push(out, k);
      } else if (is(k, "else_clause") || is(k, "catch_clause")) {
        sub_blocks(k, out);
      } else if (is(k, "case_statement") || is_bare_body(k)) {
        vec_push(out, k);
      }
    } while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
}

/* Children of a statement list that are statements (a case_statement's
 * first named child is its value); a bare body is its own list. */
static void block_stmts(TSNode block, CNodes *out) {
  if (!is(block, "compound_statement") && !is(block, "case_statement")) {
    out->n = 0;
    vec_push(out, block);
    return;
  }
  statements(block, out);
  if (is(block, "case_statement")) {
    TSNode v = ts_node_child_by_field_name(block, "value", 5);
    if (!ts_node_is_null(v) && out->n && ts_node_eq(out->v[0], v)) {
      memmove(out->v, out->v + 1, (out->n - 1) * sizeof *out->v);
      out->n--;
    }
  }
}

/* Names a statement declares for the code after it: variables (through
 * pointer, array, function and reference declarators, C++ structured
 * bindings), struct/union/enum/class tags and enumerators, typedefs, C++
 * aliases and nested functions. `using` declarations and directives change
 * lookup for everything after them: they declare "*". Wrapping such a
 * statement in a block would hide the name from later code. */
static void declarator_names(C *c, TSNode d, CStrs *names) {
  while (!ts_node_is_null(d)) {
    if (is(d, "init_declarator") || is(d, "function_declarator") || is(d, "pointer_declarator") ||
        is(d, "reference_declarator") || is(d, "array_declarator") || is(d, "parenthesized_declarator") ||
        is(d, "attributed_declarator")) {
      TSNode inner = ts_node_child_by_field_name(d, "declarator", 10);
      d = ts_node_is_null(inner) ? ts_node_named_child(d, 0) : inner;
      continue;
    }
    if (is(d, "structured_binding_declarator")) {
      for (uint32_t i = 0; i < ts_node_named_child_count(d); i++)
        if (is(ts_node_named_child(d, i), "identifier")) vec_push(names, text_of(c, ts_node_named_child(d, i)));
    } else if (is(d, "identifier") || is(d, "type_identifier")) {
      vec_push(names, text_of(c, d));
    }
    return;
  }
}

static void tag_names(C *c, TSNode t, CStrs *names) {
  if (!is(t, "struct_specifier") && !is(t, "union_specifier") && !is(t, "enum_specifier") &&
      !is(t, "class_specifier"))
    return;
  TSNode nm = ts_node_child_by_field_name(t, "name", 4), body = ts_node_child_by_field_name(t, "body", 4);
  if (ts_node_is_null(body)) return; /* a use, not a definition */
  if (!ts_node_is_null(nm)) vec_push(names, text_of(c, nm));
  if (is(t, "enum_specifier"))
    for (uint32_t i = 0; i < ts_node_named_child_count(body); i++) {
      TSNode e = ts_node_named_child(body, i);
      if (is(e, "enumerator")) {
        TSNode en = ts_node_child_by_field_name(e, "name", 4);
        if (!ts_node_is_null(en)) vec_push(names, text_of(c, en));
      }
    }
}

static void declared_names(C *c, TSNode n, CStrs *names) {
  if (is(n, "using_declaration")) {
    vec_push(names, xstrdup("*"));
    return;
  }
  if (is(n, "alias_declaration") || is(n, "namespace_alias_definition")) {
    TSNode nm = ts_node_child_by_field_name(n, "name", 4);
    if (!ts_node_is_null(nm)) vec_push(names, text_of(c, nm));
    return;
  }
  if (is(n, "function_definition")) { /* GNU C nested function */
    TSNode d = ts_node_child_by_field_name(n, "declarator", 10);
    declarator_names(c, d, names);
    return;
  }
  tag_names(c, n, names);
  if (!is(n, "declaration") && !is(n, "type_definition")) return;
  TSTreeCursor cur = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do {
      const char *f = ts_tree_cursor_current_field_name(&cur);
      if (!f) continue;
      TSNode k = ts_tree_cursor_current_node(&cur);
      if (!strcmp(f, "declarator")) declarator_names(c, k, names);
      else if (!strcmp(f, "type")) tag_names(c, k, names);
    } while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
}

static bool text_is(C *c, TSNode n, const char *name) {
  size_t l = ts_node_end_byte(n) - ts_node_start_byte(n);
  return l == strlen(name) && !memcmp(c->src + ts_node_start_byte(n), name, l);
}

static bool uses_name(C *c, TSNode n, const char *name) {
  if (is(n, "identifier") || is(n, "type_identifier") || is(n, "namespace_identifier"))
    return text_is(c, n, name);
  bool found = false;
  TSTreeCursor cur = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do found = uses_name(c, ts_tree_cursor_current_node(&cur), name);
    while (!found && ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
  return found;
}

/* Returns the first declared name used later, or NULL. */
static char *hides_declaration(C *c, CNodes *kids, int i0, int i1) {
  CStrs names = {0};
  for (int i = i0; i <= i1; i++) declared_names(c, kids->v[i], &names);
  char *bad = NULL;
  for (size_t k = 0; k < names.n && !bad; k++)
    for (size_t j = (size_t)i1 + 1; j < kids->n && !bad; j++)
      if (!strcmp(names.v[k], "*") ? is_stmt(kids->v[j]) : uses_name(c, kids->v[j], names.v[k]))
        bad = xstrdup(!strcmp(names.v[k], "*") ? "using" : names.v[k]);
  for (size_t k = 0; k < names.n; k++) free(names.v[k]);
  vec_free(&names);
  return bad;
}

/* Labels defined in n (not inside lambdas: their labels are their own). */
static void labels_in(C *c, TSNode n, CStrs *out) {
  if (is(n, "lambda_expression")) return;
  if (is(n, "labeled_statement")) {
    TSNode l = ts_node_child_by_field_name(n, "label", 5);
    if (!ts_node_is_null(l)) vec_push(out, text_of(c, l));
  }
  for (uint32_t i = 0; i < ts_node_named_child_count(n); i++) labels_in(c, ts_node_named_child(n, i), out);
}

/* A goto to `label` in n outside the bytes [b0, b1). */
static bool goto_from_outside(C *c, TSNode n, const char *label, size_t b0, size_t b1) {
  if (ts_node_start_byte(n) >= b0 && ts_node_end_byte(n) <= b1) return false;
  if (is(n, "goto_statement")) {
    TSNode l = ts_node_child_by_field_name(n, "label", 5);
    return !ts_node_is_null(l) && text_is(c, l, label);
  }
  for (uint32_t i = 0; i < ts_node_named_child_count(n); i++)
    if (goto_from_outside(c, ts_node_named_child(n, i), label, b0, b1)) return true;
  return false;
}

/* A label inside the new block (which opens at `open`, the first
 * statement or the statement after its leading labels) that a goto outside
 * it jumps to: the jump would enter the scope of the range variable (an
 * error in C++ and for cleanup variables in C). Returns the label or NULL. */
static char *entered_by_goto(C *c, TSNode open, CNodes *kids, int i0, int i1) {
  size_t b0 = ts_node_start_byte(open), b1 = ts_node_end_byte(kids->v[i1]);
  CStrs labels = {0};
  labels_in(c, open, &labels);
  for (int i = i0 + 1; i <= i1; i++) labels_in(c, kids->v[i], &labels);
  char *bad = NULL;
  for (size_t k = 0; k < labels.n && !bad; k++)
    if (!ts_node_is_null(c->fbody) && goto_from_outside(c, c->fbody, labels.v[k], b0, b1))
      bad = xstrdup(labels.v[k]);
  for (size_t k = 0; k < labels.n; k++) free(labels.v[k]);
  vec_free(&labels);
  return bad;
}

static bool add_stmt_wrap(C *c, CNodes *kids, int i0, int i1, Rule *r, const char *name, const char *kind) {
  RuleDoc *doc = (RuleDoc *)&c->job->rules->doc;
  TSNode first = kids->v[i0], last = stmt_last(kids->v[i1]);
  for (int i = i0; i <= i1; i++)
    if (!is_stmt(kids->v[i])) {
      ruledoc_diag(doc, &c->job->diags, DIAG_ERROR, r->at,
                   "lines %d-%d of %s include a preprocessor directive; a range must hold whole statements",
                   row0(first) + 1, row1(last) + 1, c->job->rel);
      return false;
    }
  char *bad = hides_declaration(c, kids, i0, i1);
  if (bad) {
    if (!strcmp(bad, "using"))
      ruledoc_diag(doc, &c->job->diags, DIAG_ERROR, r->at,
                   "range '%s' (lines %d-%d of %s) would put a using-declaration in a new block, but later code "
                   "may rely on it; end the range before it or after the last statement of its block",
                   name, row0(first) + 1, row1(last) + 1, c->job->rel);
    else
      ruledoc_diag(doc, &c->job->diags, DIAG_ERROR, r->at,
                   "range '%s' (lines %d-%d of %s) would put the declaration of '%s' in a new block, but later "
                   "code uses it; end the range after that use or start it after the declaration",
                   name, row0(first) + 1, row1(last) + 1, c->job->rel, bad);
    free(bad);
    return false;
  }
  /* leading labels stay outside the block: `L: { NCRT_RANGE(...); ...` */
  TSNode open = first;
  while (is(open, "labeled_statement") && ts_node_named_child_count(open) > 1)
    open = ts_node_named_child(open, ts_node_named_child_count(open) - 1);
  bad = entered_by_goto(c, open, kids, i0, i1);
  if (bad) {
    ruledoc_diag(doc, &c->job->diags, DIAG_ERROR, r->at,
                 "range '%s' (lines %d-%d of %s) would put label '%s' in a new block, but a goto outside the range "
                 "jumps to it (into the range's scope); start the range after the label",
                 name, row0(first) + 1, row1(last) + 1, c->job->rel, bad);
    free(bad);
    return false;
  }
  CWrap w = {ts_node_start_byte(open), ts_node_end_byte(last), row0(first), row1(last), r, xstrdup(name), kind};
  vec_push(&c->wraps, w);
  return true;
}

/* ---- rules ----------------------------------------------------------- */

static const char *range_name(const Rule *r, const char *dflt) {
  if (r && r->ctx.values.n) return r->ctx.values.v[0].value;
  return dflt;
}

/* Explain a skipped function once. A prototype is worth a line only when
 * the file has no definition of the same name. */
static void explain_skip(C *c, CFunc *f) {
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
static const char *macro_making(C *c, const char *name) {
  if (has_glob_chars(name)) return NULL;
  const char *last = name;
  for (const char *p = name; (p = strstr(p, "::")); p += 2) last = p + 2;
  for (size_t i = 0; i < c->macros.n; i++) {
    TSNode n = c->macros.v[i].node;
    if (word_in(c->src + ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n), last))
      return c->macros.v[i].macro;
  }
  return NULL;
}

/* Returns false if f cannot be instrumented; a function already wrapped
 * by an earlier rule keeps that one range. */
static bool wrap_function(C *c, CFunc *f, Rule *r, const char *name) {
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
             xstrdup(name), r ? "function" : "full-trace"};
  vec_push(&c->wraps, w);
  job_explain(c->job, row0(f->def) + 1, "%s: %s range '%s'", f->qual, w.kind, name);
  return true;
}

static bool call_matches(C *c, TSNode call, const char *pat) {
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
  char *t = text_of(c, fn), *w = t;
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

static bool has_call(C *c, TSNode n, const char *pat) {
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

/* Every expression statement, declaration or return in `block` (nested
 * blocks included) that calls the pattern. */
static int calls_in(C *c, TSNode block, Rule *r, const char *fname) {
  CNodes kids = {0};
  block_stmts(block, &kids);
  int hits = 0;
  for (size_t i = 0; i < kids.n; i++) {
    TSNode s = kids.v[i];
    if (is(s, "expression_statement") || is(s, "declaration") || is(s, "return_statement")) {
      if (!has_call(c, s, r->call)) continue;
      char *dflt = xasprintf("%s:%s", fname, r->call);
      if (add_stmt_wrap(c, &kids, (int)i, (int)i, r, range_name(r, dflt), "calls")) {
        hits++;
        job_explain(c->job, row0(s) + 1, "call to '%s' in %s: range '%s'", r->call, fname, range_name(r, dflt));
      }
      free(dflt);
    } else {
      CNodes subs = {0};
      sub_blocks(s, &subs);
      for (size_t k = 0; k < subs.n; k++) hits += calls_in(c, subs.v[k], r, fname);
      vec_free(&subs);
    }
  }
  vec_free(&kids);
  return hits;
}

/* Lines [s, e] (0-based) snapped to whole statements of one list. */
static bool snap(C *c, TSNode block, int s, int e, Rule *r, const char *name) {
  CNodes kids = {0};
  for (;;) {
    block_stmts(block, &kids);
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
      sub_blocks(kids.v[i0], &subs);
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
    bool ok = add_stmt_wrap(c, &kids, i0, i1, r, name, "lines");
    if (ok && (row0(kids.v[i0]) != s || row1(kids.v[i1]) != e))
      job_explain(c->job, s + 1, "lines %d-%d snapped to whole statements %d-%d: range '%s'", s + 1, e + 1,
                  row0(kids.v[i0]) + 1, row1(kids.v[i1]) + 1, name);
    else if (ok)
      job_explain(c->job, s + 1, "lines %d-%d: range '%s'", s + 1, e + 1, name);
    vec_free(&kids);
    return ok;
  }
}

static void plan_rule(C *c, Rule *r) {
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
static const Target *nvtx_target(C *c, const Rule *r) {
  const Target *any = NULL;
  for (size_t i = 0; i < c->job->ntargets; i++) {
    const Target *t = c->job->targets[i];
    if (r && r >= t->rules.v && r < t->rules.v + t->rules.n) return t;
    if (!any && (t->domain || t->category || t->color)) any = t;
  }
  return r ? NULL : any;
}

static char *macro(C *c, const Rule *r, const char *name) {
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

static void emit(C *c) {
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

/* A .h file is C unless it says otherwise: C++-only syntax outside
 * comments (`namespace x`, `template <`, `virtual f`, access specifiers,
 * `std::`) makes it C++. Returns the marker found, or NULL. */
static const char *cpp_marker(const char *s, size_t n) {
  static const struct {
    const char *word, *then; /* then: what must follow after blanks */
  } marks[] = {{"namespace", "a{"}, {"template", "<"}, {"virtual", "a"}, {"public:", ""},
               {"private:", ""},    {"protected:", ""}, {"std::", ""}};
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') i++;
      continue;
    }
    if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
      const char *e = memmem(s + i + 2, n - i - 2, "*/", 2);
      i = e ? (size_t)(e - s) + 1 : n;
      continue;
    }
    if (i && ident_char(s[i - 1])) continue;
    for (size_t m = 0; m < sizeof marks / sizeof *marks; m++) {
      size_t l = strlen(marks[m].word), j = i + l;
      if (j > n || memcmp(s + i, marks[m].word, l)) continue;
      if (!*marks[m].then) return marks[m].word;
      if (j < n && ident_char(s[j])) continue;
      while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r')) j++;
      if (j < n && ((strchr(marks[m].then, 'a') && ident_char(s[j]) && !(s[j] >= '0' && s[j] <= '9')) ||
                    (s[j] != 'a' && strchr(marks[m].then, s[j]))))
        return marks[m].word;
    }
  }
  return NULL;
}

int c_rewrite(FileJob *job) {
  C c = {0};
  c.job = job;
  c.bom = job->len >= 3 && !memcmp(job->src, "\xef\xbb\xbf", 3) ? 3 : 0;
  c.src = job->src + c.bom;
  c.len = job->len - c.bom;
  if (already_instrumented(c.src, c.len)) {
    job->already = true;
    diag_at(&job->diags, DIAG_NOTE, job->rel, NULL, 0, 0, 0, "already instrumented by ncrewrite; copied unchanged");
    return -1;
  }
  const char *nlp = memchr(c.src, '\n', c.len);
  c.nl = nlp && nlp > c.src && nlp[-1] == '\r' ? "\r\n" : "\n";
  if (job->parser && *job->parser) c.parser = *job->parser;
  else c.parser = ts_parser_new();
  c.lang = job->lang;
  size_t rl = strlen(job->rel);
  if (c.lang == LANG_C && rl > 2 && !strcmp(job->rel + rl - 2, ".h")) {
    const char *m = cpp_marker(c.src, c.len);
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
  collect(&c, c.root, "");
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
