__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))()); from typing import overload


class Point:
    def __init__(self, x, y):
        with __ncrt__.range("pkg.Point.__init__"): self.x, self.y = x, y

    def __repr__(self):
        return "Point(%r, %r)" % (self.x, self.y)

    def __eq__(self, other):
        return (self.x, self.y) == (other.x, other.y)

    @property
    def norm(self):
        return (self.x ** 2 + self.y ** 2) ** 0.5

    def scale(self, k):
        with __ncrt__.range("pkg.Point.scale"): return Point(self.x * k, self.y * k)

    def _private_helper(self):
        return 0

    def stub(self):
        ...


@overload
def area(p: int) -> int: ...
def area(p):
    with __ncrt__.range("pkg.area"): return p * p

def outer():
    with __ncrt__.range("pkg.outer"):
        def inner():
            return 1
        return inner()
