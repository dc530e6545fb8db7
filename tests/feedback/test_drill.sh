#!/usr/bin/env bash
# ncrewrite drill and prune on hand-made traces whose figures are worked out
# here: which ranges are on top by exclusive time, what is added inside them,
# what is pruned; bad traces leave the rule file byte-identical.
# Usage: test_drill.sh NCREWRITE
set -u
NC="$1"
. "$(dirname "$0")/lib.sh"
# the same, with runs of spaces squeezed (table layout is not the point)
hsq() { tr -s ' ' < "$1" > "$1.sq"; has "$1.sq" "$2" "$3"; }

mkdir -p "$T/src/pkg"
cat > "$T/src/pkg/m.py" <<'EOF'
import math


def f(x):
    y = x
    z = math.sqrt(
        y)
    for i in range(3):
        y += i
        z += y
    return z


class A:
    def g(self):
        return f(2)
EOF
# (lines 5 and 11 assign and return a name: they do no work, so drill
# leaves them out; operators would count, see test_drill_lines.sh)
cat > "$T/rules.yaml" <<'EOF'
targets:
  pkg.m:
    func_context_wrappings:
      f: {}
      A.g: {}
EOF
R="$T/rules.yaml"
cp "$R" "$T/orig.yaml"
expect_rc 0 "instrument" "$NC" -q --config "$R" "$T/src" "$T/out"
F="$T/out/pkg/m.py"
# One thread: f [0,1000us] holding a range 'inner' [100,400] -> f exclusive
# 700us; f again [2000,2500] -> 500us: f 1.200 ms over 2 calls. A.g
# [3000,3900] -> 0.900 ms. 'inner' 0.300 ms (no rule made it).
ev() { printf '{"ph":"X","cat":"user_annotation","name":"%s","pid":1,"tid":1,"ts":%s,"dur":%s,"args":{"depth":0,"file":"%s","line":%s}}' "$@"; }
{
  printf '{"schemaVersion":1,"traceEvents":[\n'
  ev f 0 1000 "$F" 4; printf ',\n'
  ev inner 100 300 "$F" 6; printf ',\n'
  ev f 2000 500 "$F" 4; printf ',\n'
  ev A.g 3000 900 "$F" 15; printf ',\n'
  printf '{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":2,"ts":0,"dur":5000,"args":{}}\n'
  printf ']}\n'
} > "$T/t.json"
gzip -c "$T/t.json" > "$T/t.json.gz"

expect_rc 0 "drill --top 1" "$NC" drill --config "$R" --src "$T/src" --trace "$T/t.json.gz" --top 1
hsq "$T/stdout" "f 1.200 ms exclusive (50.0%), 2 calls" "f on top with its figures"
has "$T/stdout" "+ pkg/m.py:6-7 in f" "first statement with a call"
has "$T/stdout" "+ pkg/m.py:8-10 in f" "the loop"
cat > "$T/want1.yaml" <<'EOF'
targets:
  pkg.m:
    func_context_wrappings:
      f: {}
      A.g: {}
    func_line_range_wrappings:
      - function: f
        start_line: 6
        end_line: 7
        start_line_content: "z = math.sqrt("
        reasoning: "drill: 'f' took 1.200 ms exclusive over 2 calls"
      - function: f
        start_line: 8
        end_line: 10
        start_line_content: "for i in range(3):"
        reasoning: "drill: 'f' took 1.200 ms exclusive over 2 calls"
