from nbcuda import grid, atomic as at, threadIdx, shfl_down_sync, popc, laneid
from numba.cuda import match_any_sync, match_all_sync, nanosleep
import nbcuda as cuda
add = cuda.atomic.add
g = cuda.grid
cas = at.cas
tx = cuda.threadIdx.x


def k(out, x):
    i = g(1) + grid(1)
    v = shfl_down_sync(0xFFFFFFFF, x[i], 1)
    m, p = match_all_sync(0xFFFFFFFF, v)
    nanosleep(10)
    add(out, 0, popc(i) + laneid + threadIdx.x + m + p + match_any_sync(-1, 0.5))
    cas(out, 1, 0, v)
    at.max(out, 2, tx)
