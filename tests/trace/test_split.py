#!/usr/bin/env python3
"""Split loading: a plain trace of 32 MB or more is read by two threads,
the second from a guessed event boundary near the middle. Whatever the
guess, the result must be the sequential one (NCTRACE_THREADS=1): the same
summary (Markdown and JSON), the same filter output, the same errors. Each
case also checks which way the load went (NCTRACE_SPLIT_REPORT), so the
fast path and every fallback are exercised:

  kineto      a torch.profiler-like trace (bench/trace/gen_trace.py): taken
              (summary, filter and the report page)
  args-halves a name's args differ only between the halves: the report's
              per-name record of them says so, the same as in one pass
  trailing    header members after traceEvents (rank, base time): taken
  nested      the middle falls inside huge args holding lists of objects:
              the guess is no event boundary, the first reader goes on
  begin-end   a B/E pair spans the middle: halves cannot pair it
  malformed   a bad event in the second half: same note (file:line:col),
              and under --strict the same error and status
  gzip        a .gz file is never split; from 1 MB on it is inflated by a
              second thread ahead of the scan (inflate.c): the same outputs,
              and the same errors for a truncated or corrupt stream and for
              bad JSON inside it

    test_split.py NCTRACE"""
import json
import gzip
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "..", "..", "bench", "trace", "gen_trace.py")
SIZE = 34 << 20  # just over the split threshold


class Fail(Exception):
    pass


def run(nct, args, threads):
    env = dict(os.environ, NCTRACE_SPLIT_REPORT="1")
    if threads == 1:
        env["NCTRACE_THREADS"] = "1"
    r = subprocess.run([nct] + args, capture_output=True, text=True, env=env)
    report = [l for l in r.stderr.splitlines() if l.startswith("nctrace: split load") or "read by one thread" in l
              or "inflated on a second thread" in l]
    rest = "\n".join(l for l in r.stderr.splitlines() if l not in report)
    return r.returncode, r.stdout, rest, report


def same(nct, args, want, tmp):
    """Run args both ways; outputs (stdout, -o files) must match; the split
    report must contain `want`."""
    outs = []
    for threads in (2, 1):
        a = [x.replace("@OUT@", os.path.join(tmp, "out%d" % threads)) for x in args]
        rc, out, err, report = run(nct, a, threads)
        files = {}
        for x in a:
            if x.startswith(os.path.join(tmp, "out")) and os.path.exists(x):
                files = open(x, "rb").read()
        outs.append((rc, out, err, files))
        if threads == 2 and not any(want in l for l in report):
            raise Fail("%s: expected a split report with %r, got %s" % (args, want, report))
    if outs[0] != outs[1]:
        raise Fail("%s: two threads gave %r... one gave %r..." % (args, str(outs[0])[:300], str(outs[1])[:300]))
    return outs[0]


def write_events(path, events, head="", tail=""):
    with open(path, "w") as f:
        f.write('{"schemaVersion": 1,%s "traceEvents": [\n' % head)
        f.write(",\n".join(json.dumps(e) for e in events))
        f.write("\n]%s}\n" % tail)