EOF
same "$R" "$T/want1.yaml" "drill adds the next level inside f"
# again, top 3: f's statements are ranges already, A.g holds one plain
# statement, 'inner' comes from no rule
expect_rc 3 "drill --top 3 again" "$NC" drill --config "$R" --src "$T/src" --trace "$T/t.json" --top 3
has "$T/stdout" "- pkg/m.py:6-7 skipped: already a range ('f:L6-7')" "existing range not added twice"
hsq "$T/stdout" "A.g 0.900 ms exclusive (37.5%), 1 call" "A.g second"
has "$T/stdout" "pkg/m.py:16-16: nothing inside worth a range of its own" "A.g has nothing inside"
hsq "$T/stdout" "inner 0.300 ms exclusive (12.5%), 1 call" "inner third"
has "$T/stdout" "not found in a shadow tree's manifest" "inner has no rule"
has "$T/stdout" "drill: nothing left worth splitting (rule file unchanged)" "nothing new"
same "$R" "$T/want1.yaml" "nothing added the second time"
# a run directory as ncrun prints it: the same as its trace named by hand
mkdir -p "$T/rundir"
cp "$T/t.json.gz" "$T/rundir/m-rank0.pt.trace.json.gz"
echo '{}' > "$T/rundir/env.json"
expect_rc 3 "drill --trace RUNDIR" "$NC" drill --config "$R" --src "$T/src" --trace "$T/rundir" --top 3
hsq "$T/stdout" "A.g 0.900 ms exclusive (37.5%), 1 call" "a run directory is read like its trace"
same "$R" "$T/want1.yaml" "nothing added from the run directory either"
# a run directory that records what the run was made from (as ncrun writes
# env.json): a trace from before OUT was rewritten, or from before the rules
# changed, is refused with what changed, the rule file untouched; --stale
# uses it anyway
envjson() { # envjson OUT RULES_DIGEST: the shadow entry ncrun writes for OUT as it is now
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
m = open(sys.argv[1] + "/.ncrewrite/manifest.json", "rb").read()
h = 14695981039346656037
for b in m:
    h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
digest = sys.argv[2] or json.loads(m)["rules_digest"]
print(json.dumps({"shadow": {"dir": sys.argv[1], "manifest": "%016x" % h, "rules_digest": digest}}))
PY
}
expect_rc 0 "re-instrument (the rules changed above)" "$NC" -q --config "$R" "$T/src" "$T/out"
mkdir -p "$T/staledir"
cp "$T/t.json.gz" "$T/staledir/m-rank0.pt.trace.json.gz"
envjson "$T/out" "" > "$T/staledir/env.json"
expect_rc 3 "drill: the run matches OUT and the rules (nothing new to add: not refused)" "$NC" drill --config "$R" --src "$T/src" --trace "$T/staledir" --top 3
cp "$R" "$T/before-stale.yaml"
printf 'different\n' >> "$T/out/.ncrewrite/manifest.json"
expect_rc 1 "drill: OUT rewritten since the run" "$NC" drill --config "$R" --src "$T/src" --trace "$T/staledir" --top 3
has "$T/stderr" "drill: the shadow tree $T/out was rewritten after this run (its manifest is not the one the run used)" "stale OUT message"
same "$R" "$T/before-stale.yaml" "a stale trace leaves the rules as they were"
expect_rc 3 "drill --stale (used: nothing left, not refused)" "$NC" drill --stale --config "$R" --src "$T/src" --trace "$T/staledir" --top 3
has "$T/stderr" "(--stale: used anyway)" "--stale says it used the trace"
expect_rc 0 "re-instrument" "$NC" -q --config "$R" "$T/src" "$T/out"
envjson "$T/out" 0123456789abcdef > "$T/staledir/env.json"
expect_rc 1 "prune: the rules changed since the run" "$NC" prune --config "$R" --trace "$T/staledir"
has "$T/stderr" "prune: $R changed after the shadow tree of this run was written from it" "stale rules message"
same "$R" "$T/before-stale.yaml" "prune on a stale trace leaves the rules as they were"
mkdir -p "$T/emptyrun"
expect_rc 1 "drill --trace on a directory without traces" "$NC" drill --config "$R" --src "$T/src" --trace "$T/emptyrun"
has "$T/stderr" "no trace in this directory" "an empty run directory is named as such"

# --min-share (default 1 %): f holds 0.5 % of the exclusive time here, so
# it is not split, and with nothing else to split drill says so, exit 3;
# at --min-share 0.1 it is split
cp "$T/orig.yaml" "$T/ms.yaml"
expect_rc 0 "instrument for --min-share" "$NC" -q --config "$T/ms.yaml" "$T/src" "$T/outms"
{ printf '{"traceEvents":[\n'; ev A.g 0 1990 "$T/outms/pkg/m.py" 15; printf ',\n'; ev f 2000 10 "$T/outms/pkg/m.py" 4
  printf '\n]}\n'; } > "$T/ms.json"
