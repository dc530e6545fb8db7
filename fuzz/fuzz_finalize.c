/* fuzz_finalize: the finalizer (src/runtime/libncrt/finalize.c) on a dead
 * process's set written by anyone: the input is its .info, .hand, .names,
 * .done and .raw, in that order, separated by NUL bytes (fewer parts: the
 * rest absent), put in a private run directory as the set of a pid no
 * process has, then ncrt_finalize_dir. It writes a trace or says why not;
 * no crash, leak or undefined behaviour, no read past a line, and nothing
 * written outside the run directory (its parent is checked). Issue 42
 * items 1, 2, 8. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

int ncrt_finalize_dir(const char *dir, int quiet);

#define PID "2000000000" /* above any pid_max: never running */

static void empty(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char p[512];
  while (d && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  if (d) closedir(d);
}

static int count(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  while (d && (e = readdir(d))) n++;
  if (d) closedir(d);
  return n;
}

static char top[64], dir[96];

static void remove_dirs(void) {
  empty(dir);
  rmdir(dir);
  rmdir(top);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!top[0]) {
    snprintf(top, sizeof top, "/tmp/nc-fuzz-fin-XXXXXX");
    if (!mkdtemp(top)) abort();
    snprintf(dir, sizeof dir, "%s/run", top);
    if (mkdir(dir, 0700)) abort();
    atexit(remove_dirs);
  }
  static const char *const sfx[] = {".info", ".hand", ".names", ".done", ".raw"};
  const uint8_t *p = data, *e = data + size;
  for (size_t k = 0; k < 5 && p <= e; k++) {
    const uint8_t *z = k < 4 ? memchr(p, 0, (size_t)(e - p)) : NULL;
    const uint8_t *end = z ? z : e;
    char path[160];
    snprintf(path, sizeof path, "%s/.ncrt-" PID "%s", dir, sfx[k]);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    fwrite(p, 1, (size_t)(end - p), f);
    fclose(f);
    if (!z) break;
    p = z + 1;
  }
  ncrt_finalize_dir(dir, 1);
  if (count(top) != 3) abort(); /* ".", ".." and run: nothing beside it */
  empty(dir);
  return 0;
}
