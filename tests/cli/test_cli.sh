#!/usr/bin/env bash
# Command-line behaviour of ncrewrite: path safety, exit codes, --check,
# --diff, --quiet, incremental runs and stale files. Each check says what it
# expects; the script stops at the first failure.
set -u
NC="$1"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
expect_rc() { # expect_rc WANT DESC cmd...
  local want=$1 desc=$2; shift 2
  "$@" >"$T/stdout" 2>"$T/stderr"; local rc=$?
  if [ "$rc" = "$want" ]; then ok; else bad "$desc: exit $rc, want $want"; cat "$T/stderr"; fi
}
has() { grep -q -- "$2" "$1" && ok || { bad "$3: '$2' not in $(basename "$1")"; cat "$1"; }; }

mkdir -p "$T/src/pkg"
printf 'def f(x):\n    return x + 1\n' > "$T/src/pkg/a.py"
printf 'def g():\n    return 2\n' > "$T/src/pkg/b.py"
printf 'targets:\n  pkg.a:\n    func_context_wrappings:\n      f: {}\n      nothere: {}\n' > "$T/rules.yaml"
printf 'targets:\n  pkg.a:\n    func_context_wrappings:\n      f: {}\n' > "$T/good.yaml"
snap() { (cd "$T/src" && find . -type f -print0 | sort -z | xargs -0 sha1sum) ; }
snap > "$T/src.before"

# path safety: SRC is never a destination
expect_rc 1 "OUT == SRC" "$NC" --config "$T/rules.yaml" "$T/src" "$T/src"
has "$T/stderr" "OUT is SRC" "OUT == SRC message"
expect_rc 1 "OUT contains SRC" "$NC" --config "$T/rules.yaml" "$T/src" "$T"
has "$T/stderr" "contains SRC" "OUT containing SRC message"
expect_rc 1 "OUT == SRC through a symlink" bash -c "ln -sfn '$T/src' '$T/srclink' && '$NC' --config '$T/rules.yaml' '$T/src' '$T/srclink'"

# usage errors
expect_rc 2 "no paths" "$NC" --config "$T/rules.yaml"
expect_rc 2 "bad -j" "$NC" -j zero "$T/src" "$T/o"
expect_rc 2 "--check with --diff" "$NC" --check --diff "$T/src" "$T/o"
# an empty OUT (or SRC) names no directory: a usage error, before anything
# is made (it used to reach mkdir -p of "", reading past its copy)
expect_rc 2 "empty OUT" "$NC" --full-trace "$T/src" ""
has "$T/stderr" "OUT is an empty path" "empty OUT message"
expect_rc 2 "empty SRC" "$NC" --full-trace "" "$T/o"
has "$T/stderr" "SRC is an empty path" "empty SRC message"
expect_rc 0 "--version" "$NC" --version
has "$T/stdout" "tree-sitter 0.25.0" "--version names the pinned core"

# a broken rule file writes nothing
printf 'targets: [\n' > "$T/bad.yaml"
expect_rc 1 "bad rules" "$NC" --config "$T/bad.yaml" "$T/src" "$T/never"
[ ! -e "$T/never" ] && ok || bad "bad rules must not create OUT"

# a run with errors (here --strict and a rule that matches nothing) leaves
# OUT as it was; --keep-going writes what it can, still exit 1
expect_rc 0 "first run" "$NC" -q --config "$T/good.yaml" "$T/src" "$T/keep"
(cd "$T/keep" && find . -type f -print0 | sort -z | xargs -0 sha1sum) > "$T/keep.before"
printf 'x = 1\n' >> "$T/src/pkg/b.py"
expect_rc 1 "--strict with a miss" "$NC" --strict --config "$T/rules.yaml" "$T/src" "$T/keep"
has "$T/stderr" "nothing written, OUT is as it was: 1 error (--keep-going writes what it can)" "--strict refusal message"
(cd "$T/keep" && find . -type f -print0 | sort -z | xargs -0 sha1sum) > "$T/keep.after"
cmp -s "$T/keep.before" "$T/keep.after" && ok || bad "a failing run changed OUT"
expect_rc 1 "--strict --keep-going" "$NC" --strict --keep-going --config "$T/rules.yaml" "$T/src" "$T/keep"
grep -q 'x = 1' "$T/keep/pkg/b.py" && ok || bad "--keep-going did not write"
sed -i '$d' "$T/src/pkg/b.py"

# paths written with a trailing slash: messages name OUT/file, not OUT//file
mkdir -p "$T/slash"
printf 'x\n' > "$T/slash/pkg"
expect_rc 1 "a file where a directory goes (OUT/)" "$NC" --config "$T/rules.yaml" "$T/src/" "$T/slash/"
has "$T/stderr" "^$T/slash/pkg: error: exists and is not a directory" "OUT/ message without //"
[ "$(grep -c 'exists and is not a directory' "$T/stderr")" = 1 ] && ok || bad "a path in the way of two files is named once"

