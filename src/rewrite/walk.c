/* walk: recursive, sorted listing of SRC. VCS metadata and bytecode caches
 * are not part of a shadow tree (.git, .hg, .svn, __pycache__). */
#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool skipped_dir(const char *name) {
  return !strcmp(name, ".git") || !strcmp(name, ".hg") || !strcmp(name, ".svn") ||
         !strcmp(name, "__pycache__") || !strcmp(name, ".ncrewrite");
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void walk_dir(const char *root, const char *rel, dev_t sd, ino_t si, Entries *out, Diags *d) {
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
    char *full = xasprintf("%s/%s", root, r);
    struct stat st;
    if (lstat(full, &st) < 0) {
      diag_at(d, DIAG_WARNING, r, NULL, 0, 0, 0, "cannot stat: %s; skipped", strerror(errno));
      free(r);
    } else if (S_ISDIR(st.st_mode)) {
      if (skipped_dir(names.v[i]) || (st.st_dev == sd && st.st_ino == si)) free(r);
      else {
        walk_dir(root, r, sd, si, out, d);
        free(r);
      }
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

int walk_tree(const char *src, dev_t skip_dev, ino_t skip_ino, Entries *out, Diags *d) {
  struct stat st;
  if (stat(src, &st) < 0 || !S_ISDIR(st.st_mode)) {
    diag_at(d, DIAG_ERROR, src, NULL, 0, 0, 0, "not a directory: %s",
            errno ? strerror(errno) : "not a directory");
    return -1;
  }
  walk_dir(src, "", skip_dev, skip_ino, out, d);
  /* sorted per directory already; a global sort makes "a/b" vs "a.b" order
   * independent of directory structure */
  if (out->v.n) qsort(out->v.v, out->v.n, sizeof *out->v.v, cmp_entry);
  return 0;
}

void entries_free(Entries *e) {
  for (size_t i = 0; i < e->v.n; i++) free(e->v.v[i].rel), free(e->v.v[i].link);
  vec_free(&e->v);
}
