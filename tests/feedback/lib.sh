# Shared by the feedback tests (sourced): a scratch directory $T removed on
# exit, pass/fail counters and the checks. NC must be set before.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
expect_rc() { # expect_rc WANT DESC cmd...  (output kept in $T/stdout, $T/stderr)
  local want=$1 desc=$2; shift 2
  "$@" >"$T/stdout" 2>"$T/stderr"; local rc=$?
  if [ "$rc" = "$want" ]; then ok; else bad "$desc: exit $rc, want $want"; cat "$T/stdout" "$T/stderr"; fi
}
has() { grep -qF -- "$2" "$1" && ok || { bad "$3: '$2' not in $(basename "$1")"; cat "$1"; }; }
same() { cmp -s "$1" "$2" && ok || { bad "$3"; diff "$1" "$2"; }; }
sum() { sha1sum "$1" | cut -d' ' -f1; }
