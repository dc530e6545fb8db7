#!/usr/bin/env bash
# The whole loop on an example (instrument, run, summary, drill, instrument,
# run, summary): the second run's trace must break the first one's slowest
# range down into the ranges drill added, and the example's files must not
# change. Usage: test_loop.sh EXAMPLE_DIR BUILD_DIR PYTHON NAME...
# (NAME: range names the second trace must hold).
set -u
EX="$1" BUILD="$2" PY="$3"
shift 3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
before=$(cd "$EX" && find . -type f -print0 | sort -z | xargs -0 sha1sum)
NCREWRITE_BUILD="$BUILD" NC_PYTHON="$PY" bash "$EX/loop.sh" "$T/w" > "$T/log" 2>&1
rc=$?
if [ "$rc" = 77 ]; then cat "$T/log"; echo "skipped"; exit 77; fi
[ "$rc" = 0 ] || { cat "$T/log"; echo "FAIL: loop.sh exit $rc"; exit 1; }
after=$(cd "$EX" && find . -type f -print0 | sort -z | xargs -0 sha1sum)
[ "$before" = "$after" ] || { echo "FAIL: loop.sh changed files of the example"; exit 1; }
"$PY" - "$T/w/run1" "$T/w/run2" "$@" <<'EOF' || { cat "$T/log"; exit 1; }
import glob, gzip, json, sys
def names(d):
    (path,) = glob.glob(d + "/*.trace.json.gz")
    with gzip.open(path) as f:
        ev = json.load(f)["traceEvents"]
    return {e["name"] for e in ev if e.get("cat") == "user_annotation"}
one, two = names(sys.argv[1]), names(sys.argv[2])
want = set(sys.argv[3:])
assert one < two, f"run 2 does not refine run 1: {sorted(one)} vs {sorted(two)}"
assert want <= two, f"missing from run 2: {sorted(want - two)} (have {sorted(two)})"
assert not (want & one), f"run 1 already had {sorted(want & one)}"
print(f"loop: run 1 had {len(one)} range names, run 2 has {len(two)}: {sorted(two - one)}")
EOF
