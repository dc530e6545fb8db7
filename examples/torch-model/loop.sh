#!/usr/bin/env bash
# The feedback loop on a small PyTorch model (CPU): instrument, run under
# ncrun, summarise, drill into the slowest ranges, instrument again, run,
# summarise -- the second table breaks the time of the first down.
#
#   examples/torch-model/loop.sh [WORKDIR]
#
# The example's own files are never changed: the loop edits a copy of
# rules.yaml in WORKDIR (default: a new temporary directory), where the
# shadow trees and runs go too. NCREWRITE_BUILD names the build directory
# (default: build/ at the top of the checkout), NC_PYTHON the Python that
# has torch (default: Debian's /usr/bin/python3).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${NCREWRITE_BUILD:-$ROOT/build}
PY=${NC_PYTHON:-/usr/bin/python3}
W=${1:-$(mktemp -d)}
mkdir -p "$W"
W=$(cd "$W" && pwd)
NC=$BUILD/src/rewrite/ncrewrite
NCRUN=$BUILD/ncrt/ncrun
NCTRACE=$BUILD/src/trace/nctrace
for t in "$NC" "$NCRUN" "$NCTRACE"; do
  [ -x "$t" ] || { echo "loop.sh: $t is not built (cmake --build build)" >&2; exit 1; }
done
"$PY" -c "import torch" 2>/dev/null || { echo "loop.sh: $PY cannot import torch (apt-get install python3-torch)" >&2; exit 77; }

cp "$HERE/rules.yaml" "$W/rules.yaml"
rm -rf "$W/out1" "$W/out2" "$W/run1" "$W/run2"
ranges() { "$NCTRACE" summary "$1" | sed -n '/^| range/,/^$/p'; }

for it in 1 2; do
  echo "== run $it: instrument src/ with $W/rules.yaml, run under ncrun"
  "$NC" -q --config "$W/rules.yaml" "$HERE/src" "$W/out$it"
  "$NCRUN" -q --run-dir "$W/run$it" --rules "$W/rules.yaml" --shadow "$W/out$it" -- "$PY" "$W/out$it/train.py"
  trace=$(ls "$W/run$it"/*.trace.json.gz)
  echo "== run $it: where the time went ($trace)"
  ranges "$trace"
  if [ "$it" = 1 ]; then
    echo "== drill: finer ranges inside the two slowest"
    "$NC" drill --config "$W/rules.yaml" --src "$HERE/src" --trace "$trace" --top 2
  fi
done
echo "== the rules now (undo with: ncrewrite feedback --config $W/rules.yaml --undo)"
diff -u "$HERE/rules.yaml" "$W/rules.yaml" || true
