def work(items, mode):
    total = 0
    if mode == "a":
        total += 1
        total += 2
    elif mode == "b":
        total += 3
    else:
        total += 4
        total += 5
    for x in items:
        total += x
        total *= 2
    else:
        total -= 1
    while total > 100:
        total //= 2
    else:
        total += 7
    try:
        total += int(mode)
    except ValueError:
        total += 10
        total += 11
    else:
        total += 12
    finally:
        total += 13
    with open("/dev/null") as f:
        f.read()
        total += 14
    match mode:
        case "a":
            total += 15
            total += 16
        case _:
            total += 17
    return total


def tail(items):
    acc = []
    for x in items:
        acc.append(x)
        acc.append(x * 2)
    acc.append(-1)
    return acc
