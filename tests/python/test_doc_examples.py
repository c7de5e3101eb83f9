"""numba-cuda's documentation examples (numba_cuda/numba/cuda/tests/doc_examples, BSD-2-Clause,
Copyright (c) the Numba developers) run under `import nbcuda as cuda`.

Each example is the original code of its `test_ex_*` method, taking the cuda module as its
argument (`from numba import cuda` becomes the parameter, `from numba.cuda import X` becomes
`cuda.X`, submodules are imported by name from it) and returning the arrays it computed; its
CHECKS entry holds the original's assertions. CI (test driver): every example runs through —
its kernels compile through libNVVM, are loaded and launched — except those marked GPU-only.
The GPU runs each under nbcuda and under numba-cuda (in its own process), checks nbcuda's
results with the original assertions and compares them with numba-cuda's."""
import importlib
import math
import os

import numpy as np
import pytest

import nbcuda
import conftest

EXAMPLES = {}
CHECKS = {}
GPU_ONLY = {"random_3d_grid"}  # 1.8 GB of device memory: more than the test driver lends
NEEDS_NUMBA = {"montecarlo", "cpu_gpu_compat"}  # they call @numba.jit functions


def example(f):
    EXAMPLES[f.__name__] = f
    return f


def check(name):
    def register(f):
        CHECKS[name] = f
        return f
    return register


def submodule(cuda, name):
    """`from numba.cuda import config` or `from numba.cuda.random import ...` for whichever cuda
    module runs the example: its attribute, else its submodule, as `from ... import` does."""
    try:
        return getattr(cuda, name)
    except AttributeError:
        return importlib.import_module(f"{cuda.__name__}.{name}")


# ---------------------------------------------------------------- test_vecadd.py


