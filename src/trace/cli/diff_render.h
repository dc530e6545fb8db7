/* diff_render: a DiffResult (core/diff.h) as a document (doc.h: `nctrace
 * diff` writes it as Markdown; a report can write it as HTML) and as JSON,
 * each row with its noise verdict. Times: milliseconds with three decimals
 * in the document, microseconds with three decimals in JSON, as the
 * summary prints them.
 *
 * Ownership: both append to what the caller owns (a Doc, a Buf) and only
 * read the DiffResult and the labels. top: rows per table, 0 = all. */
#ifndef NCT_DIFF_RENDER_H
#define NCT_DIFF_RENDER_H

#include "diff.h"
#include "doc.h"

/* The runs of each side as given (paths, or one label per side). */
typedef struct {
  const char *const *a;
  size_t na;
  const char *const *b;
  size_t nb;
} DiffLabels;

void diff_doc(const DiffResult *d, const DiffLabels *labels, size_t top, Doc *out);
void diff_json(const DiffResult *d, const DiffLabels *labels, size_t top, Buf *out);
/* The verdict's JSON members (significance, noise_method, p_value,
 * confidence_pct, ci95_low_us, ci95_high_us, effect_size), each followed
 * by a comma; shared with the report's data. */
void diff_json_noise(Buf *b, const NoiseVerdict *v);

#endif
