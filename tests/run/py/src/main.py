#!/usr/bin/env python3
"""Entry point: prints results that must not change under instrumentation."""
import asyncio
import sys

from app import work


def main():
    print("fib", work.fib(10))
    print("interleave", work.interleave(6, 8))
    print("gather", asyncio.run(work.gather(4)))
    for x in range(5):
        try:
            print("fails", work.fails(x))
        except ValueError as e:
            print("error", e)
    print("break", work.loop_with_break([3, 4, 5, 6]), work.loop_with_break([1]))
    print("threads", work.in_threads(6))
    m = work.Model(2)
    print("model", m, m.forward(5), work.Model.version(), work.Model.__doc__)
    print("doc", work.__doc__)
    return 3


if __name__ == "__main__":
    sys.exit(main())
