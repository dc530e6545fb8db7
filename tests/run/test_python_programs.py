#!/usr/bin/env python3
"""Run test: instrumented Python behaves exactly like the original.

Instruments tests/run/py/src with tests/run/py/rules.yaml (named ranges plus
full trace), then runs the original and the shadow tree:
  1. without any ncrt module: markers must be no-ops, output identical;
  2. with tests/run/fake/ncrt.py: output identical, push/pop ranges closed in
     LIFO order on every thread (generators and coroutines interleave here, so
     a push/pop range left open across yield/await would be caught), no span
     left open, and each range opened exactly as often as the program ran it
     (counts worked out by hand below).
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# fib(10) makes 177 calls; in_threads runs fib(0..5): 1+1+3+5+9+15 = 34.
EXPECTED = {
    "range:app.work.fib": 177 + 34,
    "span:app.work.evens": 2,            # interleave(6, 8) starts two generators
    "range:app.work.interleave": 1,
    "range:interleave.loop": 1,
    "span:app.work.job": 4,
    "span:app.work.gather": 1,
    "range:app.work.fails": 5,
    "range:loop.body": 3 + 1,            # [3,4,5,6] breaks after 3 items; [1] runs once
    "range:app.work.loop_with_break": 2,
    "range:app.work.in_threads": 1,
    "range:app.work.in_threads.<locals>.worker": 6,
    "torch_range:model.forward": 1,
    "range:app.work.Model.__init__": 1,
    "range:app.work.Model.mul": 1,
    "range:app.work.Model.add": 1,
    "range:Model.add:*": 1,              # wrap_calls on `return abs(x) + 1`
    "range:app.work.Model.version": 1,
    "range:main.main": 1,
}


def run(cmd, cwd, env):
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    ncrewrite = sys.argv[1]
    src = os.path.join(HERE, "py", "src")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        rc, so, se = run([ncrewrite, "--config", os.path.join(HERE, "py", "rules.yaml"), src, out], tmp,
                         dict(os.environ))
        if rc != 0:
            print(se)
            print("FAILED: ncrewrite exited", rc)
            return 1
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        want = run([sys.executable, "main.py"], src, env)
        got = run([sys.executable, "main.py"], out, env)
        if got != want:
            failures.append("without ncrt: output differs\nwant %r\ngot  %r" % (want, got))
        log = os.path.join(tmp, "fake.json")
        fenv = dict(env, PYTHONPATH=os.path.join(HERE, "fake"), NCRT_FAKE_LOG=log)
        got = run([sys.executable, "main.py"], out, fenv)
        if got != want:
            failures.append("with ncrt: output differs\nwant %r\ngot  %r" % (want, got))
        data = json.load(open(log))
        if data["violations"]:
            failures.append("range nesting violated: %s" % data["violations"][:5])
        if data["open_spans"]:
            failures.append("%d spans still open at exit" % data["open_spans"])
        for name, n in EXPECTED.items():
            if data["counts"].get(name) != n:
                failures.append("%s: expected %d, got %s" % (name, n, data["counts"].get(name)))
        extra = sorted(set(data["counts"]) - set(EXPECTED))
        if extra:
            failures.append("unexpected ranges: %s" % extra)
    if failures:
        print("\n".join(failures))
        print("FAILED")
        return 1
    print("ok: original and instrumented programs agree; %d range names checked" % len(EXPECTED))
    return 0


if __name__ == "__main__":
    sys.exit(main())
