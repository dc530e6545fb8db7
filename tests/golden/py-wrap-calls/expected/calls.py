__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(getattr(f, "find_spec", lambda *a: None)("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span"), lambda *a: __ncrt__()), __enter__=lambda s: s, __exit__=lambda s, *a: None, __module__="ncrt"))); import torch.nn.functional as F
def step(self_attn, x, cache):
    with __ncrt__.range("step:softmax"):
        y = F.softmax(x, dim=-1)
    with __ncrt__.range("attention call"):
        y += self_attn(y)
    with __ncrt__.range("step:softmax"):
        z: float = F.softmax(y).sum()
    with __ncrt__.range("attention call"):
        self_attn.attn(z)
    print("no match here")
    with __ncrt__.range("step:softmax"):
        cache["k"] = [F.softmax(v) for v in x]
    if z > 0:
        with __ncrt__.range("step:softmax"):
            return F.softmax(z)
    with __ncrt__.range("step:softmax"):
        with __ncrt__.range("step:F.re*"):
            return F.relu(z); w = F.softmax(z)
