import functools


def trace(fn):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        return fn(*a, **k)
    return wrapper


class A:
    @staticmethod
    def s(x):
        return x + 1

    @classmethod
    def c(cls):
        return cls.__name__

    @property
    def p(self):
        return 42

    @trace
    def forward(self, x):
        return x * 2

    class Inner:
        def forward(self, x):
            return x * 3


class B:
    def forward(self, x):
        return x * 4


def outer():
    def helper(y):
        return y - 1
    return helper(10)
