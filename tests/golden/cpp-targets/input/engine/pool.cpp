// Two targets name this file, each with its own NVTX domain and color;
// Class::* globs, operators, destructors, templates; lambdas stay as they
// are. --strict turns the rule that matches nothing into an error.
#include <algorithm>
#include <vector>

namespace engine {

class Pool {
 public:
  explicit Pool(int n) : v_(n) {}
  ~Pool() { v_.clear(); }
  int &operator[](int i) { return v_[i]; }
  template <typename F>
  void each(F f) {
    std::for_each(v_.begin(), v_.end(), [&](int &x) { f(x); });
  }
  int size() const;

 private:
  std::vector<int> v_;
};

int Pool::size() const { return (int)v_.size(); }

}  // namespace engine

int total(engine::Pool &p) {
  int s = 0;
  p.each([&](int &x) { s += x; });
  return s + p.size();
}
