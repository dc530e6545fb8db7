#!/usr/bin/env bash
# Rule outcomes under many worker threads: the rules are shared read-only by
# every worker; what each file made of each rule (a hit, or why it matched
# nothing there) is the file's own, and the driver merges them in path
# order. So the "rule matches nothing" warnings, and the reason they give,
# are the same with -j 1 and -j 16, run after run. (Before, each worker
# wrote the reason into the shared rule: a data race ThreadSanitizer
# reported, and the reason named whichever file a thread finished first.)
# The tsan stage of scripts/test runs this on a ThreadSanitizer build.
#   test_rule_outcomes.sh NCREWRITE
set -u
NC=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

mkdir -p "$T/src/pkg"
for i in $(seq -w 0 63); do
  {
    echo "def helper_$i(x):"
    echo "    return x + $i"
    # every other file has a forward; none has missing_fn
    if [ $((10#$i % 2)) = 1 ]; then
      echo
      echo "def forward(x):"
      echo "    y = helper_$i(x)"
      echo "    return y"
    fi
  } > "$T/src/pkg/m$i.py"
done
cat > "$T/rules.yaml" <<'EOF'
targets:
  "pkg/*.py":
    func_context_wrappings:
      forward: {}
      missing_fn: {}
    func_line_range_wrappings:
      - function: forward
        start_line: 5
        end_line: 5
EOF

run() { # -j N, run index: stderr into $T/err.N.K
  rm -rf "$T/out"
  "$NC" --config "$T/rules.yaml" -j "$1" "$T/src" "$T/out" 2> "$T/err.$1.$2" > /dev/null
  echo $? > "$T/rc.$1.$2"
}
run 1 0
for k in 1 2 3 4 5; do run 16 $k; done

# the warning about missing_fn names the first file in path order
grep -q "rule matches nothing: no module-level function 'missing_fn' in pkg/m00.py" "$T/err.1.0" ||
  fail "-j 1: no warning naming pkg/m00.py for missing_fn: $(cat "$T/err.1.0")"
# forward matched in 32 files: no warning, although 32 others have none
grep -q "'forward'" "$T/err.1.0" && fail "-j 1: a warning for forward, which 32 files have: $(cat "$T/err.1.0")"
# the line range is on line 5 of the files with a forward, nowhere else
grep -q "lines 5-5" "$T/err.1.0" && fail "-j 1: the line range warned although it matched: $(cat "$T/err.1.0")"
n=$(grep -c "rule matches nothing" "$T/err.1.0")
[ "$n" = 1 ] || fail "-j 1: $n 'matches nothing' warnings, expected 1"
for k in 1 2 3 4 5; do
  cmp -s "$T/err.1.0" "$T/err.16.$k" || fail "-j 16 run $k: stderr differs from -j 1:
$(diff "$T/err.1.0" "$T/err.16.$k")"
  [ "$(cat "$T/rc.16.$k")" = 0 ] || fail "-j 16 run $k: exit $(cat "$T/rc.16.$k")"
done
# ThreadSanitizer writes its reports to stderr: none may appear
grep -l "ThreadSanitizer" "$T"/err.* > /dev/null && fail "ThreadSanitizer reported: $(grep -h -A8 ThreadSanitizer "$T"/err.* | head -40)"

if [ "$fails" != 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "ok: rule outcomes identical with -j 1 and 5 runs of -j 16 over 64 files"
