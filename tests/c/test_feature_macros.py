#!/usr/bin/env python3
"""Run test: what ncrewrite inserts never changes what a file's own headers
declare, and functions declared through macros are found (issue 17).

1. Feature-test macros. Each program sets one before its first system
   header -- in the file, or in a local prefix header included first -- and
   uses what only that macro declares. The instrumented copy must build
   with implicit declarations as errors (`-Werror=implicit-function-
   declaration`, -Wall -Wextra -Werror, each with the dialect its project
   uses: Lua's -std=c99 with _XOPEN_SOURCE 600) and run the same: with
   <ncrt.h> on line 1, before the macro, strcasestr() became an implicit
   int function whose pointer was cut to 32 bits (a segfault), and struct
   sigaction was incomplete. Programs that set _FILE_OFFSET_BITS also check
   that glibc saw it (`__USE_FILE_OFFSET64`), in C and C++; CUDA code
   builds and runs the same (nvcc reads the system headers before a .cu
   file's first line anyway).
2. Declaration macros. A program whose functions are declared through
   LUA_API, `l_sinline` (static inline), PNGAPI between the type and the
   name, the declarator macro PNG_FUNCTION and the statement macro
   PNG_UNUSED (defined in local headers) runs the same instrumented, and
   each of those functions records its range (test-only NVTX counter).

    test_feature_macros.py NCREWRITE
"""
import os
import shutil
import sys
import tempfile

from nccheck import INC, Failed, counter_lib, full_trace, run_pair, sh

STRICT = ["-Wall", "-Wextra", "-Werror", "-Werror=implicit-function-declaration"]

GLIBC_OFFSET_CHECK = """
#if defined(__GLIBC__) && !defined(__USE_FILE_OFFSET64)
#error "the C library did not see _FILE_OFFSET_BITS 64"
#endif
"""

# name -> (files, compiler command, expected function names with a range)
PROGRAMS = {
    "gnu": ({
        "strcase.c": """#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

static const char *find(const char *hay, const char *needle) {
  return strcasestr(hay, needle);
}

int main(void) {
  const char *p = find("Hello World", "WORLD");
  printf("%s\\n", p ? p : "(null)");
  return p ? 0 : 1;
}
"""}, ["gcc", "-std=gnu11"], ["find", "main"]),
    "lua-xopen": ({
        "lprefix.h": """#ifndef lprefix_h
#define lprefix_h
#if !defined(LUA_USE_C89)
#if !defined(_XOPEN_SOURCE)
#define _XOPEN_SOURCE           600
#elif _XOPEN_SOURCE == 0
#undef _XOPEN_SOURCE
#endif
#if !defined(LUA_32BITS) && !defined(_FILE_OFFSET_BITS)
#define _LARGEFILE_SOURCE       1
#define _FILE_OFFSET_BITS       64
#endif
#endif
#endif
""",
        "loslib.c": """#define loslib_c
#define LUA_LIB

#include "lprefix.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
""" + GLIBC_OFFSET_CHECK + """
static volatile sig_atomic_t hits;

static void onsignal(int sig) { hits += sig == SIGUSR1; }

static int trap(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = onsignal;
  sigemptyset(&sa.sa_mask);
  return sigaction(SIGUSR1, &sa, NULL);
}

static int run(const char *cmd) {
  char buf[64] = {0};
  FILE *f = popen(cmd, "r");
  if (f == NULL || !fgets(buf, sizeof buf, f)) return -1;
  printf("popen: %s", buf);
  return pclose(f);
}

int main(void) {
  if (trap() || raise(SIGUSR1)) return 1;
  printf("signals: %d\\n", (int)hits);
  return run("echo hi") ? 2 : 0;
}
"""}, ["gcc", "-std=c99"], ["onsignal", "trap", "run", "main"]),
    "posix": ({
        "posix.c": """/* the macro, and an #undef of it, in the file */
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long lines(FILE *f) {
  char *line = NULL;
  size_t cap = 0;
  long n = 0;
  while (getline(&line, &cap, f) > 0) n++;
  free(line);
  return n;
}

int main(void) {
  char *s = strdup("a\\nb\\nc\\n");
  FILE *f = fmemopen(s, strlen(s), "r");
  long n = f ? lines(f) : -1;
  printf("%ld lines\\n", n);
  if (f) fclose(f);
  free(s);
  return n == 3 ? 0 : 1;
}
"""}, ["gcc", "-std=c99"], ["lines", "main"]),
    "autoconf": ({
        "config.h": "#define _FILE_OFFSET_BITS 64\n#define HAVE_UNISTD_H 1\n",
        "seek.c": """#include <config.h>
#include <stdio.h>
#include <sys/types.h>
""" + GLIBC_OFFSET_CHECK + """
static int off_bits(void) { return (int)(8 * sizeof(off_t)); }

int main(void) {
  printf("off_t: %d bits\\n", off_bits());
  return 0;
}
"""}, ["gcc", "-std=c11", "-I."], ["off_bits", "main"]),
    "cpp": ({
        "prefix.hpp": "#pragma once\n#define _FILE_OFFSET_BITS 64\n",
        "size.cpp": """#include "prefix.hpp"
#include <cstdio>
#include <sys/types.h>
""" + GLIBC_OFFSET_CHECK + """
namespace io {
struct File {
  int bits() const { return static_cast<int>(8 * sizeof(off_t)); }
};
}  // namespace io

int main() {
  io::File f;
  std::printf("off_t: %d bits\\n", f.bits());
  return 0;
}
"""}, ["g++", "-std=c++11"], ["io::File::bits", "main"]),
    "cuda": ({
        "features.cuh": "#ifndef FEATURES_CUH\n#define FEATURES_CUH\n#define _FILE_OFFSET_BITS 64\n#endif\n",
        "io.cu": """#include "features.cuh"
#include <cstdio>
#include <sys/types.h>
#include <cuda_runtime.h>
/* (no check of the C library here: nvcc reads cuda_runtime.h, and the
 * system headers through it, before the first line of a .cu file) */
__global__ void touch(int *x) { *x = 1; }

static int bits() { return static_cast<int>(8 * sizeof(off_t)); }

int main() {
  std::printf("off_t: %d bits\\n", bits());
  return 0;
}
"""}, ["nvcc", "-std=c++17"], ["bits", "main"]),
    "decl-macros": ({
        "luaconf.h": """#ifndef luaconf_h
#define luaconf_h
#if defined(LUA_BUILD_AS_DLL)
#define LUA_API __declspec(dllexport)
#else
#define LUA_API extern
#endif
#define LUALIB_API LUA_API
#if defined(__GNUC__)
#define l_inline __inline__
#else
#define l_inline
#endif
#define l_sinline static l_inline
#endif
""",
        "pngconf.h": """#ifndef PNGCONF_H
#define PNGCONF_H
#define PNGCAPI
#define PNGAPI PNGCAPI
#define PNG_USED __attribute__((__used__))
#define PNG_FUNCTION(type, name, args, attributes) attributes type name args
#define PNG_UNUSED(param) (void)param;
#endif
""",
        "api.c": """#include "luaconf.h"
#include "pngconf.h"
#include <stdio.h>

LUA_API int lua_gettop(int *top) { return *top; }

LUALIB_API int luaL_len(int *top) { return lua_gettop(top) + 1; }

l_sinline int clip(int v) { return v < 0 ? 0 : v; }

unsigned int PNGAPI
png_access_version_number(void)
{
   return 10639;
}

PNG_FUNCTION(int,PNGAPI
png_warn,(const char *message),PNG_USED)
{
   printf("warning: %s\\n", message);
   return 3;
}

static int check(int v, int unused)
{
   PNG_UNUSED(unused)
   if (v > 100) return png_warn("too big");
   return v;
}

int main(void) {
  int top = 4;
  printf("%d %d %d %u\\n", luaL_len(&top), clip(-2), check(7, 0), png_access_version_number());
  return check(101, 0);
}
"""}, ["gcc", "-std=gnu11"], ["lua_gettop", "luaL_len", "clip", "png_access_version_number", "png_warn",
                               "check", "main"]),
}


