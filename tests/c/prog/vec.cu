// A CUDA program; its host code is instrumented, its kernel is not. Without
// a GPU it takes the error path, the same way before and after.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void add(const float *a, float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] += a[i];
}

static int run(int n) {
  float *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, n * sizeof(float)) != cudaSuccess) {
    std::printf("no device: %s\n", "cudaMalloc failed");
    return 2;
  }
  cudaMalloc(&b, n * sizeof(float));
  cudaMemset(a, 0, n * sizeof(float));
  cudaMemset(b, 0, n * sizeof(float));
  add<<<(n + 127) / 128, 128>>>(a, b, n);
  float host = -1;
  cudaMemcpy(&host, b, sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(a);
  cudaFree(b);
  std::printf("b[0] = %.1f\n", host);
  return 0;
}

int main() { return run(1000); }
