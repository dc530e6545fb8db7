/* stage: a tree run as one transaction on OUT.
 *
 * Files are written under OUT/.ncrewrite/stage (the manifest too, as
 * stage/.ncrewrite/...: SRC's own .ncrewrite directories are never walked,
 * so no source file can take that name). Before anything in OUT changes,
 * every staged file is checked to fit (no directory or file in the way but
 * stale ones) and the directories it needs are made, remembered so that a
 * rollback removes them again. Then stale files go and the staged files are
 * renamed in. What can still fail after that point (a rename, when a
 * directory needs a new block on a full disk) is reported file by file and
 * the caller writes a manifest saying so.
 *
 * A lock on the OUT directory makes concurrent runs take turns. */
#include "stage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emit.h"

struct Stage {
  char *out, *meta, *root; /* OUT, OUT/.ncrewrite, OUT/.ncrewrite/stage */
  int lock_fd;
  VEC(char *) made;        /* directories this run made in OUT (and OUT itself) */
  VEC(char *) said;        /* paths in the way, reported once however many files they stop */
  pthread_mutex_t ready_lock;
  int ready;               /* 0 not yet made, 1 made, -errno failed */
};

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

static void remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) == 0) nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* mkdir -p, remembering what it made. An empty path names no directory. */
static int make_dirs(Stage *s, const char *path) {
  if (!*path) {
    errno = ENOENT;
    return -1;
  }
  char *p = xstrdup(path);
  int rc = 0;
  for (char *c = p + 1;; c++) {
    if (*c && *c != '/') continue;
    char was = *c;
    *c = 0;
    if (mkdir(p, 0777) == 0) vec_push(&s->made, xstrdup(p));
    else if (errno != EEXIST) rc = -1;
    *c = was;
    if (!was || rc) break;
  }
  free(p);
  return rc;
}

static void undo_dirs(Stage *s) {
  for (size_t i = s->made.n; i-- > 0;) rmdir(s->made.v[i]); /* only the empty ones go */
}

Stage *stage_begin(const char *out_root, bool quiet, Diags *d) {
  Stage *s = xcalloc(1, sizeof *s);
  s->out = xstrdup(out_root);
  s->meta = xasprintf("%s/.ncrewrite", out_root);
  s->root = xasprintf("%s/stage", s->meta);
  pthread_mutex_init(&s->ready_lock, NULL);
  s->lock_fd = -1;
  bool said = false;
  /* a run rolling back removes the OUT (and parents) it made: while one
   * does, making or opening OUT can meet ENOENT; try again (100 times) */
  for (int tries = 0;; tries++) {
    if (make_dirs(s, out_root) < 0) {
      if (errno == ENOENT && tries < 100) continue;
      diag_at(d, DIAG_ERROR, out_root, NULL, 0, 0, 0, "cannot create OUT: %s", strerror(errno));
      stage_end(s, false);
      return NULL;
    }
    int fd = open(out_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && tries < 100) continue;
    if (fd < 0) break; /* not readable: go on unlocked; the writes will say what is wrong */
    if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
      if (!quiet && !said) fprintf(stderr, "ncrewrite: waiting for another ncrewrite writing %s\n", out_root);
      said = true;
      while (flock(fd, LOCK_EX) < 0 && errno == EINTR) {
      }
    }
    /* the run we waited for may have rolled back and removed a new OUT: the
     * lock is then on a directory that is gone; make OUT again */
    struct stat a, b;
    if (tries < 100 && fstat(fd, &a) == 0 && (a.st_nlink == 0 || stat(out_root, &b) < 0 || a.st_dev != b.st_dev ||
                                              a.st_ino != b.st_ino)) {
      close(fd);
      continue;
    }
    s->lock_fd = fd;
    break;
  }
  remove_tree(s->root); /* what an interrupted run left */
  return s;
}

const char *stage_root(Stage *s) { return s->root; }

int stage_ready(Stage *s) {
  pthread_mutex_lock(&s->ready_lock);
  if (!s->ready) {
    bool ok = (mkdir(s->meta, 0777) == 0 || errno == EEXIST) && mkdir(s->root, 0777) == 0;
    s->ready = ok ? 1 : -errno;
  }
  int r = s->ready;
  pthread_mutex_unlock(&s->ready_lock);
  if (r < 0) errno = -r;
  return r < 0 ? -1 : 0;
}

