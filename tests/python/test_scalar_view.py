"""x.view(dtype) of an integer or float scalar, as numba's scalar_view types it (issue: real
programs, item 1): the same bits as another integer or float type of the same size; another
size is numba's TypingError. Values are compared with numba-cuda on the GPU
(tests/gpu/cases/scalar_view.py)."""
import importlib.util

import pytest

SOURCE = '''
import numpy as np


def view_as(x):
    return x.view(np.DT)
'''

SAME_SIZE = [("float64", "int64"), ("float64", "uint64"), ("int64", "float64"),
             ("float32", "int32"), ("uint32", "float32"), ("int16", "float16"),
             ("float16", "uint16"), ("int8", "uint8")]


def _fn(tmp_path, dt):
    path = tmp_path / f"view_{dt}.py"
    path.write_text(SOURCE.replace("DT", dt))
    spec = importlib.util.spec_from_file_location(f"view_{dt}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.view_as


@pytest.mark.parametrize("src,dst", SAME_SIZE)
def test_same_size_views_type_as_the_dtype(cuda, tmp_path, src, dst):
    ptx, resty = cuda.compile_ptx(_fn(tmp_path, dst), f"({src},)", device=True, cc=(9, 0))
    assert str(resty) == dst
    assert "cvt." not in ptx  # the bits are kept, not converted


@pytest.mark.parametrize("src,dst", [("float64", "int32"), ("int16", "float32"),
                                     ("float32", "float64")])
def test_another_size_is_numbas_typing_error(cuda, tmp_path, src, dst):
    with pytest.raises(cuda.TypingError, match="only supported if the itemsize is unchanged"):
        cuda.compile_ptx(_fn(tmp_path, dst), f"({src},)", device=True, cc=(9, 0))


def test_a_non_number_dtype_is_refused(cuda, tmp_path):
    with pytest.raises(cuda.TypingError, match="viewed as an integer or float type"):
        cuda.compile_ptx(_fn(tmp_path, "complex64"), "(float64,)", device=True, cc=(9, 0))
