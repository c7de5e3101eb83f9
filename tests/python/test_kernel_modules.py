"""Python modules in kernels, as numba reads them: `import helpers` at module level, then
`helpers.clamp(x)`, `helpers.SCALE`, `helpers.TABLE[i]`, `pkg.deep.triple(x)` and
`helpers.math.sqrt(x)` in the kernel. The compiler resolves `mod.attr` as the global
"mod.attr" (the resolver reads the attribute; each step before the last must be a module), so
a module's device functions, constants, frozen arrays and modules work as the kernel's own
globals. CI: compile, ptxas, a launch on the test driver, the errors; the GPU
compares with numpy and numba-cuda."""
import importlib
import sys

import numpy as np
import pytest

import nbcuda as cuda
from test_compile import compile_checked

HELPERS = '''
import enum
import math
import numpy as np
import {lib} as cuda
import {pkg}.deep as deep

SCALE = 2.5
TABLE = np.array([1.0, 10.0, 100.0])
W = (0.25, 0.5, 0.25)
REC = np.array([(1.5, 2)], dtype=[("x", np.float64), ("y", np.int64)])


class Color(enum.IntEnum):
    RED = 1
    GREEN = 2


@cuda.jit(device=True)
def clamp(x, lo, hi):
    return min(max(x, lo), hi)


@cuda.jit(device=True)  # numba-cuda calls jitted functions only (nbcuda also plain ones)
def twice(x):
    return 2 * x + deep.OFFSET
'''

DEEP = '''
import {lib} as cuda

OFFSET = 7


@cuda.jit(device=True)
def triple(x):
    return 3 * x
'''

KERNELS = '''
import {lib} as cuda
import {helpers} as helpers
import {pkg}.deep


def k(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = (helpers.clamp(x[i] * helpers.SCALE, 0.0, 10.0) + helpers.TABLE[i % 3] +
                  helpers.twice(x[i]) + {pkg}.deep.triple(x[i]) + helpers.math.sqrt(4.0) +
                  helpers.SCALE.real)


def others(out):
    out[0] = helpers.Color.RED + helpers.Color.GREEN + helpers.W[1] + len(helpers.W)
    out[1] = helpers.REC[0].x + helpers.REC[0]["y"]


def missing(out):
    out[0] = helpers.nothing


def assigns(out):
    helpers.SCALE = out[0]


def nested_missing(out):
    out[0] = {pkg}.deep.nothing + helpers.SCALE.real
'''


def load(tmp_path, lib):
    """The kernels module, written with its helper module and package for lib ("nbcuda" or
    "numba.cuda") under names of their own."""
    tag = lib.replace(".", "_")
    pkg, helpers = f"kpkg_{tag}", f"khelpers_{tag}"
    (tmp_path / pkg).mkdir(exist_ok=True)
    (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / pkg / "deep.py").write_text(DEEP.format(lib=lib))
    (tmp_path / f"{helpers}.py").write_text(HELPERS.format(lib=lib, pkg=pkg))
    (tmp_path / f"kkernels_{tag}.py").write_text(KERNELS.format(lib=lib, pkg=pkg,
                                                                  helpers=helpers))
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(f"kkernels_{tag}")
    finally:
        sys.path.remove(str(tmp_path))


def expect(x):
    i = np.arange(x.size)
    return (np.clip(x * 2.5, 0.0, 10.0) + np.array([1.0, 10.0, 100.0])[i % 3] + (2 * x + 7) +
            3 * x + 2.0 + 2.5)


SIG = "void(float64[::1], float64[::1])"


def test_module_attributes_compile(tmp_path):
    m = load(tmp_path, "nbcuda")
    ptx = compile_checked(m.k, SIG, tmp_path)
    assert "ld.const" in ptx  # helpers.TABLE frozen into constant memory
    # an IntEnum, a tuple and a record array reached through the module, folded to the
    # stored constants 1 + 2 + 0.5 + 3 = 6.5 and 1.5 + 2 = 3.5 (as their bits)
    ptx = compile_checked(m.others, "void(float64[::1])", tmp_path)
    assert "4619004367821864960" in ptx and "4615063718147915776" in ptx


@pytest.mark.parametrize("name, message", [
    ("missing", "AttributeError: module 'helpers' has no attribute 'nothing'"),
    ("nested_missing", "AttributeError: module 'kpkg_nbcuda.deep' has no attribute 'nothing'"),
    ("assigns", r"cannot assign to attribute 'SCALE' of Module\(<module 'helpers'>\)"),
])
def test_errors(tmp_path, name, message):
    m = load(tmp_path, "nbcuda")
    with pytest.raises(cuda.TypingError, match=message):
        cuda.compile_ptx(getattr(m, name), "void(float64[::1])", cc=(9, 0))


def run(lib, m, x):
    out = np.zeros_like(x)
    lib.jit(SIG)(m.k)[1, 32](out, x)
    return out


def test_launches_on_the_test_driver(tmp_path, tdrv):
    run(cuda, load(tmp_path, "nbcuda"), np.linspace(-2.0, 6.0, 10))


@pytest.mark.gpu
def test_matches_numpy_and_numba_cuda(gpu, tmp_path):
    x = np.linspace(-2.0, 6.0, 10)
    mine = run(cuda, load(tmp_path, "nbcuda"), x)
    np.testing.assert_allclose(mine, expect(x), rtol=1e-15)
    ncuda = pytest.importorskip("numba.cuda")
    theirs = run(ncuda, load(tmp_path, "numba.cuda"), x)
    np.testing.assert_array_equal(mine, theirs)
