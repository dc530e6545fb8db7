"""Functions with known call counts (the test checks them)."""
import asyncio
import threading


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def evens(n):
    for i in range(n):
        if i % 2:
            continue
        yield i


def interleave(a, b):
    # two generators advanced in turn: push/pop ranges would cross here
    out = []
    for x, y in zip(evens(a), evens(b)):
        out.append(x + y)
    return out


async def job(i):
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    return i * i


async def gather(n):
    return await asyncio.gather(*(job(i) for i in range(n)))


def fails(x):
    if x > 2:
        raise ValueError("too big: %d" % x)
    return x


def loop_with_break(items):
    total = 0
    for x in items:
        total += x
        if total > 10:
            break
    else:
        total = -1
    return total


def in_threads(n):
    results = []
    lock = threading.Lock()

    def worker(k):
        v = fib(k)
        with lock:
            results.append(v)
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sorted(results)


class Model:
    """A model with a docstring."""

    scale = 3

    def __init__(self, w):
        self.w = w

    @property
    def weight(self):
        return self.w * self.scale

    def forward(self, x):
        y = self.mul(x)
        y = self.add(y)
        return y

    def mul(self, x): return x * self.weight

    def add(self, x):
        return abs(x) + 1

    @staticmethod
    def version():
        return "1.0"

    def __repr__(self):
        return "Model(%d)" % self.w