# --diff writes nothing
expect_rc 0 "--diff" "$NC" --config "$T/rules.yaml" --diff "$T/src" "$T/difout"
has "$T/stdout" "+    with __ncrt__.range(\"f\"):" "--diff shows the range"
[ ! -e "$T/difout" ] && ok || bad "--diff must not create OUT"

# first run; warnings; quiet
expect_rc 0 "first run" "$NC" --config "$T/rules.yaml" "$T/src" "$T/out"
has "$T/stderr" "rule matches nothing: no module-level function 'nothere'" "miss warning"
cp "$T/stderr" "$T/first.stderr"
expect_rc 0 "--check right after" "$NC" --config "$T/rules.yaml" --check "$T/src" "$T/out"
has "$T/stderr" "OUT is up to date" "--check up to date"
expect_rc 0 "--quiet" "$NC" -q --config "$T/rules.yaml" "$T/src" "$T/out"
[ ! -s "$T/stderr" ] && [ ! -s "$T/stdout" ] && ok || bad "--quiet printed something"

# incremental: an unchanged tree writes nothing and reports the same warnings
touch -d '2001-01-01' "$T/out/pkg/a.py" "$T/out/pkg/b.py" 2>/dev/null
stamp_a=$(stat -c %Y "$T/out/pkg/a.py")
expect_rc 0 "--check compares contents, not times" "$NC" --config "$T/rules.yaml" --check "$T/src" "$T/out"
echo "# edited by hand" >> "$T/out/pkg/b.py"
expect_rc 1 "--check sees a hand-edited OUT file" "$NC" --config "$T/rules.yaml" --check "$T/src" "$T/out"
has "$T/stdout" "out of date: pkg/b.py" "--check names the edited file"
expect_rc 0 "rerun" "$NC" --config "$T/rules.yaml" "$T/src" "$T/out"
grep -q "edited by hand" "$T/out/pkg/b.py" && bad "a run must restore a hand-edited OUT file" || ok
expect_rc 0 "second rerun" "$NC" --config "$T/rules.yaml" "$T/src" "$T/out"
# the same diagnostics; only the summary says that nothing was written
diff -q <(grep -v '^ncrewrite: ' "$T/first.stderr") <(grep -v '^ncrewrite: ' "$T/stderr") >/dev/null && ok ||
  { bad "cached run reports differently"; diff "$T/first.stderr" "$T/stderr"; }
has "$T/stderr" "OUT was up to date, nothing written" "an unchanged run says it wrote nothing"
# files are replaced by rename, so a rewritten file has a new inode
m1=$(stat -c %i "$T/out/pkg/a.py")
expect_rc 0 "third run" "$NC" --config "$T/rules.yaml" "$T/src" "$T/out"
[ "$m1" = "$(stat -c %i "$T/out/pkg/a.py")" ] && ok || bad "unchanged file was rewritten"
# output cached by another build of ncrewrite is not reused
grep -q '"build": "[0-9a-f]\{16\}"' "$T/out/.ncrewrite/cache.json" && ok || bad "cache.json records no build"
sed -i 's/"build": "[0-9a-f]*"/"build": "0123456789abcdef"/' "$T/out/.ncrewrite/cache.json"
expect_rc 0 "run after a rebuild" "$NC" --config "$T/rules.yaml" "$T/src" "$T/out"
[ "$m1" != "$(stat -c %i "$T/out/pkg/a.py")" ] && ok || bad "a rebuilt ncrewrite reused another build's output"

# a changed source: --check says so, a run rewrites it
printf 'def f(x):\n    return x + 2\n' > "$T/src/pkg/a.py"
expect_rc 1 "--check after a source change" "$NC" --config "$T/rules.yaml" --check "$T/src" "$T/out"
has "$T/stdout" "out of date: pkg/a.py" "--check names the file"
expect_rc 0 "run after change" "$NC" --config "$T/rules.yaml" "$T/src" "$T/out"
has "$T/out/pkg/a.py" "return x + 2" "changed file rewritten"

# a removed source: stale in --check, removed by a run
rm "$T/src/pkg/b.py"
expect_rc 1 "--check after removal" "$NC" --config "$T/rules.yaml" --check "$T/src" "$T/out"
has "$T/stdout" "stale: pkg/b.py" "--check names the stale file"
expect_rc 0 "run after removal" "$NC" --config "$T/rules.yaml" "$T/src" "$T/out"
[ ! -e "$T/out/pkg/b.py" ] && ok || bad "stale file left in OUT"

