"""A small model: two nn.Modules."""; __ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(getattr(f, "find_spec", lambda *a: None)("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span"), lambda *a: __ncrt__()), __enter__=lambda s: s, __exit__=lambda s, *a: None, __module__="ncrt")))
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
    def forward(self, x):
        with __ncrt__.torch_range("MLP.forward"):
            return self.fc2(torch.relu(self.fc1(x)))


class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.mlp = MLP(d)
        self.norm = nn.LayerNorm(d)
    def forward(self, x):
        with __ncrt__.torch_range("Net.forward"):
            x = x + self.mlp(self.norm(x))
            return x
