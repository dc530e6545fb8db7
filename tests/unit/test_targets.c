/* targets (src/rewrite/rules/targets.h) as a spec: which file a rule
 * file's key names under SRC, asked of a fixed listing. */
#include "targets.h"
#include "check.h"

#include <stdlib.h>

static const char *const files[] = {"model/attention.py", "model/__init__.py", "pkg/sub/__init__.py",
                                    "kern/add.cu", "top.py", NULL};

static bool has(void *ctx, const char *rel) {
  (void)ctx;
  for (const char *const *f = files; *f; f++)
    if (!strcmp(*f, rel)) return true;
  return false;
}

static char *resolve(const char *key, const char *file_path, const char *src_real, bool *missed) {
  TargetHit h;
  target_resolve(key, file_path, src_real, has, NULL, &h);
  char *rel = h.rel ? strdup(h.rel) : strdup("(none)");
  if (missed) *missed = h.file_path_missed;
  target_hit_free(&h);
  return rel;
}

#define RESOLVES(key, fp, src, want)          \
  do {                                        \
    char *got_ = resolve(key, fp, src, NULL); \
    CHECK_STR(got_, want);                    \
    free(got_);                               \
  } while (0)

int main(void) {
  /* what is a path key */
  CHECK(target_key_is_path("kern/*.cu"));
  CHECK(target_key_is_path("add.cu"));
  CHECK(target_key_is_path("a/b"));
  CHECK(!target_key_is_path("model.attention"));
  CHECK(!target_key_is_path("top"));

  /* module keys: p.py, then p/__init__.py */
  RESOLVES("model.attention", NULL, NULL, "model/attention.py");
  RESOLVES("model", NULL, NULL, "model/__init__.py");
  RESOLVES("pkg.sub", NULL, NULL, "pkg/sub/__init__.py");
  RESOLVES("top", NULL, NULL, "top.py");
  RESOLVES("missing.mod", NULL, NULL, "(none)");
  /* SRC is the package itself: its name dropped from the key's front */
  RESOLVES("proj.model.attention", NULL, "/work/proj", "model/attention.py");
  /* path keys: a literal path names itself; a glob names no one file */
  RESOLVES("kern/add.cu", NULL, NULL, "kern/add.cu");
  RESOLVES("./kern/add.cu", NULL, NULL, "kern/add.cu");
  RESOLVES("kern/*.cu", NULL, NULL, "(none)");

  /* filePath first, "./" dropped; one naming nothing falls back to the key */
  RESOLVES("anything", "./top.py", NULL, "top.py");
  bool missed = false;
  char *got = resolve("model", "nothere.py", NULL, &missed);
  CHECK_STR(got, "model/__init__.py");
  CHECK(missed);
  free(got);

  /* globs: '*' crosses '/' and '.' */
  CHECK(target_glob_names("kern/*.cu", "kern/add.cu"));
  CHECK(target_glob_names("*.cu", "kern/add.cu"));
  CHECK(target_glob_names("./kern/a?d.cu", "kern/add.cu"));
  CHECK(!target_glob_names("kern/*.cu", "kern/add.c"));
  CHECK(target_glob_names("kern/[ab]dd.cu", "kern/add.cu"));
  return unit_failures("targets");
}
