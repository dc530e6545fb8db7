// gpu_crash: GPU work that must outlive its process. Three steps of the
// work in gpu.cu (9 kernels, 6 of them in "step.compute", 3 in
// "nested.inner"; copies; memsets), all synchronised; then "late.open" is
// opened, "pid N" printed, and the program waits on stdin for the test to
// SIGKILL it.
//   gpu_crash incremental: 100000 "warm" ranges and the three steps, then it
//   waits until the flusher has converted part of its trace into
//   $NCRT_OUTPUT_DIR/.ncrt-PID.body, runs the three steps again and exits 0
//   (GPU attribution over a trace converted while the program ran).
#include <ncrt.h>
#include <glob.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <sys/stat.h>
#include <unistd.h>

__global__ void scale(float *x, int n, float k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= k;
}

static void steps(float *d, float *h, int n) {
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
}

/* the size of this process's .body (.ncrt-h<HOSTID>-<PID>.body, rundir.h), -1 before it exists */
static long body_size(const char *dir) {
  char pat[1200];
  snprintf(pat, sizeof pat, "%s/.ncrt-h*-%d.body", dir ? dir : ".", (int)getpid());
  glob_t g;
  long n = -1;
  if (glob(pat, 0, NULL, &g) == 0) {
    struct stat st;
    if (stat(g.gl_pathv[0], &st) == 0) n = (long)st.st_size;
    globfree(&g);
  }
  return n;
}

int main(int argc, char **argv) {
  const int n = 1 << 20;
  float *h = nullptr, *d = nullptr;
  if (cudaMallocHost(&h, n * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "no usable CUDA device\n");
    return 2;
  }
  for (int i = 0; i < n; i++) h[i] = 1.0f;
  cudaMalloc(&d, n * sizeof(float));
  if (argc > 1 && !std::strcmp(argv[1], "incremental")) {
    for (int i = 0; i < 100000; i++) {
      NCRT_RANGE("warm");
    }
    steps(d, h, n);
    const char *dir = std::getenv("NCRT_OUTPUT_DIR");
    while (body_size(dir) < 4096) usleep(10000);
    steps(d, h, n);
    std::printf("h[0]=%g\n", h[0]);
    return 0;
  }
  steps(d, h, n);
  nvtxRangePushA("late.open");
  std::printf("pid %d\n", (int)getpid());
  std::fflush(stdout);
  char line[16];
  if (!std::fgets(line, sizeof line, stdin)) return 0;
  return 1;
}
