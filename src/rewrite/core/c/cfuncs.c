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
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "crewrite.h"

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
      TSNode inner = child_by_field(d, "declarator");
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
      TSNode in = child_by_field(d, "declarator");
      /* `int (*f)(void)` declares a pointer; `int (f)(void)`, which keeps a
       * function-like macro f from expanding, a function */
      while (!ts_node_is_null(in) && is(in, "parenthesized_declarator")) in = ts_node_named_child(in, 0);
      return !ts_node_is_null(in) && (is(in, "identifier") || is(in, "field_identifier") ||
                                      is(in, "qualified_identifier") || is(in, "destructor_name") ||
                                      is(in, "operator_name") || is(in, "template_function"));
    }
    if (!is(d, "pointer_declarator") && !is(d, "reference_declarator") && !is(d, "attributed_declarator"))
      return false;
    TSNode in = child_by_field(d, "declarator");
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
    fn.name = ts_node_is_null(nm) ? xstrdup("?") : node_text(c->src, nm);
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

static bool in_list(const char *const *list, const char *w, size_t l) {
  for (; *list; list++)
    if (strlen(*list) == l && !memcmp(*list, w, l)) return true;
  return false;
}

static bool is_attr(CFile *c, const char *w, size_t l);

/* Words in a function's header before its name that look like macros
 * tree-sitter could not expand there: an upper-case name that is no
 * well-known type (LUA_API, PNGAPI, ZEXPORT), or any name right before a
 * type or storage-class keyword (`l_sinline int`); not a known decoration
 * (blanked already) nor a function-like macro's call. Only asked about a
 * header that does not parse. "A, B" (malloc'ed) or NULL. */
static char *unknown_words(CFile *c, const char *h, size_t n) {
  static const char *const types[] = {
      "FILE", "DIR", "BOOL", "BOOLEAN", "BYTE", "WORD", "DWORD", "QWORD", "UINT", "INT", "LONG", "ULONG",
      "SHORT", "USHORT", "CHAR", "UCHAR", "WCHAR", "TCHAR", "VOID", "FLOAT", "DOUBLE", "HANDLE", "HRESULT",
      "HWND", "HMODULE", "HINSTANCE", "LPSTR", "LPCSTR", "LPWSTR", "LPCWSTR", "LPVOID", "LPCVOID", "SIZE_T",
      "SSIZE_T", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "NULL", "LRESULT",
      "WPARAM", "LPARAM", "ATOM", "HDC", "HBITMAP", "HBRUSH", "HFONT", "HICON", "HCURSOR", "HMENU", "HKEY",
      "COLORREF", "LONG_PTR", "ULONG_PTR", "DWORD_PTR", "UINT_PTR", "INT_PTR", "BSTR", NULL};
  static const char *const kws[] = {"int", "char", "void", "short", "long", "unsigned", "signed", "float",
                                    "double", "const", "volatile", "static", "extern", "inline", "struct",
                                    "union", "enum", "_Bool", "bool", "auto", "register", "__inline",
                                    "__inline__", "typename", "virtual", "explicit", "_Noreturn", NULL};
  static const char *const tags[] = {"struct", "union", "enum", "class", "typename", "operator", NULL};
  Buf out = {0};
  const char *prev = NULL; /* the identifier just before, if only blanks follow it */
  size_t prevl = 0;
  bool after_tag = false;
  for (size_t i = 0; i < n;) {
    if (!ident_char(h[i]) || (h[i] >= '0' && h[i] <= '9')) {
      if (h[i] != ' ' && h[i] != '\t' && h[i] != '\n' && h[i] != '\r') prev = NULL, after_tag = false;
      i++;
      continue;
    }
    size_t j = i;
    bool upper = true, letter = false;
    while (j < n && ident_char(h[j])) {
      upper &= !(h[j] >= 'a' && h[j] <= 'z');
      letter |= h[j] >= 'A' && h[j] <= 'Z';
      j++;
    }
    const char *w = h + i;
    size_t l = j - i;
    bool tagname = after_tag, kw = in_list(kws, w, l);
    after_tag = in_list(tags, w, l);
    const char *cand[2] = {NULL, NULL};
    size_t cl[2] = {0, 0};
    size_t k = j;
    while (k < n && (h[k] == ' ' || h[k] == '\t' || h[k] == '\n' || h[k] == '\r')) k++;
    bool call = k < n && h[k] == '('; /* PNG_UNUSED(x): a function-like macro, no decoration */
    if (!tagname && !call && upper && letter && l >= 2 && !in_list(types, w, l) && !is_attr(c, w, l))
      cand[0] = w, cl[0] = l;
    if (!tagname && kw && prev && !is_attr(c, prev, prevl)) cand[1] = prev, cl[1] = prevl;
    for (int q = 0; q < 2; q++) {
      if (!cand[q]) continue;
      bool dup = false;
      for (size_t p = 0; p < out.len && !dup; p += 2) { /* entries are ", "-separated */
        size_t e = p;
        while (e < out.len && out.s[e] != ',') e++;
        dup = e - p == cl[q] && !memcmp(out.s + p, cand[q], cl[q]);
        p = e;
      }
      if (!dup) buf_printf(&out, "%s%.*s", out.len ? ", " : "", (int)cl[q], cand[q]);
    }
    prev = tagname || kw || after_tag ? NULL : w, prevl = l;
    i = j;
  }
  return out.len ? buf_steal(&out) : (buf_free(&out), NULL);
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

/* A definition at file, namespace or class scope, not one tree-sitter
 * found inside a body or a stretch of text it could not parse. */
static bool at_top(TSNode n) {
  for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); p = ts_node_parent(p))
    if (is(p, "ERROR") || is(p, "compound_statement")) return false;
  return true;
}

/* What full trace leaves out by default (issue 40): only what cannot take
 * time by itself. A function with a call (a function-like macro counts: it
 * may expand to one; in C++ also new and delete) or a loop (for, while,
 * do, goto) may run for any time and keeps its range, however small or
 * `inline` it is: perf found such "inlined" functions as symbols of their
 * own in Lua and jq (called through pointers, or too big for the inliner
 * once expanded), carrying 3 % and 7.7 % of the time with no range. What
 * is left is straight-line code of at most STRAIGHT_STMTS statements
 * (counted at every depth; a block's braces count for nothing): a few
 * instructions, which the compiler inlines where it is called directly
 * and which a range would cost more than. Even that keeps its range when
 * its address is taken in the file (c_funcs_addr_taken): a call through a
 * pointer is never inlined. What a full trace then ranges too often is
 * for the run to decide: `ncrewrite prune` writes exclude entries for the
 * names whose ranges cost more than they tell. */
#define STRAIGHT_STMTS 8
#define NC_STR2(n) #n
#define NC_STR(n) NC_STR2(n)

/* leaf_visit counts the statements under a body (at every depth, stopping
 * past STRAIGHT_STMTS) and notes a call (or, in C++, a new or delete: an
 * allocator call) and a loop or a goto. A function-like macro looks like a
 * call and counts as one: it may expand to one. */
