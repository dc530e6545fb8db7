/* deep: ncrun's deep-dive backends, run after the collector's stage 1.
 *
 *   --ncu GLOB   stage 2 under Nsight Compute: gated on the NVTX ranges of
 *                domain "ncrt" whose name matches GLOB, filtered to the top
 *                N kernels stage 1 saw inside those ranges, a bounded launch
 *                count, the chosen sections; exported to raw CSV.
 *   --nsys GLOB  stage 2 under Nsight Systems: --capture-range=nvtx on the
 *                first matching range name, then `nsys stats` of the GPU
 *                kernels as CSV.
 *
 * Everything lands in <run>/ncu or <run>/nsys: kernels.tsv (what stage 1
 * chose, from `nctrace kernels`), the report, its CSV, the tool's log and,
 * for ncu, `ncu --list-sections`. `nctrace summary` finds them there and
 * joins them to its kernel table. Kernel selection and the join are
 * nctrace's (one implementation); this file builds command lines, runs them
 * and says why a stage captured nothing.
 *
 * Why the include expression looks as it does (checked with ncu 2025.3 on
 * an H100): ncu needs the domain ("decode/" alone never matches a range of
 * domain ncrt), takes no '*' wildcard ("ncrt@dec*" matches nothing) but a
 * "regex:" prefix, matches push/pop ranges only with a trailing '/' and
 * start/end ranges only without one; our registered strings match like
 * plain ones. */
#define _GNU_SOURCE
#include "ncbase.h"
#include "ncrun.h"
#include "rundir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- regular expressions ---- */

static void regex_char(Buf *b, char c) {
  if (strchr("\\^$.|?*+()[]{}/", c)) buf_putc(b, '\\');
  buf_putc(b, c);
}

char *deep_glob_regex(const char *g) {
  Buf b = {0};
  for (; *g; g++) {
    if (*g == '*') {
      buf_puts(&b, ".*");
    } else if (*g == '?') {
      buf_putc(&b, '.');
    } else if (*g == '[' && strchr(g + 1, ']')) {
      const char *end = strchr(g + 2, ']'); /* "[]x]": the first ']' is a member */
      if (!end) end = strchr(g + 1, ']');
      buf_putc(&b, '[');
      g++;
      if (*g == '!') {
        buf_putc(&b, '^');
        g++;
      }
      for (; g < end; g++) {
        if (*g == '\\' || *g == '[' || *g == ']') buf_putc(&b, '\\');
        buf_putc(&b, *g);
      }
      buf_putc(&b, ']');
    } else if (*g == '\\' && g[1]) {
      regex_char(&b, *++g);
    } else {
      regex_char(&b, *g);
    }
  }
  return buf_steal(&b);
}

static int ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

char *deep_kernel_regex(const char *name) {
  /* The function's own name: the word before the first '<' or '(' outside
   * brackets (template arguments, parameters), after any return type and
   * namespaces. "void at::native::vectorized_elementwise_kernel<4, ...>(int,
   * ...)" -> vectorized_elementwise_kernel. */
  int depth = 0;
  const char *end = NULL;
  for (const char *p = name; *p && !end; p++) {
    if ((*p == '<' || *p == '(') && depth == 0 && p > name && (ident_char(p[-1]) || p[-1] == ' ')) end = p;
    else if (*p == '<' || *p == '(' || *p == '[' || *p == '{') depth++;
    else if ((*p == '>' || *p == ')' || *p == ']' || *p == '}') && depth > 0) depth--;
  }
  Buf b = {0};
  if (!end) { /* a plain name (C, or an extern "C" kernel such as cuBLAS's sm80_xmma_*) */
    for (const char *p = name; *p; p++) regex_char(&b, *p);
    return buf_steal(&b);
  }
  while (end > name && end[-1] == ' ') end--;
  const char *start = end;
  while (start > name && ident_char(start[-1])) start--;
  /* ncu spells the rest its own way (template parameters as declared, T1 for
   * float; 'const float *' for 'float const*'; <unnamed>): matched loosely,
   * so every instantiation and overload of this function inside the range
   * is profiled (checked on an H100: the exact spelling missed cudnn's and
   * at::native's templated kernels) */
  buf_puts(&b, "(?:.*[^A-Za-z0-9_])?");
  buf_add(&b, start, (size_t)(end - start));
  buf_puts(&b, "\\s*[<(].*");
  return buf_steal(&b);
}

