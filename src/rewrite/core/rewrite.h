/* rewrite: the compiler core's entry, the per-file contract between its
 * callers (the driver's tree run, --file, the Python engine, the tools,
 * the fuzz replay) and the language rewriters (python/pyrewrite.c,
 * c/crewrite.c for C/C++/CUDA).
 *
 * The caller reads a file, finds the targets that name it and makes a
 * FileJob (filejob_init, filejob_full_trace); rewrite_run, the one
 * per-file pipeline, runs rewrite_file (parse, match rules, add edits and
 * range records), applies the edits and says what the file made of each
 * rule (RuleResult); the caller writes the output and the manifest.
 *
 * Ownership: the job borrows its inputs (the text, its names, the rules
 * and the targets: the caller keeps them alive while the job lives) except
 * the module name, which it owns; it owns every output (diagnostics,
 * explain text, edits, range records and their names, rule outcomes and
 * their reasons) until filejob_free. Range records and outcomes point at
 * rules, which outlive the job. A worker's tree-sitter parser (job->parser)
 * is the worker's: jobs reuse it, job_parser_free releases it.
 * A rewriter never writes files and never prints: diagnostics go to
 * job->diags (source-file positions), and what became of each rule (hits,
 * or why it matched nothing: a rule position) to job->outcomes. The rules
 * are read-only once loaded: every worker thread shares them, and each
 * job owns its outcomes; rewrite_run turns them into the RuleResults the
 * tree run merges after the workers end. */
#ifndef NC_REWRITE_H
#define NC_REWRITE_H

#include "diag.h"
#include "edits.h"
#include "rules.h"

typedef enum { LANG_NONE, LANG_PYTHON, LANG_C, LANG_CPP, LANG_CUDA, LANG_COUNT } Lang; /* LANG_COUNT: none, a bound */

/* The language table (rewrite.c): a path's language by its extension;
 * a --languages spelling ("python", "c++", "cu"; n bytes of name), LANG_NONE
 * if none; the language's name in messages ("C++"; "other" for LANG_NONE). */
Lang lang_of_path(const char *path);
Lang lang_by_name(const char *name, size_t n);
const char *lang_display(Lang l);
/* The languages' first --languages spellings, "python, c, cpp, cuda", for
 * usage and messages. */
const char *lang_names(void);

/* One inserted range, for the manifest and --explain. */
typedef struct {
  char *name;      /* range name as written (literal or expression) */
  const char *kind;/* "function", "calls", "lines", "full-trace", "replacement" */
  int line0, line1;/* original lines covered (1-based, inclusive) */
  const Rule *rule;/* NULL for full-trace ranges */
  char *unranged;  /* C function ranges: the functions it calls that have no
                    * range of their own in this file, ", "-separated (owned;
                    * NULL: none or not known) */
} RangeRec;

/* What one file made of one rule. */
typedef struct {
  const Rule *rule;
  int hits;        /* ranges (or replacements) it gave */
  char *miss;      /* why it matched nothing here, or NULL (owned) */
} RuleOutcome;

/* One --explain entry: its line, and its bytes in explain_text. */
typedef struct ExplainAt {
  int line;
  size_t at, len;
} ExplainAt;

typedef struct {
  /* inputs */
  const char *rel;        /* path relative to SRC, '/'-separated */
  const char *origin;     /* the source file as named on the command line
                           * (SRC as given + rel), for #line directives */
  const char *module;     /* Python: dotted module name; else NULL */
  const char *src;        /* file bytes (NUL-terminated) */
  size_t len;
  Lang lang;
  const Rules *rules;
  const Target *const *targets; /* targets that name this file */
  size_t ntargets;
  bool full_trace;        /* full-trace applies to this file */
  bool explain;
  void **parser;          /* the worker's reusable tree-sitter parser (may be
                           * NULL); created on first use, freed by the worker
                           * with job_parser_free */
  /* outputs */
  Diags diags;            /* positions in this source file */
  Buf explain_text;       /* --explain lines for this file */
  VEC(ExplainAt) explain_at; /* where each entry starts: a path or a name may hold a newline */
  Edits edits;
  VEC(RangeRec) ranges;
  VEC(RuleOutcome) outcomes; /* one per rule touched, in first-touch order */
  bool already;           /* already instrumented: copy unchanged */
  bool unparsable;        /* parse failed: copy unchanged */
  char *module_owned;     /* the storage of `module` (filejob_init) */
} FileJob;

/* Fill a job's inputs, its outputs empty: the language from rel's
 * extension, the module (Python: its dotted name, owned by the job), the
 * rules and the targets that name the file (borrowed, as src and origin
 * are, for as long as the job runs). full_trace, explain, parser and the
 * diagnostics' flags stay for the caller to set. The one way the driver,
 * --file, the tools and the fuzz replay make a job. */
void filejob_init(FileJob *job, const Rules *rules, const char *rel, const char *origin, const char *src, size_t len,
                  const Target *const *targets, size_t ntargets);

/* Does a full trace apply to the job's file? rules_full_trace with the
 * caller's --full-trace (cli), except that a full trace of a rule file
 * naming no target leaves out the languages not in `languages` (bits
 * 1 << Lang; 0: all), which --explain then says. Sets job->full_trace. */
