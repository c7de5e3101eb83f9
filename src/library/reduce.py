# reduce.py — the kernel of numba's cuda.reduce / cuda.Reduce (numba-cuda's
# kernels/reduction.py, "a library written in CUDA Python"), a library kernel: the same
# algorithm, block size (4 warps), grid and order of operations, so floating-point sums come
# out as numba's. src/python/reduce.c runs this file once per dtype of the arrays reduced, in
# a fresh namespace where `cuda` is the nbcuda module, `nbtype` the dtype's type and
# `_functor` the user's binary function, and launches `kernel`. Where numba slices a row of
# the 2-D shared array (`sm_partials[warpid, :]`), this indexes the row directly.
reduce_op = cuda.jit(device=True)(_functor)
_WARPSIZE = 32
_NUMWARPS = 4
inner_sm_size = _WARPSIZE + 1
max_blocksize = _NUMWARPS * _WARPSIZE


def inner_warp_reduction(sm_partials, init):
    tid = cuda.threadIdx.x
    warpid = tid // _WARPSIZE
    laneid = tid % _WARPSIZE
    sm_partials[warpid, laneid] = init
    cuda.syncwarp()
    width = _WARPSIZE // 2
    while width:
        if laneid < width:
            old = sm_partials[warpid, laneid]
            sm_partials[warpid, laneid] = reduce_op(old, sm_partials[warpid, laneid + width])
        cuda.syncwarp()
        width //= 2


def device_reduce_full_block(arr, partials, sm_partials):
    tid = cuda.threadIdx.x
    blkid = cuda.blockIdx.x
    blksz = cuda.blockDim.x
    gridsz = cuda.gridDim.x
    start = tid + blksz * blkid
    stop = arr.size
    step = blksz * gridsz
    tmp = arr[start]
    for i in range(start + step, stop, step):
        tmp = reduce_op(tmp, arr[i])
    cuda.syncthreads()
    inner_warp_reduction(sm_partials, tmp)
    cuda.syncthreads()
    if tid < 2:
        sm_partials[tid, 0] = reduce_op(sm_partials[tid, 0], sm_partials[tid + 2, 0])
        cuda.syncwarp()
    if tid == 0:
        partials[blkid] = reduce_op(sm_partials[0, 0], sm_partials[1, 0])


def device_reduce_partial_block(arr, partials, sm_partials):
    tid = cuda.threadIdx.x
    blkid = cuda.blockIdx.x
    blksz = cuda.blockDim.x
    warpid = tid // _WARPSIZE
    laneid = tid % _WARPSIZE
    size = arr.size
    value = arr[tid]
    sm_partials[warpid, laneid] = value
    cuda.syncthreads()
    if (warpid + 1) * _WARPSIZE < size:
        inner_warp_reduction(sm_partials, value)
    else:
        if laneid == 0:
            base = warpid * _WARPSIZE
            for i in range(1, size - base):
                sm_partials[warpid, 0] = reduce_op(sm_partials[warpid, 0],
                                                   sm_partials[warpid, i])
    cuda.syncthreads()
    if tid == 0:
        num_active_warps = (blksz + _WARPSIZE - 1) // _WARPSIZE
        result = sm_partials[0, 0]
        for i in range(1, num_active_warps):
            result = reduce_op(result, sm_partials[i, 0])
        partials[blkid] = result


def gpu_reduce_block_strided(arr, partials, init, use_init):
    tid = cuda.threadIdx.x
    sm_partials = cuda.shared.array((_NUMWARPS, inner_sm_size), dtype=nbtype)
    if cuda.blockDim.x == max_blocksize:
        device_reduce_full_block(arr, partials, sm_partials)
    else:
        device_reduce_partial_block(arr, partials, sm_partials)
    if use_init and tid == 0 and cuda.blockIdx.x == 0:
        partials[0] = reduce_op(partials[0], init)


kernel = cuda.jit(gpu_reduce_block_strided)
