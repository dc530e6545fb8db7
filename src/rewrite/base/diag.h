/* diag: diagnostics are data with a place. A Diags list collects them for one
 * input (a rule file or a source file) so parallel workers never interleave
 * output; the driver prints each list in a fixed order.
 *
 * Format:  path:line:col: error|warning|note: message
 *          <the source line>
 *          <caret under the column>
 * Ownership: a Diags owns its rendered text; diags_free releases it. */
#ifndef NC_DIAG_H
#define NC_DIAG_H

#include "util.h"

typedef enum { DIAG_NOTE, DIAG_WARNING, DIAG_ERROR } DiagLevel;

typedef struct {
  Buf text;       /* rendered diagnostics, in the order they were added */
  int errors, warnings;
  bool strict;    /* warnings count (and print) as errors */
  bool quiet;     /* record only errors (warnings and notes are counted, not shown) */
} Diags;

/* Add a diagnostic at 1-based line/col in `src` (may be NULL: no source line
 * shown; line 0: no position at all). */
void diag_at(Diags *d, DiagLevel lvl, const char *path, const char *src, size_t srclen,
             int line, int col, const char *fmt, ...) __attribute__((format(printf, 8, 9)));
void diags_append(Diags *to, const Diags *from);
void diags_free(Diags *d);

/* Print to stderr when stderr is shown to a person; --quiet hides warnings. */
void diags_print(const Diags *d);

#endif
