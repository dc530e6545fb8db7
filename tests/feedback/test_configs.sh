#!/usr/bin/env bash
# ncrewrite config save/load/list/reset/delete and export-nsys.
# Usage: test_configs.sh NCREWRITE
set -u
NC="$1"
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/src/pkg"
printf 'def f(x):\n    y = x + 1\n    return abs(y)\n\n\nclass A:\n    def g(self):\n        return f(2)\n' > "$T/src/pkg/m.py"
cat > "$T/rules.yaml" <<'EOF'
# base rules
targets:
  pkg.m:
    func_context_wrappings:
      f: {}
      "A.*": {}
EOF
R="$T/rules.yaml"
cp "$R" "$T/orig.yaml"
cfg() { "$NC" config "$@" --config "$R"; }

expect_rc 0 "list, none yet" cfg list
[ ! -s "$T/stdout" ] && ok || bad "list printed names with none saved"
expect_rc 0 "save base" cfg save base
same "$T/.ncrewrite/configs/base.yaml" "$T/orig.yaml" "saved copy is the file"
expect_rc 0 "feedback" "$NC" feedback --config "$R" --src "$T/src" --module pkg.m --lines 3 --function f
cp "$R" "$T/fine.yaml"
expect_rc 0 "save fine" cfg save fine
expect_rc 0 "list" cfg list
printf 'base\nfine\n' > "$T/want-list"
same "$T/stdout" "$T/want-list" "list names both, sorted"
expect_rc 0 "load base" cfg load base
same "$R" "$T/orig.yaml" "load restores the saved bytes"
expect_rc 0 "undo the load" "$NC" feedback --config "$R" --undo
same "$R" "$T/fine.yaml" "a load can be undone"
expect_rc 0 "load fine" cfg load fine
expect_rc 0 "reset" cfg reset
same "$R" "$T/orig.yaml" "reset steps back over every change"
has "$T/stderr" "undid feedback: pkg.m lines 3-3" "reset says what it undid"
expect_rc 0 "reset again: nothing" cfg reset
has "$T/stderr" "nothing to reset" "second reset says so"
expect_rc 1 "load unknown" cfg load nothere
has "$T/stderr" "no configuration named 'nothere'" "unknown name message"
same "$R" "$T/orig.yaml" "failed load leaves the file"
expect_rc 2 "bad name" cfg save ../evil
[ ! -e "$T/.ncrewrite/evil.yaml" ] && ok || bad "a name escaped the configs folder"
expect_rc 2 "no verb" "$NC" config --config "$R"
has "$T/stderr" "ncrewrite config: no verb (save, load, delete, list or reset)" "no verb message"
expect_rc 2 "save without --config" "$NC" config save foo
has "$T/stderr" "ncrewrite config save: --config RULES is missing (the rule file to work on)" "missing --config message"
expect_rc 2 "load without a name" "$NC" config load --config "$R"
has "$T/stderr" "ncrewrite config load: the NAME is missing" "missing name message"
expect_rc 0 "delete" cfg delete fine
expect_rc 0 "list after delete" cfg list
printf 'base\n' > "$T/want-list"
same "$T/stdout" "$T/want-list" "deleted name gone"
printf 'targets:\n  pkg.m:\n    bogus: 1\n' > "$T/saved-bad.yaml"
cp "$T/saved-bad.yaml" "$T/.ncrewrite/configs/broken.yaml"
expect_rc 1 "load a broken config" cfg load broken
has "$T/stderr" "broken.yaml:3:5: error: unknown key 'bogus'" "broken saved config reported"
same "$R" "$T/orig.yaml" "broken load leaves the file"

# export-nsys: exact names; globs, module-level line ranges, __main__ left out
cat > "$T/x.yaml" <<'EOF'
targets:
  pkg.m:
    func_context_wrappings:
      f: {}
      "A.*": {}
    class_func_context_wrappings:
      A:
        g: {}
    func_line_range_wrappings:
      - {function: f, start_line: 2, end_line: 2}
      - {start_line: 8, end_line: 8}
  __main__:
    func_context_wrappings:
      main: {}
  "kernels/*.cu":
    func_context_wrappings:
      run: {}
EOF
expect_rc 0 "export-nsys" "$NC" export-nsys --config "$T/x.yaml" -o "$T/nsys.json"
cat > "$T/want-nsys.json" <<'EOF'
[{
		"domain":	"ncrt",
		"module":	"pkg.m",
		"functions":	["A.g", "f"]
	}]
EOF
same "$T/nsys.json" "$T/want-nsys.json" "nsys functions file"
has "$T/stderr" "'A.*' is a glob; nsys takes exact names only; left out" "glob noted"
has "$T/stderr" "a line range outside a named function has no nsys form; left out" "module-level range noted"
has "$T/stderr" "nsys does not trace functions of __main__; left out" "__main__ noted"
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[0]['module']=='pkg.m' and d[0]['functions']==['A.g','f']" "$T/nsys.json" && ok || bad "nsys file does not load as expected"
expect_rc 2 "export-nsys without -o" "$NC" export-nsys --config "$T/x.yaml"

echo "configs: $pass passed, $fail failed"
[ "$fail" = 0 ]
