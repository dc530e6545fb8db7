#!/usr/bin/env bash
# The progress bar: on a terminal (faked by util-linux `script`) rewriting a
# big tree draws it on stderr and erases it; not on a terminal, or with -q,
# nothing of it is printed. Exit 77 (skipped) without `script`.
#   test_progress.sh NCREWRITE
set -u
NC=$1
command -v script >/dev/null || { echo "skipped: script (util-linux) is not installed"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
mkdir -p "$T/src/pkg"
for i in $(seq 1 150); do printf 'def f%d(x):\n    return x\n' "$i" > "$T/src/pkg/m$i.py"; done
printf 'full_trace_mode: true\n' > "$T/rules.yaml"

# a terminal: the bar is drawn, then erased before the summary line
script -qec "'$NC' -j2 --config '$T/rules.yaml' '$T/src' '$T/out1'" /dev/null > "$T/tty" 2>&1 ||
  { bad "run on a terminal failed"; cat "$T/tty"; }
grep -aq 'ncrewrite: \[[#.]\{30\}\] [0-9]*/150 files' "$T/tty" || { bad "no progress bar on a terminal"; cat -A "$T/tty" | head; }
grep -aq $'\r\033\\[Kncrewrite: 150 files instrumented' "$T/tty" ||
  { bad "the bar is not erased before the summary"; cat -A "$T/tty" | tail -3; }
# a terminal with -q: nothing at all
script -qec "'$NC' -q -j2 --config '$T/rules.yaml' '$T/src' '$T/out2'" /dev/null > "$T/ttyq" 2>&1
[ ! -s "$T/ttyq" ] || { bad "-q on a terminal printed something"; cat -A "$T/ttyq" | head -3; }
# not a terminal: the summary only, no bar and no control characters
"$NC" -j2 --config "$T/rules.yaml" "$T/src" "$T/out3" 2> "$T/pipe" || bad "run into a pipe failed"
[ "$(cat "$T/pipe")" = "ncrewrite: 150 files instrumented (150 ranges), 0 copied; 150 written, 0 up to date; 0 errors, 0 warnings" ] ||
  { bad "not a terminal: unexpected stderr"; cat -A "$T/pipe" | head -3; }
# the bar changes nothing in OUT
diff -r "$T/out1" "$T/out3" -x .ncrewrite >/dev/null || bad "OUT differs with and without a terminal"
[ $fail = 0 ] && echo ok
exit $fail