# changed rules redo everything
printf 'targets:\n  pkg.a:\n    func_context_wrappings:\n      f: {context_values: ["renamed"]}\n' > "$T/rules.yaml"
expect_rc 0 "run with new rules" "$NC" --config "$T/rules.yaml" "$T/src" "$T/out"
has "$T/out/pkg/a.py" '__ncrt__.range("renamed")' "new rules applied"

# OUT inside SRC is left out of the walk
expect_rc 0 "OUT inside SRC" "$NC" --config "$T/rules.yaml" "$T/src" "$T/src/shadow"
has "$T/stderr" "OUT is inside SRC" "note about OUT inside SRC"
[ ! -e "$T/src/shadow/shadow" ] && ok || bad "OUT was walked into itself"
expect_rc 0 "OUT inside SRC, second run" "$NC" --config "$T/rules.yaml" "$T/src" "$T/src/shadow"
[ ! -e "$T/src/shadow/shadow" ] && ok || bad "OUT was walked into itself on the second run"
rm -rf "$T/src/shadow" "$T/srclink"

# nulls in rule files (issue #20): the nCompass SDK saves every unset field
# as null; null, ~ or nothing is a key not written, in the run and in the
# rule-file commands, which edit such files and leave them loading
mkdir -p "$T/nul/src"
printf 'def f(x):\n    y = x + 1\n    z = y * 2\n    return z\n' > "$T/nul/src/m.py"
N="$T/nul/rules.json"
printf '{"targets": {"m": {"filePath": null, "func_line_range_wrappings": [{"function": null, "start_line": 2, "end_line": 2, "context_class": "ncrt.range", "context_values": null, "start_line_content": null, "end_line_content": null, "reasoning": null}]}}, "ai_analysis_targets": null, "full_trace_mode": null}\n' > "$N"
expect_rc 0 "--validate with nulls" "$NC" --validate "$N"
expect_rc 0 "run with nulls" "$NC" -q --config "$N" "$T/nul/src" "$T/nul/out"
has "$T/nul/out/m.py" '__ncrt__.range("m:L2")' "a null start_line_content is not a line to look for"
expect_rc 0 "feedback on a rule file with nulls" "$NC" feedback --config "$N" --src "$T/nul/src" --module m --lines 3-3 --text why
has "$N" '"reasoning": null}, {"start_line": 3, "end_line": 3, "start_line_content": "z = y \* 2", "reasoning": "why"}\]' "feedback appends after an entry with nulls"
expect_rc 0 "feedback's edit loads" "$NC" --validate "$N"
printf '{"targets": {"m": {"func_line_range_wrappings": null}}}\n' > "$N"
expect_rc 0 "feedback into a null list" "$NC" feedback --config "$N" --src "$T/nul/src" --module m --lines 2-2
has "$N" '{"targets": {"m": {"func_line_range_wrappings": \[{"start_line": 2, "end_line": 2, "start_line_content": "y = x + 1"}\]}}}' "a null list replaced"
printf '# none yet\ntargets: ~\n' > "$T/nul/rules.yaml"
expect_rc 0 "feedback into targets: ~" "$NC" feedback --config "$T/nul/rules.yaml" --src "$T/nul/src" --module m --lines 2-2
printf '# none yet\ntargets:\n  m:\n    func_line_range_wrappings:\n      - start_line: 2\n        end_line: 2\n        start_line_content: "y = x + 1"\n' > "$T/nul/want.yaml"
cmp -s "$T/nul/rules.yaml" "$T/nul/want.yaml" && ok || { bad "targets: ~ replaced by the new target"; diff "$T/nul/want.yaml" "$T/nul/rules.yaml"; }
# a required key given as null is missing, reported at its key
printf '{"targets": {"m": {"func_line_range_wrappings": [\n  {"start_line": 2, "end_line": null}]}}}\n' > "$N"
expect_rc 1 "a required key as null" "$NC" --validate "$N"
has "$T/stderr" "rules.json:2:21: error: a line range needs start_line and end_line" "null end_line named at its key"
# quoted, "null" is a string: a line that does not read so
printf 'targets:\n  m:\n    func_line_range_wrappings:\n      - {start_line: 2, end_line: 2, start_line_content: "null"}\n' > "$T/nul/rules.yaml"
expect_rc 0 "quoted null" "$NC" --config "$T/nul/rules.yaml" "$T/nul/src" "$T/nul/out"
has "$T/stderr" "does not read 'null'" "a quoted null is the text null"

# SRC untouched by all of the above (apart from the edits this script made)
printf 'def g():\n    return 2\n' > "$T/src/pkg/b.py"
printf 'def f(x):\n    return x + 1\n' > "$T/src/pkg/a.py"
snap > "$T/src.after"
diff -q "$T/src.before" "$T/src.after" >/dev/null && ok || bad "SRC changed"
[ -z "$(find "$T/src" -name '*.ncrw-*')" ] && ok || bad "temporary files left in SRC"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
