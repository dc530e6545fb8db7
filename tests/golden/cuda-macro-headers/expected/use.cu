#include <ncrt.h>
#line 1 "input/use.cu"
#include "tensor.h"

__global__ void touch(ts::Shape s, float *x) { x[0] = (float)s.size(); }

int main() { NCRT_RANGE("main");
  ts::Shape s{4};
  float v[1] = {2.0f};
  return (int)(ts::count(s) + ts::first(v) + s.bytes() + s.twice()) - 29;
}
