// The GPU stage of the pipeline: scale a vector on the device. Built only
// where nvcc and a GPU are present (loop.sh decides).
#include <cuda_runtime.h>

__global__ void scale(float *x, int n, float by) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= by;
}

extern "C" int gpu_scale(float *x, int n, float by) {
  float *d = nullptr;
  if (cudaMalloc(&d, n * sizeof *x) != cudaSuccess) return -1;
  cudaMemcpy(d, x, n * sizeof *x, cudaMemcpyHostToDevice);
  scale<<<(n + 255) / 256, 256>>>(d, n, by);
  cudaMemcpy(x, d, n * sizeof *x, cudaMemcpyDeviceToHost);
  cudaFree(d);
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
