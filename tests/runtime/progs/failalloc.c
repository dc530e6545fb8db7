/* failalloc: libncrt's out-of-memory paths (issue 34). The program replaces
 * malloc, calloc, realloc, strdup, strndup and aligned_alloc (an
 * executable's definitions come before libc's, for libncrt too) and fails
 * them on command, as an exhausted heap does:
 *   failalloc         main and a second thread each open 20 "open" ranges
 *                     (more than the 16 the collector's first block holds),
 *                     then every allocation fails from then on; prints
 *                     "armed" and exits 3 with the ranges still open
 *   failalloc domain  one "before" range; with every allocation failing,
 *                     creates the domain "lost"; then, allocations back,
 *                     creates "kept" and records "in.kept" in it and
 *                     "after" in the default domain; exits 0
 *   failalloc nth N   the Nth allocation that libncrt (or zlib, which only
 *                     libncrt uses here) asks for fails, and only that one
 *                     (saying "failalloc: failed allocation N" on stderr);
 *                     the program (names, a domain, a category, marks, two
 *                     threads of 3000 ranges of 40 names each, 20 ranges left open)
 *                     exits 3. Run under ncrun, which preloads libncrt, so
 *                     that every allocation of libncrt's is counted. */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <ncrt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static volatile int armed;           /* every allocation fails */
static long fail_nth;                /* the counted allocation that fails (0: none) */
static long counted;                 /* counted allocations so far */
static uintptr_t lo[8], hi[8];       /* the counted callers' code */
static int nranges;

static int fails(void *caller) {
  if (armed) return 1;
  if (!fail_nth) return 0;
  uintptr_t a = (uintptr_t)caller;
  int ours = 0;
  for (int i = 0; i < nranges && !ours; i++) ours = a >= lo[i] && a < hi[i];
  if (!ours || __atomic_add_fetch(&counted, 1, __ATOMIC_RELAXED) != fail_nth) return 0;
  char line[64];
  int n = snprintf(line, sizeof line, "failalloc: failed allocation %ld\n", fail_nth);
  if (write(2, line, (size_t)n) < 0) {
  }
  return 1;
}

#define CALLER __builtin_return_address(0)

void *malloc(size_t n) {
  if (fails(CALLER)) return errno = ENOMEM, NULL;
  return __libc_malloc(n);
}
void *calloc(size_t k, size_t n) {
  if (fails(CALLER)) return errno = ENOMEM, NULL;
  return __libc_calloc(k, n);
}
void *realloc(void *p, size_t n) {
  if (fails(CALLER)) return errno = ENOMEM, NULL;
  return __libc_realloc(p, n);
}
void *aligned_alloc(size_t align, size_t n) {
  if (fails(CALLER)) return errno = ENOMEM, NULL;
  return __libc_memalign(align, n);
}
char *strdup(const char *s) {
  if (fails(CALLER)) return errno = ENOMEM, NULL;
  size_t n = strlen(s) + 1;
  char *p = __libc_malloc(n);
  return p ? memcpy(p, s, n) : NULL;
}
char *strndup(const char *s, size_t max) {
  if (fails(CALLER)) return errno = ENOMEM, NULL;
  size_t n = strnlen(s, max);
  char *p = __libc_malloc(n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

static int note_object(struct dl_phdr_info *info, size_t size, void *ctx) {
  (void)size, (void)ctx;
  const char *name = info->dlpi_name ? info->dlpi_name : "";
  if (!strstr(name, "libncrt") && !strstr(name, "libz.so")) return 0;
  for (int i = 0; i < info->dlpi_phnum && nranges < 8; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    lo[nranges] = info->dlpi_addr + ph->p_vaddr;
    hi[nranges++] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
  }
  return 0;
}

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int opened;

static void *second(void *arg) {
  (void)arg;
  for (int i = 0; i < 20; i++) nvtxRangePushA("open");
  pthread_mutex_lock(&m);
  opened = 1;
  pthread_cond_signal(&cv);
  pthread_mutex_unlock(&m);
  for (;;) pause(); /* its ranges stay open until the process ends */
  return NULL;
}

static int domain(void) {
  nvtxRangePushA("before");
  nvtxRangePop();
  armed = 1;
  nvtxDomainHandle_t lost = nvtxDomainCreateA("lost");
  armed = 0;
  nvtxDomainHandle_t kept = nvtxDomainCreateA("kept");
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "in.kept";
  nvtxDomainRangePushEx(kept, &a);
  nvtxDomainRangePop(kept);
  nvtxRangePushA("after");
  nvtxRangePop();
  (void)lost;
  return 0;
}

static void *worker(void *arg) {
  char name[32];
  nvtxNameOsThreadA((uint32_t)gettid(), arg);
  for (int i = 0; i < 3000; i++) {
    snprintf(name, sizeof name, "%s.%d", (const char *)arg, i % 40);
    nvtxRangePushA(name);
    nvtxRangePop();
  }
  return NULL;
}

static int nth(long n) {
  dl_iterate_phdr(note_object, NULL);
  if (!nranges) {
    fprintf(stderr, "failalloc: libncrt is not loaded (run under ncrun)\n");
    return 2;
  }
  fail_nth = n;
  nvtxRangePushA("main");
  nvtxMarkA("mark");
  nvtxNameCategoryA(7, "seven");
  nvtxDomainHandle_t d = nvtxDomainCreateA("dom");
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "in.dom";
  a.category = 7;
  nvtxDomainRangePushEx(d, &a);
  nvtxDomainRangePop(d);
  pthread_t t[2];
  static char *names[2] = {"t0", "t1"};
  for (int i = 0; i < 2; i++)
    if (pthread_create(&t[i], NULL, worker, names[i])) return 1;
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 20; i++) nvtxRangePushA("open");
  exit(3);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "domain")) return domain();
  if (argc > 2 && !strcmp(argv[1], "nth")) return nth(atol(argv[2]));
  pthread_t t;
  for (int i = 0; i < 20; i++) nvtxRangePushA("open");
  if (pthread_create(&t, NULL, second, NULL)) return 1;
  pthread_mutex_lock(&m);
  while (!opened) pthread_cond_wait(&cv, &m);
  pthread_mutex_unlock(&m);
  printf("armed\n");
  fflush(stdout);
  armed = 1;
  exit(3);
}