expect_rc 3 "drill: f under 1 %" "$NC" drill --config "$T/ms.yaml" --src "$T/src" --trace "$T/ms.json"
has "$T/stdout" "the other range holds under 1% of the exclusive time (--min-share): not split" "f under the default share"
has "$T/stdout" "drill: nothing left worth splitting (rule file unchanged)" "nothing left over 1 %"
same "$T/ms.yaml" "$T/orig.yaml" "nothing written under the minimum share"
expect_rc 0 "drill --min-share 0.1" "$NC" drill --config "$T/ms.yaml" --src "$T/src" --trace "$T/ms.json" --min-share 0.1
has "$T/stdout" "+ pkg/m.py:6-7 in f" "f split over --min-share 0.1"
expect_rc 2 "drill --min-share 101" "$NC" drill --config "$T/ms.yaml" --src "$T/src" --trace "$T/ms.json" --min-share 101
has "$T/stderr" "--min-share needs a percentage from 0 to 100, not '101'" "bad --min-share named"

# bad traces: clear message, rule file untouched
before=$(sum "$R")
expect_rc 1 "missing trace" "$NC" drill --config "$R" --src "$T/src" --trace "$T/nothere.json.gz"
has "$T/stderr" "nothere.json.gz" "missing trace named"
has "$T/stderr" "left unchanged" "missing trace: unchanged"
head -c 100 "$T/t.json.gz" > "$T/cut.json.gz"
expect_rc 1 "truncated gzip" "$NC" drill --config "$R" --src "$T/src" --trace "$T/cut.json.gz"
has "$T/stderr" "error:" "truncated gzip reported"
printf '{"traceEvents": [ {"ph": "X", }\n' > "$T/bad.json"
expect_rc 1 "not JSON" "$NC" drill --config "$R" --src "$T/src" --trace "$T/bad.json"
has "$T/stderr" "bad.json:1:" "syntax error with its place"
expect_rc 1 "prune on a bad trace" "$NC" prune --config "$R" --trace "$T/bad.json"
[ "$(sum "$R")" = "$before" ] && ok || bad "bad traces changed the rule file"
printf 'targets:\n  pkg.m:\n    bogus: 1\n' > "$T/err.yaml"
s0=$(sum "$T/err.yaml")
expect_rc 1 "drill, rule file with errors" "$NC" drill --config "$T/err.yaml" --src "$T/src" --trace "$T/t.json"
has "$T/stderr" "err.yaml:3:5: error: unknown key 'bogus'" "rule error has its place"
[ "$(sum "$T/err.yaml")" = "$s0" ] && ok || bad "drill changed a rule file with errors"

