#include <ncrt.h>
#line 1 "input/kern.cu"
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

__host__ __device__ inline float sq(float v) { return v * v; }

static __device__ float dev_only(float v) { return v + 1; }

int run(int n) { NCRT_RANGE("run");
  float *d = nullptr;
  if (cudaMalloc(&d, n * sizeof(float)) != cudaSuccess) {
    std::printf("no device\n");
    return 1;
  }
  { NCRT_RANGE("run:cudaMem*"); cudaMemset(d, 0, n * sizeof(float)); }
  { NCRT_RANGE("scale launch"); { NCRT_RANGE("launch"); scale<<<(n + 255) / 256, 256>>>(d, 2.0f, n); } }
  cudaDeviceSynchronize();
  cudaFree(d);
  return 0;
}

int main() { NCRT_RANGE("main"); return run(1024); }
