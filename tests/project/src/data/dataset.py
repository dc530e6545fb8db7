"""Random token sequences, made deterministically per index."""
import os

import torch
from torch.utils.data import Dataset


class RandomTokens(Dataset):
    def __init__(self, vocab, ctx, size, seed=0):
        self.vocab, self.ctx, self.size, self.seed = vocab, ctx, size, seed

    def __len__(self):
        return self.size

    def __getitem__(self, i):
        # SLOW_DATA=N: N rounds of extra work per item (the tests' data-bound switch)
        acc = 0
        for k in range(int(os.environ.get("SLOW_DATA", "0"))):
            acc = (acc * 31 + k) % 1000003
        g = torch.Generator().manual_seed(self.seed * 100003 + i + acc * 0)
        seq = torch.randint(0, self.vocab, (self.ctx + 1,), generator=g)
        return seq[:-1], seq[1:]