# prune: re-instrument, then the loop range is called 200 times at 1us:
# over --min-calls 100 under --max-mean-us 10; f:L6-7 20 times stays
expect_rc 0 "re-instrument" "$NC" -q --config "$R" "$T/src" "$T/out"
{
  printf '{"traceEvents":[\n'
  for i in $(seq 0 199); do ev "f:L8-10" $((i * 10)) 1 "$F" 7; printf ',\n'; done
  for i in $(seq 0 19); do ev "f:L6-7" $((5000 + i * 10)) 1 "$F" 5; printf ',\n'; done
  ev f 0 9000 "$F" 4
  printf ']}\n'
} > "$T/p.json"
expect_rc 0 "prune" "$NC" prune --config "$R" --trace "$T/p.json" --min-calls 100 --max-mean-us 10
hsq "$T/stdout" "prune: f:L8-10 200 calls, mean 1.000 us: rule at $R:12 removed" "prune says what"
head -n 11 "$T/want1.yaml" > "$T/want2.yaml"
same "$R" "$T/want2.yaml" "prune removes the loop's rule, lines and all"
expect_rc 0 "prune with defaults: nothing" "$NC" prune --config "$R" --trace "$T/p.json"
has "$T/stdout" "prune: nothing to remove" "defaults keep 200 calls"
# the last entry of a list: the list's key goes with it
{
  printf '{"traceEvents":[\n'
  for i in $(seq 0 149); do ev "f:L6-7" $((i * 10)) 2 "$F" 5; printf ',\n'; done
  ev f 0 9000 "$F" 4
  printf ']}\n'
} > "$T/p2.json"
expect_rc 0 "prune the last line range" "$NC" prune --config "$R" --trace "$T/p2.json" --min-calls 100 --max-mean-us 10
same "$R" "$T/orig.yaml" "the emptied list's key is removed too"
expect_rc 0 "undo prune 2" "$NC" feedback --config "$R" --undo
same "$R" "$T/want2.yaml" "undo prune 2"
# undo steps back over prune, then over drill
expect_rc 0 "undo prune" "$NC" feedback --config "$R" --undo
same "$R" "$T/want1.yaml" "undo prune"
# both line ranges at once: the list goes, with its key
{
  printf '{"traceEvents":[\n'
  for i in $(seq 0 149); do ev "f:L6-7" $((i * 10)) 2 "$F" 5; printf ',\n'; ev "f:L8-10" $((i * 10 + 3)) 2 "$F" 7; printf ',\n'; done
  ev f 0 9000 "$F" 4
  printf ']}\n'
} > "$T/p3.json"
expect_rc 0 "prune a whole list" "$NC" prune --config "$R" --trace "$T/p3.json" --min-calls 100 --max-mean-us 10
same "$R" "$T/orig.yaml" "the list and its key removed"
expect_rc 0 "undo prune 3" "$NC" feedback --config "$R" --undo
same "$R" "$T/want1.yaml" "undo prune 3"
expect_rc 0 "undo drill" "$NC" feedback --config "$R" --undo
same "$R" "$T/orig.yaml" "undo drill"

# prune in flow style: JSON rule files, YAML [..] lists. A member goes with
# one comma (the one after it, or for the last, the one before it); the last
# member of a list takes the list's key with it.
J="$T/rules.json"
cat > "$J" <<'EOF'
{
  "targets": {
    "pkg.m": {
      "func_context_wrappings": {"f": {}, "A.g": {}},
      "func_line_range_wrappings": [
        {"function": "f", "start_line": 6, "end_line": 7},
        {"function": "f", "start_line": 8, "end_line": 10}
      ]
    }
  }
}
EOF
# (prune finds a range's rule through the manifest of the tree it ran from)
expect_rc 0 "instrument, JSON" "$NC" -q --config "$J" "$T/src" "$T/out"
expect_rc 0 "prune, JSON" "$NC" prune --config "$J" --trace "$T/p.json" --min-calls 100 --max-mean-us 10
cat > "$T/wantj1.json" <<'EOF'
{
  "targets": {
    "pkg.m": {
      "func_context_wrappings": {"f": {}, "A.g": {}},
      "func_line_range_wrappings": [
        {"function": "f", "start_line": 6, "end_line": 7}
      ]
    }
  }
}
EOF
same "$J" "$T/wantj1.json" "prune, JSON: the last item goes with the comma before it"
expect_rc 0 "re-instrument, JSON" "$NC" -q --config "$J" "$T/src" "$T/out"
expect_rc 0 "prune, JSON, the last range" "$NC" prune --config "$J" --trace "$T/p2.json" --min-calls 100 --max-mean-us 10
cat > "$T/wantj2.json" <<'EOF'
{
  "targets": {
    "pkg.m": {
      "func_context_wrappings": {"f": {}, "A.g": {}}
    }
  }
}
EOF
same "$J" "$T/wantj2.json" "prune, JSON: the emptied list goes with its key and comma"
Y="$T/flow.yaml"
cat > "$Y" <<'EOF'
targets:
  pkg.m:
    func_context_wrappings: {f: {}}
    func_line_range_wrappings: [{function: f, start_line: 6, end_line: 7},   # the call
                                {function: f, start_line: 8, end_line: 10}]  # the loop
EOF
expect_rc 0 "instrument, YAML flow" "$NC" -q --config "$Y" "$T/src" "$T/out"
expect_rc 0 "prune, YAML flow list" "$NC" prune --config "$Y" --trace "$T/p2.json" --min-calls 100 --max-mean-us 10
printf 'targets:\n  pkg.m:\n    func_context_wrappings: {f: {}}\n    func_line_range_wrappings: [{function: f, start_line: 8, end_line: 10}]  # the loop\n' > "$T/wanty.yaml"
same "$Y" "$T/wanty.yaml" "prune, YAML flow: the first item goes with the comma after it"

