/* ruledit: changing a rule file the way a person would, by inserting and
 * deleting text at the right places, never by re-printing the document: the
 * rest of the file (comments, key order, quoting, flow or block style) stays
 * byte for byte as written. history.h writes the result and records it.
 *
 * Ownership: TextEdits own their inserted and removed strings (textedits_free);
 * strings returned by functions here are malloc'ed and the caller's. */
#ifndef NC_RULEDIT_H
#define NC_RULEDIT_H

#include "rules.h"

/* Replace `del` bytes at offset `at` of the original text by `ins`. */
typedef struct {
  size_t at, del;
  char *ins;
} TextEdit;
typedef VEC(TextEdit) TextEdits;

/* One func_line_range_wrappings entry to add. Optional fields are NULL. */
typedef struct {
  const char *function;
  int start, end;
  const char *start_content; /* the start line's text, to re-anchor later */
  const char *name;          /* range name (context_values[0]) */
  const char *context;       /* context_class */
  const char *reasoning;
} LineRule;

/* Plan the insertion of `n` line-range rules under targets[module] (creating
 * the target, the targets map or the list where missing). 0, or -1 with a
 * diagnostic at the place in the rule file that cannot take them. */
int ruledit_add_lines(const RuleDoc *doc, const char *module, const LineRule *lr, size_t n, TextEdits *out,
                      Diags *d);
/* Plan the insertion of targets[module] with no rule of its own (`module:`
 * in block style, `"module": {}` in flow style and JSON), where missing:
 * under full_trace_mode it is traced whole. 0 (nothing planned when it is
 * there), or -1 with a diagnostic. */
int ruledit_add_target(const RuleDoc *doc, const char *module, TextEdits *out, Diags *d);
/* Plan the addition of `n` names to the top-level `exclude` list (creating
 * it where missing: a block list, or a member of a flow mapping and JSON;
 * an existing list grows in its own style). 0, or -1 with a diagnostic. */
int ruledit_add_excludes(const RuleDoc *doc, const char *const *names, size_t n, TextEdits *out, Diags *d);
/* Plan the removal of a rule entry: the list item, or the map entry (key and
 * value) whose value is `node`: whole lines in block style, the member and
 * one comma in flow style (and JSON). The last entry of a collection takes
 * the collection's own entry with it; -1 with a warning when that would
 * empty a top-level section. */
int ruledit_remove_node(const RuleDoc *doc, const RNode *node, TextEdits *out, Diags *d);

/* The text with the edits applied (sorted by offset; ties keep their order). */
char *ruledit_apply(const char *src, size_t len, TextEdits *e, size_t *outlen);
void textedits_free(TextEdits *e);

#endif
