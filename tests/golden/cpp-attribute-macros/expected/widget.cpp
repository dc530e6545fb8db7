#include <ncrt.h>
#line 1 "input/widget.cpp"
// Export decorations before the type, on a class, and after the
// parameters (noexcept, override) through macros from a local header.
#include "export.hpp"
#include <string>

namespace mylib {

struct Base {
  virtual ~Base() = default;
  virtual int kind() const { NCRT_RANGE("mylib::Base::kind"); return 0; }
};

class MYLIB_API Widget : public Base {
 public:
  explicit Widget(int n) : n_(n) { NCRT_RANGE("mylib::Widget::Widget");}
  int size() const MYLIB_NOEXCEPT;
  int kind() const MYLIB_OVERRIDE { NCRT_RANGE("mylib::Widget::kind"); return 1; }

 private:
  int n_;
};

MYLIB_API int Widget::size() const MYLIB_NOEXCEPT { NCRT_RANGE("mylib::Widget::size"); return n_; }

MYLIB_API std::string greet(const std::string &who) { NCRT_RANGE("mylib::greet");
  return "hello " + who;
}

}  // namespace mylib
