/* feedback: the commands that change a rule file from what a run showed —
 * feedback (one line range), drill and prune (from a trace), config (named
 * copies) and export-nsys — and the check they share: a proposed rule file
 * is run through the rewriter on the module it names, so a range is snapped,
 * matched and overlap-checked by exactly the code that will instrument it.
 *
 * Ownership: a ModFile owns its strings (modfile_free); a Proposal owns the
 * rules it loaded and the job it ran (proposal_free). */
#ifndef NC_FEEDBACK_H
#define NC_FEEDBACK_H

#include "rewrite.h"
#include "history.h"
#include "ruledit.h"

#include "subcommands.h" /* the cmd_ functions this file's commands define */

/* A module named on the command line (dotted name or path under SRC). */
typedef struct {
  char *rel;      /* relative to SRC */
  char *path;     /* SRC/rel */
  char *key;      /* the target key that names it (the module as given) */
  char *text;     /* file bytes */
  size_t len;
  int nlines;
  Lang lang;
} ModFile;

int modfile_find(const char *srcdir, const Rules *r, const char *module, ModFile *mf, Diags *d);
void modfile_free(ModFile *mf);
/* The module (target key) whose file is `rel`, or NULL. */
char *modfile_key_of(const char *srcdir, const Rules *r, const char *rel);

/* The rule file with edits applied, loaded, and the rewriter run on one
 * module with it. */
typedef struct {
  char *text;
  size_t len;
  Rules rules;
  FileJob job;
  int rc;          /* the rewriter's return */
} Proposal;

int proposal_run(Proposal *p, const char *rules_path, const char *old, size_t oldlen, TextEdits *e,
                 const char *srcdir, const ModFile *mf, Diags *d);
void proposal_free(Proposal *p);
/* The rule written at or after byte `from` of the proposed text, in order:
 * the k-th line-range rule inserted by one edit. */
const Rule *proposal_new_rule(const Proposal *p, size_t from, size_t k);
/* The range the rewriter made for a rule, or NULL. */
const RangeRec *proposal_range_of(const Proposal *p, const Rule *r);
/* First error message the rewriter gave (without position), or NULL. */
char *proposal_error(const Proposal *p);

/* The text of 1-based line `line` of mf, trimmed. */
char *modfile_line(const ModFile *mf, int line);

/* Exit statuses: 0 done, 1 an error (file unchanged), 2 bad usage; drill
 * also 3: nothing left worth splitting (file unchanged). */

#endif