# CUDA host code: a function under extern "C" (the node at its first line is
# the linkage specification, the function inside it), and --top counting
# the ranges refined: 'one' is on top (1.000 ms) but holds a single
# statement, so the turn passes to 'g' (0.600 ms). Found on the H100, where
# the example's gpu_scale (extern "C") came first and drill added nothing.
mkdir -p "$T/csrc"
cat > "$T/csrc/k.cu" <<'EOF'
extern "C" int g(int *x, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += x[i];
  s += helper(s);
  return s;
}

int one(int v) {
  return v + 1;
}
EOF
cat > "$T/crules.yaml" <<'EOF'
targets:
  "k.cu":
    func_context_wrappings:
      g: {}
      one: {}
EOF
expect_rc 0 "instrument C" "$NC" -q --config "$T/crules.yaml" "$T/csrc" "$T/cout"
cev() { printf '{"ph":"X","cat":"user_annotation","name":"%s","pid":1,"tid":1,"ts":%s,"dur":%s,"args":{}}' "$@"; }
# an operator's range on top (aten::mm, as torch records it: no file, no
# line of ours inside): no rule can split it, so it is skipped with the
# reason and takes no turn (issue 30, finding 7)
{ printf '{"traceEvents":[\n'; cev "aten::mm" 3000 5000; printf ',\n'; cev one 0 1000; printf ',\n'; cev g 2000 600; printf '\n]}\n'; } > "$T/c.json"
expect_rc 0 "drill C --top 1" "$NC" drill --config "$T/crules.yaml" --src "$T/csrc" --trace "$T/c.json" --out "$T/cout" --top 1
has "$T/stdout" "skipped: an operator's range: no line of the program is inside it" "aten::mm skipped with the reason"
has "$T/stdout" "k.cu:8-10: nothing inside worth a range of its own" "one: nothing inside"
has "$T/stdout" "+ k.cu:3-3" "g under extern \"C\": its loop"
has "$T/stdout" "+ k.cu:4-4" "g under extern \"C\": the call"
grep -q "start_line: 3" "$T/crules.yaml" && ok || bad "the rule file has g's loop"

# C++: an operator may be a call of the class's own (`out = w * v`, `out +=
# v`), so it is weighed; in C it is an instruction or two and is not.
# --lines takes every statement but declarations, each named after its line
mkdir -p "$T/ppsrc"
cat > "$T/ppsrc/m.cpp" <<'EOF'
#include "mat.h"

Mat attend(const Mat &w, const Mat &v, Mat &out) {
  int n = w.rows;
  out = w * v;
  out += v;
  if (n < 0) {
    throw n;
  }
  return out;
}
EOF
cat > "$T/ppsrc/c.c" <<'EOF'
int scale(int a, int b) {
  int x = a;
  x = a * b;
  x += b;
  return x;
}
EOF
printf 'targets:\n  "m.cpp":\n    func_context_wrappings:\n      attend: {}\n  "c.c":\n    func_context_wrappings:\n      scale: {}\n' \
  > "$T/pprules.yaml"
cp "$T/pprules.yaml" "$T/pprules0.yaml"
expect_rc 0 "instrument C++ and C" "$NC" -q --config "$T/pprules.yaml" "$T/ppsrc" "$T/ppout"
{ printf '{"traceEvents":[\n'; cev attend 0 1000; printf ',\n'; cev scale 2000 900; printf '\n]}\n'; } > "$T/pp.json"
expect_rc 0 "drill C++ operators" "$NC" drill --config "$T/pprules.yaml" --src "$T/ppsrc" --trace "$T/pp.json" --out "$T/ppout"
has "$T/stdout" "+ m.cpp:5-5" "C++: out = w * v weighed"
has "$T/stdout" "+ m.cpp:6-6" "C++: out += v weighed"
has "$T/stdout" "+ m.cpp:7-9" "C++: the if whole"
has "$T/stdout" "c.c:1-6: nothing inside worth a range of its own" "C: operators are not weighed"
expect_rc 0 "drill C++ --lines" "$NC" drill --config "$T/pprules0.yaml" --src "$T/ppsrc" --trace "$T/pp.json" --out "$T/ppout" --lines --top 1
has "$T/stdout" "+ m.cpp:10-10 as 'm.cpp:10 return out;'" "C++ --lines: every statement, named after its line"
hasnt() { grep -qF -- "$2" "$1" && { bad "$3: '$2' in $(basename "$1")"; cat "$1"; } || ok; }
hasnt "$T/stdout" "m.cpp:4-4" "C++ --lines: no declaration"

