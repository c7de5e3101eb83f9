"""Python ints as kernel arguments reach the kernel with their value or not at all (issue
33, item 8): a kernel jitted without a signature types them as numba's typeof does (int64,
uint64 from 2**63 to 2**64 - 1, numba's ValueError "Int value is too large" beyond), also
inside tuples; a parameter of an explicit signature refuses an int its type cannot hold with
OverflowError instead of passing it wrapped. Walkers of nested arguments stop at a depth
bound with a clear error whatever sys.setrecursionlimit says (issue 33's audit).
"""
import struct

import numpy as np
import pytest

from conftest import sig_texts


def take(x):
    pass


def take4(a, b, c, d):
    pass


def launched_value(tdrv, fmt):
    info = tdrv.last_launch()
    off = info.param_offset[0]
    return struct.unpack_from(fmt, bytes(info.param_bytes), off)[0]


@pytest.mark.parametrize("value, typ, fmt", [
    (2**63 - 1, "int64", "<q"),
    (-2**63, "int64", "<q"),
    (2**63, "uint64", "<Q"),
    (2**64 - 1, "uint64", "<Q"),
])
def test_untyped_int_takes_numba_type_and_value(cuda, tdrv, value, typ, fmt):
    k = cuda.jit(take)
    k[1, 1](value)
    assert sig_texts(k) == [f"void({typ})"]
    assert launched_value(tdrv, fmt) == value


@pytest.mark.parametrize("value", [2**64, -2**63 - 1, 1 << 100, (1, 2**64)])
def test_untyped_int_beyond_64_bits_is_refused(cuda, value):
    k = cuda.jit(take)
    big = value[1] if isinstance(value, tuple) else value
    with pytest.raises(ValueError, match=f"^Int value is too large: {big}$"):
        k[1, 1](value)
    assert sig_texts(k) == []


def test_ints_in_tuples_are_typed_one_by_one(cuda, tdrv):
    k = cuda.jit(take)
    k[1, 1]((1, 2**63))
    assert sig_texts(k) == ["void(Tuple(int64, uint64))"]


def test_same_kernel_int64_then_uint64(cuda, tdrv):
    # The launch fast path must not reuse the int64 specialisation for 2**63.
    k = cuda.jit(take)
    k[1, 1](5)
    k[1, 1](2**63)
    assert sig_texts(k) == ["void(int64)", "void(uint64)"]
    assert launched_value(tdrv, "<Q") == 2**63


@pytest.mark.parametrize("args, message", [
    ((2**31, 0, 0.0, 0), "argument 1: 2147483648 does not fit the parameter's type int32"),
    ((-2**31 - 1, 0, 0.0, 0), "argument 1: -2147483649 does not fit the parameter's type int32"),
    ((0, -1, 0.0, 0), "argument 2: -1 does not fit the parameter's type uint8"),
    ((0, 256, 0.0, 0), "argument 2: 256 does not fit the parameter's type uint8"),
    ((0, 0, 0.0, 2**63), "argument 4: 9223372036854775808 does not fit the parameter's type "
                         "int64"),
])
def test_explicit_signature_refuses_out_of_range_int(cuda, tdrv, args, message):
    k = cuda.jit("void(int32, uint8, float32, int64)")(take4)
    with pytest.raises(OverflowError, match=f"^{message}$"):
        k[1, 1](*args)


def test_explicit_signature_takes_ints_in_range(cuda, tdrv):
    k = cuda.jit("void(int32, uint8, float32, int64)")(take4)
    k[1, 1](-2**31, 255, 2**70, -2**63)
    k[1, 1](2**31 - 1, 0, 1, 2**63 - 1)
    assert launched_value(tdrv, "<i") == 2**31 - 1
    k[1, 1](np.int64(2**40), 0, 0, 0)  # numpy integers convert as numpy casts do


def test_explicit_uint64_takes_the_whole_range(cuda, tdrv):
    k = cuda.jit("void(uint64)")(take)
    k[1, 1](2**64 - 1)
    assert launched_value(tdrv, "<Q") == 2**64 - 1
    with pytest.raises(OverflowError, match="does not fit the parameter's type uint64"):
        k[1, 1](-1)


DEEP = """
    import sys
    import numpy as np
    import nbcuda as cuda
    sys.setrecursionlimit(10**7)   # the bound must not depend on it
    exec("@cuda.jit\\ndef k(x):\\n    pass\\n")
    def refused(arg):
        try:
            k[1, 1](arg)
        except ValueError as e:
            print(e)
"""


def test_deep_tuple_argument_is_refused(cuda, run_py):
    p = run_py(DEEP + """
    t = 1
    for _ in range(100_000):
        t = (t,)
    refused(t)
    """)
    assert p.stdout.strip() == "a kernel argument nests more than 256 levels deep", p.stderr


def test_deep_record_argument_is_refused(cuda, run_py):
    p = run_py(DEEP + """
    dt = np.dtype([("a", np.int32)])
    for _ in range(2_000):
        dt = np.dtype([("a", dt)])
    refused(np.zeros(1, dt))
    refused(np.zeros(1, dt)[0])
    """)
    assert p.stdout.splitlines() == ["a record dtype nests more than 256 levels deep"] * 2, \
        p.stdout + p.stderr


def test_deep_global_tuple_is_refused_cleanly(tmp_path):
    """A global tuple nested far deeper than any constant a kernel can read: a ValueError
    naming the bound, not a crash, whatever sys.setrecursionlimit allows."""
    import sys
    import subprocess
    import textwrap
    code = textwrap.dedent("""
        import sys
        import nbcuda as cuda
        sys.setrecursionlimit(10**7)
        G = 1
        for _ in range(100_000):
            G = (G,)
        def f(x):
            return x + G[0]
        try:
            cuda.compile_ptx(f, "int32(int32)", device=True, cc=(9, 0))
        except ValueError as e:
            print("ValueError:", e)
    """)
    script = tmp_path / "deep_global.py"
    script.write_text(code)
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "a global tuple a kernel reads nests more than 256 levels deep" in p.stdout
