/* render: a summary as a document (doc.h; `summary` writes it as Markdown,
 * `report` as HTML) and as JSON (the cli's renderers; report.c draws the
 * pictures).
 *
 * Ownership: summary_doc appends to a Doc the caller owns (doc_free);
 * summary_json appends to the caller's Buf. Both only read the Model and
 * the Summary. */
#ifndef NCT_RENDER_H
#define NCT_RENDER_H

#include "analyze.h"
#include "doc.h"

typedef struct Deep Deep; /* deep_section.h: Nsight Compute / Systems figures */

/* The summary's sections: files, operations, GPU (kernels, temporal
 * breakdown, streams, launches, communication, copies, annotations),
 * steps, ranks, bottlenecks, recommendations, notes. */
void summary_doc(const Model *m, const Summary *s, Doc *out);
/* The same with the Nsight Compute / Systems sections (deep_section.h)
 * after the GPU sections; deep may be NULL. */
void summary_doc_deep(const Model *m, const Summary *s, const Deep *deep, Doc *out);
/* {"markdown": ..., "structured": {"operations", "bottlenecks",
 *  "recommendations", ...}} */
void summary_json(const Model *m, const Summary *s, const Deep *deep, Buf *out);

#endif
