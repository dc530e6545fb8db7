/* The project's prefix header; a plain header comes before it. */
#ifndef POSIX_PREFIX_H
#define POSIX_PREFIX_H
#include "version.h"
#define _POSIX_C_SOURCE 200112L
#endif
