de + 1
    y = x * 2
    z = 
   3
    w = z / 4
    return w
