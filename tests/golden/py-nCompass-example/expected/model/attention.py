"""Attention block."""
from __future__ import annotations; _ncrt = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(getattr(f, "find_spec", lambda *a: None)("ncrt", None) for f in __import__("sys").meta_path) else None); _ncrt_nop = type("_ncrt_nop", (), {"__init__": lambda s, *a, **k: None, "__enter__": lambda s: s, "__exit__": lambda s, *a: None}); _ncrt_torch_range = getattr(_ncrt, "torch_range", _ncrt_nop); _ncrt_range = getattr(_ncrt, "range", _ncrt_nop); _ncrt_span = getattr(_ncrt, "span", _ncrt_nop)
import math

def softmax(xs):
    with _ncrt_range("softmax:L7-8"):
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
        with _ncrt_torch_range("attention.forward"):
            scores = [a * b for a, b in zip(q, k)]
            probs = softmax(scores)
            return probs
    def _attn(self, x):
        with _ncrt_range("attn.softmax"):
            y = softmax(x)
        if len(y) > 1:
            with _ncrt_range("attn.softmax"):
                z = softmax(y)
        else:
            z = y
        return z

class Other:
    def forward(self, x):
        with _ncrt_range("Other.forward"):
            return x
    def gen(self):
        with _ncrt_span("Other.gen"):
            for i in range(3):
                yield i
    async def run(self):
        with _ncrt_span("Other.run"):
            return 1
