#!/usr/bin/env bash
# The hooks of .pre-commit-hooks.yaml, run by Debian's pre-commit in a
# throwaway git repository, offline: the hooks come from a local git
# repository holding this tree's .pre-commit-hooks.yaml (what a user's
# `repo:` line clones), ncrewrite is on PATH (language: system).
#   test_precommit.sh NCREWRITE HOOKS_YAML
# Exit 0 passed, 1 failed, 77 skipped (pre-commit or git missing).
set -u
NC_DIR=$(cd "$(dirname "$1")" && pwd)
HOOKS=$2
for tool in pre-commit git; do
  command -v "$tool" >/dev/null || { echo "skipped: $tool is not installed (apt-get install $tool)"; exit 77; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export PATH="$NC_DIR:$PATH" PRE_COMMIT_HOME="$T/cache" HOME="$T/home"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com
mkdir -p "$HOME"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# the hooks repository, as a user's `repo:` would clone it
mkdir "$T/hooks" && cp "$HOOKS" "$T/hooks/.pre-commit-hooks.yaml"
(cd "$T/hooks" && git init -q && git add . && git commit -qm hooks) || exit 1
rev=$(git -C "$T/hooks" rev-parse HEAD)

# the user's repository: sources, rules, a committed shadow tree
R="$T/repo"
mkdir -p "$R/src/pkg" && cd "$R" && git init -q
printf 'def f(x):\n    return x + 1\n' > src/pkg/a.py
printf 'targets:\n  pkg.a:\n    func_context_wrappings:\n      f: {}\n' > ranges.yaml
ncrewrite -q --config ranges.yaml src instrumented || exit 1
cat > .pre-commit-config.yaml <<YAML
repos:
  - repo: $T/hooks
    rev: $rev
    hooks:
      - id: ncrewrite-check
        args: [--config, ranges.yaml, src, instrumented]
      - id: ncrewrite-validate
        files: ^ranges\.yaml$
YAML
git add . && git commit -qm init || exit 1
pre-commit install >/dev/null || { echo "FAIL: pre-commit install"; exit 1; }

run() { pre-commit run --all-files >"$T/out" 2>&1; echo $?; }
[ "$(run)" = 0 ] || { bad "an up-to-date tree and valid rules must pass"; cat "$T/out"; }

# a source edited without regenerating: the commit is refused, naming the file
printf 'def f(x):\n    return x + 2\n' > src/pkg/a.py
git add src/pkg/a.py
if git commit -qm stale >"$T/out" 2>&1; then bad "a commit with a stale shadow tree went through"; fi
grep -q "out of date: pkg/a.py" "$T/out" || { bad "the check hook does not name the stale file"; cat "$T/out"; }
# regenerate, commit: accepted
ncrewrite -q --config ranges.yaml src instrumented
git add -A && git commit -qm regenerated >"$T/out" 2>&1 || { bad "a regenerated tree was refused"; cat "$T/out"; }

# a broken rule file: the validate hook names the place
printf 'targets:\n  pkg.a:\n    func_context_wrapings:\n      f: {}\n' > ranges.yaml
git add ranges.yaml
[ "$(run)" = 1 ] || bad "broken rules must fail"
grep -q "ranges.yaml:3:5: error: unknown key 'func_context_wrapings'" "$T/out" ||
  { bad "the validate hook does not report file:line:col"; cat "$T/out"; }
grep -q "ncrewrite rule files are valid.*Failed" "$T/out" || { bad "the validate hook did not fail"; cat "$T/out"; }
[ $fail = 0 ] && echo ok
exit $fail