void c_walk(TSNode n, bool (*visit)(void *ctx, TSNode k), void *ctx) {
  TSTreeCursor cur = ts_tree_cursor_new(n);
  for (;;) {
    if (!visit(ctx, ts_tree_cursor_current_node(&cur))) break;
    if (ts_tree_cursor_goto_first_child(&cur)) continue;
    bool next = false;
    do {
      if (ts_tree_cursor_goto_next_sibling(&cur)) {
        next = true;
        break;
      }
    } while (ts_tree_cursor_goto_parent(&cur));
    if (!next) break;
  }
  ts_tree_cursor_delete(&cur);
}

typedef struct {
  int stmts;
  bool call, loop;
} LeafScan;

static bool leaf_visit(void *ctx, TSNode k) {
  LeafScan *x = ctx;
  if (!ts_node_is_named(k)) return true;
  const char *t = ts_node_type(k);
  size_t l = strlen(t);
  if (!strcmp(t, "call_expression") || !strcmp(t, "new_expression") || !strcmp(t, "delete_expression"))
    x->call = true;
  if (!strcmp(t, "for_statement") || !strcmp(t, "while_statement") || !strcmp(t, "do_statement") ||
      !strcmp(t, "for_range_loop") || !strcmp(t, "goto_statement"))
    x->loop = true;
  if ((l > 10 && !strcmp(t + l - 10, "_statement") && strcmp(t, "compound_statement")) || !strcmp(t, "declaration"))
    return ++x->stmts <= STRAIGHT_STMTS;
  return true;
}

/* Why full trace leaves f out by default (see above), or NULL: instrument
 * it. */
