// gpu_crash: GPU work that must outlive its process. Three steps of the
// work in gpu.cu (9 kernels, 6 of them in "step.compute", 3 in
// "nested.inner"; copies; memsets), all synchronised; then "late.open" is
// opened, "pid N" printed, and the program waits on stdin for the test to
// SIGKILL it.
#include <ncrt.h>
#include <cstdio>
#include <cuda_runtime.h>
#include <unistd.h>

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
  nvtxRangePushA("late.open");
  std::printf("pid %d\n", (int)getpid());
  std::fflush(stdout);
  char line[16];
  if (!std::fgets(line, sizeof line, stdin)) return 0;
  return 1;
}
