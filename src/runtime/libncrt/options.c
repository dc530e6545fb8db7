/* options.c: libncrt's settings, read once from the environment (ncrun
 * sets these; they can also be set by hand).
 *
 *   NCRT_OUTPUT_DIR     where traces go (default ".")
 *   NCRT_TRACE_NAME     <name> in <name>-rank<R>.pt.trace.json.gz (default: the
 *                       program's name)
 *   NCRT_ACTIVITIES     comma list of cpu, gpu, mem (default cpu,gpu)
 *   NCRT_SCHEDULE       wait=W,warmup=U,active=A,repeat=R over steps
 *   NCRT_STEP           range name that starts a step (else ncrt_step())
 *   NCRT_CAPTURE_RANGE  fnmatch pattern: record only while such a range is open
 *   NCRT_THROTTLE       CALLS:US (default 100000:10), "off" or 0 to disable
 *   NCRT_GZIP_LEVEL     zlib level (default 1)
 *   NCRT_CLOCK          tsc | monotonic (default tsc where invariant)
 *   NCRT_QUIET          1: no "ncrt:" messages
 *   NCRT_INCREMENTAL    off: no conversion while the program runs; the whole
 *                       trace is made at exit (writer.c; for comparison)
 *   NCRT_DORMANT        1: in-process (the Python package): capture off until
 *                       started, no trace at exit unless capture is on
 *   NCRT_ROOT_PID       set by ncrun: other processes (subprocesses) add -pid<PID>
 * Rank: RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK; world size:
 * WORLD_SIZE, SLURM_NTASKS, OMPI_COMM_WORLD_SIZE, PMI_SIZE. */
#define _GNU_SOURCE
#include "rt.h"
#include "ncrt_protocol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *env(const char *k) {
  const char *v = getenv(k);
  return v && *v ? v : NULL;
}

static int first_int(const char *const *keys, int dflt) {
  for (; *keys; keys++) {
    const char *v = env(*keys);
    if (v) return atoi(v);
  }
  return dflt;
}

static void copy(char *dst, size_t n, const char *src) { snprintf(dst, n, "%s", src ? src : ""); }

static int invariant_tsc(void) {
#if defined(__x86_64__)
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return 0;
  char line[4096];
  int ok = 0;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "flags", 5)) {
      ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
      break;
    }
  fclose(f);
  return ok;
#else
  return 0;
#endif
}

static void parse_schedule(const char *s) {
  char buf[256];
  copy(buf, sizeof buf, s);
  rt_opt.repeat = 1;
  for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
    char *eq = strchr(tok, '=');
    if (!eq) continue;
    *eq = 0;
    long v = atol(eq + 1);
    if (v < 0) v = 0;
    if (!strcmp(tok, "wait")) rt_opt.wait = v;
    else if (!strcmp(tok, "warmup")) rt_opt.warmup = v;
    else if (!strcmp(tok, "active")) rt_opt.active = v;
    else if (!strcmp(tok, "repeat")) rt_opt.repeat = v;
    else rt_say("NCRT_SCHEDULE: unknown key '%s' ignored", tok);
  }
}