@example
def vecadd(cuda):
    @cuda.jit
    def f(a, b, c):
        # like threadIdx.x + (blockIdx.x * blockDim.x)
        tid = cuda.grid(1)
        size = len(c)

        if tid < size:
            c[tid] = a[tid] + b[tid]

    np.random.seed(1)
    N = 100000
    a = cuda.to_device(np.random.random(N))
    b = cuda.to_device(np.random.random(N))
    c = cuda.device_array_like(a)
    f.forall(len(a))(a, b, c)
    first = c.copy_to_host()
    # Enough threads per block for several warps per block
    nthreads = 256
    # Enough blocks to cover the entire vector depending on its length
    nblocks = (len(a) // nthreads) + 1
    f[nblocks, nthreads](a, b, c)
    return {"first": first, "c": c.copy_to_host(), "a": a.copy_to_host(),
            "b": b.copy_to_host()}


@check("vecadd")
def _(r):
    np.testing.assert_equal(r["first"], r["a"] + r["b"])
    np.testing.assert_equal(r["c"], r["a"] + r["b"])


# ---------------------------------------------------------------- test_matmul.py


@example
def matmul(cuda):
    float32 = cuda.float32

    @cuda.jit
    def matmul(A, B, C):
        """Perform square matrix multiplication of C = A * B."""
        i, j = cuda.grid(2)
        if i < C.shape[0] and j < C.shape[1]:
            tmp = 0.0
            for k in range(A.shape[1]):
                tmp += A[i, k] * B[k, j]
            C[i, j] = tmp

    out = {}
    x_h = np.arange(16).reshape([4, 4])
    y_h = np.ones([4, 4])
    z_h = np.zeros([4, 4])
    x_d = cuda.to_device(x_h)
    y_d = cuda.to_device(y_h)
    z_d = cuda.to_device(z_h)
    threadsperblock = (16, 16)
    blockspergrid_x = math.ceil(z_h.shape[0] / threadsperblock[0])
    blockspergrid_y = math.ceil(z_h.shape[1] / threadsperblock[1])
    blockspergrid = (blockspergrid_x, blockspergrid_y)
    matmul[blockspergrid, threadsperblock](x_d, y_d, z_d)
    out["simple"] = z_d.copy_to_host()

    # Controls threads per block and shared memory usage.
    # The computation will be done on blocks of TPBxTPB elements.
    # TPB should not be larger than 32 in this example
    TPB = 16

    @cuda.jit
    def fast_matmul(A, B, C):
        """
        Perform matrix multiplication of C = A * B using CUDA shared memory.

        Reference: https://stackoverflow.com/a/64198479/13697228 by @RobertCrovella
        """
        # Define an array in the shared memory
        # The size and type of the arrays must be known at compile time
        sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
        sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)

        x, y = cuda.grid(2)

        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        bpg = cuda.gridDim.x  # blocks per grid

        # Each thread computes one element in the result matrix.
        # The dot product is chunked into dot products of TPB-long vectors.
        tmp = float32(0.0)
        for i in range(bpg):
            # Preload data into shared memory
            sA[ty, tx] = 0
            sB[ty, tx] = 0
            if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
                sA[ty, tx] = A[y, tx + i * TPB]
            if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
                sB[ty, tx] = B[ty + i * TPB, x]

            # Wait until all threads finish preloading
            cuda.syncthreads()

            # Computes partial product on the shared memory
            for j in range(TPB):
                tmp += sA[ty, j] * sB[j, tx]

            # Wait until all threads finish computing
            cuda.syncthreads()
        if y < C.shape[0] and x < C.shape[1]:
            C[y, x] = tmp

    for case, (x_h, y_h, z_h) in {
        "square": (np.arange(16).reshape([4, 4]), np.ones([4, 4]), np.zeros([4, 4])),
        "non_square": (np.arange(115).reshape([5, 23]), np.ones([23, 7]), np.zeros([5, 7])),
    }.items():
        x_d = cuda.to_device(x_h)
        y_d = cuda.to_device(y_h)
        z_d = cuda.to_device(z_h)
        threadsperblock = (TPB, TPB)
        grid_y_max = max(x_h.shape[0], y_h.shape[0])
        grid_x_max = max(x_h.shape[1], y_h.shape[1])
        blockspergrid_x = math.ceil(grid_x_max / threadsperblock[0])
        blockspergrid_y = math.ceil(grid_y_max / threadsperblock[1])
        blockspergrid = (blockspergrid_x, blockspergrid_y)
        fast_matmul[blockspergrid, threadsperblock](x_d, y_d, z_d)
        out[case] = z_d.copy_to_host()
    return out


@check("matmul")
def _(r):
    x_h = np.arange(16).reshape([4, 4])
    np.testing.assert_equal(r["simple"], x_h @ np.ones([4, 4]))
    assert np.all(r["square"] == x_h @ np.ones([4, 4]))
    assert np.all(r["non_square"] == np.arange(115).reshape([5, 23]) @ np.ones([23, 7]))


# ---------------------------------------------------------------- test_laplace.py


@example
def laplace(cuda):
    # Use an odd problem size.
    # This is so there can be an element truly in the "middle" for symmetry.
    size = 1001
    data = np.zeros(size)

    # Middle element is made very hot
    data[500] = 10000
    buf_0 = cuda.to_device(data)

    # This extra array is used for synchronization purposes
    buf_1 = cuda.device_array_like(buf_0)

    niter = 10000

    @cuda.jit
    def solve_heat_equation(buf_0, buf_1, timesteps, k):
        i = cuda.grid(1)

        # Don't continue if our index is outside the domain
        if i >= len(buf_0):
            return

        # Prepare to do a grid-wide synchronization later
        grid = cuda.cg.this_grid()

        for step in range(timesteps):
            # Select the buffer from the previous timestep
            if (step % 2) == 0:
                data = buf_0
                next_data = buf_1
            else:
                data = buf_1
                next_data = buf_0

            # Get the current temperature associated with this point
            curr_temp = data[i]

            # Apply formula from finite difference equation
            if i == 0:
                # Left wall is held at T = 0
                next_temp = curr_temp + k * (data[i + 1] - (2 * curr_temp))
            elif i == len(data) - 1:
                # Right wall is held at T = 0
                next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp))
            else:
                # Interior points are a weighted average of their neighbors
                next_temp = curr_temp + k * (
                    data[i - 1] - (2 * curr_temp) + data[i + 1]
                )

            # Write new value to the next buffer
            next_data[i] = next_temp

            # Wait for every thread to write before moving on
            grid.sync()

    solve_heat_equation.forall(len(data))(buf_0, buf_1, niter, 0.25)
    return {"results": buf_1.copy_to_host()}


