__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))()); import math


class Attention:
    def forward(self, q, k, v):
        with __ncrt__.range("attention.forward"): return self._attn(q, k, v)

    def _attn(self, q, k, v):
        with __ncrt__.range("attn.matmul"): s = matmul(q, k)
        with __ncrt__.range("attn.scale\n+softmax"):
            s = s / math.sqrt(len(q))
            s = softmax(s)
        with __ncrt__.range("attn.matmul"): return matmul(s, v)

def matmul(a, b):
    return a


def softmax(x):
    with __ncrt__.range("softmax"): return x
