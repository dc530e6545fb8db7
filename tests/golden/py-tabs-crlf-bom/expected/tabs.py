_ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext
class T:
	def m(self, x):
		with _ncrt_range("T.m"):
			if x:
				return 1
			return 2