@check("laplace")
def _(r):
    np.testing.assert_allclose(r["results"].sum(), 10000)


# ---------------------------------------------------------------- test_sessionize.py


@example
def sessionize(cuda):
    # Set the timeout to one hour
    session_timeout = np.int64(np.timedelta64("3600", "s"))
    ids = cuda.to_device(np.array([1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
                                   4, 4, 4, 4, 4, 4, 4, 4, 4]))
    sec = cuda.to_device(
        np.array([1, 2, 3, 5000, 5001, 5002, 1, 2, 3, 1, 2, 5000, 5001, 10000, 10001, 10002,
                  10003, 15000, 150001, 1, 5000, 50001, 15000, 20000, 25000, 25001, 25002,
                  25003], dtype="datetime64[ns]").astype("int64")  # Cast to int64
    )
    results = cuda.to_device(np.zeros(len(ids)))

    @cuda.jit
    def sessionize(user_id, timestamp, results):
        gid = cuda.grid(1)
        size = len(user_id)

        if gid >= size:
            return

        # Determine session boundaries
        is_first_datapoint = gid == 0
        if not is_first_datapoint:
            new_user = user_id[gid] != user_id[gid - 1]
            timed_out = (
                timestamp[gid] - timestamp[gid - 1] > session_timeout
            )
            is_sess_boundary = new_user or timed_out
        else:
            is_sess_boundary = True

        # Determine session labels
        if is_sess_boundary:
            # This thread marks the start of a session
            results[gid] = gid

            # Make sure all session boundaries are written
            # before populating the session id
            grid = cuda.cg.this_grid()
            grid.sync()

            look_ahead = 1
            # Check elements 'forward' of this one
            # until a new session boundary is found
            while results[gid + look_ahead] == 0:
                results[gid + look_ahead] = gid
                look_ahead += 1
                # Avoid out-of-bounds accesses by the last thread
                if gid + look_ahead == size - 1:
                    results[gid + look_ahead] = gid
                    break

    sessionize.forall(len(ids))(ids, sec, results)
    return {"results": results.copy_to_host()}


@check("sessionize")
def _(r):
    expect = [0, 0, 0, 3, 3, 3, 6, 6, 6, 9, 9, 11, 11, 13, 13, 13, 13, 17, 18, 19, 20, 21, 21,
              23, 24, 24, 24, 24]
    np.testing.assert_equal(expect, r["results"])


# ---------------------------------------------------------------- test_reduction.py


@example
def reduction(cuda):
    int32 = cuda.types.int32  # from numba.cuda.types import int32

    # generate data
    a = cuda.to_device(np.arange(1024))
    nelem = len(a)

    @cuda.jit
    def array_sum(data):
        tid = cuda.threadIdx.x
        size = len(data)
        if tid < size:
            i = cuda.grid(1)

            # Declare an array in shared memory
            shr = cuda.shared.array(nelem, int32)
            shr[tid] = data[i]

            # Ensure writes to shared memory are visible
            # to all threads before reducing
            cuda.syncthreads()

            s = 1
            while s < cuda.blockDim.x:
                if tid % (2 * s) == 0:
                    # Stride by `s` and add
                    shr[tid] += shr[tid + s]
                s *= 2
                cuda.syncthreads()

            # After the loop, the zeroth  element contains the sum
            if tid == 0:
                data[tid] = shr[tid]

    array_sum[1, nelem](a)
    return {"a0": np.array(a[0])}


