#!/usr/bin/env bash
# The man pages stay true to the programs: each renders without a groff
# warning, and every long option a program's --help lists is documented in
# its page.  test_man.sh MAN_DIR NCREWRITE NCRUN NCTRACE
set -u
MAN=$1
fail=0
command -v groff >/dev/null || { echo "skipped: groff is not installed"; exit 77; }
for pair in "ncrewrite:$2" "ncrun:$3" "nctrace:$4"; do
  name=${pair%%:*} exe=${pair#*:}
  page="$MAN/$name.1"
  warn=$(groff -man -ww -z "$page" 2>&1)
  [ -z "$warn" ] || { echo "FAIL: $page: groff warns: $warn"; fail=1; }
  opts=$("$exe" --help 2>&1 | grep -o -- '--[a-z][a-z-]*' | sort -u)
  [ -n "$opts" ] || { echo "FAIL: $name --help lists no options"; fail=1; }
  for o in $opts; do
    grep -q -- "$(printf '%s' "$o" | sed 's/-/\\\\-/g')" "$page" ||
      { echo "FAIL: $name: option $o is not in $name.1"; fail=1; }
  done
done
[ $fail = 0 ] && echo ok
exit $fail
