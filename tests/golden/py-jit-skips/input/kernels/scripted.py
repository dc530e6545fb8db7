from typing import List

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
        super().__init__()
        self.fc = nn.Linear(2, 2)

    @torch.jit.export
    def exported(self, x):
        return self.fc(x)

    @torch.jit.ignore
    def python_only(self, xs: List[int]):
        return sum(xs)

    @torch.jit.unused
    def unused(self, x):
        return x

    def forward(self, x):
        return self.exported(x)


def run(x):
    return torch.jit.script(Net())(x)


def from_elsewhere(x):
    return x * 2


compiled = torch.jit.script(from_elsewhere)


class Legacy(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()

    @torch.jit.script_method
    def forward(self, x):
        return x + 1

    @torch.jit._overload_method
    def pick(self, x: int) -> int:
        ...

    def helper(self, x):
        return x
