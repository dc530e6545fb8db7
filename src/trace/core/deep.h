/* deep: what Nsight Compute and Nsight Systems measured of the kernels, read
 * from their CSV exports, for `nctrace summary` to join to its own kernel
 * table (ncrun --ncu / --nsys leave them in RUNDIR/ncu and RUNDIR/nsys;
 * docs/nctrace.md, "Nsight Compute and Nsight Systems").
 *
 *  - Nsight Compute: `ncu --import R.ncu-rep --csv --page raw`: a row of
 *    metric names, a row of units, one row per profiled launch; numbers
 *    with ',' as the thousands separator. Lines that do not start with '"'
 *    (ncu's "==PROF==" lines, the program's own output) are skipped. The
 *    launches are aggregated per kernel (deep_kernel_key of "Kernel Name"):
 *    means over the launches that measured a metric; a metric missing from
 *    the file, or never a number, is not measured (NAN), never 0.
 *  - Nsight Systems: `nsys stats --report cuda_gpu_kern_sum --format csv`
 *    ("Time (%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)",
 *    "Min (ns)","Max (ns)","StdDev (ns)","Name"; quoted or not; other time
 *    units and the older "Average"/"Minimum"/"Maximum" headers accepted).
 *
 * Errors (a file that cannot be read, no header, a row cut short, an
 * unterminated quote) are reported at "file:line:col" through nct_say;
 * nothing here prints.
 *
 * Ownership: NcuData and NsysData own their strings and arrays; ncu_free
 * and nsys_free release them. */
#ifndef NCT_DEEP_H
#define NCT_DEEP_H

#include "util.h"

/* The normalised key kernels are joined on (our trace's, ncu's, nsys's):
 * the name with every whitespace character removed, "(anonymous
 * namespace)" written "<unnamed>" and "const T" written "T const" (T a
 * plain type, before '*', '&', ',', ')' or '>'), so the C++ runtime's
 * __cxa_demangle spelling ("scale(float*, int, float)", "add(float const*)",
 * "(anonymous namespace)::k()") and NVIDIA's ("scale(float *, int, float)",
 * "add(const float *)", "<unnamed>::k()") give one key. Appended to out.
 * ncrun's `ncu -k regex:` (src/runtime/ncrun/deep.c, deep_kernel_regex)
 * is looser: the function's own name, any spelling around it, so every
 * kernel the join below can pair is also one ncu profiles. */
void deep_kernel_key(const char *name, Buf *out);
/* The function alone: no return type ("void "), namespaces, template
 * arguments or parameters, keyed as above ("vectorized_elementwise_kernel"); the
 * join's fallback when the full keys differ (ncu writes a template's
 * parameters as declared, "(int, T2, T3)", the C++ runtime as
 * instantiated). */
void deep_kernel_base(const char *name, Buf *out);

/* Thresholds of the hints (docs/nctrace.md). */
#define DEEP_BUSY_PCT 60.0      /* a unit at or above this % of its peak is busy */
#define DEEP_FULL_OCC_PCT 99.95 /* theoretical occupancy below this is limited */
#define DEEP_ACHIEVED_RATIO 0.8 /* achieved below this x theoretical: well below */

/* What limits the blocks per SM (launch__occupancy_limit_*). */
enum { LIMIT_REGISTERS, LIMIT_SHARED_MEM, LIMIT_WARPS, LIMIT_BLOCKS, LIMIT_BARRIERS, LIMIT_KINDS };
const char *deep_limit_name(int l); /* "registers", "shared memory", "warps", "blocks", "barriers" */

typedef struct {
  char *name;           /* ncu's spelling (the first launch's) */
  char *key;            /* deep_kernel_key(name) */
  uint64_t launches;    /* profiled launches */
  /* means over the launches that measured them; NAN: not measured */
  double duration_ns;   /* gpu__time_duration.sum */
  double sm_pct;        /* sm__throughput.avg.pct_of_peak_sustained_elapsed */
  double mem_pct;       /* gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed */
  double dram_pct;      /* gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed */
  double occ_achieved;  /* sm__warps_active.avg.pct_of_peak_sustained_active */
  double occ_theoretical; /* sm__maximum_warps_per_active_cycle_pct */
  double registers;     /* launch__registers_per_thread */
  double smem_block;    /* bytes: launch__shared_mem_per_block_static + _dynamic, else launch__shared_mem_per_block */
  double limit[LIMIT_KINDS]; /* blocks per SM each resource allows */
  unsigned limiter;     /* bit mask (1 << LIMIT_*): the smallest limit(s); 0 = not measured */
  double block_threads; /* launch__block_size */
  double grid_blocks;   /* launch__grid_size */
  double waves;         /* launch__waves_per_multiprocessor */
  double sm_count;      /* launch__sm_count (else device__attribute_multiprocessor_count) */
  char *block, *grid;   /* "Block Size", "Grid Size" of the first launch ("(256, 1, 1)"); NULL: not there */
  bool block_varies, grid_varies; /* other launches had others */
  /* FP32 roofline, DRAM (the roofline section's metrics): */
  double flops;         /* (fadd + fmul + 2 ffma) per cycle x SMSP cycles per second */
  double dram_bw;       /* dram__bytes.sum.per_second */
  double peak_flops;    /* 2 x ffma peak per cycle x SM cycles per second */
  double peak_bw;       /* dram__bytes.sum.peak_sustained x dram__cycles_elapsed.avg.per_second */
} NcuKernel;

typedef struct {
  char *path;
  uint64_t rows;             /* profiled launches in the file */
  VEC(NcuKernel) kernels;    /* by launches x mean duration desc, then name */
} NcuData;

/* 0, or -1 (reported). An export with a header and no launch is valid
 * (no kernels). */
int ncu_load(const char *path, NcuData *out);
void ncu_free(NcuData *d);

/* FLOP per DRAM byte, the ridge point (peak FLOP/s / peak bytes/s); NAN
 * when not measured (or no DRAM traffic). */
double ncu_intensity(const NcuKernel *k);
double ncu_ridge(const NcuKernel *k);
/* "memory" (intensity below the ridge) or "compute"; NULL: not measured. */
const char *ncu_roofline_side(const NcuKernel *k);
/* The hint: "memory-bound", "compute-bound" or "latency-bound", then what
 * limits occupancy, "; "-separated (docs/nctrace.md); "not measured" when
 * nothing it needs is there. Appended to out. */
void ncu_hint(const NcuKernel *k, Buf *out);

typedef struct {
  char *name, *key;
  uint64_t instances;
  int64_t total;                /* ns */
  int64_t avg, med, min, max, std; /* ns; -1: not in the file */
} NsysKernel;

typedef struct {
  char *path;
  VEC(NsysKernel) kernels; /* total desc, then name */
} NsysData;

int nsys_load(const char *path, NsysData *out);
void nsys_free(NsysData *d);

#endif