@check("reduction")
def _(r):
    np.testing.assert_equal(r["a0"], sum(np.arange(1024)))


# ---------------------------------------------------------------- test_cg.py


@example
def grid_sync(cuda):
    int32 = cuda.int32
    sig = (int32[:, ::1],)

    @cuda.jit(sig)
    def sequential_rows(M):
        col = cuda.grid(1)
        g = cuda.cg.this_grid()

        rows = M.shape[0]
        cols = M.shape[1]

        for row in range(1, rows):
            opposite = cols - col - 1
            # Each row's elements are one greater than the previous row
            M[row, col] = M[row - 1, opposite] + 1
            # Wait until all threads have written their column element,
            # and that the write is visible to all other threads
            g.sync()

    # Empty input data
    A = np.zeros((1024, 1024), dtype=np.int32)
    # A somewhat arbitrary choice (one warp), but generally smaller block sizes
    # allow more blocks to be launched (noting that other limitations on
    # occupancy apply such as shared memory size)
    blockdim = 32
    griddim = A.shape[1] // blockdim

    # Kernel launch - this is implicitly a cooperative launch
    mb = sequential_rows.overloads[sig].max_cooperative_grid_blocks(blockdim)
    assert mb >= griddim or not conftest.real_gpu_present()
    sequential_rows[griddim, blockdim](A)
    return {"A": A}


@check("grid_sync")
def _(r):
    # What do the results look like?
    # print(A)
    reference = np.tile(np.arange(1024), (1024, 1)).T
    np.testing.assert_equal(r["A"], reference)


# ---------------------------------------------------------------- test_globals.py


@example
def globals_constant_capture(cuda):
    # Captured as constants: TAX_RATE and PRICES (a numpy array, frozen at compile time)
    return _globals_constant_capture(cuda)


TAX_RATE = 0.08
PRICES = np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float64)


def _globals_constant_capture(cuda):
    global TAX_RATE
    TAX_RATE = 0.08
    PRICES[:] = [10.0, 25.0, 5.0, 15.0, 30.0]

    @cuda.jit
    def compute_totals(quantities, totals):
        i = cuda.grid(1)
        if i < totals.size:
            totals[i] = quantities[i] * PRICES[i] * (1 + TAX_RATE)

    d_quantities = cuda.to_device(np.array([1, 2, 3, 4, 5], dtype=np.float64))
    d_totals = cuda.device_array(5, dtype=np.float64)

    # First kernel call - compiles and captures values
    compute_totals[1, 32](d_quantities, d_totals)
    first = d_totals.copy_to_host()

    # These modifications have no effect on subsequent kernel calls
    TAX_RATE = 0.10  # noqa: F841
    PRICES[:] = [20.0, 50.0, 10.0, 30.0, 60.0]

    # Second kernel call still uses the original values
    compute_totals[1, 32](d_quantities, d_totals)
    return {"first": first, "second": d_totals.copy_to_host()}


@check("globals_constant_capture")
def _(r):
    expected = np.array([10.8, 54.0, 16.2, 64.8, 162.0])
    np.testing.assert_allclose(r["first"], expected)
    np.testing.assert_allclose(r["second"], expected)


@example
def globals_device_array_capture(cuda):
    # Global device array - captured by pointer
    PRICES = cuda.to_device(np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float32))

    @cuda.jit
    def compute_totals(quantities, totals):
        i = cuda.grid(1)
        if i < totals.size:
            totals[i] = quantities[i] * PRICES[i]

    d_quantities = cuda.to_device(np.array([1.0, 1.0, 1.0, 1.0, 1.0], dtype=np.float32))
    d_totals = cuda.device_array(5, dtype=np.float32)

    # First kernel call
    compute_totals[1, 32](d_quantities, d_totals)
    first = d_totals.copy_to_host()

    # Mutate the device array in-place
    PRICES.copy_to_device(np.array([20.0, 50.0, 10.0, 30.0, 60.0], dtype=np.float32))

    # Second kernel call sees the updated values
    compute_totals[1, 32](d_quantities, d_totals)
    return {"first": first, "second": d_totals.copy_to_host()}