static const char *inline_reason(TSNode body) {
  LeafScan x = {0, false, false};
  c_walk(body, leaf_visit, &x);
  if (x.call || x.loop || x.stmts > STRAIGHT_STMTS) return NULL;
  return "straight-line code (no call, no loop, at most " NC_STR(STRAIGHT_STMTS) " statements): it cannot take "
         "time by itself, and the compiler inlines it where it is called";
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

typedef struct {
  CFile *c;
  CStrs names, taken; /* names sorted: the candidates; taken: those used as values */
} AddrScan;

static bool addr_visit(void *ctx, TSNode k) {
  AddrScan *x = ctx;
  if (!is(k, "identifier") && !is(k, "field_identifier")) return true;
  size_t a = ts_node_start_byte(k), b = ts_node_end_byte(k);
  TSNode p = ts_node_parent(k), use = k;
  /* `ns::f(...)`, `obj.f(...)`: the call's function is the qualified name
   * or the field expression around the identifier */
  if (!ts_node_is_null(p) && (is(p, "qualified_identifier") || is(p, "field_expression")) &&
      ts_node_eq(child_by_field(p, is(p, "field_expression") ? "field" : "name"), k))
    use = p, p = ts_node_parent(p);
  bool called = !ts_node_is_null(p) && is(p, "call_expression") && ts_node_eq(child_by_field(p, "function"), use);
  bool declared = !ts_node_is_null(p) && is(p, "function_declarator");
  char tmp[256];
  if (called || declared || b - a >= sizeof tmp) return true;
  memcpy(tmp, x->c->src + a, b - a);
  tmp[b - a] = 0;
  const char *key = tmp;
  char **hit = bsearch(&key, x->names.v, x->names.n, sizeof *x->names.v, cmp_name);
  if (hit) vec_push(&x->taken, *hit);
  return true;
}

void c_funcs_addr_taken(CFile *c) {
  /* the candidates' names, sorted, for a binary search per identifier */
  AddrScan x = {c, {0}, {0}};
  for (size_t i = 0; i < c->funcs.n; i++)
    if (c->funcs.v[i].inl) vec_push(&x.names, c->funcs.v[i].name);
  if (!x.names.n) return;
  qsort(x.names.v, x.names.n, sizeof *x.names.v, cmp_name);
  c_walk(c->root, addr_visit, &x);
  for (size_t i = 0; i < c->funcs.n; i++) {
    CFunc *f = &c->funcs.v[i];
    for (size_t k = 0; f->inl && k < x.taken.n; k++)
      if (!strcmp(x.taken.v[k], f->name)) f->inl = NULL, f->addr = true;
  }
  vec_free(&x.taken);
  vec_free(&x.names);
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
        f.body = child_by_field(k, "body");
        TSNode nm = decl_name(child_by_field(k, "declarator"));
        f.name = ts_node_is_null(nm) ? xstrdup("?") : node_text(c->src, nm);
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
        size_t pe = name_start(c, child_by_field(k, "declarator"), b);
        size_t lead = strlen(hdr) - (b - a);
        b = strlen(hdr), a = 0;
        /* the words the compiler sees: with what the macros that only
         * decorate a declaration expand to (`l_sinline` is static inline) */
        char *hx = c_expand_attrs(c, h, b - a);
        size_t xn = strlen(hx);
        if (!declares_function(child_by_field(k, "declarator")) &&
            !is(child_by_field(k, "declarator"), "operator_cast"))
          f.skip = "not a function (a macro tree-sitter cannot expand makes it look like one)";
        else if (ts_node_is_null(f.body) || !is(f.body, "compound_statement"))
          f.skip = "no body to instrument (defaulted, deleted or a function-try-block)";
        else if (c_word_in(hx, xn, "__global__"))
          f.skip = "a __global__ kernel runs on the GPU (NVTX is host-only)";
        else if (c_word_in(hx, xn, "__device__"))
          f.skip = "a __device__ function runs on the GPU (NVTX is host-only)";
        else if (c_word_in(hx, xn, "constexpr") || c_word_in(hx, xn, "consteval"))
          f.skip = "constexpr/consteval: a range cannot run at compile time";
        else if (c->lang != LANG_C && (has_word(c, f.body, "co_await") || has_word(c, f.body, "co_yield") ||
                                       has_word(c, f.body, "co_return")))
          f.skip = "a coroutine may resume on another thread, and a push/pop range must end on the thread "
                   "that opened it";
        else if (c->lang == LANG_C && !c_word_in(hx, xn, "static") &&
                 (c_word_in(hx, xn, "inline") || c_word_in(hx, xn, "__inline") || c_word_in(hx, xn, "__inline__")))
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
          } else if (ts_node_has_error(k) && !ts_node_has_error(f.body) && at_top(k)) {
            /* the header does not parse: a macro whose definition is not
             * known, in front of the type or between it and the name? */
            f.unknown = unknown_words(c, h, upto < b ? upto : b);
          }
        }
        if (!f.skip) f.inl = inline_reason(f.body);
        free(hx);
        free(hdr);
        vec_push(&c->funcs, f);
        continue;
      }
      if (is(k, "namespace_definition") || is(k, "class_specifier") || is(k, "struct_specifier") ||
          is(k, "union_specifier")) {
        TSNode nm = child_by_field(k, "name");
        TSNode body = child_by_field(k, "body");
        if (ts_node_is_null(body)) continue;
        char *name = ts_node_is_null(nm) ? xstrdup("") : node_text(c->src, nm);
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
        TSNode fn = child_by_field(ts_node_named_child(k, 0), "function");
        CMacro m = {k, ts_node_is_null(fn) ? xstrdup("?") : node_text(c->src, fn)};
        vec_push(&c->macros, m);
        continue;
      } else if (is(k, "preproc_def") || is(k, "preproc_function_def")) {
        TSNode v = child_by_field(k, "value"), nm = child_by_field(k, "name");
        if (is(k, "preproc_def") && !ts_node_is_null(v) && !ts_node_is_null(nm)) {
          const char *vs = c->src + ts_node_start_byte(v);
          size_t vn = ts_node_end_byte(v) - ts_node_start_byte(v);
          if (c_word_in(vs, vn, "constexpr") || c_word_in(vs, vn, "consteval") || c_word_in(vs, vn, "__device__") ||
              c_word_in(vs, vn, "__global__"))
            vec_push(&c->risky, node_text(c->src, nm));
        }
        if (!ts_node_is_null(v) && !ts_node_is_null(nm) &&
            memchr(c->src + ts_node_start_byte(v), '{', ts_node_end_byte(v) - ts_node_start_byte(v))) {
          CMacro m = {k, node_text(c->src, nm)};
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

/* ---- the preprocessor's view, without expanding anything ---------------
 *
 * tree-sitter parses the text as written: it cannot expand a macro, nor
 * see what a header declares. What it needs from the preprocessor is found
 * here with a small lexer: the directives (for where the include goes), the
 * #defines of the file and of the local headers it includes (for macros
 * that only decorate a declaration, `LUA_API int lua_gettop(...)`), and
 * whether a header may set feature-test macros. */

/* A backslash-newline (line splice) at i: the offset after it, else i. */
static size_t splice(const char *s, size_t n, size_t i) {
  if (i < n && s[i] == '\\') {
    if (i + 1 < n && s[i + 1] == '\n') return i + 2;
    if (i + 2 < n && s[i + 1] == '\r' && s[i + 2] == '\n') return i + 3;
  }
  return i;
}

/* s[i] == '/', s[i + 1] == '*': past the comment's end. */
static size_t skip_block(const char *s, size_t n, size_t i) {
  const char *e = i + 2 <= n ? memmem(s + i + 2, n - i - 2, "*/", 2) : NULL;
  return e ? (size_t)(e - s) + 2 : n;
}

/* A // comment at i: the offset of the newline that ends it (splices
 * continue it), or n. */
static size_t skip_line(const char *s, size_t n, size_t i) {
  while (i < n && s[i] != '\n') {
    size_t j = splice(s, n, i);
    i = j != i ? j : i + 1;
  }
  return i;
}

/* A string or character literal opening at i: past its end; an unclosed one
 * ends before the newline. */
static size_t skip_lit(const char *s, size_t n, size_t i) {
  char q = s[i++];
  while (i < n && s[i] != q && s[i] != '\n') {
    if (s[i] == '\\' && i + 1 < n) {
      size_t j = splice(s, n, i);
      i = j != i ? j : i + 2;
    } else {
      i++;
    }
  }
  return i < n && s[i] == q ? i + 1 : i;
}

/* A C++ raw string R"delim( ... )delim" whose quote is at i. */
static size_t skip_raw(const char *s, size_t n, size_t i) {
  size_t d0 = i + 1, d1 = d0;
  while (d1 < n && d1 - d0 <= 16 && s[d1] != '(' && s[d1] != '"' && s[d1] != '\n' && s[d1] != ' ') d1++;
  if (d1 >= n || s[d1] != '(') return skip_lit(s, n, i);
  for (size_t j = d1 + 1; j < n; j++)
    if (s[j] == ')' && j + 1 + (d1 - d0) < n && !memcmp(s + j + 1, s + d0, d1 - d0) && s[j + 1 + (d1 - d0)] == '"')
      return j + 2 + (d1 - d0);
  return n;
}

/* Blanks, block comments and splices inside a directive's line. */
static size_t skip_hblank(const char *s, size_t n, size_t i) {
  for (;;) {
    if (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\f' || s[i] == '\v')) {
      i++;
    } else if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
      i = skip_block(s, n, i);
    } else {
      size_t j = splice(s, n, i);
      if (j == i) return i;
      i = j;
    }
  }
}

static bool id_char(char ch) { return ident_char(ch) || (unsigned char)ch >= 0x80; }

void c_lex(const char *s, size_t n, CDirs *dirs, size_t *code0, void (*ident)(void *ctx, size_t a, size_t b),
           void *ctx) {
  size_t i = 0, rpos = 0;
  int row = 0;
  bool bol = true; /* only blanks and comments so far on this line */
  if (code0) *code0 = n;
  while (i < n) {
    char ch = s[i];
    if (ch == '\n') {
      i++, bol = true;
      continue;
    }
    if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v') {
      i++;
      continue;
    }
    if (ch == '\\' && splice(s, n, i) != i) {
      i = splice(s, n, i);
      continue;
    }
    if (ch == '/' && i + 1 < n && s[i + 1] == '*') {
      i = skip_block(s, n, i);
      continue;
    }
    if (ch == '/' && i + 1 < n && s[i + 1] == '/') {
      i = skip_line(s, n, i);
      continue;
    }
    if (ch == '#' && bol) {
      CDir d = {0};
      size_t ls = i;
      while (ls > 0 && s[ls - 1] != '\n') ls--;
      d.at = ls;
      size_t p = skip_hblank(s, n, i + 1);
      d.k0 = p;
      while (p < n && id_char(s[p])) p++;
      d.k1 = d.a0 = p;
      size_t e = p;
      while (e < n && s[e] != '\n') {
        size_t j = splice(s, n, e);
        if (j != e) e = j;
        else if (s[e] == '/' && e + 1 < n && s[e + 1] == '*') e = skip_block(s, n, e);
        else if (s[e] == '/' && e + 1 < n && s[e + 1] == '/') e = skip_line(s, n, e);
        else if (s[e] == '"' || s[e] == '\'') e = skip_lit(s, n, e);
        else e++;
      }
      d.a1 = e;
      d.end = e < n ? e + 1 : n;
      for (; rpos < ls; rpos++) row += s[rpos] == '\n';
      d.row = row;
      if (dirs) vec_push(dirs, d);
      i = d.end, bol = true;
      continue;
    }
    bol = false;
    if (code0 && *code0 == n) *code0 = i;
    if (id_char(ch) && !(ch >= '0' && ch <= '9')) {
      size_t j = i;
      while (j < n && id_char(s[j])) j++;
      if (j < n && (s[j] == '"' || s[j] == '\'')) {
        size_t l = j - i;
        bool raw = s[j] == '"' && s[j - 1] == 'R' &&
                   (l == 1 || (l == 2 && strchr("LuU", s[i])) || (l == 3 && s[i] == 'u' && s[i + 1] == '8'));
        bool pre = (l == 1 && strchr("LuU", s[i])) || (l == 2 && s[i] == 'u' && s[i + 1] == '8');
        if (raw) {
          i = skip_raw(s, n, j);
          continue;
        }
        if (pre) {
          i = skip_lit(s, n, j);
          continue;
        }
      }
      if (ident) ident(ctx, i, j);
      i = j;
      continue;
    }
    if ((ch >= '0' && ch <= '9') || (ch == '.' && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9')) {
      i++;
      while (i < n) {
        if (strchr("eEpP", s[i]) && i + 1 < n && (s[i + 1] == '+' || s[i + 1] == '-')) i += 2;
        else if (id_char(s[i]) || s[i] == '.') i++;
        else if (s[i] == '\'' && i + 1 < n && id_char(s[i + 1])) i += 2;
        else break;
      }
      continue;
    }
    if (ch == '"' || ch == '\'') {
      i = skip_lit(s, n, i);
      continue;
    }
    i++;
  }
}

/* Do s[a, b) hold one balanced brace block, '{' at a closing only at b - 1,
 * as the compiler's lexer sees it (comments, literals and directive lines
 * hold no braces)? A body whose braces an #if splits, or a macro that
 * opens or closes a block, fails: its extent is in doubt. */
bool c_braces_match(const char *s, size_t a, size_t b) {
  if (b <= a + 1 || s[a] != '{' || s[b - 1] != '}') return false;
  int depth = 0;
  bool bol = false;
  for (size_t i = a; i < b;) {
    char ch = s[i];
    if (ch == '\n') {
      i++, bol = true;
    } else if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v') {
      i++;
    } else if (ch == '\\' && splice(s, b, i) != i) {
      i = splice(s, b, i);
    } else if (ch == '/' && i + 1 < b && s[i + 1] == '*') {
      i = skip_block(s, b, i);
    } else if (ch == '/' && i + 1 < b && s[i + 1] == '/') {
      i = skip_line(s, b, i);
    } else if (ch == '#' && bol) {
      /* a directive: to its line's end (splices continue it) */
      while (i < b && s[i] != '\n') {
        size_t j = splice(s, b, i);
        if (j != i) i = j;
        else if (s[i] == '/' && i + 1 < b && s[i + 1] == '*') i = skip_block(s, b, i);
        else if (s[i] == '"' || s[i] == '\'') i = skip_lit(s, b, i);
        else i++;
      }
    } else {
      bol = false;
      if (ch == '"' && i > a && s[i - 1] == 'R') i = skip_raw(s, b, i);
      else if (ch == '"' || (ch == '\'' && !(i > a && ident_char(s[i - 1])))) i = skip_lit(s, b, i);
      else {
        if (ch == '{') depth++;
        else if (ch == '}' && --depth == 0 && i != b - 1) return false;
        i++;
      }
    }
  }
  return depth == 0;
}

