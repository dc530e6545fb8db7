// C++: the feature-test macros of the C library work the same way.
// (__STDC_FORMAT_MACROS: PRId64 in C++98 with an older C library.)
#define __STDC_FORMAT_MACROS 1
#define _FILE_OFFSET_BITS 64
#include <cinttypes>

namespace stats {

class Counter {
 public:
  void add(std::int64_t v) { total_ += v; }
  std::intmax_t get() const { return total_; }

 private:
  std::int64_t total_ = 0;
};

}  // namespace stats
