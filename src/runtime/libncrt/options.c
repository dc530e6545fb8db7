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
 *   NCRT_THROTTLE       CALLS[:US] (default 100000: calls alone), "off" or 0 to disable
 *   NCRT_GZIP_LEVEL     zlib level (default 1)
 *   NCRT_TRACE_FORMAT   json (default: <name>.pt.trace.json.gz) or perfetto
 *                       (<name>.pftrace, Perfetto's protobuf)
 *   NCRT_CLOCK          tsc | monotonic (default tsc where invariant)
 *   NCRT_QUIET          1: no "ncrt:" messages
 *   NCRT_INCREMENTAL    off: no conversion while the program runs; the whole
 *                       trace is made at exit (convert.c; for comparison)
 *   NCRT_DORMANT        1: in-process (the Python package): capture off until
 *                       started, no trace at exit unless capture is on
 *   NCRT_ROOT_PID       set by ncrun: other processes (subprocesses) add -pid<PID>
 * Rank: RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK; world size:
 * WORLD_SIZE, SLURM_NTASKS, OMPI_COMM_WORLD_SIZE, PMI_SIZE. */
#define _GNU_SOURCE
#include "rt.h"
#include "ncrt_protocol.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

RtOptions rt_opt;
/* the process's state, set by the collector, read by every file */
volatile int rt_collecting;
int rt_exiting;

/* ---- messages ---- */

void rt_say(const char *fmt, ...) {
  if (rt_opt.quiet) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(stderr, "ncrt: %s\n", buf);
}

static const char *env(const char *k) {
  const char *v = getenv(k);
  return v && *v ? v : NULL;
}

/* The first of keys set to a whole number from 0 to INT_MAX; one that is
 * set to anything else is ignored, saying so (never its leading digits). */
static int first_int(const char *const *keys, int dflt) {
  for (; *keys; keys++) {
    const char *v = env(*keys);
    if (!v) continue;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (!errno && !*end && n >= 0 && n <= INT_MAX) return (int)n;
    rt_say("%s=%s is not a whole number from 0: ignored", *keys, v);
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

RtProcess rt_proc;
NcHost rt_host;

static uint64_t mono_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The process's start on CLOCK_MONOTONIC: /proc/self/stat's starttime is in
 * clock ticks since boot (CLOCK_BOOTTIME), to 10 ms; 0 if unreadable. */
static uint64_t process_start_ns(void) {
  char b[1024];
  FILE *f = fopen("/proc/self/stat", "r");
  if (!f) return 0;
  size_t n = fread(b, 1, sizeof b - 1, f);
  fclose(f);
  b[n] = 0;
  const char *p = strrchr(b, ')'); /* the command may hold spaces */
  if (!p) return 0;
  /* fields after the command: state is field 3, starttime field 22 */
  int field = 2;
  unsigned long long st = 0;
  for (; *p && field < 22; p++)
    if (*p == ' ') field++;
  if (field != 22 || sscanf(p, "%llu", &st) != 1) return 0;
  long hz = sysconf(_SC_CLK_TCK);
  struct timespec bt;
  if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &bt) != 0) return 0;
  uint64_t boot = (uint64_t)bt.tv_sec * 1000000000u + (uint64_t)bt.tv_nsec, mono = mono_now();
  uint64_t at = st * (1000000000u / (uint64_t)hz);
  return at <= boot && boot - at <= mono ? mono - (boot - at) : 0;
}

/* 1 if process pid's starting environment has key=val (val NULL: key at
 * all), 0 if not, -1 unreadable. */
static int environ_has(int pid, const char *key, const char *val) {
  char path[64], b[65536];
  snprintf(path, sizeof path, "/proc/%d/environ", pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(b, 1, sizeof b - 1, f);
  fclose(f);
  b[n] = 0;
  size_t kl = strlen(key);
  for (const char *p = b; p < b + n; p += strlen(p) + 1)
    if (!strncmp(p, key, kl) && p[kl] == '=') return !val || !strcmp(p + kl + 1, val);
  return 0;
}

static void set(char *dst, size_t n, const char *src) { snprintf(dst, n, "%s", src); }

/* Who this process is (rt.h, RtProcess). A rank variable set for this
 * process (not inherited from its parent, which a launcher's ranks are
 * not) makes it a rank; so does being the command ncrun ran, or running
 * outside ncrun with no rank variable at all. The rest (a DataLoader or
 * Pool worker, a subprocess) belong to the rank they inherited; the ncrt
 * Python module tells the role when it learns it (role verb). */
/* /proc/self/cmdline (arguments separated by NULs), read once: the trace's
 * name and the process's start both look at it. */
static char cmd_buf[4096];
static size_t cmd_len;

static const char *cmdline(size_t *n) {
  static int read_once;
  if (!read_once) {
    read_once = 1;
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f) {
      cmd_len = fread(cmd_buf, 1, sizeof cmd_buf - 1, f);
      fclose(f);
    }
    cmd_buf[cmd_len] = 0;
  }
  *n = cmd_len;
  return cmd_buf;
}

/* Some argument contains s. */
static int cmdline_has(const char *s) {
  size_t n;
  const char *c = cmdline(&n);
  for (const char *p = c; p < c + n; p += strlen(p) + 1)
    if (strstr(p, s)) return 1;
  return 0;
}

static uint64_t real_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* the host, and the launcher's node and local rank (-1: none said) */
static void host_load(void) {
  static const char *const node_keys[] = {"GROUP_RANK", "SLURM_NODEID", "OMPI_COMM_WORLD_NODE_RANK", NULL};
  static const char *const local_keys[] = {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK",
                                           "MPI_LOCALRANKID", NULL};
  nc_host_read(&rt_host);
  rt_proc.node_rank = first_int(node_keys, -1);
  rt_proc.local_rank = first_int(local_keys, -1);
  rt_proc.real0 = real_now();
  rt_proc.mono0 = mono_now();
}

static void process_load(const char *const *rank_keys) {
  memset(&rt_proc, 0, sizeof rt_proc);
  host_load();
  rt_proc.ppid = (int)getppid();
  rt_proc.start_ns = process_start_ns();
  const char *root = env(NCRT_ENV_ROOT_PID);
  int me = (int)getpid();
  const char *key = NULL, *val = NULL;
  for (const char *const *k = rank_keys; *k && !key; k++)
    if (env(*k)) key = *k, val = env(*k);
  if (root && atoi(root) == me) set(rt_proc.start, sizeof rt_proc.start, "ncrun");
  else if (cmdline_has("multiprocessing.spawn") || cmdline_has("spawn_main"))
    set(rt_proc.start, sizeof rt_proc.start, "spawn");
  else if (cmdline_has("multiprocessing.forkserver")) set(rt_proc.start, sizeof rt_proc.start, "forkserver");
  else set(rt_proc.start, sizeof rt_proc.start, "exec");
  int spawned = !strcmp(rt_proc.start, "spawn") || !strcmp(rt_proc.start, "forkserver");
  if (key) {
    /* inherited from a parent that records too (a rank whose worker or
     * subprocess this is): a helper of that rank, not a new rank. A shell
     * or launcher that exported it does not record. */
    int inherited = environ_has(rt_proc.ppid, key, val) == 1 && environ_has(rt_proc.ppid, "NVTX_INJECTION64_PATH", NULL) == 1;
    rt_proc.is_rank = (root && atoi(root) == me) || (!inherited && !spawned);
    set(rt_proc.rank_from, sizeof rt_proc.rank_from, key);
  } else {
    rt_proc.is_rank = (root && atoi(root) == me) || (!root && !spawned);
  }
  set(rt_proc.role, sizeof rt_proc.role,
      rt_proc.is_rank ? (key ? "rank" : "main") : spawned ? "multiprocessing child" : "subprocess");
}

void rt_process_forked(void) {
  int forkserver = !strcmp(rt_proc.start, "forkserver") && !strcmp(rt_proc.role, "multiprocessing child");
  rt_proc.ppid = (int)getppid();
  rt_proc.start_ns = mono_now();
  rt_proc.exit_ns = 0;
  rt_proc.is_rank = 0;
  nc_host_read(&rt_host); /* a child of an unshare(CLONE_NEWPID) is in another pid namespace */
  rt_proc.real0 = real_now();
  rt_proc.mono0 = mono_now();
  set(rt_proc.start, sizeof rt_proc.start, forkserver ? "forkserver" : "fork");
  set(rt_proc.role, sizeof rt_proc.role, "forked child");
  rt_proc.role_detail[0] = 0;
}

void rt_process_role(const char *role, const char *detail) {
  if (rt_proc.is_rank && !strcmp(role, "main")) return; /* a rank says so already */
  set(rt_proc.role, sizeof rt_proc.role, role);
  set(rt_proc.role_detail, sizeof rt_proc.role_detail, detail ? detail : "");
}

/* torch.distributed (or a caller) names this process's rank: it becomes
 * that rank's main process, and its file -rank<R> (the -pid<P> it had as a
 * helper goes). */
void rt_process_rank(int rank, int world, const char *from) {
  rt_opt.rank = rank;
  if (world > 0) rt_opt.world_size = world;
  if (!rt_proc.is_rank && !strcmp(from, NCRT_RANK_INHERITED)) return; /* a helper of that rank */
  set(rt_proc.rank_from, sizeof rt_proc.rank_from, from);
  set(rt_proc.role, sizeof rt_proc.role, "rank");
  rt_proc.role_detail[0] = 0;
  if (!rt_proc.is_rank) {
    char suffix[32];
    snprintf(suffix, sizeof suffix, "-pid%d", (int)getpid());
    size_t l = strlen(rt_opt.name), sl = strlen(suffix);
    if (l > sl && !strcmp(rt_opt.name + l - sl, suffix)) rt_opt.name[l - sl] = 0;
    rt_proc.is_rank = 1;
  }
}

/* role and detail come from the Python module: keep them plain */
static void put_plain(char *b, size_t n, size_t *at, const char *v) {
  for (; *v && *at + 2 < n; v++) b[(*at)++] = (*v == '"' || *v == '\\' || (unsigned char)*v < 32) ? '_' : *v;
}

size_t rt_process_json(char *b, size_t n) {
  size_t at = (size_t)snprintf(b, n, "{\"pid\": %d, \"ppid\": %d, \"start\": \"%s\", \"role\": \"", (int)getpid(),
                               rt_proc.ppid, rt_proc.start);
  if (at >= n) return 0;
  put_plain(b, n, &at, rt_proc.role);
  at += (size_t)snprintf(b + at, n - at, "\", \"detail\": \"");
  if (at >= n) return 0;
  put_plain(b, n, &at, rt_proc.role_detail);
  at += (size_t)snprintf(b + at, n - at, "\", \"rank\": %d, \"is_rank\": %s, \"rank_from\": \"%s\"", rt_opt.rank,
                         rt_proc.is_rank ? "true" : "false", rt_proc.rank_from);
  if (at >= n) return 0;
  /* where it ran, and its clocks read together at set-up and now: nctrace
   * relates hosts' clocks with them (and with the collectives' ends) */
  at += (size_t)snprintf(b + at, n - at, ", \"host\": {\"name\": \"");
  if (at >= n) return 0;
  put_plain(b, n, &at, rt_host.name);
  at += (size_t)snprintf(b + at, n - at,
                         "\", \"boot_id\": \"%s\", \"pid_ns\": %llu, \"id\": \"%s\", \"node_rank\": %d, "
                         "\"local_rank\": %d}, \"clock\": {\"start\": [%llu, %llu], \"now\": [%llu, %llu]}}",
                         rt_host.boot_id, rt_host.pid_ns, rt_host.id, rt_proc.node_rank, rt_proc.local_rank,
                         (unsigned long long)rt_proc.real0, (unsigned long long)rt_proc.mono0,
                         (unsigned long long)real_now(), (unsigned long long)mono_now());
  return at < n ? at : 0;
}

static uint64_t disk_budget(const char *v) {
  int ok;
  uint64_t b = ncrt_parse_size(v, &ok);
  if (ok) return b;
  if (v) rt_say("NCRT_DISK_BUDGET=%s is not a size (512M, 2G, off): the default applies", v);
  uint64_t dflt = (uint64_t)8 << 30;
  struct statvfs st;
  if (statvfs(rt_opt.out_dir[0] ? rt_opt.out_dir : ".", &st) == 0) {
    uint64_t half = (uint64_t)st.f_bavail * st.f_frsize / 2;
    if (half && half < dflt) dflt = half;
  }
  return dflt;
}

int rt_options_load(void) {
  memset(&rt_opt, 0, sizeof rt_opt);
  rt_opt.quiet = env(NCRT_ENV_QUIET) && atoi(env(NCRT_ENV_QUIET));
  const char *dir = env(NCRT_ENV_OUTPUT_DIR) ? env(NCRT_ENV_OUTPUT_DIR) : ".";
  if (strlen(dir) >= sizeof rt_opt.out_dir) { /* cut short, it would name another directory */
    rt_say("NCRT_OUTPUT_DIR is %zu bytes long, more than the %zu libncrt holds: nothing is recorded", strlen(dir),
           sizeof rt_opt.out_dir - 1);
    return -1;
  }
  copy(rt_opt.out_dir, sizeof rt_opt.out_dir, dir);
  const char *name = env(NCRT_ENV_TRACE_NAME);
  if (!name) {
    extern char *program_invocation_short_name;
    name = program_invocation_short_name;
    /* python3 script.py: name the trace after the script */
    if (name && !strncmp(name, "python", 6)) {
      size_t n;
      const char *cmd = cmdline(&n);
      for (const char *p = cmd + strlen(cmd) + 1; p < cmd + n; p += strlen(p) + 1) {
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
  copy(rt_opt.name, sizeof rt_opt.name, name ? name : "ncrt");
  char *dot = strrchr(rt_opt.name, '.');
  if (dot && !strcmp(dot, ".py")) *dot = 0;

  static const char *const rank_keys[] = {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", NULL};
  static const char *const size_keys[] = {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL};
  rt_opt.rank = first_int(rank_keys, 0);
  rt_opt.world_size = first_int(size_keys, 1);
  process_load(rank_keys);
  /* a process that is not a rank's main one (a worker, a subprocess) names
   * its trace by pid, with no rank: one file per process, no false rank */
  if (!rt_proc.is_rank) {
    size_t l = strlen(rt_opt.name);
    snprintf(rt_opt.name + l, sizeof rt_opt.name - l, "-pid%d", (int)getpid());
  }

  const char *act = env(NCRT_ENV_ACTIVITIES);
  if (!act) act = "cpu,gpu";
  rt_opt.cpu = strstr(act, "cpu") != NULL;
  rt_opt.gpu = strstr(act, "gpu") != NULL;
  rt_opt.mem = strstr(act, "mem") != NULL;

  if (env(NCRT_ENV_SCHEDULE)) parse_schedule(env(NCRT_ENV_SCHEDULE));
  copy(rt_opt.step_name, sizeof rt_opt.step_name, env(NCRT_ENV_STEP));
  copy(rt_opt.gate, sizeof rt_opt.gate, env(NCRT_ENV_CAPTURE_RANGE));

  /* calls alone by default: the same program records the same ranges
   * whatever the machine's load (collector.c, "The throttle") */
  rt_opt.throttle_calls = 100000;
  rt_opt.throttle_us = 0;
  const char *th = env(NCRT_ENV_THROTTLE);
  if (th) {
    if (!strcmp(th, "off") || !strcmp(th, "0")) {
      rt_opt.throttle_calls = 0;
    } else {
      rt_opt.throttle_calls = atol(th);
      const char *c = strchr(th, ':');
      if (c) rt_opt.throttle_us = atof(c + 1);
      if (rt_opt.throttle_calls < 0) rt_opt.throttle_calls = 0;
      if (rt_opt.throttle_us < 0) rt_opt.throttle_us = 0;
    }
  }
  /* the disk budget: NCRT_DISK_BUDGET (SIZE with K/M/G/T, or off), else
   * 8 GiB or half the free space of the output folder at start, the smaller */
  rt_opt.disk_budget = disk_budget(env(NCRT_ENV_DISK_BUDGET));
  rt_opt.level = env(NCRT_ENV_GZIP_LEVEL) ? atoi(env(NCRT_ENV_GZIP_LEVEL)) : 1;
  if (rt_opt.level < 0 || rt_opt.level > 9) rt_opt.level = 1;
  const char *tf = env(NCRT_ENV_TRACE_FORMAT);
  rt_opt.format = tf && !strcmp(tf, "perfetto") ? TRACE_PERFETTO : TRACE_JSON;
  if (tf && *tf && strcmp(tf, "perfetto") && strcmp(tf, "json"))
    rt_say("NCRT_TRACE_FORMAT=%s is neither json nor perfetto: json is written", tf);
  rt_opt.dormant = env(NCRT_ENV_DORMANT) && atoi(env(NCRT_ENV_DORMANT)) > 0;
  /* whose claim sends SIGTERM (rt_spill_thread): "own-exit" a thread's
   * claim on its own records in _exit's save, "own-spill" in its own spill
   * (a full buffer, its end), anything else the flusher's */
  const char *tc = env(NCRT_ENV_TEST_TERM_IN_CLAIM);
  rt_opt.test_term_in_claim = !tc ? 0 : !strcmp(tc, "own-exit") ? 2 : !strcmp(tc, "own-spill") ? 3 : 1;
  const char *clk = env(NCRT_ENV_CLOCK);
  rt_opt.use_tsc = clk && !strcmp(clk, "monotonic") ? 0 : invariant_tsc();
  return 0;
}
