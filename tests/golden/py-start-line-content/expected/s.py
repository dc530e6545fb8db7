_ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext; import os

def f():
    with _ncrt_range("f:L5-6"):
        a = 1
        b = 2
    return a + b
