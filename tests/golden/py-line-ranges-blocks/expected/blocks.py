_ncrt = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(getattr(f, "find_spec", lambda *a: None)("ncrt", None) for f in __import__("sys").meta_path) else None); _ncrt_nop = type("_ncrt_nop", (), {"__init__": lambda s, *a, **k: None, "__enter__": lambda s: s, "__exit__": lambda s, *a: None}); _ncrt_range = getattr(_ncrt, "range", _ncrt_nop)
def work(items, mode):
    total = 0
    if mode == "a":
        with _ncrt_range("if-body"):
            total += 1
            total += 2
    elif mode == "b":
        with _ncrt_range("elif-body"):
            total += 3
    else:
        with _ncrt_range("else-body"):
            total += 4
            total += 5
    for x in items:
        with _ncrt_range("for-body"):
            total += x
            total *= 2
    else:
        with _ncrt_range("for-else"):
            total -= 1
    while total > 100:
        total //= 2
    else:
        with _ncrt_range("while-else"):
            total += 7
    try:
        total += int(mode)
    except ValueError:
        with _ncrt_range("except-body"):
            total += 10
            total += 11
    else:
        with _ncrt_range("try-else"):
            total += 12
    finally:
        with _ncrt_range("finally"):
            total += 13
    with open("/dev/null") as f:
        with _ncrt_range("with-body"):
            f.read()
            total += 14
    match mode:
        case "a":
            with _ncrt_range("case-a"):
                total += 15
                total += 16
        case _:
            with _ncrt_range("case-default"):
                total += 17
    return total
def tail(items):
    acc = []
    with _ncrt_range("snapped"):
        with _ncrt_range("loop-tail-and-next"):
            for x in items:
                acc.append(x)
                acc.append(x * 2)
            acc.append(-1)
        return acc
