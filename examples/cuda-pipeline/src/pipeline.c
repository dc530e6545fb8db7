/* A small data pipeline: generate a signal, smooth it, find its peaks and
 * summarise. The CPU stages are plain C; with WITH_GPU the scaling stage
 * runs as a CUDA kernel (scale.cu). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 20)

int gpu_scale(float *x, int n, float by); /* scale.cu */

static void generate(float *x, int n) {
  for (int i = 0; i < n; i++)
    x[i] = sinf((float)i * 0.001f) + 0.1f * cosf((float)i * 0.37f);
}

static void smooth(const float *x, float *y, int n, int width) {
  for (int i = 0; i < n; i++) {
    float s = 0;
    int lo = i - width < 0 ? 0 : i - width, hi = i + width >= n ? n - 1 : i + width;
    for (int k = lo; k <= hi; k++)
      s += x[k];
    y[i] = s / (float)(hi - lo + 1);
  }
}

static int peaks(const float *y, int n) {
  int count = 0;
  for (int i = 1; i + 1 < n; i++)
    if (y[i] > y[i - 1] && y[i] >= y[i + 1]) count++;
  return count;
}

static void scale_cpu(float *x, int n, float by) {
  for (int i = 0; i < n; i++)
    x[i] *= by;
}

/* On the GPU where built with it (falling back to the CPU on failure). */
static void scale_stage(float *x, int n, float by) {
#ifdef WITH_GPU
  if (gpu_scale(x, n, by) == 0) return;
#endif
  scale_cpu(x, n, by);
}

static double run_pipeline(float *x, float *y) {
  generate(x, N);
  smooth(x, y, N, 24);
  int p = peaks(y, N);
  scale_stage(y, N, 2.0f);
  double sum = 0;
  for (int i = 0; i < N; i++)
    sum += y[i];
  return sum + p;
}

int main(void) {
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  if (!x || !y) return 1;
  double r = 0;
  for (int step = 0; step < 3; step++)
    r += run_pipeline(x, y);
  printf("%.3f\n", r);
  free(x);
  free(y);
  return 0;
}