bool c_dir_is(const char *s, const CDir *d, const char *w) {
  size_t l = strlen(w);
  return d->k1 - d->k0 == l && !memcmp(s + d->k0, w, l);
}

size_t c_dir_word(const char *s, size_t a, size_t b, size_t *e) {
  a = skip_hblank(s, b, a);
  if (a >= b || !id_char(s[a]) || (s[a] >= '0' && s[a] <= '9')) {
    *e = b;
    return b;
  }
  size_t j = a;
  while (j < b && id_char(s[j])) j++;
  *e = j;
  return a;
}

static bool word_is(const char *s, size_t n, const char *w) { return strlen(w) == n && !memcmp(s, w, n); }

static bool ends_with(const char *s, size_t n, const char *w) {
  size_t l = strlen(w);
  return n > l && !memcmp(s + n - l, w, l);
}

bool c_feature_macro(const char *s, size_t n) {
  static const char *const exact[] = {"_FILE_OFFSET_BITS", "_TIME_BITS", "_REENTRANT", "_THREAD_SAFE",
                                      "_LARGE_FILES", "_LARGE_FILE", "__EXTENSIONS__", "_POSIX_PTHREAD_SEMANTICS",
                                      "_MINIX", "_WIN32_WINNT", "_WIN32_IE", "WINVER", "NOMINMAX",
                                      "WIN32_LEAN_AND_MEAN", "_USE_MATH_DEFINES", NULL};
  for (int i = 0; exact[i]; i++)
    if (word_is(s, n, exact[i])) return true;
  if (n < 3 || s[0] != '_') return false;
  if (n > 7 && !memcmp(s, "__STDC_", 7)) return true; /* __STDC_FORMAT_MACROS, __STDC_WANT_LIB_EXT1__ */
  /* _GNU_SOURCE, _XOPEN_SOURCE(_EXTENDED), _POSIX_C_SOURCE, _DEFAULT_SOURCE,
   * _FORTIFY_SOURCE, _DARWIN_C_SOURCE; __BSD_VISIBLE; _CRT_SECURE_NO_WARNINGS */
  return ends_with(s, n, "_SOURCE") || ends_with(s, n, "_SOURCE_EXTENDED") || ends_with(s, n, "_VISIBLE") ||
         (n > 5 && !memcmp(s, "_CRT_", 5));
}

/* A header of the C library, POSIX, the C++ library or the CUDA toolkit:
 * it may read feature-test macros, never sets them. (Python.h, config.h
 * and library headers are not on the list: they may.) */
static bool system_header(const char *h, size_t n) {
  static const char *const dirs[] = {"sys/", "bits/", "linux/", "asm/", "asm-generic/", "arpa/", "net/",
                                     "netinet/", "netpacket/", "gnu/", "ext/", "tr1/", "tr2/", "debug/",
                                     "parallel/", "experimental/", "cuda/", "thrust/", "cub/", "nvtx3/", "crt/",
                                     "cooperative_groups/", "mach/", "machine/", "scsi/", "rpc/", NULL};
  static const char *const names[] = {
      "assert.h", "complex.h", "ctype.h", "errno.h", "fenv.h", "float.h", "inttypes.h", "iso646.h", "limits.h",
      "locale.h", "math.h", "setjmp.h", "signal.h", "stdalign.h", "stdarg.h", "stdatomic.h", "stdbit.h",
      "stdbool.h", "stdckdint.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h", "stdnoreturn.h", "string.h",
      "tgmath.h", "threads.h", "time.h", "uchar.h", "wchar.h", "wctype.h", "aio.h", "cpio.h", "dirent.h",
      "dlfcn.h", "fcntl.h", "fmtmsg.h", "fnmatch.h", "ftw.h", "glob.h", "grp.h", "iconv.h", "langinfo.h",
      "libgen.h", "monetary.h", "mqueue.h", "ndbm.h", "netdb.h", "nl_types.h", "poll.h", "pthread.h", "pwd.h",
      "regex.h", "sched.h", "search.h", "semaphore.h", "spawn.h", "strings.h", "syslog.h", "tar.h", "termios.h",
      "ulimit.h", "unistd.h", "utime.h", "utmp.h", "utmpx.h", "wordexp.h", "alloca.h", "malloc.h", "memory.h",
      "features.h", "endian.h", "byteswap.h", "err.h", "error.h", "execinfo.h", "getopt.h", "ifaddrs.h",
      "link.h", "elf.h", "paths.h", "sysexits.h", "ucontext.h", "values.h", "omp.h", "cpuid.h", "mntent.h",
      "shadow.h", "crypt.h", "argp.h", "obstack.h", "printf.h", "fts.h", "pty.h", "lastlog.h", "libintl.h",
      "mma.h", "vector_types.h", "vector_functions.h", "driver_types.h", "host_defines.h",
      "device_launch_parameters.h", "device_functions.h", "math_constants.h", "cooperative_groups.h",
      "builtin_types.h", "channel_descriptor.h", "texture_types.h", "surface_types.h", "termio.h", "sgtty.h",
      "arm_neon.h", "arm_sve.h", "ncrt.h", NULL};
  const char *base = h;
  for (size_t i = 0; i < n; i++)
    if (h[i] == '/') base = h + i + 1;
  size_t bl = n - (size_t)(base - h);
  if (!memchr(base, '.', bl)) return true; /* <vector>, <cstdio>: the C++ library */
  for (int i = 0; dirs[i]; i++)
    if (n > strlen(dirs[i]) && !memcmp(h, dirs[i], strlen(dirs[i]))) return true;
  if (base == h) {
    for (int i = 0; names[i]; i++)
      if (word_is(h, n, names[i])) return true;
    /* the CUDA toolkit: cuda_runtime.h, cublas_v2.h, curand.h, nvrtc.h,
     * nvToolsExt.h; compiler intrinsics: immintrin.h */
    if ((n > 2 && (!memcmp(h, "cu", 2) || !memcmp(h, "nv", 2))) || ends_with(h, n, "intrin.h")) return true;
  }
  return false;
}

