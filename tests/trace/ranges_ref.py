"""Reference computation of nctrace's per-range table in plain Python
(json.load), used by the tests to check nctrace on real traces.

Semantics (docs/nctrace.md): complete events of CPU categories, ordered per
(pid, tid) by (start, longest first, file order) and nested with a stack;
exclusive = duration - children's durations (a child that ends after its
parent counts up to the parent's end); inclusive counts only outermost
instances of a name. Times in integer nanoseconds."""
import gzip
import json

GPU_OR_OTHER = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "cuda_sync", "Trace", "ac2g",
                "Kernel", "Memcpy", "Memset"}


def ns(x):
    return int(round(float(x) * 1000))


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    return doc if isinstance(doc, list) else doc["traceEvents"]


def range_table(events):
    threads = {}
    for i, e in enumerate(events):
        if e.get("ph") != "X" or e.get("cat") in GPU_OR_OTHER:
            continue
        d = ns(e["dur"])
        if d < 0:
            continue
        threads.setdefault((json.dumps(e.get("pid", 0)), json.dumps(e.get("tid", 0))), []).append(
            (ns(e["ts"]), -d, i, e["name"]))
    table = {}  # name -> [count, incl, excl]
    for evs in threads.values():
        evs.sort()
        stack = []  # [end, eff, child, name]
        depth = {}

        def pop():
            end, eff, child, name, dur = stack.pop()
            row = table.setdefault(name, [0, 0, 0])
            row[0] += 1
            row[2] += max(0, dur - child)
            depth[name] -= 1
            if depth[name] == 0:
                row[1] += dur
            if stack:
                stack[-1][2] += eff

        for ts, negd, _, name in evs:
            d = -negd
            while stack and stack[-1][0] <= ts:
                pop()
            end, eff = ts + d, d
            if stack and end > stack[-1][0]:
                end = stack[-1][0]
                eff = end - ts
            depth[name] = depth.get(name, 0) + 1
            stack.append([end, eff, 0, name, d])
        while stack:
            pop()
    return table
