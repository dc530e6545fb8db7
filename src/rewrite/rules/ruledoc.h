/* ruledoc: a rule file (YAML through libyaml, JSON through cJSON) read into
 * one positioned tree, so the schema checker in rules.c can point at the
 * exact line and column of any key or value, whatever the file's syntax.
 *
 * Ownership: every node, string and the source text belong to the RuleDoc;
 * ruledoc_free releases them all. */
#ifndef NC_RULEDOC_H
#define NC_RULEDOC_H

#include "diag.h"

typedef enum { RN_MAP, RN_SEQ, RN_SCALAR } RNodeKind;

typedef struct RNode RNode;
struct RNode {
  RNodeKind kind;
  int line, col;   /* 1-based position of the node's first character */
  size_t off, end; /* byte span in the source: first character, one past the
                    * last (for block collections libyaml ends the span where
                    * the next token starts, so it may take in trailing
                    * comments and blank lines); used by ruledit.c */
  char *str;       /* RN_SCALAR: the value */
  bool quoted;     /* RN_SCALAR: written as a quoted string */
  bool null;       /* RN_SCALAR: a null, which rules.c reads as "not written":
                    * JSON null; in YAML (1.2 core schema) an untagged plain
                    * null, Null, NULL, ~ or nothing at all. str keeps the
                    * text as written; "null" and '~' quoted are strings */
  RNode **items;   /* RN_SEQ: items; RN_MAP: key, value, key, value, ... */
  size_t n;        /* number of entries in items */
  size_t weight;   /* nodes in this subtree with every alias expanded (YAML
                    * aliases share nodes; this bounds what a reader walks) */
};

typedef struct {
  char *path;
  char *src;
  size_t len;
  RNode *root;                 /* NULL for an empty document */
  VEC(RNode *) all;            /* every node, for freeing */
} RuleDoc;

/* Returns 0, or -1 after adding a diagnostic (I/O or syntax error). */
int ruledoc_load(RuleDoc *doc, const char *path, Diags *d);
/* Same, from memory (the text is copied); `path` names it in messages. */
int ruledoc_parse(RuleDoc *doc, const char *path, const char *text, size_t len, Diags *d);
void ruledoc_free(RuleDoc *doc);

/* Diagnostic at a node of this document. */
void ruledoc_diag(const RuleDoc *doc, Diags *d, DiagLevel lvl, const RNode *at,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
