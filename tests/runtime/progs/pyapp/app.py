"""A small Python program for ncrewrite to instrument (rules.yaml), then run
under ncrun: a training-like loop, a class, a generator and a coroutine."""
import asyncio


class Model:
    def forward(self, x):
        return [v * 2 for v in x]

    def loss(self, y):
        return sum(y)


def batches(n):
    for i in range(n):
        yield [i, i + 1]


async def fetch(i):
    await asyncio.sleep(0)
    return i


def train_step(m, b):
    return m.loss(m.forward(b))


def main():
    m = Model()
    total = 0
    for b in batches(4):
        total += train_step(m, b)
    async def both():
        return await asyncio.gather(fetch(1), fetch(2))
    total += sum(asyncio.run(both()))
    print("total", total)


if __name__ == "__main__":
    main()
