/* emit: atomic file and link writes. Messages name a file as `shown`/rel,
 * so writes into the stage (stage.c) speak of the file in OUT. */
#include "emit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void say(Diags *d, const char *shown, const char *rel, size_t rlen, const char *fmt, const char *why) {
  char *name = xasprintf("%s/%.*s", shown, (int)rlen, rel);
  diag_at(d, DIAG_ERROR, name, NULL, 0, 0, 0, fmt, why);
  free(name);
}

static int mkdirs_in(const char *root, const char *shown, const char *rel, Diags *d) {
  char *p = xasprintf("%s/%s", root, rel);
  const char *r = p + strlen(root) + 1;
  int rc = 0;
  for (char *s = (char *)r; rc == 0 && (s = strchr(s, '/')); s++) {
    *s = 0;
    struct stat st;
    if (mkdir(p, 0777) < 0 && errno != EEXIST) {
      say(d, shown, rel, (size_t)(s - r), "cannot create directory: %s", strerror(errno));
      rc = -1;
    } else if (lstat(p, &st) == 0 && !S_ISDIR(st.st_mode)) {
      say(d, shown, rel, (size_t)(s - r), "%s", "exists and is not a directory");
      rc = -1;
    }
    *s = '/';
  }
  free(p);
  return rc;
}

int emit_mkdirs(const char *out_root, const char *rel, Diags *d) { return mkdirs_in(out_root, out_root, rel, d); }

static char *temp_name(const char *out_root, const char *rel) {
  const char *slash = strrchr(rel, '/');
  return slash ? xasprintf("%s/%.*s/.%s.ncrw-XXXXXX", out_root, (int)(slash - rel), rel, slash + 1)
               : xasprintf("%s/.%s.ncrw-XXXXXX", out_root, rel);
}

int emit_file_in(const char *out_root, const char *shown, const char *rel, const void *data, size_t n, mode_t mode,
                 Diags *d) {
  if (mkdirs_in(out_root, shown, rel, d) < 0) return -1;
  char *tmp = temp_name(out_root, rel), *dst = xasprintf("%s/%s", out_root, rel);
  size_t rl = strlen(rel);
  int fd = mkstemp(tmp), rc = -1;
  if (fd < 0) {
    say(d, shown, rel, rl, "cannot write: %s", strerror(errno));
    goto out;
  }
  const char *p = data;
  size_t left = n;
  while (left) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      say(d, shown, rel, rl, "cannot write: %s", strerror(w < 0 ? errno : ENOSPC));
      close(fd);
      unlink(tmp);
      goto out;
    }
    p += w;
    left -= (size_t)w;
  }
  if (fchmod(fd, mode & 07777) < 0 || close(fd) < 0) {
    say(d, shown, rel, rl, "cannot write: %s", strerror(errno));
    unlink(tmp);
    goto out;
  }
  if (rename(tmp, dst) < 0) {
    say(d, shown, rel, rl, "cannot replace: %s", strerror(errno));
    unlink(tmp);
    goto out;
  }
  rc = 0;
out:
  free(tmp);
  free(dst);
  return rc;
}

int emit_file(const char *out_root, const char *rel, const void *data, size_t n, mode_t mode, Diags *d) {
  return emit_file_in(out_root, out_root, rel, data, n, mode, d);
}

int emit_symlink_in(const char *out_root, const char *shown, const char *rel, const char *target, Diags *d) {
  if (mkdirs_in(out_root, shown, rel, d) < 0) return -1;
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
    say(d, shown, rel, strlen(rel), "cannot create link: %s", strerror(errno));
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
