// A .h file with C++ in it is read as C++. Macros that tree-sitter cannot
// expand hide constexpr and __device__ from it; functions whose header
// uses one are skipped rather than broken.
#pragma once
#include <cstddef>

#ifdef __CUDACC__
#define TS_HOST_DEVICE __host__ __device__
#else
#define TS_HOST_DEVICE
#endif
#if __cplusplus >= 201402L
#define TS_CONSTEXPR14 constexpr
#else
#define TS_CONSTEXPR14
#endif
#define HD TS_HOST_DEVICE

namespace ts {

struct Shape {
  std::size_t n;
  TS_HOST_DEVICE std::size_t size() const { return n; }
  HD std::size_t bytes() const { return n * 4; }
  TS_CONSTEXPR14 std::size_t twice() const { return 2 * n; }
  std::size_t host_only() const { return n + 1; }
};

template <typename T>
  TS_CONSTEXPR14
#if __cplusplus >= 201703L
  auto
#else
  T
#endif
  first(const T *p) { return p[0]; }

inline std::size_t count(const Shape &s) { return s.host_only(); }

}  // namespace ts
