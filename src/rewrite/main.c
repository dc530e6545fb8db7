/* ncrewrite: the program, above the rewriter's five parts: options, the
 * tree run (below), --file and --validate (driver/onefile.c), and the
 * tools' subcommands (tools/subcommands.c's table).
 *
 *   ncrewrite [--config RULES] [options] SRC OUT
 *
 * Pipeline: load rules -> check paths -> walk SRC -> resolve targets to files
 * -> rewrite files in parallel (read, parse, plan edits, apply, write to the
 * stage) -> if every file was read and written: check each fits in OUT,
 * stage the manifest, remove files a previous run wrote that SRC no longer
 * has, move the staged files in (stage.c); else drop the stage, so OUT stays
 * as it was -> report diagnostics in a fixed order. Output is the same
 * whatever -j: each file is independent and everything printed is ordered by
 * path. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emit.h"
#include "stage.h"
#include "subcommands.h"
#include "manifest.h"
#include "onefile.h"
#include "progress.h"
#include "rewrite.h"
#include "rules.h"
#include "targets.h"
#include "walk.h"

typedef struct {
  const char *config;
  bool full_trace, check, diff, strict, quiet, explain;
  bool keep_going;         /* write what can be written despite errors (make -k) */
  int jobs;
  /* --file mode (onefile.c): output, depfile, path the rules see */
  const char *file, *output, *depfile, *as;
  VEC(const char *) exclude; /* --exclude GLOB, repeatable: paths left out (walk.h) */
  unsigned languages;      /* --languages: bit (1 << Lang) of each a full trace instruments; 0: all */
  bool validate;           /* --validate RULES...: positional args are rule files */
  char **paths;            /* --validate's files */
  int npaths;
} Options;

typedef struct {
  Options opt;
  Rules rules;
  char *src, *out;          /* as given */
  char *src_real, *out_real;/* resolved (out_real may be NULL if OUT does not exist) */
  Stage *stage;             /* the run's transaction on OUT (stage.h); NULL with --check, --diff */
  bool *staged;             /* per entry: its output waits in the stage */
  Entries ents;
  VEC(Target *) *targets_of;/* per entry */
  FileResult *res;
  Buf *diff_text;           /* per entry, --diff */
  Buf *explain_text;        /* per entry, --explain */
  FileResult *cache;
  size_t ncache;
  bool cache_valid;
  char options_key[64];
  size_t next;              /* work queue index, atomic */
  Progress progress;        /* the bar on a terminal (progress.c) */
} Run;

/* ", N stale removed" for the summary line (a static buffer: one use). */
static const char *xstale(size_t n) {
  static char b[48];
  snprintf(b, sizeof b, ", %zu stale removed", n);
  return b;
}

static void usage(FILE *f) {
  fprintf(f, "usage: ncrewrite [--config RULES] [options] SRC OUT\n"
        "       ncrewrite --config RULES --file IN -o OUT [--depfile DEP] [--as PATH]\n"
        "       ncrewrite --validate RULES...\n"
        "\n"
        "Write an instrumented copy of the source tree SRC to OUT: files the rules\n"
        "name get NVTX ranges, everything else is copied byte for byte.\n"
        "\n"
        "options:\n"
        "  -c, --config FILE  rule file (YAML, or JSON by .json extension)\n"
        "  --full-trace       instrument every function (as full_trace_mode: true), in\n"
        "                     every language of the tree\n"
        "  --languages LIST   with a full trace: only these (%s; comma list)\n"
        "  -j, --jobs N       files rewritten in parallel (default: CPU count)\n"
        "  --check            write nothing; exit 1 if OUT differs from what would be written\n"
        "  --diff             write nothing; print a unified diff of the instrumentation\n"
        "  --strict           treat warnings as errors (e.g. a rule that matches nothing)\n"
        "  -k, --keep-going   write what can be written even when there are errors\n"
        "                     (without it, a run with errors leaves OUT as it was)\n"
        "  --explain          print what matched where and what was skipped, and why\n"
        "  --exclude GLOB     leave paths out of OUT (repeatable): a name at any depth\n"
        "                     (venv, *.ipynb), or a path with '/' (tests/data/); hidden\n"
        "                     directories, __pycache__, node_modules, virtual environments\n"
        "                     and other shadow trees are left out by default\n"
        "  -q, --quiet        print errors only\n"
        "  --file IN          instrument the one file IN into -o OUT (a build action)\n"
        "  -o, --output OUT   with --file: where the instrumented copy goes\n"
        "  --depfile DEP      with --file: write make-style dependencies of OUT to DEP\n"
        "  --as PATH          with --file: the path rules match IN by (default: IN\n"
        "                     relative to the current directory)\n"
        "  --validate         check the rule files given as arguments; write nothing\n"
        "  --version          print the version and the pinned grammar versions\n"
        "  -h, --help         this text\n"
        "\n"
        "exit status: 0 success, 1 errors (or --check found differences), 2 bad usage\n"
        "\n"
        "rule-file commands (ncrewrite COMMAND --help): feedback, drill, prune, config, export-nsys\n",
        lang_names());
}

