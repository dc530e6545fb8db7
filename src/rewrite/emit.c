/* emit: atomic file and link writes under OUT. */
#include "emit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
