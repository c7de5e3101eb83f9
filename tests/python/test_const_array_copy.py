"""a.copy() of a global numpy array in a kernel (numba-cuda's test_array_methods
test_array_copy): numba-cuda allocates the copy with NRT; nbcuda knows the frozen array's
shape when compiling, so the copy is a local array of that shape, C-contiguous and writable.
The copy of an array whose shape is known only at run time needs an allocation kernels do
not have, and is refused."""
import numpy as np
import pytest

from conftest import load_kernel_module

SOURCE = '''
import numpy as np

VAL = np.array([1, 2, 3])[::-1]
GRID = np.array([[1., 2.], [3., 4.]])
FLAGS = np.array([True, False])


def kernel(out):
    q = VAL.copy()
    for i in range(len(out)):
        out[i] = q[i]


def modified(out):
    q = GRID.copy()
    q[0, 0] = 7
    out[0] = q[0, 0] + q[1, 1] + GRID[0, 0]


def flags(out):
    f = FLAGS.copy()
    f[1] = True
    out[0] = f[0] and f[1]


def of_a_parameter(x, out):
    q = x.copy()
    out[0] = q[0]
'''


def test_the_copy_is_a_writable_local_array(cuda, tmp_path):
    mod = load_kernel_module(tmp_path, "const_copy", SOURCE, cuda)
    ptx, _ = cuda.compile_ptx(mod.kernel, "void(float64[::1])", cc=(9, 0))
    assert ".local" in ptx  # the copy's elements live in the thread's local memory
    ptx, _ = cuda.compile_ptx(mod.modified, "void(float64[::1])", cc=(9, 0))
    assert str(np.float64(7 + 4 + 1).view(np.int64)) in ptx  # folded: the copy was written
    cuda.compile_ptx(mod.flags, "void(boolean[::1])", cc=(9, 0))


def test_a_copy_needing_an_allocation_is_refused(cuda, tmp_path):
    mod = load_kernel_module(tmp_path, "const_copy", SOURCE, cuda)
    with pytest.raises(cuda.TypingError, match=r"copy\(\) of array\(float64, 1d, C\) needs "
                                               r"memory allocated at run time"):
        cuda.compile_ptx(mod.of_a_parameter, "void(float64[::1], float64[::1])", cc=(9, 0))


@pytest.mark.gpu
def test_values_are_numbas(gpu, cuda, tmp_path):
    mod = load_kernel_module(tmp_path, "const_copy", SOURCE, cuda)
    out = cuda.to_device(np.zeros(3))
    cuda.jit(mod.kernel)[1, 1](out)
    assert out.copy_to_host().tolist() == [3, 2, 1]
    out = np.zeros(1)
    cuda.jit(mod.modified)[1, 1](out)
    assert out[0] == 12
