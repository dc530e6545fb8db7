"""A file that imports torch: markers TorchScript and dynamo can compile."""
import torch
from torch import nn


def helper(x):
    return x * 2


class Block(nn.Module):
    def forward(self, x):
        y = helper(x)
        return y + 1


async def fetch(x):
    return x


def gen(n):
    for i in range(n):
        yield i
