"""A range that needs a line takes it inside its function or right after it."""; __ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))())


def inside(x):
    with __ncrt__.range("inside:L5-6"):
        a = 1
        b = a + 1
    c = b + 1
    return a + b + c


def after(x):
    with __ncrt__.range("after:L13-14"):
        p = 1
        q = p + 1
    return q

def untouched(x):
    s = x * 2
    return s


class K:
    def second(self, x):
        total = 0
        with __ncrt__.range("K.second:L26-27"):
            for i in x:
                total += i
        return total
    def third(self):
        return 3


def nested(x):
    def inner(y):
        with __ncrt__.range("nested.<locals>.inner:L36-37"):
            u = y + 1
            return u * 2
    return inner(x)
