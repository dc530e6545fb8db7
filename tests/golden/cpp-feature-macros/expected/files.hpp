#pragma once
#include "prefix.hpp"
#include <ncrt.h>
#line 3 "input/files.hpp"
#include <cstdio>
#include <string>

inline long file_size(const std::string &path) { NCRT_RANGE("file_size");
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) return -1;
  fseeko(f, 0, SEEK_END);
  long n = static_cast<long>(ftello(f));
  std::fclose(f);
  return n;
}