# a call site's range (wrap_calls) holds the called function's time: no
# line range inside it can split that, so it is skipped with the reason
mkdir -p "$T/wsrc"
printf 'import math\n\n\ndef h(x):\n    y = math.sqrt(x)\n    return y\n' > "$T/wsrc/w.py"
printf 'targets:\n  w:\n    func_context_wrappings:\n      h:\n        wrap_calls:\n          - call_pattern: sqrt\n' \
  > "$T/wrules.yaml"
expect_rc 0 "instrument wrap_calls" "$NC" -q --config "$T/wrules.yaml" "$T/wsrc" "$T/wout"
{ printf '{"traceEvents":[\n'; ev "h:sqrt" 0 1000 "$T/wout/w.py" 5; printf '\n]}\n'; } > "$T/w.json"
expect_rc 3 "drill a call site's range" "$NC" drill --config "$T/wrules.yaml" --src "$T/wsrc" --trace "$T/w.json"
has "$T/stdout" "skipped: a call site's range: its time is the called function's" "call site skipped with the reason"

# a range named by an expression (type: variable) is recorded in the
# manifest as the expression, never in the trace: that is no sign that its
# lines did not run, so the statements of the line range inside it are
# proposed
mkdir -p "$T/vsrc"
printf 'class A:\n    def f(self):\n        x = 1 + 2\n        y = x * 3\n        return y\n' > "$T/vsrc/v.py"
cat > "$T/vrules.yaml" <<'EOF'
targets:
  v:
    class_func_context_wrappings:
      A:
        f:
          context_values: [{name: name, value: "self.__class__.__name__", type: variable}]
    func_line_range_wrappings:
      - {function: A.f, start_line: 3, end_line: 4}
EOF
expect_rc 0 "instrument a variable-named range" "$NC" -q --config "$T/vrules.yaml" "$T/vsrc" "$T/vout"
{ printf '{"traceEvents":[\n'; ev "A" 0 1000 "$T/vout/v.py" 3; printf ',\n'; ev "A.f:L3-4" 10 900 "$T/vout/v.py" 4
  printf '\n]}\n'; } > "$T/v.json"
expect_rc 0 "drill inside a variable-named range" "$NC" drill --config "$T/vrules.yaml" --src "$T/vsrc" --trace "$T/v.json" --top 1
has "$T/stdout" "+ v.py:3-3 in A.f" "a variable-named range is no sign its lines did not run"

