"""A tiny synchronous DDP job (gloo, CPU) for tests/runtime/test_nodes.py.

Each rank trains a small model through DistributedDataParallel with a
DistributedSampler and one DataLoader worker; the rank named by
NCRT_TEST_SLOW_RANK sleeps NCRT_TEST_SLOW_MS (default 30) ms per step inside a
`slow_down` range, so
the other ranks wait for it in `backward` (DDP's all-reduce). Every step
ends with a `barrier` range (a collective whose end every rank leaves at
about the same moment: the clock alignment's anchor). The rank comes from
RANK (a launcher) or, with --rank R, from init_process_group(rank=R); the
group is destroyed before exit, as programs usually do. Steps: run it with
`ncrun --step train_step`.
"""
import os
import sys
import time

import ncrt
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def collate(batch):
    # runs in the DataLoader worker: its trace is a helper of this rank
    with ncrt.range("collate"):
        return torch.stack([b[0] for b in batch]), torch.stack([b[1] for b in batch])


def main():
    args = sys.argv[1:]
    steps = int(os.environ.get("NCRT_TEST_STEPS", "6"))
    slow = int(os.environ.get("NCRT_TEST_SLOW_RANK", "-1"))
    if "--rank" in args:
        r = int(args[args.index("--rank") + 1])
        w = int(args[args.index("--world") + 1])
        dist.init_process_group("gloo", rank=r, world_size=w)
    else:
        dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64 * dist.get_world_size(), 16), torch.randn(64 * dist.get_world_size(), 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, sampler=sampler, num_workers=1, collate_fn=collate)
    model = DDP(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    it = iter(loader)
    for _ in range(steps):
        with ncrt.range("train_step"):
            x, y = next(it)
            with ncrt.range("forward"):
                loss = ((model(x) - y) ** 2).mean()
            if rank == slow:
                with ncrt.range("slow_down"):
                    time.sleep(float(os.environ.get("NCRT_TEST_SLOW_MS", "30")) / 1e3)
            with ncrt.range("backward"):
                loss.backward()
            with ncrt.range("optimizer"):
                opt.step()
                opt.zero_grad()
            with ncrt.range("barrier"):
                dist.barrier()
            with ncrt.range("all_reduce"):
                dist.all_reduce(torch.ones(1))
    del it
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
