from numba import cuda, int32, uint32


@cuda.jit(device=True)
def helper(ary, n, dtype, flag, op):
    sm = cuda.shared.array(n, dtype)
    if flag:
        n = n * 2.5
    else:
        op(sm, 0, 1)
    ary[0] = sm[0]


def kernel(ary, arr):
    helper(ary, 32, uint32, False, cuda.atomic.add)
    for v in (1, 2):
        ary[v] = v
    for v in tuple((arr, arr)):
        v = v.reshape(6)
        ary[0] += v[0]
    N = 10
    loc = cuda.local.array(N, int32)
    N = 20
    c = 0
    while c < N:
        c += 1
        if c > 5:
            break
    ary[1] = loc[0] + c + max(ary[0], 1.5)
