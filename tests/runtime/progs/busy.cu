// Another CUPTI subscriber in the process (as nsys, ncu or torch.profiler
// would be): the program subscribes before its first CUDA call. CUPTI 13
// allows one subscriber, so exactly one of it and libncrt gets CUPTI; the
// program runs the same either way and prints which one it was.
#include <ncrt.h>
#include <cstdio>
#include <cupti.h>
#include <dlfcn.h>
#include <cuda_runtime.h>

__global__ void k(int *x) { x[threadIdx.x] += 1; }

static void CUPTIAPI cb(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *) {}

int main() {
  const char *lib = getenv("NCRT_CUPTI_LIB");
  void *h = dlopen(lib ? lib : "libcupti.so.13", RTLD_NOW);
  int mine = 0;
  if (h) {
    auto sub = (CUptiResult(*)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *))dlsym(h, "cuptiSubscribe");
    CUpti_SubscriberHandle s;
    mine = sub && sub(&s, (CUpti_CallbackFunc)cb, nullptr) == CUPTI_SUCCESS;
  }
  int *d = nullptr;
  {
    NCRT_RANGE("busy.work");
    cudaMalloc(&d, 256 * sizeof(int));
    k<<<1, 256>>>(d);
    cudaDeviceSynchronize();
  }
  cudaFree(d);
  std::printf("app subscriber: %s\n", mine ? "yes" : "no");
  return 0;
}