void rt_options_load(void) {
  memset(&rt_opt, 0, sizeof rt_opt);
  rt_opt.quiet = env(NCRT_ENV_QUIET) && atoi(env(NCRT_ENV_QUIET));
  copy(rt_opt.out_dir, sizeof rt_opt.out_dir, env(NCRT_ENV_OUTPUT_DIR) ? env(NCRT_ENV_OUTPUT_DIR) : ".");
  const char *name = env(NCRT_ENV_TRACE_NAME);
  if (!name) {
    extern char *program_invocation_short_name;
    name = program_invocation_short_name;
    /* python3 script.py: name the trace after the script */
    if (name && !strncmp(name, "python", 6)) {
      FILE *f = fopen("/proc/self/cmdline", "r");
      static char cmd[4096];
      if (f) {
        size_t n = fread(cmd, 1, sizeof cmd - 1, f);
        fclose(f);
        cmd[n] = 0;
        for (char *p = cmd + strlen(cmd) + 1; p < cmd + n; p += strlen(p) + 1) {
          if (*p == '-') {
            if (!strcmp(p, "-m") && p + 3 < cmd + n) name = p + 3;
            if (!strcmp(p, "-m") || !strcmp(p, "-c")) break;
            continue;
          }
          const char *b = strrchr(p, '/');
          name = b ? b + 1 : p;
          break;
        }
      }
    }
  }
  copy(rt_opt.name, sizeof rt_opt.name, name ? name : "ncrt");
  char *dot = strrchr(rt_opt.name, '.');
  if (dot && !strcmp(dot, ".py")) *dot = 0;

  static const char *const rank_keys[] = {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", NULL};
  static const char *const size_keys[] = {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL};
  rt_opt.rank = first_int(rank_keys, 0);
  /* Under ncrun, a process that is neither the command ncrun started nor a
   * launcher's rank (a subprocess) names its trace by pid as well. */
  const char *root = env(NCRT_ENV_ROOT_PID);
  int ranked = 0;
  for (const char *const *k = rank_keys; *k; k++) ranked |= env(*k) != NULL;
  if (root && atoi(root) != (int)getpid() && !ranked) {
    size_t l = strlen(rt_opt.name);
    snprintf(rt_opt.name + l, sizeof rt_opt.name - l, "-pid%d", (int)getpid());
  }
  rt_opt.world_size = first_int(size_keys, 1);

  const char *act = env(NCRT_ENV_ACTIVITIES);
  if (!act) act = "cpu,gpu";
  rt_opt.cpu = strstr(act, "cpu") != NULL;
  rt_opt.gpu = strstr(act, "gpu") != NULL;
  rt_opt.mem = strstr(act, "mem") != NULL;

  if (env(NCRT_ENV_SCHEDULE)) parse_schedule(env(NCRT_ENV_SCHEDULE));
  copy(rt_opt.step_name, sizeof rt_opt.step_name, env(NCRT_ENV_STEP));
  copy(rt_opt.gate, sizeof rt_opt.gate, env(NCRT_ENV_CAPTURE_RANGE));

  rt_opt.throttle_calls = 100000;
  rt_opt.throttle_us = 10.0;
  const char *th = env(NCRT_ENV_THROTTLE);
  if (th) {
    if (!strcmp(th, "off") || !strcmp(th, "0")) {
      rt_opt.throttle_calls = 0;
    } else {
      rt_opt.throttle_calls = atol(th);
      const char *c = strchr(th, ':');
      if (c) rt_opt.throttle_us = atof(c + 1);
      if (rt_opt.throttle_calls < 0) rt_opt.throttle_calls = 0;
    }
  }
  rt_opt.level = env(NCRT_ENV_GZIP_LEVEL) ? atoi(env(NCRT_ENV_GZIP_LEVEL)) : 1;
  if (rt_opt.level < 0 || rt_opt.level > 9) rt_opt.level = 1;
  rt_opt.dormant = env(NCRT_ENV_DORMANT) && atoi(env(NCRT_ENV_DORMANT)) > 0;
  /* whose claim sends SIGTERM (rt_spill_thread): "own-exit" a thread's
   * claim on its own records in _exit's save, "own-spill" in its own spill
   * (a full buffer, its end), anything else the flusher's */
  const char *tc = env(NCRT_ENV_TEST_TERM_IN_CLAIM);
  rt_opt.test_term_in_claim = !tc ? 0 : !strcmp(tc, "own-exit") ? 2 : !strcmp(tc, "own-spill") ? 3 : 1;
  const char *clk = env(NCRT_ENV_CLOCK);
  rt_opt.use_tsc = clk && !strcmp(clk, "monotonic") ? 0 : invariant_tsc();
}
