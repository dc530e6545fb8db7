/* util: small helpers used by every stage of the rewriter (file reading,
 * hashing, globbing) on top of ncbase.h (allocation, VEC, Buf, BUG). */
#ifndef NC_UTIL_H
#define NC_UTIL_H

#include "ncbase.h"

/* Whole-file read; returns 0 or -1 with errno set. *out is malloc'ed and
 * NUL-terminated (the NUL is not counted in *len). */
int read_file(const char *path, char **out, size_t *len);

/* 64-bit content hash (FNV-1a over 8-byte words; fast, not cryptographic). */
uint64_t hash64(const void *p, size_t n, uint64_t seed);

/* The Python module a relative path names: "pkg/mod.py" -> "pkg.mod",
 * "pkg/__init__.py" -> "pkg" (malloc'ed). */
char *module_of_path(const char *rel);
/* fnmatch-style glob ('*', '?', '[...]'), where '*' also matches '/' and '.'. */
bool glob_match(const char *pat, const char *s);
bool has_glob_chars(const char *s);

#endif
