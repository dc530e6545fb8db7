// C++ names a block would hide: structured bindings, using-directives,
// alias declarations, local classes.
#include <utility>
namespace ns { inline int f(int v) { return v + 1; } }

int k(std::pair<int, int> p) {
  auto [a, b] = p;
  using namespace ns;
  int z = 0;
  z += a + b;
  return f(z);
}

int &slot(int i);

int n(int i) {
  int &r = slot(i);
  r++;
  int v = slot(i + 1) * 2;
  return r + v;
}

int m(int x) {
  using T = long;
  struct Acc { long v; };
  T y = x;
  Acc acc{y};
  return (int)acc.v;
}
