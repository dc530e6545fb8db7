// A macro that may mean __device__ keeps its function out (NVTX is
// host-only), even when its definition is in a header; one that only says
// __host__, or extern "C", does not.
#include "defs.cuh"
#include <cuda_runtime.h>

HD float square(float x) { return x * x; }

HOST_ONLY float cube(float x) { return x * x * x; }

__global__ void apply(float *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = square(v[i]);
}

API int run(float *d, int n) {
  apply<<<(n + 127) / 128, 128>>>(d, n);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
