def gen():
    return 5
