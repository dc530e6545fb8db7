#!/usr/bin/env bash
# Valgrind (memcheck) over a representative subset of the runtime's cases and
# over ncrewrite: the C programs basic (ranges, marks, domains), threads
# (4 threads x 20 000 ranges) and forks (a child writing its own trace) run
# under ncrun with libncrt injected, valgrind following every process; then
# ncrewrite on two golden trees with full leak checking. Any memcheck error
# exits 99, which fails the test; each program must also exit as it does
# without valgrind and leave a trace that gzip+json can read.
#   test_valgrind.sh NCRUN_DIR NCREWRITE
set -u
command -v valgrind >/dev/null || { echo "skipped: valgrind is not installed (apt-get install valgrind)"; exit 77; }
NCRUN="$1/ncrun"
NC="$2"
HERE=$(cd "$(dirname "$0")/.." && pwd)
ROOT=$(dirname "$HERE")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
NVTX=/usr/local/cuda/include
[ -d "$NVTX/nvtx3" ] || NVTX=/usr/local/cuda/targets/x86_64-linux/include
fail=0
VG=(valgrind -q --error-exitcode=99 --trace-children=yes)

for prog in "progs/basic.c" "threads.c 4 20000" "progs/forks.c"; do
  set -- $prog
  src=$1; shift
  exe="$T/$(basename "$src" .c)"
  gcc -std=gnu11 -O1 -g -I "$ROOT/src/runtime/include" -I "$NVTX" "$HERE/runtime/$src" -o "$exe" -lpthread || exit 1
  "$exe" "$@" >/dev/null 2>&1; want=$?
  "${VG[@]}" "$NCRUN" --run-dir "$T/run-$(basename "$exe")" -- "$exe" "$@" >"$T/out" 2>&1; rc=$?
  if [ "$rc" != "$want" ]; then
    echo "FAIL: $src under valgrind: exit $rc, want $want"; cat "$T/out"; fail=1; continue
  fi
  n=$(/usr/bin/python3 -c '
import glob, gzip, json, sys
fs = glob.glob(sys.argv[1] + "/*.trace.json.gz")
print(sum(len(json.load(gzip.open(f))["traceEvents"]) > 0 for f in fs))' "$T/run-$(basename "$exe")")
  if [ "${n:-0}" -lt 1 ]; then echo "FAIL: $src: no readable trace"; fail=1; else echo "ok: $src $* ($n trace(s))"; fi
done

for case in py-nCompass-example c-basic; do
  g="$HERE/golden/$case"
  cfg=(); [ -f "$g/rules.yaml" ] && cfg=(--config "$g/rules.yaml")
  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    "$NC" -j 2 "${cfg[@]}" "$g/input" "$T/out-$case" >"$T/out" 2>&1; rc=$?
  if [ "$rc" = 99 ]; then echo "FAIL: ncrewrite on $case under valgrind"; cat "$T/out"; fail=1; else echo "ok: ncrewrite $case"; fi
done
exit $fail
