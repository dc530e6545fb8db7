__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))()); import asyncio

async def fetch(n):
    with __ncrt__.span("fetch"):
        await asyncio.sleep(0)
        return n * 2

def count(n):
    with __ncrt__.span("count"):
        i = 0
        while i < n:
            yield i
            i += 1

async def acount(n):
    with __ncrt__.span("acount"):
        for i in range(n):
            await asyncio.sleep(0)
            yield i

def not_a_generator(n):
    with __ncrt__.range("not_a_generator"):
        g = (x for x in range(n))
        def inner():
            yield 1
        return list(g) + list(inner())

class Svc:
    async def handle(self, x):
        with __ncrt__.span("Svc.handle"):
            y = await fetch(x)
            return y

    def items(self):
        with __ncrt__.torch_span("Svc.items"): yield from count(3)
