// CUDA host code: the prefix header comes first, then the toolkit's.
#include "features.cuh"
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(float *x, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}

long tell(std::FILE *f) { return static_cast<long>(ftello(f)); }

int launch(float *d, int n) {
  fill<<<(n + 255) / 256, 256>>>(d, 1.0f, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