/* ---- local headers -------------------------------------------------------- */

/* Bounds on what one file's headers may cost: beyond them a header counts
 * as unknown (it may set feature-test macros; its macros stay unknown). */
#define NC_HDR_MAX_FILES 256
#define NC_HDR_MAX_BYTES ((size_t)64 << 20)
#define NC_HDR_MAX_DEPTH 24

static char *dir_of(const char *path) {
  const char *sl = strrchr(path, '/');
  return sl ? xstrndup(path, sl == path ? 1 : (size_t)(sl - path)) : xstrdup(".");
}

/* Where `name` (from an #include in a file in `dir`) is: next to the file,
 * next to the file being rewritten, or under SRC. NULL if not found. */
static char *find_header(CFile *c, const char *dir, const char *name) {
  if (!c->job->origin) return NULL;
  char *cand[3] = {0};
  cand[0] = name[0] == '/' ? xstrdup(name) : xasprintf("%s/%s", dir, name);
  if (name[0] != '/') {
    char *top = dir_of(c->job->origin);
    cand[1] = xasprintf("%s/%s", top, name);
    free(top);
    size_t ol = strlen(c->job->origin), rl = strlen(c->job->rel);
    if (ol > rl && !strcmp(c->job->origin + ol - rl, c->job->rel) && c->job->origin[ol - rl - 1] == '/')
      cand[2] = xasprintf("%.*s%s", (int)(ol - rl), c->job->origin, name);
  }
  char *found = NULL;
  for (int i = 0; i < 3 && !found; i++) {
    char rp[PATH_MAX];
    struct stat st;
    if (cand[i] && !stat(cand[i], &st) && S_ISREG(st.st_mode) && realpath(cand[i], rp)) found = xstrdup(rp);
  }
  for (int i = 0; i < 3; i++) free(cand[i]);
  return found;
}

static int scan_text(CFile *c, const char *s, size_t n, const char *dir, int depth);

/* What the header at path (a realpath, owned) does to feature-test macros:
 * CONF_SETS, CONF_MAYBE (it includes a header that cannot be found, or it
 * cannot be read), CONF_NO. Read once; its #defines go to c->defs. */
static int header_configures(CFile *c, char *path, int depth) {
  for (size_t i = 0; i < c->hdrs.n; i++)
    if (!strcmp(c->hdrs.v[i].path, path)) {
      free(path);
      return c->hdrs.v[i].configures < 0 ? CONF_NO : c->hdrs.v[i].configures;
    }
  if (depth > NC_HDR_MAX_DEPTH || c->hdrs.n >= NC_HDR_MAX_FILES || c->hdr_bytes >= NC_HDR_MAX_BYTES) {
    free(path);
    return CONF_MAYBE;
  }
  CHdr h = {path, -1};
  size_t at = c->hdrs.n;
  vec_push(&c->hdrs, h);
  char *text;
  size_t len;
  int conf = CONF_MAYBE;
  if (read_file(path, &text, &len) == 0) {
    c->hdr_bytes += len;
    if (c->hdr_bytes <= NC_HDR_MAX_BYTES) {
      char *dir = dir_of(path);
      conf = scan_text(c, text, len, dir, depth + 1);
      free(dir);
    }
    free(text);
  }
  c->hdrs.v[at].configures = conf;
  return conf;
}

/* The header an #include names: its name, and whether in <...>; false for a
 * computed include (`#include FOO_H`). */
static bool include_name(const char *s, const CDir *d, size_t *a, size_t *b, bool *angle) {
  size_t p = skip_hblank(s, d->a1, d->a0);
  if (p >= d->a1 || (s[p] != '<' && s[p] != '"')) return false;
  *angle = s[p] == '<';
  const char *e = memchr(s + p + 1, *angle ? '>' : '"', d->a1 - p - 1);
  if (!e || e == s + p + 1) return false;
  *a = p + 1, *b = (size_t)(e - s);
  return true;
}

static bool is_include(const char *s, const CDir *d) {
  return c_dir_is(s, d, "include") || c_dir_is(s, d, "include_next") || c_dir_is(s, d, "import");
}

static int include_configures(CFile *c, const char *s, const CDir *d, const char *dir, int depth) {
  size_t a, b;
  bool angle;
  if (!include_name(s, d, &a, &b, &angle)) return CONF_MAYBE;
  if (angle && system_header(s + a, b - a)) return CONF_NO;
  char *name = xstrndup(s + a, b - a);
  char *path = find_header(c, dir, name);
  free(name);
  return path ? header_configures(c, path, depth) : CONF_MAYBE;
}

/* Read s (a file in dir): its #defines into c->defs; whether it sets a
 * feature-test macro or includes a header that does (or may). */
static int scan_text(CFile *c, const char *s, size_t n, const char *dir, int depth) {
  CDirs dirs = {0};
  int conf = CONF_NO;
  c_lex(s, n, &dirs, NULL, NULL, NULL);
  for (size_t i = 0; i < dirs.n; i++) {
    const CDir *d = &dirs.v[i];
    bool def = c_dir_is(s, d, "define");
    if (def || c_dir_is(s, d, "undef")) {
      size_t e, w = c_dir_word(s, d->a0, d->a1, &e);
      if (w == d->a1) continue;
      if (c_feature_macro(s + w, e - w)) conf = CONF_SETS;
      if (!def) continue;
      CDef m = {xstrndup(s + w, e - w), NULL, NULL, e < d->a1 && s[e] == '('};
      size_t body = e;
      if (m.fnlike) {
        const char *close = memchr(s + e, ')', d->a1 - e);
        body = close ? (size_t)(close - s) + 1 : d->a1;
        m.params = xstrndup(s + e + 1, body > e + 1 ? body - e - 2 : 0);
      }
      m.body = xstrndup(s + body, d->a1 - body);
      vec_push(&c->defs, m);
    } else if (is_include(s, d)) {
      int ic = include_configures(c, s, d, dir, depth);
      if (ic > conf) conf = ic;
    }
  }
  vec_free(&dirs);
  return conf;
}