static int has_glob(const char *s) { return strpbrk(s, "*?[") != NULL; }

/* ---- finding the tools ---- */

const char *deep_find_tool(const char *name) {
  static char found[2][PATH_MAX];
  int slot = strcmp(name, "ncu") != 0;
  char var[32];
  snprintf(var, sizeof var, "NCRT_%s", slot ? "NSYS" : "NCU");
  const char *e = getenv(var);
  if (e && *e) {
    if (strchr(e, '/')) return access(e, X_OK) == 0 ? e : NULL;
    name = e;
  }
  if (ncrun_resolve_cmd(name, found[slot], sizeof found[slot])) return found[slot];
  snprintf(found[slot], sizeof found[slot], "/usr/local/cuda/bin/%s", name); /* CUDA's, not on PATH */
  return access(found[slot], X_OK) == 0 ? found[slot] : NULL;
}

char *deep_tool_version(const char *tool) {
  char tmp[] = "/tmp/ncrun-version-XXXXXX";
  int fd = mkstemp(tmp);
  if (fd < 0) return NULL;
  close(fd);
  char *const argv[] = {(char *)tool, "--version", NULL};
  char *text = NULL, *line = NULL;
  if (ncrun_stage(NULL, NULL, argv, tmp) == 0) text = ncrun_read_file(tmp, NULL);
  unlink(tmp);
  if (text) {
    /* ncu prints a banner and then "Version 2025.3.1.0 (build ...)" */
    char *v = strstr(text, "Version");
    char *start = v ? v : text;
    start[strcspn(start, "\n")] = 0;
    line = xstrdup(start);
  }
  free(text);
  return line;
}

/* ---- stage 1's choice: `nctrace kernels` ---- */

typedef VEC(char *) Strings;

typedef struct {
  long ranges, async;
  Strings names;   /* matching range names */
  Strings seen;    /* when nothing matched: the trace's ranges */
  Strings kernels; /* top N kernel names, as the trace spells them */
} Choice;

/* One tsv field, its escapes (\\t \\n \\r \\\\) undone. */
static void push(Strings *v, const char *s) {
  Buf b = {0};
  for (; *s; s++) {
    if (*s == '\\' && s[1]) {
      s++;
      buf_putc(&b, *s == 't' ? '\t' : *s == 'n' ? '\n' : *s == 'r' ? '\r' : *s);
    } else {
      buf_putc(&b, *s);
    }
  }
  vec_push(v, buf_steal(&b));
}

/* argv built up one argument at a time; arg(a, NULL) ends it */
static void arg(Strings *a, const char *s) { vec_push(a, s ? xstrdup(s) : NULL); }

static void strings_free(Strings *v) {
  for (size_t i = 0; i < v->n; i++) free(v->v[i]);
  vec_free(v);
}

static void choice_free(Choice *c) {
  strings_free(&c->names);
  strings_free(&c->seen);
  strings_free(&c->kernels);
}

static void parse_choice(char *text, Choice *c) {
  int table = 0;
  char *save = NULL;
  for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    if (!strncmp(l, "# ranges\t", 9)) {
      sscanf(l + 9, "%ld\t%ld", &c->ranges, &c->async);
    } else if (!strncmp(l, "# range\t", 8)) {
      push(&c->names, l + 8);
    } else if (!strncmp(l, "# seen\t", 7)) {
      push(&c->seen, l + 7);
    } else if (l[0] == '#') {
      continue;
    } else if (!table) {
      table = !strncmp(l, "kernel\t", 7); /* the header */
    } else {
      char *tab = strchr(l, '\t');
      if (tab) *tab = 0;
      push(&c->kernels, l);
    }
  }
}

