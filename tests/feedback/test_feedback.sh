#!/usr/bin/env bash
# ncrewrite feedback: a line range added to a rule file in place, checked
# against the source; every refusal leaves the rule file byte-identical;
# --undo steps back. Usage: test_feedback.sh NCREWRITE
set -u
NC="$1"
. "$(dirname "$0")/lib.sh"
export SOURCE_DATE_EPOCH=1700000000

mkdir -p "$T/src/pkg"
cat > "$T/src/pkg/m.py" <<'EOF'
import math


def f(x):
    y = x + 1
    z = math.sqrt(
        y)
    for i in range(3):
        y += i
        z += y
    return y + z


class A:
    def g(self):
        return f(2)
EOF
printf 'def broken(:\n    pass\n' > "$T/src/pkg/bad.py"
cat > "$T/rules.yaml" <<'EOF'
# my rules
targets:
  pkg.m:   # the module
    func_context_wrappings:
      f: {}
    # line ranges go here
EOF
cp "$T/rules.yaml" "$T/orig.yaml"
R="$T/rules.yaml"
fb() { "$NC" feedback --config "$R" --src "$T/src" "$@"; }

# success: a new list under an existing target, inserted before the comment
# that ends the target, everything else byte for byte
expect_rc 0 "add a loop" fb --module pkg.m --lines 8-10 --text "loop is slow"
cat > "$T/want1.yaml" <<'EOF'
# my rules
targets:
  pkg.m:   # the module
    func_context_wrappings:
      f: {}
    func_line_range_wrappings:
      - start_line: 8
        end_line: 10
        start_line_content: "for i in range(3):"
        reasoning: "loop is slow"
    # line ranges go here
EOF
same "$R" "$T/want1.yaml" "first range as expected"
has "$T/stderr" "added pkg.m lines 8-10 (range 'pkg.m:L8-10')" "success message"
# appended to the existing list, with function and name; blank edge lines trimmed
expect_rc 0 "add with function" fb --module pkg.m --lines 5-7 --function f --name pre
cat > "$T/want2.yaml" <<'EOF'
# my rules
targets:
  pkg.m:   # the module
    func_context_wrappings:
      f: {}
    func_line_range_wrappings:
      - start_line: 8
        end_line: 10
        start_line_content: "for i in range(3):"
        reasoning: "loop is slow"
      - function: f
        start_line: 5
        end_line: 7
        start_line_content: "y = x + 1"
        context_values: ["pre"]
    # line ranges go here
EOF
same "$R" "$T/want2.yaml" "second range appended"
# the result instruments: both ranges are in the shadow tree
expect_rc 0 "instrument with the result" "$NC" --config "$R" "$T/src" "$T/out"
has "$T/out/pkg/m.py" 'with __ncrt__.range("pre"):' "named range written"
has "$T/out/pkg/m.py" 'with __ncrt__.range("pkg.m:L8-10"):' "loop range written"

# refusals: message with a place, file byte-identical
before=$(sum "$R")
refuse() { # refuse DESC PATTERN args...
  local desc=$1 pat=$2; shift 2
  expect_rc 1 "$desc" fb "$@"
  has "$T/stderr" "$pat" "$desc message"
  has "$T/stderr" "left unchanged" "$desc says unchanged"
  [ "$(sum "$R")" = "$before" ] && ok || bad "$desc changed the rule file"
}
refuse "unknown module" "ncrewrite: error: module 'pkg.nothere' not found under $T/src (looked for pkg/nothere.py and pkg/nothere/__init__.py)" --module pkg.nothere --lines 1-2
refuse "lines out of range" "m.py:16:1: error: lines 50-60 are outside the file (16 lines)" --module pkg.m --lines 50-60
refuse "splits a statement" "m.py:9:9: error: lines 9-11 split a statement: the whole statements are lines 8-11 (give --lines 8-11, or --snap)" --module pkg.m --lines 9-11
refuse "partial overlap" "m.py:6:5: error: lines 6-11: range 'pkg.m:L6-11' (lines 6-11 of pkg/m.py) partly overlaps range 'pre' (lines 5-7); ranges must nest" --module pkg.m --lines 6-11
refuse "not inside the function" "error: lines 9-9: lines 9-9 are not inside function 'g' in pkg/m.py" --module pkg.m --lines 9 --function g
refuse "already a range" "m.py:8:5: error: lines 8-10 are already a range ('pkg.m:L8-10'); nothing to add" --module pkg.m --lines 8-10
refuse "source does not parse" "bad.py: error: does not parse; cannot place ranges in it" --module pkg.bad --lines 1-2
expect_rc 2 "bad --lines" fb --module pkg.m --lines 9-3
[ "$(sum "$R")" = "$before" ] && ok || bad "bad --lines changed the rule file"
# a rule file with errors is reported and left alone
printf 'targets:\n  pkg.m:\n    bogus: 1\n' > "$T/err.yaml"
s0=$(sum "$T/err.yaml")
expect_rc 1 "rule file with errors" "$NC" feedback --config "$T/err.yaml" --src "$T/src" --module pkg.m --lines 8-10
has "$T/stderr" "err.yaml:3:5: error: unknown key 'bogus'" "rule error has its place"
[ "$(sum "$T/err.yaml")" = "$s0" ] && ok || bad "rule file with errors changed"
printf 'targets: [\n' > "$T/syn.yaml"
s0=$(sum "$T/syn.yaml")
expect_rc 1 "rule file with a syntax error" "$NC" feedback --config "$T/syn.yaml" --src "$T/src" --module pkg.m --lines 8-10
has "$T/stderr" "syn.yaml:2:1: error: YAML syntax error" "syntax error has its place"
[ "$(sum "$T/syn.yaml")" = "$s0" ] && ok || bad "rule file with a syntax error changed"