int c_include_configures(CFile *c, const CDir *d) {
  char *dir = c->job->origin ? dir_of(c->job->origin) : xstrdup(".");
  int conf = include_configures(c, c->src, d, dir, 0);
  free(dir);
  return conf;
}

/* ---- macros that only decorate a declaration ------------------------------ */

/* Words a declaration may carry besides its type and name, which nothing
 * here needs to see: storage classes, function specifiers, calling
 * conventions, export decorations. (`__attribute__`, `__declspec`,
 * `noexcept` and `throw` take a parenthesized argument; `extern` a "C".) */
/* Calling conventions and the platform macros for them. The first ones
 * (reserved names, and <windows.h>'s macros that name nothing else) are
 * blanked where they appear even without a definition in sight:
 * tree-sitter knows only some of them. */
static const char *const decor_names[] = {
    "__cdecl", "__stdcall", "__fastcall", "__vectorcall", "__thiscall", "__clrcall", "__regcall", "__pascal",
    "__syscall", "__far", "__near", "__export", "__loadds", "__saveregs", "__watcall", "WINAPI", "WINAPIV",
    "APIENTRY", "NTAPI", "STDMETHODCALLTYPE", "WINBASEAPI", NULL,
    /* only in definitions: these may name other things elsewhere */
    "_cdecl", "_stdcall", "_fastcall", "_pascal", "_System", "_Optlink", "_far", "_near", "_export", "CALLBACK",
    NULL};

static bool decor_word(const char *w, size_t l) {
  static const char *const words[] = {
      "static", "extern", "inline", "__inline", "__inline__", "__forceinline", "__forceinline__", "__noinline__",
      "_Noreturn", "noreturn", "__extension__", "__attribute__", "__attribute", "__declspec", "virtual",
      "explicit", "override", "final", "noexcept", "throw", "__host__", "const", "volatile", "restrict",
      "__restrict", "__restrict__", "DECLSPEC_IMPORT", NULL};
  for (int i = 0; words[i]; i++)
    if (word_is(w, l, words[i])) return true;
  for (int i = 0, nulls = 0; nulls < 2; i++)
    if (!decor_names[i]) nulls++;
    else if (word_is(w, l, decor_names[i])) return true;
  return false;
}

static bool risky_word(const char *w, size_t l) {
  return word_is(w, l, "constexpr") || word_is(w, l, "consteval") || word_is(w, l, "constinit") ||
         word_is(w, l, "__device__") || word_is(w, l, "__global__");
}

enum { MK_UNKNOWN, MK_DECOR, MK_RISKY, MK_OTHER, MK_PENDING };

typedef struct {
  const char *name;
  size_t first, count; /* its definitions: order[first, first + count) */
  int kind;
} MacroGroup;

