"""Kernels and device functions made by exec() or compile() of a string — code generated from
templates, as numba-cuda's own test_atomics makes its kernels — compile from the text they
were made from, which nbcuda keeps through an audit hook (exec_source.c): two templates
exec'd under "<string>" at the same lines each get their own text, lambdas from eval()
compile, __future__ flags are honoured, a function renamed through __name__ is found by its
code's name, and a text pushed out of the kept window gives the
clear no-source OSError. On the GPU the generated kernels give numpy's and numba-cuda's
answers."""
import __future__
import re
import textwrap

import numpy as np
import pytest

import nbcuda as cuda
from conftest import assert_same_as_numba_cuda
from test_compile import check_ptx

TEMPLATE = textwrap.dedent("""
    def atomic(res, ary):
        tx = cuda.threadIdx.x
        {func}(res, 0, ary[tx])

    scale = lambda x: x * {factor}
    """)


def generate(lib, func, factor):
    """The kernel and lambda of TEMPLATE for one atomic and factor, made by exec() (numba-cuda's
    gen_atomic_extreme_funcs does the same)."""
    made = {}
    exec(TEMPLATE.format(func=func, factor=factor), {"cuda": lib}, made)
    return made["atomic"], made["scale"]


def setp_ops(ptx):
    return sorted(set(re.findall(r"setp\.[a-z]+\.f64", ptx)))


def test_two_templates_at_the_same_lines_get_their_own_text(tmp_path):
    amax, _ = generate(cuda, "cuda.atomic.max", 2)
    amin, _ = generate(cuda, "cuda.atomic.min", 3)
    assert amax.__code__.co_filename == amin.__code__.co_filename == "<string>"
    assert amax.__code__.co_firstlineno == amin.__code__.co_firstlineno
    sig = "void(float64[:], float64[:])"
    pmax, _ = cuda.compile_ptx(amax, sig, cc=(9, 0))
    pmin, _ = cuda.compile_ptx(amin, sig, cc=(9, 0))
    check_ptx(pmax, tmp_path)
    # the compare-and-swap loops of atomic max and min differ in their comparisons
    assert setp_ops(pmax) == ["setp.gt.f64", "setp.leu.f64"]
    assert setp_ops(pmin) == ["setp.geu.f64", "setp.lt.f64"]
    # compiled again after other texts were kept: still each its own
    assert cuda.compile_ptx(amax, sig, cc=(9, 0))[0] == pmax


def test_lambdas_from_exec_and_eval_compile_as_device_functions():
    _, times2 = generate(cuda, "cuda.atomic.add", 2)
    _, times5 = generate(cuda, "cuda.atomic.add", 5)
    add = eval("lambda a, b: a + b")
    assert cuda.compile_ptx(add, "float64(float64, float64)", device=True, cc=(9, 0))[1] == \
        cuda.float64
    p2, _ = cuda.compile_ptx(times2, "int64(int64)", device=True, cc=(9, 0))
    p5, _ = cuda.compile_ptx(times5, "int64(int64)", device=True, cc=(9, 0))
    assert "shl.b64" in p2 or "add.s64" in p2  # x * 2
    assert "mul.lo.s64" in p5 and p2 != p5


def test_a_function_renamed_through_its_name_compiles():
    # numba-cuda's test_ufuncs: the usecase is `def fn(...)` renamed "sqrt_usecase"; the
    # source is looked up by the code's name
    ns = {"np": np}
    exec("def fn(a0, a1):\n    np.sqrt(a0, a1)\n", ns)
    fn = ns["fn"]
    fn.__name__ = "sqrt_usecase"
    ptx, _ = cuda.compile_ptx(fn, "void(float64[::1], float64[::1])", cc=(9, 0))
    assert "sqrt.rn.f64" in ptx


def test_compile_then_exec_under_a_file_name_of_its_own():
    code = compile("def fill(a, v):\n    a[cuda.grid(1)] = v\n", "<generated fill>", "exec")
    ns = {"cuda": cuda}
    exec(code, ns)
    k = cuda.jit("void(int32[:], int32)")(ns["fill"])
    assert ".entry" in next(iter(k.inspect_asm().values()))


def test_future_flags_of_the_exec_are_honoured():
    src = "def put(a: 'ann', v):\n    a[0] = v\n"
    code = compile(src, "<future>", "exec", flags=__future__.annotations.compiler_flag,
                   dont_inherit=True)
    ns = {}
    exec(code, ns)
    assert ns["put"].__code__.co_flags & __future__.annotations.compiler_flag
    ptx, _ = cuda.compile_ptx(ns["put"], "void(float32[:], float32)", cc=(9, 0))
    assert ".entry" in ptx


