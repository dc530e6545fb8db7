import math


class Attention:
    def forward(self, q, k, v):
        return self._attn(q, k, v)

    def _attn(self, q, k, v):
        s = matmul(q, k)
        s = s / math.sqrt(len(q))
        s = softmax(s)
        return matmul(s, v)


def matmul(a, b):
    return a


def softmax(x):
    return x
