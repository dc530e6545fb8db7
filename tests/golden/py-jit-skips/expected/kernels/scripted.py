__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))()); __ncrt_t__ = (lambda m: m.__dict__.update(is_scripting=bool, is_compiling=bool, __getattr__=lambda n, k={"jit": "is_scripting", "compiler": "is_compiling", "autograd": "profiler"}: object.__getattribute__(m, n) if n not in k else (lambda t: (lambda v: m.__dict__.setdefault(n, v) if not getattr(getattr(t, "__spec__", None), "_initializing", t is None) else v)((lambda a: a if hasattr(a, k[n]) else m)(getattr(t, n, None))))(__import__("sys").modules.get("torch"))) or m)(type(__import__("sys"))("ncrt.torch")); from typing import List

import torch
import torch.jit as tj
from torch import nn
from torch.jit import script as ts_script


@torch.jit.script
def scripted(x: torch.Tensor) -> torch.Tensor:
    return x + 1


@tj.script_if_tracing
def maybe(x):
    return x


@ts_script
def aliased(x: torch.Tensor) -> torch.Tensor:
    return x


@torch.jit._overload
def over(x: int) -> int:
    ...


@torch.jit.interface
class Iface(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


@torch.jit.script
class Pair:
    def __init__(self, a: int, b: int):
        self.a = a
        self.b = b

    def total(self) -> int:
        return self.a + self.b

class Net(nn.Module):
    def __init__(self):
        with __ncrt_t__.autograd.profiler.record_function("kernels.scripted.Net.__init__") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("kernels.scripted.Net.__init__") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("kernels.scripted.Net.__init__"):
            super().__init__()
            self.fc = nn.Linear(2, 2)

    @torch.jit.export
    def exported(self, x):
        return self.fc(x)

    @torch.jit.ignore
    def python_only(self, xs: List[int]):
        with __ncrt_t__.autograd.profiler.record_function("kernels.scripted.Net.python_only") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("kernels.scripted.Net.python_only") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("kernels.scripted.Net.python_only"): return sum(xs)

    @torch.jit.unused
    def unused(self, x):
        with __ncrt_t__.autograd.profiler.record_function("kernels.scripted.Net.unused") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("kernels.scripted.Net.unused") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("kernels.scripted.Net.unused"): return x

    def forward(self, x):
        with __ncrt_t__.autograd.profiler.record_function("kernels.scripted.Net.forward") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("kernels.scripted.Net.forward") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("kernels.scripted.Net.forward"): return self.exported(x)


def run(x):
    with __ncrt_t__.autograd.profiler.record_function("kernels.scripted.run") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("kernels.scripted.run") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("kernels.scripted.run"): return torch.jit.script(Net())(x)


def from_elsewhere(x):
    return x * 2


compiled = torch.jit.script(from_elsewhere)


class Legacy(torch.jit.ScriptModule):
    def __init__(self):
        with __ncrt_t__.autograd.profiler.record_function("kernels.scripted.Legacy.__init__") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("kernels.scripted.Legacy.__init__") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("kernels.scripted.Legacy.__init__"): super().__init__()

    @torch.jit.script_method
    def forward(self, x):
        return x + 1

    @torch.jit._overload_method
    def pick(self, x: int) -> int:
        ...

    def helper(self, x):
        with __ncrt_t__.autograd.profiler.record_function("kernels.scripted.Legacy.helper") if __ncrt_t__.jit.is_scripting() else __ncrt_t__.autograd.profiler.record_function("kernels.scripted.Legacy.helper") if __ncrt_t__.compiler.is_compiling() else __ncrt__.range("kernels.scripted.Legacy.helper"): return x
