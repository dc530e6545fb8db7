/* kernels: the GPU kernels launched inside ranges whose name matches a glob
 * -- what `nctrace kernels` prints, and what ncrun --ncu picks the kernels
 * it profiles from (docs/nctrace.md, "kernels").
 *
 * A kernel (an Ev of kind K_KERNEL) is launched by the runtime or driver
 * call (K_CUDA_RUNTIME / K_CUDA_DRIVER) with its correlation id; it belongs
 * to a matching range when that call starts within [ts, ts + dur] of a CPU
 * range (kind_is_cpu_range, start/end ranges included) on the same thread
 * whose name matches the glob (fnmatch, no flags). The matching ranges of a
 * thread are taken as the union of their intervals, so a kernel inside
 * nested or overlapping matches counts once. Copies and memsets are not
 * kernels and are left out; a kernel whose launch call is not in the trace
 * belongs to no range.
 *
 * Deterministic (ties broken by name, integer nanoseconds); never prints.
 *
 * Ownership: RangeKernels owns its arrays; it refers to names by
 * Model.names id, so the Model must outlive it. range_kernels_free
 * releases it. */
#ifndef NCT_KERNELS_H
#define NCT_KERNELS_H

#include "model.h"

typedef struct {
  uint32_t name;  /* Model.names */
  uint64_t count;
  int64_t total;  /* ns, summed GPU time */
} RangeKernelRow;

typedef struct {
  uint64_t instances;       /* matching range events, every one (nested too) */
  uint64_t async_instances; /* of them, start/end ranges (EV_ASYNC) */
  VEC(uint32_t) ranges;     /* the distinct matching names, by name (strcmp) */
  VEC(RangeKernelRow) kernels; /* inside the matches: total desc, then name */
  uint64_t inside_count;    /* their launches and time, all rows */
  int64_t inside_total;
  uint64_t all_count;       /* every kernel of the traces */
  int64_t all_total;
  uint64_t unlaunched;      /* kernels without their launch call in the trace */
  /* Only when no range matched: every CPU range name of the traces by
   * inclusive time (outermost instances, as the summary's operations
   * table counts it; start/end ranges whole), desc, then name. */
  VEC(uint32_t) seen;
} RangeKernels;

void range_kernels(const Model *m, const char *glob, RangeKernels *out);
void range_kernels_free(RangeKernels *k);

#endif
