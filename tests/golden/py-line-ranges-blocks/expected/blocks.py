__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))())
def work(items, mode):
    total = 0
    if mode == "a":
        with __ncrt__.range("if-body"):
            total += 1
            total += 2
    elif mode == "b":
        with __ncrt__.range("elif-body"): total += 3
    else:
        with __ncrt__.range("else-body"):
            total += 4
            total += 5
    for x in items:
        with __ncrt__.range("for-body"):
            total += x
            total *= 2
    else:
        with __ncrt__.range("for-else"): total -= 1
    while total > 100:
        total //= 2
    else:
        with __ncrt__.range("while-else"): total += 7
    try:
        total += int(mode)
    except ValueError:
        with __ncrt__.range("except-body"):
            total += 10
            total += 11
    else:
        with __ncrt__.range("try-else"): total += 12
    finally:
        with __ncrt__.range("finally"): total += 13
    with open("/dev/null") as f:
        with __ncrt__.range("with-body"):
            f.read()
            total += 14
    match mode:
        case "a":
            with __ncrt__.range("case-a"):
                total += 15
                total += 16
        case _:
            with __ncrt__.range("case-default"): total += 17
    return total
def tail(items):
    acc = []
    with __ncrt__.range("snapped"):
        with __ncrt__.range("loop-tail-and-next"):
            for x in items:
                acc.append(x)
                acc.append(x * 2)
            acc.append(-1)
        return acc
