"""Scaled dot-product attention on lists of floats."""
import math


def matmul(a, b):
    """Multiply an n x k matrix by a k x m matrix."""
    cols = list(zip(*b))
    return [[sum(x * y for x, y in zip(row, col)) for col in cols] for row in a]


def softmax(row):
    m = max(row)
    ex = [math.exp(v - m) for v in row]
    total = sum(ex)
    return [v / total for v in ex]


def transpose(m):
    return [list(r) for r in zip(*m)]


class Attention:
    """Single-head attention."""

    def __init__(self, wq, wk, wv):
        self.wq, self.wk, self.wv = wq, wk, wv

    def forward(self, x):
        q = matmul(x, self.wq)
        k = matmul(x, self.wk)
        v = matmul(x, self.wv)
        return self._attn(q, k, v)

    def _attn(self, q, k, v):
        scale = 1.0 / math.sqrt(len(q[0]))
        scores = matmul(q, transpose(k))
        scores = [[s * scale for s in row] for row in scores]
        probs = [softmax(row) for row in scores]
        out = matmul(probs, v)
        return out


class MLP:
    def __init__(self, w1, w2):
        self.w1, self.w2 = w1, w2

    def forward(self, x):
        h = matmul(x, self.w1)
        h = [[max(0.0, v) for v in row] for row in h]
        return matmul(h, self.w2)
