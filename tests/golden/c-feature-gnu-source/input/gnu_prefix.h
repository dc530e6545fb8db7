/* A local prefix header: included first, it sets the feature-test macros. */
#ifndef GNU_PREFIX_H
#define GNU_PREFIX_H
#define _GNU_SOURCE
#endif