/* "out/" -> "out", so messages read out/pkg/a.py, not out//pkg/a.py ("/"
 * stays). */
static char *trim_slashes(char *p) {
  for (size_t n = strlen(p); n > 1 && p[n - 1] == '/'; n--) p[n - 1] = 0;
  return p;
}

/* "python,c" -> bits (1 << Lang); -1 for an unknown name or an empty list */
static int parse_languages(const char *v, unsigned *out) {
  unsigned bits = 0;
  for (const char *p = v; *p;) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    Lang l = lang_by_name(p, n);
    if (l == LANG_NONE) return -1;
    bits |= 1u << l;
    p += n + (e != NULL);
  }
  if (!bits) return -1;
  *out = bits;
  return 0;
}

static int parse_args(int argc, char **argv, Run *run) {
  enum { O_FULL = 256, O_CHECK, O_DIFF, O_STRICT, O_EXPLAIN, O_VERSION, O_FILE, O_DEPFILE, O_AS, O_VALIDATE, O_EXCLUDE,
         O_LANGUAGES };
  /* -k: as make's */
  static const struct option longs[] = {
      {"config", required_argument, 0, 'c'}, {"full-trace", no_argument, 0, O_FULL},
      {"jobs", required_argument, 0, 'j'},   {"check", no_argument, 0, O_CHECK},
      {"diff", no_argument, 0, O_DIFF},      {"strict", no_argument, 0, O_STRICT},
      {"explain", no_argument, 0, O_EXPLAIN}, {"quiet", no_argument, 0, 'q'},
      {"version", no_argument, 0, O_VERSION}, {"help", no_argument, 0, 'h'},
      {"file", required_argument, 0, O_FILE}, {"output", required_argument, 0, 'o'},
      {"depfile", required_argument, 0, O_DEPFILE}, {"as", required_argument, 0, O_AS},
      {"validate", no_argument, 0, O_VALIDATE}, {"exclude", required_argument, 0, O_EXCLUDE},
      {"keep-going", no_argument, 0, 'k'}, {"languages", required_argument, 0, O_LANGUAGES},
      {0, 0, 0, 0}};
  Options *o = &run->opt;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  o->jobs = n > 0 ? (int)n : 1;
  for (int c; (c = getopt_long(argc, argv, "c:j:o:qhk", longs, NULL)) != -1;) {
    switch (c) {
    case 'c': o->config = optarg; break;
    case O_FULL: o->full_trace = true; break;
    case 'j': {
      char *end;
      long j = strtol(optarg, &end, 10);
      if (*end || j < 1 || j > 1024) {
        fprintf(stderr, "ncrewrite: error: -j needs a number from 1 to 1024, not '%s'\n", optarg);
        return 2;
      }
      o->jobs = (int)j;
      break;
    }
    case O_CHECK: o->check = true; break;
    case O_DIFF: o->diff = true; break;
    case O_STRICT: o->strict = true; break;
    case O_EXPLAIN: o->explain = true; break;
    case O_EXCLUDE: vec_push(&o->exclude, optarg); break;
    case O_LANGUAGES:
      if (parse_languages(optarg, &o->languages) < 0) {
        fprintf(stderr, "ncrewrite: error: --languages wants a comma list of %s, not '%s'\n", lang_names(),
                optarg);
        return 2;
      }
      break;
    case 'k': o->keep_going = true; break;
    case 'q': o->quiet = true; break;
    case O_VERSION:
      printf("ncrewrite %s (tree-sitter 0.25.0; grammars: python 0.25.0, c 0.24.1, cpp 0.23.4, cuda 0.21.1)\n",
             NC_VERSION);
      exit(0);
    case 'h': usage(stdout); exit(0);
    case O_FILE: o->file = optarg; break;
    case 'o': o->output = optarg; break;
    case O_DEPFILE: o->depfile = optarg; break;
    case O_AS: o->as = optarg; break;
    case O_VALIDATE: o->validate = true; break;
    default: usage(stderr); return 2;
    }
  }
  if (o->validate) {
    if (argc - optind < 1 || o->file) {
      fprintf(stderr, "ncrewrite: error: --validate takes one or more rule files (and no --file)\n");
      return 2;
    }
    o->paths = argv + optind, o->npaths = argc - optind;
    return 0;
  }
  if (o->file || o->output || o->depfile || o->as) {
    if (!o->file || !o->output || argc - optind != 0 || o->check || o->diff || o->explain) {
      fprintf(stderr, "ncrewrite: error: --file IN needs -o OUT, takes no SRC/OUT, and does not combine with "
                      "--check, --diff or --explain\n");
      return 2;
    }
    return 0;
  }
  if (argc - optind != 2) {
    fprintf(stderr, "ncrewrite: error: expected SRC and OUT, got %d path%s\n", argc - optind,
            argc - optind == 1 ? "" : "s");
    usage(stderr);
    return 2;
  }
  if (o->check && o->diff) {
    fprintf(stderr, "ncrewrite: error: --check and --diff do not combine\n");
    return 2;
  }
  if (!*argv[optind] || !*argv[optind + 1]) {
    fprintf(stderr, "ncrewrite: error: %s is an empty path\n", *argv[optind] ? "OUT" : "SRC");
    return 2;
  }
  run->src = trim_slashes(argv[optind]);
  run->out = trim_slashes(argv[optind + 1]);
  return 0;
}

