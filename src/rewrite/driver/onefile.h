/* onefile: the per-file build action and rule-file validation, the two
 * modes of ncrewrite that work on named files instead of a tree.
 *
 *   ncrewrite --config R --file IN -o OUT [--depfile D] [--as REL]
 *   ncrewrite --validate R...
 *
 * Both print their own diagnostics and return the exit status. */
#ifndef NC_ONEFILE_H
#define NC_ONEFILE_H

#include <stdbool.h>

typedef struct {
  const char *config;  /* rule file, or NULL */
  const char *file;    /* the input source */
  const char *out;     /* where its instrumented copy goes */
  const char *depfile; /* make-style dependencies, or NULL */
  const char *as;      /* the path rules see, or NULL: derived from file */
  bool full_trace, strict, quiet;
  unsigned languages;  /* --languages: bit (1 << Lang) of each a full trace instruments; 0: all */
} OneFile;

/* Instrument one file into o->out (atomically) and write the depfile after
 * it. Returns 0, or 1 on errors (nothing written). */
int onefile_run(const OneFile *o);

/* Load each rule file and report every problem at its place. Returns 0 if
 * all are valid, 1 otherwise (warnings count under strict). */
int onefile_validate(char **paths, int n, bool strict, bool quiet);

#endif
