"""Attention block."""
from __future__ import annotations
import math


def softmax(xs):
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
        scores = [a * b for a, b in zip(q, k)]
        probs = softmax(scores)
        return probs

    def _attn(self, x):
        y = softmax(x)
        if len(y) > 1:
            z = softmax(y)
        else:
            z = y
        return z


class Other:
    def forward(self, x): return x

    def gen(self):
        for i in range(3):
            yield i

    async def run(self):
        return 1