/* Is `inner` equal to or below `outer` (both resolved paths)? */
static bool path_within(const char *inner, const char *outer) {
  size_t n = strlen(outer);
  if (!strcmp(outer, "/")) return true;
  return !strncmp(inner, outer, n) && (inner[n] == 0 || inner[n] == '/');
}

/* SRC must never be written: refuse OUT == SRC and OUT containing SRC. OUT
 * inside SRC is fine; the walk does not enter it. */
static int check_paths(Run *run, Diags *d) {
  run->src_real = realpath(run->src, NULL);
  if (!run->src_real) {
    diag_at(d, DIAG_ERROR, run->src, NULL, 0, 0, 0, "cannot open SRC: %s", strerror(errno));
    return -1;
  }
  struct stat st;
  if (stat(run->src_real, &st) < 0 || !S_ISDIR(st.st_mode)) {
    diag_at(d, DIAG_ERROR, run->src, NULL, 0, 0, 0, "SRC must be a directory");
    return -1;
  }
  /* OUT may not exist yet: resolve its nearest existing ancestor */
  char *o = xstrdup(run->out), *suffix = xstrdup("");
  char *real = NULL;
  while (!(real = realpath(o, NULL))) {
    char *slash = strrchr(o, '/');
    char *ns;
    if (!slash) {
      ns = *suffix ? xasprintf("%s/%s", o, suffix) : xstrdup(o);
      free(o);
      o = xstrdup(".");
    } else if (slash == o) {
      ns = *suffix ? xasprintf("%s/%s", slash + 1, suffix) : xstrdup(slash + 1);
      o[1] = 0;
    } else {
      ns = *suffix ? xasprintf("%s/%s", slash + 1, suffix) : xstrdup(slash + 1);
      *slash = 0;
    }
    free(suffix);
    suffix = ns;
  }
  run->out_real = *suffix ? xasprintf("%s%s%s", real, strcmp(real, "/") ? "/" : "", suffix) : xstrdup(real);
  free(real), free(o), free(suffix);
  if (!strcmp(run->out_real, run->src_real)) {
    diag_at(d, DIAG_ERROR, run->out, NULL, 0, 0, 0,
            "OUT is SRC (%s): ncrewrite never writes into the source tree; choose another OUT", run->src_real);
    return -1;
  }
  if (path_within(run->src_real, run->out_real)) {
    diag_at(d, DIAG_ERROR, run->out, NULL, 0, 0, 0,
            "OUT (%s) contains SRC (%s): files written there could land on sources; choose an OUT outside SRC's ancestors",
            run->out_real, run->src_real);
    return -1;
  }
  return 0;
}

