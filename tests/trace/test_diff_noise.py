#!/usr/bin/env python3
"""`nctrace diff` knows its noise (issue 30, finding 6).

Two runs where B's `slow_fn` is +91 % on each of its 20 calls (small spread)
and `train_step`, which holds it, has a huge per-call spread and a larger
total change: diff must rank `slow_fn` first and call it significant, and
call `train_step`'s change within noise, in Markdown and in JSON. Then
three runs per side of one-call ranges, where only the run-to-run spread
can tell: `slow_fn` significant and first, `setup` (the larger change)
within noise; and the same ranges with one run per side are "unknown".
The traces come from noise_traces.py (fixed numbers, no timing).

usage: test_diff_noise.py NCTRACE"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import noise_traces  # noqa: E402


def run(nctrace, args):
    p = subprocess.run([nctrace, "diff"] + args, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, "nctrace diff %s: rc %d\n%s" % (" ".join(args), p.returncode, p.stderr)
    return p.stdout


def ranges_table(md):
    """The Ranges table's rows as {name: cells} and the names in order."""
    lines = md.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("## Ranges"))
    head = next(i for i in range(start, len(lines)) if lines[i].startswith("| range"))
    cols = [c.strip() for c in lines[head].strip("|").split("|")]
    order, rows = [], {}
    for l in lines[head + 2:]:
        if not l.startswith("|"):
            break
        cells = [c.strip() for c in l.strip("|").split("|")]
        order.append(cells[0])
        rows[cells[0]] = dict(zip(cols, cells))
    return order, rows


def json_rows(out):
    d = json.loads(out)
    return d, {r["name"]: r for r in d["ranges"]["rows"]}, [r["name"] for r in d["ranges"]["rows"]]


def check_single(nctrace, a, b):
    order, rows = ranges_table(run(nctrace, [a, b]))
    assert order[0] == "slow_fn", "slow_fn is not first: %s" % order
    assert rows["slow_fn"]["noise"] == "significant", rows["slow_fn"]
    assert rows["train_step"]["noise"] == "within noise", rows["train_step"]
    assert rows["log_metrics"]["noise"] == "within noise", rows["log_metrics"]

    d, rows, order = json_rows(run(nctrace, [a, b, "--format", "json"]))
    s, t = rows["slow_fn"], rows["train_step"]
    assert order[0] == "slow_fn", order
    # the point of the finding: the noisy row has the larger change
    assert abs(t["inclusive_delta_us"]) > abs(s["inclusive_delta_us"]), (t, s)
    assert s["significance"] == "significant" and s["noise_method"] == "calls", s
    assert t["significance"] == "within_noise" and t["noise_method"] == "calls", t
    assert s["p_value"] < 0.001 and t["p_value"] > 0.05, (s["p_value"], t["p_value"])
    assert s["confidence_pct"] > 99.9, s
    # the change's interval holds the change; the noisy one holds 0 too
    for r in (s, t):
        assert r["ci95_low_us"] <= r["inclusive_delta_us"] <= r["ci95_high_us"], r
    assert t["ci95_low_us"] < 0 < t["ci95_high_us"], t
    assert s["ci95_low_us"] > 0, s
    assert s["effect_size"] > 10, s  # 31 ms against a spread of about 0.15 ms
    assert d["a"]["runs"] == 1 and d["b"]["runs"] == 1, d["a"]


def check_runs(nctrace, a, b):
    args = a + ["--"] + b
    order, rows = ranges_table(run(nctrace, args))
    assert order[0] == "slow_fn", order
    assert rows["slow_fn"]["noise"] == "significant", rows["slow_fn"]
    assert rows["setup"]["noise"] == "within noise", rows["setup"]

    d, rows, order = json_rows(run(nctrace, args + ["--format", "json"]))
    s, u = rows["slow_fn"], rows["setup"]
    assert order == ["slow_fn", "setup"], order
    assert abs(u["inclusive_delta_us"]) > abs(s["inclusive_delta_us"]), (u, s)
    assert s["significance"] == "significant" and s["noise_method"] == "runs", s
    assert u["significance"] == "within_noise" and u["noise_method"] == "runs", u
    # the side's figure is the mean over its runs
    assert abs(s["inclusive_a_us"] - 34033.333) < 0.01 and abs(s["inclusive_b_us"] - 64966.667) < 0.01, s
    assert d["a"]["runs"] == 3 and d["b"]["runs"] == 3, (d["a"], d["b"])
    assert d["a"]["paths"] == a and d["b"]["paths"] == b, (d["a"], d["b"])

    # one run per side and one call per range: no estimate, and it says so
    d, rows, order = json_rows(run(nctrace, [a[0], b[0], "--format", "json"]))
    for name in ("slow_fn", "setup"):
        r = rows[name]
        assert r["significance"] == "unknown" and r["noise_method"] == "none", r
        assert r["p_value"] is None and r["ci95_low_us"] is None and r["effect_size"] is None, r
    order, rows = ranges_table(run(nctrace, [a[0], b[0]]))
    assert rows["setup"]["noise"] == "unknown", rows["setup"]


def main():
    nctrace = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        a, b = noise_traces.single(tmp)
        check_single(nctrace, a, b)
        ra, rb = noise_traces.runs(tmp)
        check_runs(nctrace, ra, rb)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
