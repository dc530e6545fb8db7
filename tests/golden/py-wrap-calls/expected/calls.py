_ncrt = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(getattr(f, "find_spec", lambda *a: None)("ncrt", None) for f in __import__("sys").meta_path) else None); _ncrt_nop = type("_ncrt_nop", (), {"__init__": lambda s, *a, **k: None, "__enter__": lambda s: s, "__exit__": lambda s, *a: None}); _ncrt_range = getattr(_ncrt, "range", _ncrt_nop); import torch.nn.functional as F
def step(self_attn, x, cache):
    with _ncrt_range("step:softmax"):
        y = F.softmax(x, dim=-1)
    with _ncrt_range("attention call"):
        y += self_attn(y)
    with _ncrt_range("step:softmax"):
        z: float = F.softmax(y).sum()
    with _ncrt_range("attention call"):
        self_attn.attn(z)
    print("no match here")
    with _ncrt_range("step:softmax"):
        cache["k"] = [F.softmax(v) for v in x]
    if z > 0:
        with _ncrt_range("step:softmax"):
            return F.softmax(z)
    with _ncrt_range("step:softmax"):
        with _ncrt_range("step:F.re*"):
            return F.relu(z); w = F.softmax(z)
