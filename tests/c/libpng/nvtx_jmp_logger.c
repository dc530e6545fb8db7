/* nvtx_jmp_logger: a longjmp-aware NVTX logger for the libpng differential
 * test (tests only; the real collector is libncrt, and ../nvtx_counter.c is
 * the plain counter the other tests use). Written apart from libncrt so that
 * it checks libncrt's longjmp handling rather than repeating it.
 *
 * The one library is both LD_PRELOADed and named by NVTX_INJECTION64_PATH
 * (dlopen then returns the preloaded copy):
 *
 * - as the NVTX injection it keeps, per thread, a stack of the open ranges:
 *   (name, payload) where the payload is the address of the range's scope
 *   object that ncrt.h's NCRT_RANGE passes (NVTX_PAYLOAD_TYPE_UNSIGNED_INT64);
 *   a pop takes the top one, a pop on an empty stack is an underflow;
 * - preloaded, it interposes longjmp, _longjmp, siglongjmp and
 *   __longjmp_chk: before jumping it reads the stack pointer the jump
 *   restores from the jmp_buf and takes off the stack, as "closed by
 *   longjmp", the ranges whose scope objects lie in the part of the stack
 *   the jump abandons, [here, target). A range of an abandoned frame left
 *   below a range that stays open is counted as misplaced.
 *
 * glibc stores that stack pointer mangled (x86-64: xor with the pointer
 * guard, then rotated left 17 bits). libncrt reads the guard from the
 * thread control block; this logger instead derives it once from a setjmp
 * of its own, whose saved frame pointer it knows (__builtin_frame_address),
 * at two different stack depths: when the two disagree (another libc,
 * another architecture), jumps are left alone and the log says so
 * ("guard unknown"), so the ranges they skip show up as open.
 *
 * At exit (atexit) each process that initialised NVTX writes
 * $NVTX_COUNTER_DIR/<program>.<pid>.log:
 *
 *   guard ok|unknown
 *   thread TID pushes N pops N longjmp_pops N open N underflows N misplaced N
 *          unaddressed N jumps N          (one line per thread that pushed)
 *   open TID DEPTH NAME                   (each range still open, outermost first)
 *   name NAME PUSHES LONGJMP_POPS         (each range name, all threads)
 *
 * and, at initialisation, <program>.<pid>.cmd, the command line (each
 * argument ending in a NUL): a .cmd without a .log is a process that did
 * not reach exit(). The tid is gettid(); "unaddressed" counts pushes that
 * came without an address (they stop a longjmp's unwinding). */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE /* our longjmp must keep its own name */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

/* ---- range names (global) ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char **names; /* id -> name; id 0 is a range without a message */
static uint32_t nnames, capnames;

static uint32_t add_name_locked(const char *s) {
  if (nnames == capnames) {
    uint32_t cap = capnames ? 2 * capnames : 256;
    char **n = realloc(names, cap * sizeof *n);
    if (!n) abort();
    names = n;
    capnames = cap;
  }
  if (!(names[nnames] = strdup(s))) abort();
  return nnames++;
}

static uint32_t name_id_locked(const char *s) {
  if (nnames == 0) add_name_locked("<no message>");
  for (uint32_t i = 1; i < nnames; i++)
    if (!strcmp(names[i], s)) return i;
  return add_name_locked(s);
}

static uint32_t name_id(const char *s) {
  pthread_mutex_lock(&lock);
  uint32_t i = name_id_locked(s);
  pthread_mutex_unlock(&lock);
  return i;
}

/* ---- per-thread state ---- */

typedef struct {
  uint32_t name;
  uint64_t addr;
} Frame;

typedef struct Thread {
  struct Thread *next;
  long tid;
  Frame *stack;
  size_t depth, cap;
  uint64_t pushes, pops, jumped, underflows, misplaced, unaddressed, jumps;
  uint64_t *count, *jcount; /* per name id: pushes, closed by longjmp */
  size_t ncount;
} Thread;

static Thread *threads;
static __thread Thread *me;

static Thread *self(void) {
  if (__builtin_expect(me != NULL, 1)) return me;
  Thread *t = calloc(1, sizeof *t);
  if (!t) abort();
  t->tid = (long)syscall(SYS_gettid);
  pthread_mutex_lock(&lock);
  t->next = threads;
  threads = t;
  pthread_mutex_unlock(&lock);
  return me = t;
}

