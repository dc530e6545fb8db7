"""Decorated functions under garbage-collector stress (run with
PYTHONMALLOC=debug): methods, staticmethods, classmethods, span
decorators, and reference cycles through the wrapper's __dict__, its
__wrapped__ function and a bound method. The collector runs at nearly
every allocation; every cycle must be collected (weak references die) and
every call recorded. Prints the calls made per name as JSON."""
import collections
import gc
import inspect
import json
import sys
import weakref

import ncrt

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200
calls = collections.Counter()


class C:
    @ncrt.range("C.m")
    def m(self, x):
        return x + 1

    @staticmethod
    @ncrt.range("C.s")
    def s(x):
        return x * 2

    @classmethod
    @ncrt.range("C.c")
    def c(cls, x):
        return cls.__name__

    @ncrt.span("C.sp")
    def sp(self):
        return self

    @ncrt.torch_span("C.tsp")  # no torch here: a Python wrapper with a span
    def tsp(self):
        return 1


def make_closure():
    @ncrt.range("closure")
    def h(n):  # h's closure holds the wrapper: wrapper -> fn -> cell -> wrapper
        return h(n - 1) + 1 if n else 0
    return h


class Holder:
    def __init__(self):
        # wrapper -> bound method -> self -> __dict__ -> wrapper
        self.cb = ncrt.range("holder.cb")(self.work)
        self.scb = ncrt.span("holder.scb")(self.work)

    def work(self):
        return self


gc.set_threshold(1, 1, 1)
refs = []
for i in range(N):
    @ncrt.range("dict.cycle")
    def f(a, b=1):
        return a + b
    f.me = f  # wrapper -> __dict__ -> wrapper
    f.__dict__["box"] = [f]
    assert f(1) == 2 and f.__name__ == "f" and f.__wrapped__.__name__ == "f"
    calls["dict.cycle"] += 1
    h = make_closure()
    assert h(3) == 3
    calls["closure"] += 4
    o = Holder()
    assert o.cb() is o and o.scb() is o
    calls["holder.cb"] += 1
    calls["holder.scb"] += 1
    c = C()
    assert (c.m(1), C.s(2), c.s(3), C.c(0), c.c(0), c.sp(), c.tsp()) == (2, 4, 6, "C", "C", c, 1)
    calls.update({"C.m": 1, "C.s": 2, "C.c": 2, "C.sp": 1, "C.tsp": 1})
    refs += [weakref.ref(x) for x in (f, h, o.cb, o.scb)]
    # no cycle: freed by reference counting, after the collector saw them
    tmp = [ncrt.range("tmp")(lambda k=k: k) for k in range(5)] + [ncrt.span("tmp.span")(len)]
    gc.collect(0)
    assert sum(t() for t in tmp[:5]) == 10 and tmp[5]("ab") == 2
    calls["tmp"] += 5
    calls["tmp.span"] += 1
    del tmp
    if i % 50 == 0:
        gc.collect()
del f, h, o, c
gc.set_threshold(700, 10, 10)
gc.collect()
alive = [r() for r in refs if r() is not None]
assert not alive, "%d decorated functions in cycles were not collected: %r" % (len(alive), alive[:3])
assert str(inspect.signature(C.m)) == "(self, x)", inspect.signature(C.m)
assert repr(C.__dict__["m"]).startswith("<ncrt.range('C.m') of <function C.m")
print(json.dumps(dict(calls), sort_keys=True))
