"""Train a tiny language model on random tokens, checkpoint it, generate."""
import io
import sys

import torch
from torch.utils.data import DataLoader

from data.dataset import RandomTokens
from engine.loop import train_epoch, validate
from model.transformer import TinyLM


def main(epochs=2, workers=2):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    vocab, ctx = 64, 16
    model = TinyLM(vocab, ctx=ctx)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    train = DataLoader(RandomTokens(vocab, ctx, 64), batch_size=8, num_workers=workers,
                       persistent_workers=workers > 0)
    val = DataLoader(RandomTokens(vocab, ctx, 16, seed=1), batch_size=8)
    step, total = 0, epochs * len(train)
    for _ in range(epochs):
        step = train_epoch(model, opt, train, step, total, 3e-3)
        loss = validate(model, val)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    out = model.generate(torch.zeros(1, 1, dtype=torch.long), 8)
    print("steps", step, "val %.3f" % loss, "generated", out.shape[1])


if __name__ == "__main__":
    main(workers=int(sys.argv[1]) if len(sys.argv) > 1 else 2)