# prune on a full trace (issue 40): a range full trace made has no rule to
# remove; prune writes an exclude entry for it instead (a new block list; an
# existing block or flow list grows in its own style; JSON gets a member),
# and the next run leaves the function out. C and Python alike.
mkdir -p "$T/fsrc"
printf 'static unsigned spin(unsigned n) { unsigned x = 0; for (unsigned i = 0; i < n; i++) x += i; return x; }\nint main(void) { unsigned s = 0; for (int i = 0; i < 200; i++) s += spin(10); return (int)(s & 1); }\n' > "$T/fsrc/prog.c"
printf 'def tiny(i):\n    return [i] * 2\n\n\ndef run():\n    return sum(len(tiny(i)) for i in range(200))\n' > "$T/fsrc/fm.py"
printf '# full trace\nfull_trace_mode: true\ntargets:\n  prog.c: {}\n  fm: {}\n' > "$T/ft.yaml"
cp "$T/ft.yaml" "$T/ft-orig.yaml"
expect_rc 0 "full trace" "$NC" -q --config "$T/ft.yaml" "$T/fsrc" "$T/fout"
{
  printf '{"traceEvents":[\n'
  for i in $(seq 0 199); do
    ev spin $((i * 10)) 1 "$T/fout/prog.c" 1; printf ',\n'; ev fm.tiny $((i * 10 + 3)) 1 "$T/fout/fm.py" 1; printf ',\n'
  done
  ev main 0 9000 "$T/fout/prog.c" 2; printf ',\n'; ev fm.run 0 9000 "$T/fout/fm.py" 5
  printf ']}\n'
} > "$T/ft.json"
expect_rc 0 "prune a full trace" "$NC" prune --config "$T/ft.yaml" --trace "$T/ft.json" --min-calls 100 --max-mean-us 10
has "$T/stdout" "prune: spin" "prune names spin"
has "$T/stdout" "full trace made it; exclude entry added" "prune says it excludes"
printf '# full trace\nfull_trace_mode: true\ntargets:\n  prog.c: {}\n  fm: {}\nexclude:\n  - fm.tiny\n  - spin\n' > "$T/ft-want.yaml"
same "$T/ft.yaml" "$T/ft-want.yaml" "a new exclude list with both names"
expect_rc 0 "full trace again" "$NC" -q --explain --config "$T/ft.yaml" "$T/fsrc" "$T/fout"
has "$T/stdout" "skipped spin: excluded by rule" "the C function is left out next time"
has "$T/stdout" "skipped tiny: excluded by rule" "the Python function is left out next time"
has "$T/stdout" "main: full-trace range 'main'" "the rest is still traced"
expect_rc 0 "undo the exclude" "$NC" feedback --config "$T/ft.yaml" --undo
same "$T/ft.yaml" "$T/ft-orig.yaml" "undo prune of a full trace"
# an existing block list grows; a flow list and JSON too
# (each instrumented again from its own rule file: the trace's ranges are
# in its manifest)
printf 'full_trace_mode: true\nexclude:\n  - "*_test"\ntargets:\n  prog.c: {}\n  fm: {}\n' > "$T/ft.yaml"
expect_rc 0 "full trace (block list)" "$NC" -q --config "$T/ft.yaml" "$T/fsrc" "$T/fout"
expect_rc 0 "prune into a block list" "$NC" prune --config "$T/ft.yaml" --trace "$T/ft.json" --min-calls 100 --max-mean-us 10
printf 'full_trace_mode: true\nexclude:\n  - "*_test"\n  - fm.tiny\n  - spin\ntargets:\n  prog.c: {}\n  fm: {}\n' > "$T/ft-want.yaml"
same "$T/ft.yaml" "$T/ft-want.yaml" "the block list grows"
printf 'full_trace_mode: true\nexclude: ["*_test"]\ntargets: {prog.c: {}, fm: {}}\n' > "$T/ft.yaml"
expect_rc 0 "full trace (flow list)" "$NC" -q --config "$T/ft.yaml" "$T/fsrc" "$T/fout"
expect_rc 0 "prune into a flow list" "$NC" prune --config "$T/ft.yaml" --trace "$T/ft.json" --min-calls 100 --max-mean-us 10
printf 'full_trace_mode: true\nexclude: ["*_test", fm.tiny, spin]\ntargets: {prog.c: {}, fm: {}}\n' > "$T/ft-want.yaml"
same "$T/ft.yaml" "$T/ft-want.yaml" "the flow list grows"
printf '{"full_trace_mode": true, "targets": {"prog.c": {}, "fm": {}}}\n' > "$T/ftrules.json"
expect_rc 0 "full trace (JSON)" "$NC" -q --config "$T/ftrules.json" "$T/fsrc" "$T/fout"
expect_rc 0 "prune into JSON" "$NC" prune --config "$T/ftrules.json" --trace "$T/ft.json" --min-calls 100 --max-mean-us 10
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d.get("exclude") != ["fm.tiny", "spin"])' "$T/ftrules.json"; then ok
else bad "JSON rules get an exclude member: $(cat "$T/ftrules.json")"; fi

echo "drill: $pass passed, $fail failed"
[ "$fail" = 0 ]
