def k(out, a, x):
    out[0] = sum(a) + sum(a, 0.5) + max(a) - min(a[1:]) + sum((x, 2, 3.5)) + max((x, 1.0))
