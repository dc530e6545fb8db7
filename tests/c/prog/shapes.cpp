// A C++ program whose ranges must close when exceptions cross them.
#include <cstdio>
#include <stdexcept>
#include <string>

namespace geo {

struct Shape {
  virtual ~Shape() = default;
  virtual double area() const = 0;
};

struct Square : Shape {
  explicit Square(double s) : s_(s) {
    if (s < 0) throw std::invalid_argument("negative side");
  }
  double area() const override { return s_ * s_; }
  double s_;
};

double checked_area(double side) {
  Square sq(side);
  return sq.area();
}

}  // namespace geo

int main() {
  int failures = 0;
  double total = 0;
  for (double s : {1.0, -2.0, 3.0, -4.0}) {
    try {
      total += geo::checked_area(s);
    } catch (const std::invalid_argument &e) {
      failures++;
      std::printf("caught: %s\n", e.what());
    }
  }
  std::printf("total %.1f failures %d\n", total, failures);
  return failures;
}
