__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))()); import functools


def trace(fn):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        return fn(*a, **k)
    return wrapper


class A:
    @staticmethod
    def s(x):
        with __ncrt__.range("A.s"): return x + 1

    @classmethod
    def c(cls):
        with __ncrt__.range("A.c"): return cls.__name__

    @property
    def p(self):
        with __ncrt__.range("A.p"): return 42

    @trace
    def forward(self, x):
        with __ncrt__.range("A.forward"): return x * 2

    class Inner:
        def forward(self, x):
            with __ncrt__.range("A.Inner.forward"): return x * 3


class B:
    def forward(self, x):
        return x * 4


def outer():
    def helper(y):
        with __ncrt__.range("outer.<locals>.helper:L40"): return y - 1
    return helper(10)
