#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""Module docstring stays the docstring."""
from __future__ import annotations
from __future__ import division

import sys


def main(argv):
    """main docstring"""
    print(__doc__)
    return len(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
