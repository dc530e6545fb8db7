#!/usr/bin/env bash
# ncrewrite -j N when threads cannot be started (a pids limit, here the
# failthread interposer): the threads that did start, or the main thread
# alone, do the whole tree, and OUT is the same as with -j 1.
set -u
NC="$1" FAILTHREAD="$2"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# under ASan the interposer comes before the sanitizer's runtime
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
fail=0
mkdir -p "$T/src"
for i in 1 2 3 4 5 6 7 8; do printf 'def f%d(x):\n    return x + %d\n' "$i" "$i" > "$T/src/m$i.py"; done
"$NC" -q --full-trace -j 1 "$T/src" "$T/want" || { echo "FAIL: -j 1 exit $?"; exit 1; }
rm -rf "$T/want/.ncrewrite"
for after in 0 2; do
  FAILTHREAD_AFTER=$after LD_PRELOAD="$FAILTHREAD" "$NC" -q --full-trace -j 4 "$T/src" "$T/out$after" 2>"$T/err"
  rc=$?
  if [ "$rc" != 0 ]; then echo "FAIL: -j 4 with $after threads started: exit $rc"; cat "$T/err"; fail=1; continue; fi
  rm -rf "$T/out$after/.ncrewrite"
  diff -r "$T/want" "$T/out$after" >/dev/null || { echo "FAIL: -j 4 with $after threads started: OUT differs"; fail=1; }
done
[ "$fail" = 0 ] && echo "passed"
exit "$fail"
