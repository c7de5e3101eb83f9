# vectorize.py — the kernel numba's cuda.vectorize wraps around a scalar function: one thread
# per element. A template (src/python/vectorize.c fills it once per signature): NAME is the
# function's name as an identifier, PARAMS the kernel's array parameters a0, a1, ... (one per
# argument of the signature) and ARGS their elements at the thread's index. __core__ (the
# user's function as a device function) and __cuda__ (the nbcuda module) are in the namespace
# the kernel is made in.
def __vectorized_@NAME@(@PARAMS@, __out__):
    __tid__ = __cuda__.grid(1)
    if __tid__ < __out__.shape[0]:
        __out__[__tid__] = __core__(@ARGS@)
