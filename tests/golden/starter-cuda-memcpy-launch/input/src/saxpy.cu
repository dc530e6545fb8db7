#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int run(int n, const float *hx, float *hy) {
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMemcpy(x, hx, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemsetAsync(y, 0, n * sizeof(float), 0);
  saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
  float a = 1.0f;
  void *args[] = {&n, &a, &x, &y};
  cudaLaunchKernel((const void *)saxpy, dim3((n + 255) / 256), dim3(256), args, 0, 0);
  cudaError_t err = cudaMemcpy(hy, y, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(x);
  cudaFree(y);
  return err == cudaSuccess ? 0 : 1;
}
