__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))())
class EncoderLayer:
    def forward(self, x):
        with __ncrt__.range("EncoderLayer.forward"): return x + 1

    def reset(self):
        self.n = 0


class DecoderLayer:
    def forward(self, x):
        with __ncrt__.range("DecoderLayer.forward"): return x - 1


class Helper:
    def forward(self, x):
        with __ncrt__.range("helper"): return x


def build_encoder():
    with __ncrt__.range("build_encoder"): return EncoderLayer()


def build_decoder():
    with __ncrt__.range("build_decoder"): return DecoderLayer()
