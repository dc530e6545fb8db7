"""The deepest recursion that works: plain, with `with ncrt.range(...)` in
the recursive function, and decorated by @ncrt.range, at a few recursion
limits. Prints one JSON object {limit: {kind: depth}}."""
import json
import sys

import ncrt


def plain(n):
    if n:
        plain(n - 1)


def marked(n):
    with ncrt.range("rec.with"):
        if n:
            marked(n - 1)


@ncrt.range("rec.decorated")
def decorated(n):
    if n:
        decorated(n - 1)


def deepest(f):
    lo, hi = 0, 20000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            f(mid)
            lo = mid
        except RecursionError:
            hi = mid - 1
    return lo


res = {}
for limit in (300, 1000, 3000):
    sys.setrecursionlimit(limit)
    res[limit] = {k: deepest(f) for k, f in (("plain", plain), ("with", marked), ("decorated", decorated))}
print(json.dumps(res))
