/* configs: named copies of a rule file, and the rules exported for Nsight
 * Systems.
 *
 *   ncrewrite config save|load|delete NAME --config R
 *   ncrewrite config list --config R
 *   ncrewrite config reset --config R
 *   ncrewrite export-nsys --config R -o FILE.json
 *
 * Named configurations live beside the rule file, in
 * <dir of R>/.ncrewrite/configs/NAME<ext of R>, so they travel with the
 * project. save copies R there; load copies one back over R (recorded in the
 * history, so `feedback --undo` steps back over it); reset steps back over
 * every recorded change, to the file as it was before the first one.
 *
 * export-nsys writes what nsys --python-functions-trace takes: a JSON list
 * of {"domain", "module", "functions": [...]} with exact function names.
 * nsys has no globs, line ranges or call sites: those rules are left out
 * with a note saying so (a line range inside a named function exports that
 * function). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "emit.h"
#include "feedback.h"

static bool valid_name(const char *n) {
  if (!*n || *n == '.') return false;
  for (const char *p = n; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("_.-", *p)))
      return false;
  return true;
}

static char *configs_dir(const char *rules) {
  const char *s = strrchr(rules, '/');
  return s ? xasprintf("%.*s/.ncrewrite/configs", (int)(s - rules), rules) : xstrdup(".ncrewrite/configs");
}

static const char *ext_of(const char *rules) {
  const char *s = strrchr(rules, '/'), *dot = strrchr(rules, '.');
  return dot && (!s || dot > s) ? dot : "";
}

static int mkdirs(const char *path) {
  char *p = xstrdup(path);
  for (char *s = p + 1; *s; s++)
    if (*s == '/') {
      *s = 0;
      mkdir(p, 0777);
      *s = '/';
    }
  int rc = mkdir(p, 0777) < 0 && errno != EEXIST ? -1 : 0;
  free(p);
  return rc;
}

static int config_list(const char *rules) {
  char *dir = configs_dir(rules);
  const char *ext = ext_of(rules);
  DIR *dp = opendir(dir);
  VEC(char *) names = {0};
  if (dp) {
    for (struct dirent *e; (e = readdir(dp));) {
      size_t n = strlen(e->d_name), el = strlen(ext);
      if (e->d_name[0] == '.' || n <= el || strcmp(e->d_name + n - el, ext)) continue;
      vec_push(&names, xstrndup(e->d_name, n - el));
    }
    closedir(dp);
  }
  for (size_t i = 1; i < names.n; i++) /* sorted: output is the same everywhere */
    for (size_t j = i; j > 0 && strcmp(names.v[j - 1], names.v[j]) > 0; j--) {
      char *t = names.v[j];
      names.v[j] = names.v[j - 1];
      names.v[j - 1] = t;
    }
  for (size_t i = 0; i < names.n; i++) printf("%s\n", names.v[i]), free(names.v[i]);
  if (!names.n) fprintf(stderr, "ncrewrite: no saved configurations in %s\n", dir);
  vec_free(&names);
  free(dir);
  return 0;
}

static int config_save(const char *rules, const char *name, Diags *d) {
  Rules r = {0};
  if (rules_load(&r, rules, d) < 0) {
    diag_at(d, DIAG_ERROR, rules, NULL, 0, 0, 0, "rule file has errors; not saved");
    rules_free(&r);
    return 1;
  }
  char *dir = configs_dir(rules), *file = xasprintf("%s%s", name, ext_of(rules));
  int rc = mkdirs(dir) < 0 ? -1 : emit_file(dir, file, r.doc.src, r.doc.len, 0644, d);
  if (rc == 0) fprintf(stderr, "ncrewrite: saved %s as '%s' (%s/%s)\n", rules, name, dir, file);
  else if (!d->errors) diag_at(d, DIAG_ERROR, dir, NULL, 0, 0, 0, "cannot create: %s", strerror(errno));
  free(dir), free(file);
  rules_free(&r);
  return rc < 0 ? 1 : 0;
}

