// Export decorations before the type, on a class, and after the
// parameters (noexcept, override) through macros from a local header.
#include "export.hpp"
#include <string>

namespace mylib {

struct Base {
  virtual ~Base() = default;
  virtual int kind() const { return 0; }
};

class MYLIB_API Widget : public Base {
 public:
  explicit Widget(int n) : n_(n) {}
  int size() const MYLIB_NOEXCEPT;
  int kind() const MYLIB_OVERRIDE { return 1; }

 private:
  int n_;
};

MYLIB_API int Widget::size() const MYLIB_NOEXCEPT { return n_; }

MYLIB_API std::string greet(const std::string &who) {
  return "hello " + who;
}

}  // namespace mylib