void filejob_full_trace(FileJob *job, bool cli, unsigned languages);

/* What one file made of one rule of the targets that name it. */
typedef struct {
  const Rule *rule;
  bool hit;  /* it did its work here: a range of its in the file (a kind that
              * makes none, rule_kind()->range_kind NULL: the planner's hits) */
  char *why; /* not hit: why it matched nothing here (owned); NULL: no
              * verdict (e.g. its ranges were voided by a replacement) */
} RuleResult;
typedef VEC(RuleResult) RuleResults;
void rule_results_free(RuleResults *v);
/* Each rule missed here (not hit, with a reason) as rule_warn_miss's
 * "rule matches nothing: WHY" at the rule: what --file and the Python
 * engine say of their one file (a tree run says it of rules missed in
 * every file). */
void rule_results_warn(const Rules *rules, const RuleResults *v, Diags *d);

/* The per-file pipeline, the one of the tree run, --file, the Python
 * engine, the tools and the fuzz replay: for a job made by filejob_init
 * (its full_trace, explain, parser and diagnostics' flags set), run
 * rewrite_file when a target names the file or a full trace applies,
 * apply the edits (into out, appended, and map, which may be NULL), and
 * append to `results` (may be NULL) a RuleResult for each rule of the job's
 * targets that was hit or missed, in rule-file order. Returns 1 (out holds
 * the instrumented file), 0 (copy it unchanged: nothing to do, or
 * overlapping edits, an internal error reported in job->diags) or -1
 * (rewrite_file refused it: job->already, job->unparsable, or a reason in
 * job->diags). The job's ranges and outcomes stay for the caller to read. */
int rewrite_run(FileJob *job, Buf *out, LineMap *map, RuleResults *results);

/* The one entry point: the rewriter of job->lang. Returns 0 (edits may be
 * empty; always for LANG_NONE) or -1 (the file must be copied unchanged;
 * the reason is in job->diags). The language rewriters behind it: */
int rewrite_file(FileJob *job);
int py_rewrite(FileJob *job);
int c_rewrite(FileJob *job);

/* The statements one level inside original lines [line0, line1] of a Python
 * file (for ncrewrite drill): the statements of the block when the lines
 * cover several, the body of the compound statement when they cover one;
 * only those worth a range (compound ones, taken whole, and ones that do
 * work: calls, operators, augmented assignments, subscripts,
 * comprehensions), or with `every` all but definitions, docstrings and
 * pass/break/continue/global/nonlocal. Each comes with
 * the qualified name of its function (NULL at module level; the caller frees
 * it). -1 when the file does not parse. */
typedef struct {
  int line0, line1;
  char *func;
} InnerStmt;
typedef VEC(InnerStmt) InnerStmts;
int py_inner_statements(const char *src, size_t len, int line0, int line1, bool every, InnerStmts *out);
/* The same for C, C++ and CUDA host functions (func is always NULL: a line
 * range finds its function by the lines). Work is a call, and in C++ and
 * CUDA an operator a class may overload; `every` takes all statements but
 * declarations (a block would hide their names) and jumps. */
int c_inner_statements(const char *src, size_t len, Lang lang, int line0, int line1, bool every, InnerStmts *out);
/* The one of the two for lang (the language table's statement walker), for
 * ncrewrite drill; -1 also for a language without one (LANG_NONE). */
int inner_statements(Lang lang, const char *src, size_t len, int line0, int line1, bool every, InnerStmts *out);
/* Parsing takes about 60 bytes of memory per byte of source (tree-sitter's
 * tree plus our indexes), and tree-sitter counts bytes in 32 bits. Files
 * larger than this are copied unchanged with a warning: real source files
 * stay far below it (SQLite's amalgamation is 9 MB). */
#define NC_MAX_PARSE_BYTES ((size_t)32 << 20)
/* True (after a warning in job->diags; job->unparsable set) if the file is
 * too large to parse. */
bool job_too_big(FileJob *job);

/* Rule outcomes of this job: a hit; a miss (takes `why`; the first reason
 * is kept); the outcome of `r`, or NULL if the rewriter never touched it. */
void job_rule_hit(FileJob *job, const Rule *r);
void job_rule_miss(FileJob *job, const Rule *r, char *why);
const RuleOutcome *job_rule_outcome(const FileJob *job, const Rule *r);

/* A rule of a kind this language's rewriter does not plan (rules.h's
 * table of kinds: its languages): a warning at the rule, "<kind> apply to
 * <languages> only; ignored for FILE". */
void job_rule_elsewhere(FileJob *job, const Rule *r);

/* "rule matches nothing: WHY" at the rule (at its class key when the class
 * is what is missing): the one wording of the tree run and --file. */
void rule_warn_miss(const Rules *rules, Diags *d, const Rule *r, const char *why);

void filejob_free(FileJob *job);
void job_parser_free(void *parser);

/* Explain helper: appends "rel:line: text\n" to job->explain_text. */
void job_explain(FileJob *job, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Put the explain lines in line order (rules are applied one kind after
 * the other; the reader wants the file top to bottom). Stable. */
void job_explain_sort(FileJob *job);

#endif
