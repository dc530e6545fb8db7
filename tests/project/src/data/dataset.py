"""Random token sequences, made deterministically per index."""
import os
import time

import torch
from torch.utils.data import Dataset


class RandomTokens(Dataset):
    def __init__(self, vocab, ctx, size, seed=0):
        self.vocab, self.ctx, self.size, self.seed = vocab, ctx, size, seed

    def __len__(self):
        return self.size

    def __getitem__(self, i):
        # SLOW_DATA=N: each item waits N ms, as a read from slow storage
        # would (the tests' data-bound switch). A wait, not CPU work: the
        # item stays slow however busy the machine is, so the loop stays
        # data-bound when the training step is slowed (ASan, load).
        slow = int(os.environ.get("SLOW_DATA", "0"))
        if slow:
            time.sleep(slow / 1000)
        g = torch.Generator().manual_seed(self.seed * 100003 + i)
        seq = torch.randint(0, self.vocab, (self.ctx + 1,), generator=g)
        return seq[:-1], seq[1:]
