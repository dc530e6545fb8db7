"""A workload touching many pure-Python standard-library modules; its output
must be the same with the original and with the instrumented library."""
import json, argparse, difflib, csv, io, configparser, email, textwrap, collections, dataclasses, enum, re, fractions, decimal, statistics, string, pprint, shlex, base64, heapq, bisect, functools, itertools, operator, typing, asyncio, contextlib
print(json.dumps({"a": [1, 2.5, None]}, sort_keys=True))
p = argparse.ArgumentParser(); p.add_argument("--x", type=int); print(p.parse_args(["--x", "3"]))
print(list(difflib.unified_diff(["a\n","b\n"],["a\n","c\n"])))
print(statistics.mean([1,2,3,4]), fractions.Fraction(3, 6), decimal.Decimal("1.10") + 2)
print(textwrap.fill("hello world " * 5, 20))
@dataclasses.dataclass
class P:
    x: int
    y: int = 2
print(P(1), enum.Enum("C", "A B").A)
async def main():
    await asyncio.sleep(0)
    return 5
print(asyncio.run(main()))
print(pprint.pformat({"k": list(range(5))}), shlex.split("a 'b c'"))
c = configparser.ConfigParser(); c.read_string("[s]\nk=v\n"); print(c["s"]["k"])
print(email.message_from_string("Subject: hi\n\nbody").get("Subject"))
