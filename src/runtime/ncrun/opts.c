/* opts.c: ncrun's options. One table (OPTIONS) says each option's spelling,
 * value, help line, the environment variable it sets for libncrt and the
 * ncrt module, the check its value must pass and where else it goes; the
 * parser and --help both read it, so an option is one row.
 *
 * Contract: ncrun_parse_options fills an Options (ncrun.h) and returns -1
 * when the run goes on, else the status ncrun exits with (0 after --help or
 * --version, 2 after a bad option, its message printed). Values are checked
 * here, before anything runs: a typo must not cost a run. Environment
 * variables are set as the options are read (ncrun's own environment,
 * which the command inherits). */
#define _GNU_SOURCE
#include "ncbase.h"
#include "ncrt_protocol.h"
#include "ncrun.h"
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- option values: each check returns NULL or the reason, for
 * "ncrun: OPT VALUE: reason" */
static char why[512];

static const char *check_schedule(const char *v) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", v);
  long val[4] = {0, 0, 0, 1};
  static const char *const keys[] = {"wait", "warmup", "active", "repeat"};
  int positional = !strchr(v, '='), k = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), k++) {
    char *num = tok;
    int slot = k;
    if (!positional) {
      char *eq = strchr(tok, '=');
      if (!eq) {
        snprintf(why, sizeof why, "'%s' is not KEY=N (keys: wait, warmup, active, repeat)", tok);
        return why;
      }
      *eq = 0;
      num = eq + 1;
      for (slot = 0; slot < 4 && strcmp(tok, keys[slot]); slot++) {
      }
      if (slot == 4) {
        const char *near = nearest_word(tok, keys, 4);
        snprintf(why, sizeof why, "unknown key '%s'%s%s%s (keys: wait, warmup, active, repeat)", tok,
                 near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
        return why;
      }
    } else if (k > 3) {
      snprintf(why, sizeof why, "at most four numbers: W,U,A[,R]");
      return why;
    }
    char *end;
    long n = strtol(num, &end, 10);
    if (!*num || *end || n < 0) {
      snprintf(why, sizeof why, "%s=%s is not a whole number >= 0", keys[slot], num);
      return why;
    }
    val[slot] = n;
  }
  if (positional && k < 3) {
    snprintf(why, sizeof why, "wants wait=W,warmup=U,active=A[,repeat=R] or W,U,A[,R]");
    return why;
  }
  if (val[2] < 1) {
    snprintf(why, sizeof why, "active must be at least 1 (steps recorded per cycle)");
    return why;
  }
  return NULL;
}

static const char *check_activities(const char *v) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", v);
  int any = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
    static const char *const acts[] = {"cpu", "gpu", "mem"};
    if (strcmp(tok, "cpu") && strcmp(tok, "gpu") && strcmp(tok, "mem")) {
      const char *near = nearest_word(tok, acts, 3);
      snprintf(why, sizeof why, "unknown activity '%s'%s%s%s (cpu, gpu, mem)", tok, near ? " (did you mean '" : "",
               near ? near : "", near ? "'?)" : "");
      return why;
    }
    any = 1;
  }
  return any ? NULL : "empty (cpu, gpu, mem)";
}

static const char *check_throttle(const char *v) {
  if (!strcmp(v, "off") || !strcmp(v, "0")) return NULL;
  char *end;
  long n = strtol(v, &end, 10);
  if (end != v && n > 0 && (!*end || (*end == ':' && end[1] && strtod(end + 1, &end) >= 0 && !*end)))
    return NULL;
  return "wants CALLS or CALLS:US (e.g. 100000 or 100000:10) or off";
}

static const char *check_budget(const char *v) {
  int ok;
  ncrt_parse_size(v, &ok);
  return ok ? NULL : "wants a size (512M, 2G, 1.5T: bytes of records the run may spill) or off";
}

static const char *check_level(const char *v) {
  char *end;
  long n = strtol(v, &end, 10);
  return *v && !*end && n >= 0 && n <= 9 ? NULL : "wants a zlib level from 0 to 9";
}

static const char *check_format(const char *v) {
  return !strcmp(v, "json") || !strcmp(v, "perfetto") ? NULL : "wants json or perfetto";
}

static const char *check_readable(const char *v) {
  if (access(v, R_OK) == 0) return NULL;
  snprintf(why, sizeof why, "%s", strerror(errno));
  return why;
}

