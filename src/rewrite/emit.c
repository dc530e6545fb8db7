/* emit: atomic file and link writes under OUT, and the run's staging area. */
#include "emit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int emit_mkdirs(const char *out_root, const char *rel, Diags *d) {
  char *p = xasprintf("%s/%s", out_root, rel);
  for (char *s = p + strlen(out_root) + 1; (s = strchr(s, '/')); s++) {
    *s = 0;
    if (mkdir(p, 0777) < 0 && errno != EEXIST) {
      diag_at(d, DIAG_ERROR, p, NULL, 0, 0, 0, "cannot create directory: %s", strerror(errno));
      free(p);
      return -1;
    }
    struct stat st;
    if (lstat(p, &st) == 0 && !S_ISDIR(st.st_mode)) {
      diag_at(d, DIAG_ERROR, p, NULL, 0, 0, 0, "exists and is not a directory");
      free(p);
      return -1;
    }
    *s = '/';
  }
  free(p);
  return 0;
}

static char *temp_name(const char *out_root, const char *rel) {
  const char *slash = strrchr(rel, '/');
  return slash ? xasprintf("%s/%.*s/.%s.ncrw-XXXXXX", out_root, (int)(slash - rel), rel, slash + 1)
               : xasprintf("%s/.%s.ncrw-XXXXXX", out_root, rel);
}

int emit_file(const char *out_root, const char *rel, const void *data, size_t n, mode_t mode, Diags *d) {
  if (emit_mkdirs(out_root, rel, d) < 0) return -1;
  char *tmp = temp_name(out_root, rel), *dst = xasprintf("%s/%s", out_root, rel);
  int fd = mkstemp(tmp), rc = -1;
  if (fd < 0) {
    diag_at(d, DIAG_ERROR, dst, NULL, 0, 0, 0, "cannot write: %s", strerror(errno));
    goto out;
  }
  const char *p = data;
  size_t left = n;
  while (left) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      diag_at(d, DIAG_ERROR, dst, NULL, 0, 0, 0, "cannot write: %s", strerror(w < 0 ? errno : ENOSPC));
      close(fd);
      unlink(tmp);
      goto out;
    }
    p += w;
    left -= (size_t)w;
  }
  if (fchmod(fd, mode & 07777) < 0 || close(fd) < 0) {
    diag_at(d, DIAG_ERROR, dst, NULL, 0, 0, 0, "cannot write: %s", strerror(errno));
    unlink(tmp);
    goto out;
  }
  if (rename(tmp, dst) < 0) {
    diag_at(d, DIAG_ERROR, dst, NULL, 0, 0, 0, "cannot replace: %s", strerror(errno));
    unlink(tmp);
    goto out;
  }
  rc = 0;
out:
  free(tmp);
  free(dst);
  return rc;
}

int emit_symlink(const char *out_root, const char *rel, const char *target, Diags *d) {
  if (emit_mkdirs(out_root, rel, d) < 0) return -1;
  char *dst = xasprintf("%s/%s", out_root, rel);
  char *tmp = NULL;
  int rc = -1;
  for (int i = 0; i < 100 && rc < 0; i++) {
    free(tmp);
    tmp = xasprintf("%s.ncrw-link%d", dst, i);
    if (symlink(target, tmp) == 0) rc = 0;
    else if (errno != EEXIST) break;
  }
  if (rc < 0 || rename(tmp, dst) < 0) {
    diag_at(d, DIAG_ERROR, dst, NULL, 0, 0, 0, "cannot create link: %s", strerror(errno));
    if (rc == 0) unlink(tmp);
    rc = -1;
  }
  free(tmp);
  free(dst);
  return rc;
}

void emit_remove(const char *out_root, const char *rel) {
  char *p = xasprintf("%s/%s", out_root, rel);
  unlink(p);
  free(p);
}

/* ---- staging ---- */

