// Driver for the starter CUDA rules' golden output (starter-cuda-memcpy-launch):
// runs run() from the instrumented saxpy.cu and prints what it computed.
#include <cstdio>
#include <vector>

int run(int n, const float *hx, float *hy);

int main() {
  const int n = 1 << 20;
  std::vector<float> x(n, 1.0f), y(n, -1.0f);
  int rc = run(n, x.data(), y.data());
  // y = 0 (memset), then 2*x + y, then 1*x + y: 3 everywhere
  std::printf("rc=%d y[0]=%g y[n-1]=%g\n", rc, y[0], y[n - 1]);
  return rc;
}
