/* exitpaths.c: the ways a process ends without running atexit handlers.
 *
 *   exit() / return from main   atexit (registered when libncrt is loaded):
 *                               the trace is written in the process
 *   SIGTERM SIGINT SIGHUP SIGQUIT SIGABRT (abort)
 *                               a handler, installed only where the program
 *                               left the default action, writes what is
 *                               still in memory to the spill files
 *                               (rt_save_now, spill.c: pwrite, rename; no lock, no
 *                               malloc), restores the default action and
 *                               re-raises: the process dies at once, of the
 *                               same signal, with the same status
 *   _exit() / _Exit() / os._exit
 *                               interposed when libncrt is preloaded (ncrun
 *                               does that): the same, then exit_group
 *   kill(self, SIG) / raise(SIG) with SIG at its default, fatal action
 *                               (CPython after an unhandled ^C: it finalizes,
 *                               sets SIGINT back to SIG_DFL and kills itself;
 *                               a C handler's clean-up-and-re-raise)
 *                               interposed when preloaded: the same, then
 *                               the signal is sent
 *   SIGSEGV SIGBUS SIGFPE SIGILL (a fault: the program crashed)
 *                               a handler, installed only where the program
 *                               left the default action, restores the
 *                               default action first, saves as above, and
 *                               returns: the faulting instruction faults
 *                               again and the process dies of it, with its
 *                               own siginfo, status and core (a signal of
 *                               these sent by kill is raised again instead:
 *                               returning would not repeat it). A fault
 *                               during the save kills at once (the signal
 *                               is blocked in its handler and its action is
 *                               the default already); a fault inside one of
 *                               libncrt's own claims or saves on this thread
 *                               saves nothing more (it would wait on itself);
 *                               a stack overflow runs no handler (there is
 *                               no alternate stack: the kernel cannot push
 *                               the frame) and keeps what the flusher wrote
 *   SIGKILL, the OOM killer, exec, a stack overflow
 *                               nothing runs; the spill files hold every
 *                               record older than the flusher's last spill
 *                               (RT_FLUSH_MS; the flusher spills between
 *                               the blocks it converts, so a long
 *                               conversion on a loaded machine does not
 *                               hold the spill back: convert.c)
 * In every case but exit, ncrun (or `ncrun --finalize DIR`) makes the trace
 * from the spill files when the process is gone (finalize.c). */
#define _GNU_SOURCE
#include "rt.h"
#include "ncrt_protocol.h"

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

static pid_t init_pid; /* the process that set the collector up (a vfork child is not it) */

/* sig's action back to the default (async-signal-safe) */
static void to_default(int sig) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, NULL);
}

static void on_fatal(int sig) {
  int saved = errno;
  if (init_pid && getpid() == init_pid) rt_save_now(1);
  /* back to the default action; the signal is blocked while we run, so it
   * is delivered (and kills) as soon as we return */
  to_default(sig);
  syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig); /* not our raise(): saved already */
  errno = saved;
}

/* A synchronous fault (the program crashed; a signal of these sent by
 * kill or raise too). Every record closed before it is saved: the spill
 * files then hold them all, whatever the machine's load (the flusher's last
 * tick may be seconds old on a loaded machine: 1 965 028 of 2 000 000 kept
 * before, runtime/crash-segv-load). The default action goes back first, so
 * that a fault inside the save kills at once (the signal is blocked here,
 * and the kernel forces a blocked fault with the default action). The other
 * threads run on meanwhile: their committed records are saved, what they
 * record during the save may not be. */
static void on_fault(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  int saved = errno;
  to_default(sig);
  /* not in a vfork child (the parent's memory), nor inside one of our own
   * claims or saves on this thread (a fault in libncrt's writer: the save
   * would wait for that claim, on itself) */
  if (init_pid && getpid() == init_pid && !rt_in_save()) {
    sigset_t old; /* as on every way out: no handler runs inside the save */
    rt_signals_hold(&old);
    rt_save_now(1);
    rt_signals_restore(&old);
  }
  /* sent by a process (kill, raise, sigqueue: si_code <= 0): returning would
   * not repeat it, so it is raised again (blocked until we return). A fault
   * repeats by itself when its instruction runs again. */
  if (!si || si->si_code <= 0) syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
  errno = saved;
}

