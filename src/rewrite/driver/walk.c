/* walk: recursive, sorted listing of SRC. What is not part of the program's
 * source is not part of a shadow tree either: VCS metadata and other hidden
 * directories, bytecode caches, node_modules, virtual environments, other
 * shadow trees, and the user's exclude globs (walk.h). */
#include "walk.h"

#include <dirent.h>
#include <fnmatch.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
  const char *const *excl;
  size_t nexcl;
} Excl;

static bool has(const char *dir, const char *name) {
  char *p = xasprintf("%s/%s", dir, name);
  bool r = access(p, F_OK) == 0;
  free(p);
  return r;
}

/* Why the directory (full path, name, path relative to SRC) is left out,
 * or NULL. */
static char *skipped_dir(const char *full, const char *name, const char *rel, const Excl *x) {
  if (!strcmp(name, ".git") || !strcmp(name, ".hg") || !strcmp(name, ".svn")) return xstrdup("version control");
  if (!strcmp(name, ".ncrewrite")) return xstrdup("ncrewrite's own records");
  if (name[0] == '.') return xstrdup("a hidden directory");
  if (!strcmp(name, "__pycache__")) return xstrdup("bytecode cache");
  if (!strcmp(name, "node_modules")) return xstrdup("node_modules");
  if (has(full, "pyvenv.cfg")) return xstrdup("a virtual environment (pyvenv.cfg)");
  if (has(full, "conda-meta")) return xstrdup("a conda environment (conda-meta/)");
  if (has(full, ".ncrewrite/manifest.json")) return xstrdup("another shadow tree (.ncrewrite/manifest.json)");
  for (size_t i = 0; i < x->nexcl; i++) {
    const char *g = x->excl[i];
    size_t l = strlen(g);
    char *pat = xstrndup(g, l && g[l - 1] == '/' ? l - 1 : l);
    bool hit = strchr(pat, '/') ? fnmatch(pat, rel, FNM_PATHNAME) == 0 : fnmatch(pat, name, 0) == 0;
    free(pat);
    if (hit) return xasprintf("excluded by '%s'", g);
  }
  return NULL;
}

static char *skipped_file(const char *name, const char *rel, const Excl *x) {
  for (size_t i = 0; i < x->nexcl; i++) {
    const char *g = x->excl[i];
    size_t l = strlen(g);
    if (l && g[l - 1] == '/') continue; /* directories only */
    bool hit = strchr(g, '/') ? fnmatch(g, rel, FNM_PATHNAME) == 0 : fnmatch(g, name, 0) == 0;
    if (hit) return xasprintf("excluded by '%s'", g);
  }
  return NULL;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void walk_dir(const char *root, const char *rel, dev_t sd, ino_t si, const Excl *x, Entries *out, Diags *d) {
  char *path = *rel ? xasprintf("%s/%s", root, rel) : xstrdup(root);
  DIR *dir = opendir(path);
  if (!dir) {
    diag_at(d, DIAG_WARNING, *rel ? rel : ".", NULL, 0, 0, 0, "cannot read directory: %s; skipped",
            strerror(errno));
    free(path);
    return;
  }
  VEC(char *) names = {0};
  for (struct dirent *e; (e = readdir(dir));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    vec_push(&names, xstrdup(e->d_name));
  }
  closedir(dir);
  if (names.n) qsort(names.v, names.n, sizeof *names.v, cmp_str);
  for (size_t i = 0; i < names.n; i++) {
    char *r = *rel ? xasprintf("%s/%s", rel, names.v[i]) : xstrdup(names.v[i]);
    char *full = xasprintf("%s/%s", root, r), *why_file = NULL;
    struct stat st;
    if (lstat(full, &st) < 0) {
      diag_at(d, DIAG_WARNING, r, NULL, 0, 0, 0, "cannot stat: %s; skipped", strerror(errno));
      free(r);
    } else if (S_ISDIR(st.st_mode)) {
      char *why = st.st_dev == sd && st.st_ino == si ? NULL : skipped_dir(full, names.v[i], r, x);
      if (why) {
        Skipped sk = {xasprintf("%s/", r), why};
        vec_push(&out->skipped, sk);
        free(r);
      } else if (st.st_dev == sd && st.st_ino == si) {
        free(r);
      } else {
        walk_dir(root, r, sd, si, x, out, d);
        free(r);
      }
    } else if ((S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) && x->nexcl &&
               (why_file = skipped_file(names.v[i], r, x))) {
      Skipped sk = {r, why_file};
      vec_push(&out->skipped, sk);
    } else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
      Entry en = {r, st.st_mode, st.st_size,
                  (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec, st.st_ino, NULL};
      if (S_ISLNK(st.st_mode)) {
        char buf[4096];
        ssize_t n = readlink(full, buf, sizeof buf - 1);
        if (n < 0) n = 0;
        en.link = xstrndup(buf, (size_t)n);
      }
      vec_push(&out->v, en);
    } else {
      diag_at(d, DIAG_WARNING, r, NULL, 0, 0, 0, "not a regular file, directory or link; skipped");
      free(r);
    }
    free(full);
    free(names.v[i]);
  }
  vec_free(&names);
  free(path);
}

static int cmp_entry(const void *a, const void *b) {
  return strcmp(((const Entry *)a)->rel, ((const Entry *)b)->rel);
}

int walk_tree(const char *src, dev_t skip_dev, ino_t skip_ino, const char *const *excl, size_t nexcl, Entries *out,
              Diags *d) {
  Excl x = {excl, nexcl};
  struct stat st;
  if (stat(src, &st) < 0 || !S_ISDIR(st.st_mode)) {
    diag_at(d, DIAG_ERROR, src, NULL, 0, 0, 0, "not a directory: %s",
            errno ? strerror(errno) : "not a directory");
    return -1;
  }
  walk_dir(src, "", skip_dev, skip_ino, &x, out, d);
  /* sorted per directory already; a global sort makes "a/b" vs "a.b" order
   * independent of directory structure */
  if (out->v.n) qsort(out->v.v, out->v.n, sizeof *out->v.v, cmp_entry);
  return 0;
}

void entries_free(Entries *e) {
  for (size_t i = 0; i < e->v.n; i++) free(e->v.v[i].rel), free(e->v.v[i].link);
  vec_free(&e->v);
  for (size_t i = 0; i < e->skipped.n; i++) free(e->skipped.v[i].rel), free(e->skipped.v[i].why);
  vec_free(&e->skipped);
}
