#include <ncrt.h>
#line 1 "input/decl.cpp"
// C++ names a block would hide: structured bindings, using-directives,
// alias declarations, local classes.
#include <utility>
namespace ns { inline int f(int v) { return v + 1; } }

int k(std::pair<int, int> p) {
  auto [a, b] = p;
  using namespace ns;
  int z = 0;
  { NCRT_RANGE("k:L10-11"); z += a + b;
  return f(z); }
}

int m(int x) {
  using T = long;
  struct Acc { long v; };
  { NCRT_RANGE("m:L17-19"); T y = x;
  Acc acc{y};
  return (int)acc.v; }
}
