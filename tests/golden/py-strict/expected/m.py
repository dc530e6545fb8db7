_ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext
class Attention:
    def forward(self, x):
        return x

def helper():
    with _ncrt_range("helper"):
        return 1