def x(name, ts, dur, tid=1, **args):
    return {"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


def filler(n, start=0):
    return [x("f%d" % (i % 50), start + i * 10, 5, tid=1 + i % 3, pad="p" * 150) for i in range(n)]


def main():
    nct = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "kineto.json")
        subprocess.run([sys.executable, GEN, p, str(SIZE / 1e6)], check=True, capture_output=True)
        same(nct, ["summary", p], "taken", tmp)
        same(nct, ["summary", p, "--format", "json", "--top", "1000"], "taken", tmp)
        rc, _, _, out = same(nct, ["filter", p, "-o", "@OUT@", "--include-cuda-kernels", "--min-dur-us", "20"],
                             "taken", tmp)
        if rc or not out:
            raise Fail("filter wrote nothing")

        # the report keeps what each name's args say (the hover): the same
        # page both ways
        same(nct, ["report", p, "-o", "@OUT@"], "taken", tmp)

        n = SIZE // 230
        # a name's args that change only in the second half, and a name whose
        # events have args only there: merged, they differ between calls
        p = os.path.join(tmp, "args-halves.json")
        ev = filler(n)
        for i, e in enumerate(ev):
            if e["name"] == "f7":
                e["args"]["v"] = 1 if i < n // 2 else 2
            if e["name"] == "f9" and i < n // 2:
                del e["args"]
        write_events(p, ev)
        rc, _, _, page = same(nct, ["report", p, "-o", "@OUT@"], "taken", tmp)
        data = json.loads(page.decode().split('id="nc-data">', 1)[1].split("</script>", 1)[0])
        na = {data["names"][int(k)]: {a[0]: a for a in v} for k, v in data["name_args"].items()}
        if na["f7"]["v"][2] != 1 or na["f7"]["pad"][2] != 0 or na["f9"]["pad"][2] != 1 or na["f8"]["pad"][2]:
            raise Fail("args across halves: f7 %s, f8 %s, f9 %s" % (na["f7"], na["f8"], na["f9"]))
        p = os.path.join(tmp, "trailing.json")
        write_events(p, filler(n), tail=', "distributedInfo": {"rank": 3, "world_size": 4}, '
                     '"baseTimeNanoseconds": 1700000000000000000, "traceName": "t"')
        rc, out, _, _ = same(nct, ["summary", p, "--format", "json"], "taken", tmp)
        if json.loads(out)["structured"]["ranks"][0]["rank"] != 3:
            raise Fail("rank from the members after traceEvents was lost")

        p = os.path.join(tmp, "nested.json")
        big = [{"k%d" % j: j} for j in range(25000)]
        write_events(p, [x("big%d" % i, i * 100, 50, items=big) for i in range(SIZE // 400000)])
        # make the lists of objects one per line, so the guess finds them
        data = open(p).read().replace("}, {", "},\n {")
        open(p, "w").write(data)
        same(nct, ["summary", p], "not an event boundary", tmp)

        p = os.path.join(tmp, "begin-end.json")
        ev = [{"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 0}] + filler(n, 1) + \
             [{"ph": "E", "name": "outer", "pid": 1, "tid": 1, "ts": 10 * n + 100}]
        write_events(p, ev)
        same(nct, ["summary", p], "B/E events", tmp)

        p = os.path.join(tmp, "malformed.json")
        ev = filler(n)
        del ev[n * 3 // 4]["dur"]
        write_events(p, ev)
        rc, out, _, _ = same(nct, ["summary", p], "taken", tmp)
        if "malformed.json:" not in out or "complete event without" not in out:
            raise Fail("the skipped event is not noted with its place: %s" % out[-500:])
        rc, out, err, _ = same(nct, ["summary", "--strict", p], "second half failed", tmp)
        if rc != 1 or "error: complete event without" not in err:
            raise Fail("--strict: status %d, %r" % (rc, err))

        p = os.path.join(tmp, "kineto.json.gz")
        with open(os.path.join(tmp, "kineto.json"), "rb") as f, gzip.open(p, "wb", 1) as g:
            g.write(f.read())
        same(nct, ["summary", p], "read by one thread", tmp)
        same(nct, ["summary", p], "inflated on a second thread", tmp)
        same(nct, ["summary", p, "--format", "json", "--top", "1000"], "inflated on a second thread", tmp)
        rc, _, _, out = same(nct, ["filter", p, "-o", "@OUT@", "--include-cuda-kernels"], "inflated", tmp)
        if rc or not out:
            raise Fail("filter of the .gz wrote nothing")
        data = open(p, "rb").read()
        cut = os.path.join(tmp, "cut.json.gz")
        open(cut, "wb").write(data[:len(data) * 3 // 5])
        rc, _, err, _ = same(nct, ["summary", cut], "inflated on a second thread", tmp)
        if rc != 1 or "truncated gzip stream" not in err:
            raise Fail("truncated .gz: status %d, %r" % (rc, err[-300:]))
        bad = os.path.join(tmp, "corrupt.json.gz")
        mid = len(data) // 2
        open(bad, "wb").write(data[:mid] + bytes(b ^ 0x5a for b in data[mid:mid + 4096]) + data[mid + 4096:])
        rc, _, err, _ = same(nct, ["summary", bad], "inflated on a second thread", tmp)
        # zlib finds the damage, or the scanner the garbage it inflates to first
        if rc != 1 or not ("corrupt gzip data" in err or "error: expected" in err):
            raise Fail("corrupt .gz: status %d, %r" % (rc, err[-300:]))
        mal = os.path.join(tmp, "malformed.json.gz")
        text = open(os.path.join(tmp, "kineto.json"), "rb").read()
        at = text.index(b'"dur":', len(text) * 2 // 3)  # one event past the middle loses its dur
        with gzip.open(mal, "wb", 1) as g:
            g.write(text[:at] + b'"dux":' + text[at + 6:])
        rc, out, _, _ = same(nct, ["summary", mal], "inflated on a second thread", tmp)
        if "malformed.json.gz:" not in out or "complete event without" not in out:
            raise Fail("bad JSON inside a .gz is not noted with its place: %s" % out[-500:])
    print("ok")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Fail as e:
        print("FAILED: %s" % e)
        sys.exit(1)
