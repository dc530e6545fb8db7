/* cupti.c: the CUDA side of libncrt.
 *
 * The CUDA driver loads CUDA_INJECTION64_PATH during cuInit and calls
 * InitializeInjection (collector.c), which sets the collector up and calls
 * rt_cupti_start here. Only then do we dlopen("libcupti.so.13") (never
 * linked, never closed) and enable the activity kinds: concurrent kernels,
 * memcpy, memset, runtime and driver calls (correlation ids need them) and,
 * with the mem activity, allocations. CUPTI is given our clock
 * (CLOCK_MONOTONIC ns), so GPU records and NVTX ranges share a time line.
 *
 * Buffers come back on CUPTI's thread: we copy the few fields we need into
 * a locked growable array and return the buffer. About once a second the
 * flusher asks for the buffers whose records are complete and moves the
 * array to the process's .gpu spill file (spill.c), so memory stays
 * bounded and a killed program keeps its GPU work; a write takes the rest
 * after a forced flush (never from inside a buffer callback).
 *
 * If CUPTI is missing, too old, or another subscriber holds it (nsys, ncu,
 * torch.profiler), we say so once and keep recording NVTX ranges. */
#define _GNU_SOURCE
#include "rt.h"
#include "ncrt_protocol.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static char status[256] = "not started (no CUDA in this process)";
static uint32_t cupti_ver;

const char *rt_cupti_status(void) { return status; }
uint32_t rt_cupti_version(void) { return cupti_ver; }

#ifndef NCRT_HAVE_CUPTI

void rt_cupti_flush(void) {}
void rt_cupti_flush_complete(void) {}
size_t rt_cupti_count(void) { return 0; }
RtGpuRec *rt_cupti_take(size_t *n) {
  *n = 0;
  return NULL;
}
void rt_cupti_start(void) {
  snprintf(status, sizeof status, "libncrt was built without CUPTI headers");
  rt_say("%s; GPU activity is not recorded", status);
}

#else

#include <cupti.h>

static struct {
  __typeof__(cuptiGetVersion) *GetVersion;
  __typeof__(cuptiSubscribe) *Subscribe;
  __typeof__(cuptiSetThreadIdType) *SetThreadIdType;
  __typeof__(cuptiActivityRegisterTimestampCallback) *RegisterTimestampCallback;
  __typeof__(cuptiActivityRegisterCallbacks) *RegisterCallbacks;
  __typeof__(cuptiActivityEnable) *Enable;
  __typeof__(cuptiActivityGetNextRecord) *GetNextRecord;
  __typeof__(cuptiActivityGetNumDroppedRecords) *GetNumDroppedRecords;
  __typeof__(cuptiActivityFlushAll) *FlushAll;
  __typeof__(cuptiGetResultString) *GetResultString;
  __typeof__(cuptiGetCallbackName) *GetCallbackName;
  __typeof__(cuptiEnableCallback) *EnableCallback;
} api;

static int active;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static RtGpuRec *recs;
static size_t nrecs, caprecs;
static size_t dropped;

#define BUF_SIZE (4u << 20)

static uint64_t CUPTIAPI timestamp(void) { return rt_mono_ns(); }

static void CUPTIAPI buf_request(uint8_t **buf, size_t *size, size_t *max_records) {
  *buf = aligned_alloc(8, BUF_SIZE);
  *size = *buf ? BUF_SIZE : 0;
  *max_records = 0;
}

static RtGpuRec *add(void) {
  if (nrecs == caprecs) {
    size_t cap = caprecs ? caprecs * 2 : 4096;
    RtGpuRec *v = realloc(recs, cap * sizeof *v);
    if (!v) return NULL;
    recs = v;
    caprecs = cap;
  }
  RtGpuRec *r = &recs[nrecs++];
  memset(r, 0, sizeof *r);
  return r;
}

/* Kernel names as Kineto shows them: demangled when the C++ runtime is in
 * the process (looked up, never linked, never loaded by us). A Python
 * program gets libstdc++ through extension modules dlopen'ed RTLD_LOCAL
 * (torch), out of RTLD_DEFAULT's sight: the loaded library is then asked
 * by name (RTLD_NOLOAD). Not found yet, the lookup is tried again every
 * 1024 names (the C++ runtime may come later); kernel_name runs on the
 * CUPTI buffer thread only. */
static uint32_t kernel_name(const char *mangled) {
  if (!mangled) return rt_intern("(kernel)", 8);
  typedef char *(*Demangle)(const char *, char *, size_t *, int *);
  static Demangle dm;
  static unsigned tries;
  if (!dm && tries++ % 1024 == 0) {
    dm = (Demangle)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    void *h = dm ? NULL : dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
    if (h) dm = (Demangle)dlsym(h, "__cxa_demangle"); /* the reference kept: dm stays valid */
  }
  if (dm && mangled[0] == '_' && mangled[1] == 'Z') {
    int st = 0;
    char *d = dm(mangled, NULL, NULL, &st);
    if (d && st == 0) {
      uint32_t id = rt_intern(d, strlen(d));
      free(d);
      return id;
    }
    free(d);
  }
  return rt_intern(mangled, strlen(mangled));
}

