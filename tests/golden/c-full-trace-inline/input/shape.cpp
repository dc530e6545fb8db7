// C++: the same rule; a member function with a call is kept even when inline
#include <cstdio>

namespace geo {
struct Box {
  int w, h;
  int area() const { return w * h; }          // straight-line: left out
  inline int half() const { return area() / 2; }  // a call: kept
  void print() const {                        // calls: kept
    int a = area();
    int p = 2 * (w + h);
    if (a > p) std::printf("fat %d\n", a);
    else std::printf("thin %d\n", p);
  }
};
}  // namespace geo

int run(const geo::Box &b) {  // kept
  b.print();
  return b.half();
}
