/* util: file reading, hashing, globbing. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int read_file(const char *path, char **out, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) < 0) goto fail;
  if (S_ISDIR(st.st_mode)) { errno = EISDIR; goto fail; }
  size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, n = 0;
  char *p = xmalloc(cap);
  for (;;) {
    if (n + 1 >= cap) p = xrealloc(p, cap *= 2);
    ssize_t r = read(fd, p + n, cap - n - 1);
    if (r < 0) {
      if (errno == EINTR) continue;
      free(p);
      goto fail;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  close(fd);
  p[n] = 0;
  *out = p;
  *len = n;
  return 0;
fail:;
  int e = errno;
  close(fd);
  errno = e;
  return -1;
}

uint64_t hash64(const void *p, size_t n, uint64_t seed) {
  const unsigned char *s = p;
  uint64_t h = 1469598103934665603ull ^ seed;
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h = (h ^ w) * 1099511628211ull;
    h ^= h >> 29;
    s += 8;
    n -= 8;
  }
  while (n--) h = (h ^ *s++) * 1099511628211ull;
  h ^= h >> 32;
  return h;
}

bool glob_match(const char *pat, const char *s) { return fnmatch(pat, s, 0) == 0; }

bool has_glob_chars(const char *s) { return strpbrk(s, "*?[") != NULL; }

char *module_of_path(const char *rel) {
  size_t n = strlen(rel);
  if (n > 3 && !strcmp(rel + n - 3, ".py")) n -= 3;
  else if (n > 4 && !strcmp(rel + n - 4, ".pyw")) n -= 4;
  char *m = xstrndup(rel, n);
  for (char *p = m; *p; p++)
    if (*p == '/') *p = '.';
  size_t ml = strlen(m);
  if (ml >= 9 && !strcmp(m + ml - 9, ".__init__")) m[ml - 9] = 0;
  return m;
}
