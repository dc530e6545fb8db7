# A Python tree with C++/CUDA templates it compiles at run time: full trace
# instruments the Python only.
def main():
    return open("csrc/kernel.cpp").read()
