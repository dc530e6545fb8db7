import torch.nn.functional as F


def step(self_attn, x, cache):
    y = F.softmax(x, dim=-1)
    y += self_attn(y)
    z: float = F.softmax(y).sum()
    self_attn.attn(z)
    print("no match here")
    cache["k"] = [F.softmax(v) for v in x]
    if z > 0:
        return F.softmax(z)
    return F.relu(z); w = F.softmax(z)
