/* tsdump: parse every .py file under a folder with tree-sitter-python and
 * print each file's syntax tree as an S-expression. Built twice by
 * test_real_c.py — against the tree-sitter core as released and as
 * instrumented by ncrewrite in full-trace mode — whose outputs must match. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);

static void walk(TSParser *p, const char *dir) {
  struct dirent **list;
  int n = scandir(dir, &list, NULL, alphasort);
  if (n < 0) return;
  for (int i = 0; i < n; i++) {
    const char *nm = list[i]->d_name;
    char *path;
    if (nm[0] == '.' || asprintf(&path, "%s/%s", dir, nm) < 0) {
      free(list[i]);
      continue;
    }
    size_t l = strlen(nm);
    if (list[i]->d_type == DT_DIR) {
      walk(p, path);
    } else if (l > 3 && !strcmp(nm + l - 3, ".py")) {
      FILE *f = fopen(path, "rb");
      char *buf = NULL;
      size_t cap = 0;
      FILE *m = open_memstream(&buf, &cap);
      int c;
      while (f && (c = fgetc(f)) != EOF) fputc(c, m);
      fclose(m);
      if (f) fclose(f);
      TSTree *t = ts_parser_parse_string(p, NULL, buf, (uint32_t)cap);
      char *s = ts_node_string(ts_tree_root_node(t));
      printf("%s %s\n", path, s);
      free(s);
      ts_tree_delete(t);
      free(buf);
    }
    free(path);
    free(list[i]);
  }
  free(list);
}

int main(int argc, char **argv) {
  TSParser *p = ts_parser_new();
  ts_parser_set_language(p, tree_sitter_python());
  for (int i = 1; i < argc; i++) walk(p, argv[i]);
  ts_parser_delete(p);
  return 0;
}