@check("globals_device_array_capture")
def _(r):
    np.testing.assert_allclose(r["first"], [10.0, 25.0, 5.0, 15.0, 30.0])
    np.testing.assert_allclose(r["second"], [20.0, 50.0, 10.0, 30.0, 60.0])


# ---------------------------------------------------------------- test_cpu_gpu_compat.py


@example
def cpu_gpu_compat(cuda):
    from math import pi

    import numba

    X = cuda.to_device([1, 10, 234])
    Y = cuda.to_device([2, 2, 4014])
    Z = cuda.to_device([3, 14, 2211])
    results = cuda.to_device([0.0, 0.0, 0.0])

    @numba.jit
    def business_logic(x, y, z):
        return 4 * z * (2 * x - (4 * y) / 2 * pi)

    @cuda.jit
    def f(res, xarr, yarr, zarr):
        tid = cuda.grid(1)
        if tid < len(xarr):
            # The function decorated with numba.jit may be directly reused
            res[tid] = business_logic(xarr[tid], yarr[tid], zarr[tid])

    f.forall(len(X))(results, X, Y, Z)
    expect = [business_logic(x, y, z) for x, y, z in zip(X, Y, Z)]
    return {"results": results.copy_to_host(), "expect": np.array(expect),
            "cpu": np.array(business_logic(1, 2, 3))}


@check("cpu_gpu_compat")
def _(r):
    np.testing.assert_allclose(r["cpu"], -126.79644737231007)
    np.testing.assert_equal(r["expect"], r["results"])


# ---------------------------------------------------------------- test_montecarlo.py


@example
def montecarlo(cuda):
    import numba

    random = submodule(cuda, "random")
    create_xoroshiro128p_states = random.create_xoroshiro128p_states
    xoroshiro128p_uniform_float32 = random.xoroshiro128p_uniform_float32

    # number of samples, higher will lead to a more accurate answer
    nsamps = 1000000

    @cuda.jit
    def mc_integrator_kernel(out, rng_states, lower_lim, upper_lim):
        """
        kernel to draw random samples and evaluate the function to
        be integrated at those sample values
        """
        size = len(out)

        gid = cuda.grid(1)
        if gid < size:
            # draw a sample between 0 and 1 on this thread
            samp = xoroshiro128p_uniform_float32(rng_states, gid)

            # normalize this sample to the limit range
            samp = samp * (upper_lim - lower_lim) + lower_lim

            # evaluate the function to be
            # integrated at the normalized
            # value of the sample
            y = func(samp)
            out[gid] = y

    @cuda.reduce
    def sum_reduce(a, b):
        return a + b

    def mc_integrate(lower_lim, upper_lim, nsamps):
        """
        approximate the definite integral of `func` from
        `lower_lim` to `upper_lim`
        """
        out = cuda.to_device(np.zeros(nsamps, dtype="float32"))
        rng_states = create_xoroshiro128p_states(nsamps, seed=42)

        # jit the function for use in CUDA kernels

        mc_integrator_kernel.forall(nsamps)(out, rng_states, lower_lim, upper_lim)
        # normalization factor to convert
        # to the average: (b - a)/(N - 1)
        factor = (upper_lim - lower_lim) / (nsamps - 1)

        return sum_reduce(out) * factor

    # define a function to integrate
    @numba.jit
    def func(x):
        return 1.0 / x

    return {"one_two": np.array(mc_integrate(1, 2, nsamps)),
            "two_three": np.array(mc_integrate(2, 3, nsamps))}


@check("montecarlo")
def _(r):
    np.testing.assert_allclose(r["one_two"], 0.69315, atol=0.001)
    np.testing.assert_allclose(r["two_three"], 0.4055, atol=0.001)


# ---------------------------------------------------------------- test_ufunc.py


