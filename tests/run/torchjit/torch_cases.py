"""torch's own nn, optim, utils.data and nn.functional under TorchScript and
in training: the cases of tests/run/test_torch_jit.py --own.

    torch_cases.py RESULT.pickle

Whatever torch is first on sys.path is used (the test puts an overlay whose
torch/nn, torch/optim and torch/utils/data are instrumented first). One line
per case, outputs pickled (driver_util).
"""
import sys
import warnings

import torch

from driver_util import Runner

warnings.filterwarnings("ignore")
torch.set_num_threads(1)

import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch.optim as optim  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

R = Runner(sys.argv[1])


def x_of(*shape, seed=1):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def module_case(name, build, inputs):
    def eager():
        torch.manual_seed(0)
        m = build().eval()
        with torch.no_grad():
            return m(*inputs())

    def script():
        torch.manual_seed(0)
        m = build().eval()
        s = torch.jit.script(m)
        R.graph_note(s)
        with torch.no_grad():
            return [s(*inputs()), s(*inputs())]
    R.case(name + "/eager", eager)
    R.case(name + "/script", script)


module_case("Linear", lambda: nn.Linear(3, 4), lambda: (x_of(5, 3),))
module_case("TransformerEncoderLayer", lambda: nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32),
            lambda: (x_of(7, 2, 16),))
module_case("TransformerEncoderLayer-batch_first",
            lambda: nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True),
            lambda: (x_of(2, 7, 16),))
module_case("conv-bn-pool", lambda: nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                                                  nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.5),
                                                  nn.Linear(4 * 4 * 4, 3), nn.LogSoftmax(dim=1)),
            lambda: (x_of(2, 3, 8, 8),))


def uses_functional(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    # compiled from the source of torch/nn/functional.py (the instrumented one)
    y = F.linear(x, w)
    y = F.layer_norm(y, [y.shape[-1]])
    y = F.gelu(y)
    y = F.dropout(y, 0.5, training=False)
    y = F.pad(y, [1, 1])
    y = F.interpolate(y.unsqueeze(0), scale_factor=2.0, mode="linear", align_corners=False).squeeze(0)
    return F.softmax(y, dim=-1) + F.cross_entropy(y, torch.zeros(y.shape[0], dtype=torch.long))


def functional_eager():
    return uses_functional(x_of(4, 3), x_of(5, 3, seed=2))


def functional_script():
    f = torch.jit.script(uses_functional)
    R.graph_note(f)
    return [f(x_of(4, 3), x_of(5, 3, seed=2)), f(x_of(4, 3), x_of(5, 3, seed=2))]


R.case("functional/eager", functional_eager)
R.case("functional/script", functional_script)


def train(make_opt, steps=4):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = make_opt(model.parameters())
    x, y = x_of(16, 4), x_of(16, 2, seed=2)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "state": model.state_dict(), "opt": opt.state_dict()["state"]}


R.case("optim.SGD", lambda: train(lambda p: optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-3)))
R.case("optim.Adam", lambda: train(lambda p: optim.Adam(p, lr=0.01)))


def sgd_scheduler():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = optim.SGD(model.parameters(), lr=0.5)
    sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(5):
        opt.zero_grad()
        model(x_of(4, 3)).sum().backward()
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    return {"lrs": lrs, "state": model.state_dict()}


R.case("optim.lr_scheduler", sgd_scheduler)


def loader(workers):
    def run():
        ds = TensorDataset(torch.arange(40.).view(20, 2), torch.arange(20))
        dl = DataLoader(ds, batch_size=3, shuffle=True, num_workers=workers,
                        generator=torch.Generator().manual_seed(5))
        return [[a, b] for a, b in dl]
    return run


R.case("DataLoader", loader(0))
R.case("DataLoader-2-workers", loader(2))

for mod in ("torch", "torch.nn", "torch.nn.functional", "torch.nn.modules.linear", "torch.nn.modules.transformer",
            "torch.nn.modules.activation", "torch.optim.sgd", "torch.optim.adam", "torch.utils.data.dataloader",
            "torch.utils.data.dataset", "torch.jit._script"):
    R.info[mod] = R.module_info(mod)
R.save()