static MacroGroup *group_find(MacroGroup *g, size_t n, const char *w, size_t l) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int r = strncmp(g[mid].name, w, l);
    if (!r) r = g[mid].name[l] ? 1 : 0;
    if (!r) return &g[mid];
    if (r < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

/* Past the balanced (...) or [[...]] group opening at i (after blanks), or
 * i if none. */
static size_t skip_group(const char *s, size_t n, size_t i) {
  size_t j = skip_hblank(s, n, i);
  if (j >= n || (s[j] != '(' && s[j] != '[')) return i;
  char open = s[j], close = open == '(' ? ')' : ']';
  int depth = 0;
  for (; j < n; j++) {
    if (s[j] == '"' || s[j] == '\'') {
      j = skip_lit(s, n, j) - 1;
      continue;
    }
    if (s[j] == open) depth++;
    else if (s[j] == close && !--depth) return j + 1;
  }
  return n;
}

/* What one definition body is, given what is known of the macros it uses. */
static int body_kind(const char *s, MacroGroup *g, size_t ng) {
  size_t n = strlen(s);
  int kind = MK_DECOR;
  for (size_t i = skip_hblank(s, n, 0); i < n; i = skip_hblank(s, n, i)) {
    if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') break;
    if (s[i] == '[' && i + 1 < n && s[i + 1] == '[') { /* [[attribute]] */
      i = skip_group(s, n, i);
      continue;
    }
    if (!id_char(s[i]) || (s[i] >= '0' && s[i] <= '9')) return MK_OTHER;
    size_t j = i;
    while (j < n && id_char(s[j])) j++;
    const char *w = s + i;
    size_t l = j - i;
    if (risky_word(w, l)) return MK_RISKY;
    if (decor_word(w, l)) {
      if (word_is(w, l, "extern")) { /* extern "C" */
        size_t k = skip_hblank(s, n, j);
        if (k < n && s[k] == '"') j = skip_lit(s, n, k);
      } else if (word_is(w, l, "__attribute__") || word_is(w, l, "__attribute") || word_is(w, l, "__declspec") ||
                 word_is(w, l, "noexcept") || word_is(w, l, "throw")) {
        j = skip_group(s, n, j);
      }
      i = j;
      continue;
    }
    MacroGroup *m = group_find(g, ng, w, l);
    if (!m || m->kind == MK_OTHER) return MK_OTHER;
    if (m->kind == MK_RISKY) return MK_RISKY;
    if (m->kind != MK_DECOR) kind = MK_PENDING;
    i = j;
  }
  return kind;
}

static int str_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int def_cmp(const void *a, const void *b) {
  return strcmp(((const CDef *)a)->name, ((const CDef *)b)->name);
}

/* Read the defines of the file and its local headers (once). */
static void read_defs(CFile *c) {
  if (c->defs_read) return;
  c->defs_read = true;
  char *dir = c->job->origin ? dir_of(c->job->origin) : xstrdup(".");
  scan_text(c, c->src, c->len, dir, 0);
  free(dir);
}

bool c_is_macro(CFile *c, const char *name) {
  read_defs(c);
  if (!c->def_names.n && c->defs.n) {
    for (size_t i = 0; i < c->defs.n; i++) vec_push(&c->def_names, c->defs.v[i].name);
    qsort(c->def_names.v, c->def_names.n, sizeof *c->def_names.v, str_cmp);
  }
  return c->def_names.n && bsearch(&name, c->def_names.v, c->def_names.n, sizeof *c->def_names.v, str_cmp);
}

/* A function-like macro that expands to some of its arguments in the
 * order it takes them, and decorations: `#define PNG_FUNCTION(type, name,
 * args, attributes) attributes type name args`. A call whose arguments
 * out of that order are decorations (PNG_NORETURN) is parsed as what it
 * expands to, without them: the name, parentheses, commas and dropped
 * arguments blanked. */
typedef struct {
  const char *name;
  int nparams;
  int order[16]; /* the parameters in the body, in its order */
  int norder;
} DeclMacro;

typedef struct {
  CFile *c;
  bool any;
  char *out;
  DeclMacro *dm;
  size_t ndm;
  const char **sm; /* statement macros */
  size_t nsm;
} BlankCtx;

static bool is_attr(CFile *c, const char *w, size_t l) {
  size_t lo = 0, hi = c->attr.n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int r = strncmp(c->attr.v[mid], w, l);
    if (!r) r = c->attr.v[mid][l] ? 1 : 0;
    if (!r) return true;
    if (r < 0) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

static void blank(BlankCtx *x, size_t a, size_t b) {
  if (!x->out) {
    x->out = xmalloc(x->c->len + 1);
    memcpy(x->out, x->c->src, x->c->len);
    x->out[x->c->len] = 0;
  }
  for (size_t i = a; i < b; i++)
    if (x->out[i] != '\n' && x->out[i] != '\r') x->out[i] = ' ';
  x->any = true;
  CSpan sp = {a, b};
  vec_push(&x->c->blanks, sp);
}

/* Blanks, newlines and comments. */
static size_t skip_space(const char *s, size_t n, size_t i) {
  for (;;) {
    size_t j = skip_hblank(s, n, i);
    if (j < n && s[j] == '\n') j++;
    else if (j + 1 < n && s[j] == '/' && s[j + 1] == '/') j = skip_line(s, n, j);
    if (j == i) return i;
    i = j;
  }
}

/* Does s[a, b) hold only decorations (or nothing)? */
static bool decor_only(CFile *c, const char *s, size_t a, size_t b) {
  for (size_t i = skip_space(s, b, a); i < b; i = skip_space(s, b, i)) {
    if (s[i] == '[' && i + 1 < b && s[i + 1] == '[') {
      i = skip_group(s, b, i);
      continue;
    }
    if (!id_char(s[i]) || (s[i] >= '0' && s[i] <= '9')) return false;
    size_t j = i;
    while (j < b && id_char(s[j])) j++;
    if (!decor_word(s + i, j - i) && !is_attr(c, s + i, j - i)) return false;
    if (word_is(s + i, j - i, "__attribute__") || word_is(s + i, j - i, "__attribute") ||
        word_is(s + i, j - i, "__declspec"))
      j = skip_group(s, b, j);
    i = j;
  }
  return true;
}

/* The arguments of a macro called at [a, b): the offsets of its '(', the
 * commas between arguments and its ')' in cut (at most 18), their number
 * in *nc. False if there are none, too many, or a directive among them. */
static bool call_args(const char *s, size_t n, size_t b, size_t cut[18], size_t *nc) {
  size_t p = skip_space(s, n, b);
  if (p >= n || s[p] != '(') return false;
  *nc = 0;
  cut[(*nc)++] = p;
  int depth = 0;
  size_t i;
  for (i = p; i < n; i++) {
    char ch = s[i];
    if (ch == '"' || ch == '\'') {
      i = skip_lit(s, n, i) - 1;
    } else if (ch == '/' && i + 1 < n && (s[i + 1] == '*' || s[i + 1] == '/')) {
      i = (s[i + 1] == '*' ? skip_block(s, n, i) : skip_line(s, n, i)) - 1;
    } else if (ch == '\n') {
      size_t k = skip_hblank(s, n, i + 1);
      if (k < n && s[k] == '#') return false; /* a directive among the arguments */
    } else if (ch == '(' || ch == '[' || ch == '{') {
      depth++;
    } else if (ch == ')' || ch == ']' || ch == '}') {
      if (--depth == 0) break;
    } else if (ch == ',' && depth == 1) {
      if (*nc > 16) return false;
      cut[(*nc)++] = i;
    }
  }
  if (i >= n) return false;
  cut[(*nc)++] = i;
  return true;
}

/* A call of a statement macro (its body ends with ';': `#define
 * PNG_UNUSED(param) (void)param;`) with no ';' after it: parsed as the
 * expression statement of its arguments, the name and '(' blanked and the
 * ')' read as ';'. */
static void blank_stmt_call(BlankCtx *x, size_t a, size_t b) {
  const char *s = x->c->src;
  size_t n = x->c->len, cut[18], nc;
  if (!call_args(s, n, b, cut, &nc)) return;
  size_t after = skip_space(s, n, cut[nc - 1] + 1);
  if (after < n && s[after] == ';') return; /* a statement already */
  blank(x, a, cut[0] + 1);
  x->out[cut[nc - 1]] = ';';
  CSpan sp = {cut[nc - 1], cut[nc - 1] + 1};
  vec_push(&x->c->blanks, sp);
}

/* A call of declarator macro m at [a, b): blank what the expansion drops. */
static void blank_decl_call(BlankCtx *x, const DeclMacro *m, size_t a, size_t b) {
  const char *s = x->c->src;
  size_t n = x->c->len, cut[18], nc;
  if (!call_args(s, n, b, cut, &nc)) return;
  size_t p = cut[0], i = cut[nc - 1];
  int nargs = (int)nc - 1;
  if (nargs == 1 && m->nparams == 0 && skip_space(s, i, p + 1) == i) nargs = 0;
  if (nargs != m->nparams) return;
  bool keep[16] = {false};
  int last = -1;
  for (int k = 0; k < m->norder; k++) {
    int pi = m->order[k];
    if (decor_only(x->c, s, cut[pi] + 1, cut[pi + 1])) continue;
    if (pi <= last) return; /* an argument the expansion moves */
    keep[pi] = true, last = pi;
  }
  blank(x, a, b);
  for (size_t k = 0; k < nc; k++) blank(x, cut[k], cut[k] + 1);
  for (int k = 0; k < nargs; k++)
    if (!keep[k]) blank(x, cut[k] + 1, cut[k + 1]);
}

static void blank_ident(void *ctx, size_t a, size_t b) {
  BlankCtx *x = ctx;
  const char *w = x->c->src + a;
  /* `LUA_API int f(...)`: the words after it are untouched */
  if (is_attr(x->c, w, b - a)) {
    blank(x, a, b);
    return;
  }
  /* both lists are sorted by name */
  size_t lo = 0, hi = x->ndm, l = b - a;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int r = strncmp(x->dm[mid].name, w, l);
    if (!r) r = x->dm[mid].name[l] ? 1 : 0;
    if (!r) {
      blank_decl_call(x, &x->dm[mid], a, b);
      return;
    }
    if (r < 0) lo = mid + 1;
    else hi = mid;
  }
  lo = 0, hi = x->nsm;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int r = strncmp(x->sm[mid], w, l);
    if (!r) r = x->sm[mid][l] ? 1 : 0;
    if (!r) {
      blank_stmt_call(x, a, b);
      return;
    }
    if (r < 0) lo = mid + 1;
    else hi = mid;
  }
}

/* Does a macro body end with ';' (comments and blanks aside)? */
static bool ends_stmt(const char *s) {
  size_t n = strlen(s);
  char last = 0;
  for (size_t i = skip_hblank(s, n, 0); i < n; i = skip_hblank(s, n, i)) {
    if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') break;
    if (s[i] == '"' || s[i] == '\'') {
      i = skip_lit(s, n, i), last = '"';
      continue;
    }
    last = s[i++];
  }
  return last == ';';
}

