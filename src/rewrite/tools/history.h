/* history: committing a changed rule file atomically, with a record of the
 * change in RULES.history.jsonl beside it, and stepping back over changes.
 *
 * Ownership: nothing returned here needs freeing but history_path's string. */
#ifndef NC_HISTORY_H
#define NC_HISTORY_H

#include "ruledit.h"

/* Write `text` to the rule file atomically after checking that it still
 * loads as a rule file, and append a history entry {command, what, why} with
 * the edits. `old` is the file's current text. 0, or -1 with the file left
 * as it was. */
int history_commit(const char *rules_path, const char *old, size_t oldlen, const char *text, size_t len,
                   TextEdits *e, const char *command, const char *what, const char *why, Diags *d);

/* Step back over the last change recorded in the history that is not undone
 * yet. Refuses when the file was changed since by something else. */
int history_undo(const char *rules_path, Diags *d);
/* Step back over every recorded change (config reset). */
int history_reset(const char *rules_path, Diags *d);

/* "<rules_path>.history.jsonl" */
char *history_path(const char *rules_path);

#endif
