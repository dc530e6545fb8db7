"""User context classes are used as given."""; from mytools.timing import Timer as __ncrt_ctx0__


def f(x):
    with __ncrt_ctx0__("f", len(str(x))): return x
