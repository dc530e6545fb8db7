class Attention:
    def forward(self, x):
        return x


def helper():
    return 1
