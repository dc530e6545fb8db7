"""User context classes are used as given."""; from mytools.timing import Timer as _ncrt_ctx0

def f(x):
    with _ncrt_ctx0("f", len(str(x))):
        return x
