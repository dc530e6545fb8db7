/* replay: run a fuzz target's entry point over files, without libFuzzer.
 *
 *   replay-<target> FILE|DIR...
 *
 * Linked with each target's LLVMFuzzerTestOneInput in the default build, so
 * the seed corpus (the golden inputs) and every crash turned into a file are
 * checked by ctest on every run, fuzzing or not. A target signals a broken
 * property by aborting; this driver only feeds it. No input at all is an
 * error: a replay that checks nothing must not pass. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static size_t replayed;

static void replay(const char *path) {
  struct stat st;
  if (stat(path, &st) < 0) {
    perror(path);
    exit(1);
  }
  if (S_ISDIR(st.st_mode)) {
    struct dirent **names;
    int n = scandir(path, &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
      if (names[i]->d_name[0] != '.') {
        size_t len = strlen(path) + strlen(names[i]->d_name) + 2;
        char *sub = malloc(len);
        snprintf(sub, len, "%s/%s", path, names[i]->d_name);
        replay(sub);
        free(sub);
      }
      free(names[i]);
    }
    free(names);
    return;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  uint8_t *buf = malloc((size_t)st.st_size + 1);
  size_t got = fread(buf, 1, (size_t)st.st_size, f);
  fclose(f);
  LLVMFuzzerTestOneInput(buf, got);
  free(buf);
  replayed++;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) replay(argv[i]);
  printf("%s: %zu input%s replayed\n", argv[0], replayed, replayed == 1 ? "" : "s");
  return replayed ? 0 : 1;
}