static const char *check_dir(const char *v) {
  struct stat sd;
  if (stat(v, &sd) != 0) {
    snprintf(why, sizeof why, "%s", strerror(errno));
    return why;
  }
  return S_ISDIR(sd.st_mode) ? NULL : "not a directory";
}

static const char *check_backend(const char *v) {
  static const char *const names[] = {"ncrt", "torch", "ncu", "nsys"};
  for (int k = 0; k < 4; k++)
    if (!strcmp(v, names[k])) return NULL;
  return "not one of ncrt, torch, ncu, nsys";
}

static const char *check_count(const char *v) {
  char *end;
  long n = strtol(v, &end, 10);
  return *v && !*end && n >= 0 && n <= 100000 ? NULL : "wants a number >= 0";
}

static const char *check_positive(const char *v) {
  char *end;
  long n = strtol(v, &end, 10);
  return *v && !*end && n >= 1 && n <= 100000 ? NULL : "wants a number >= 1";
}

/* ---- what an option does besides setting a variable or a string of
 * Options. Each returns -1 (go on) or an exit status. */
typedef struct OptRow OptRow;
typedef int (*Apply)(Options *o, const OptRow *row, const char *v);

/* One row per option. meta: the value's name in --help (NULL: a flag).
 * env: set to the value (a flag: to "1"). json: recorded in env.json's
 * "options" under its long name. A row with no long name is a heading of
 * --help. */
struct OptRow {
  const char *s, *l, *meta;
  const char *help; /* '\n' starts a continuation line */
  const char *env;
  const char *(*check)(const char *v);
  Apply apply;
  int json;
  size_t to; /* TO(field): the value goes to that string of Options (0: none) */
};
#define TO(field) (offsetof(Options, field) + 1)


static int to_top(Options *o, const OptRow *r, const char *v) { return (void)r, o->deep.top = atoi(v), -1; }
static int to_launch(Options *o, const OptRow *r, const char *v) { return (void)r, o->deep.launch_count = atoi(v), -1; }
static int no_preload(Options *o, const OptRow *r, const char *v) { return (void)r, (void)v, o->preload = 0, -1; }
static int trust_dir(Options *o, const OptRow *r, const char *v) { return (void)r, (void)v, o->trust_run_dir = 1, -1; }
static int quiet(Options *o, const OptRow *r, const char *v) { return (void)o, (void)r, (void)v, ncrun_quiet = 1, -1; }

/* --ncu GLOB / --nsys GLOB: that backend, on the ranges GLOB matches */
static int deep_pattern(Options *o, const OptRow *r, const char *v) {
  o->backend = r->l + 2;
  o->deep.pattern = v;
  return -1;
}

static int summary_on(Options *o, const OptRow *r, const char *v) { return (void)r, (void)v, o->summary = 1, -1; }
static int summary_off(Options *o, const OptRow *r, const char *v) { return (void)r, (void)v, o->summary = 0, -1; }

/* libncrt reads the long form W,U,A,R spelled with keys */
static int schedule(Options *o, const OptRow *r, const char *v) {
  (void)o, (void)r;
  if (strchr(v, '=')) return setenv(NCRT_ENV_SCHEDULE, v, 1), -1;
  long w = 0, u = 0, ac = 0, rep = 1;
  sscanf(v, "%ld,%ld,%ld,%ld", &w, &u, &ac, &rep); /* check_schedule made sure of three */
  char buf[128];
  snprintf(buf, sizeof buf, "wait=%ld,warmup=%ld,active=%ld,repeat=%ld", w, u, ac, rep);
  setenv(NCRT_ENV_SCHEDULE, buf, 1);
  return -1;
}

static int help(Options *o, const OptRow *r, const char *v);

static int version(Options *o, const OptRow *r, const char *v) {
  (void)o, (void)r, (void)v;
  printf("ncrun %s\n", NC_VERSION);
  return 0;
}

