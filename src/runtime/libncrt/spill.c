/* spill.c: the spill files a process writes while it runs, so that its
 * records never stay in memory and a process that dies keeps them.
 *
 * <dir>/.ncrt-<PID>.raw    blocks: {magic, tid, n, 0} n records, commit
 *                          word (BLK_COMMIT ^ n); the offset is reserved
 *                          by an atomic add, the block written by one
 *                          pwritev, so threads never wait for each other
 * <dir>/.ncrt-<PID>.names  "ID "JSON-string"\n", appended (a name may come
 *                          twice: the same text)
 * <dir>/.ncrt-<PID>.gpu    GPU activity (RtGpuRec, fixed size, appended by
 *                          the flusher about once a second from the CUPTI
 *                          buffers whose records are all complete; a
 *                          record cut short at death is ignored)
 * <dir>/.ncrt-<PID>.info   what a finalizer needs besides: clock, names of
 *                          the process, threads, domains, categories and
 *                          the ranges open at the snapshot; replaced whole
 *                          (rename) every RT_FLUSH_MS and at death
 *
 * Contract: everything a signal handler or _exit reaches here
 * (rt_spill_thread, rt_save_now, the signal hold) is async-signal-safe:
 * open, pwritev, write, rename, no lock, no malloc. The collector is read
 * only through rt_collector (rt_writer_attach, at set-up); the records a
 * thread claims are written whole or counted as dropped. */
#define _GNU_SOURCE
#include "writer.h"
#include "ncrt_protocol.h"
#include "rundir.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

Spill spill = {.lock = PTHREAD_MUTEX_INITIALIZER, .raw_fd = -1, .names_fd = -1, .gpu_fd = -1};
RtCollectorView rt_collector;
volatile uint64_t rt_budget_hit;
__thread int rt_in_flusher;
static char devices_json[4096];     /* "device" lines, for a finalizer (flusher) */
/* "windows" and "window" lines, for a finalizer: the flusher fills the
 * buffer not published, then publishes it (a death snapshot reads it) */
static char windows_buf[2][64 * 1024];
static char *volatile windows_text = windows_buf[0];

void rt_writer_attach(const RtCollectorView *v) { rt_collector = *v; }

/* Every signal a handler may catch, held on this thread (the synchronous
 * faults excepted: one raised while blocked kills at once, the program's
 * own handler never seeing it). Around a claim on records and a save on a
 * way out (exitpaths.c): those run to their end before any handler, ours or
 * the program's, runs on their thread, which could not otherwise wait for
 * them nor finish them. pthread_sigmask is async-signal-safe. */
void rt_signals_held(sigset_t *s) {
  sigfillset(s);
  static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
  for (size_t i = 0; i < sizeof faults / sizeof *faults; i++) sigdelset(s, faults[i]);
}

void rt_signals_hold(sigset_t *old) {
  sigset_t s;
  rt_signals_held(&s);
  pthread_sigmask(SIG_BLOCK, &s, old);
}

void rt_signals_restore(const sigset_t *old) { pthread_sigmask(SIG_SETMASK, old, NULL); }