static ssize_t find_entry(Run *run, const char *rel) {
  size_t lo = 0, hi = run->ents.v.n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strcmp(run->ents.v.v[mid].rel, rel);
    if (!c) return (ssize_t)mid;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

static bool run_has(void *ctx, const char *rel) { return find_entry(ctx, rel) >= 0; }

/* Map each target to the files it names (rules/targets.h: the resolver
 * --file and the tools share). A target that names nothing is a warning at
 * its place. */
static void resolve_targets(Run *run, Diags *d) {
  run->targets_of = xcalloc(run->ents.v.n + 1, sizeof *run->targets_of);
  Rules *r = &run->rules;
  for (size_t t = 0; t < r->targets.n; t++) {
    Target *tg = &r->targets.v[t];
    TargetHit h;
    target_resolve(tg->key, tg->file_path, run->src_real, run_has, run, &h);
    if (h.file_path_missed)
      ruledoc_diag(&r->doc, d, DIAG_WARNING, tg->at, "filePath '%s' is not a file under %s%s", tg->file_path, run->src,
                   tg->path_glob ? "" : "; trying the module name");
    ssize_t hit = h.rel ? find_entry(run, h.rel) : -1;
    /* (a path key names no symbolic link: those are copied as links) */
    if (hit >= 0 && tg->path_glob && (!tg->file_path || h.file_path_missed) && run->ents.v.v[hit].link) hit = -1;
    if (hit >= 0) {
      vec_push(&run->targets_of[hit], tg);
      target_hit_free(&h);
      continue;
    }
    if (!tg->path_glob) {
      /* did you mean: the modules under SRC, as dotted names */
      size_t ne = run->ents.v.n, nc = 0;
      char **mods = xcalloc(ne + 1, sizeof *mods);
      for (size_t i = 0; i < ne; i++) {
        const char *rel = run->ents.v.v[i].rel;
        size_t l = strlen(rel);
        if (l >= 4 && !strcmp(rel + l - 3, ".py")) mods[nc++] = module_of_path(rel);
      }
      const char *near = nearest_word(tg->key, (const char *const *)mods, nc);
      const char *p = h.module_path;
      ruledoc_diag(&r->doc, d, DIAG_WARNING, tg->at,
                   "module '%s' not found under %s (looked for %s.py and %s/__init__.py)%s%s%s", tg->key, run->src, p,
                   p, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
      for (size_t i = 0; i < nc; i++) free(mods[i]);
      free(mods);
    } else {
      size_t n = 0;
      for (size_t i = 0; i < run->ents.v.n; i++)
        if (!run->ents.v.v[i].link && target_glob_names(tg->key, run->ents.v.v[i].rel)) {
          vec_push(&run->targets_of[i], tg);
          n++;
        }
      if (!n) ruledoc_diag(&r->doc, d, DIAG_WARNING, tg->at, "no file under %s matches '%s'", run->src, tg->key);
    }
    target_hit_free(&h);
  }
}

/* ---- per-file work --------------------------------------------------- */

static bool out_stat_matches(Run *run, const char *rel, const FileResult *c) {
  char *p = xasprintf("%s/%s", run->out, rel);
  struct stat st;
  bool ok = lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == c->out_size &&
            (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec == c->out_mtime;
  free(p);
  return ok;
}

/* The size and time OUT/rel will have: a staged file keeps both when it is
 * renamed in, so it is read from the stage (root). */
static void record_out_stat(const char *root, FileResult *r) {
  char *p = xasprintf("%s/%s", root, r->rel);
  struct stat st;
  if (lstat(p, &st) == 0) {
    r->out_size = st.st_size;
    r->out_mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
  }
  free(p);
}

static const FileResult *cache_find(Run *run, const char *rel) {
  if (!run->cache_valid) return NULL;
  size_t lo = 0, hi = run->ncache;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strcmp(run->cache[mid].rel, rel);
    if (!c) return &run->cache[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

static void reuse(FileResult *r, const FileResult *c) {
  r->action = c->action;
  r->src_hash = c->src_hash;
  r->out_hash = c->out_hash;
  r->out_size = c->out_size;
  r->out_mtime = c->out_mtime;
  r->entry = c->entry ? xstrdup(c->entry) : NULL;
  r->nranges = c->nranges;
  for (size_t i = 0; i < c->rules.n; i++) {
    RuleResult x = c->rules.v[i];
    x.why = x.why ? xstrdup(x.why) : NULL;
    vec_push(&r->rules, x);
  }
  diags_append(&r->diags, &c->diags);
  r->cached = true;
}

static void do_symlink(Run *run, size_t i, FileResult *r) {
  const Entry *e = &run->ents.v.v[i];
  r->action = "symlink";
  /* a link inside SRC is reproduced as written; one leading outside SRC
   * (absolute, or climbing out) points OUT at the original target */
  char *full = xasprintf("%s/%s", run->src_real, e->rel);
  char *dir = xstrdup(full);
  *strrchr(dir, '/') = 0;
  char *joined = e->link[0] == '/' ? xstrdup(e->link) : xasprintf("%s/%s", dir, e->link);
  char *res = realpath(joined, NULL);
  const char *target = e->link;
  char *abs = NULL;
  if (!res || !path_within(res, run->src_real)) {
    abs = res ? xstrdup(res) : xstrdup(joined);
    target = abs;
    diag_at(&r->diags, DIAG_NOTE, e->rel, NULL, 0, 0, 0,
            "symbolic link leads outside SRC%s; not followed: OUT links to %s", res ? "" : " (or dangles)", abs);
  }
  r->src_hash = hash64(target, strlen(target), 1);
  char buf[PATH_MAX];
  char *o = xasprintf("%s/%s", run->out, e->rel);
  ssize_t n = readlink(o, buf, sizeof buf - 1);
  free(o);
  bool same = n >= 0 && (size_t)n == strlen(target) && !memcmp(buf, target, (size_t)n);
  const FileResult *c = cache_find(run, e->rel);
  if (same && c && !strcmp(c->action, "symlink") && c->src_hash == r->src_hash) r->cached = true;
  if (run->opt.check) r->changed = !same;
  else if (!run->opt.diff && !same) {
    if (stage_symlink(run->stage, e->rel, target, &r->diags) == 0) run->staged[i] = true;
    else r->action = "failed"; /* so the run rolls back */
  }
  free(abs), free(res), free(joined), free(dir), free(full);
}

static void process(Run *run, size_t i, void **parser) {
  const Entry *e = &run->ents.v.v[i];
  FileResult *r = &run->res[i];
  r->rel = xstrdup(e->rel);
  r->diags.strict = run->opt.strict;
  r->diags.quiet = run->opt.quiet;
  r->src_size = e->size, r->src_mtime = e->mtime_ns, r->src_ino = e->ino;
  if (e->link) {
    do_symlink(run, i, r);
    return;
  }
  const FileResult *c = cache_find(run, e->rel);
  bool may_reuse = c && c->entry && !run->opt.explain && !run->opt.diff && strcmp(c->action, "symlink") &&
                   strcmp(c->action, "failed");
  if (may_reuse && c->src_size == e->size && c->src_mtime == e->mtime_ns && c->src_ino == e->ino &&
      out_stat_matches(run, e->rel, c)) {
    reuse(r, c);
    return;
  }
  char *src;
  size_t len;
  char *path = xasprintf("%s/%s", run->src_real, e->rel);
  int rc = read_file(path, &src, &len);
  free(path);
  if (rc < 0) {
    diag_at(&r->diags, DIAG_ERROR, e->rel, NULL, 0, 0, 0, "cannot read: %s", strerror(errno));
    r->action = "failed";
    return;
  }
  r->src_hash = hash64(src, len, 0);
  if (may_reuse && c->src_hash == r->src_hash && out_stat_matches(run, e->rel, c)) {
    reuse(r, c);
    free(src);
    return;
  }
  FileJob job;
  size_t sl = strlen(run->src);
  while (sl > 1 && run->src[sl - 1] == '/') sl--;
  char *origin = xasprintf("%.*s/%s", (int)sl, run->src, e->rel);
  filejob_init(&job, &run->rules, e->rel, origin, src, len, (const Target *const *)run->targets_of[i].v,
               run->targets_of[i].n);
  job.explain = run->opt.explain;
  job.parser = parser;
  job.diags.strict = run->opt.strict;
  job.diags.quiet = run->opt.quiet;
  filejob_full_trace(&job, run->opt.full_trace, run->opt.languages);
  Buf out = {0};
  /* the rules' hits and misses go in the result, so a later cached run
   * reports the same */
  int wrc = rewrite_run(&job, &out, &r->map, &r->rules);
  r->action = wrc < 0 ? (job.already ? "already-instrumented" : job.unparsable ? "unparsable" : "failed")
              : wrc == 1 ? "rewritten" : "copied";
  if (wrc == 1) {
    if (run->opt.diff) {
      char *a = xasprintf("a/%s", e->rel), *b = xasprintf("b/%s", e->rel);
      edits_diff(&job.edits, src, len, out.s, out.len, &r->map, a, b, &run->diff_text[i]);
      free(a), free(b);
    }
    for (size_t k = 0; k < job.ranges.n; k++) {
      RangeRec *x = &job.ranges.v[k];
      RangeOut o = {xstrdup(x->name), x->kind, x->line0, x->line1, linemap_get(&r->map, x->line0),
                    linemap_get(&r->map, x->line1), NULL, x->unranged ? xstrdup(x->unranged) : NULL};
      if (x->rule) o.rule_at = xasprintf("%s:%d:%d", run->rules.doc.path, x->rule->at->line, x->rule->at->col);
      vec_push(&r->ranges, o);
    }
    r->nranges = r->ranges.n;
  }

  const char *data = out.len || !strcmp(r->action, "rewritten") ? out.s : src;
  size_t dlen = !strcmp(r->action, "rewritten") ? out.len : len;
  if (!data) data = "";
  r->out_hash = hash64(data, dlen, 0);
  if (run->opt.check) {
    char *op = xasprintf("%s/%s", run->out, e->rel), *have = NULL;
    size_t hl = 0;
    r->changed = read_file(op, &have, &hl) < 0 || hl != dlen || memcmp(have, data, dlen);
    free(have);
    free(op);
  } else if (!run->opt.diff) {
    bool same = c && c->out_hash == r->out_hash && out_stat_matches(run, e->rel, c);
    if (!same) {
      if (stage_file(run->stage, e->rel, data, dlen, e->mode, &job.diags) == 0) r->changed = run->staged[i] = true;
      else r->action = "failed";
    }
    record_out_stat(run->staged[i] ? stage_root(run->stage) : run->out, r);
  }
  diags_append(&r->diags, &job.diags);
  if (run->opt.explain && job.explain_text.len) {
    job_explain_sort(&job);
    buf_add(&run->explain_text[i], job.explain_text.s, job.explain_text.len);
  }
  buf_free(&out);
  filejob_free(&job);
  free(origin);
  free(src);
}

static void *worker(void *arg) {
  Run *run = arg;
  void *parser = NULL;
  for (;;) {
    size_t i = __atomic_fetch_add(&run->next, 1, __ATOMIC_RELAXED);
    if (i >= run->ents.v.n) break;
    process(run, i, &parser);
    progress_step(&run->progress);
  }
  job_parser_free(parser);
  return NULL;
}

/* Merge the rule hits and misses of every file's result (fresh or cached,
 * in path order, so the reason given is the same on every run and with any
 * -j) and warn at each rule that matched nothing anywhere. The rules
 * themselves are never written: the workers shared them. */
static void report_rules(Run *run, Diags *d) {
  Rules *rl = &run->rules;
  size_t *base = xcalloc(rl->targets.n + 1, sizeof *base);
  for (size_t t = 0; t < rl->targets.n; t++) base[t + 1] = base[t] + rl->targets.v[t].rules.n;
  int *matched = xcalloc(base[rl->targets.n] + 1, sizeof *matched);
  const char **miss = xcalloc(base[rl->targets.n] + 1, sizeof *miss);
  for (size_t i = 0; i < run->ents.v.n; i++) {
    const RuleResults *rr = &run->res[i].rules;
    for (size_t j = 0; j < rr->n; j++) {
      size_t t, k;
      if (!rule_place(rl, rr->v[j].rule, &t, &k)) continue;
      if (rr->v[j].hit) matched[base[t] + k]++;
      else if (rr->v[j].why && !miss[base[t] + k]) miss[base[t] + k] = rr->v[j].why;
    }
  }
  for (size_t t = 0; t < rl->targets.n; t++)
    for (size_t k = 0; k < rl->targets.v[t].rules.n; k++)
      if (!matched[base[t] + k] && miss[base[t] + k])
        rule_warn_miss(rl, d, &rl->targets.v[t].rules.v[k], miss[base[t] + k]);
  free(miss), free(matched), free(base);
}

static void remove_stale(Run *run, FileResult *old, size_t nold) {
  for (size_t i = 0; i < nold; i++) {
    if (find_entry(run, old[i].rel) >= 0) continue;
    if (run->opt.check) printf("stale: %s\n", old[i].rel);
    else if (!run->opt.diff) emit_remove(run->out, old[i].rel);
  }
}

/* A stale file: one the last run wrote (in the old cache, sorted by path)
 * that SRC no longer has. */
typedef struct {
  Run *run;
  FileResult *old;
  size_t nold;
} Stale;

static bool is_stale(void *ctx, const char *rel) {
  Stale *st = ctx;
  size_t lo = 0, hi = st->nold;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strcmp(st->old[mid].rel, rel);
    if (!c) return find_entry(st->run, rel) < 0;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

/* Before the point of no return: every staged file fits in OUT (its
 * directories made), and the manifest is staged. The number of files that
 * do not fit; *manifest_bad if the manifest could not be staged. */
static size_t prepare_commit(Run *run, Stale *st, bool dirty, bool *manifest_bad, Diags *d) {
  size_t n = run->ents.v.n, bad = 0;
  for (size_t i = 0; i < n; i++)
    if (run->staged[i] && stage_prepare(run->stage, run->res[i].rel, is_stale, st, &run->res[i].diags) < 0) bad++;
  if (!bad && dirty && stage_ready(run->stage) < 0) {
    diag_at(d, DIAG_ERROR, run->out, NULL, 0, 0, 0, "cannot write the manifest: %s", strerror(errno));
    *manifest_bad = true;
  } else if (!bad && dirty && manifest_write(stage_root(run->stage), run->src_real, run->opt.config, &run->rules,
                                             run->options_key, run->res, n, d) < 0) {
    *manifest_bad = true;
  }
  return bad;
}

/* Past it: stale files go, staged files move in, then the manifest. A move
 * that fails (a directory needing a new block on a full disk) leaves that
 * file as it was: it is marked failed and the manifest is written again to
 * say so. So is a manifest that could not be moved in (the cache with it:
 * never one without the other). The number of files that failed;
 * *manifest_bad if OUT's manifest could not be brought up to date. */
static size_t commit(Run *run, Stale *st, bool dirty, bool *manifest_bad, Diags *d) {
  size_t n = run->ents.v.n, bad = 0;
  remove_stale(run, st->old, st->nold);
  for (size_t i = 0; i < n; i++)
    if (run->staged[i] && stage_move(run->stage, run->res[i].rel, d) < 0) {
      run->res[i].action = "failed";
      bad++;
    }
  bool rewrite = bad > 0;
  if (!rewrite && dirty)
    rewrite = stage_move(run->stage, ".ncrewrite/manifest.json", d) < 0 ||
              stage_move(run->stage, ".ncrewrite/cache.json", d) < 0;
  if (rewrite && manifest_write(run->out, run->src_real, run->opt.config, &run->rules, run->options_key, run->res, n, d) < 0)
    *manifest_bad = true;
  return bad;
}

int main(int argc, char **argv) {
  int sub_status;
  if (subcommand_run(argc, argv, &sub_status)) return sub_status; /* feedback, drill, prune, config, export-nsys */
  Run run = {0};
  int rc = parse_args(argc, argv, &run);
  if (rc) return rc;
  if (run.opt.validate) return onefile_validate(run.opt.paths, run.opt.npaths, run.opt.strict, run.opt.quiet);
  if (run.opt.file) {
    OneFile one = {run.opt.config, run.opt.file, run.opt.output, run.opt.depfile, run.opt.as,
                   run.opt.full_trace, run.opt.strict, run.opt.quiet, run.opt.languages};
    return onefile_run(&one);
  }
  Diags top = {0}, files = {0}, rules_d = {0};
  FileResult *old = NULL, *stale_src = NULL;
  size_t nold = 0, nstale_src = 0, n = 0;
  top.strict = run.opt.strict;
  top.quiet = run.opt.quiet;
  int status = 0;

  if (run.opt.config) {
    if (rules_load(&run.rules, run.opt.config, &top) < 0) {
      diags_print(&top);
      fprintf(stderr, "ncrewrite: rule file has errors; nothing written\n");
      status = 1;
      goto done;
    }
  }
  if (check_paths(&run, &top) < 0) {
    diags_print(&top);
    status = 1;
    goto done;
  }
  struct stat ost;
  dev_t odev = 0;
  ino_t oino = 0;
  if (stat(run.out, &ost) == 0) {
    if (!S_ISDIR(ost.st_mode)) {
      diag_at(&top, DIAG_ERROR, run.out, NULL, 0, 0, 0, "OUT exists and is not a directory");
      diags_print(&top);
      status = 1;
      goto done;
    }
    odev = ost.st_dev, oino = ost.st_ino;
  }
  if (path_within(run.out_real, run.src_real) && !run.opt.quiet)
    diag_at(&top, DIAG_NOTE, run.out, NULL, 0, 0, 0, "OUT is inside SRC; it is left out of the walk");
  /* path excludes: --exclude, and the rule file's exclude entries with a
   * '/' (the others are qualified names: copied, never instrumented) */
  VEC(const char *) excl = {0};
  for (size_t i = 0; i < run.opt.exclude.n; i++) vec_push(&excl, run.opt.exclude.v[i]);
  for (size_t i = 0; i < run.rules.exclude.n; i++)
    if (strchr(run.rules.exclude.v[i], '/')) vec_push(&excl, (const char *)run.rules.exclude.v[i]);
  int wrc_ = walk_tree(run.src_real, odev, oino, excl.v, excl.n, &run.ents, &top);
  vec_free(&excl);
  if (run.opt.explain)
    for (size_t i = 0; i < run.ents.skipped.n; i++)
      printf("%s: left out: %s\n", run.ents.skipped.v[i].rel, run.ents.skipped.v[i].why);
  if (wrc_ < 0) {
    diags_print(&top);
    status = 1;
    goto done;
  }

  snprintf(run.options_key, sizeof run.options_key, "full_trace=%d languages=%u", run.opt.full_trace, run.opt.languages);
  resolve_targets(&run, &top);

  /* one run at a time writes an OUT: the lock is held to the end */
  bool writes = !run.opt.check && !run.opt.diff;
  if (writes && !(run.stage = stage_begin(run.out, run.opt.quiet, &top))) {
    diags_print(&top);
    status = 1;
    goto done;
  }

  nold = cache_load(run.out, &run.rules, run.options_key, &old);
  /* cache_load only returns entries for the same rules/options/version */
  run.cache = old, run.ncache = nold, run.cache_valid = nold > 0;
  stale_src = old;
  nstale_src = nold;
  if (!nold) {
    /* rules changed: still learn which files the last run wrote */
    stale_src = NULL;
    nstale_src = cache_load(run.out, NULL, "", &stale_src);
  }

  n = run.ents.v.n;
  run.res = xcalloc(n + 1, sizeof *run.res);
  run.diff_text = xcalloc(n + 1, sizeof *run.diff_text);
  run.explain_text = xcalloc(n + 1, sizeof *run.explain_text);
  run.staged = xcalloc(n + 1, sizeof *run.staged);
  int nt = run.opt.jobs < (int)n ? run.opt.jobs : (int)(n ? n : 1);
  progress_start(&run.progress, n, run.opt.quiet);
  if (nt <= 1) {
    worker(&run);
  } else {
    /* a thread that cannot start (a pids limit) leaves its share of the
     * queue to the others; with none started, this thread does it all */
    pthread_t *th = xcalloc((size_t)nt, sizeof *th);
    int started = 0;
    while (started < nt && pthread_create(&th[started], NULL, worker, &run) == 0) started++;
    if (started < nt) worker(&run);
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    free(th);
  }
  progress_end(&run.progress);

  size_t nfail = 0, nstale = 0, nmoved_bad = 0;
  for (size_t i = 0; i < n; i++) nfail += !strcmp(run.res[i].action, "failed");
  Stale st = {&run, stale_src, nstale_src};
  for (size_t i = 0; i < nstale_src; i++) nstale += find_entry(&run, stale_src[i].rel) < 0;
  bool dirty = nstale || !run.cache_valid || n != run.ncache;
  for (size_t i = 0; i < n && !dirty; i++) dirty = !run.res[i].cached;
  bool rolled_back = false, manifest_bad = false;
  /* the rules' hits and misses first: with --strict a miss is an error, and
   * a run with errors leaves OUT as it was (unless --keep-going) */
  rules_d.strict = run.opt.strict;
  rules_d.quiet = run.opt.quiet;
  report_rules(&run, &rules_d);
  int nerr_files = 0;
  for (size_t i = 0; i < n; i++) nerr_files += run.res[i].diags.errors;
  bool refuse = !run.opt.keep_going && (top.errors + nerr_files + rules_d.errors) > 0;
  if (writes) {
    if (!nfail && !refuse) nfail = prepare_commit(&run, &st, dirty, &manifest_bad, &top);
    rolled_back = nfail > 0 || manifest_bad || refuse;
    if (!rolled_back) nmoved_bad = commit(&run, &st, dirty, &manifest_bad, &top);
    stage_end(run.stage, !rolled_back);
    run.stage = NULL;
  }

  /* report, in path order */
  size_t nrew = 0, ncopy = 0, nchanged = 0, nranges = 0, nwritten = 0;
  size_t lang_files[LANG_COUNT] = {0}, lang_ranges[LANG_COUNT] = {0};
  for (size_t i = 0; i < n; i++) {
    FileResult *r = &run.res[i];
    nwritten += run.staged && run.staged[i];
    diags_append(&files, &r->diags);
    bool rewritten = !strcmp(r->action, "rewritten"), failed = !strcmp(r->action, "failed");
    nrew += rewritten;
    ncopy += !rewritten && !failed;
    nchanged += r->changed;
    nranges += rewritten ? r->nranges : 0;
    if (rewritten) {
      Lang l = lang_of_path(run.ents.v.v[i].rel);
      lang_files[l]++;
      lang_ranges[l] += r->nranges;
    }
    if (run.opt.explain && run.explain_text[i].len) fwrite(run.explain_text[i].s, 1, run.explain_text[i].len, stdout);
    if (run.opt.diff && run.diff_text[i].len) fwrite(run.diff_text[i].s, 1, run.diff_text[i].len, stdout);
    if (run.opt.check && r->changed) printf("out of date: %s\n", r->rel);
  }
  if (!writes) remove_stale(&run, stale_src, nstale_src); /* --check, --diff: name them */

  int errors = top.errors + files.errors + rules_d.errors;
  int warnings = top.warnings + files.warnings + rules_d.warnings;
  diags_print(&top);
  diags_print(&files);
  diags_print(&rules_d);
  if (run.opt.quiet)
    ;
  else if (rolled_back && refuse && !nfail)
    fprintf(stderr, "ncrewrite: nothing written, OUT is as it was: %d error%s (--keep-going writes what it can), "
            "%d warning%s\n", errors, errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
  else if (rolled_back && nfail)
    fprintf(stderr, "ncrewrite: nothing written, OUT is as it was: %zu of %zu file%s failed; %d error%s, %d warning%s\n",
            nfail, n, n == 1 ? "" : "s", errors, errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
  else if (rolled_back)
    fprintf(stderr, "ncrewrite: nothing written, OUT is as it was: the manifest could not be written; %d error%s, "
            "%d warning%s\n", errors, errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
  else if (nmoved_bad || manifest_bad)
    fprintf(stderr, "ncrewrite: OUT partly updated: %zu file%s could not be moved in%s; run again; %d error%s, "
            "%d warning%s\n", nmoved_bad, nmoved_bad == 1 ? "" : "s",
            manifest_bad ? " and the manifest could not be written (the next run redoes every file)"
                         : " (marked failed in the manifest)",
            errors, errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
  else {
    /* what this run did to OUT: written and up to date (a second run over
     * an unchanged tree writes nothing), or nothing (--diff, --check) */
    char did[128];
    if (run.opt.check) snprintf(did, sizeof did, "%s", nchanged || nstale ? ", OUT is out of date" : ", OUT is up to date");
    else if (run.opt.diff) snprintf(did, sizeof did, "; nothing written (--diff)");
    else if (!nwritten && !nstale) snprintf(did, sizeof did, "; OUT was up to date, nothing written");
    else
      snprintf(did, sizeof did, "; %zu written, %zu up to date%s", nwritten, n - nwritten,
               nstale ? xstale(nstale) : "");
    /* per language when there are several: "Python 3 files, 12 ranges; C 2 files, 9 ranges" */
    char langs[256] = "";
    int nl = 0;
    for (int l = LANG_PYTHON; l < LANG_COUNT; l++) nl += lang_files[l] > 0;
    for (int l = LANG_PYTHON, at = 0; nl > 1 && l < LANG_COUNT && at < (int)sizeof langs; l++)
      if (lang_files[l])
        at += snprintf(langs + at, sizeof langs - (size_t)at, "%s%s %zu file%s, %zu range%s", at ? "; " : ": ",
                       lang_display((Lang)l), lang_files[l], lang_files[l] == 1 ? "" : "s", lang_ranges[l],
                       lang_ranges[l] == 1 ? "" : "s");
    fprintf(stderr, "ncrewrite: %zu file%s instrumented (%zu range%s%s), %zu copied%s; %d error%s, %d warning%s\n", nrew,
            nrew == 1 ? "" : "s", nranges, nranges == 1 ? "" : "s", langs, ncopy, did, errors, errors == 1 ? "" : "s",
            warnings, warnings == 1 ? "" : "s");
  }
  if (errors) status = 1;
  if (run.opt.check && (nchanged || nstale)) status = 1;

done:
  for (size_t i = 0; run.res && i < n; i++) {
    result_free(&run.res[i]);
    buf_free(&run.diff_text[i]);
    buf_free(&run.explain_text[i]);
    vec_free(&run.targets_of[i]);
  }
  free(run.res), free(run.diff_text), free(run.explain_text), free(run.targets_of), free(run.staged);
  stage_end(run.stage, false); /* only on an early exit: NULL otherwise */
  for (size_t i = 0; i < nold; i++) result_free(&old[i]);
  free(old);
  if (stale_src != old) {
    for (size_t i = 0; i < nstale_src; i++) result_free(&stale_src[i]);
    free(stale_src);
  }
  entries_free(&run.ents);
  vec_free(&run.opt.exclude);
  rules_free(&run.rules);
  diags_free(&top), diags_free(&files), diags_free(&rules_d);
  free(run.src_real), free(run.out_real);
  return status;
}
