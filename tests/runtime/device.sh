#!/bin/sh
# device.sh: build the runtime with plain compiler commands (no CMake, no
# npm: a GPU machine may reach no network) and run the GPU test cases, a few
# CPU cases and the C push/pop benchmark there.
#
#   sh tests/runtime/device.sh [BUILD_DIR] [PREBUILT_DIR]
#   NCREWRITE=path/to/ncrewrite sh tests/runtime/device.sh ...   also the
#   torch.compile and Triton cases (tests/run/test_gpu_compilers.py)
#
# PREBUILT_DIR (optional): ncrun/libncrt.so/python built elsewhere, used for
# the pieces that fail to build here (e.g. no libcjson headers).
set -u
B=${1:-/tmp/ncrt-device}
PRE=${2:-}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CUDA_INC=/usr/local/cuda/include
mkdir -p "$B/python"
echo "== machine"
nvidia-smi -L 2>&1 | head -4
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -2
command -v nvcc >/dev/null && nvcc --version | tail -2 || echo "no nvcc on PATH"
gcc --version | head -1
head -1 /etc/os-release
ls /usr/local/cuda/lib64/libcupti.so* /usr/local/cuda/extras/CUPTI/lib64/libcupti.so* 2>/dev/null | head -3

echo "== build"
gcc -O2 -g -fPIC -shared -fvisibility=hidden -mtls-dialect=gnu2 -std=gnu11 -DNCRT_HAVE_CUPTI -I"$CUDA_INC" \
  -I"$ROOT/src/runtime/include" -I"$ROOT/src/common" "$ROOT"/src/runtime/libncrt/*.c -o "$B/libncrt.so" -lz -ldl -lpthread \
  -Wl,-z,nodelete && echo "libncrt.so built"
gcc -O2 -std=gnu11 -D_GNU_SOURCE -c "$ROOT/src/common/ncbase.c" -o "$B/ncbase.o" # what CMake's ncbase target does
if ! gcc -O2 -std=gnu11 -I"$ROOT/src/common" -I"$ROOT/src/runtime/include" "$ROOT"/src/runtime/ncrun/*.c "$B/ncbase.o" -o "$B/ncrun" -lcjson; then
  [ -n "$PRE" ] && cp "$PRE/ncrun" "$B/ncrun" && echo "ncrun: prebuilt copy" &&
    [ -f "$PRE/../devlib/libcjson.so.1" ] && export LD_LIBRARY_PATH="$PRE/../devlib:${LD_LIBRARY_PATH:-}"
fi
PY=/usr/bin/python3
# the ncrt module for each Python here (one file per EXT_SUFFIX, as CMake does)
built=0
suffixes=" "
pythons=""
for P in /usr/bin/python3 $(command -v python3) $(command -v python3.12) $(command -v python3.13); do
  if PYINC=$($P -c 'import sysconfig;print(sysconfig.get_paths()["include"])' 2>/dev/null) && [ -f "$PYINC/Python.h" ]; then
    SUF=$($P -c 'import sysconfig;print(sysconfig.get_config_var("EXT_SUFFIX"))')
    case "$suffixes" in *" $SUF "*) continue ;; esac
    suffixes="$suffixes$SUF "
    pythons="$pythons${pythons:+,}$($P -c 'import sys;print("%d.%d" % sys.version_info[:2])')=$P"
    gcc -O2 -fPIC -shared -mtls-dialect=gnu2 -I"$CUDA_INC" -I"$PYINC" -I"$ROOT/src/runtime/include" "$ROOT/src/runtime/python/ncrtmodule.c" \
      -o "$B/python/ncrt$SUF" && echo "python module built for $P (ncrt$SUF)" && built=1
  fi
done
if [ $built = 0 ] && [ -n "$PRE" ]; then
  cp "$PRE"/python/* "$B/python/" && echo "python module: prebuilt copy"
fi

echo "== tests"
# NCRT_DEVICE_CASES="gpu-kernels gpu-crash-kill": only those cases, then stop
CASES=${NCRT_DEVICE_CASES:-gpu-kernels gpu-memcpy gpu-clock gpu-gated gpu-cupti-busy gpu-crash-kill gpu-incremental incremental crash-kill crash-segv c-basic cpp-scoped threads throttle exit-paths full-disk schedule-range gating fork subprocess python python-async python-contract}
for c in $CASES; do
  printf '%-14s ' "$c"
  $PY "$ROOT/tests/runtime/test_runtime.py" "$c" "$B" 2>&1 | tail -3 | tr '\n' ' '
  echo "(rc=$?)"
done

[ -n "${NCRT_DEVICE_CASES:-}" ] && exit 0

echo "== the ncrt module: decorators under GC stress, torch.jit.trace, recursion ($pythons)"
for c in decorator-gc recursion; do
  printf '%-14s ' "$c"
  $PY "$ROOT/tests/runtime/test_pymodule.py" "$c" "$B" "$pythons" 0 2>&1 | tail -3 | tr '\n' ' '
  echo "(rc=$?)"
done
printf '%-14s ' jit-trace
NCRT_TEST_PYTHON=$(command -v python3) $PY "$ROOT/tests/runtime/test_pymodule.py" jit-trace "$B" "$pythons" 0 2>&1 |
  tail -3 | tr '\n' ' '
echo

echo "== launchers (torchrun with the machine's own torch)"
for c in torchrun mpirun; do
  printf '%-14s ' "$c"
  NCRT_TEST_PYTHON=$(command -v python3) $PY "$ROOT/tests/runtime/test_runtime.py" "$c" "$B" 2>&1 | tail -3 | tr '\n' ' '
  echo "(rc=$?)"
done

echo "== compilers over instrumented code (torch.compile, Triton, TorchScript)"
# NCREWRITE: an ncrewrite binary built elsewhere (the run tool can carry
# build/src/rewrite/ncrewrite; its grammars are linked in statically).
if [ -n "${NCREWRITE:-}" ] && [ -x "$NCREWRITE" ]; then
  TPY=$(command -v python3)
  for c in torch-compile triton; do
    echo "-- $c ($TPY)"
    $TPY "$ROOT/tests/run/test_gpu_compilers.py" "$NCREWRITE" "$c" "$B/python" > "$B/$c.log" 2>&1
    rc=$?
    tail -12 "$B/$c.log"
    echo "(rc=$rc: 0 passed, 1 failed, 77 skipped)"
  done
else
  echo "no NCREWRITE binary given: torch.compile and Triton cases not run"
fi

echo "== CUPTI busy: a second subscriber"
if command -v nsys >/dev/null; then
  echo "nsys present: $(nsys --version)"
else
  echo "no nsys here"
fi

echo "== C push/pop benchmark"
gcc -O2 -I"$ROOT/src/runtime/include" -I"$CUDA_INC" "$ROOT/bench/runtime/pushpop.c" -o "$B/bench_pushpop" -ldl
"$B/bench_pushpop" 20000000 | sed 's/^/no tool: /'
NVTX_INJECTION64_PATH=$B/libncrt.so NCRT_THROTTLE=off NCRT_OUTPUT_DIR=$B "$B/bench_pushpop" 2000000 |
  sed 's/^/libncrt recording: /'
NVTX_INJECTION64_PATH=$B/libncrt.so NCRT_OUTPUT_DIR=$B "$B/bench_pushpop" 2000000 | sed 's/^/libncrt throttled: /'

if [ -n "${OUT:-}" ] && command -v nvcc >/dev/null; then
  echo "== a GPU trace kept in \$OUT"
  nvcc -O2 -std=c++17 -I"$ROOT/src/runtime/include" -I"$CUDA_INC" "$ROOT/tests/runtime/progs/gpu.cu" -o "$B/gpu" &&
    "$B/ncrun" --run-dir "$OUT/gpu-run" -a cpu,gpu,mem -- "$B/gpu"
fi
