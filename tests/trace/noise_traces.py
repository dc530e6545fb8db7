#!/usr/bin/env python3
"""Synthetic runs for the noise-aware comparison (issue 30, finding 6), shared
by test_diff_noise.py and test_report_compare_noise.py. Nothing here is
random at test time: the "noise" is a fixed linear congruential sequence,
so every run writes the same bytes and the verdicts cannot flake.

Times in µs, Kineto layout (user_annotation ranges on one thread).

single(d): run A and run B, 20 iterations each, no steps (so totals):
  - `train_step` per iteration: 450 ms plus slow_fn's time plus noise uniform in ±260 ms (sd
    about 150 ms); B's noise is A's sequence reshuffled with its mean moved
    by +20 ms, so B's total is about 20 × (31 + 20) = +1 020 ms: a larger
    change than slow_fn's, and within the noise (the standard error of the
    difference of totals is about sqrt(20 × 2) × 150 ≈ 950 ms).
  - `slow_fn` inside it: A 34 ms, B 65 ms (+31 ms, +91 %), spread ±0.2 ms:
    significant however it is tested.
  - `log_metrics` inside it: 2 ms in both, spread ±0.2 ms: no change.

runs(d): three runs per side, one iteration each, so every range has a
single call per run and only the run-to-run spread can say what is noise:
  - `setup`: A 200, 320, 90 ms; B 330, 120, 280 ms (+40 ms in the mean,
    run-to-run sd about 110 ms): within noise;
  - `slow_fn`: A 34.0, 34.2, 33.9 ms; B 65.0, 65.1, 64.8 ms: significant.
  A's runs are run directories, B's are files; B2 is gzipped."""
import gzip
import json
import os

MS = 1000


def lcg(seed):
    """Deterministic values in [0, 1)."""
    x = seed
    while True:
        x = (1103515245 * x + 12345) % (1 << 31)
        yield x / float(1 << 31)


def noise(seed, n, half_width_ms):
    g = lcg(seed)
    v = [(2 * next(g) - 1) * half_width_ms * MS for _ in range(n)]
    mean = sum(v) / n
    return [x - mean for x in v]  # centred: the shift below is exact


def events(calls):
    """calls: (name, ts, dur) in µs -> a Kineto trace document."""
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python3"}}]
    for name, ts, dur in calls:
        ev.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": 1, "ts": int(round(ts)),
                   "dur": int(round(dur)), "args": {}})
    return {"schemaVersion": 1, "traceEvents": ev}


def write(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = json.dumps(doc).encode()
    if path.endswith(".gz"):
        with gzip.open(path, "wb") as f:
            f.write(text)
    else:
        with open(path, "wb") as f:
            f.write(text)


def iteration_run(step_noise, slow_ms, shift_ms):
    calls, t = [], 0
    for i, nz in enumerate(step_noise):
        slow = slow_ms * MS + ((i % 5) - 2) * 100
        step = 450 * MS + slow + nz + shift_ms * MS  # slow_fn's time is the step's too
        calls.append(("train_step", t, step))
        calls.append(("slow_fn", t + 1000, slow))
        calls.append(("log_metrics", t + 2000 + slow, 2 * MS + ((i % 3) - 1) * 200))
        t += step + 1000
    return events(calls)


def single(d):
    """Writes d/A.json and d/B.json; returns their paths."""
    a = noise(7, 20, 260)
    b = noise(11, 20, 260)
    pa, pb = os.path.join(d, "A.json"), os.path.join(d, "B.json")
    write(pa, iteration_run(a, 34, 0))
    write(pb, iteration_run(b, 65, 20))
    return pa, pb


def one_call_run(setup_ms, slow_ms):
    return events([("setup", 0, setup_ms * MS), ("slow_fn", setup_ms * MS + 1000, slow_ms * MS)])


def runs(d):
    """Three runs per side; returns (A paths, B paths)."""
    a = []
    for i, (s, f) in enumerate([(200, 34.0), (320, 34.2), (90, 33.9)]):
        run = os.path.join(d, "A%d" % (i + 1))
        write(os.path.join(run, "app-rank0.trace.json"), one_call_run(s, f))
        a.append(run)
    b = []
    for i, (s, f) in enumerate([(330, 65.0), (120, 65.1), (280, 64.8)]):
        path = os.path.join(d, "B%d.json%s" % (i + 1, ".gz" if i == 1 else ""))
        write(path, one_call_run(s, f))
        b.append(path)
    return a, b
