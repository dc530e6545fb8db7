"""mpool.py METHOD N: N "task" ranges recorded by multiprocessing workers
started with METHOD (fork, spawn, forkserver), through a Pool(4) and through
4 Process objects (N / 4 "proc" ranges each), plus "parent" in the parent.
Prints "done"."""
import multiprocessing as mp
import sys

import ncrt


def task(i):
    with ncrt.range("task"):
        return i * 2


def proc(n):
    for i in range(n):
        with ncrt.range("proc"):
            pass


if __name__ == "__main__":
    method, n = sys.argv[1], int(sys.argv[2])
    ctx = mp.get_context(method)
    with ncrt.range("parent"):
        with ctx.Pool(4) as pool:
            total = sum(pool.map(task, range(n), chunksize=100))
        assert total == n * (n - 1), total
        ps = [ctx.Process(target=proc, args=(n // 4,)) for _ in range(4)]
        for p in ps:
            p.start()
        for p in ps:
            p.join()
            assert p.exitcode == 0, p.exitcode
    print("done", flush=True)
