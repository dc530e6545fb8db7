_ncrt = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(getattr(f, "find_spec", lambda *a: None)("ncrt", None) for f in __import__("sys").meta_path) else None); _ncrt_nop = type("_ncrt_nop", (), {"__init__": lambda s, *a, **k: None, "__enter__": lambda s: s, "__exit__": lambda s, *a: None}); _ncrt_span = getattr(_ncrt, "span", _ncrt_nop); _ncrt_torch_span = getattr(_ncrt, "torch_span", _ncrt_nop); _ncrt_range = getattr(_ncrt, "range", _ncrt_nop); import asyncio

async def fetch(n):
    with _ncrt_span("fetch"):
        await asyncio.sleep(0)
        return n * 2

def count(n):
    with _ncrt_span("count"):
        i = 0
        while i < n:
            yield i
            i += 1

async def acount(n):
    with _ncrt_span("acount"):
        for i in range(n):
            await asyncio.sleep(0)
            yield i

def not_a_generator(n):
    with _ncrt_range("not_a_generator"):
        g = (x for x in range(n))
        def inner():
            yield 1
        return list(g) + list(inner())

class Svc:
    async def handle(self, x):
        with _ncrt_span("Svc.handle"):
            y = await fetch(x)
            return y
    def items(self):
        with _ncrt_torch_span("Svc.items"):
            yield from count(3)
