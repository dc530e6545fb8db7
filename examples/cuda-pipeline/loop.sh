#!/usr/bin/env bash
# The feedback loop on a small C/CUDA program: instrument, build, run under
# ncrun, summarise, drill into the slowest range, instrument and build
# again, run, summarise -- the second table breaks the time of the first
# down. The CUDA stage (src/scale.cu) is built and run only where nvcc and
# a GPU are present; elsewhere the C part runs alone and says so.
#
#   examples/cuda-pipeline/loop.sh [WORKDIR]
#
# The example's own files are never changed: the loop edits a copy of
# rules.yaml in WORKDIR (default: a new temporary directory). NCREWRITE_BUILD
# names the build directory (default: build/ at the top of the checkout).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${NCREWRITE_BUILD:-$ROOT/build}
W=${1:-$(mktemp -d)}
mkdir -p "$W"
W=$(cd "$W" && pwd)
NC=$BUILD/src/rewrite/ncrewrite
NCRUN=$BUILD/ncrt/ncrun
NCTRACE=$BUILD/src/trace/nctrace
for t in "$NC" "$NCRUN" "$NCTRACE"; do
  [ -x "$t" ] || { echo "loop.sh: $t is not built (cmake --build build)" >&2; exit 1; }
done
INC=(-I "$ROOT/src/runtime/include")
for d in /usr/local/cuda/include /usr/include; do
  [ -f "$d/nvtx3/nvToolsExt.h" ] && { INC+=(-I "$d"); break; }
done
gpu=0
if command -v nvcc >/dev/null && nvidia-smi -L >/dev/null 2>&1; then gpu=1; fi
[ "$gpu" = 1 ] || echo "== no GPU here (or no nvcc): the CUDA stage is skipped, the C part runs alone"

build() { # build SHADOW EXE
  if [ "$gpu" = 1 ]; then
    local cudalib
    cudalib=$(dirname "$(dirname "$(command -v nvcc)")")/lib64
    nvcc -O1 "${INC[@]}" -c "$1/scale.cu" -o "$1/scale.o"
    gcc -std=gnu11 -O1 -DWITH_GPU "${INC[@]}" "$1/pipeline.c" "$1/scale.o" -o "$2" -lm -ldl \
      -L"$cudalib" -Wl,-rpath,"$cudalib" -lcudart -lstdc++
  else
    gcc -std=gnu11 -O1 "${INC[@]}" "$1/pipeline.c" -o "$2" -lm -ldl
  fi
}

cp "$HERE/rules.yaml" "$W/rules.yaml"
rm -rf "$W/out1" "$W/out2" "$W/run1" "$W/run2"
ranges() { "$NCTRACE" summary "$1" | sed -n '/^| range/,/^$/p'; }

for it in 1 2; do
  echo "== run $it: instrument src/ with $W/rules.yaml, build, run under ncrun"
  "$NC" -q --config "$W/rules.yaml" "$HERE/src" "$W/out$it"
  build "$W/out$it" "$W/pipeline$it"
  "$NCRUN" -q --run-dir "$W/run$it" --rules "$W/rules.yaml" -- "$W/pipeline$it"
  trace=$(ls "$W/run$it"/*.trace.json.gz)
  echo "== run $it: where the time went ($trace)"
  ranges "$trace"
  if [ "$it" = 1 ]; then
    # C ranges carry no file in the trace: --out names the shadow tree.
    # --top 2: on a GPU the host function gpu_scale comes first (CUDA start-up
    # time), run_pipeline second; without one run_pipeline is the only range
    echo "== drill: finer ranges inside the slowest two"
    "$NC" drill --config "$W/rules.yaml" --src "$HERE/src" --trace "$trace" --out "$W/out1" --top 2
  fi
done
echo "== the rules now (undo with: ncrewrite feedback --config $W/rules.yaml --undo)"
diff -u "$HERE/rules.yaml" "$W/rules.yaml" || true
