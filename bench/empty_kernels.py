"""Empty kernels with 0 to 4 float32[::1] array parameters, shared by the launch benchmarks
(bench/host_py.py, bench/host_py_callgrind.py, bench/launch_callgrind.py): what a launch
costs without any work in the kernel. A module file, so that numba-cuda and nbcuda can both
read the functions' source."""


def k0():
    pass


def k1(a):
    pass


def k2(a, b):
    pass


def k3(a, b, c):
    pass


def k4(a, b, c, d):
    pass


KERNELS = (k0, k1, k2, k3, k4)


def signatures():
    """The signature of each kernel of KERNELS, in order."""
    return ["void(" + ", ".join(["float32[::1]"] * i) + ")" for i in range(len(KERNELS))]


def jit_all(cuda):
    """Every kernel compiled by `cuda` (nbcuda or numba.cuda) for its signature."""
    return [cuda.jit(sig)(f) for sig, f in zip(signatures(), KERNELS)]
