/* ncrun.h: what ncrun's files share (ncrun.c: options, the run directory,
 * the collector stage; deep.c: the Nsight Compute and Nsight Systems
 * stages; proc.c: messages, files, the processes ncrun starts; opts.c:
 * the option table, its parser and --help). Internal to the ncrun program; nothing here is installed.
 *
 * Ownership: a Stage's argv and the strings of a Deep belong to the caller;
 * the env.json document (cJSON) belongs to ncrun.c's main, which writes it
 * again after every stage (ncrun_save_env). */
#ifndef NCRUN_H
#define NCRUN_H

#include <cjson/cJSON.h>
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* proc.c: messages (none with ncrun_quiet), files, the processes ncrun
 * starts. */
extern int ncrun_quiet;
void ncrun_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int ncrun_exists(const char *p);
int ncrun_mkdirs(const char *path);
/* Is dir ours to trust (issue 42)? Its spill and marker files are read,
 * renamed and removed as this user: a directory of another user, or one
 * others may write into, is refused (the reason into why) unless
 * --trust-run-dir. 1 or 0. */
int ncrun_dir_trusted(const char *dir, char *why, size_t n);
/* A whole file, NUL-terminated (its length in *len when len is given);
 * NULL when it cannot be opened. */
char *ncrun_read_file(const char *path, size_t *len);
/* execvp's search: the file cmd would run, into out; 0 if none. */
int ncrun_resolve_cmd(const char *cmd, char *out, size_t n);

/* Run argv as a child of ncrun (signals passed on, dies with ncrun), its
 * stdout/stderr the program's own unless out_path names a file for stdout.
 * Returns the exit status as a shell gives it (128+N for signal N), 127 when
 * it could not start. The stage is appended to env["stages"] with its argv,
 * status and wall seconds. */
int ncrun_stage(cJSON *env, const char *stage, char *const *argv, const char *out_path);

/* Signals ncrun gets (INT, TERM, HUP, QUIT) passed on to the child set by
 * ncrun_set_child (0: none), except a terminal's key the child got anyway.
 * ncrun_forward_block holds them from before a fork until the child is
 * set; in the child, ncrun_forward_child puts them back to the default. */
void ncrun_forward_signals(void);
void ncrun_forward_block(sigset_t *old);
void ncrun_forward_child(const sigset_t *old);
void ncrun_set_child(pid_t pid);

/* env["stages"] += {stage, argv, stdout, status, seconds} of a stage that
 * ran from t0 to t1 (nothing without env or stage). */
struct timespec;
void ncrun_record_stage(cJSON *env, const char *stage, char *const *argv, const char *out_path, int rc,
                        const struct timespec *t0, const struct timespec *t1);

/* env.json written again, atomically (a temporary file renamed). */
void ncrun_save_env(const char *dir, cJSON *env);

/* The deep-dive stages after the collector's stage 1. */
typedef struct {
  const char *backend;  /* "ncu" or "nsys" */
  const char *pattern;  /* range glob (fnmatch), as the user gave it */
  const char *tool;     /* path of ncu or nsys */
  const char *nctrace;  /* path of nctrace (kernel selection, summary) */
  const char *set;      /* ncu: a set name (basic, roofline, full, ...) or Section,Section */
  int top;              /* kernels to profile */
  int launch_count;     /* ncu: at most this many launches profiled */
} Deep;

/* Find a profiler: $NCRT_NCU / $NCRT_NSYS, then PATH, then
 * /usr/local/cuda/bin. NULL when absent. */
const char *deep_find_tool(const char *name);
/* The tool's version line (first line of `tool --version`), or NULL. */
char *deep_tool_version(const char *tool);

/* Stage 2 and the exports, into <dir>/ncu or <dir>/nsys, from the stage-1
 * traces (traces[0..ntraces)). Returns ncrun's exit status: 0, or non-zero
 * with the reason said. */
int deep_run(const Deep *d, const char *dir, char *const *traces, int ntraces, char *const *cmd, cJSON *env);

/* fnmatch glob -> ECMAScript regex body (no anchors), for ncu's regex:
 * include expressions. Returns a malloc'ed string. */
char *deep_glob_regex(const char *glob);
/* A kernel name as our trace spells it (the C++ runtime's __cxa_demangle)
 * -> a regex for ncu's -k on demangled names: the function's own name with
 * anything before it (return type, namespaces) and its template arguments
 * and parameters in any spelling (ncu writes them differently). A plain
 * name matches exactly. malloc'ed. */
char *deep_kernel_regex(const char *name);

/* opts.c: the options as given (checked; strings point into argv). */
typedef struct {
  const char *output;   /* root for run directories ($NCRT_OUTPUT_ROOT or -o) */
  const char *run_dir;  /* --run-dir: exactly this one */
  const char *name;     /* -n: the trace name */
  const char *rules;    /* --rules: copied into the run */
  const char *shadow;   /* --shadow: first on PYTHONPATH */
  const char *backend;  /* ncrt, torch, ncu or nsys */
  const char *reuse;    /* --trace: stage 1's trace, not run again */
  const char *finalize; /* --finalize RUNDIR: only that */
  int summary;          /* -1: default (summary.md with ncu and nsys only) */
  int preload;          /* LD_PRELOAD libncrt into the command */
  int trust_run_dir;    /* --trust-run-dir: another user's or a shared run directory too */
  Deep deep;            /* --ncu/--nsys and their options */
  cJSON *opts;          /* env.json's "options": each given, by long name */
  char **cmd;           /* the command and its arguments */
} Options;

/* Reads argv into o, setting the NCRT_* variables options ask for. Returns
 * -1 when the run goes on (o->opts then belongs to the caller), else the
 * status to exit with: 0 after --help or --version, 2 after a bad option
 * or value (the message and usage said). */
int ncrun_parse_options(int argc, char **argv, Options *o);

#endif