static int config_load(const char *rules, const char *name, Diags *d) {
  char *dir = configs_dir(rules), *path = xasprintf("%s/%s%s", dir, name, ext_of(rules));
  Rules saved = {0};
  char *old = NULL;
  size_t oldlen = 0;
  int status = 1;
  if (access(path, R_OK) < 0) {
    diag_at(d, DIAG_ERROR, path, NULL, 0, 0, 0, "no configuration named '%s' (see: ncrewrite config list)", name);
  } else if (rules_load(&saved, path, d) < 0) {
    diag_at(d, DIAG_ERROR, path, NULL, 0, 0, 0, "saved configuration has errors; not loaded");
  } else {
    if (read_file(rules, &old, &oldlen) < 0) old = xstrdup(""), oldlen = 0; /* R may not exist yet */
    TextEdits whole = {0};
    vec_push(&whole, ((TextEdit){0, oldlen, xstrndup(saved.doc.src, saved.doc.len)}));
    char *what = xasprintf("configuration '%s'", name);
    if (history_commit(rules, old, oldlen, saved.doc.src, saved.doc.len, &whole, "config load", what, NULL, d) == 0) {
      fprintf(stderr, "ncrewrite: loaded '%s' into %s\n", name, rules);
      status = 0;
    }
    free(what);
    textedits_free(&whole);
  }
  free(old);
  rules_free(&saved);
  free(dir), free(path);
  return status;
}

static int config_delete(const char *rules, const char *name, Diags *d) {
  char *dir = configs_dir(rules), *path = xasprintf("%s/%s%s", dir, name, ext_of(rules));
  int rc = unlink(path);
  if (rc < 0) diag_at(d, DIAG_ERROR, path, NULL, 0, 0, 0, "cannot delete: %s", strerror(errno));
  free(dir), free(path);
  return rc < 0 ? 1 : 0;
}

int cmd_config(int argc, char **argv) {
  const char *verb = NULL, *name = NULL, *rules = NULL;
  bool help = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) help = true;
    else if ((!strcmp(argv[i], "--config") || !strcmp(argv[i], "-c")) && i + 1 < argc) rules = argv[++i];
    else if (!strncmp(argv[i], "--config=", 9)) rules = argv[i] + 9;
    else if (!verb) verb = argv[i];
    else if (!name) name = argv[i];
    else verb = NULL, i = argc; /* too many */
  }
  bool needs_name = verb && (!strcmp(verb, "save") || !strcmp(verb, "load") || !strcmp(verb, "delete"));
  bool known = verb && (needs_name || !strcmp(verb, "list") || !strcmp(verb, "reset"));
  if (help || !known || !rules || (needs_name && !name) || (!needs_name && name)) {
    if (!help) {
      /* say what is wrong before the usage */
      if (!verb) fputs("ncrewrite config: no verb (save, load, delete, list or reset)\n", stderr);
      else if (!known) fprintf(stderr, "ncrewrite config: unknown verb '%s' (save, load, delete, list or reset)\n", verb);
      else if (needs_name && !name) fprintf(stderr, "ncrewrite config %s: the NAME is missing\n", verb);
      else if (!needs_name && name) fprintf(stderr, "ncrewrite config %s takes no NAME ('%s')\n", verb, name);
      else if (!rules) fprintf(stderr, "ncrewrite config %s: --config RULES is missing (the rule file to work on)\n", verb);
    }
    fputs("usage: ncrewrite config save|load|delete NAME --config RULES\n"
          "       ncrewrite config list|reset --config RULES\n"
          "\n"
          "Named copies of a rule file, kept in .ncrewrite/configs/ beside it. load\n"
          "replaces RULES by a saved copy (undo with: ncrewrite feedback --undo);\n"
          "reset steps back over every change recorded in RULES.history.jsonl.\n",
          help ? stdout : stderr);
    return help ? 0 : 2;
  }
  if (name && !valid_name(name)) {
    fprintf(stderr, "ncrewrite config: error: a configuration name is letters, digits, '_', '-' and '.', not '%s'\n", name);
    return 2;
  }
  Diags d = {0};
  int rc;
  if (!strcmp(verb, "list")) rc = config_list(rules);
  else if (!strcmp(verb, "save")) rc = config_save(rules, name, &d);
  else if (!strcmp(verb, "load")) rc = config_load(rules, name, &d);
  else if (!strcmp(verb, "delete")) rc = config_delete(rules, name, &d);
  else rc = history_reset(rules, &d) < 0 ? 1 : 0;
  diags_print(&d);
  if (rc == 1 && strcmp(verb, "save") && strcmp(verb, "delete")) fprintf(stderr, "ncrewrite: %s left unchanged\n", rules);
  diags_free(&d);
  return rc;
}

/* ---- export-nsys --------------------------------------------------------- */

