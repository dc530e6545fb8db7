#!/usr/bin/env bash
# A runtime-only build (-DNCREWRITE_BUILD_REWRITER=OFF: libncrt, ncrun,
# nctrace, the ncrt module) configures and builds without npm: a machine that
# runs instrumented code never needs tree-sitter. An `npm` first on PATH that
# records being called must stay uncalled, and the three programs must land
# in build/bin.
#   test_runtime_only.sh SRC
set -u
SRC=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/fakebin"
printf '#!/bin/sh\necho "npm $*" >> %s/npm-called\nexit 1\n' "$T" > "$T/fakebin/npm"
chmod +x "$T/fakebin/npm"
export PATH="$T/fakebin:$PATH"
if ! cmake -S "$SRC" -B "$T/b" -DNCREWRITE_BUILD_REWRITER=OFF -DNCREWRITE_TESTS=OFF > "$T/log" 2>&1; then
  echo "FAIL: configure failed:"; tail -20 "$T/log"; exit 1
fi
if ! cmake --build "$T/b" -j2 --target ncrt ncrun nctrace nc-bin >> "$T/log" 2>&1; then
  echo "FAIL: build failed:"; tail -20 "$T/log"; exit 1
fi
fails=0
[ -e "$T/npm-called" ] && { echo "FAIL: npm was called: $(cat "$T/npm-called")"; fails=1; }
[ -d "$T/b/_deps" ] && ls "$T/b/_deps" | grep -qi tree-sitter && { echo "FAIL: tree-sitter was fetched"; fails=1; }
for p in ncrun nctrace; do
  [ -x "$T/b/bin/$p" ] || { echo "FAIL: build/bin/$p missing"; fails=1; }
done
[ -e "$T/b/bin/ncrewrite" ] && { echo "FAIL: build/bin/ncrewrite exists in a runtime-only build"; fails=1; }
[ -e "$T/b/lib/libncrt.so" ] || { echo "FAIL: build/lib/libncrt.so missing"; fails=1; }
ls "$T/b/lib/ncrewrite/python/"ncrt.*.so > /dev/null 2>&1 || { echo "FAIL: no ncrt module in build/lib/ncrewrite/python"; fails=1; }
"$T/b/bin/ncrun" --version > /dev/null || { echo "FAIL: ncrun --version"; fails=1; }
[ $fails = 0 ] && echo "ok: runtime-only build without npm"
exit $fails
