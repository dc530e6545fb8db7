"""Async tasks interleave on one thread: their ranges are spans
(start/end), which may overlap; every span starts and ends once."""
import asyncio

import ncrt


@ncrt.range("fetch")  # a coroutine function: the decorator uses a span
async def fetch(i):
    await asyncio.sleep(0.001 * (i % 3))
    return i


async def consume(i):
    with ncrt.span("consume"):
        await asyncio.sleep(0.001)
        return await fetch(i)


@ncrt.range("gen")
def gen(n):
    for i in range(n):
        yield i


async def main():
    with ncrt.span("main"):
        r = await asyncio.gather(*(consume(i) for i in range(5)))
    print(sum(r), sum(gen(4)))


asyncio.run(main())
