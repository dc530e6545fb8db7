/* devprops.c: what the trace says about the GPUs (deviceProperties, and the
 * per-kernel occupancy figures Kineto writes), read from the CUDA driver
 * the program already loaded. We never load or link it: dlopen with
 * RTLD_NOLOAD finds it only if it is there, so a CPU-only run stays so.
 *
 * The attribute numbers are CUdevice_attribute values, stable across CUDA
 * releases; they are spelled out so this file needs no CUDA header. */
#define _GNU_SOURCE
#include "rt.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum {
  A_MAX_THREADS_PER_BLOCK = 1,
  A_SHMEM_PER_BLOCK = 8,
  A_WARP_SIZE = 10,
  A_REGS_PER_BLOCK = 12,
  A_SM_COUNT = 16,
  A_MAX_THREADS_PER_SM = 39,
  A_CC_MAJOR = 75,
  A_CC_MINOR = 76,
  A_SHMEM_PER_SM = 81,
  A_REGS_PER_SM = 82,
  A_SHMEM_PER_BLOCK_OPTIN = 97,
  A_MAX_BLOCKS_PER_SM = 106,
};

static RtDevice devs[RT_MAX_DEVICES];
static int ndevs = -1;

/* When and on which thread we asked the driver: CUPTI records those calls
 * like the program's, and they are not the program's (cupti.c drops them). */
static struct {
  uint32_t tid;
  uint64_t a, b;
} asked[8];
static volatile uint32_t nasked;

int rt_devices_ours(uint32_t tid, uint64_t start, uint64_t end) {
  uint32_t n = __atomic_load_n(&nasked, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < n && i < 8; i++)
    if (asked[i].tid == tid && start >= asked[i].a && end <= asked[i].b) return 1;
  return 0;
}

static int query(void);

/* CLOCK_MONOTONIC ns, CUPTI's clock (this file stands alone in a test) */
static uint64_t mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int rt_devices(const RtDevice **out) {
  *out = devs;
  if (ndevs >= 0) return ndevs;
  uint64_t a = mono_ns();
  int k = query();
  uint32_t i = __atomic_load_n(&nasked, __ATOMIC_ACQUIRE);
  if (i < 8) {
    asked[i].tid = (uint32_t)syscall(SYS_gettid);
    asked[i].a = a;
    asked[i].b = mono_ns();
    __atomic_store_n(&nasked, i + 1, __ATOMIC_RELEASE);
  }
  return k;
}

static int query(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!h) return 0; /* no driver in this process (yet): ask again next write */
  typedef int (*GetCount)(int *);
  typedef int (*Get)(int *, int);
  typedef int (*GetName)(char *, int, int);
  typedef int (*TotalMem)(size_t *, int);
  typedef int (*Attr)(int *, int, int);
  GetCount get_count = (GetCount)dlsym(h, "cuDeviceGetCount");
  Get get = (Get)dlsym(h, "cuDeviceGet");
  GetName get_name = (GetName)dlsym(h, "cuDeviceGetName");
  TotalMem total_mem = (TotalMem)dlsym(h, "cuDeviceTotalMem_v2");
  Attr attr = (Attr)dlsym(h, "cuDeviceGetAttribute");
  int n = 0;
  if (!get_count || !get || !get_name || !total_mem || !attr || get_count(&n) != 0) {
    dlclose(h);
    return 0;
  }
  if (n > RT_MAX_DEVICES) n = RT_MAX_DEVICES;
  int k = 0;
  for (int i = 0; i < n; i++) {
    int dev;
    if (get(&dev, i) != 0) continue;
    RtDevice *d = &devs[k];
    memset(d, 0, sizeof *d);
    d->id = i;
    if (get_name(d->name, sizeof d->name, dev) != 0) snprintf(d->name, sizeof d->name, "device %d", i);
    size_t mem = 0;
    if (total_mem(&mem, dev) == 0) d->total_mem = mem;
    int v;
#define A(field, id) d->field = attr(&v, id, dev) == 0 ? v : 0
    A(cc_major, A_CC_MAJOR);
    A(cc_minor, A_CC_MINOR);
    A(num_sms, A_SM_COUNT);
    A(max_threads_per_block, A_MAX_THREADS_PER_BLOCK);
    A(max_threads_per_sm, A_MAX_THREADS_PER_SM);
    A(max_blocks_per_sm, A_MAX_BLOCKS_PER_SM);
    A(regs_per_block, A_REGS_PER_BLOCK);
    A(regs_per_sm, A_REGS_PER_SM);
    A(warp_size, A_WARP_SIZE);
    A(shmem_per_block, A_SHMEM_PER_BLOCK);
    A(shmem_per_sm, A_SHMEM_PER_SM);
    A(shmem_per_block_optin, A_SHMEM_PER_BLOCK_OPTIN);
#undef A
    k++;
  }
  dlclose(h); /* drops our reference only: the program's stays */
  if (k) ndevs = k; /* none yet (asked while cuInit runs): ask again next time */
  return k;
}

/* Kineto's three kernel figures. Blocks and warps per SM spread the grid
 * over all SMs. The occupancy is the theoretical one (the CUDA occupancy
 * calculator's limits: threads, blocks, registers, shared memory per SM),
 * capped by the blocks each SM actually gets; registers are allocated per
 * warp in units of 256, shared memory without its allocation granularity
 * (an estimate, as the name says). Returns 0 when the device is unknown. */
int rt_kernel_occupancy(const RtDevice *d, const int32_t grid[3], const int32_t block[3], uint32_t regs,
                        uint32_t shmem, double *blocks_per_sm, double *warps_per_sm, double *occupancy_pct) {
  if (!d || d->num_sms <= 0 || d->warp_size <= 0 || d->max_threads_per_sm <= 0) return 0;
  double blocks = (double)grid[0] * grid[1] * grid[2];
  long threads = (long)block[0] * block[1] * block[2];
  if (threads <= 0 || blocks <= 0) return 0;
  long warps_per_block = (threads + d->warp_size - 1) / d->warp_size;
  *blocks_per_sm = blocks / d->num_sms;
  *warps_per_sm = *blocks_per_sm * (double)warps_per_block;
  long max_warps = d->max_threads_per_sm / d->warp_size;
  long limit = max_warps / warps_per_block;
  if (d->max_blocks_per_sm > 0 && d->max_blocks_per_sm < limit) limit = d->max_blocks_per_sm;
  if (regs && d->regs_per_sm > 0) {
    long per_warp = ((long)regs * d->warp_size + 255) / 256 * 256;
    long by_regs = d->regs_per_sm / (per_warp * warps_per_block);
    if (by_regs < limit) limit = by_regs;
  }
  if (shmem && d->shmem_per_sm > 0) {
    long by_shmem = (long)(d->shmem_per_sm / shmem);
    if (by_shmem < limit) limit = by_shmem;
  }
  double active = (double)limit;
  if (*blocks_per_sm < active) active = *blocks_per_sm;
  *occupancy_pct = 100.0 * active * (double)warps_per_block / (double)max_warps;
  if (*occupancy_pct > 100.0) *occupancy_pct = 100.0;
  return 1;
}
