#include <ncrt.h>
#line 1 "input/src/saxpy.cu"
#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int run(int n, const float *hx, float *hy) {
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  { NCRT_RANGE_EX("cuda", "cudaMemcpy", 0, 0x00000000u); cudaMemcpy(x, hx, n * sizeof(float), cudaMemcpyHostToDevice); }
  { NCRT_RANGE_EX("cuda", "cudaMemset", 0, 0x00000000u); cudaMemsetAsync(y, 0, n * sizeof(float), 0); }
  { NCRT_RANGE_EX("cuda", "launch", 0, 0x00000000u); saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y); }
  float a = 1.0f;
  void *args[] = {&n, &a, &x, &y};
  { NCRT_RANGE_EX("cuda", "launch", 0, 0x00000000u); cudaLaunchKernel((const void *)saxpy, dim3((n + 255) / 256), dim3(256), args, 0, 0); }
  cudaError_t err = __extension__ ({ NCRT_RANGE_EX("cuda", "cudaMemcpy", 0, 0x00000000u); cudaMemcpy(hy, y, n * sizeof(float), cudaMemcpyDeviceToHost); });
  cudaFree(x);
  cudaFree(y);
  return err == cudaSuccess ? 0 : 1;
}