int emit_lock(const char *out_root, bool quiet) {
  int fd = open(out_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
    if (!quiet) fprintf(stderr, "ncrewrite: waiting for another ncrewrite writing %s\n", out_root);
    while (flock(fd, LOCK_EX) < 0 && errno == EINTR) {
    }
  }
  /* other failures (a file system without locks): go on unlocked */
  return fd;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

static void remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) == 0) nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *emit_stage_open(const char *out_root, Diags *d) {
  char *meta = xasprintf("%s/.ncrewrite", out_root), *stage = xasprintf("%s/stage", meta);
  /* what an interrupted run left */
  remove_tree(stage);
  if ((mkdir(meta, 0777) < 0 && errno != EEXIST) || mkdir(stage, 0777) < 0) {
    diag_at(d, DIAG_ERROR, out_root, NULL, 0, 0, 0, "cannot write: %s", strerror(errno));
    free(meta), free(stage);
    return NULL;
  }
  free(meta);
  return stage;
}

/* Does the directory OUT/rel hold nothing but files that go? */
static bool only_gone(const char *out_root, const char *rel, EmitGone gone, void *ctx) {
  char *p = xasprintf("%s/%s", out_root, rel);
  DIR *dir = opendir(p);
  free(p);
  if (!dir) return false;
  bool ok = true;
  for (struct dirent *de; ok && (de = readdir(dir));) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    char *sub = xasprintf("%s/%s", rel, de->d_name), *full = xasprintf("%s/%s", out_root, sub);
    struct stat st;
    if (lstat(full, &st) < 0) ok = false;
    else if (S_ISDIR(st.st_mode)) ok = only_gone(out_root, sub, gone, ctx);
    else ok = gone(ctx, sub);
    free(sub), free(full);
  }
  closedir(dir);
  return ok;
}

int emit_stage_check(const char *out_root, const char *rel, EmitGone gone, void *ctx, Diags *d) {
  char *p = xasprintf("%s/%s", out_root, rel);
  const char *r = p + strlen(out_root) + 1; /* rel inside p */
  struct stat st;
  int rc = 0;
  for (char *s = (char *)r; (s = strchr(s, '/')) && rc == 0; s++) {
    *s = 0;
    if (lstat(p, &st) == 0 && !S_ISDIR(st.st_mode) && !gone(ctx, r)) {
      diag_at(d, DIAG_ERROR, p, NULL, 0, 0, 0, "exists and is not a directory");
      rc = -1;
    }
    *s = '/';
  }
  if (rc == 0 && lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && !only_gone(out_root, rel, gone, ctx)) {
    diag_at(d, DIAG_ERROR, p, NULL, 0, 0, 0, "cannot replace: is a directory");
    rc = -1;
  }
  free(p);
  return rc;
}

static int rmdir_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)ftw;
  if (flag == FTW_DP) rmdir(path);
  return 0;
}

int emit_stage_commit(const char *out_root, const char *stage, const char *rel, Diags *d) {
  char *from = xasprintf("%s/%s", stage, rel), *to = xasprintf("%s/%s", out_root, rel);
  struct stat st;
  /* a directory in the way was found to hold only files that went: its
   * empty directories go too */
  if (lstat(to, &st) == 0 && S_ISDIR(st.st_mode)) nftw(to, rmdir_one, 16, FTW_DEPTH | FTW_PHYS);
  int rc = emit_mkdirs(out_root, rel, d); /* says why itself */
  if (rc == 0 && (rc = rename(from, to)) < 0)
    diag_at(d, DIAG_ERROR, to, NULL, 0, 0, 0, "cannot replace: %s", strerror(errno));
  free(from), free(to);
  return rc;
}

void emit_stage_close(const char *out_root, const char *stage, bool rolled_back, bool out_was_new) {
  remove_tree(stage);
  if (!rolled_back) return;
  char *meta = xasprintf("%s/.ncrewrite", out_root);
  rmdir(meta); /* only if empty: this run made it */
  if (out_was_new) rmdir(out_root);
  free(meta);
}
