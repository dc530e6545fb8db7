#!/usr/bin/env bash
# nctrace's progress bar: reading a big trace (over 16 MiB) on a terminal
# (faked by util-linux `script`) draws it on stderr and erases it; not on a
# terminal, or with -q, nothing of it is printed; the summary is the same.
# Exit 77 (skipped) without `script`.   test_nctrace_progress.sh NCTRACE PYTHON
set -u
NCT=$1 PY=$2
command -v script >/dev/null || { echo "skipped: script (util-linux) is not installed"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
"$PY" - "$T/big.json" <<'PYEOF'
import json, sys
evs = [{"ph": "X", "cat": "user_annotation", "name": "r%d" % (i % 7), "pid": 1, "tid": 1, "ts": i * 10, "dur": 5}
       for i in range(200000)]
with open(sys.argv[1], "w") as f:
    json.dump({"schemaVersion": 1, "traceEvents": evs}, f)
PYEOF
[ "$(stat -c %s "$T/big.json")" -gt $((16 << 20)) ] || bad "the test trace is not over 16 MiB"

script -qec "'$NCT' summary '$T/big.json' -o '$T/tty.md'" /dev/null > "$T/tty" 2>&1 || { bad "summary on a terminal failed"; cat "$T/tty"; }
grep -aq 'nctrace: reading big.json \[[#.]\{30\}\] *[0-9]*%' "$T/tty" || { bad "no progress bar on a terminal"; cat -A "$T/tty" | head -3; }
[ "$(tail -c 4 "$T/tty" | od -An -c | tr -d ' ')" = '\r033[K' ] || { bad "the bar is not erased at the end"; cat -A "$T/tty" | tail -2; }
script -qec "'$NCT' summary -q '$T/big.json' -o '$T/ttyq.md'" /dev/null > "$T/ttyq" 2>&1
[ ! -s "$T/ttyq" ] || { bad "-q on a terminal printed something"; cat -A "$T/ttyq" | head -3; }
"$NCT" summary "$T/big.json" -o "$T/pipe.md" 2> "$T/pipe" || bad "summary into a pipe failed"
[ ! -s "$T/pipe" ] || { bad "not a terminal: stderr is not empty"; cat -A "$T/pipe" | head -3; }
cmp -s "$T/tty.md" "$T/pipe.md" && cmp -s "$T/ttyq.md" "$T/pipe.md" || bad "the summary differs with a terminal or -q"
grep -q '| r0 |' "$T/pipe.md" || bad "the summary lacks the ranges"
[ $fail = 0 ] && echo ok
exit $fail
