_ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext
def ok():
    with _ncrt_range("good.ok"):
        return 1