static void grow_counts(Thread *t, uint32_t id) {
  size_t n = t->ncount ? t->ncount : 64;
  while (n <= id) n *= 2;
  uint64_t *c = realloc(t->count, n * sizeof *c), *j = c ? realloc(t->jcount, n * sizeof *j) : NULL;
  if (!c || !j) abort();
  memset(c + t->ncount, 0, (n - t->ncount) * sizeof *c);
  memset(j + t->ncount, 0, (n - t->ncount) * sizeof *j);
  t->count = c;
  t->jcount = j;
  t->ncount = n;
}

/* ---- NVTX callbacks ---- */

static nvtxStringHandle_t reg(nvtxDomainHandle_t d, const char *s) {
  (void)d;
  return (nvtxStringHandle_t)(uintptr_t)name_id(s ? s : "");
}

static nvtxDomainHandle_t domain_create(const char *name) {
  (void)name;
  return (nvtxDomainHandle_t)(uintptr_t)1;
}

static int push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  (void)d;
  Thread *t = self();
  uint32_t id = 0;
  uint64_t addr = 0;
  if (a) {
    if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) id = (uint32_t)(uintptr_t)a->message.registered;
    else if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii) id = name_id(a->message.ascii);
    if (a->payloadType == NVTX_PAYLOAD_TYPE_UNSIGNED_INT64) addr = a->payload.ullValue;
  }
  if (!addr) t->unaddressed++;
  if (t->depth == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 256;
    Frame *s = realloc(t->stack, cap * sizeof *s);
    if (!s) abort();
    t->stack = s;
    t->cap = cap;
  }
  t->stack[t->depth].name = id;
  t->stack[t->depth].addr = addr;
  if (id >= t->ncount) grow_counts(t, id);
  t->count[id]++;
  t->pushes++;
  return (int)t->depth++;
}

static int pop(nvtxDomainHandle_t d) {
  (void)d;
  Thread *t = self();
  if (t->depth == 0) {
    t->underflows++;
    return -1;
  }
  t->pops++;
  return (int)--t->depth;
}

/* ---- longjmp ---- */

enum { JB_RBP = 1, JB_RSP = 6 }; /* glibc x86-64 __jmp_buf slots */
static uint64_t guard;
static int guard_ok;

static uint64_t ror17(uint64_t v) { return (v >> 17) | (v << 47); }

/* The pointer guard, from the mangled frame pointer a setjmp saves here. */
static __attribute__((noinline)) uint64_t guard_here(void) {
#if defined(__x86_64__) && defined(__GLIBC__)
  jmp_buf b;
  if (setjmp(b)) return 0; /* never jumped to */
  return ror17((uint64_t)b[0].__jmpbuf[JB_RBP]) ^ (uint64_t)(uintptr_t)__builtin_frame_address(0);
#else
  return 0;
#endif
}

static __attribute__((noinline)) uint64_t guard_deeper(int n) {
  volatile char pad[4096];
  pad[0] = (char)n;
  uint64_t g = n ? guard_deeper(n - 1) : guard_here();
  return g + (uint64_t)(pad[0] - (char)n);
}

typedef void (*JumpFn)(struct __jmp_buf_tag *env, int val);
static JumpFn real_longjmp, real__longjmp, real_siglongjmp, real_chk;

__attribute__((constructor)) static void init_jumps(void) {
  real_longjmp = (JumpFn)dlsym(RTLD_NEXT, "longjmp");
  real__longjmp = (JumpFn)dlsym(RTLD_NEXT, "_longjmp");
  real_siglongjmp = (JumpFn)dlsym(RTLD_NEXT, "siglongjmp");
  real_chk = (JumpFn)dlsym(RTLD_NEXT, "__longjmp_chk");
  uint64_t a = guard_here(), b = guard_deeper(3);
  guard = a;
  guard_ok = a != 0 && a == b;
}

