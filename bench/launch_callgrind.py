"""launch_callgrind.py — a fixed number of empty-kernel launches for instruction counts.

Usage: python bench/launch_callgrind.py MODE N, MODE "0" (kernel without arguments) or "4"
(four float32 nbcuda device arrays); "-" compiles and warms up only. Run it under
`valgrind --tool=callgrind` with two N and divide the difference by their difference: the
compile, import and warm-up costs cancel and what is left is one `k[1, 32](...)` launch.
Used for bench/RESULTS.md "Launch path instruction counts".
"""
import os
import sys
import numpy as np
os.environ.setdefault("NUMBA_DISABLE_PERFORMANCE_WARNINGS", "1")  # one-block grids: no warnings
import nbcuda as cuda

import empty_kernels  # bench/, next to this script

mode, n = sys.argv[1], int(sys.argv[2])
kernels = empty_kernels.jit_all(cuda)
j0, j4 = kernels[0], kernels[4]
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
