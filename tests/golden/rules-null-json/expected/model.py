__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))()); __ncrt_t__ = (lambda m: m.__dict__.update(is_scripting=bool, is_compiling=bool, __getattr__=lambda n, k={"jit": "is_scripting", "compiler": "is_compiling", "autograd": "profiler"}: object.__getattribute__(m, n) if n not in k else (lambda t: (lambda v: m.__dict__.setdefault(n, v) if not getattr(getattr(t, "__spec__", None), "_initializing", t is None) else v)((lambda a: a if hasattr(a, k[n]) else m)(getattr(t, n, None))))(__import__("sys").modules.get("torch"))) or m)(type(__import__("sys"))("ncrt.torch")); import torch

class Attention:
    def forward(self, x):
        with __ncrt_t__.autograd.profiler.record_function("Attention.forward") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("Attention.forward") if __ncrt_t__.compiler.is_compiling() else __ncrt__.torch_range("Attention.forward"):
            y = self.proj(x)
            y = torch.softmax(y, dim=-1)
            return y

    def proj(self, x):
        with __ncrt_t__.autograd.profiler.record_function("attn.proj") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("attn.proj") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("attn.proj"): return x * 2


def matrix_multiply(a, b):
    with __ncrt_t__.autograd.profiler.record_function("matrix_multiply:L15-16") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("matrix_multiply:L15-16") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("matrix_multiply:L15-16"):
        c = a @ b
        d = c + 1
    with __ncrt_t__.autograd.profiler.record_function("mm.scale") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("mm.scale") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("mm.scale"): e = d * 2
    return e
