import torch

from model.net import Net


def train_step(model, opt, x, y):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
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
