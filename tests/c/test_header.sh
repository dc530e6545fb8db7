#!/usr/bin/env bash
# ncrt.h is included by users' code under their own dialect and warning
# flags: it must compile without a warning (-Wall -Wextra -Wpedantic -Wshadow
# -Werror, in C also -Wdeclaration-after-statement; -O2, so that GCC's
# -Wclobbered looks at a range in a function that calls setjmp) in every C
# dialect from C89 and gnu89 to C23 and every C++ dialect from C++98 to
# C++23, with GCC and Clang, with and without NCRT_DISABLE; and with nvcc
# (-x cu, host warnings as errors) when it is installed. A dialect a
# compiler does not know is skipped, and the output says so.
#
# NVTX's own headers come in as system headers (-isystem), as in a user's
# build against the CUDA toolkit. With a plain -I they are read inside the
# pragmas ncrt.h puts around them; that is checked too, where the compiler
# honours those pragmas for the preprocessor's warnings (GCC before 13 does
# not in C++98 mode: NVTX's variadic macros).
#   test_header.sh INCLUDE_DIR NVTX_INCLUDE_DIR
set -u
inc=$1 nvtx=$2
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cat > "$T/use.c" <<'SRC'
#include "ncrt.h"
#include <setjmp.h>
static jmp_buf jb;
static int work(int n) {
  NCRT_RANGE("work");
  n += 1;
  {
    NCRT_RANGE_EX("dom", "inner", 2, 0xff3366ffu);
    n *= 2;
  }
  return n;
}
static int twice(int x) { return 2 * x; }
/* a range in a function that calls setjmp (-Wclobbered) */
int guarded(int (*f)(int), int x);
int guarded(int (*f)(int), int x) {
  NCRT_RANGE("guarded");
  int r;
  if (setjmp(jb) == 0) r = f(x);
  else r = -1;
  return r;
}
int main(void) {
  ncrt_source_location("work", __FILE__, __LINE__);
  ncrt_step();
  ncrt_start();
  ncrt_stop();
  return work(1) == 4 && guarded(twice, 2) == 4 ? 0 : 1;
}
SRC
cp "$T/use.c" "$T/use.cu"
: > "$T/empty.c"
fail=0 ran=0
try() { # try DESC compiler args... (the source last)
  local desc=$1; shift
  ran=$((ran + 1))
  if "$@" -c -o "$T/use.o" 2>"$T/err"; then
    echo "ok: $desc"
  else
    echo "FAIL: $desc"; cat "$T/err"; fail=1
  fi
}
# knows CC LANG STD...: the first of the dialects the compiler accepts
knows() {
  local cc=$1 lang=$2; shift 2
  for std; do
    if "$cc" -x "$lang" -std="$std" -fsyntax-only "$T/empty.c" 2>/dev/null; then echo "$std"; return 0; fi
  done
  return 1
}
strict=(-O2 -Wall -Wextra -Wpedantic -Wshadow -Werror)
for cc in gcc clang; do
  if ! command -v "$cc" >/dev/null; then echo "skipped: $cc (not installed)"; continue; fi
  for want in c89 gnu89 c99 gnu99 c11 gnu11 c17 gnu17 "c23 c2x" "gnu23 gnu2x"; do
    # shellcheck disable=SC2086
    if ! std=$(knows "$cc" c $want); then echo "skipped: $cc -std=${want%% *} (not known to $cc)"; continue; fi
    for d in "" -DNCRT_DISABLE; do
      try "$cc -std=$std $d" "$cc" -x c -std="$std" $d "${strict[@]}" -Wdeclaration-after-statement \
        -I"$inc" -isystem "$nvtx" "$T/use.c"
    done
  done
  for std in c89 c99 c11 c17; do
    knows "$cc" c "$std" >/dev/null &&
      try "$cc -std=$std, NVTX with -I" "$cc" -x c -std="$std" "${strict[@]}" -I"$inc" -I"$nvtx" "$T/use.c"
  done
done
for cxx in g++ clang++; do
  if ! command -v "$cxx" >/dev/null; then echo "skipped: $cxx (not installed)"; continue; fi
  for want in c++98 gnu++98 c++03 c++11 c++14 c++17 c++20 "c++23 c++2b" "gnu++23 gnu++2b"; do
    # shellcheck disable=SC2086
    if ! std=$(knows "$cxx" c++ $want); then echo "skipped: $cxx -std=${want%% *} (not known to $cxx)"; continue; fi
    for d in "" -DNCRT_DISABLE; do
      try "$cxx -std=$std $d" "$cxx" -x c++ -std="$std" $d "${strict[@]}" -I"$inc" -isystem "$nvtx" "$T/use.c"
    done
  done
  for std in c++11 c++17 c++20; do
    knows "$cxx" c++ "$std" >/dev/null &&
      try "$cxx -std=$std, NVTX with -I" "$cxx" -x c++ -std="$std" "${strict[@]}" -I"$inc" -I"$nvtx" "$T/use.c"
  done
done
if command -v nvcc >/dev/null; then
  # nvcc's generated host code uses GNU line markers, which -Wpedantic
  # rejects: host warnings as errors without it
  for std in c++11 c++14 c++17 c++20; do
    if ! nvcc -std="$std" -x cu -E -o /dev/null "$T/empty.c" 2>/dev/null; then
      echo "skipped: nvcc -std=$std (not known to nvcc)"; continue
    fi
    try "nvcc -std=$std" nvcc -x cu -std="$std" -Werror all-warnings -Xcompiler -Wall,-Wextra,-Wshadow,-Werror \
      -I"$inc" "$T/use.cu"
  done
  try "nvcc -std=c++17 -DNCRT_DISABLE" nvcc -x cu -std=c++17 -DNCRT_DISABLE -Werror all-warnings \
    -Xcompiler -Wall,-Wextra,-Wshadow,-Werror -I"$inc" "$T/use.cu"
else
  echo "skipped: nvcc (not installed)"
fi
echo "$ran compiles"
exit $fail
