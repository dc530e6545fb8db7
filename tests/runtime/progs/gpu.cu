// GPU work inside ranges: kernels launched in "step.compute" (and one in
// "nested.inner"), copies in "step.copy", a memset in "step.clear". Each range
// synchronises before it ends, so the GPU work lies inside it in time.
#include <ncrt.h>
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(float *x, int n, float k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= k;
}

int main() {
  const int n = 1 << 20;
  float *h = nullptr, *d = nullptr;
  if (cudaMallocHost(&h, n * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "no usable CUDA device\n");
    return 2;
  }
  for (int i = 0; i < n; i++) h[i] = 1.0f;
  cudaMalloc(&d, n * sizeof(float));
  for (int s = 0; s < 3; s++) {
    {
      NCRT_RANGE("step.copy");
      cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
    }
    {
      NCRT_RANGE("step.compute");
      scale<<<(n + 255) / 256, 256>>>(d, n, 2.0f);
      scale<<<(n + 255) / 256, 256>>>(d, n, 0.5f);
      {
        NCRT_RANGE("nested.inner");
        scale<<<(n + 255) / 256, 256>>>(d, n, 1.0f);
      }
      cudaDeviceSynchronize();
    }
    {
      NCRT_RANGE("step.clear");
      cudaMemset(d, 0, n * sizeof(float));
      cudaDeviceSynchronize();
    }
  }
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  std::printf("h[0]=%g\n", h[0]);
  cudaFree(d);
  cudaFreeHost(h);
  return 0;
}
