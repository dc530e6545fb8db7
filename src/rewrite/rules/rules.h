/* rules: the rule schema. One model for YAML and JSON rule files; it is the
 * nCompass SDK's RewriteConfig (targets keyed by dotted module name with
 * class_func_context_wrappings, func_line_range_wrappings, replacements and
 * full_trace_mode) plus ncrewrite's extensions (globs, func_context_wrappings,
 * exclude lists, a default context, path-glob targets for C/C++/CUDA).
 *
 * Ownership: Rules owns everything it points to, including the RuleDoc it was
 * read from (kept so later stages can point diagnostics at a rule). */
#ifndef NC_RULES_H
#define NC_RULES_H

#include "ruledoc.h"

typedef struct {
  char *value;     /* literal text, or an expression evaluated at run time */
  bool variable;   /* type: variable */
  RNode *at;
} CtxValue;

typedef struct {
  char *cls;                /* dotted context class as written; NULL: the default */
  VEC(CtxValue) values;     /* empty: the range is named by what it wraps */
  RNode *at;
} Context;

typedef enum {
  RULE_FUNC,        /* whole function/method body */
  RULE_CALLS,       /* statements calling a pattern */
  RULE_LINES,       /* a line range, snapped to whole statements */
  RULE_CLASS_REPL,  /* class_replacements */
  RULE_METHOD_REPL, /* class_func_replacements */
  RULE_NKINDS
} RuleKind;

/* The table of rule kinds (rules.c), one row per kind: what every part
 * outside the kind's parser and planners asks about a kind, so that adding
 * one is a value above, a row there, its keys in parse_target, and a
 * planner in each language rewriter that takes it (PY_PLAN in
 * core/python/pyplan.c, C_PLAN in core/c/crewrite.c; docs/architecture.md). */
enum { RULE_IN_PYTHON = 1, RULE_IN_C = 2 }; /* languages: C stands for the C family (C, C++, CUDA) */
typedef enum {
  RULE_NSYS_NONE,     /* export-nsys leaves it out silently (it names no function to trace) */
  RULE_NSYS_FUNCTION, /* exported as the function it names */
  RULE_NSYS_WIDENED,  /* exported as its whole function, with a note (nsys traces whole functions) */
} RuleNsys;
typedef struct {
  RuleKind kind;
  const char *schema;     /* the rule-file keys that write it (docs/rules.md) */
  const char *range_kind; /* the manifest's kind of the ranges it makes ("function", "calls",
                           * "lines"); NULL: it makes none (its hits are the planner's count) */
  unsigned langs;         /* RULE_IN_*: the rewriters that plan it */
  const char *plural;     /* in "<plural> apply to Python modules only" for a language without it */
  RuleNsys nsys;          /* export-nsys (tools/configs.c) */
} RuleKindRow;
const RuleKindRow *rule_kind(RuleKind k);

typedef struct {
  RuleKind kind;
  char *cls;          /* class name or glob; NULL for module-level functions */
  char *func;         /* function/method name or glob; RULE_LINES: optional */
  char *call;         /* RULE_CALLS: call pattern (glob; dotted or last name) */
  int start_line, end_line;          /* RULE_LINES, 1-based inclusive */
  char *start_content, *end_content; /* RULE_LINES: expected line text, optional */
  char *replacement;  /* RULE_*_REPL: dotted path of the replacement */
  Context ctx;
  RNode *at;          /* where the rule is written */
  RNode *cls_at;      /* its class's key, when written under one (a class that is not there is reported there) */
} Rule;

typedef struct {
  char *key;          /* dotted module name, or a path glob for C-family files */
  char *file_path;    /* filePath, optional */
  bool path_glob;     /* key names files by glob (C/C++/CUDA targets) */
  bool full_trace;    /* full_trace_mode for this target */
  bool full_trace_inline; /* full_trace_inline: C-family full trace keeps inline and small leaf functions */
  VEC(Rule) rules;
  VEC(char *) exclude;
  char *domain, *category, *color;   /* NVTX attributes for C-family targets */
  RNode *at;
} Target;

typedef struct {
  bool full_trace;
  bool full_trace_inline;  /* (ncrewrite) C/C++/CUDA full trace also instruments
                            * inline and small leaf functions (left out by default) */
  VEC(char *) ai_targets;
  VEC(Target) targets;
  VEC(char *) exclude;     /* qualified-name globs never instrumented */
  VEC(char *) attr_macros; /* c_attribute_macros: C/C++ macros that only decorate
                            * a declaration (LUA_API, PNGAPI), blanked before parsing */
  Context default_ctx;
  RuleDoc doc;
  uint64_t digest;         /* of the rule file's bytes */
  bool loaded;             /* a rule file was given */
} Rules;

/* Load and check a rule file. Returns 0, or -1 with diagnostics in d. */
int rules_load(Rules *r, const char *path, Diags *d);
/* Same from memory (for tests and fuzzing). */
int rules_parse(Rules *r, const char *path, const char *text, size_t len, Diags *d);
void rules_free(Rules *r);

/* The nCompass context classes and ncrewrite's own map to the ncrt module. */
typedef enum { CTX_NCRT_RANGE, CTX_NCRT_TORCH, CTX_USER } CtxKind;
CtxKind ctx_kind(const char *cls);

/* Does full trace apply to a file that these targets name (n of them)?
 * Yes when the rule file (or --full-trace, `cli`) asks for it and names no
 * target at all, when a target naming it has full_trace_mode, or when it
 * asks for it and some target names the file. The one decision of the tree
 * run, --file and the tools. */
bool rules_full_trace(const Rules *r, bool cli, const Target *const *tgs, size_t n);

/* A rule's place in the rule file's targets: target t, rule k (the ids the
 * manifest's cache writes as "t.k"); false for a rule not of r. And back:
 * the rule at t.k, or NULL. */
bool rule_place(const Rules *r, const Rule *ru, size_t *t, size_t *k);
const Rule *rule_at_place(const Rules *r, size_t t, size_t k);

/* The targets that name the one file rel, in rule-file order, as a tree
 * run resolves them but with no SRC around it (targets.h's
 * target_names_file; src_real, SRC's real path or NULL, for absolute
 * filePaths): --file's and the Python import hook's. */
typedef VEC(const Target *) TargetList;
void rules_targets_naming(const Rules *r, const char *rel, const char *src_real, TargetList *out);

#endif
