#!/usr/bin/env python3
"""Run the block a few times and print a checksum."""
import random

from model.attention import MLP, Attention


def rand(n, m, rng):
    return [[rng.uniform(-1, 1) for _ in range(m)] for _ in range(n)]


def main():
    rng = random.Random(0)
    d = 16
    attn = Attention(rand(d, d, rng), rand(d, d, rng), rand(d, d, rng))
    mlp = MLP(rand(d, 4 * d, rng), rand(4 * d, d, rng))
    x = rand(8, d, rng)
    for step in range(3):
        x = mlp.forward(attn.forward(x))
        print("step %d checksum %.6f" % (step, sum(map(sum, x))))


if __name__ == "__main__":
    main()
