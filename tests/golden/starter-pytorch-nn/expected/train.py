__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(getattr(f, "find_spec", lambda *a: None)("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span"), lambda *a: __ncrt__()), __enter__=lambda s: s, __exit__=lambda s, *a: None, __module__="ncrt"))); import torch

from model.net import Net
def train_step(model, opt, x, y):
    with __ncrt__.range("train_step:zero_grad"):
        opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    with __ncrt__.range("train_step:backward"):
        loss.backward()
    with __ncrt__.range("train_step:step"):
        opt.step()
    return loss.item()


def main():
    torch.manual_seed(0)
    model = Net(8)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 8), torch.randn(16, 8)
    for _ in range(3):
        print("loss %.4f" % train_step(model, opt, x, y))


if __name__ == "__main__":
    main()
