import numpy as np
from numba import cuda
def k1(out):
    loc = cuda.local.array(4, np.dtype('float32'))
    loc[0] = 1.5
    out[0] = loc[0]
def k2(out):
    sh = cuda.shared.array(4, dtype=np.dtype('<i4'))
    sh[0] = 3
    out[0] = sh[0]
def k4(out):
    v = out.view(np.dtype('int64'))
    v[0] = 1
def k5(out):
    d = np.dtype(np.float32)
    loc = cuda.local.array(2, d)
    loc[0] = 2
    out[0] = loc[0]
def k6(out):
    loc = cuda.local.array(2, 'f8')
    loc[0] = 2
    out[0] = loc[0]
def bad1(out):
    loc = cuda.local.array(4, np.dtype('float128'))
def bad2(out):
    d = np.dtype(out)