/* Faults whose instruction runs again when the handler returns. SIGTRAP
 * (a breakpoint: execution goes on after it; debuggers own it) and SIGSYS
 * (seccomp: the system call returns) are not among them. */
static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
#define NFAULT (int)(sizeof fault_signals / sizeof *fault_signals)

/* sa for each of sigs the program left at the default action; where it
 * handles one, its handler decides */
static void install_where_default(const int *sigs, int n, const struct sigaction *sa) {
  for (int i = 0; i < n; i++) {
    struct sigaction cur;
    if (sigaction(sigs[i], NULL, &cur) || cur.sa_handler != SIG_DFL || (cur.sa_flags & SA_SIGINFO)) continue;
    sigaction(sigs[i], sa, NULL);
  }
}

void rt_exitpaths_init(void) {
  init_pid = getpid();
  const char *on = getenv(NCRT_ENV_SIGNALS);
  if (on && !strcmp(on, "0")) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  rt_signals_held(&sa.sa_mask); /* the fault itself is blocked by the kernel while we run */
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  install_where_default(fault_signals, NFAULT, &sa);
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_fatal;
  /* the other fatal signals wait while we save (a second one arriving
   * mid-save, SIGTERM then SIGINT from a terminal, would save again
   * inside this save); so do the program's other handlers, as on every
   * way out: the save runs to its end, then the process dies */
  rt_signals_held(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  install_where_default(fatal_signals, NFATAL, &sa);
}

/* After fork: the child is a process of its own, with its own files. */
void rt_exitpaths_child(void) { init_pid = getpid(); }

/* ---- _exit, when preloaded ---- */

static void write_before_exit(void) {
  /* a vfork child shares the parent's memory: it must not touch it */
  if (!init_pid || getpid() != init_pid) return;
  /* signals wait until the process is gone: a SIGTERM that a pool's
   * teardown sends a worker calling os._exit ran its handler's save inside
   * this one (and waited there for this save's claim, on its own thread,
   * 10 s); the process ends as _exit said */
  sigset_t old;
  rt_signals_hold(&old);
  rt_save_now(1);
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

/* ---- kill and raise aimed at this process, when preloaded ---- */

/* Would sig, sent now, end the process (default action, not blocked here)? */
static int kills_me(int sig) {
  switch (sig) {
  case SIGCHLD: case SIGCONT: case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU: case SIGURG:
  case SIGWINCH:
    return 0;
  }
  if (sig <= 0 || sig >= 65) return 0;
  if (sig != SIGKILL) {
    struct sigaction cur;
    sigset_t m;
    if (sigaction(sig, NULL, &cur) || (cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL) return 0;
    if (pthread_sigmask(SIG_BLOCK, NULL, &m) || sigismember(&m, sig)) return 0;
  }
  return 1;
}

static void before_own_signal(pid_t pid, int sig) {
  if (!rt_collecting || !init_pid) return;
  pid_t me = getpid();
  if (me != init_pid) return; /* a vfork child: the parent's memory */
  if ((pid == me || pid == 0 || (pid < -1 && -pid == getpgrp())) && kills_me(sig)) {
    sigset_t old; /* as in _exit: no handler runs inside the save */
    rt_signals_hold(&old);
    rt_save_now(1);
    rt_signals_restore(&old);
  }
}

RT_EXPORT int kill(pid_t pid, int sig);
RT_EXPORT int kill(pid_t pid, int sig) {
  int saved = errno;
  before_own_signal(pid, sig);
  errno = saved;
  return (int)syscall(SYS_kill, pid, sig);
}

RT_EXPORT int raise(int sig);
RT_EXPORT int raise(int sig) {
  int saved = errno;
  before_own_signal(getpid(), sig);
  errno = saved;
  /* glibc's raise: the signal to this thread, none delivered in between */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int r = (int)syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return r;
}
