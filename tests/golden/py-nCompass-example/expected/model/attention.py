"""Attention block."""
from __future__ import annotations; _ncrt_torch_range = __import__("ncrt").torch_range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext; _ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext; _ncrt_span = __import__("ncrt").span if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext
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
