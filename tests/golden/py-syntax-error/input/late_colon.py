# A missing colon on line 16: reported there, not at 1:1 (tree-sitter wraps
# everything before it in one ERROR node).
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        return y

    def extra(self, x)
        return x * 2
