# transpose.py — the transpose behind DeviceNDArray.T / transpose() and nbc_transpose2d:
# numba-cuda's kernels/transpose.py (shared-memory tiles), compiled by nbcuda like any kernel
# (src/library_kernels.c compiles it once per process and loads it once per context).
#
# A block of TILE x TILE threads moves one tile: it reads tile[ty, tx] = input[i, j] with x
# along the input's rows, so that a warp reads consecutive columns, and after a barrier
# writes output[j, i] from tile[tx, ty], a warp writing consecutive columns of the output.
# The extra column of the tile keeps a warp's column reads in distinct shared-memory banks.
# Unlike numba's kernel, which launches one block per tile, the blocks step over the tiles
# (the grid is at most 65535 blocks high), so any shape goes in one launch.
#
# An element is moved as `words` machine words of the kernels' width (1, 2, 4 or 8 bytes, the
# widest the caller found dividing the item size, both addresses and both strides): the
# arrays are the caller's views of the data as words, input (rows, cols, words) with any
# strides and output (cols, rows, words) C-contiguous. One kernel per width, each with its
# tile's element type; they share the tile loop.
from numba import cuda, uint8, uint16, uint32, uint64

TILE = 32
TILE_SHAPE = (32, 33)  # (TILE, TILE + 1): constants, as shared arrays' shapes must be


@cuda.jit(device=True)
def transpose_tiles(input, output, tile):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    rows = input.shape[0]
    cols = input.shape[1]
    words = input.shape[2]
    for i0 in range(cuda.blockIdx.y * TILE, rows, cuda.gridDim.y * TILE):
        for j0 in range(cuda.blockIdx.x * TILE, cols, cuda.gridDim.x * TILE):
            for w in range(words):
                if i0 + ty < rows and j0 + tx < cols:
                    tile[ty, tx] = input[i0 + ty, j0 + tx, w]
                cuda.syncthreads()
                if j0 + ty < cols and i0 + tx < rows:
                    output[j0 + ty, i0 + tx, w] = tile[tx, ty]
                cuda.syncthreads()


def transpose_w1(input, output):
    transpose_tiles(input, output, cuda.shared.array(TILE_SHAPE, uint8))


def transpose_w2(input, output):
    transpose_tiles(input, output, cuda.shared.array(TILE_SHAPE, uint16))


def transpose_w4(input, output):
    transpose_tiles(input, output, cuda.shared.array(TILE_SHAPE, uint32))


def transpose_w8(input, output):
    transpose_tiles(input, output, cuda.shared.array(TILE_SHAPE, uint64))