size_t s_cpy(char *d, size_t at, size_t cap, const char *s) {
  while (*s && at + 1 < cap) d[at++] = *s++;
  d[at] = 0;
  return at;
}
size_t s_u64(char *d, size_t at, size_t cap, uint64_t v) {
  char t[24];
  int i = 24;
  do {
    t[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (i < 24 && at + 1 < cap) d[at++] = t[i++];
  d[at] = 0;
  return at;
}
void path_of(char *out, size_t cap, const char *suffix) { s_cpy(out, s_cpy(out, 0, cap, spill.prefix), cap, suffix); }

int rt_open_new(const char *path, mode_t mode) {
  unlink(path); /* a symlink goes, not what it names */
  return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
}

int rt_open_own(const char *path, int flags) {
  int fd = open(path, flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) {
    close(fd);
    errno = EPERM;
    return -1;
  }
  return fd;
}

/* Every file of a process's spill set (the process's own cleanup and the
 * finalizer's use this one list) */
const char *const spill_sfx[] = {".raw",       ".names",      ".gpu",  ".body",     ".info",
                                        ".info.tmpF", ".info.tmpH", ".done", ".done.tmp", ".hand",
                                        ".hand.tmp"};
const size_t nspill_sfx = sizeof spill_sfx / sizeof *spill_sfx;

void unlink_files(void) {
  char p[1300];
  for (size_t i = 0; i < nspill_sfx; i++) {
    path_of(p, sizeof p, spill_sfx[i]);
    unlink(p);
  }
}

/* fork: the write lock is taken before (after ctl.lock, as a trace write
 * under ctl.lock takes it) and given back after, in parent and child, so
 * the child never has a lock the parent's flusher held (collector.c) */
void rt_writer_fork_lock(void) { pthread_mutex_lock(&spill.lock); }
void rt_writer_fork_unlock(void) { pthread_mutex_unlock(&spill.lock); }

void spill_reset(void) {
  /* after fork the descriptors are the parent's files: let go of them */
  if (spill.raw_fd >= 0) close(spill.raw_fd);
  if (spill.names_fd >= 0) close(spill.names_fd);
  if (spill.gpu_fd >= 0) close(spill.gpu_fd);
  spill.raw_fd = spill.names_fd = spill.gpu_fd = -1;
  spill.gpu_end = spill.gpu_from = spill.gpu_work = spill.gpu_work_from = spill.gpu_kernels = 0;
  devices_json[0] = 0;
  spill.raw_end = 0;
  spill.err = 0;
  spill.trace_from = 0;
  spill.names_saved = 0;
  size_t at = s_cpy(spill.prefix, 0, sizeof spill.prefix, rt_opt.out_dir);
  /* .ncrt-h<HOSTID>-<PID>: two hosts' processes with one pid (containers,
   * nodes on a shared filesystem) never share a set (hostid.h) */
  at = s_cpy(spill.prefix, at, sizeof spill.prefix, "/" NC_RUN_SPILL);
  at = s_cpy(spill.prefix, at, sizeof spill.prefix, rt_host.id);
  at = s_cpy(spill.prefix, at, sizeof spill.prefix, "-");
  at = s_u64(spill.prefix, at, sizeof spill.prefix, (uint64_t)getpid());
  /* An earlier process with this pid (pids wrap: 32768 here) that handed
   * its exit over, not finalized yet while the run goes on: its set stays
   * for ncrun, and this process takes the stem .ncrt-PID~K instead. */
  char p[1300];
  for (unsigned k = 1; k < 1000; k++) {
    path_of(p, sizeof p, ".hand");
    if (access(p, F_OK) != 0) break;
    s_u64(spill.prefix, s_cpy(spill.prefix, at, sizeof spill.prefix, "~"), sizeof spill.prefix, k);
  }
  unlink_files(); /* a stale set from an earlier process with this pid */
}

static int lazy_open(volatile int *slot, const char *suffix, int flags) {
  int fd = __atomic_load_n(slot, __ATOMIC_SEQ_CST);
  if (fd >= 0) return fd;
  char p[1300];
  path_of(p, sizeof p, suffix);
  fd = rt_open_own(p, flags);
  if (fd < 0) {
    int e = 0;
    __atomic_compare_exchange_n(&spill.err, &e, errno ? errno : EIO, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return -1;
  }
  int exp = -1;
  if (!__atomic_compare_exchange_n(slot, &exp, fd, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    close(fd);
    return exp;
  }
  return fd;
}

/* The run's records so far, every process together: under ncrun, a
 * counter in <run dir>/.ncrt-budget that each process maps shared (a fork
 * keeps the mapping; ncrun removes the file), so the disk budget is the
 * run's; without ncrun, this process's own. Mapped at the first block
 * (open, ftruncate, mmap: system calls, no lock, no malloc). */
static volatile uint64_t *run_spilled;
static volatile int run_spilled_tried;

static volatile uint64_t *budget_counter(void) {
  volatile uint64_t *c = __atomic_load_n(&run_spilled, __ATOMIC_ACQUIRE); /* pairs with the store below */
  if (c || __atomic_exchange_n(&run_spilled_tried, 1, __ATOMIC_SEQ_CST)) return c;
  if (!getenv(NCRT_ENV_ROOT_PID)) return NULL;
  char p[1300];
  size_t at = s_cpy(p, 0, sizeof p, rt_opt.out_dir);
  s_cpy(p, at, sizeof p, "/" NC_RUN_BUDGET);
  int fd = rt_open_own(p, O_RDWR);
  if (fd < 0) return NULL;
  struct stat st;
  if (fstat(fd, &st) == 0 && st.st_size < (off_t)sizeof(uint64_t) && ftruncate(fd, sizeof(uint64_t)) != 0) {
    close(fd);
    return NULL;
  }
  void *m = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return NULL;
  __atomic_store_n(&run_spilled, (volatile uint64_t *)m, __ATOMIC_RELEASE);
  return (volatile uint64_t *)m;
}

static int write_block(uint32_t tid, const RtRec *r, uint32_t n) {
  if (spill.err) return -1;
  int fd = lazy_open(&spill.raw_fd, ".raw", O_RDWR);
  if (fd < 0) return -1;
  BlkHdr h = {BLK_MAGIC, tid, n, 0};
  uint64_t commit = BLK_COMMIT ^ n;
  size_t size = sizeof h + (size_t)n * sizeof *r + sizeof commit;
  uint64_t off = __atomic_fetch_add(&spill.raw_end, size, __ATOMIC_SEQ_CST);
  /* the disk budget: the block that reaches it is written whole (nothing
   * recorded is lost), and recording stops there for good */
  volatile uint64_t *shared = rt_opt.disk_budget ? budget_counter() : NULL;
  uint64_t spilled = shared ? __atomic_add_fetch(shared, size, __ATOMIC_SEQ_CST) : off + size;
  if (rt_opt.disk_budget && spilled >= rt_opt.disk_budget && !__atomic_load_n(&rt_budget_hit, __ATOMIC_ACQUIRE)) {
    uint64_t zero = 0, now = rt_mono_ns();
    if (__atomic_compare_exchange_n(&rt_budget_hit, &zero, now, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
      rt_collector.recording_off();
      if (!rt_opt.quiet) {
        static const char m[] = "ncrt: the disk budget was reached: recording stopped (the trace says when; "
                                "ncrun --disk-budget SIZE or off changes it)\n";
        ssize_t wr = write(2, m, sizeof m - 1);
        (void)wr;
      }
    }
  }
  struct iovec v[3] = {{&h, sizeof h}, {(void *)r, (size_t)n * sizeof *r}, {&commit, sizeof commit}};
  int iv = 0;
  while (iv < 3) {
    ssize_t w = pwritev(fd, v + iv, 3 - iv, (off_t)off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = 0;
      __atomic_compare_exchange_n(&spill.err, &e, w < 0 ? errno : ENOSPC, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
      return -1;
    }
    off += (uint64_t)w;
    while (iv < 3 && (size_t)w >= v[iv].iov_len) w -= (ssize_t)v[iv++].iov_len;
    if (iv < 3) {
      v[iv].iov_base = (char *)v[iv].iov_base + w;
      v[iv].iov_len -= (size_t)w;
    }
  }
  return 0;
}

/* another thread's open frame i (rt.h) */
int rt_frame_peek(const RtThread *t, uint32_t i, RtFrame *out) {
  if (i >= __atomic_load_n(&t->sp, __ATOMIC_ACQUIRE) || __atomic_load_n(&t->dead, __ATOMIC_ACQUIRE)) return 0;
  const RtFrame *f = &__atomic_load_n(&t->stack, __ATOMIC_ACQUIRE)[i];
  /* field by field (a memcpy would be checked by TSan's interceptor) */
  out->start = f->start, out->addr = f->addr, out->name = f->name, out->domain = f->domain;
  out->recorded = f->recorded, out->gate = f->gate, out->cat = f->cat;
  return 1;
}

static volatile int dying; /* rt_save_now(1) began: the process is dying */

/* A claim runs to its end with the thread's signals held (rt_signals_hold;
 * the flusher holds them all its life): a handler that ran inside one (a
 * fatal signal's save, the program's own) could neither wait for it, on its
 * own thread, nor write its records. A pool worker terminated inside
 * _exit's save waited 10 s on itself that way and lost the claim's records,
 * and a signal inside a thread's own spill lost them without a word
 * (runtime/term-in-own-claim); so no thread ever waits for a claim of its
 * own. Two system calls per claim: claims come once per full buffer, once
 * per thread at its end and at a save. */
/* This thread is inside a claim or a save of its own (a fault handler must
 * not save again on top of it: it would wait for its own claim). */
static __thread int in_save;
int rt_in_save(void) { return in_save; }

int rt_spill_thread(RtThread *t) {
  int rc = 0, hold = !rt_in_flusher;
  sigset_t old;
  if (hold) rt_signals_hold(&old);
  in_save++;
  __atomic_add_fetch(&t->inflight, 1, __ATOMIC_SEQ_CST);
  RtChunk *c = __atomic_load_n(&t->cur, __ATOMIC_SEQ_CST);
  if (c) {
    uint64_t s = __atomic_load_n(&c->spilled, __ATOMIC_SEQ_CST);
    uint32_t idx = (uint32_t)s, n = __atomic_load_n(&c->n, __ATOMIC_SEQ_CST);
    int claimed = n > idx && n <= c->cap &&
                   __atomic_compare_exchange_n(&c->spilled, &s, (s & ~(uint64_t)0xffffffffu) | n, 0,
                                               __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    if (claimed && __builtin_expect(rt_opt.test_term_in_claim, 0)) {
      if (rt_opt.test_term_in_claim == 1 && rt_in_flusher) {
        /* tests only: the exit write must wait for this claim (it ran
         * without it when the claim was on its own thread's chunk) */
        rt_opt.test_term_in_claim = 0;
        syscall(SYS_kill, getpid(), SIGTERM); /* not our kill(): it would save inside this claim */
        struct timespec d = {0, 300000000};
        nanosleep(&d, NULL);
      } else if (rt_opt.test_term_in_claim >= 2 && !rt_in_flusher && (rt_opt.test_term_in_claim == 2) == !!dying &&
                 t->tid == (uint32_t)syscall(SYS_gettid)) {
        /* tests only: SIGTERM to this very thread inside its claim on its
         * own records (a pool worker in _exit's save, terminated; a thread
         * spilling its full buffer or ending): held until the claim ends */
        rt_opt.test_term_in_claim = 0;
        syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGTERM);
      }
    }
    if (claimed && write_block(t->tid, &c->rec[idx], n - idx)) {
      __atomic_add_fetch(&t->dropped, n - idx, __ATOMIC_RELAXED);
      rc = -1;
    }
  }
  __atomic_sub_fetch(&t->inflight, 1, __ATOMIC_SEQ_CST);
  in_save--;
  if (hold) rt_signals_restore(&old);
  return rc;
}

void o_flush(Out *o) {
  if (o->n && !o->err) o->err = write_all(o->fd, o->b, o->n);
  o->n = 0;
}
void o_put(Out *o, const char *s, size_t k) {
  while (k) {
    if (o->n == sizeof o->b) o_flush(o);
    size_t m = sizeof o->b - o->n < k ? sizeof o->b - o->n : k;
    memcpy(o->b + o->n, s, m);
    o->n += m;
    s += m;
    k -= m;
  }
}
void o_str(Out *o, const char *s) { o_put(o, s, strlen(s)); }
void o_u64(Out *o, uint64_t v) {
  char t[24];
  size_t k = s_u64(t, 0, sizeof t, v);
  o_put(o, t, k);
}
void o_json(Out *o, const char *s) {
  static const char hex[] = "0123456789abcdef";
  o_put(o, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p && p - (const unsigned char *)s < 4096; p++) {
    if (*p == '"' || *p == '\\') {
      char e[2] = {'\\', (char)*p};
      o_put(o, e, 2);
    } else if (*p < 0x20) {
      char e[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
      o_put(o, e, 6);
    } else {
      o_put(o, (const char *)p, 1);
    }
  }
  o_put(o, "\"", 1);
}

void names_save(void) {
  uint32_t n = rt_name_count(), from = __atomic_load_n(&spill.names_saved, __ATOMIC_SEQ_CST);
  if (from >= n) return;
  Out o;
  o.fd = lazy_open(&spill.names_fd, ".names", O_WRONLY | O_APPEND);
  o.err = 0;
  o.n = 0;
  if (o.fd < 0) return;
  for (uint32_t i = from; i < n; i++) {
    o_u64(&o, i);
    o_put(&o, " ", 1);
    o_json(&o, rt_name(i)->str);
    o_put(&o, "\n", 1);
  }
  o_flush(&o);
  if (!o.err) __atomic_compare_exchange_n(&spill.names_saved, &from, n, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

void thread_comm(uint32_t tid, char *out, size_t cap) {
  char p[64];
  size_t at = s_cpy(p, 0, sizeof p, "/proc/self/task/");
  at = s_u64(p, at, sizeof p, tid);
  s_cpy(p, at, sizeof p, "/comm");
  out[0] = 0;
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t r = read(fd, out, cap - 1);
    close(fd);
    if (r > 0) {
      out[r] = 0;
      out[strcspn(out, "\n")] = 0;
    }
  }
  if (!out[0]) s_u64(out, s_cpy(out, 0, cap, "thread "), cap, tid);
}

void info_save(int die) {
  char tmp[1300], fin[1300];
  path_of(tmp, sizeof tmp, die ? ".info.tmpH" : ".info.tmpF");
  path_of(fin, sizeof fin, ".info");
  Out o;
  o.fd = rt_open_new(tmp, 0600);
  o.err = 0;
  o.n = 0;
  if (o.fd < 0) return;
  struct timespec m, r;
  clock_gettime(CLOCK_MONOTONIC, &m);
  clock_gettime(CLOCK_REALTIME, &r);
  uint64_t mono = (uint64_t)m.tv_sec * 1000000000u + (uint64_t)m.tv_nsec;
  uint64_t real = (uint64_t)r.tv_sec * 1000000000u + (uint64_t)r.tv_nsec;
  uint64_t t0 = rt_clock_origin_tsc(), n0 = rt_clock_origin_ns(), t1 = t0;
#if defined(__x86_64__)
  if (rt_opt.use_tsc) t1 = __rdtsc();
#endif
  o_str(&o, "ncrt-info 1\npid ");
  o_u64(&o, (uint64_t)getpid());
  o_str(&o, "\nrank ");
  o_u64(&o, (uint64_t)rt_opt.rank);
  o_str(&o, "\nworld ");
  o_u64(&o, (uint64_t)rt_opt.world_size);
  if (rt_proc.backend[0]) {
    o_str(&o, "\nbackend ");
    o_str(&o, rt_proc.backend); /* a plain word (collector.c) */
  }
  o_str(&o, "\nlevel ");
  o_u64(&o, (uint64_t)rt_opt.level);
  o_str(&o, "\nformat ");
  o_u64(&o, (uint64_t)rt_opt.format);
  o_str(&o, "\nclock ");
  o_u64(&o, (uint64_t)rt_opt.use_tsc);
  o_put(&o, " ", 1);
  o_u64(&o, t0);
  o_put(&o, " ", 1);
  o_u64(&o, n0);
  o_put(&o, " ", 1);
  o_u64(&o, t1);
  o_put(&o, " ", 1);
  o_u64(&o, mono);
  {
    /* the pieces the process maps its ticks with (clock.c): the
     * finalizer's conversion joins the process's without a step */
    RtClockPiece pc[RT_CLOCK_PIECES];
    int np = rt_clock_pieces(pc);
    for (int i = 0; i < np; i++) {
      o_str(&o, "\npiece ");
      o_u64(&o, pc[i].tsc);
      o_put(&o, " ", 1);
      o_u64(&o, pc[i].ns);
      o_put(&o, " ", 1);
      o_u64(&o, pc[i].mt);
      o_put(&o, " ", 1);
      o_u64(&o, pc[i].mn);
    }
  }
  o_str(&o, "\nbase ");
  o_u64(&o, real - (mono - n0));
  o_str(&o, "\nnow ");
  o_u64(&o, mono);
  o_str(&o, "\nfrom ");
  o_u64(&o, spill.trace_from);
  o_str(&o, "\ngpu ");
  o_u64(&o, spill.gpu_from);
  o_put(&o, " ", 1);
  o_u64(&o, spill.gpu_end);
  o_put(&o, " ", 1);
  o_u64(&o, spill.gpu_work);
  o_put(&o, " ", 1);
  o_u64(&o, spill.gpu_kernels);
  o_str(&o, "\ncupti ");
  o_json(&o, rt_cupti_status());
  uint64_t dropped = 0;
  for (RtThread *t = rt_collector.threads(); t; t = t->next) dropped += t->dropped;
  o_str(&o, "\ndropped ");
  o_u64(&o, dropped);
  o_str(&o, "\nname ");
  o_json(&o, rt_opt.name);
  {
    char pj[1024];
    if (rt_process_json(pj, sizeof pj)) {
      o_str(&o, "\nprocess ");
      o_str(&o, pj);
    }
    o_str(&o, "\npstart ");
    o_u64(&o, rt_proc.start_ns);
    o_str(&o, "\nisrank ");
    o_u64(&o, (uint64_t)rt_proc.is_rank);
  }
  o_str(&o, "\ntrace ");
  o_json(&o, rt_collector.trace_name());
  o_put(&o, "\n", 1);
  o_str(&o, devices_json);
  o_str(&o, __atomic_load_n(&windows_text, __ATOMIC_ACQUIRE));
  for (uint16_t d = 1; d < 1024; d++) {
    const char *dn = rt_collector.domain_name(d);
    if (!strcmp(dn, "?")) break;
    o_str(&o, "domain ");
    o_u64(&o, d);
    o_put(&o, " ", 1);
    o_json(&o, dn);
    o_put(&o, "\n", 1);
  }
  for (uint32_t c = 1; c < 256; c++) {
    const char *cn = rt_collector.category_name(c);
    if (!cn) continue;
    o_str(&o, "cat ");
    o_u64(&o, c);
    o_put(&o, " ", 1);
    o_json(&o, cn);
    o_put(&o, "\n", 1);
  }
  for (RtThread *t = rt_collector.threads(); t; t = t->next) {
    char comm[64];
    /* another thread's struct, read while it runs (or is being reused):
     * tid and dead atomically; its open frames are a best-effort copy */
    uint32_t tid = __atomic_load_n(&t->tid, __ATOMIC_ACQUIRE);
    const char *nm = rt_collector.os_thread_name(tid);
    if (!nm) {
      thread_comm(tid, comm, sizeof comm);
      nm = comm;
    }
    o_str(&o, "thread ");
    o_u64(&o, tid);
    o_put(&o, " ", 1);
    o_json(&o, nm);
    o_put(&o, "\n", 1);
    RtFrame f;
    for (uint32_t i = 0; rt_frame_peek(t, i, &f); i++) {
      if (!f.recorded) continue;
      o_str(&o, "open ");
      o_u64(&o, tid);
      o_put(&o, " ", 1);
      o_u64(&o, i);
      o_put(&o, " ", 1);
      o_u64(&o, f.start);
      o_put(&o, " ", 1);
      o_u64(&o, f.name);
      o_put(&o, " ", 1);
      o_u64(&o, f.domain);
      o_put(&o, "\n", 1);
    }
  }
  o_str(&o, "end\n");
  o_flush(&o);
  close(o.fd);
  /* the snapshot taken at death wins over the flusher's */
  if (o.err || (!die && dying)) unlink(tmp);
  else rename(tmp, fin);
}

/* A thread that claimed records before us (one ending right now: its TLS
 * destructor spills its buffer; the flusher, spilling any thread's chunk,
 * this one's too) may not have reserved its block yet: wait until no thread
 * is inside a claim, so every claimed record lies below the end read next,
 * on every way out (the exit write, and the snapshot taken as a signal ends
 * the process: a claim the process dies in is never written). Not waiting
 * on the signal path lost the flusher's claim (runtime/term-in-claim). None
 * of the claims is ours: a claim holds its thread's signals to its end
 * (rt_spill_thread), so a handler never runs inside one. Bounded (10 s): a
 * thread stopped inside a claim (a debugger, a stalled disk) must not hang
 * the exit; giving up is said on stderr, naming whose records were lost.
 * Async-signal-safe (atomics, nanosleep, clock_gettime, write). */
void wait_claims(void) {
  uint64_t give_up = rt_mono_ns() + 10000000000u;
  uint32_t stuck_tid = 0, stuck_n = 0, nstuck = 0;
  for (RtThread *t = rt_collector.threads(); t; t = t->next) {
    while (__atomic_load_n(&t->inflight, __ATOMIC_SEQ_CST) && rt_mono_ns() < give_up) {
      struct timespec d = {0, 20000};
      nanosleep(&d, NULL);
    }
    uint32_t k = __atomic_load_n(&t->inflight, __ATOMIC_SEQ_CST);
    if (k && !nstuck++) stuck_tid = __atomic_load_n(&t->tid, __ATOMIC_ACQUIRE), stuck_n = k;
  }
  if (nstuck && !rt_opt.quiet) {
    /* says so (write(2): signal-safe): the records of those claims are lost */
    /* "... (process P, thread T's records: K claims open, and N more
     * threads'; waited in thread W) ..." */
    char m[300];
    size_t at = s_cpy(m, 0, sizeof m, "ncrt: a thread still held records after 10 s (process ");
    at = s_u64(m, at, sizeof m, (uint64_t)getpid());
    at = s_cpy(m, at, sizeof m, ", thread ");
    at = s_u64(m, at, sizeof m, stuck_tid);
    at = s_cpy(m, at, sizeof m, "'s records: ");
    at = s_u64(m, at, sizeof m, stuck_n);
    at = s_cpy(m, at, sizeof m, stuck_n == 1 ? " claim open" : " claims open");
    if (nstuck > 1) {
      at = s_cpy(m, at, sizeof m, ", and ");
      at = s_u64(m, at, sizeof m, nstuck - 1);
      at = s_cpy(m, at, sizeof m, " more thread's");
    }
    at = s_cpy(m, at, sizeof m, "; waited in thread ");
    at = s_u64(m, at, sizeof m, (uint64_t)syscall(SYS_gettid));
    at = s_cpy(m, at, sizeof m, "); the records they held are lost\n");
    ssize_t w = write(2, m, at);
    (void)w;
  }
}

void rt_save_now(int die) {
  if (!rt_collecting || !rt_collector.threads()) return;
  in_save++;
  if (die) dying = 1;
  for (RtThread *t = rt_collector.threads(); t; t = t->next) rt_spill_thread(t);
  if (die) wait_claims();
  if (__atomic_load_n(&spill.raw_end, __ATOMIC_ACQUIRE) || spill.gpu_end || die) { /* else nothing recorded yet */
    names_save();
    info_save(die);
  }
  in_save--;
}

/* The devices as "device" lines of the snapshot (built here, off any signal
 * path, once the driver answers). */
static void devices_cache(void) {
  const RtDevice *d;
  int n = rt_devices(&d);
  size_t at = 0;
  for (int i = 0; i < n && at < sizeof devices_json; i++) {
    Out o = {-1, 0, 0, {0}};
    o_json(&o, d[i].name); /* JSON-escaped name into o.b (no fd: never flushed) */
    int k = snprintf(devices_json + at, sizeof devices_json - at,
                     "device %d %llu %d %d %d %d %d %d %d %d %d %llu %llu %llu %.*s\n", d[i].id,
                     (unsigned long long)d[i].total_mem, d[i].cc_major, d[i].cc_minor, d[i].num_sms,
                     d[i].max_threads_per_block, d[i].max_threads_per_sm, d[i].max_blocks_per_sm, d[i].regs_per_block,
                     d[i].regs_per_sm, d[i].warp_size, (unsigned long long)d[i].shmem_per_block,
                     (unsigned long long)d[i].shmem_per_sm, (unsigned long long)d[i].shmem_per_block_optin,
                     (int)o.n, o.b);
    if (k < 0 || (size_t)k >= sizeof devices_json - at) break;
    at += (size_t)k;
  }
  devices_json[at] = 0;
}

/* GPU records that CUPTI handed over, appended to .gpu (the flusher, under
 * spill.lock): memory holds about a second of GPU activity at most. */
void gpu_save(void) {
  rt_cupti_flush_complete();
  size_t n = 0;
  RtGpuRec *v = rt_cupti_take(&n);
  if (n && !spill.err) {
    /* written in sequence by the flusher alone (under spill.lock), from a
     * new empty file; the writer reads it with pread */
    int fd = lazy_open(&spill.gpu_fd, ".gpu", O_RDWR);
    int e = fd >= 0 ? write_all(fd, v, n * sizeof *v) : 0;
    if (e) {
      int none = 0;
      __atomic_compare_exchange_n(&spill.err, &none, e, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    }
    if (fd >= 0 && !e) {
      spill.gpu_end += n * sizeof *v;
      for (size_t i = 0; i < n; i++) {
        spill.gpu_work += v[i].kind != GPU_RUNTIME && v[i].kind != GPU_DRIVER;
        spill.gpu_kernels += v[i].kind == GPU_KERNEL;
      }
    }
    if (!devices_json[0] && spill.gpu_kernels) devices_cache(); /* a kernel ran: the driver is up */
  }
  free(v);
}

/* The capture windows as "windows" and "window" lines for the next
 * snapshot (the flusher, under spill.lock): built in the buffer not
 * published, then published, so a death snapshot reads a whole one. */
void spill_windows_update(void) {
  static char w[sizeof windows_buf[0] - 32];
  if (rt_collector.windows_text(w, sizeof w) == 0) {
    size_t k = 0;
    for (const char *p = w; *p; p++) k += *p == '\n';
    char *next = windows_text == windows_buf[0] ? windows_buf[1] : windows_buf[0];
    snprintf(next, sizeof windows_buf[0], "windows %zu\n%s", k, w);
    __atomic_store_n(&windows_text, next, __ATOMIC_RELEASE);
  }
}