static int choose(const Deep *d, const char *sub, char *const *traces, int ntraces, cJSON *env, Choice *c) {
  char tmp[PATH_MAX + 64], out[PATH_MAX + 64];
  snprintf(tmp, sizeof tmp, "%s/." NC_RUN_KERNELS, sub);
  snprintf(out, sizeof out, "%s/" NC_RUN_KERNELS, sub);
  char top[32];
  snprintf(top, sizeof top, "%d", d->top);
  Strings argv = {0};
  const char *const fixed[] = {d->nctrace, "kernels", "--range", d->pattern, "--top", top, "--format", "tsv"};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) arg(&argv, fixed[i]);
  for (int i = 0; i < ntraces; i++) arg(&argv, traces[i]);
  arg(&argv, NULL);
  int st = ncrun_stage(env, "kernels", argv.v, tmp);
  strings_free(&argv);
  char *text = st == 0 ? ncrun_read_file(tmp, NULL) : NULL;
  unlink(tmp);
  if (!text) {
    ncrun_say("nctrace kernels failed (status %d): cannot choose the kernels of '%s'", st, d->pattern);
    return -1;
  }
  FILE *f = fopen(out, "w");
  if (f) {
    fprintf(f, "# pattern\t%s\n%s", d->pattern, text);
    fclose(f);
  }
  parse_choice(text, c);
  free(text);
  return 0;
}

/* ---- diagnosis from the tool's log ---- */

static int diagnose(const Deep *d, const char *log, const Choice *c, int status, const char *report) {
  char *text = ncrun_read_file(log, NULL);
  int bad = 0;
  if (text && strstr(text, "ERR_NVGPUCTRPERM")) {
    ncrun_say("ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM). Run as root, or allow "
              "all users: 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d/ and reload "
              "the driver (in a container: --cap-add SYS_ADMIN); see %s",
              log);
    bad = 1;
  } else if (text && (strstr(text, "No kernels were profiled") || strstr(text, "No reports were generated"))) {
    ncrun_say("%s captured nothing: no kernel ran inside a range matching '%s' under it.", d->backend, d->pattern);
    if (c->kernels.n)
      ncrun_say("stage 1 saw %zu kernel(s) there (%ld range instance(s)): the program may take another path "
                "under the profiler (data, timing), or the kernel filter missed ncu's spelling; try --top 0 (no "
                "kernel filter), see %s",
                c->kernels.n, c->ranges, log);
    else
      ncrun_say("stage 1 saw no kernel launched inside those ranges either: widen the pattern (e.g. "
                "'%s*'), or profile a range that encloses the GPU work; see %s",
                d->pattern, log);
    bad = 1;
  } else if (status != 0 || access(report, F_OK) != 0) {
    ncrun_say("%s failed (status %d) and wrote no report; its log: %s", d->backend, status, log);
    bad = 1;
  }
  free(text);
  return bad;
}

/* ---- the stages ---- */

static const char *const ncu_sets[] = {"basic", "detailed", "full", "nvlink", "pmsampling", "roofline", NULL};

