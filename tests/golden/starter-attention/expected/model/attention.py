__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))()); __ncrt_t__ = (lambda m: m.__dict__.update(is_scripting=bool, is_compiling=bool, __getattr__=lambda n, k={"jit": "is_scripting", "compiler": "is_compiling", "autograd": "profiler"}: object.__getattribute__(m, n) if n not in k else (lambda t: (lambda v: m.__dict__.setdefault(n, v) if not getattr(getattr(t, "__spec__", None), "_initializing", t is None) else v)((lambda a: a if hasattr(a, k[n]) else m)(getattr(t, n, None))))(__import__("sys").modules.get("torch"))) or m)(type(__import__("sys"))("ncrt.torch")); import math

import torch
from torch import nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(d, d)
        self.k_proj = nn.Linear(d, d)
        self.v_proj = nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)

    def split(self, x):
        b, t, d = x.shape
        return x.view(b, t, self.heads, d // self.heads).transpose(1, 2)
    def forward(self, x):
        with __ncrt_t__.autograd.profiler.record_function("attention.forward") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("attention.forward") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("attention.forward"):
            with __ncrt_t__.autograd.profiler.record_function("attention.proj") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("attention.proj") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("attention.proj"): q = self.split(self.q_proj(x))
            with __ncrt_t__.autograd.profiler.record_function("attention.proj") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("attention.proj") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("attention.proj"): k = self.split(self.k_proj(x))
            with __ncrt_t__.autograd.profiler.record_function("attention.proj") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("attention.proj") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("attention.proj"): v = self.split(self.v_proj(x))
            with __ncrt_t__.autograd.profiler.record_function("attention.matmul") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("attention.matmul") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("attention.matmul"): scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
            with __ncrt_t__.autograd.profiler.record_function("attention.softmax") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("attention.softmax") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("attention.softmax"): weights = F.softmax(scores, dim=-1)
            with __ncrt_t__.autograd.profiler.record_function("attention.matmul") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("attention.matmul") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("attention.matmul"): out = torch.matmul(weights, v)
            b, h, t, dh = out.shape
            with __ncrt_t__.autograd.profiler.record_function("attention.proj") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("attention.proj") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("attention.proj"): return self.out_proj(out.transpose(1, 2).reshape(b, t, h * dh))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.attn = SelfAttention(d, heads)

    def forward(self, x):
        return x + self.attn(x)


class FusedAttention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.qkv_proj = nn.Linear(d, 3 * d)
    def forward(self, x):
        with __ncrt_t__.autograd.profiler.record_function("attention.forward") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("attention.forward") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("attention.forward"):
            with __ncrt_t__.autograd.profiler.record_function("attention.proj") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("attention.proj") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("attention.proj"): q, k, v = self.qkv_proj(x).chunk(3, dim=-1)
            with __ncrt_t__.autograd.profiler.record_function("attention.matmul") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("attention.matmul") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("attention.matmul"): scores = torch.bmm(q, k.transpose(1, 2))
            with __ncrt_t__.autograd.profiler.record_function("attention.dropout") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("attention.dropout") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("attention.dropout"): scores = F.dropout(scores, p=0.0)
            with __ncrt_t__.autograd.profiler.record_function("attention.sdpa") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("attention.sdpa") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("attention.sdpa"): return F.scaled_dot_product_attention(q, k, v)
