/* report_source: the data of `nctrace report`'s source view -- the user's
 * own source files, each wrapped line range marked with the time its range
 * took in the traces.
 *
 * Where it comes from: the shadow tree the run was made from (`--shadow
 * DIR`, else env.json's "shadow"."dir", as ncrun writes it) holds
 * .ncrewrite/manifest.json (read with cJSON): per file its ranges, with
 * the user's original lines ("lines") and the shadow copy's ("out_lines"),
 * and the source tree it was made from ("source"). A range's time is the
 * summary's row of the same name. Original files are read from the source
 * tree; when that is unknown (an older manifest), the file is missing or it
 * changed after the shadow tree was made, the shadow copy is shown, with
 * out_lines, and the page says why.
 *
 * Files with the most time come first (a file's time: the time whose
 * innermost instrumented range is one of its ranges, so files add up and
 * nothing counts twice); their text is embedded up to SOURCE_MAX_BYTES in
 * all, and the rest are listed without it. A missing or malformed manifest gives a
 * note on the page and a warning, never an error. */
#ifndef NCT_REPORT_SOURCE_H
#define NCT_REPORT_SOURCE_H

#include "analyze.h"

enum { SOURCE_MAX_BYTES = 4 << 20 };

/* Appends `"source":{...}` to b and returns true, or appends nothing and
 * returns false when no shadow tree is known (neither shadow_opt nor a
 * "shadow" in env_text, the run directory's env.json as read, may be NULL).
 * max_bytes caps the embedded source text. */
bool source_json(const Model *m, const Summary *s, const char *shadow_opt, const char *env_text, size_t max_bytes,
                 Buf *b);

/* The run directory's env.json next to the first trace argument (a run
 * directory, or a file in one), as read (malloc'ed), or NULL (missing,
 * empty, or over SOURCE_MAX_ENV_BYTES); its path is appended to path_out
 * (may be NULL). summary and report read it so. */
enum { SOURCE_MAX_ENV_BYTES = 1 << 20 };
char *source_env_read(const char *first, Buf *path_out);

/* Fill s->unranged (issue 40): for the ranges with the most exclusive time
 * (at most UNRANGED_ROWS), the functions they call that have no range (the
 * manifest's "unranged_calls", less the names the traces have ranges of).
 * The shadow tree is shadow_opt, else env_text's "shadow"."dir"; without
 * one, or with an unreadable manifest, s->unranged stays empty (the
 * summary says nothing: a trace made without ncrewrite has no such list). */
enum { UNRANGED_ROWS = 10 };
void source_unranged(const Model *m, Summary *s, const char *shadow_opt, const char *env_text);

#endif
