/* cstmts: statement lists of a function body, and wrapping some of them
 * in a new block `{ NCRT_RANGE("name"); ... }` only where that keeps the
 * program's meaning: the block must not hide a name it declares from later
 * code, nor hold a label that a goto outside it jumps to (that would enter
 * the range variable's scope). Leading labels stay outside the block. */
#include <stdlib.h>
#include <string.h>

#include "crewrite.h"

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
  return ts_node_is_named(n) && ((l > 10 && !strcmp(t + l - 10, "_statement") && strcmp(t, "compound_statement") &&
                                  strcmp(t, "case_statement")) ||
                                 !strcmp(t, "for_range_loop"));
}

/* Statement lists directly under a statement: compound bodies of if/else,
 * loops, try/catch, switch cases, bare blocks, and a body without braces
 * (`if (x) f();`, `else if`, a loop body, the statement after a label),
 * which is a list of one: wrapping it in `{ ... }` keeps it one statement,
 * and a label stays outside the new block. */
void c_stmts_sub_blocks(TSNode s, CNodes *out) {
  if (is(s, "compound_statement")) { /* a bare block is its own list */
    vec_push(out, s);
    return;
  }
  TSTreeCursor cur = ts_tree_cursor_new(s);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do {
      TSNode k = ts_tree_cursor_current_node(&cur);
      if (is(k, "compound_statement")) {
        if (is(s, "switch_statement")) { /* its cases */
          for (uint32_t i = 0; i < ts_node_named_child_count(k); i++)
            if (is(ts_node_named_child(k, i), "case_statement")) vec_push(out, ts_node_named_child(k, i));
        } else {
          vec_push(out, k);
        }
      } else if (is(k, "else_clause") || is(k, "catch_clause")) {
        c_stmts_sub_blocks(k, out);
      } else if (is(k, "case_statement") || is_bare_body(k)) {
        vec_push(out, k);
      }
    } while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
}

/* Children of a statement list that are statements (a case_statement's
 * first named child is its value); a bare body is its own list. */
void c_stmts_list(TSNode block, CNodes *out) {
  if (!is(block, "compound_statement") && !is(block, "case_statement")) {
    out->n = 0;
    vec_push(out, block);
    return;
  }
  statements(block, out);
  if (is(block, "case_statement")) {
    TSNode v = child_by_field(block, "value");
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
static void declarator_names(CFile *c, TSNode d, CStrs *names) {
  while (!ts_node_is_null(d)) {
    if (is(d, "init_declarator") || is(d, "function_declarator") || is(d, "pointer_declarator") ||
        is(d, "reference_declarator") || is(d, "array_declarator") || is(d, "parenthesized_declarator") ||
        is(d, "attributed_declarator")) {
      TSNode inner = child_by_field(d, "declarator");
      d = ts_node_is_null(inner) ? ts_node_named_child(d, 0) : inner;
      continue;
    }
    if (is(d, "structured_binding_declarator")) {
      for (uint32_t i = 0; i < ts_node_named_child_count(d); i++)
        if (is(ts_node_named_child(d, i), "identifier")) vec_push(names, node_text(c->src, ts_node_named_child(d, i)));
    } else if (is(d, "identifier") || is(d, "type_identifier")) {
      vec_push(names, node_text(c->src, d));
    }
    return;
  }
}

static void tag_names(CFile *c, TSNode t, CStrs *names) {
  if (!is(t, "struct_specifier") && !is(t, "union_specifier") && !is(t, "enum_specifier") &&
      !is(t, "class_specifier"))
    return;
  TSNode nm = child_by_field(t, "name"), body = child_by_field(t, "body");
  if (ts_node_is_null(body)) return; /* a use, not a definition */
  if (!ts_node_is_null(nm)) vec_push(names, node_text(c->src, nm));
  if (is(t, "enum_specifier"))
    for (uint32_t i = 0; i < ts_node_named_child_count(body); i++) {
      TSNode e = ts_node_named_child(body, i);
      if (is(e, "enumerator")) {
        TSNode en = child_by_field(e, "name");
        if (!ts_node_is_null(en)) vec_push(names, node_text(c->src, en));
      }
    }
}

static void declared_names(CFile *c, TSNode n, CStrs *names) {
  if (is(n, "using_declaration")) {
    vec_push(names, xstrdup("*"));
    return;
  }
  if (is(n, "alias_declaration") || is(n, "namespace_alias_definition")) {
    TSNode nm = child_by_field(n, "name");
    if (!ts_node_is_null(nm)) vec_push(names, node_text(c->src, nm));
    return;
  }
  if (is(n, "function_definition")) { /* GNU C nested function */
    TSNode d = child_by_field(n, "declarator");
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

static bool text_is(CFile *c, TSNode n, const char *name) {
  size_t l = ts_node_end_byte(n) - ts_node_start_byte(n);
  return l == strlen(name) && !memcmp(c->src + ts_node_start_byte(n), name, l);
}

static bool uses_name(CFile *c, TSNode n, const char *name) {
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
char *c_stmts_hidden(CFile *c, CNodes *kids, int i0, int i1) {
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
static void labels_in(CFile *c, TSNode n, CStrs *out) {
  if (is(n, "lambda_expression")) return;
  if (is(n, "labeled_statement")) {
    TSNode l = child_by_field(n, "label");
    if (!ts_node_is_null(l)) vec_push(out, node_text(c->src, l));
  }
  for (uint32_t i = 0; i < ts_node_named_child_count(n); i++) labels_in(c, ts_node_named_child(n, i), out);
}

/* A goto to `label` in n outside the bytes [b0, b1). */
static bool goto_from_outside(CFile *c, TSNode n, const char *label, size_t b0, size_t b1) {
  if (ts_node_start_byte(n) >= b0 && ts_node_end_byte(n) <= b1) return false;
  if (is(n, "goto_statement")) {
    TSNode l = child_by_field(n, "label");
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
static char *entered_by_goto(CFile *c, TSNode open, CNodes *kids, int i0, int i1) {
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

bool c_stmts_wrap(CFile *c, CNodes *kids, int i0, int i1, const Rule *r, const char *name, const char *kind) {
  const RuleDoc *doc = &c->job->rules->doc;
  TSNode first = kids->v[i0], last = stmt_last(kids->v[i1]);
  for (int i = i0; i <= i1; i++)
    if (!is_stmt(kids->v[i])) {
      ruledoc_diag(doc, &c->job->diags, DIAG_ERROR, r->at,
                   "lines %d-%d of %s include a preprocessor directive; a range must hold whole statements",
                   row0(first) + 1, row1(last) + 1, c->job->rel);
      return false;
    }
  char *bad = c_stmts_hidden(c, kids, i0, i1);
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
  CWrap w = {ts_node_start_byte(open), ts_node_end_byte(last), row0(first), row1(last), r, xstrdup(name), kind, false};
  vec_push(&c->wraps, w);
  return true;
}

