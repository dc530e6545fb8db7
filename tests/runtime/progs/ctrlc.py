"""ctrlc.py MODE: 20000 "before" ranges, then "ready" and a wait on stdin
inside the range "waiting", for the test's ^C (typed on a pty).

  unhandled  the KeyboardInterrupt is not caught: CPython finalizes (the
             atexit handler records "in.atexit"), sets SIGINT back to its
             default and kills itself with it
  handled    caught: prints "interrupted", reads a line, records "cleanup",
             prints "clean" and exits 0 (a second SIGINT meanwhile would
             end it with 130)
"""
import atexit
import sys

import ncrt


def at_exit():
    with ncrt.range("in.atexit"):
        pass


atexit.register(at_exit)
for i in range(20000):
    with ncrt.range("before"):
        pass
try:
    with ncrt.range("waiting"):
        print("ready", flush=True)
        sys.stdin.readline()
except KeyboardInterrupt:
    if sys.argv[1] != "handled":
        raise
    print("interrupted", flush=True)
    sys.stdin.readline()
    with ncrt.range("cleanup"):
        pass
    print("clean", flush=True)
