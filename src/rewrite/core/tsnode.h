/* tsnode: the tree-sitter helpers every language rewriter uses, in one
 * place (internal to the core: python/ and c/ include it, nothing outside
 * the core does). A node's type, rows and text, a child by field name, the
 * name patterns of rules. All static inline: no file of the core calls
 * another for them, so they add no edge to tests/arch's graph. And the
 * step of a pre-order walk with a cursor.
 *
 * Rows are 0-based. row1 is the row of the node's end point; last_row is
 * the row of its last byte (a node ending at column 0, after a newline,
 * ends on the row before: Python's blocks do). Text is malloc'ed. */
#ifndef NC_TSNODE_H
#define NC_TSNODE_H

#include <stdbool.h>
#include <string.h>

#include <tree_sitter/api.h>

#include "util.h"

static inline bool is(TSNode n, const char *type) { return !strcmp(ts_node_type(n), type); }

static inline int row0(TSNode n) { return (int)ts_node_start_point(n).row; }
static inline int row1(TSNode n) { return (int)ts_node_end_point(n).row; }
static inline int last_row(TSNode n) {
  TSPoint p = ts_node_end_point(n);
  return p.column == 0 && p.row > 0 && ts_node_end_byte(n) > ts_node_start_byte(n) ? (int)p.row - 1 : (int)p.row;
}

/* The child in field `name` ("body", "name", "function"...), or a null node. */
static inline TSNode child_by_field(TSNode n, const char *name) {
  return ts_node_child_by_field_name(n, name, (uint32_t)strlen(name));
}

/* A pre-order walk's next node: into the first child when descend, else
 * the next sibling of the node or of its nearest ancestor that has one.
 * False when the walk is over (back at the root). */
static inline bool walk_next(TSTreeCursor *c, bool descend) {
  if (descend && ts_tree_cursor_goto_first_child(c)) return true;
  do {
    if (ts_tree_cursor_goto_next_sibling(c)) return true;
  } while (ts_tree_cursor_goto_parent(c));
  return false;
}

/* n's bytes of src. */
static inline char *node_text(const char *src, TSNode n) {
  uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
  return xstrndup(src + a, b - a);
}

/* n's bytes of src without blanks and backslashes (a line continuation):
 * a dotted name or a callee as one word ("self.attn", "F.softmax"). */
static inline char *node_squeezed(const char *src, TSNode n) {
  uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
  char *t = xmalloc(b - a + 1), *w = t;
  for (uint32_t i = a; i < b; i++)
    if (src[i] != ' ' && src[i] != '\t' && src[i] != '\n' && src[i] != '\r' && src[i] != '\\') *w++ = src[i];
  *w = 0;
  return t;
}

/* A rule's name pattern: the name itself or a glob (util.h's glob_match). */
static inline bool name_match(const char *pat, const char *name) {
  return !strcmp(pat, name) || glob_match(pat, name);
}

#endif
