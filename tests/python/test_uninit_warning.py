"""numba's warning of a variable read where some path binds it nowhere (numba-cuda's test_ssa
test_undefined_var): with config.ALWAYS_WARN_UNINIT_VAR (NUMBA_ALWAYS_WARN_UNINIT_VAR, off by
default) compiling gives a NumbaWarning "Detected uninitialized variable c", for jit kernels
and compile_ptx alike. Which variables each function below warns of was recorded from
numba-cuda 0.30.4 (compile_ptx with the switch on); where numba is installed the test asks it
again."""
import warnings

import numpy as np
import pytest

from conftest import load_kernel_module

SOURCE = '''
def foo(result, n):
    if n:
        if n > 0:
            c = 0
        result[0] = c
    else:
        # variable c is not defined in this branch
        c += 1
        result[0] = c


def defined(result, n):
    if n:
        c = 1
    else:
        c = 2
    result[0] = c


def after_loop(result, n):
    for i in range(n):
        pass
    result[0] = i


def loop_break(result, n):
    while True:
        c = n
        break
    result[0] = c


def returns_early(result, n):
    if n < 0:
        return
    else:
        c = n
    result[0] = c


def param_rebound(result, n):
    if n:
        n = 2
    result[0] = n
'''

NUMBA = {"foo": ["c"], "defined": [], "after_loop": ["i"], "loop_break": [],
         "returns_early": [], "param_rebound": []}


def _warned(cuda, fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cuda.compile_ptx(fn, "void(int64[::1], int64)", cc=(9, 0))
    prefix = "Detected uninitialized variable "
    return sorted({str(w.message).split(prefix)[1].split()[0] for w in caught
                   if prefix in str(w.message)}), caught


@pytest.fixture
def warn_uninit(cuda):
    cuda.config.ALWAYS_WARN_UNINIT_VAR = 1
    yield
    cuda.config.ALWAYS_WARN_UNINIT_VAR = 0


@pytest.mark.parametrize("name", sorted(NUMBA))
def test_the_variables_numba_warns_of(cuda, tmp_path, warn_uninit, name):
    mod = load_kernel_module(tmp_path, "uninit", SOURCE, cuda)
    names, caught = _warned(cuda, getattr(mod, name))
    assert names == NUMBA[name]
    assert all(issubclass(w.category, cuda.NumbaWarning) for w in caught
               if "uninitialized" in str(w.message))


def test_the_warning_names_the_read(cuda, tmp_path, warn_uninit):
    mod = load_kernel_module(tmp_path, "uninit", SOURCE, cuda)
    _, caught = _warned(cuda, mod.foo)
    (w,) = [w for w in caught if "uninitialized" in str(w.message)]
    assert str(w.message) == f"{tmp_path / 'uninit.py'}:6:21: Detected uninitialized variable c"


def test_off_by_default_and_jit_kernels_warn_too(cuda, tmp_path):
    mod = load_kernel_module(tmp_path, "uninit", SOURCE, cuda)
    assert cuda.config.ALWAYS_WARN_UNINIT_VAR == 0
    assert _warned(cuda, mod.foo)[0] == []
    cuda.config.ALWAYS_WARN_UNINIT_VAR = 1
    try:
        with pytest.warns(cuda.NumbaWarning, match="Detected uninitialized variable c"):
            cuda.jit(mod.foo)[1, 1](cuda.to_device(np.zeros(1, np.int64)), 1)
    finally:
        cuda.config.ALWAYS_WARN_UNINIT_VAR = 0


def test_numba_cuda_agrees(cuda, tmp_path):
    ncuda = pytest.importorskip("numba.cuda")
    from numba.core import config
    mod = load_kernel_module(tmp_path, "uninit_numba", SOURCE, ncuda)
    old = config.ALWAYS_WARN_UNINIT_VAR
    config.ALWAYS_WARN_UNINIT_VAR = 1
    try:
        for name, want in NUMBA.items():
            assert _warned(ncuda, getattr(mod, name))[0] == want, name
    finally:
        config.ALWAYS_WARN_UNINIT_VAR = old