/* false when the name is listed already */
static bool add_function(cJSON *funcs, const char *name) {
  const cJSON *x;
  cJSON_ArrayForEach(x, funcs) if (cJSON_IsString(x) && !strcmp(x->valuestring, name)) return false;
  cJSON_AddItemToArray(funcs, cJSON_CreateString(name));
  return true;
}

int cmd_export_nsys(int argc, char **argv) {
  const char *rules = NULL, *out = NULL, *domain = "ncrt";
  bool help = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) help = true, i = argc;
    else if ((!strcmp(argv[i], "--config") || !strcmp(argv[i], "-c")) && i + 1 < argc) rules = argv[++i];
    else if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(argv[i], "--domain") && i + 1 < argc) domain = argv[++i];
    else rules = out = NULL, i = argc;
  }
  if (help || !rules || !out) {
    fputs("usage: ncrewrite export-nsys --config RULES -o FILE.json [--domain NAME]\n"
          "\n"
          "Write the rules as an Nsight Systems --python-functions-trace file, for modules\n"
          "you prefer not to rewrite: nsys profile --python-functions-trace=FILE.json ...\n"
          "Only exact function and method names carry over (domain default: ncrt).\n",
          help ? stdout : stderr);
    return help ? 0 : 2;
  }
  Rules r = {0};
  Diags d = {0};
  int status = 1;
  if (rules_load(&r, rules, &d) < 0) {
    diags_print(&d);
    fprintf(stderr, "ncrewrite: rule file has errors; nothing written\n");
    goto out;
  }
  cJSON *list = cJSON_CreateArray();
  for (size_t t = 0; t < r.targets.n; t++) {
    const Target *tg = &r.targets.v[t];
    if (tg->path_glob) continue; /* C-family files: nsys traces Python only */
    if (!strcmp(tg->key, "__main__")) {
      ruledoc_diag(&r.doc, &d, DIAG_WARNING, tg->at, "nsys does not trace functions of __main__; left out");
      continue;
    }
    cJSON *funcs = cJSON_CreateArray();
    for (size_t i = 0; i < tg->rules.n; i++) {
      const Rule *ru = &tg->rules.v[i];
      const char *f = ru->func;
      RuleNsys how = rule_kind(ru->kind)->nsys;
      if (how == RULE_NSYS_NONE) continue;
      if (!f) {
        ruledoc_diag(&r.doc, &d, DIAG_NOTE, ru->at, "a line range outside a named function has no nsys form; left out");
        continue;
      }
      char *full = ru->cls ? xasprintf("%s.%s", ru->cls, f) : xstrdup(f);
      if (has_glob_chars(full)) {
        ruledoc_diag(&r.doc, &d, DIAG_NOTE, ru->at, "'%s' is a glob; nsys takes exact names only; left out", full);
      } else if (add_function(funcs, full) && how == RULE_NSYS_WIDENED) {
        ruledoc_diag(&r.doc, &d, DIAG_NOTE, ru->at, "nsys traces whole functions: exported as '%s'", full);
      }
      free(full);
    }
    if (tg->full_trace || r.full_trace)
      ruledoc_diag(&r.doc, &d, DIAG_NOTE, tg->at, "full trace has no nsys form (exact names only); list the functions");
    if (!cJSON_GetArraySize(funcs)) {
      cJSON_Delete(funcs);
      continue;
    }
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "domain", tg->domain ? tg->domain : domain);
    if (tg->color) cJSON_AddStringToObject(e, "color", tg->color);
    cJSON_AddStringToObject(e, "module", tg->key);
    cJSON_AddItemToObject(e, "functions", funcs);
    cJSON_AddItemToArray(list, e);
  }
  char *text = cJSON_Print(list);
  Buf b = {0};
  buf_puts(&b, text);
  buf_putc(&b, '\n');
  const char *s = strrchr(out, '/');
  char *dir = s ? xstrndup(out, (size_t)(s - out)) : xstrdup(".");
  if (emit_file(*dir ? dir : "/", s ? s + 1 : out, b.s, b.len, 0644, &d) == 0) {
    fprintf(stderr, "ncrewrite: wrote %s (%d module%s)\n", out, cJSON_GetArraySize(list),
            cJSON_GetArraySize(list) == 1 ? "" : "s");
    status = 0;
  }
  diags_print(&d);
  free(dir), free(text);
  buf_free(&b);
  cJSON_Delete(list);
out:
  diags_free(&d);
  rules_free(&r);
  return status;
}
