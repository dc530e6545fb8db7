/* diff_render: a DiffResult (core/diff.h) as a document (doc.h: `nctrace
 * diff` writes it as Markdown; a report can write it as HTML) and as JSON.
 * Times: milliseconds with three decimals in the document, microseconds
 * with three decimals in JSON, as the summary prints them.
 *
 * Ownership: both append to what the caller owns (a Doc, a Buf) and only
 * read the DiffResult. label_a / label_b name the runs (the arguments as
 * given). top: rows per table, 0 = all. */
#ifndef NCT_DIFF_RENDER_H
#define NCT_DIFF_RENDER_H

#include "diff.h"
#include "doc.h"

void diff_doc(const DiffResult *d, const char *label_a, const char *label_b, size_t top, Doc *out);
void diff_json(const DiffResult *d, const char *label_a, const char *label_b, size_t top, Buf *out);

#endif
