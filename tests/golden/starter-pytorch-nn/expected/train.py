__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))()); __ncrt_t__ = (lambda m: m.__dict__.update(is_scripting=bool, is_compiling=bool, __getattr__=lambda n, k={"jit": "is_scripting", "compiler": "is_compiling", "autograd": "profiler"}: object.__getattribute__(m, n) if n not in k else (lambda t: (lambda v: m.__dict__.setdefault(n, v) if not getattr(getattr(t, "__spec__", None), "_initializing", t is None) else v)((lambda a: a if hasattr(a, k[n]) else m)(getattr(t, n, None))))(__import__("sys").modules.get("torch"))) or m)(type(__import__("sys"))("ncrt.torch")); import torch

from model.net import Net


def train_step(model, opt, x, y):
    with __ncrt_t__.autograd.profiler.record_function("train_step:zero_grad") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("train_step:zero_grad") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("train_step:zero_grad"): opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    with __ncrt_t__.autograd.profiler.record_function("train_step:backward") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("train_step:backward") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("train_step:backward"): loss.backward()
    with __ncrt_t__.autograd.profiler.record_function("train_step:step") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("train_step:step") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("train_step:step"): opt.step()
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
