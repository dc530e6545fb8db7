"""Train the small model for a few steps on random data (GPU if any, else CPU)."""
import torch
from torch import nn

from model import Net


def batch(n=16):
    return torch.randn(n, 3, 32, 32).to(DEVICE), torch.randint(0, 10, (n,)).to(DEVICE)


def train_step(net, opt, loss_fn, x, y):
    opt.zero_grad()
    out = net(x)
    loss = loss_fn(out, y)
    loss.backward()
    opt.step()
    return loss.item()


DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    net = Net().to(DEVICE)
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(8):
        x, y = batch()
        loss = train_step(net, opt, loss_fn, x, y)
    print(f"loss {loss:.3f}")


if __name__ == "__main__":
    main()
