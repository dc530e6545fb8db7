"""A file that imports torch: markers TorchScript and dynamo can compile."""; __ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))()); __ncrt_t__ = (lambda m: m.__dict__.update(is_scripting=bool, is_compiling=bool, __getattr__=lambda n, k={"jit": "is_scripting", "compiler": "is_compiling", "autograd": "profiler"}: object.__getattribute__(m, n) if n not in k else (lambda t: (lambda v: m.__dict__.setdefault(n, v) if not getattr(getattr(t, "__spec__", None), "_initializing", t is None) else v)((lambda a: a if hasattr(a, k[n]) else m)(getattr(t, n, None))))(__import__("sys").modules.get("torch"))) or m)(type(__import__("sys"))("ncrt.torch"))
import torch
from torch import nn


def helper(x):
    with __ncrt_t__.autograd.profiler.record_function("app.model.helper") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("app.model.helper") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("app.model.helper"): return x * 2

class Block(nn.Module):
    def forward(self, x):
        with __ncrt_t__.autograd.profiler.record_function("app.model.Block.forward") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("app.model.Block.forward") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("app.model.Block.forward"):
            y = helper(x)
            return y + 1


async def fetch(x):
    with __ncrt__.span("app.model.fetch"): return x

def gen(n):
    with __ncrt__.span("app.model.gen"):
        for i in range(n):
            yield i
