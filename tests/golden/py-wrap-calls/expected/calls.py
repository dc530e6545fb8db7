_ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext; import torch.nn.functional as F
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