@example
def cuda_ufunc_call(cuda):
    # A kernel calls a ufunc
    @cuda.jit
    def f(r, x):
        # Compute sin(x) with result written to r
        np.sin(x, r)

    # Declare input and output arrays
    x = np.arange(10, dtype=np.float32) - 5
    r = np.zeros_like(x)

    # Launch kernel that calls the ufunc
    f[1, 1](r, x)
    return {"r": r, "x": x}


@check("cuda_ufunc_call")
def _(r):
    # A quick sanity check demonstrating equality
    np.testing.assert_allclose(r["r"], np.sin(r["x"]))


# ---------------------------------------------------------------- test_cpointer.py


@example
def cpointer(cuda):
    types = cuda.types  # from numba.cuda import types

    # The first kernel argument is a pointer to a uint8 array.
    # The second argument holds the length as a uint32.
    # The return type of a kernel is always void.
    sig = types.void(types.CPointer(types.uint8), types.uint32)

    @cuda.jit(sig)
    def add_one(x, n):
        i = cuda.grid(1)
        if i < n:
            x[i] += 1

    x = cuda.to_device(np.arange(10, dtype=np.uint8))

    # Print initial values of x
    before = x.copy_to_host()  # [0 1 2 3 4 5 6 7 8 9]

    # Obtain a pointer to the data from from the CUDA Array Interface
    x_ptr = x.__cuda_array_interface__["data"][0]
    x_len = len(x)

    # Launch the kernel with the pointer and length
    add_one[1, 32](x_ptr, x_len)

    # Demonstrate that the data was updated by the kernel
    return {"before": before, "after": x.copy_to_host()}  # [ 1  2  3  4  5  6  7  8  9 10]


@check("cpointer")
def _(r):
    np.testing.assert_array_equal(r["before"], np.arange(10))
    np.testing.assert_array_equal(r["after"], np.arange(1, 11))


# ---------------------------------------------------------------- test_ffi.py

FFI = os.path.join(os.path.dirname(os.path.abspath(__file__)), "doc_examples_ffi")


@example
def linking_cu(cuda):
    # Path to the source containing the foreign function
    # (here assumed to be in a subdirectory called "ffi")
    functions_cu = os.path.join(FFI, "functions.cu")

    # Declaration of the foreign function
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=functions_cu)

    # A kernel that calls mul; functions.cu is linked automatically due to
    # the call to mul.
    @cuda.jit
    def multiply_vectors(r, x, y):
        i = cuda.grid(1)

        if i < len(r):
            r[i] = mul(x[i], y[i])

    # Generate random data
    N = 32
    np.random.seed(1)
    x = np.random.rand(N).astype(np.float32)
    y = np.random.rand(N).astype(np.float32)
    r = np.zeros_like(x)

    # Run the kernel
    multiply_vectors[1, 32](r, x, y)
    return {"r": r, "x": x, "y": y}


@check("linking_cu")
def _(r):
    # Sanity check - ensure the results match those expected
    np.testing.assert_array_equal(r["r"], r["x"] * r["y"])