static const OptRow OPTIONS[] = {
    {"-o", "--output", "DIR", "root for run directories (default $NCRT_OUTPUT_ROOT, else ./ncrt-runs)", NULL, NULL,
     NULL, 1, TO(output)},
    {NULL, "--run-dir", "DIR", "use exactly this run directory", NULL, NULL, NULL, 1, TO(run_dir)},
    {NULL, "--trust-run-dir", NULL,
     "accept a run directory of another user or writable by others\n"
     "(its spill files are then trusted; refused by default)",
     NULL, NULL, trust_dir, 0, 0},
    {"-n", "--name", "NAME", "trace name (default: the script or program name)", NULL, NULL, NULL, 1, TO(name)},
    {"-a", "--activities", "LIST", "cpu,gpu,mem (default cpu,gpu)", NCRT_ENV_ACTIVITIES, check_activities, NULL, 1, 0},
    {NULL, "--schedule", "SPEC", "wait=W,warmup=U,active=A,repeat=R (or W,U,A[,R]) over steps", NULL,
     check_schedule, schedule, 1, 0},
    {NULL, "--step", "NAME", "a range named NAME starts a step (default: ncrt_step()/ncrt.step())", NCRT_ENV_STEP,
     NULL, NULL, 1, 0},
    {NULL, "--capture-range", "PAT", "record only while a range matching PAT (fnmatch) is open",
     NCRT_ENV_CAPTURE_RANGE, NULL, NULL, 1, 0},
    {NULL, "--throttle", "N[:US]",
     "stop recording a name after N calls (with :US, only if their\n"
     "exclusive mean was under US us; default 100000; 'off' disables)",
     NCRT_ENV_THROTTLE, check_throttle, NULL, 1, 0},
    {NULL, "--disk-budget", "SIZE",
     "records the run may spill (512M, 2G; 'off'): past it, recording\n"
     "stops and the trace says when (default: 8G or half the free space)",
     NCRT_ENV_DISK_BUDGET, check_budget, NULL, 1, 0},
    {NULL, "--rules", "FILE", "rules used to instrument the program (copied into the run)", NULL, check_readable,
     NULL, 1, TO(rules)},
    {NULL, "--shadow", "DIR", "rewritten Python tree, put first on PYTHONPATH", NULL, check_dir, NULL, 1, TO(shadow)},
    {NULL, "--torch", NULL, "ncrt.range also opens torch.profiler.record_function", NCRT_ENV_TORCH, NULL, NULL, 1, 0},
    {NULL, "--no-preload", NULL, "do not LD_PRELOAD libncrt (traces are then lost on _exit)", NULL, NULL, no_preload,
     1, 0},
    {NULL, "--summary", NULL,
     "write summary.md (nctrace summary of the traces) at the end\n"
     "(default with --ncu/--nsys; --no-summary: never)",
     NULL, NULL, summary_on, 0, 0},
    {NULL, "--no-summary", NULL, NULL, NULL, NULL, summary_off, 0, 0},
    {NULL, NULL, NULL, "backends (docs/deep-profiling.md):", NULL, NULL, NULL, 0, 0},
    {NULL, "--backend", "NAME",
     "ncrt (default: our collector), torch (torch.profiler, Python programs),\n"
     "ncu or nsys (stage 1 under ncrt, stage 2 under the profiler)",
     NULL, check_backend, NULL, 1, TO(backend)},
    {NULL, "--ncu", "GLOB", "Nsight Compute on the top kernels inside ranges matching GLOB", NULL, NULL, deep_pattern,
     1, 0},
    {NULL, "--nsys", "GLOB", "Nsight Systems, capture gated on the range GLOB names", NULL, NULL, deep_pattern, 1, 0},
    {NULL, "--top", "N", "kernels to profile under ncu (default 5; 0: no kernel filter)", NULL, check_count, to_top,
     1, 0},
    {NULL, "--set", "SET", "ncu section set (basic, roofline, full, ...) or Section,Section (default basic)", NULL,
     NULL, NULL, 1, TO(deep.set)},
    {NULL, "--launch-count", "N", "ncu profiles at most N launches per launch configuration (default 5)", NULL,
     check_positive, to_launch, 1, 0},
    {NULL, "--trace", "FILE", "reuse this stage-1 trace instead of running stage 1", NULL, check_readable, NULL,
     1, TO(reuse)},
    {NULL, "--with-stack", NULL, "torch backend: record Python stacks", NCRT_ENV_WITH_STACK, NULL, NULL, 1, 0},
    {NULL, "--record-shapes", NULL, "torch backend: record operator input shapes", NCRT_ENV_RECORD_SHAPES, NULL, NULL,
     1, 0},
    {NULL, "--gzip-level", "N", "zlib level for traces (default 1)", NCRT_ENV_GZIP_LEVEL, check_level, NULL, 1, 0},
    {NULL, "--trace-format", "FMT",
     "json (default: <name>.pt.trace.json.gz, Kineto's layout) or perfetto\n"
     "(<name>.pftrace: Perfetto's protobuf, cheaper for big runs)",
     NCRT_ENV_TRACE_FORMAT, check_format, NULL, 1, 0},
    {NULL, "--finalize", "RUNDIR",
     "write the traces of processes that died in RUNDIR, or whose exit left\n"
     "them to ncrun (done after every run)",
     NULL, NULL, NULL, 0, TO(finalize)},
    {"-q", "--quiet", NULL, "no ncrun messages", NULL, NULL, quiet, 0, 0},
    {"-V", "--version", NULL, "print the version", NULL, NULL, version, 0, 0},
    {"-h", "--help", NULL, "this help", NULL, NULL, help, 0, 0},
};
#define NOPTIONS (sizeof OPTIONS / sizeof OPTIONS[0])

