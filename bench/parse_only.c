/* parse_only: the floor for ncrewrite's Python benchmark. Walks a tree in the
 * same sorted order, reads every .py file, parses it with the same pinned
 * tree-sitter-python (one parser, reused), and optionally writes each file
 * unchanged to an output tree — the I/O ncrewrite cannot avoid either.
 *
 *   parse_only [--c] SRC [OUT]     (--c: .c/.h files with tree-sitter-c)
 * prints: files bytes seconds */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <tree_sitter/api.h>
#include <unistd.h>

const TSLanguage *tree_sitter_python(void);
const TSLanguage *tree_sitter_c(void);

static const char *ext = ".py";

static TSParser *parser;
static long files, bytes;
static const char *out_root;

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void mkdirs(char *path) {
  for (char *s = path + 1; (s = strchr(s, '/')); s++) {
    *s = 0;
    mkdir(path, 0777);
    *s = '/';
  }
}

static void one(const char *path, const char *rel) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return;
  struct stat st;
  fstat(fd, &st);
  char *buf = malloc((size_t)st.st_size + 1);
  size_t n = 0;
  for (ssize_t r; n < (size_t)st.st_size && (r = read(fd, buf + n, (size_t)st.st_size - n)) > 0;) n += (size_t)r;
  close(fd);
  TSTree *t = ts_parser_parse_string(parser, NULL, buf, (uint32_t)n);
  ts_tree_delete(t);
  if (out_root) {
    char dst[8192];
    snprintf(dst, sizeof dst, "%s/%s", out_root, rel);
    mkdirs(dst);
    int o = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o >= 0) {
      if (write(o, buf, n) != (ssize_t)n) perror(dst);
      close(o);
    }
  }
  files++;
  bytes += (long)n;
  free(buf);
}

static void walk(const char *root, const char *rel) {
  char path[8192];
  snprintf(path, sizeof path, "%s%s%s", root, *rel ? "/" : "", rel);
  DIR *d = opendir(path);
  if (!d) return;
  char **names = NULL;
  size_t nn = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2]))) continue;
    names = realloc(names, (nn + 1) * sizeof *names);
    names[nn++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, nn, sizeof *names, cmp);
  for (size_t i = 0; i < nn; i++) {
    char *r, *full;
    if (asprintf(&r, "%s%s%s", rel, *rel ? "/" : "", names[i]) < 0 || asprintf(&full, "%s/%s", root, r) < 0) abort();
    struct stat st;
    if (lstat(full, &st) == 0) {
      if (S_ISDIR(st.st_mode) && strcmp(names[i], "__pycache__")) walk(root, r);
      else if (S_ISREG(st.st_mode)) {
        size_t l = strlen(r);
        const char *dot = strrchr(r, '.');
        if (l > 2 && dot && (!strcmp(dot, ext) || (!strcmp(ext, ".c") && !strcmp(dot, ".h")))) one(full, r);
      }
    }
    free(names[i]);
    free(r);
    free(full);
  }
  free(names);
}

int main(int argc, char **argv) {
  const TSLanguage *lang = tree_sitter_python();
  if (argc > 1 && !strcmp(argv[1], "--c")) {
    lang = tree_sitter_c();
    ext = ".c";
    argv++, argc--;
  }
  if (argc < 2) {
    fprintf(stderr, "usage: parse_only SRC [OUT]\n");
    return 2;
  }
  out_root = argc > 2 ? argv[2] : NULL;
  parser = ts_parser_new();
  ts_parser_set_language(parser, lang);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  walk(argv[1], "");
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%ld %ld %.6f\n", files, bytes, (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
  ts_parser_delete(parser);
  return 0;
}
