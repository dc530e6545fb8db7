#include <ncrt.h>
#line 1 "input/launch.cu"
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

__host__ int blocks(int n) { NCRT_RANGE_EX("kernels", "blocks", 0, 0xff00aa00u); return (n + 255) / 256; }

int run(float *d, int n, cudaStream_t st) { NCRT_RANGE_EX("kernels", "run", 0, 0xff00aa00u);
  { NCRT_RANGE_EX("kernels", "launches", 0, 0xff00aa00u); { NCRT_RANGE_EX("kernels", "run:fill<<<>>>", 0, 0xff00aa00u); fill<float><<<blocks(n), 256, 0, st>>>(d, 1.0f, n); }
  if (n > 1024)
    { NCRT_RANGE_EX("kernels", "twice launch", 0, 0xff00aa00u); ops::twice<<<blocks(n), 256, 0, st>>>(d, n); } }
  { NCRT_RANGE_EX("kernels", "run:cudaMemsetAsync", 0, 0xff00aa00u); CHECK(cudaMemsetAsync(d, 0, n * sizeof(float), st)); }
  { NCRT_RANGE_EX("kernels", "run:cudaStream*", 0, 0xff00aa00u); CHECK(cudaStreamSynchronize(st)); }
  { NCRT_RANGE_EX("kernels", "run:cudaStream*", 0, 0xff00aa00u); if (cudaStreamQuery(st) != cudaSuccess)
    return -1; }
  cudaError_t err = __extension__ ({ NCRT_RANGE_EX("kernels", "run:cuda*LastError", 0, 0xff00aa00u); cudaGetLastError(); }), again = __extension__ ({ NCRT_RANGE_EX("kernels", "run:cuda*LastError", 0, 0xff00aa00u); cudaPeekAtLastError(); });
  if (err != cudaSuccess || again != cudaSuccess)
    return -2;
  return (int)clampf((float)n);
}
