def k(a, o, n):
    b = a.reshape((n, -1))
    c = a.T.reshape(a.size)
    o[0] = b[0, 1] + c[2]