def test_errors_in_generated_code_show_the_generated_line():
    ns = {"cuda": cuda}
    exec("def bad(a):\n    x = 1\n    a[0] = undefined_name + x\n", ns)
    with pytest.raises(cuda.TypingError) as info:
        cuda.compile_ptx(ns["bad"], "void(float32[:])", cc=(9, 0))
    msg = str(info.value)
    assert "<string>:3:" in msg and "a[0] = undefined_name + x" in msg


def test_a_text_pushed_out_of_the_kept_window_has_no_source():
    ns = {}
    exec("def oldest(a):\n    a[0] = 1\n", ns)
    for i in range(70):  # the hook keeps the 64 newest texts
        exec(f"def filler{i}(a):\n    a[0] = {i}\n", {})
    with pytest.raises(OSError, match="from its Python source, and there is none for it in "
                                      "'<string>'"):
        cuda.compile_ptx(ns["oldest"], "void(int32[:])", cc=(9, 0))


def test_the_same_text_exec_d_in_a_loop_is_kept_once():
    fns = []
    for _ in range(100):
        ns = {}
        exec("def same(a):\n    a[0] = 42\n", ns)
        fns.append(ns["same"])
    # a hundred identical execs did not push out the first of the hundred
    assert ".entry" in cuda.compile_ptx(fns[0], "void(int32[:])", cc=(9, 0))[0]


def run_all(lib, _m=None):
    out = {}
    idx = np.arange(32, dtype=np.float64)
    for func, factor in (("cuda.atomic.max", 2), ("cuda.atomic.min", 3),
                         ("cuda.atomic.add", 4)):
        kernel, _ = generate(lib, func, factor)
        res = lib.to_device(np.array([7.5], np.float64))
        lib.jit("void(float64[:], float64[:])")(kernel)[1, 32](res, lib.to_device(idx))
        out[func] = res.copy_to_host()
    return out


@pytest.mark.gpu
def test_generated_kernels_on_the_gpu(gpu, tmp_path):
    mine = run_all(cuda)
    np.testing.assert_array_equal(mine["cuda.atomic.max"], [31.0])
    np.testing.assert_array_equal(mine["cuda.atomic.min"], [0.0])
    np.testing.assert_array_equal(mine["cuda.atomic.add"], [7.5 + sum(range(32))])
    assert_same_as_numba_cuda(run_all, "", tmp_path, "exec_source_unused", mine)


def test_inspect_types_shows_the_generated_text():
    """inspect_types reads the source as the compiler does: a generated kernel's own text."""
    import io
    kernel, _ = generate(cuda, "cuda.atomic.max", 2)
    k = cuda.jit("void(float64[:], float64[:])")(kernel)
    out = io.StringIO()
    k.inspect_types(file=out)
    text = out.getvalue()
    assert "# File: <string>" in text and "# --- LINE 2 ---" in text
    assert "cuda.atomic.max(res, 0, ary[tx])" in text and "#   tx :: int32" in text


def _from_a_file(a):
    a[0] = 1


def test_debug_info_of_a_function_no_file_holds_warns_as_numba():
    """numba-cuda's test_missing_source: compiled with debug info (debug or lineinfo), a
    function made by exec() of a string warns NumbaDebugInfoWarning, naming the function (a
    debugger finds no file for its lines); without debug info, or from a file, nothing."""
    import warnings
    made = {}
    exec("def empty(a):\n    a[0] = 1\n", {}, made)
    for options, warns in (({"debug": True, "opt": False}, True), ({"lineinfo": True}, True),
                           ({}, False)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            cuda.compile_ptx(made["empty"], "void(int32[::1])", **options)
        infos = [x for x in w if x.category.__name__ == "NumbaDebugInfoWarning"]
        assert len(infos) == warns, (options, [str(x.message) for x in w])
        if warns:
            assert issubclass(infos[0].category, cuda.NumbaDebugInfoWarning)
            # (numba's class, once loaded, wraps the text in its terminal highlighting)
            assert (f"Could not find source for function: {made['empty']}. Debug line "
                    f"information may be inaccurate.") in str(infos[0].message)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cuda.compile_ptx(_from_a_file, "void(int32[::1])", debug=True, opt=False)
    assert not [x for x in w if x.category.__name__ == "NumbaDebugInfoWarning"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", cuda.NumbaDebugInfoWarning)
        with pytest.raises(cuda.NumbaDebugInfoWarning):
            cuda.compile_ptx(made["empty"], "void(int32[::1])", lineinfo=True)
