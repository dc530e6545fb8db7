# A Python file beside C++ and CUDA files: a full trace instruments
# every language of the tree.
def main():
    return open("csrc/kernel.cpp").read()
