#!/usr/bin__future__ import division

import sys


def main(argv):
    """main docstring"""
    print(__doc__)
    return len(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
