/* targets: see targets.h. */
#include "targets.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

bool target_key_is_path(const char *key) {
  if (has_glob_chars(key) || strchr(key, '/')) return true;
  static const char *const c_exts[] = {".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".cu", ".cuh", NULL};
  const char *ext = strrchr(key, '.');
  for (const char *const *e = c_exts; ext && *e; e++)
    if (!strcmp(ext, *e)) return true;
  return false;
}

static const char *dot_slash(const char *p) { return p[0] == '.' && p[1] == '/' ? p + 2 : p; }

void target_resolve(const char *key, const char *file_path, const char *src_real, TargetHasFile has, void *ctx,
                    TargetHit *out) {
  memset(out, 0, sizeof *out);
  if (file_path) {
    char *rel = NULL;
    if (file_path[0] == '/') {
      size_t sl = src_real ? strlen(src_real) : 0;
      char *fr = sl ? realpath(file_path, NULL) : NULL;
      if (fr && !strncmp(fr, src_real, sl) && fr[sl] == '/' && fr[sl + 1]) rel = xstrdup(fr + sl + 1);
      free(fr);
    } else {
      rel = xstrdup(dot_slash(file_path));
    }
    if (rel && has(ctx, rel)) {
      out->rel = rel;
      return;
    }
    free(rel);
    out->file_path_missed = true;
  }
  if (target_key_is_path(key)) {
    const char *k = dot_slash(key);
    if (!has_glob_chars(k) && has(ctx, k)) out->rel = xstrdup(k);
    return;
  }
  char *p = xstrdup(key);
  for (char *q = p; *q; q++)
    if (*q == '.') *q = '/';
  out->module_path = p;
  const char *base = src_real ? strrchr(src_real, '/') : NULL;
  base = base ? base + 1 : src_real ? src_real : "";
  size_t bl = strlen(base);
  const char *cands[2] = {p, bl && !strncmp(p, base, bl) && p[bl] == '/' ? p + bl + 1 : NULL};
  for (int k = 0; k < 2 && !out->rel; k++) {
    if (!cands[k]) continue;
    char *a = xasprintf("%s.py", cands[k]), *b = xasprintf("%s/__init__.py", cands[k]);
    if (has(ctx, a)) out->rel = a, a = NULL;
    else if (has(ctx, b)) out->rel = b, b = NULL;
    free(a), free(b);
  }
}

void target_hit_free(TargetHit *h) {
  free(h->rel);
  free(h->module_path);
  memset(h, 0, sizeof *h);
}

bool target_glob_names(const char *key, const char *rel) { return glob_match(dot_slash(key), rel); }

static bool is_rel(void *rel, const char *x) { return !strcmp(rel, x); }

bool target_names_file(const char *key, const char *file_path, bool path_glob, const char *rel,
                       const char *src_real) {
  TargetHit h;
  target_resolve(key, file_path, src_real, is_rel, (void *)rel, &h);
  bool hit = h.rel || (path_glob && target_glob_names(key, rel));
  target_hit_free(&h);
  return hit;
}