static __attribute__((noinline)) void before_jump(struct __jmp_buf_tag *env) {
  Thread *t = me;
  volatile char here_c;
  if (!t || !t->depth) return;
  t->jumps++;
  if (!guard_ok) return;
  uint64_t target = ror17((uint64_t)env->__jmpbuf[JB_RSP]) ^ guard, here = (uint64_t)(uintptr_t)&here_c;
  if (target <= here) return; /* not up this stack: nothing abandoned here */
  while (t->depth && t->stack[t->depth - 1].addr >= here && t->stack[t->depth - 1].addr < target) {
    uint32_t id = t->stack[--t->depth].name;
    t->jcount[id]++;
    t->jumped++;
  }
  for (size_t i = 0; i < t->depth; i++)
    if (t->stack[i].addr >= here && t->stack[i].addr < target) t->misplaced++;
}

static __attribute__((noreturn)) void jump(JumpFn f, struct __jmp_buf_tag *env, int val) {
  if (!f) f = (JumpFn)dlsym(RTLD_NEXT, "siglongjmp");
  f(env, val);
  abort();
}

__attribute__((visibility("default"))) void longjmp(struct __jmp_buf_tag env[1], int val) {
  before_jump(env);
  jump(real_longjmp, env, val);
}
__attribute__((visibility("default"))) void _longjmp(struct __jmp_buf_tag env[1], int val) {
  before_jump(env);
  jump(real__longjmp, env, val);
}
__attribute__((visibility("default"))) void siglongjmp(struct __jmp_buf_tag env[1], int val) {
  before_jump(env);
  jump(real_siglongjmp, env, val);
}
__attribute__((visibility("default"))) void __longjmp_chk(struct __jmp_buf_tag env[1], int val);
__attribute__((visibility("default"))) void __longjmp_chk(struct __jmp_buf_tag env[1], int val) {
  before_jump(env);
  jump(real_chk, env, val);
}

/* ---- the log ---- */

static char dir[4096];

static void write_cmdline(const char *path) {
  char buf[65536];
  int in = open("/proc/self/cmdline", O_RDONLY), out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ssize_t n;
  while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
    if (write(out, buf, (size_t)n) != n) break;
  if (in >= 0) close(in);
  if (out >= 0) close(out);
}

static void report(void) {
  char path[4400];
  snprintf(path, sizeof path, "%s/%s.%ld.log", dir, program_invocation_short_name, (long)getpid());
  FILE *f = fopen(path, "w");
  if (!f) return;
  pthread_mutex_lock(&lock);
  fprintf(f, "guard %s\n", guard_ok ? "ok" : "unknown");
  for (Thread *t = threads; t; t = t->next)
    fprintf(f,
            "thread %ld pushes %llu pops %llu longjmp_pops %llu open %zu underflows %llu misplaced %llu "
            "unaddressed %llu jumps %llu\n",
            t->tid, (unsigned long long)t->pushes, (unsigned long long)t->pops, (unsigned long long)t->jumped,
            t->depth, (unsigned long long)t->underflows, (unsigned long long)t->misplaced,
            (unsigned long long)t->unaddressed, (unsigned long long)t->jumps);
  for (Thread *t = threads; t; t = t->next)
    for (size_t i = 0; i < t->depth; i++) fprintf(f, "open %ld %zu %s\n", t->tid, i, names[t->stack[i].name]);
  for (uint32_t id = 0; id < nnames; id++) {
    unsigned long long n = 0, j = 0;
    for (Thread *t = threads; t; t = t->next)
      if (id < t->ncount) n += t->count[id], j += t->jcount[id];
    if (n) fprintf(f, "name %s %llu %llu\n", names[id], n, j);
  }
  pthread_mutex_unlock(&lock);
  fclose(f);
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  const char *d = getenv("NVTX_COUNTER_DIR");
  const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
  NvtxFunctionTable t;
  unsigned int n;
  char path[4400];
  if (!d || strlen(d) >= sizeof dir || !cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n)) return 0;
  strcpy(dir, d);
  *t[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)push;
  *t[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)pop;
  *t[NVTX_CBID_CORE2_DomainRegisterStringA] = (NvtxFunctionPointer)reg;
  *t[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)domain_create;
  snprintf(path, sizeof path, "%s/%s.%ld.cmd", dir, program_invocation_short_name, (long)getpid());
  write_cmdline(path);
  atexit(report);
  return 1;
}
