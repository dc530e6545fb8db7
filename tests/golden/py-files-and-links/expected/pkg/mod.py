_ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext
def f():
    with _ncrt_range("f"):
        return 1
