_ncrt = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(getattr(f, "find_spec", lambda *a: None)("ncrt", None) for f in __import__("sys").meta_path) else None); _ncrt_nop = type("_ncrt_nop", (), {"__init__": lambda s, *a, **k: None, "__enter__": lambda s: s, "__exit__": lambda s, *a: None}); _ncrt_range = getattr(_ncrt, "range", _ncrt_nop); import functools


def trace(fn):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        return fn(*a, **k)
    return wrapper

class A:
    @staticmethod
    def s(x):
        with _ncrt_range("A.s"):
            return x + 1
    @classmethod
    def c(cls):
        with _ncrt_range("A.c"):
            return cls.__name__
    @property
    def p(self):
        with _ncrt_range("A.p"):
            return 42
    @trace
    def forward(self, x):
        with _ncrt_range("A.forward"):
            return x * 2
    class Inner:
        def forward(self, x):
            with _ncrt_range("A.Inner.forward"):
                return x * 3


class B:
    def forward(self, x):
        return x * 4

def outer():
    def helper(y):
        with _ncrt_range("outer.<locals>.helper:L40"):
            return y - 1
    return helper(10)
