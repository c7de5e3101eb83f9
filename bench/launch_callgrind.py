"""launch_callgrind.py — a fixed number of empty-kernel launches for instruction counts.

Usage: python bench/launch_callgrind.py MODE N, MODE "0" (kernel without arguments) or "4"
(four float32 nbcuda device arrays); "-" compiles and warms up only. Run it under
`valgrind --tool=callgrind` with two N and divide the difference by their difference: the
compile, import and warm-up costs cancel and what is left is one `k[1, 32](...)` launch.
Used for bench/RESULTS.md "Launch path instruction counts".
"""
import sys
import numpy as np
import nbcuda as cuda

def k0():
    pass

def k4(a, b, c, d):
    pass

mode, n = sys.argv[1], int(sys.argv[2])
j0 = cuda.jit("void()")(k0)
j4 = cuda.jit("void(float32[::1], float32[::1], float32[::1], float32[::1])")(k4)
a, b, c, d = (cuda.device_array(256, np.float32) for _ in range(4))
for _ in range(50):
    j0[1, 32](); j4[1, 32](a, b, c, d)
cuda.synchronize()
if mode == "0":
    for _ in range(n):
        j0[1, 32]()
elif mode == "4":
    for _ in range(n):
        j4[1, 32](a, b, c, d)
cuda.synchronize()