def main():
    ncrewrite = sys.argv[1]
    failures, skipped = [], []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            lib = counter_lib(tmp)
        except Failed as e:
            print("FAILED: %s" % e)
            return 1
        for name, (files, cc, ranged) in PROGRAMS.items():
            if not shutil.which(cc[0]):
                skipped.append("%s (no %s)" % (name, cc[0]))
                continue
            src, out = os.path.join(tmp, name, "src"), os.path.join(tmp, name, "out")
            os.makedirs(src)
            for rel, text in files.items():
                with open(os.path.join(src, rel), "w") as f:
                    f.write(text)
            main_file = [rel for rel in files if rel.rsplit(".", 1)[1] in ("c", "cpp", "cu")][0]
            flags = STRICT if cc[0] == "gcc" else [f for f in STRICT if "implicit-function" not in f]
            if cc[0] == "nvcc":
                flags = ["-Xcompiler", ",".join(flags)]
            try:
                full_trace(ncrewrite, src, out)
                text = open(os.path.join(out, main_file)).read()
                if "NCRT_RANGE(" not in text:
                    raise Failed("nothing instrumented in %s:\n%s" % (main_file, text))
                exes = []
                for tag, d in (("orig", src), ("inst", out)):
                    exe = os.path.join(tmp, name, tag)
                    r = sh(cc + flags + INC + [main_file, "-o", exe], cwd=d)
                    if r.returncode:
                        raise Failed("%s (%s) does not build with %s:\n%s" %
                                     (main_file, tag, " ".join(cc + flags), r.stderr[-3000:]))
                    exes.append(exe)
                _, counts = run_pair(exes[0], exes[1], lib, os.path.join(tmp, name, "counts.log"),
                                     what="%s instrumented" % name)
                missing = [f for f in ranged if not counts.get(f)]
                if missing:
                    raise Failed("no range recorded for %s (recorded: %s)" % (", ".join(missing), counts))
            except Failed as e:
                failures.append("%s: %s" % (name, e))
                continue
            print("ok: %s (%s): builds with %s, runs the same, ranges %s" %
                  (name, main_file, " ".join(cc), ", ".join(ranged)))
    if skipped:
        print("skipped:", ", ".join(skipped))
    if failures:
        print("\n".join(failures))
        print("FAILED")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
