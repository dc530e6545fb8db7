import torch


class Attention:
    def forward(self, x):
        y = self.proj(x)
        y = torch.softmax(y, dim=-1)
        return y

    def proj(self, x):
        return x * 2


def matrix_multiply(a, b):
    c = a @ b
    d = c + 1
    e = d * 2
    return e
