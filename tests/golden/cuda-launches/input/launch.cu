// Kernel launches with all four launch parameters, templates and
// namespaces; host, device and host-device functions; a call inside an
// error-checking macro.
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(call)                                                 \
  do {                                                              \
    cudaError_t e_ = (call);                                        \
    if (e_ != cudaSuccess) std::printf("%s\n", cudaGetErrorString(e_)); \
  } while (0)

template <typename T>
__global__ void fill(T *x, T v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}

namespace ops {
__global__ void twice(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2;
}
}  // namespace ops

__host__ __device__ inline float clampf(float v) { return v < 0 ? 0 : v; }

__host__ int blocks(int n) { return (n + 255) / 256; }

int run(float *d, int n, cudaStream_t st) {
  fill<float><<<blocks(n), 256, 0, st>>>(d, 1.0f, n);
  if (n > 1024)
    ops::twice<<<blocks(n), 256, 0, st>>>(d, n);
  CHECK(cudaMemsetAsync(d, 0, n * sizeof(float), st));
  CHECK(cudaStreamSynchronize(st));
  if (cudaStreamQuery(st) != cudaSuccess)
    return -1;
  cudaError_t err = cudaGetLastError(), again = cudaPeekAtLastError();
  if (err != cudaSuccess || again != cudaSuccess)
    return -2;
  return (int)clampf((float)n);
}
