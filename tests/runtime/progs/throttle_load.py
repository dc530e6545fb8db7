"""A deterministic workload for the throttle: a recursive name (a chain 60
deep, many times), a hot leaf, and a slow name called rarely. The same
program must record the same ranges whatever the machine's load."""
import ncrt


def chain(n):
    with ncrt.range("chain"):
        return 0 if n == 0 else chain(n - 1) + 1


def leaf(i):
    with ncrt.range("leaf"):
        return i * 2


def slow():
    with ncrt.range("slow"):
        return sum(i * i for i in range(20000))


def main():
    total = 0
    for r in range(100):
        total += chain(60)
        for i in range(50):
            total += leaf(i)
        if r % 10 == 0:
            total += slow() % 7
    print(total)


if __name__ == "__main__":
    with ncrt.range("main"):
        main()
