def not_targeted():
    return 1