# --snap widens to whole statements and says so
expect_rc 0 "--snap" fb --module pkg.m --lines 16 --function A.g --snap
has "$T/stderr" "added pkg.m lines 16-16 (range 'A.g:L16')" "snapped range added"

# undo steps back, one change at a time, to the original bytes
expect_rc 0 "undo 1" "$NC" feedback --config "$R" --undo
same "$R" "$T/want2.yaml" "undo 1 restores the second state"
expect_rc 0 "undo 2" "$NC" feedback --config "$R" --undo
same "$R" "$T/want1.yaml" "undo 2 restores the first state"
expect_rc 0 "undo 3" "$NC" feedback --config "$R" --undo
same "$R" "$T/orig.yaml" "undo 3 restores the original"
expect_rc 1 "nothing left to undo" "$NC" feedback --config "$R" --undo
has "$T/stderr" "nothing to undo" "nothing to undo message"
# an undo refuses when the file was edited by hand since
expect_rc 0 "add again" fb --module pkg.m --lines 8-10
echo "# hand edit" >> "$R"
before=$(sum "$R")
expect_rc 1 "undo after a hand edit" "$NC" feedback --config "$R" --undo
has "$T/stderr" "changed since ncrewrite last wrote it" "hand edit detected"
[ "$(sum "$R")" = "$before" ] && ok || bad "refused undo changed the file"
has "$R.history.jsonl" '"command":"feedback","what":"pkg.m lines 8-10 (range '"'"'pkg.m:L8-10'"'"')","why":"loop is slow"' "history records what and why"
has "$R.history.jsonl" '"time":"2023-11-14T22:13:20Z"' "history records when"

# other layouts: JSON (flow, one item per line), YAML flow, empty and
# target-less files
printf '{\n  "targets": {\n    "pkg.m": {\n      "func_line_range_wrappings": [\n        {"start_line": 5, "end_line": 5}\n      ]\n    }\n  }\n}\n' > "$T/r.json"
expect_rc 0 "JSON" "$NC" feedback --config "$T/r.json" --src "$T/src" --module pkg.m --lines 8-10
printf '{\n  "targets": {\n    "pkg.m": {\n      "func_line_range_wrappings": [\n        {"start_line": 5, "end_line": 5},\n        {"start_line": 8, "end_line": 10, "start_line_content": "for i in range(3):"}\n      ]\n    }\n  }\n}\n' > "$T/want.json"
same "$T/r.json" "$T/want.json" "JSON appended in its layout"
printf 'targets: {pkg.m: {func_context_wrappings: {f: {}}}}' > "$T/flow.yaml"
expect_rc 0 "YAML flow" "$NC" feedback --config "$T/flow.yaml" --src "$T/src" --module pkg.m --lines 8-10
printf 'targets: {pkg.m: {func_context_wrappings: {f: {}}, "func_line_range_wrappings": [{"start_line": 8, "end_line": 10, "start_line_content": "for i in range(3):"}]}}' > "$T/want-flow.yaml"
same "$T/flow.yaml" "$T/want-flow.yaml" "YAML flow extended"
printf '# nothing yet\n' > "$T/empty.yaml"
expect_rc 0 "comment-only file" "$NC" feedback --config "$T/empty.yaml" --src "$T/src" --module pkg.m --lines 5
printf '# nothing yet\ntargets:\n  pkg.m:\n    func_line_range_wrappings:\n      - start_line: 5\n        end_line: 5\n        start_line_content: "y = x + 1"\n' > "$T/want-empty.yaml"
same "$T/empty.yaml" "$T/want-empty.yaml" "targets created in a comment-only file"
printf 'full_trace_mode: false' > "$T/nt.yaml"
expect_rc 0 "no targets key, no final newline" "$NC" feedback --config "$T/nt.yaml" --src "$T/src" --module pkg.m --lines 5
printf 'full_trace_mode: false\ntargets:\n  pkg.m:\n    func_line_range_wrappings:\n      - start_line: 5\n        end_line: 5\n        start_line_content: "y = x + 1"\n' > "$T/want-nt.yaml"
same "$T/nt.yaml" "$T/want-nt.yaml" "targets appended after a line without newline"

