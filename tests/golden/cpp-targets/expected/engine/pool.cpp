#include <ncrt.h>
#line 1 "input/engine/pool.cpp"
// Two targets name this file, each with its own NVTX domain and color;
// Class::* globs, operators, destructors, templates; lambdas stay as they
// are. --strict turns the rule that matches nothing into an error.
#include <algorithm>
#include <vector>

namespace engine {

class Pool {
 public:
  explicit Pool(int n) : v_(n) { NCRT_RANGE_EX("engine", "engine::Pool::Pool", 1, 0xffff8800u);}
  ~Pool() { NCRT_RANGE_EX("engine", "engine::Pool::~Pool", 1, 0xffff8800u); v_.clear(); }
  int &operator[](int i) { NCRT_RANGE_EX("engine", "engine::Pool::operator[]", 1, 0xffff8800u); return v_[i]; }
  template <typename F>
  void each(F f) { NCRT_RANGE_EX("engine", "engine::Pool::each", 1, 0xffff8800u);
    std::for_each(v_.begin(), v_.end(), [&](int &x) { f(x); });
  }
  int size() const;

 private:
  std::vector<int> v_;
};

int Pool::size() const { NCRT_RANGE_EX("engine", "engine::Pool::size", 1, 0xffff8800u); return (int)v_.size(); }

}  // namespace engine

int total(engine::Pool &p) { NCRT_RANGE_EX("engine", "total", 1, 0xffff8800u);
  int s = 0;
  { NCRT_RANGE_EX("app", "total:p.each", 0, 0x00000000u); p.each([&](int &x) { s += x; }); }
  return s + p.size();
}
