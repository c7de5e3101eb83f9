"""Warp, vote, barrier, bit and atomic intrinsics on the GPU (numba-cuda's cudadecl /
intrinsics.py / cudaimpl.py typing and results): warp reductions with shfl_*_sync, ballot
and popc counts, vote predicates, syncthreads_count, a histogram with atomic.inc, cas on
a thread's own element, the bit tricks popc/brev/clz/ffs/selp/fma/cbrt, match_any_sync /
match_all_sync, nanosleep, and names bound at module level (grid1 = cuda.grid). Every result is
deterministic for a given launch, so both compilers must agree exactly (integers) or
within 2 ulp (floats)."""
try:
    import nbcuda as cuda
except ImportError:
    from numba import cuda

FULL = 0xFFFFFFFF


def warp_sum_f64(out, x):
    # a warp reduction with shfl_down_sync; lane 0 of each warp writes its warp's sum
    i = cuda.grid(1)
    v = 0.0
    if i < x.size:
        v = x[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    w = i // 32
    if cuda.laneid == 0 and w < out.size:
        out[w] = v


def warp_max_i64(out, x):
    # a butterfly reduction with shfl_xor_sync: every lane ends with the warp's maximum
    i = cuda.grid(1)
    v = x[i]
    m = 1
    while m < cuda.warpsize:
        v = max(v, cuda.shfl_xor_sync(FULL, v, m))
        m *= 2
    out[i] = v


def shuffles_f32(out, x):
    # shfl_sync from lane 3, shfl_up_sync by 1 (lane 0 keeps its own value)
    i = cuda.grid(1)
    v = x[i]
    a = cuda.shfl_sync(FULL, v, 3)
    b = cuda.shfl_up_sync(FULL, v, 1)
    out[i] = a * 2 + b


def ballot_popc(out, x):
    # each lane: how many lanes of its warp hold a positive value, and how many before it
    i = cuda.grid(1)
    p = x[i] > 0
    b = cuda.ballot_sync(FULL, p)
    below = cuda.popc(b & cuda.lanemask_lt())
    out[i] = cuda.popc(b) * 100 + below


def votes(out, x):
    i = cuda.grid(1)
    v = x[i]
    r = 0
    if cuda.all_sync(FULL, v >= 0):
        r += 1
    if cuda.any_sync(FULL, v > 5):
        r += 2
    if cuda.eq_sync(FULL, v & 1):
        r += 4
    cuda.syncwarp()
    out[i] = r + (cuda.activemask() == FULL) * 8


def block_counts(out, x):
    # syncthreads_count/and/or over each block, with fences around the shared writes
    i = cuda.grid(1)
    v = x[i]
    # numba-cuda takes an integer predicate here, not a boolean
    c = cuda.syncthreads_count(int(v > 3))
    a = cuda.syncthreads_and(int(v < 7))
    o = cuda.syncthreads_or(v // 7)
    cuda.threadfence_block()
    cuda.threadfence()
    out[i] = c * 4 + a * 2 + o


def histogram_inc(hist, x):
    # atomic.inc with a limit larger than any count is a plain counter; wrapping at 1000
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.inc(hist, x[i] % hist.size, 1000000)


def cas_own(out, x):
    # cas on the thread's own element: the first swap succeeds, the second sees the new value
    i = cuda.grid(1)
    if i < x.size:
        first = cuda.atomic.cas(out, i, 0, x[i])
        second = cuda.atomic.cas(out, i, 0, 7)
        out[i] = out[i] * 10 + first + second


def bitwise_atomics(out, x):
    # and_/or_/xor/exch/max over a few words: order-independent results
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        cuda.atomic.or_(out, 0, v)
        cuda.atomic.and_(out, 1, v)
        cuda.atomic.xor(out, 2, v)
        cuda.atomic.nanmax(out, 3, v)
        cuda.atomic.dec(out, 4, 1000000)


def bit_tricks(x):
    return cuda.popc(x) + cuda.clz(x) * 100 + cuda.ffs(x) * 10000


def brev32(x):
    return cuda.brev(x)


def brev64(x):
    return cuda.brev(x)


def fma_cbrt(a, b):
    return cuda.fma(a, b, 1.0) + cuda.cbrt(a)


def select(a, b):
    return cuda.selp(a > b, a, b) + cuda.selp(a < b, a, b)


def match_lanes(out, x):
    # match_any_sync: the lanes holding the same small value (int64 and float64 values);
    # match_all_sync over a value every lane of a warp shares, and over one they do not
    i = cuda.grid(1)
    v = x[i]
    same = cuda.match_any_sync(FULL, v)
    same_f = cuda.match_any_sync(FULL, v * 0.5)
    wmask, wall = cuda.match_all_sync(FULL, i // 32)
    vmask, vall = cuda.match_all_sync(FULL, v)
    out[i] = same + (same_f == same) * 2 + wmask * 3 + wall * 5 + vmask * 7 + vall * 11


def sleepy(out, x):
    # nanosleep only delays; the result is the plain copy
    i = cuda.grid(1)
    if i < x.size:
        cuda.nanosleep(100 + i % 7)
        out[i] = x[i] * 2


# kernel-language names bound at module level, used without `cuda.` (numba-cuda types its
# @intrinsic names, grid and the shuffles among them, this way too)
grid1 = cuda.grid
shfl_down = cuda.shfl_down_sync


def warp_sum_names(out, x):
    i = grid1(1)
    v = x[i]
    off = 16
    while off > 0:
        v += shfl_down(FULL, v, off)
        off //= 2
    out[i] = v


N = 4096
CASES = [
    ("warp_sum_f64", "void(float64[:], float64[:])", "kernel",
     {"arrays": [("out", "float64", (N // 32,)), ("in", "float64", (N,), "normal")],
      "launch": (N // 128, 128)}),
    ("warp_max_i64", "void(int64[:], int64[:])", "kernel",
     {"arrays": [("out", "int64", (N,)), ("in", "int64", (N,), "ints")],
      "launch": (N // 256, 256)}),
    ("shuffles_f32", "void(float32[:], float32[:])", "kernel",
     {"arrays": [("out", "float32", (N,)), ("in", "float32", (N,), "normal")],
      "launch": (N // 64, 64)}),
    ("ballot_popc", "void(int32[:], float64[:])", "kernel",
     {"arrays": [("out", "int32", (N,)), ("in", "float64", (N,), "normal")],
      "launch": (N // 128, 128)}),
    ("votes", "void(int64[:], int64[:])", "kernel",
     {"arrays": [("out", "int64", (N,)), ("in", "int64", (N,), "small_ints")],
      "launch": (N // 128, 128)}),
    ("block_counts", "void(int32[:], int64[:])", "kernel",
     {"arrays": [("out", "int32", (N,)), ("in", "int64", (N,), "small_ints")],
      "launch": (N // 256, 256)}),
    ("histogram_inc", "void(uint32[:], int64[:])", "kernel",
     {"arrays": [("out_zero", "uint32", (64,)), ("in", "int64", (N,), "positive_ints")],
      "launch": (N // 128, 128)}),
    ("cas_own", "void(int64[:], int64[:])", "kernel",
     {"arrays": [("out_zero", "int64", (N,)), ("in", "int64", (N,), "positive_ints")],
      "launch": (N // 128, 128)}),
    ("bitwise_atomics", "void(uint64[:], uint64[:])", "kernel",
     {"arrays": [("out_zero", "uint64", (5,)), ("in", "uint64", (N,), "positive_ints")],
      "launch": (N // 128, 128)}),
    ("bit_tricks", "int64(int64)", "device", {"args": [("int64", "ints")]}),
    ("brev32", "uint32(uint32)", "device", {"args": [("uint32", "positive_ints")]}),
    ("brev64", "uint64(uint64)", "device", {"args": [("uint64", "positive_ints")]}),
    ("fma_cbrt", "float64(float64, float64)", "device",
     {"args": [("float64", "normal"), ("float64", "normal")]}),
    ("select", "int64(int64, int64)", "device",
     {"args": [("int64", "ints"), ("int64", "ints")]}),
    ("match_lanes", "void(int64[:], int64[:])", "kernel",
     {"arrays": [("out", "int64", (N,)), ("in", "int64", (N,), "small_ints")],
      "launch": (N // 128, 128)}),
    ("sleepy", "void(int64[:], int64[:])", "kernel",
     {"arrays": [("out", "int64", (N,)), ("in", "int64", (N,), "ints")],
      "launch": (N // 128, 128)}),
    ("warp_sum_names", "void(int64[:], int64[:])", "kernel",
     {"arrays": [("out", "int64", (N,)), ("in", "int64", (N,), "ints")],
      "launch": (N // 128, 128)}),
]
