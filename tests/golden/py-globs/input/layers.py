class EncoderLayer:
    def forward(self, x):
        return x + 1

    def reset(self):
        self.n = 0


class DecoderLayer:
    def forward(self, x):
        return x - 1


class Helper:
    def forward(self, x):
        return x


def build_encoder():
    return EncoderLayer()


def build_decoder():
    return DecoderLayer()