/* --help, from the table: "  -o, --output DIR        text", continuation
 * lines under the text */
static void usage(FILE *f) {
  fputs("usage: ncrun [options] -- cmd args...\n", f);
  for (size_t i = 0; i < NOPTIONS; i++) {
    const OptRow *r = &OPTIONS[i];
    if (!r->help) continue; /* told on another row's line (--no-summary) */
    if (!r->l) {
      fprintf(f, "%s\n", r->help);
      continue;
    }
    char spell[64];
    snprintf(spell, sizeof spell, "%s%s%s", r->l, r->meta ? " " : "", r->meta ? r->meta : "");
    fprintf(f, "  %s%s%-20s", r->s ? r->s : "  ", r->s ? ", " : "  ", spell);
    for (const char *h = r->help; *h;) {
      size_t n = strcspn(h, "\n");
      fprintf(f, "%.*s\n", (int)n, h);
      h += n;
      if (*h) h++, fprintf(f, "%26s", "");
    }
  }
}

static int help(Options *o, const OptRow *r, const char *v) {
  (void)o, (void)r, (void)v;
  usage(stdout);
  return 0;
}

static const OptRow *find_option(const char *a) {
  for (size_t i = 0; i < NOPTIONS; i++)
    if (OPTIONS[i].l && (!strcmp(a, OPTIONS[i].l) || (OPTIONS[i].s && !strcmp(a, OPTIONS[i].s))))
      return &OPTIONS[i];
  return NULL;
}

int ncrun_parse_options(int argc, char **argv, Options *o) {
  *o = (Options){.output = getenv(NCRT_ENV_OUTPUT_ROOT), .backend = "ncrt", .summary = -1, .preload = 1,
                 .deep = {.top = 5, .launch_count = 5}, .opts = cJSON_CreateObject()};
  int i, rc = -1;
  for (i = 1; i < argc && rc < 0; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) {
      i++;
      break;
    }
    if (a[0] != '-') break; /* the command starts here (no "--") */
    const OptRow *r = find_option(a);
    if (!r) {
      fprintf(stderr, "ncrun: unknown option %s\n", a);
      usage(stderr);
      rc = 2;
      break;
    }
    const char *v = NULL;
    if (r->meta) {
      if (i + 1 >= argc) {
        fprintf(stderr, "ncrun: %s needs a value\n", a);
        usage(stderr);
        rc = 2;
        break;
      }
      v = argv[++i];
      const char *bad = r->check ? r->check(v) : NULL;
      if (bad) {
        fprintf(stderr, "ncrun: %s %s: %s\n", a, v, bad);
        rc = 2;
        break;
      }
    }
    if (r->json) {
      if (v) cJSON_AddStringToObject(o->opts, r->l + 2, v);
      else cJSON_AddTrueToObject(o->opts, r->l + 2);
    }
    if (r->env) setenv(r->env, v ? v : "1", 1);
    if (r->to) *(const char **)((char *)o + r->to - 1) = v;
    if (r->apply) rc = r->apply(o, r, v);
  }
  if (rc < 0 && !o->finalize && i >= argc) {
    fprintf(stderr, "ncrun: no command given\n");
    usage(stderr);
    rc = 2;
  }
  if (rc >= 0) {
    cJSON_Delete(o->opts);
    o->opts = NULL;
    return rc;
  }
  o->cmd = argv + i;
  return -1;
}
