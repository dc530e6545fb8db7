"""Attention on small pure-Python matrices: the hot line is an operator."""
import math


class Mat:
    """A dense matrix; `@` does the real work (a product of lists)."""

    def __init__(self, rows):
        self.rows = rows

    def __matmul__(self, other):
        cols = list(zip(*other.rows))
        return Mat([[sum(a * b for a, b in zip(r, c)) for c in cols] for r in self.rows])


def softmax_rows(m):
    out = []
    for r in m.rows:
        top = max(r)
        e = [math.exp(x - top) for x in r]
        s = sum(e)
        out.append([x / s for x in e])
    return Mat(out)


def attention(q, k, v, check=False):
    scores = [[sum(a * b for a, b in zip(qr, kr)) / 8 for kr in k.rows] for qr in q.rows]
    if check and len(scores) != len(v.rows):
        raise RuntimeError("attention: shapes do not match")
    weights = softmax_rows(Mat(scores))
    out = weights @ v
    return out


def cold(n):
    total = 0
    for i in range(n):
        total += i
    return total
