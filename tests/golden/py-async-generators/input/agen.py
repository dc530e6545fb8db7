import asyncio


async def fetch(n):
    await asyncio.sleep(0)
    return n * 2


def count(n):
    i = 0
    while i < n:
        yield i
        i += 1


async def acount(n):
    for i in range(n):
        await asyncio.sleep(0)
        yield i


def not_a_generator(n):
    g = (x for x in range(n))
    def inner():
        yield 1
    return list(g) + list(inner())


class Svc:
    async def handle(self, x):
        y = await fetch(x)
        return y

    def items(self):
        yield from count(3)
