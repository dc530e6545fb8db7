/* cfuncs: the functions of a C, C++ or CUDA file, as far as a parser that
 * cannot expand macros can tell, and why some are never instrumented.
 *
 * Each function definition becomes a CFile.funcs entry with its qualified
 * C++ name; those that must not get a range carry a reason (skip): GPU code
 * (__global__, __device__), constexpr/consteval, coroutines, C inline
 * functions with external linkage, headers using a macro that may hide one
 * of those, bodies that do not parse. Prototypes are kept too, so a rule
 * naming one can say why it matched nothing, and so is code that macros
 * produce (a macro called at file scope, a #define holding a block). */
#include <stdlib.h>
#include <string.h>

#include "crewrite.h"

char *c_text(CFile *c, TSNode n) {
  return xstrndup(c->src + ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
}

bool c_word_in(const char *s, size_t n, const char *w) {
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
static void add_protos(CFile *c, TSNode decl, const char *scope) {
  for (uint32_t i = 0; i < ts_node_child_count(decl); i++) {
    const char *f = ts_node_field_name_for_child(decl, i);
    TSNode d = ts_node_child(decl, i);
    if (!f || strcmp(f, "declarator") || !declares_function(d)) continue;
    CFunc fn = {0};
    fn.def = decl;
    fn.proto = true;
    fn.skip = "a declaration without a body";
    TSNode nm = decl_name(d);
    fn.name = ts_node_is_null(nm) ? xstrdup("?") : c_text(c, nm);
    fn.qual = *scope ? xasprintf("%s::%s", scope, fn.name) : xstrdup(fn.name);
    vec_push(&c->funcs, fn);
  }
}

static bool ident_char(char ch) {
  return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/* A macro in a function's header (before its name) that may make it
 * constexpr or GPU code, which tree-sitter cannot expand: one defined in
 * this file to such words, or one whose upper-case name says so
 * (NVTX3_CONSTEXPR_IF_CPP14, CUTLASS_HOST_DEVICE, C10_DEVICE, ...).
 * Returns the macro name (malloc'ed) or NULL. */
static char *risky_macro(CFile *c, const char *h, size_t n) {
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
static char *header_text(CFile *c, size_t a, size_t b) {
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

static bool has_word(CFile *c, TSNode n, const char *w) {
  return c_word_in(c->src + ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n), w);
}

/* Where a function's name starts (its header's macros come before it; a
 * name such as RESET_DEVICE is no macro). A "name" with blanks in it is a
 * misparse around a macro: then the macros may be in it. */
static size_t name_start(CFile *c, TSNode declarator, size_t dflt) {
  TSNode nm = decl_name(declarator);
  if (ts_node_is_null(nm)) return dflt;
  size_t a = ts_node_start_byte(nm), b = ts_node_end_byte(nm);
  if (strncmp(c->src + a, "operator", 8))
    for (size_t i = a; i < b; i++)
      if (c->src[i] == ' ' || c->src[i] == '\t' || c->src[i] == '\n') return b;
  return a;
}

void c_funcs_collect(CFile *c, TSNode n, const char *scope) {
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
        f.name = ts_node_is_null(nm) ? xstrdup("?") : c_text(c, nm);
        for (char *p = f.name; *p; p++)
          if (*p == '\n' || *p == '\t' || *p == '\r') *p = ' ';
        /* a "name" with blanks is a misparse around a macro
         * (`MACRO type name`): its last word is the name */
        char *sp = strncmp(f.name, "operator", 8) ? strrchr(f.name, ' ') : NULL;
        if (sp && sp[1]) memmove(f.name, sp + 1, strlen(sp + 1) + 1);
        f.qual = *scope ? xasprintf("%s::%s", scope, f.name) : xstrdup(f.name);
        /* the header: everything before the body */
        size_t a = ts_node_start_byte(k), b = ts_node_is_null(f.body) ? ts_node_end_byte(k) : ts_node_start_byte(f.body);
        char *hdr = header_text(c, a, b), *h = hdr;
        size_t pe = name_start(c, ts_node_child_by_field_name(k, "declarator", 10), b);
        size_t lead = strlen(hdr) - (b - a);
        b = strlen(hdr), a = 0;
        if (!declares_function(ts_node_child_by_field_name(k, "declarator", 10)) &&
            !is(ts_node_child_by_field_name(k, "declarator", 10), "operator_cast"))
          f.skip = "not a function (a macro tree-sitter cannot expand makes it look like one)";
        else if (ts_node_is_null(f.body) || !is(f.body, "compound_statement"))
          f.skip = "no body to instrument (defaulted, deleted or a function-try-block)";
        else if (c_word_in(h, b - a, "__global__"))
          f.skip = "a __global__ kernel runs on the GPU (NVTX is host-only)";
        else if (c_word_in(h, b - a, "__device__"))
          f.skip = "a __device__ function runs on the GPU (NVTX is host-only)";
        else if (c_word_in(h, b - a, "constexpr") || c_word_in(h, b - a, "consteval"))
          f.skip = "constexpr/consteval: a range cannot run at compile time";
        else if (c->lang != LANG_C && (has_word(c, f.body, "co_await") || has_word(c, f.body, "co_yield") ||
                                       has_word(c, f.body, "co_return")))
          f.skip = "a coroutine may resume on another thread, and a push/pop range must end on the thread "
                   "that opened it";
        else if (c->lang == LANG_C && !c_word_in(h, b - a, "static") &&
                 (c_word_in(h, b - a, "inline") || c_word_in(h, b - a, "__inline") || c_word_in(h, b - a, "__inline__")))
          f.skip = "a C inline function with external linkage may not hold the range's static variables (C11 "
                   "6.7.4p3); make it static inline to instrument it";
        else {
          /* the header up to the name; a misparse can put the "name"
           * outside the header, so stay within it */
          size_t k0 = ts_node_start_byte(k), upto = pe >= k0 ? lead + (pe - k0) : 0;
          char *m = risky_macro(c, h, upto < b ? upto : b);
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
        char *name = ts_node_is_null(nm) ? xstrdup("") : c_text(c, nm);
        char *sc = !*name ? xstrdup(scope) : *scope ? xasprintf("%s::%s", scope, name) : xstrdup(name);
        c_funcs_collect(c, body, sc);
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
        CMacro m = {k, ts_node_is_null(fn) ? xstrdup("?") : c_text(c, fn)};
        vec_push(&c->macros, m);
        continue;
      } else if (is(k, "preproc_def") || is(k, "preproc_function_def")) {
        TSNode v = ts_node_child_by_field_name(k, "value", 5), nm = ts_node_child_by_field_name(k, "name", 4);
        if (is(k, "preproc_def") && !ts_node_is_null(v) && !ts_node_is_null(nm)) {
          const char *vs = c->src + ts_node_start_byte(v);
          size_t vn = ts_node_end_byte(v) - ts_node_start_byte(v);
          if (c_word_in(vs, vn, "constexpr") || c_word_in(vs, vn, "consteval") || c_word_in(vs, vn, "__device__") ||
              c_word_in(vs, vn, "__global__"))
            vec_push(&c->risky, c_text(c, nm));
        }
        if (!ts_node_is_null(v) && !ts_node_is_null(nm) &&
            memchr(c->src + ts_node_start_byte(v), '{', ts_node_end_byte(v) - ts_node_start_byte(v))) {
          CMacro m = {k, c_text(c, nm)};
          vec_push(&c->macros, m);
        }
        continue;
      }
      if (is(k, "compound_statement")) continue;
      /* declaration lists, templates, extern "C", #if blocks, declarations
       * holding a class body */
      c_funcs_collect(c, k, scope);
    } while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
}

/* A .h file is C unless it says otherwise: C++-only syntax outside
 * comments (`namespace x`, `template <`, `virtual f`, access specifiers,
 * `std::`) makes it C++. Returns the marker found, or NULL. */
const char *c_cpp_marker(const char *s, size_t n) {
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

