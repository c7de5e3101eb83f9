# gufunc.py — the kernel numba's cuda.guvectorize wraps around a core function: thread i
# calls it on the i-th core block of every argument. A template (src/python/gufunc.c fills it
# once per signature): NAME is the function's name as an identifier, PARAMS the kernel's
# parameters arg0, arg1, ..., LENGTHS their outer extents (argK.shape[0]; the loop runs over
# the shortest) and ARGS each argument's block at the thread's index. __core__ (the user's
# function as a device function) and __cuda__ (the nbcuda module) are in the namespace the
# kernel is made in.
def __gufunc_@NAME@(@PARAMS@):
    __tid__ = __cuda__.grid(1)
    if __tid__ < min(@LENGTHS@):
        __core__(@ARGS@)
