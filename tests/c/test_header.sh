#!/usr/bin/env bash
# ncrt.h is included by users' code under their own warning flags: it must
# compile without a warning as C89-style C99/C11 (no mixed declarations), C++
# 11/17, and with NCRT_DISABLE. NVTX's own headers come in as system headers,
# as in a user's build against the CUDA toolkit.
#   test_header.sh INCLUDE_DIR NVTX_INCLUDE_DIR
set -u
inc=$1 nvtx=$2
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cat > "$T/use.c" <<'SRC'
#include "ncrt.h"
static int work(int n) {
  NCRT_RANGE("work");
  n += 1;
  {
    NCRT_RANGE_EX("dom", "inner", 2, 0xff3366ffu);
    n *= 2;
  }
  return n;
}
int main(void) {
  ncrt_source_location("work", __FILE__, __LINE__);
  ncrt_step();
  return work(1) == 4 ? 0 : 1;
}
SRC
fail=0
try() { # try DESC compiler args...
  local desc=$1; shift
  if "$@" -I"$inc" -isystem "$nvtx" -Wall -Wextra -Wpedantic -Werror -c "$T/use.c" -o "$T/use.o" 2>"$T/err"; then
    echo "ok: $desc"
  else
    echo "FAIL: $desc"; cat "$T/err"; fail=1
  fi
}
for std in c99 c11 gnu17; do
  try "gcc -std=$std" gcc -std=$std -Wdeclaration-after-statement
  try "gcc -std=$std NCRT_DISABLE" gcc -std=$std -Wdeclaration-after-statement -DNCRT_DISABLE
done
for std in c++11 c++17 c++20; do
  try "g++ -std=$std" g++ -x c++ -std=$std
  try "g++ -std=$std NCRT_DISABLE" g++ -x c++ -std=$std -DNCRT_DISABLE
done
exit $fail
