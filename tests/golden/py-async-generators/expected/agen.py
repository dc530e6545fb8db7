_ncrt_span = __import__("ncrt").span if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext; _ncrt_torch_span = __import__("ncrt").torch_span if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext; _ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext; import asyncio

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
