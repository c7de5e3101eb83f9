"""What CPython's compiler folds before numba sees the code is folded before typing
(src/compiler/fold.c): constant arithmetic, branches on constant conditions, statements after
a jump. Python itself is the oracle for every folded value: each expression is evaluated here
and the constant stored by the compiled kernel must be that value, bit for bit; what Python
would raise on (or needs more than 64 bits) is left to the compiler as written."""
import re
import struct

import pytest

INT_EXPRS = ["32 + 2", "32 * 2", "-(2 ** 3) // 3", "7 % -3", "-7 % 3", "-7 // 2", "1 << 40",
             "-1 >> 3", "-2 ** 3", "~0", "~True", "-True", "True + True", "2 ** 62 + (2 ** 62 - 1) * 2",
             "(1 << 63) - 1", "-(1 << 63)", "0x7f & 0x13 | 0x100 ^ 0x3", "(not 0) + 0", "(not 2.5) + 0",
             "True and 7", "0 or 9", "__debug__ + 0", "12 if True else 13", "14 if 0 else 15",
             "-9223372036854775807 - 1", "5 if not False else 6"]
FLOAT_EXPRS = ["1.0 / 3", "1 / 3", "7.5 // 2", "-7.5 // 2", "-7.5 % 2", "7.5 % -2", "2 ** -2",
               "2.0 ** 0.5", "0.1 + 0.2", "3 * 1.1", "-0.0 % 5", "1e308 * 10 / 1e308 if False else 1.5",
               "(9007199254740993 - 1) / 3"]


def _stored(ir_of, kind):
    ir = next(iter(ir_of.values())) if isinstance(ir_of, dict) else ir_of
    found = re.findall(rf"store {kind} ([^,]+), {kind}\*", ir)
    assert len(found) == 1, ir
    return found[0]


def _kernel(tmp_path, name, expr):
    path = tmp_path / f"{name}.py"
    path.write_text(f"def {name}(out):\n    out[0] = {expr}\n")
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


@pytest.mark.parametrize("expr", INT_EXPRS)
def test_int_constants_fold_as_python_computes_them(cuda, tmp_path, expr):
    value = int(eval(expr))
    k = cuda.jit("void(int64[:])")(_kernel(tmp_path, "fi", expr))
    assert int(_stored(k.inspect_llvm(), "i64")) == value


@pytest.mark.parametrize("expr", FLOAT_EXPRS)
def test_float_constants_fold_as_python_computes_them(cuda, tmp_path, expr):
    value = float(eval(expr))
    k = cuda.jit("void(float64[:])")(_kernel(tmp_path, "ff", expr))
    text = _stored(k.inspect_llvm(), "double")
    got = struct.unpack(">d", bytes.fromhex(text[2:]))[0] if text.startswith("0x") else float(text)
    assert struct.pack(">d", got) == struct.pack(">d", value), (text, value)


SOURCE = '''
import numpy as np
from numba import cuda


def shapes(out):
    s = cuda.shared.array(32 + 2, dtype=np.float32)
    t = cuda.local.array((32 * 2, 16), dtype=np.int32)
    s[0] = 1.0
    t[0, 0] = 2
    out[0] = s.shape[0] + t.shape[0] * 100 + t.shape[1] * 10000


def branch_types(out, w, u):
    out[0] = (w if True else u) | 3


def dead_code(out, x):
    if False:
        out[0] = undefined_name
    elif 0:
        out[0] = also_undefined
    else:
        out[0] = x
    while 0:
        out[1] = never_defined
    if True:
        return
    out[2] = unreachable_name


def after_jumps(out, n):
    for i in range(n):
        if i > 2:
            break
            out[0] = nowhere
        out[i] = i
        continue
        out[0] = nowhere_either
    if 0:
        raise ValueError(undefined_message)
'''


@pytest.fixture
def folding_module(cuda, tmp_path):
    path = tmp_path / "folding_mod.py"
    path.write_text(SOURCE.replace("from numba import cuda", "import nbcuda as cuda"))
    import importlib.util
    spec = importlib.util.spec_from_file_location("folding_mod", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name,sig", [
    ("shapes", "void(int64[:])"),
    ("branch_types", "void(int64[:], int64, uint64)"),
    ("dead_code", "void(float64[:], float64)"),
    ("after_jumps", "void(int64[:], int64)"),
])
def test_programs_numba_compiles(cuda, folding_module, name, sig):
    """Each compiles in nbcuda as in numba (typing only what CPython leaves)."""
    k = cuda.jit(sig)(getattr(folding_module, name))
    assert k.signatures


def test_branch_on_a_constant_types_only_the_branch_taken(cuda, folding_module):
    """numba never sees the uint64 of `(w if True else u) | 3`: int64 | int64 stays int64
    (an int64 | uint64 would be float64 and refuse the bitwise or)."""
    k = cuda.jit("void(int64[:], int64, uint64)")(folding_module.branch_types)
    assert k.signatures


def test_what_python_raises_on_is_not_folded(cuda, tmp_path):
    """1 // 0 raises at run time in Python and is compiled as written (numba's integer
    division by zero), not folded into a constant."""
    k = cuda.jit("void(int64[:])")(_kernel(tmp_path, "fz", "1 // 0"))
    ir = next(iter(k.inspect_llvm().values()))
    assert "sdiv" in ir or "call" in ir