static uint32_t api_name(CUpti_CallbackDomain dom, uint32_t cbid) {
  const char *n = NULL;
  if (api.GetCallbackName && api.GetCallbackName(dom, cbid, &n) == CUPTI_SUCCESS && n) {
    size_t len = strlen(n);
    const char *v = strstr(n, "_v");
    if (v && v[2] >= '0' && v[2] <= '9') len = (size_t)(v - n); /* cudaLaunchKernel_v7000 */
    return rt_intern(n, len);
  }
  char buf[32];
  snprintf(buf, sizeof buf, "cbid %u", cbid);
  return rt_intern(buf, strlen(buf));
}

/* Where a GPU operation ran and what launched it: the same members in each
 * of CUPTI's (unrelated) record structs. */
#define TAKE_PLACE(r, x) \
  ((r)->device = (x)->deviceId, (r)->context = (x)->contextId, (r)->stream = (x)->streamId, \
   (r)->correlation = (x)->correlationId)

static void take_record(CUpti_Activity *a) {
  RtGpuRec *r;
  switch (a->kind) {
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
  case CUPTI_ACTIVITY_KIND_KERNEL: {
    CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)a;
    if (!(r = add())) return;
    r->kind = GPU_KERNEL;
    r->start = k->start;
    r->end = k->end;
    TAKE_PLACE(r, k);
    r->grid[0] = k->gridX, r->grid[1] = k->gridY, r->grid[2] = k->gridZ;
    r->block[0] = k->blockX, r->block[1] = k->blockY, r->block[2] = k->blockZ;
    r->regs = k->registersPerThread;
    r->shmem = (uint32_t)(k->staticSharedMemory + k->dynamicSharedMemory);
    r->name = kernel_name(k->name);
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY: {
    CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *)a;
    if (!(r = add())) return;
    r->kind = GPU_MEMCPY;
    r->copy_kind = m->copyKind;
    r->src_kind = m->srcKind;
    r->dst_kind = m->dstKind;
    r->bytes = m->bytes;
    r->start = m->start;
    r->end = m->end;
    TAKE_PLACE(r, m);
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMSET: {
    CUpti_ActivityMemset4 *m = (CUpti_ActivityMemset4 *)a;
    if (!(r = add())) return;
    r->kind = GPU_MEMSET;
    r->bytes = m->bytes;
    r->dst_kind = (uint8_t)m->memoryKind;
    r->start = m->start;
    r->end = m->end;
    TAKE_PLACE(r, m);
    break;
  }
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER: {
    CUpti_ActivityAPI *p = (CUpti_ActivityAPI *)a;
    if (rt_devices_ours(p->threadId, p->start, p->end)) return;
    if (!(r = add())) return;
    int rt = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
    r->kind = rt ? GPU_RUNTIME : GPU_DRIVER;
    r->cbid = p->cbid;
    r->start = p->start;
    r->end = p->end;
    r->pid = p->processId;
    r->tid = p->threadId;
    r->correlation = p->correlationId;
    r->name = api_name(rt ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, p->cbid);
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMORY2: {
    CUpti_ActivityMemory4 *m = (CUpti_ActivityMemory4 *)a;
    if (!(r = add())) return;
    r->kind = GPU_MEMORY;
    r->bytes = m->bytes;
    r->start = r->end = m->timestamp;
    TAKE_PLACE(r, m);
    r->pid = m->processId;
    r->tid = 0;
    const char *n = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION ? "Memory Allocate"
                                                                                           : "Memory Release";
    r->name = rt_intern(n, strlen(n));
    break;
  }
  default:
    break;
  }
}

static void CUPTIAPI buf_complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid) {
  CUpti_Activity *a = NULL;
  pthread_mutex_lock(&lock);
  while (valid && api.GetNextRecord(buf, valid, &a) == CUPTI_SUCCESS) take_record(a);
  size_t d = 0;
  if (api.GetNumDroppedRecords(ctx, stream, &d) == CUPTI_SUCCESS) dropped += d;
  pthread_mutex_unlock(&lock);
  free(buf);
}

/* A context was created: the driver is up, so read the devices now. At
 * exit it may be gone: our exit hook, registered when libncrt loads, runs
 * after the CUDA runtime's own teardown. */
static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data) {
  (void)ud, (void)data;
  if (d == CUPTI_CB_DOMAIN_RESOURCE && id == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    const RtDevice *devs;
    rt_devices(&devs); /* its driver calls are left out of the trace (devprops.c) */
  }
}

