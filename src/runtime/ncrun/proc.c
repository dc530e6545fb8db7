/* proc: how ncrun runs things and talks (ncrun.h): its messages, the file
 * helpers both stages use, and the processes it starts -- the signals it
 * passes on to them and the stage runner. ncrun.c (options, the run
 * directory, stage 1) and deep.c (the Nsight stages) both call into this
 * file, which calls neither: no circle between ncrun's files (tests/arch). */
#define _GNU_SOURCE
#include "ncbase.h"
#include "ncrun.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int ncrun_quiet;

void ncrun_say(const char *fmt, ...) {
  if (ncrun_quiet) return;
  va_list ap;
  va_start(ap, fmt);
  fputs("ncrun: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int ncrun_exists(const char *p) { return access(p, F_OK) == 0; }

char *ncrun_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  Buf b = {0};
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_add(&b, chunk, n);
  fclose(f);
  if (len) *len = b.len;
  return buf_steal(&b);
}

int ncrun_mkdirs(const char *path) {
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s", path);
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(tmp, 0777) && errno != EEXIST) return -1;
      *p = '/';
    }
  return mkdir(tmp, 0777) && errno != EEXIST ? -1 : 0;
}

int ncrun_dir_trusted(const char *dir, char *why, size_t n) {
  struct stat st;
  if (stat(dir, &st) != 0) return snprintf(why, n, "%s", strerror(errno)), 0;
  if (!S_ISDIR(st.st_mode)) return snprintf(why, n, "not a directory"), 0;
  if (st.st_uid != geteuid()) return snprintf(why, n, "owned by another user (uid %u)", (unsigned)st.st_uid), 0;
  if (st.st_mode & S_IWOTH) return snprintf(why, n, "writable by other users"), 0;
  return 1;
}

/* execvp's search: the file cmd would run */
int ncrun_resolve_cmd(const char *cmd, char *out, size_t n) {
  if (strchr(cmd, '/')) {
    snprintf(out, n, "%s", cmd);
    return access(out, X_OK) == 0;
  }
  const char *path = getenv("PATH");
  if (!path) path = "/usr/local/bin:/usr/bin:/bin";
  for (const char *p = path; *p;) {
    size_t l = strcspn(p, ":");
    snprintf(out, n, "%.*s%s%s", (int)l, p, l ? "/" : "", cmd);
    struct stat st;
    if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0) return 1;
    p += l;
    if (*p == ':') p++;
  }
  return 0;
}

/* Signals ncrun gets are passed on to the command, except those the
 * command got anyway: a key typed at the terminal (^C SIGINT, ^\\ SIGQUIT)
 * is sent by the kernel (si_code SI_KERNEL) to the whole foreground process
 * group, the command included while it stays in ncrun's group; passing it on
 * would deliver it twice (a second ^C that interrupts the program's own
 * clean-up: 130 instead of 0). Signals sent by a process (kill, a
 * supervisor, ncrun's parent) are passed on. */
static volatile pid_t child;

/* The process group of pid, read from /proc/PID/stat ("pid (comm) S ppid
 * pgrp ..."), or -1: open, read and close are async-signal-safe, getpgid
 * is not. */
static pid_t pgid_of(pid_t pid) {
  char path[32] = "/proc/", digits[16], buf[512];
  int nd = 0, np = 6;
  for (unsigned long v = (unsigned long)pid; nd == 0 || v; v /= 10) digits[nd++] = (char)('0' + v % 10);
  while (nd) path[np++] = digits[--nd];
  memcpy(path + np, "/stat", 6);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  char *p = NULL;
  for (ssize_t i = 0; i < n; i++) /* comm may hold ')': the last one ends it */
    if (buf[i] == ')') p = buf + i + 1;
  for (int field = 0; p && p < buf + n && field < 3; p++) /* " S ppid " */
    if (*p == ' ') field++;
  if (!p) return -1;
  long g = 0;
  for (; p < buf + n && *p >= '0' && *p <= '9'; p++) g = g * 10 + (*p - '0');
  return (pid_t)g;
}

static void forward(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  int saved = errno;
  pid_t c = child;
  if (c > 0 && !((sig == SIGINT || sig == SIGQUIT) && si && si->si_code == SI_KERNEL && pgid_of(c) == getpgrp()))
    kill(c, sig);
  errno = saved;
}

void ncrun_set_child(pid_t pid) { child = pid; }

void ncrun_forward_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  sigaction(SIGQUIT, &sa, NULL);
}

/* The signals forward() passes on are blocked from before a fork until
 * `child` is set (one that comes meanwhile waits, then goes to the child);
 * the child puts them back to the default and unblocks them before exec. */
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

void ncrun_forward_block(sigset_t *old) {
  sigset_t set;
  sigemptyset(&set);
  for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++) sigaddset(&set, forwarded[i]);
  sigprocmask(SIG_BLOCK, &set, old);
}

void ncrun_forward_child(const sigset_t *old) {
  for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++) signal(forwarded[i], SIG_DFL);
  sigprocmask(SIG_SETMASK, old, NULL);
}

/* env["stages"] += {stage, argv, stdout, status, seconds} (none without env or stage) */
void ncrun_record_stage(cJSON *env, const char *stage, char *const *argv, const char *out_path, int rc,
                         const struct timespec *t0, const struct timespec *t1) {
  cJSON *stages = env ? cJSON_GetObjectItem(env, "stages") : NULL;
  if (!stages || !stage) return;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "stage", stage);
  cJSON *a = cJSON_AddArrayToObject(o, "argv");
  for (int i = 0; argv[i]; i++) cJSON_AddItemToArray(a, cJSON_CreateString(argv[i]));
  if (out_path) cJSON_AddStringToObject(o, "stdout", out_path);
  cJSON_AddNumberToObject(o, "status", rc);
  cJSON_AddNumberToObject(o, "seconds", (double)(t1->tv_sec - t0->tv_sec) + (t1->tv_nsec - t0->tv_nsec) / 1e9);
  cJSON_AddItemToArray(stages, o);
}

/* One stage: argv run as ncrun's child (see ncrun.h). */
int ncrun_stage(cJSON *env, const char *stage, char *const *argv, const char *out_path) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t self_pid = getpid();
  fflush(NULL);
  sigset_t old;
  ncrun_forward_block(&old);
  pid_t pid = fork();
  if (pid < 0) {
    sigprocmask(SIG_SETMASK, &old, NULL);
    ncrun_say("fork: %s", strerror(errno));
    return 127;
  }
  if (pid == 0) {
    ncrun_forward_child(&old);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != self_pid) _exit(128 + SIGKILL);
    if (out_path) {
      int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
      if (fd < 0 || dup2(fd, 1) < 0) _exit(127);
    }
    execvp(argv[0], argv);
    fprintf(stderr, "ncrun: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  ncrun_set_child(pid);
  sigprocmask(SIG_SETMASK, &old, NULL);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  ncrun_set_child(0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  int rc = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
  ncrun_record_stage(env, stage, argv, out_path, rc, &t0, &t1);
  return rc;
}
