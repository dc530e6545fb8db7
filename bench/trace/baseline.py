#!/usr/bin/env python3
"""The baseline nctrace is measured against: json.load the whole trace and
compute the same per-range table in plain Python (count, inclusive time of
outermost instances, exclusive time), with nctrace's nesting rules. Prints
the table as JSON {name: [count, inclusive_ns, exclusive_ns]}.

usage: baseline.py TRACE"""
import gzip
import json
import sys

NOT_RANGES = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "cuda_sync", "Trace", "ac2g"}


def ns(x):
    return int(round(float(x) * 1000))


def main():
    path = sys.argv[1]
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        doc = json.load(f)
    events = doc if isinstance(doc, list) else doc["traceEvents"]
    threads = {}
    for i, e in enumerate(events):
        if e.get("ph") != "X" or e.get("cat") in NOT_RANGES:
            continue
        threads.setdefault((e.get("pid"), e.get("tid")), []).append((ns(e["ts"]), -ns(e["dur"]), i, e["name"]))
    table = {}
    for evs in threads.values():
        evs.sort()
        stack, depth = [], {}
        for item in evs + [None]:
            while stack and (item is None or stack[-1][0] <= item[0]):
                end, eff, child, name, dur = stack.pop()
                row = table.setdefault(name, [0, 0, 0])
                row[0] += 1
                row[2] += max(0, dur - child)
                depth[name] -= 1
                if depth[name] == 0:
                    row[1] += dur
                if stack:
                    stack[-1][2] += eff
            if item is None:
                break
            ts, d, _, name = item[0], -item[1], item[2], item[3]
            end, eff = ts + d, d
            if stack and end > stack[-1][0]:
                end = stack[-1][0]
                eff = end - ts
            depth[name] = depth.get(name, 0) + 1
            stack.append([end, eff, 0, name, d])
    json.dump(table, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
