import os


from fast.impl import FastSlow as Slow






class Keep:
    run = __import__("importlib").import_module("fast.impl").Keep.run


    def other(self):
        return 1