static int run_ncu(const Deep *d, const char *sub, const Choice *c, char *const *cmd, cJSON *env) {
  Strings argv = {0};
  char buf[PATH_MAX + 128];
  arg(&argv, d->tool);
  arg(&argv, "--nvtx");
  /* push/pop ranges take a trailing '/', start/end ranges none: the form
   * stage 1 saw (ranges written by ncrt.span/ncrt_span are start/end) */
  char *re = deep_glob_regex(d->pattern);
  int startend = c->ranges > 0 && c->async == c->ranges;
  snprintf(buf, sizeof buf, "regex:ncrt@^%s$%s", re, startend ? "" : "/");
  free(re);
  arg(&argv, "--nvtx-include");
  arg(&argv, buf);
  if (c->kernels.n && d->top > 0) {
    Buf k = {0};
    buf_puts(&k, "regex:^(?:");
    for (size_t i = 0; i < c->kernels.n; i++) {
      char *kr = deep_kernel_regex(c->kernels.v[i]);
      if (i) buf_putc(&k, '|');
      buf_puts(&k, kr);
      free(kr);
    }
    buf_puts(&k, ")$");
    arg(&argv, "--kernel-name-base");
    arg(&argv, "demangled");
    arg(&argv, "-k");
    arg(&argv, k.s ? k.s : "");
    free(k.s);
  }
  /* the count per launch configuration (grid, block, shared memory), not in
   * all: the most frequent kernel would otherwise use the whole count */
  snprintf(buf, sizeof buf, "%d", d->launch_count);
  arg(&argv, "--filter-mode");
  arg(&argv, "per-launch-config");
  arg(&argv, "--launch-count");
  arg(&argv, buf);
  const char *set = d->set ? d->set : "basic";
  int is_set = 0;
  for (int i = 0; ncu_sets[i]; i++) is_set |= !strcmp(set, ncu_sets[i]);
  if (is_set) {
    arg(&argv, "--set");
    arg(&argv, set);
  } else { /* Section,Section,...: the identifiers `ncu --list-sections` shows */
    char *copy = xstrdup(set), *save = NULL;
    for (char *s = strtok_r(copy, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
      arg(&argv, "--section");
      arg(&argv, s);
    }
    free(copy);
  }
  snprintf(buf, sizeof buf, "%s/report", sub);
  arg(&argv, "--export");
  arg(&argv, buf);
  arg(&argv, "--force-overwrite");
  /* ncu's own messages (==PROF==) go to the log, not into the program's output */
  snprintf(buf, sizeof buf, "%s/ncu.log", sub);
  arg(&argv, "--log-file");
  arg(&argv, buf);
  for (int i = 0; cmd[i]; i++) arg(&argv, cmd[i]);
  arg(&argv, NULL);

  ncrun_say("stage 2: ncu on the kernels of NVTX %s ranges of domain 'ncrt' matching '%s' (%s), %s, at most %d "
            "launch(es) per launch configuration, sections: %s",
            startend ? "start/end" : "push/pop", d->pattern, argv.v[3],
            c->kernels.n && d->top > 0 ? "the top kernels of stage 1 only" : "every kernel", d->launch_count, set);
  int st = ncrun_stage(env, "ncu", argv.v, NULL);
  strings_free(&argv);

  char log[PATH_MAX + 64], report[PATH_MAX + 64], out[PATH_MAX + 64];
  snprintf(log, sizeof log, "%s/ncu.log", sub);
  snprintf(report, sizeof report, "%s/report.ncu-rep", sub);
  if (diagnose(d, log, c, st, report)) return 3;

  char *const raw[] = {(char *)d->tool, "--import", report, "--csv", "--page", "raw", NULL};
  snprintf(out, sizeof out, "%s/" NC_RUN_NCU_CSV, sub);
  int est = ncrun_stage(env, "ncu-export", raw, out);
  char *const sections[] = {(char *)d->tool, "--list-sections", NULL};
  snprintf(out, sizeof out, "%s/sections.txt", sub);
  ncrun_stage(env, "ncu-sections", sections, out);
  if (est != 0) {
    ncrun_say("ncu --import failed (status %d): %s/" NC_RUN_NCU_CSV " is incomplete", est, sub);
    return 3;
  }
  snprintf(out, sizeof out, "%s/" NC_RUN_NCU_CSV, sub);
  char *csv = ncrun_read_file(out, NULL);
  long rows = 0;
  for (char *p = csv; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
    if (*p == '"') rows++;
  free(csv);
  ncrun_say("ncu profiled %ld kernel launch(es): %s/" NC_RUN_NCU_CSV, rows > 2 ? rows - 2 : 0, sub);
  return 0;
}

static int run_nsys(const Deep *d, const char *sub, const Choice *c, char *const *cmd, cJSON *env) {
  /* nsys matches one exact range name: the glob's first match in stage 1 */
  const char *name = d->pattern;
  if (has_glob(name)) {
    name = c->names.n ? c->names.v[0] : name;
    ncrun_say("nsys captures one exact range name: '%s' (the first of %zu matching '%s')", name, c->names.n,
              d->pattern);
  }
  Strings argv = {0};
  char buf[PATH_MAX + 128];
  arg(&argv, d->tool);
  arg(&argv, "profile");
  arg(&argv, "--trace=cuda,nvtx");
  arg(&argv, "--capture-range=nvtx");
  snprintf(buf, sizeof buf, "--nvtx-capture=%s@ncrt", name);
  arg(&argv, buf);
  arg(&argv, "--capture-range-end=stop");
  /* our names are registered strings; unregistered ones (other code's) match too */
  arg(&argv, "--env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0");
  arg(&argv, "--force-overwrite=true");
  snprintf(buf, sizeof buf, "--output=%s/report", sub);
  arg(&argv, buf);
  for (int i = 0; cmd[i]; i++) arg(&argv, cmd[i]);
  arg(&argv, NULL);
  ncrun_say("stage 2: nsys, capture gated on the NVTX range '%s' of domain 'ncrt'", name);
  char log[PATH_MAX + 64], report[PATH_MAX + 64];
  snprintf(log, sizeof log, "%s/nsys.log", sub);
  snprintf(report, sizeof report, "%s/report.nsys-rep", sub);
  /* nsys has no log file of its own: its lines share the terminal with the
   * program's output, which is left untouched (not captured into a file) */
  (void)log;
  int st = ncrun_stage(env, "nsys", argv.v, NULL);
  strings_free(&argv);
  if (access(report, F_OK) != 0 && st == 0) {
    Deep nothing = *d;
    nothing.backend = "nsys";
    ncrun_say("nsys wrote no report (\"No reports were generated\"): the capture range '%s' never opened under "
              "it, or closed before any GPU work", name);
    diagnose(&nothing, "/dev/null", c, 1, report);
    return 3;
  }
  if (diagnose(d, "/dev/null", c, st, report)) return 3;
  snprintf(buf, sizeof buf, "%s/stats", sub);
  char *const stats[] = {(char *)d->tool, "stats", "--report", "cuda_gpu_kern_sum", "--format", "csv",
                         "--force-export=true", "--output", buf, report, NULL};
  char slog[PATH_MAX + 64];
  snprintf(slog, sizeof slog, "%s/stats.log", sub);
  if (ncrun_stage(env, "nsys-stats", stats, slog) != 0) {
    ncrun_say("nsys stats failed: see %s", slog);
    return 3;
  }
  ncrun_say("nsys kernels: %s/" NC_RUN_NSYS_CSV, sub);
  return 0;
}

int deep_run(const Deep *d, const char *dir, char *const *traces, int ntraces, char *const *cmd, cJSON *env) {
  char sub[PATH_MAX];
  snprintf(sub, sizeof sub, "%s/%s", dir, !strcmp(d->backend, "ncu") ? NC_RUN_NCU_DIR : NC_RUN_NSYS_DIR);
  if (ncrun_mkdirs(sub)) {
    ncrun_say("cannot create %s: %s", sub, strerror(errno));
    return 2;
  }
  if (ntraces == 0) {
    ncrun_say("stage 1 wrote no trace: cannot choose the kernels of '%s'", d->pattern);
    return 3;
  }
  Choice c = {0};
  if (choose(d, sub, traces, ntraces, env, &c)) return 3;
  int rc;
  if (c.ranges == 0) {
    Buf seen = {0};
    for (size_t i = 0; i < c.seen.n && i < 12; i++) {
      if (i) buf_puts(&seen, ", ");
      buf_puts(&seen, c.seen.v[i]);
    }
    ncrun_say("no range matching '%s' opened in stage 1, so %s would capture nothing; ranges seen: %s", d->pattern,
              d->backend, seen.s ? seen.s : "none (was the program instrumented?)");
    free(seen.s);
    rc = 3;
  } else {
    if (!c.kernels.n)
      ncrun_say("ranges matching '%s' opened %ld time(s) in stage 1 but no GPU kernel was recorded inside "
                "(no GPU activity in the trace): %s runs without a kernel filter",
                d->pattern, c.ranges, d->backend);
    else
      ncrun_say("stage 1: %zu kernel(s) inside %ld range instance(s) matching '%s' (%s/" NC_RUN_KERNELS ")", c.kernels.n,
                c.ranges, d->pattern, sub);
    rc = !strcmp(d->backend, "ncu") ? run_ncu(d, sub, &c, cmd, env) : run_nsys(d, sub, &c, cmd, env);
  }
  choice_free(&c);
  return rc;
}
