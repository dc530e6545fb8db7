#!/usr/bin__future__ import division
__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))())
with __ncrt__.range("m:L3"): import sys

with __ncrt__.range("m:L6-9"):
    def main(argv):
        """main docstring"""
        print(__doc__)
        return len(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
