_ncrt = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(getattr(f, "find_spec", lambda *a: None)("ncrt", None) for f in __import__("sys").meta_path) else None); _ncrt_nop = type("_ncrt_nop", (), {"__init__": lambda s, *a, **k: None, "__enter__": lambda s: s, "__exit__": lambda s, *a: None}); _ncrt_range = getattr(_ncrt, "range", _ncrt_nop)
class EncoderLayer:
    def forward(self, x):
        with _ncrt_range("EncoderLayer.forward"):
            return x + 1

    def reset(self):
        self.n = 0

class DecoderLayer:
    def forward(self, x):
        with _ncrt_range("DecoderLayer.forward"):
            return x - 1

class Helper:
    def forward(self, x):
        with _ncrt_range("helper"):
            return x

def build_encoder():
    with _ncrt_range("build_encoder"):
        return EncoderLayer()

def build_decoder():
    with _ncrt_range("build_decoder"):
        return DecoderLayer()
