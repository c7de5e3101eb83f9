def k(a, b):
    a[0] = (a[1] is None) + (a[1] is not b) + (b is b)
