def broken(:
    return 1

def fine():
    return 2
