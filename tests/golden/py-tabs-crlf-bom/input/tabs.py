class T:
	def m(self, x):
		if x:
			return 1
		return 2
