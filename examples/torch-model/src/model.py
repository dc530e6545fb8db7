"""A small convolutional classifier, the kind of model whose time you want
broken down: an embedding of the input, a few conv blocks, a head."""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)
        self.norm = nn.BatchNorm2d(ch)

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x))) + x


class Net(nn.Module):
    def __init__(self, ch=32, blocks=3, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, ch, 3, padding=1)
        self.blocks = nn.Sequential(*[Block(ch) for _ in range(blocks)])
        self.head = nn.Linear(ch, classes)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        x = self.blocks(x)
        x = x.mean(dim=(2, 3))
        return self.head(x)
