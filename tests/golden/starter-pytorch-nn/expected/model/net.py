"""A small model: two nn.Modules."""; __ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))()); __ncrt_t__ = (lambda m: m.__dict__.update(is_scripting=bool, is_compiling=bool, __getattr__=lambda n, k={"jit": "is_scripting", "compiler": "is_compiling", "autograd": "profiler"}: object.__getattribute__(m, n) if n not in k else (lambda t: (lambda v: m.__dict__.setdefault(n, v) if not getattr(getattr(t, "__spec__", None), "_initializing", t is None) else v)((lambda a: a if hasattr(a, k[n]) else m)(getattr(t, n, None))))(__import__("sys").modules.get("torch"))) or m)(type(__import__("sys"))("ncrt.torch"))
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        with __ncrt_t__.autograd.profiler.record_function("MLP.forward") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("MLP.forward") if __ncrt_t__.compiler.is_compiling() else __ncrt__.torch_range("MLP.forward"): return self.fc2(torch.relu(self.fc1(x)))


class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.mlp = MLP(d)
        self.norm = nn.LayerNorm(d)
    def forward(self, x):
        with __ncrt_t__.autograd.profiler.record_function("Net.forward") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("Net.forward") if __ncrt_t__.compiler.is_compiling() else __ncrt__.torch_range("Net.forward"):
            x = x + self.mlp(self.norm(x))
            return x