void rt_cupti_flush(void) {
  if (active) api.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/* CUPTI's "default flush": only buffers whose records are all complete,
 * half-full ones included; meant to be called at a regular interval from a
 * thread of the tool's own (our flusher), so a killed program's GPU work
 * is on disk up to about a second before it died. */
void rt_cupti_flush_complete(void) {
  if (active) api.FlushAll(0);
}

/* GPU work waiting: API calls alone do not count, so a launcher that only
 * asked for the device count (torchrun's agent does) leaves no trace. */
size_t rt_cupti_count(void) {
  pthread_mutex_lock(&lock);
  size_t n = 0;
  for (size_t i = 0; i < nrecs; i++) n += recs[i].kind != GPU_RUNTIME && recs[i].kind != GPU_DRIVER;
  pthread_mutex_unlock(&lock);
  return n;
}

RtGpuRec *rt_cupti_take(size_t *n) {
  pthread_mutex_lock(&lock);
  RtGpuRec *v = recs;
  *n = nrecs;
  recs = NULL;
  nrecs = caprecs = 0;
  pthread_mutex_unlock(&lock);
  return v;
}

static const char *err(CUptiResult r) {
  const char *s = NULL;
  if (api.GetResultString && api.GetResultString(r, &s) == CUPTI_SUCCESS && s) return s;
  return "CUPTI error";
}

#define LOAD(field, sym)                                   \
  do {                                                     \
    *(void **)&api.field = dlsym(h, #sym);                 \
    if (!api.field && strcmp(#sym, "cuptiGetCallbackName")) { \
      snprintf(status, sizeof status, "%s lacks %s", lib, #sym); \
      return -1;                                           \
    }                                                      \
  } while (0)

static int start(void) {
  const char *lib = getenv(NCRT_ENV_CUPTI_LIB);
  if (!lib || !*lib) lib = "libcupti.so.13";
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(status, sizeof status, "cannot load %s (%s)", lib, dlerror());
    return -1;
  }
  LOAD(GetVersion, cuptiGetVersion);
  LOAD(Subscribe, cuptiSubscribe);
  LOAD(SetThreadIdType, cuptiSetThreadIdType);
  LOAD(RegisterTimestampCallback, cuptiActivityRegisterTimestampCallback);
  LOAD(RegisterCallbacks, cuptiActivityRegisterCallbacks);
  LOAD(Enable, cuptiActivityEnable);
  LOAD(GetNextRecord, cuptiActivityGetNextRecord);
  LOAD(GetNumDroppedRecords, cuptiActivityGetNumDroppedRecords);
  LOAD(FlushAll, cuptiActivityFlushAll);
  LOAD(GetResultString, cuptiGetResultString);
  LOAD(GetCallbackName, cuptiGetCallbackName);
  LOAD(EnableCallback, cuptiEnableCallback);
  if (api.GetVersion(&cupti_ver) != CUPTI_SUCCESS || cupti_ver < 130000) {
    /* record layouts (Kernel10, Memcpy6, Memset4, Memory4) are 13.x's */
    snprintf(status, sizeof status, "CUPTI API version %u is not 13.x", cupti_ver);
    return -1;
  }
  CUpti_SubscriberHandle sub;
  CUptiResult r = api.Subscribe(&sub, (CUpti_CallbackFunc)on_callback, NULL);
  if (r != CUPTI_SUCCESS) {
    snprintf(status, sizeof status, "CUPTI is busy (%s): another profiler (nsys, ncu, torch.profiler) holds it",
             err(r));
    return -1;
  }
  api.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  api.EnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  if ((r = api.RegisterTimestampCallback(timestamp)) != CUPTI_SUCCESS ||
      (r = api.RegisterCallbacks(buf_request, buf_complete)) != CUPTI_SUCCESS) {
    snprintf(status, sizeof status, "CUPTI set-up failed: %s", err(r));
    return -1;
  }
  static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                             CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
                                             CUPTI_ACTIVITY_KIND_DRIVER};
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if ((r = api.Enable(kinds[i])) != CUPTI_SUCCESS) {
      snprintf(status, sizeof status, "cuptiActivityEnable(%d) failed: %s", (int)kinds[i], err(r));
      return -1;
    }
  if (rt_opt.mem && api.Enable(CUPTI_ACTIVITY_KIND_MEMORY2) != CUPTI_SUCCESS)
    rt_say("CUPTI memory activity unavailable; allocations are not recorded");
  snprintf(status, sizeof status, "recording (CUPTI %u)", cupti_ver);
  active = 1;
  return 0;
}

void rt_cupti_start(void) {
  static int done;
  if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL)) return;
  if (!rt_opt.gpu && !rt_opt.mem) {
    snprintf(status, sizeof status, "off (activities without gpu)");
    return;
  }
  if (start() != 0) rt_say("%s; GPU activity is not recorded, NVTX ranges are", status);
}

#endif
