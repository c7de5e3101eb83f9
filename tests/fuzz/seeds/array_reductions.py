import numpy as np
def k(out, a):
    out[0] = a.sum() + np.amax(a[1:]) + a.argmin() + a.mean() + a.var() + np.any(a)
