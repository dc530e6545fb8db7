"""A Python program that runs another Python process (same rank, same
trace name): neither trace may replace the other."""
import subprocess
import sys

import ncrt

if len(sys.argv) > 1:
    for i in range(2):
        with ncrt.range("child.work"):
            pass
    sys.exit(0)
with ncrt.range("parent.work"):
    subprocess.run([sys.executable, __file__, "child"], check=True)
print("ok")
