/* occupancy_test: the per-kernel figures of devprops.c against values
 * worked out by hand for an H100 SXM (132 SMs, 2048 threads, 32 blocks,
 * 64 Ki registers and 228 KiB shared memory per SM, warp 32). Runs on any
 * machine: the device is described, not queried. */
#include "rt.h"

#include <math.h>
#include <stdio.h>

static int fails;

static void expect(const char *what, int ok) {
  if (!ok) {
    printf("FAILED: %s\n", what);
    fails++;
  }
}

int main(void) {
  RtDevice h100 = {.id = 0, .num_sms = 132, .max_threads_per_sm = 2048, .max_blocks_per_sm = 32,
                   .regs_per_sm = 65536, .shmem_per_sm = 233472, .warp_size = 32};
  double b, w, o;
  /* 264 blocks of 256 threads, 32 registers: 8 warps a block, 2 blocks an
   * SM; limits: threads 64/8 = 8 blocks, registers 65536/(1024*8) = 8;
   * the grid gives each SM only 2: 2*8/64 = 25% */
  expect("case 1 known", rt_kernel_occupancy(&h100, (int32_t[]){264, 1, 1}, (int32_t[]){256, 1, 1}, 32, 0, &b, &w, &o));
  expect("case 1 blocks per SM", b == 2.0);
  expect("case 1 warps per SM", w == 16.0);
  expect("case 1 occupancy", fabs(o - 25.0) < 1e-9);
  /* 1320 blocks of 128 threads, 128 registers, 48 KiB shared: 4 warps a
   * block, 10 blocks an SM; limits: threads 16, registers
   * 65536/(4096*4) = 4, shared 233472/49152 = 4: 4*4/64 = 25% */
  expect("case 2 known", rt_kernel_occupancy(&h100, (int32_t[]){1320, 1, 1}, (int32_t[]){128, 1, 1}, 128, 49152, &b, &w, &o));
  expect("case 2 blocks per SM", b == 10.0 && w == 40.0);
  expect("case 2 occupancy", fabs(o - 25.0) < 1e-9);
  /* 2D grid 33x8 of 32x32 threads, 16 registers: 32 warps a block, 2
   * blocks an SM; limits: threads 64/32 = 2: 2*32/64 = 100% */
  expect("case 3 known", rt_kernel_occupancy(&h100, (int32_t[]){33, 8, 1}, (int32_t[]){32, 32, 1}, 16, 0, &b, &w, &o));
  expect("case 3 figures", b == 2.0 && w == 64.0 && fabs(o - 100.0) < 1e-9);
  /* an unknown device or an empty block gives no figures */
  expect("no device", !rt_kernel_occupancy(NULL, (int32_t[]){1, 1, 1}, (int32_t[]){1, 1, 1}, 0, 0, &b, &w, &o));
  expect("empty block", !rt_kernel_occupancy(&h100, (int32_t[]){1, 1, 1}, (int32_t[]){0, 1, 1}, 0, 0, &b, &w, &o));
  /* with no CUDA driver in this process, no devices (nothing is loaded) */
  const RtDevice *d;
  expect("no driver, no devices", rt_devices(&d) == 0);
  if (!fails) puts("ok");
  return fails ? 1 : 0;
}
