_ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext; import functools


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
