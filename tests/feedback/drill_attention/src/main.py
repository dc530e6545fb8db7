"""Runs attention a few times on fixed inputs (no randomness, no clock)."""
from attn.attention import Mat, attention, cold

N, D, W = 20, 2, 600  # the `@` line sums N*W products of N, the scores N*N of D: >50x


def matrix(rows, cols, seed):
    return Mat([[((i * 7 + j * 3 + seed) % 11) / 10 for j in range(cols)] for i in range(rows)])


def main():
    q, k, v = matrix(N, D, 1), matrix(N, D, 2), matrix(N, W, 3)
    cold(500)
    for _ in range(5):
        out = attention(q, k, v)
    print("checksum %.6f" % sum(map(sum, out.rows)))


main()
