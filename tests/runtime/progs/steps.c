/* argv[1] steps, each a "train_step" range holding a range named
 * "iter <i>"; with argv[2] = "explicit" the steps are ncrt_step() calls
 * instead. A "capture" range surrounds steps 3 and 4, for the gating test. */
#include <ncrt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10;
  int explicit_steps = argc > 2 && !strcmp(argv[2], "explicit");
  for (int i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof name, "iter %d", i);
    if (i == 3) nvtxRangePushA("capture");
    if (explicit_steps) {
      if (i > 0) ncrt_step();
      nvtxRangePushA(name);
      nvtxRangePop();
    } else {
      nvtxRangePushA("train_step");
      nvtxRangePushA(name);
      nvtxRangePop();
      nvtxRangePop();
    }
    if (i == 4) nvtxRangePop();
  }
  puts("done");
  return 0;
}
