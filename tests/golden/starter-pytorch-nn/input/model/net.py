"""A small model: two nn.Modules."""
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.mlp = MLP(d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        x = x + self.mlp(self.norm(x))
        return x
