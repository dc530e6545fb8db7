#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""Module docstring stays the docstring."""
from __future__ import annotations
from __future__ import division; _ncrt = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(getattr(f, "find_spec", lambda *a: None)("ncrt", None) for f in __import__("sys").meta_path) else None); _ncrt_nop = type("_ncrt_nop", (), {"__init__": lambda s, *a, **k: None, "__enter__": lambda s: s, "__exit__": lambda s, *a: None}); _ncrt_range = getattr(_ncrt, "range", _ncrt_nop)

import sys

def main(argv):
    """main docstring"""
    with _ncrt_range("main"):
        print(__doc__)
        return len(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
