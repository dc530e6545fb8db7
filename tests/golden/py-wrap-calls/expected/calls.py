__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))()); __ncrt_t__ = (lambda m: m.__dict__.update(is_scripting=bool, is_compiling=bool, __getattr__=lambda n, k={"jit": "is_scripting", "compiler": "is_compiling", "autograd": "profiler"}: object.__getattribute__(m, n) if n not in k else (lambda t: (lambda v: m.__dict__.setdefault(n, v) if not getattr(getattr(t, "__spec__", None), "_initializing", t is None) else v)((lambda a: a if hasattr(a, k[n]) else m)(getattr(t, n, None))))(__import__("sys").modules.get("torch"))) or m)(type(__import__("sys"))("ncrt.torch")); import torch.nn.functional as F
def step(self_attn, x, cache):
    with __ncrt_t__.autograd.profiler.record_function("step:softmax") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("step:softmax") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("step:softmax"):
        y = F.softmax(x, dim=-1)
    with __ncrt_t__.autograd.profiler.record_function("attention call") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("attention call") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("attention call"):
        y += self_attn(y)
    with __ncrt_t__.autograd.profiler.record_function("step:softmax") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("step:softmax") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("step:softmax"):
        z: float = F.softmax(y).sum()
    with __ncrt_t__.autograd.profiler.record_function("attention call") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("attention call") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("attention call"):
        self_attn.attn(z)
    print("no match here")
    with __ncrt_t__.autograd.profiler.record_function("step:softmax") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("step:softmax") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("step:softmax"):
        cache["k"] = [F.softmax(v) for v in x]
    if z > 0:
        with __ncrt_t__.autograd.profiler.record_function("step:softmax") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("step:softmax") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("step:softmax"):
            return F.softmax(z)
    with __ncrt_t__.autograd.profiler.record_function("step:softmax") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("step:softmax") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("step:softmax"):
        with __ncrt_t__.autograd.profiler.record_function("step:F.re*") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("step:F.re*") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("step:F.re*"):
            return F.relu(z); w = F.softmax(z)
