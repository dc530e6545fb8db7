/* render: a summary as Markdown and as JSON (the cli's renderers; report.c
 * renders HTML). */
#ifndef NCT_RENDER_H
#define NCT_RENDER_H

#include "analyze.h"

void summary_markdown(const Model *m, const Summary *s, Buf *out);
/* {"markdown": ..., "structured": {"operations", "bottlenecks",
 *  "recommendations", ...}} */
void summary_json(const Model *m, const Summary *s, Buf *out);

#endif
