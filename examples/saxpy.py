"""The example kernel of the quick start: r = a * x + y, written as Numba users write it."""
try:
    import nbcuda as cuda
except ImportError:
    from numba import cuda


def saxpy(r, a, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = a * x[i] + y[i]
