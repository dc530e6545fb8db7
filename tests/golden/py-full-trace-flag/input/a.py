def a():
    return 1


class K:
    def m(self):
        return 2
