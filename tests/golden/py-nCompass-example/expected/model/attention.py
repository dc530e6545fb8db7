"""Attention block."""
from __future__ import annotations; __ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))())
import math


def softmax(xs):
    with __ncrt__.range("softmax:L7-8"):
        m = max(xs)
        ex = [math.exp(x - m) for x in xs]
    s = sum(ex)
    return [e / s for e in ex]

class Attention:
    """Toy attention."""

    def __init__(self, d):
        self.d = d
    def forward(self, q, k):
        """Forward docstring."""
        with __ncrt__.torch_range("attention.forward"):
            scores = [a * b for a, b in zip(q, k)]
            probs = softmax(scores)
            return probs

    def _attn(self, x):
        with __ncrt__.range("attn.softmax"): y = softmax(x)
        if len(y) > 1:
            with __ncrt__.range("attn.softmax"): z = softmax(y)
        else:
            z = y
        return z

class Other:
    def forward(self, x):
        with __ncrt__.range("Other.forward"):
            return x
    def gen(self):
        with __ncrt__.span("Other.gen"):
            for i in range(3):
                yield i

    async def run(self):
        with __ncrt__.span("Other.run"): return 1
