/* rewrite: the compiler core's entry (rewrite.h): a file's job
 * (filejob_init), rewrite_file, and the one table of the languages the
 * core rewrites. A row says how a file is recognised (its extensions), what
 * a user may call the language (--languages), how messages name it, and
 * which rewriter takes it; adding a language is a row here plus its
 * rewriter (core/<lang>/).
 *
 * The entry dispatches to the language rewriters, which call back only
 * into job.c (the helpers they share) and edits.c, never into this file:
 * no file of the core calls a file that calls it (tests/arch). */
#include <string.h>

#include "rewrite.h"
#include "util.h"

static const struct {
  Lang lang;
  const char *display;     /* in messages and the summary line */
  const char *names[3];    /* --languages spellings */
  const char *exts[7];     /* file extensions, without the dot */
  int (*rewrite)(FileJob *);
} LANGS[] = {
  {LANG_PYTHON, "Python", {"python", "py"}, {"py", "pyw"}, py_rewrite},
  {LANG_C, "C", {"c"}, {"c", "h"}, c_rewrite},
  {LANG_CPP, "C++", {"cpp", "c++"}, {"cc", "cpp", "cxx", "hh", "hpp", "hxx"}, c_rewrite},
  {LANG_CUDA, "CUDA", {"cuda", "cu"}, {"cu", "cuh"}, c_rewrite},
};
enum { NLANGS = sizeof LANGS / sizeof *LANGS };

Lang lang_of_path(const char *path) {
  const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
  if (!dot || (slash && dot < slash)) return LANG_NONE;
  for (int i = 0; i < NLANGS; i++)
    for (int k = 0; k < 7 && LANGS[i].exts[k]; k++)
      if (!strcmp(dot + 1, LANGS[i].exts[k])) return LANGS[i].lang;
  return LANG_NONE;
}

Lang lang_by_name(const char *name, size_t n) {
  for (int i = 0; i < NLANGS; i++)
    for (int k = 0; k < 3 && LANGS[i].names[k]; k++)
      if (strlen(LANGS[i].names[k]) == n && !strncmp(name, LANGS[i].names[k], n)) return LANGS[i].lang;
  return LANG_NONE;
}

const char *lang_display(Lang l) {
  for (int i = 0; i < NLANGS; i++)
    if (LANGS[i].lang == l) return LANGS[i].display;
  return "other";
}

int rewrite_file(FileJob *job) {
  for (int i = 0; i < NLANGS; i++)
    if (LANGS[i].lang == job->lang) return LANGS[i].rewrite(job);
  return 0;
}

void filejob_init(FileJob *job, const Rules *rules, const char *rel, const char *origin, const char *src, size_t len,
                  const Target *const *targets, size_t ntargets) {
  memset(job, 0, sizeof *job);
  job->rel = rel;
  job->origin = origin;
  job->src = src;
  job->len = len;
  job->lang = lang_of_path(rel);
  job->module = job->module_owned = job->lang == LANG_PYTHON ? module_of_path(rel) : NULL;
  job->rules = rules;
  job->targets = targets;
  job->ntargets = ntargets;
}
