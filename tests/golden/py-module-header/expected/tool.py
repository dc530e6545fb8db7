#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""Module docstring stays the docstring."""
from __future__ import annotations
from __future__ import division; _ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext

import sys

def main(argv):
    """main docstring"""
    with _ncrt_range("main"):
        print(__doc__)
        return len(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