static int not_ready(Stage *s, const char *rel, Diags *d) {
  char *p = xasprintf("%s/%s", s->out, rel);
  diag_at(d, DIAG_ERROR, p, NULL, 0, 0, 0, "cannot write: %s", strerror(errno));
  free(p);
  return -1;
}

int stage_file(Stage *s, const char *rel, const void *data, size_t n, mode_t mode, Diags *d) {
  if (stage_ready(s) < 0) return not_ready(s, rel, d);
  return emit_file_in(s->root, s->out, rel, data, n, mode, d);
}

int stage_symlink(Stage *s, const char *rel, const char *target, Diags *d) {
  if (stage_ready(s) < 0) return not_ready(s, rel, d);
  return emit_symlink_in(s->root, s->out, rel, target, d);
}

/* Does the directory OUT/rel hold nothing but files that go? */
static bool only_gone(const char *out, const char *rel, StageGone gone, void *ctx) {
  char *p = xasprintf("%s/%s", out, rel);
  DIR *dir = opendir(p);
  free(p);
  if (!dir) return false;
  bool ok = true;
  for (struct dirent *de; ok && (de = readdir(dir));) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    char *sub = xasprintf("%s/%s", rel, de->d_name), *full = xasprintf("%s/%s", out, sub);
    struct stat st;
    if (lstat(full, &st) < 0) ok = false;
    else if (S_ISDIR(st.st_mode)) ok = only_gone(out, sub, gone, ctx);
    else ok = gone(ctx, sub);
    free(sub), free(full);
  }
  closedir(dir);
  return ok;
}

/* Report a path in the way once: every file under a directory that cannot
 * be made would otherwise repeat it. */
static void in_the_way(Stage *s, const char *path, Diags *d, const char *what) {
  for (size_t i = 0; i < s->said.n; i++)
    if (!strcmp(s->said.v[i], path)) return;
  vec_push(&s->said, xstrdup(path));
  diag_at(d, DIAG_ERROR, path, NULL, 0, 0, 0, "%s", what);
}

int stage_prepare(Stage *s, const char *rel, StageGone gone, void *ctx, Diags *d) {
  char *p = xasprintf("%s/%s", s->out, rel);
  const char *r = p + strlen(s->out) + 1;
  struct stat st;
  int rc = 0;
  bool blocked = false; /* a stale file stands where a directory goes: made after it went */
  for (char *c = (char *)r; rc == 0 && (c = strchr(c, '/')); c++) {
    *c = 0;
    if (lstat(p, &st) == 0 && !S_ISDIR(st.st_mode)) {
      if (gone(ctx, r)) {
        blocked = true;
      } else {
        in_the_way(s, p, d, "exists and is not a directory");
        rc = -1;
      }
    } else if (!blocked && mkdir(p, 0777) == 0) {
      vec_push(&s->made, xstrdup(p));
    } else if (!blocked && errno != EEXIST) {
      char *why = xasprintf("cannot create directory: %s", strerror(errno));
      in_the_way(s, p, d, why);
      free(why);
      rc = -1;
    }
    *c = '/';
  }
  if (rc == 0 && lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && !only_gone(s->out, rel, gone, ctx)) {
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

int stage_move(Stage *s, const char *rel, Diags *d) {
  char *from = xasprintf("%s/%s", s->root, rel), *to = xasprintf("%s/%s", s->out, rel);
  struct stat st;
  /* a directory in the way held only stale files, gone now: so are its
   * empty directories */
  if (lstat(to, &st) == 0 && S_ISDIR(st.st_mode)) nftw(to, rmdir_one, 16, FTW_DEPTH | FTW_PHYS);
  int rc = emit_mkdirs(s->out, rel, d); /* says why itself */
  if (rc == 0 && (rc = rename(from, to)) < 0)
    diag_at(d, DIAG_ERROR, to, NULL, 0, 0, 0, "cannot replace: %s", strerror(errno));
  free(from), free(to);
  return rc;
}

void stage_end(Stage *s, bool committed) {
  if (!s) return;
  remove_tree(s->root);
  if (!committed) {
    rmdir(s->meta); /* only if empty: this run made it */
    undo_dirs(s);
  }
  if (s->lock_fd >= 0) close(s->lock_fd);
  for (size_t i = 0; i < s->made.n; i++) free(s->made.v[i]);
  vec_free(&s->made);
  for (size_t i = 0; i < s->said.n; i++) free(s->said.v[i]);
  vec_free(&s->said);
  pthread_mutex_destroy(&s->ready_lock);
  free(s->out), free(s->meta), free(s->root);
  free(s);
}
