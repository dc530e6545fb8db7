"""Training and validation loops."""
import math

import torch
from torch import nn


def lr_at(step, warmup, total, base):
    if step < warmup:
        return base * (step + 1) / warmup
    p = (step - warmup) / max(1, total - warmup)
    return base * 0.5 * (1 + math.cos(math.pi * p))


def train_step(model, opt, x, y):
    logits = model(x)
    loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss.item()


def train_epoch(model, opt, loader, step0, total, base_lr):
    model.train()
    step = step0
    for x, y in loader:
        for group in opt.param_groups:
            group["lr"] = lr_at(step, 2, total, base_lr)
        train_step(model, opt, x, y)
        step += 1
    return step


@torch.no_grad()
def validate(model, loader):
    model.eval()
    total, n = 0.0, 0
    for x, y in loader:
        logits = model(x)
        total += nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1)).item()
        n += 1
    return total / max(n, 1)
