"""A Python program as ncrewrite instruments it (the contract line), with
decorators, methods, spans across threads and a step loop."""
import threading

_ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext
import ncrt


class Attention:
    def forward(self, x):
        with _ncrt_range("Attention.forward"):
            return x + 1


@ncrt.range("helper")
def helper(x):
    return x * 2


class Block:
    @ncrt.range("Block.run")
    def run(self, x):
        return helper(x)


def worker(n):
    for i in range(n):
        with ncrt.range("worker.item"):
            pass


def main():
    with _ncrt_range("main"):
        a, b = Attention(), Block()
        total = 0
        for i in range(6):
            with ncrt.range("train_step"):
                total += a.forward(i) + b.run(i)
        with ncrt.range(42):  # any object: str() is the name
            pass
        s = ncrt.span("handoff")
        s.__enter__()
        t = threading.Thread(target=lambda: (worker(10), s.__exit__(None, None, None)), name="py-worker")
        t.start()
        t.join()
        print("total", total)


main()
