"""Explicit steps from Python: ncrt.step() after each iteration."""
import ncrt

for i in range(8):
    with ncrt.range("iter %d" % i):
        pass
    ncrt.step()
print("done")