# a target with no value (full trace of one module, as the tutorial starts)
printf 'full_trace_mode: true\ntargets:\n  pkg.m:\n' > "$T/ft.yaml"
expect_rc 0 "target without a value" "$NC" feedback --config "$T/ft.yaml" --src "$T/src" --module pkg.m --lines 8-10
printf 'full_trace_mode: true\ntargets:\n  pkg.m:\n    func_line_range_wrappings:\n      - start_line: 8\n        end_line: 10\n        start_line_content: "for i in range(3):"\n' > "$T/want-ft.yaml"
same "$T/ft.yaml" "$T/want-ft.yaml" "entries added under a key without a value"

# C files: the module is a path under SRC; the C rewriter checks the lines
printf '#include <stdio.h>\n\nint work(int n) {\n  int s = 0;\n  for (int i = 0; i < n; i++)\n    s += i;\n  printf("%%d\\n", s);\n  return s;\n}\n' > "$T/src/k.c"
printf 'targets:\n  "k.c":\n    func_context_wrappings:\n      work: {}\n' > "$T/c.yaml"
expect_rc 0 "C loop" "$NC" feedback --config "$T/c.yaml" --src "$T/src" --module k.c --lines 5-6
printf 'targets:\n  "k.c":\n    func_context_wrappings:\n      work: {}\n    func_line_range_wrappings:\n      - start_line: 5\n        end_line: 6\n        start_line_content: "for (int i = 0; i < n; i++)"\n' > "$T/want-c.yaml"
same "$T/c.yaml" "$T/want-c.yaml" "C range added"
has "$T/stderr" "range 'work:L5-6'" "C range named by its function"
before=$(sum "$T/c.yaml")
expect_rc 1 "C lines outside a function" "$NC" feedback --config "$T/c.yaml" --src "$T/src" --module k.c --lines 1
has "$T/stderr" "k.c:1:1: error: lines 1-1: lines 1-1 are not inside the body of a host function in k.c" "C outside message"
expect_rc 1 "C unknown file" "$NC" feedback --config "$T/c.yaml" --src "$T/src" --module nothere.c --lines 1
has "$T/stderr" "ncrewrite: error: module 'nothere.c' not found under $T/src (looked for nothere.c)" "C unknown file message"
[ "$(sum "$T/c.yaml")" = "$before" ] && ok || bad "refused C feedback changed the rule file"

# a rule file reached through a symbolic link: the file changes, the link stays
mkdir -p "$T/shared"
printf 'targets:\n  pkg.m:\n    func_context_wrappings:\n      f: {}\n' > "$T/shared/real.yaml"
ln -s shared/real.yaml "$T/link.yaml"
expect_rc 0 "through a link" "$NC" feedback --config "$T/link.yaml" --src "$T/src" --module pkg.m --lines 5
[ -L "$T/link.yaml" ] && ok || bad "the link was replaced by a file"
has "$T/shared/real.yaml" 'start_line_content: "y = x + 1"' "the linked file changed"

# a rule file that does not exist yet is created
expect_rc 0 "new rule file" "$NC" feedback --config "$T/new.yaml" --src "$T/src" --module pkg.m --lines 5
printf 'targets:\n  pkg.m:\n    func_line_range_wrappings:\n      - start_line: 5\n        end_line: 5\n        start_line_content: "y = x + 1"\n' > "$T/want-new.yaml"
same "$T/new.yaml" "$T/want-new.yaml" "new rule file written"

# lines that are a whole function (def to its end) time each call: the body
# is the range, not the def statement (issue 32: a range around the def ran
# once, at import); a docstring is left out, decorators count as the def
cat > "$T/src/whole.py" <<'EOF'
"""Doc."""


def plain(x):
    """plain's doc."""
    y = x + 1
    return y


@staticmethod
def decorated(x):
    return x

# a comment after it


def part(x):
    y = x + 1
    return y
EOF
expect_rc 0 "whole function" "$NC" feedback --config "$T/whole.yaml" --src "$T/src" --module whole --lines 4-7
has "$T/stderr" "lines 4-7 are a whole function plain: its body, lines 6-7, is the range" "whole function message"
has "$T/whole.yaml" 'start_line: 6' "whole function: the body's first statement"
has "$T/whole.yaml" 'end_line: 7' "whole function: the body's last statement"
expect_rc 0 "decorated whole function, trailing comment" "$NC" feedback --config "$T/whole.yaml" --src "$T/src" --module whole --lines 10-14
has "$T/stderr" "its body, lines 12-12, is the range" "decorated function's body"
# a def and only part of its body is not the whole function: snapped to the def
expect_rc 0 "def with part of its body" "$NC" feedback --config "$T/part.yaml" --src "$T/src" --module whole --lines 17-18 --snap
has "$T/stderr" "snapped to whole statements 17-19" "part of a function snaps to the def"
# a docstring may not start a range (it must stay first: __doc__)
before=$(sum "$T/whole.yaml")
expect_rc 1 "range over the module docstring" "$NC" feedback --config "$T/whole.yaml" --src "$T/src" --module whole --lines 1-4 --snap
has "$T/stderr" "include a docstring, which must stay first in its block" "docstring refused"
[ "$(sum "$T/whole.yaml")" = "$before" ] && ok || bad "refused docstring range changed the rule file"

echo "feedback: $pass passed, $fail failed"
[ "$fail" = 0 ]
