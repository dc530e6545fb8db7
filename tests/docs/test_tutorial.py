#!/usr/bin/env python3
"""The tutorial's iterative workflow, run as written: every ```sh block of
docs/tutorial.md from "## The iterative workflow" on, in order, in one bash
with `set -euo pipefail`, from a directory laid out as the top of a clone
after `scripts/example` (build/ is the build being tested, examples/ a copy
of the shipped examples). The blocks use bare command names (the one set-up
step puts build/bin on PATH) and Debian's /usr/bin/python3.

Asserted: the script exits 0; the first summary has the two broad ranges
and its coverage section (the JSON one-liner prints the share),
drill adds line ranges, drill --lines names train_step's ranges after their
lines (the summary of its run has `train.py:16 loss.backward()`), the
second summary splits train_step (its L16, loss.backward(), among them),
feedback adds and --undo removes a range,
config save keeps a named copy; the copied example is instrumented, the
originals under examples/ are untouched.

    test_tutorial.py BUILD_DIR
Exit status: 0 passed, 1 failed, 77 skipped (no torch for /usr/bin/python3).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    build = os.path.abspath(sys.argv[1])
    if subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode:
        print("skipped: /usr/bin/python3 cannot import torch (apt-get install python3-torch)")
        return 77
    text = open(os.path.join(ROOT, "docs/tutorial.md")).read()
    part = text[text.index("## The iterative workflow"):]
    blocks = re.findall(r"^```sh\n(.*?)^```", part, re.S | re.M)
    if len(blocks) < 5:
        print("FAIL: only %d sh blocks in the tutorial's workflow section" % len(blocks))
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(build, os.path.join(tmp, "build"))
        shutil.copytree(os.path.join(ROOT, "examples"), os.path.join(tmp, "examples"))
        script = "set -euo pipefail\n" + "\n".join(blocks)
        env = {k: v for k, v in os.environ.items() if not k.startswith("NCRT_")}
        p = subprocess.run(["bash", "-c", script], cwd=tmp, capture_output=True, text=True, env=env, timeout=1200)
        out = p.stdout + p.stderr
        fails = []

        def check(cond, msg):
            if not cond:
                fails.append(msg)
        check(p.returncode == 0, "the tutorial's commands exited %d" % p.returncode)
        summaries = out.split("# Trace summary")
        check(len(summaries) == 4, "expected three summaries, found %d" % (len(summaries) - 1))
        if len(summaries) == 4:
            first, lines, second = summaries[1], summaries[2], summaries[3]
            check("| train.py:16 loss.backward() |" in lines and "| train.py:14 out = net(x) |" in lines,
                  "the --lines run's summary lacks ranges named after their lines")
            check("| train_step |" in first and "| Net.forward |" in first, "first summary lacks the broad ranges")
            check("## Processes and coverage" in first and "1 process(es) in 1 rank(s)" in first,
                  "first summary lacks the coverage section")
            check("| train_step:L16 |" in second and "| Net.forward:L26 |" in second,
                  "second summary does not split the ranges")
        check(re.search(r"in ranges: \d+%, before the first range: \d+ ms", out) is not None,
              "the coverage one-liner printed nothing")
        check(re.search(r"drill: added \d+ ranges inside '(train_step|Net.forward)', '(train_step|Net.forward)' of runs/first", out) is not None,
              "drill added nothing inside the top 2")
        check("added model lines 25-27 (range 'stem+blocks')" in out and "undid feedback: model lines 25-27" in out,
              "feedback/undo messages missing")
        check("saved rules.yaml as 'drilled'" in out and os.path.exists(
            os.path.join(tmp, ".ncrewrite/configs/drilled.yaml")), "config save")
        check("stem+blocks" not in open(os.path.join(tmp, "rules.yaml")).read(), "--undo left the range")
        check(open(os.path.join(tmp, "examples/torch-model/rules.yaml")).read() ==
              open(os.path.join(ROOT, "examples/torch-model/rules.yaml")).read(), "the example's rules changed")
        if fails:
            print(out[-6000:])
            for f in fails:
                print("FAIL: " + f)
            return 1
    print("ok: %d blocks of the tutorial ran as written" % len(blocks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
