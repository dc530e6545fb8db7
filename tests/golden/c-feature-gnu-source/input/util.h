#ifndef UTIL_H
#define UTIL_H
#include <stddef.h>
size_t twice(size_t n);
#endif
