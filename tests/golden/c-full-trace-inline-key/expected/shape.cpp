#include <ncrt.h>
#line 1 "input/shape.cpp"
// C++: inline and small functions are left out the same way
#include <cstdio>

namespace geo {
struct Box {
  int w, h;
  int area() const { return w * h; }          // a small leaf: left out
  inline int half() const { return area() / 2; }  // declared inline: left out
  void print() const { NCRT_RANGE("geo::Box::print");                        // calls and 5 statements: kept
    int a = area();
    int p = 2 * (w + h);
    if (a > p) std::printf("fat %d\n", a);
    else std::printf("thin %d\n", p);
  }
};
}  // namespace geo

int run(const geo::Box &b) { NCRT_RANGE("run");  // kept
  b.print();
  return b.half();
}
