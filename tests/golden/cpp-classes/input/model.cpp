#include <stdexcept>
#include <vector>

namespace nn {

class Linear {
 public:
  explicit Linear(int n) : w_(n, 1.0f) {}
  Linear(const Linear &) = default;
  constexpr static int kAlign = 16;
  constexpr int align() const { return kAlign; }

  float forward(const std::vector<float> &x) const {
    if (x.size() != w_.size()) throw std::invalid_argument("size");
    float s = 0;
    for (size_t i = 0; i < x.size(); ++i) s += x[i] * w_[i];
    return s;
  }

  void reset();

 private:
  std::vector<float> w_;
};

void Linear::reset() {
  for (auto &v : w_) v = 0;
}

template <typename T>
T twice(T v) {
  return v + v;
}

}  // namespace nn

#define DEFINE_GETTER(name) int get_##name() { return 0; }
DEFINE_GETTER(x)

extern "C" int c_entry(int a) {
  try {
    nn::Linear l(a);
    return (int)l.forward({1, 2});
  } catch (const std::exception &) {
    return -1;
  }
}