/* Is def a declarator macro? Then fill m. */
static bool decl_macro(CFile *c, const CDef *d, DeclMacro *m) {
  const char *ps = d->params;
  size_t pn = strlen(ps);
  const char *pw[16];
  size_t pl[16];
  int np = 0;
  for (size_t i = skip_hblank(ps, pn, 0); i < pn; i = skip_hblank(ps, pn, i)) {
    if (!id_char(ps[i]) || np == 16) return false;
    size_t j = i;
    while (j < pn && id_char(ps[j])) j++;
    pw[np] = ps + i, pl[np++] = j - i;
    j = skip_hblank(ps, pn, j);
    if (j < pn && ps[j] != ',') return false;
    i = j < pn ? j + 1 : j;
  }
  m->name = d->name, m->nparams = np, m->norder = 0;
  const char *s = d->body;
  size_t n = strlen(s);
  for (size_t i = skip_hblank(s, n, 0); i < n; i = skip_hblank(s, n, i)) {
    if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') break;
    if (s[i] == '[' && i + 1 < n && s[i + 1] == '[') {
      i = skip_group(s, n, i);
      continue;
    }
    if (!id_char(s[i]) || (s[i] >= '0' && s[i] <= '9')) return false;
    size_t j = i;
    while (j < n && id_char(s[j])) j++;
    int pi = -1;
    for (int k = 0; k < np && pi < 0; k++)
      if (pl[k] == j - i && !memcmp(pw[k], s + i, j - i)) pi = k;
    if (pi >= 0) {
      for (int k = 0; k < m->norder; k++)
        if (m->order[k] == pi) return false; /* used twice */
      m->order[m->norder++] = pi;
    } else if (decor_word(s + i, j - i) || is_attr(c, s + i, j - i)) {
      if (word_is(s + i, j - i, "__attribute__") || word_is(s + i, j - i, "__attribute") ||
          word_is(s + i, j - i, "__declspec"))
        j = skip_group(s, n, j);
    } else {
      return false;
    }
    i = j;
  }
  return m->norder > 0;
}

bool c_macros_blank(CFile *c) {
  read_defs(c);
  /* group the definitions by name */
  if (c->defs.n) qsort(c->defs.v, c->defs.n, sizeof *c->defs.v, def_cmp);
  VEC(MacroGroup) g = {0};
  for (size_t i = 0; i < c->defs.n;) {
    size_t j = i;
    while (j < c->defs.n && !strcmp(c->defs.v[j].name, c->defs.v[i].name)) j++;
    MacroGroup m = {c->defs.v[i].name, i, j - i, MK_UNKNOWN};
    for (size_t k = i; k < j; k++)
      if (c->defs.v[k].fnlike) m.kind = MK_OTHER;
    vec_push(&g, m);
    i = j;
  }
  /* least fixpoint: a macro decorates when every definition holds only
   * decorations and macros that decorate (a cycle decorates nothing) */
  for (int round = 0; round < 32; round++) {
    bool changed = false;
    for (size_t i = 0; i < g.n; i++) {
      if (g.v[i].kind != MK_UNKNOWN) continue;
      int kind = MK_DECOR;
      for (size_t k = g.v[i].first; k < g.v[i].first + g.v[i].count && kind != MK_OTHER && kind != MK_RISKY; k++) {
        int bk = body_kind(c->defs.v[k].body, g.v, g.n);
        if (bk == MK_OTHER || bk == MK_RISKY || kind == MK_DECOR) kind = bk;
      }
      if (kind != MK_PENDING) g.v[i].kind = kind, changed = true;
    }
    if (!changed) break;
  }
  for (size_t i = 0; i < g.n; i++) {
    if (g.v[i].kind == MK_DECOR) vec_push(&c->attr, xstrdup(g.v[i].name));
    else if (g.v[i].kind == MK_RISKY) vec_push(&c->risky, xstrdup(g.v[i].name));
  }
  /* calling conventions, unless defined to something else here */
  for (int i = 0; decor_names[i]; i++)
    if (!group_find(g.v, g.n, decor_names[i], strlen(decor_names[i])))
      vec_push(&c->attr, xstrdup(decor_names[i]));
  const Rules *r = c->job->rules;
  for (size_t i = 0; r && i < r->attr_macros.n; i++) vec_push(&c->attr, xstrdup(r->attr_macros.v[i]));
  if (c->attr.n) qsort(c->attr.v, c->attr.n, sizeof *c->attr.v, str_cmp);
  /* declarator macros: defined once (or the same way everywhere);
   * statement macros: every definition ends with ';' */
  VEC(DeclMacro) dm = {0};
  VEC(const char *) sm = {0};
  for (size_t i = 0; i < g.n; i++) {
    const CDef *d0 = &c->defs.v[g.v[i].first];
    bool same = d0->fnlike, stmt = d0->fnlike;
    for (size_t k = g.v[i].first; k < g.v[i].first + g.v[i].count; k++) {
      const CDef *d = &c->defs.v[k];
      same &= d->fnlike && !strcmp(d->params, d0->params) && !strcmp(d->body, d0->body);
      stmt &= d->fnlike && ends_stmt(d->body);
    }
    DeclMacro m;
    /* in name order, as the groups are */
    if (same && decl_macro(c, d0, &m)) vec_push(&dm, m);
    else if (stmt) vec_push(&sm, d0->name);
  }
  vec_free(&g);
  BlankCtx x = {c, false, NULL, dm.v, dm.n, sm.v, sm.n};
  c_lex(c->src, c->len, NULL, NULL, blank_ident, &x);
  vec_free(&dm);
  vec_free(&sm);
  c->psrc = x.out;
  return x.any;
}

static void expand_into(CFile *c, Buf *out, const char *h, size_t n, int depth) {
  if (depth > 8) return;
  for (size_t i = 0; i < n;) {
    if (!id_char(h[i]) || (h[i] >= '0' && h[i] <= '9')) {
      i++;
      continue;
    }
    size_t j = i;
    while (j < n && id_char(h[j])) j++;
    if (is_attr(c, h + i, j - i)) {
      /* the definitions are sorted by name (c_macros_blank) */
      for (size_t k = 0; k < c->defs.n; k++)
        if (word_is(h + i, j - i, c->defs.v[k].name) && !c->defs.v[k].fnlike) {
          buf_putc(out, ' ');
          buf_puts(out, c->defs.v[k].body);
          expand_into(c, out, c->defs.v[k].body, strlen(c->defs.v[k].body), depth + 1);
        }
    }
    i = j;
  }
}

char *c_expand_attrs(CFile *c, const char *h, size_t n) {
  Buf out = {0};
  buf_add(&out, h, n);
  if (c->attr.n) expand_into(c, &out, h, n, 0);
  return buf_steal(&out);
}

void c_macros_free(CFile *c) {
  vec_free(&c->def_names); /* the defs own the names */
  for (size_t i = 0; i < c->defs.n; i++) free(c->defs.v[i].name), free(c->defs.v[i].params), free(c->defs.v[i].body);
  vec_free(&c->defs);
  for (size_t i = 0; i < c->hdrs.n; i++) free(c->hdrs.v[i].path);
  vec_free(&c->hdrs);
  for (size_t i = 0; i < c->attr.n; i++) free(c->attr.v[i]);
  vec_free(&c->attr);
  vec_free(&c->dirs);
  vec_free(&c->blanks);
  free(c->psrc);
  c->psrc = NULL;
}
