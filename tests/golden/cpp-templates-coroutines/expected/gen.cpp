#include <ncrt.h>
#line 1 "input/gen.cpp"
// Rules name templates without their arguments (`scale` matches the
// specialization scale<int>); coroutines are never instrumented.
#include <vector>

template <typename T>
T scale(T v) { NCRT_RANGE("scale");
  return v * 2;
}

template <>
int scale<int>(int v) { NCRT_RANGE("scale<int>");
  return v * 3;
}

template <typename T>
struct Box {
  T v;
  T get() const;
};

template <typename T>
T Box<T>::get() const { NCRT_RANGE("Box<T>::get");
  return v;
}

#if __cplusplus >= 202002L && __has_include(<coroutine>)
#include <coroutine>
struct Task {
  struct promise_type {
    Task get_return_object() { return {}; }
    std::suspend_never initial_suspend() { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() {}
  };
};

Task worker() {
  co_return;
}

consteval int answer() { return 42; }
#endif

int main() {
  Box<int> b{scale(2)};
  return b.get() - scale(2);
}
