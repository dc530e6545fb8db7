// The C++ NVTX API (nvtx3.hpp) uses only the nvtxDomain* entry points:
// scoped ranges in a named domain with registered strings, plus NCRT_RANGE.
#include <ncrt.h>
#include <nvtx3/nvtx3.hpp>
#include <cstdio>

struct my_domain { static constexpr char const *name{"app"}; };

static int work(int i) {
  nvtx3::scoped_range_in<my_domain> r{"work"};
  static nvtx3::registered_string_in<my_domain> reg{"registered"};
  nvtx3::scoped_range_in<my_domain> r2{reg};
  return i + 1;
}

int main() {
  NCRT_RANGE("main");
  int s = 0;
  for (int i = 0; i < 4; i++) s += work(i);
  nvtx3::mark("done");
  std::printf("%d\n", s);
  return 0;
}