@example
def extra_includes(cuda):
    config = submodule(cuda, "config")  # from numba.cuda import config
    saxpy_cu = os.path.join(FFI, "saxpy.cu")
    # the headers saxpy.cu includes: mul.cuh and (numba's tests/data/include) add.cuh
    includedir = ":".join([os.path.join(FFI, "include"), os.path.join(FFI, "data_include")])
    saved = config.CUDA_NVRTC_EXTRA_SEARCH_PATHS
    config.CUDA_NVRTC_EXTRA_SEARCH_PATHS = includedir
    try:
        sig = "float32(float32, float32, float32)"
        saxpy = cuda.declare_device("saxpy", sig=sig, link=saxpy_cu)

        @cuda.jit
        def vector_saxpy(a, x, y, res):
            i = cuda.grid(1)
            if i < len(res):
                res[i] = saxpy(a, x[i], y[i])

        size = 10_000
        a = 3.0
        X = np.ones((size,), dtype="float32")
        Y = np.ones((size,), dtype="float32")
        R = np.zeros((size,), dtype="float32")

        block_size = 32
        num_blocks = (size // block_size) + 1

        vector_saxpy[num_blocks, block_size](a, X, Y, R)
    finally:
        config.CUDA_NVRTC_EXTRA_SEARCH_PATHS = saved
    return {"R": R, "expected": a * X + Y}


@check("extra_includes")
def _(r):
    np.testing.assert_equal(r["R"], r["expected"])


# ---------------------------------------------------------------- test_random.py


@example
def random_3d_grid(cuda):
    random = submodule(cuda, "random")
    create_xoroshiro128p_states = random.create_xoroshiro128p_states
    xoroshiro128p_uniform_float32 = random.xoroshiro128p_uniform_float32

    @cuda.jit
    def random_3d(arr, rng_states):
        # Per-dimension thread indices and strides
        startx, starty, startz = cuda.grid(3)
        stridex, stridey, stridez = cuda.gridsize(3)

        # Linearized thread index
        tid = (startz * stridey * stridex) + (starty * stridex) + startx

        # Use strided loops over the array to assign a random value to each entry
        for i in range(startz, arr.shape[0], stridez):
            for j in range(starty, arr.shape[1], stridey):
                for k in range(startx, arr.shape[2], stridex):
                    arr[i, j, k] = xoroshiro128p_uniform_float32(rng_states, tid)

    # Array dimensions
    X, Y, Z = 701, 900, 719

    # Block and grid dimensions
    bx, by, bz = 8, 8, 8
    gx, gy, gz = 16, 16, 16

    # Total number of threads
    nthreads = bx * by * bz * gx * gy * gz

    # Initialize a state for each thread
    rng_states = create_xoroshiro128p_states(nthreads, seed=1)

    # Generate random numbers
    arr = cuda.device_array((X, Y, Z), dtype=np.float32)
    random_3d[(gx, gy, gz), (bx, by, bz)](arr, rng_states)
    host_arr = arr.copy_to_host()
    # a checksum and a corner, not the 1.8 GB, go back to the comparison
    return {"mean": np.array(np.mean(host_arr, dtype=np.float64)),
            "min": np.array(host_arr.min()), "max": np.array(host_arr.max()),
            "corner": host_arr[:4, :4, :4].copy(), "last": host_arr[-4:, -4:, -4:].copy()}


@check("random_3d_grid")
def _(r):
    assert 0.49 < r["mean"] < 0.51
    assert r["max"] <= 1.0 and r["min"] >= 0.0


# ---------------------------------------------------------------- the tests


def run_here(name):
    if name in NEEDS_NUMBA:
        pytest.importorskip("numba", reason="the example calls @numba.jit functions")
    return EXAMPLES[name](nbcuda)


@pytest.mark.parametrize("name", sorted(set(EXAMPLES) - GPU_ONLY))
def test_example_compiles_loads_and_launches(name):
    # On the test driver kernels do not run: this proves every kernel of the example compiles
    # (typing, lowering, libNVVM), loads and launches as the example asks.
    results = run_here(name)
    assert results and all(isinstance(v, np.ndarray) for v in results.values())


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_matches_its_assertions_and_numba_cuda(gpu, tmp_path, name):
    mine = run_here(name)
    CHECKS[name](mine)
    theirs = conftest.numba_side("test_doc_examples", f"t.EXAMPLES[{name!r}](cuda)",
                                 tmp_path / "theirs.npz")
    CHECKS[name](theirs)
    for key, a in mine.items():
        b = theirs[key]
        if name in ("montecarlo", "random_3d_grid", "laplace") or a.dtype.kind == "f":
            # the same generator and kernels; float sums may differ in the last bits
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, err_msg=f"{name}: {key}")
        else:
            np.testing.assert_array_equal(a, b, err_msg=f"{name}: {key}")
