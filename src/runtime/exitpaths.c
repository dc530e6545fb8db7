/* exitpaths.c: the ways a process ends without running atexit handlers, and
 * how the trace is still written on each.
 *
 *   exit() / return from main   atexit (collector.c), nothing to do here
 *   SIGTERM SIGINT SIGHUP SIGQUIT SIGABRT (abort)
 *                               a handler, installed only where the program
 *                               left the default action, asks a helper
 *                               thread to write, waits for it (bounded),
 *                               then restores the default action and
 *                               re-raises: the process dies of the same
 *                               signal, with the same status
 *   _exit() / _Exit() / os._exit
 *                               interposed when libncrt is preloaded (ncrun
 *                               does that): write, then exit_group
 *   SIGKILL, SIGSEGV and other crashes, exec
 *                               no trace (a crashed heap is no place to
 *                               compress 100 MB from)
 *
 * Why a helper thread: writing takes locks and malloc; a signal can land
 * while the interrupted thread holds the very lock the writer needs. The
 * handler does only async-signal-safe things (write, poll, sigaction,
 * raise) and gives the writer NCRT_SIGNAL_WAIT seconds (default 20); if the
 * writer is stuck, the process still dies on time, without its trace. */
#define _GNU_SOURCE
#include "rt.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const int fatal_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT};
#define NFATAL (int)(sizeof fatal_signals / sizeof *fatal_signals)

static int req_pipe[2] = {-1, -1}, done_pipe[2] = {-1, -1};
static pid_t writer_pid;   /* the process whose helper thread is running */
static pid_t init_pid;     /* the process that set the collector up (a vfork child is not it) */
static int wait_ms = 20000;

static void say_raw(const char *msg) {
  if (rt_opt.quiet) return;
  ssize_t r = write(2, msg, strlen(msg));
  (void)r;
}

static void *writer_main(void *arg) {
  (void)arg;
  for (;;) {
    char sig;
    ssize_t r = read(req_pipe[0], &sig, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r != 1) return NULL;
    rt_atexit();
    char ok = 1;
    r = write(done_pipe[1], &ok, 1);
    (void)r;
  }
}

static void on_fatal(int sig) {
  int saved = errno;
  if (writer_pid == getpid()) {
    char c = (char)sig;
    if (write(req_pipe[1], &c, 1) == 1) {
      struct pollfd p = {done_pipe[0], POLLIN, 0};
      int r;
      do r = poll(&p, 1, wait_ms);
      while (r < 0 && errno == EINTR);
      if (r == 0) say_raw("ncrt: the trace could not be written in time before the signal took effect\n");
    }
  } else {
    say_raw("ncrt: signal in a forked child: its trace is not written\n");
  }
  /* back to the default action; the signal is blocked while we run, so it
   * is delivered (and kills) as soon as we return */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, NULL);
  raise(sig);
  errno = saved;
}

static int pipe_cloexec(int fd[2]) { return pipe2(fd, O_CLOEXEC); }

void rt_exitpaths_init(void) {
  init_pid = getpid();
  const char *w = getenv("NCRT_SIGNAL_WAIT");
  if (w && *w) wait_ms = (int)(atof(w) * 1000);
  const char *on = getenv("NCRT_SIGNALS");
  if (on && !strcmp(on, "0")) return;
  if (pipe_cloexec(req_pipe) || pipe_cloexec(done_pipe)) return;
  /* the helper thread takes no signals: they go to the program's threads */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setstacksize(&at, 256 * 1024);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  pthread_t th;
  int rc = pthread_create(&th, &at, writer_main, NULL);
  pthread_attr_destroy(&at);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc) return;
  writer_pid = getpid();
  for (int i = 0; i < NFATAL; i++) {
    struct sigaction cur;
    if (sigaction(fatal_signals[i], NULL, &cur) || cur.sa_handler != SIG_DFL || (cur.sa_flags & SA_SIGINFO))
      continue; /* the program handles it: its handler decides */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(fatal_signals[i], &sa, NULL);
  }
}

/* After fork: the helper thread stayed in the parent. */
void rt_exitpaths_child(void) { init_pid = getpid(); }

/* ---- _exit, when preloaded ---- */

static void write_before_exit(void) {
  /* a vfork child shares the parent's memory: it must not touch it */
  if (!init_pid || getpid() != init_pid) return;
  rt_atexit();
}

RT_EXPORT void _exit(int status);
RT_EXPORT void _exit(int status) {
  write_before_exit();
  for (;;) syscall(SYS_exit_group, status);
}

RT_EXPORT void _Exit(int status);
RT_EXPORT void _Exit(int status) {
  write_before_exit();
  for (;;) syscall(SYS_exit_group, status);
}
