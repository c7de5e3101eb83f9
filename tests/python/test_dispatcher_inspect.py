"""numba's dispatcher introspection on nbcuda kernels: inspect_llvm (the NVVM IR handed to
libNVVM), inspect_sass (nvdisasm's listing of the code linked for the current device),
nopython_signatures, func_code, and the launch configuration's attributes (griddim, blockdim,
stream, sharedmem, dispatcher, pre_launch_callbacks), each as numba-cuda has them."""
import math
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import nbcuda as cuda
from nbcuda import float32, float64, void

from conftest import USING_TESTDRIVER, only


def axpy(a, x):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = a[i] * x + 1.0


def nvdisasm_available():
    if shutil.which("nvdisasm"):
        return True
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    if any(r and os.access(os.path.join(r, "bin", "nvdisasm"), os.X_OK) for r in roots):
        return True
    return any(os.access(os.path.join(p or ".", "nvidia", "cu13", "bin", "nvdisasm"), os.X_OK)
               for p in sys.path)


def test_inspect_llvm_is_the_nvvm_ir_per_signature():
    k = cuda.jit(axpy)
    assert k.inspect_llvm() == {}
    a = cuda.to_device(np.zeros(8, np.float32))
    k[1, 8](a, 2.0)
    irs = k.inspect_llvm()
    assert list(irs) == list(k.inspect_asm())
    (ir,) = irs.values()
    assert 'target triple = "nvptx64-nvidia-cuda"' in ir
    assert "define" in ir and "!nvvmir.version" in ir
    symbol = k.overloads[(float32[::1], float64)].symbol
    assert symbol in ir and symbol in k.inspect_asm(void(float32[::1], float64))
    assert k.inspect_llvm((float32[::1], float64)) == ir
    with pytest.raises(KeyError):
        k.inspect_llvm((float64[::1], float64))


def test_an_overload_inspects_as_its_own_text():
    # numba's _Kernel (d.overloads[types], as numba-cuda's test_array_alignment reads it):
    # inspect_llvm() and inspect_asm() of one overload are its text, not a dict
    for k in (cuda.jit(axpy), cuda.jit(["void(float32[::1], float64)"])(axpy)):
        if not k.signatures:
            k.compile((float32[::1], float64))
        overload = k.overloads[k.signatures[0]]
        assert overload.inspect_llvm() == k.inspect_llvm((float32[::1], float64))
        assert overload.inspect_asm() == k.inspect_asm((float32[::1], float64))
        assert isinstance(overload.inspect_asm(), str)


def test_inspect_llvm_of_a_kernel_with_one_signature_is_a_dict_of_one():
    k = cuda.jit("void(float32[::1], float64)")(axpy)
    irs = k.inspect_llvm()  # numba-cuda 0.30's CUDADispatcher: a dict, one signature or not
    assert list(irs) == [(float32[::1], float64)]
    ir = only(irs)
    assert isinstance(ir, str) and "fmul" in ir
    assert "!dbg" not in ir
    # the kernel's own options apply: line info is in the IR of a kernel jitted with it
    lines = only(cuda.jit("void(float32[::1], float64)", lineinfo=True)(axpy).inspect_llvm())
    assert "!dbg" in lines and "DICompileUnit" in lines


def test_inspect_sass_lists_the_kernel_or_says_nvdisasm_is_missing():
    k = cuda.jit("void(float32[::1], float64)")(axpy)
    if not nvdisasm_available():
        with pytest.raises(RuntimeError, match="nvdisasm was not found"):
            k.inspect_sass()
        return
    sass = only(k.inspect_sass())
    assert k.symbol in sass
    assert "EXIT" in sass and ("DFMA" in sass or "DADD" in sass)
    assert k.inspect_sass(void(float32[::1], float64)) == sass


def test_inspect_sass_cfg_is_nvdisasms_graph():
    # numba's inspect_sass_cfg: `nvdisasm -cfg` of the same code, a DOT digraph per overload
    k = cuda.jit("void(float32[::1], float64)")(axpy)
    if not nvdisasm_available():
        with pytest.raises(RuntimeError, match="nvdisasm was not found"):
            k.inspect_sass_cfg()
        return
    cfg = only(k.inspect_sass_cfg())
    assert cfg.lstrip().startswith("digraph") and k.symbol in cfg and "EXIT" in cfg
    assert k.inspect_sass_cfg(void(float32[::1], float64)) == cfg
    lazy = cuda.jit(axpy)
    lazy.compile("void(float32[::1], float64)")
    assert list(lazy.inspect_sass_cfg().values())[0].lstrip().startswith("digraph")


def test_inspect_sass_without_nvdisasm_is_a_runtime_error(monkeypatch, tmp_path):
    if os.access("/usr/local/cuda/bin/nvdisasm", os.X_OK):
        pytest.skip("/usr/local/cuda/bin/nvdisasm exists: it is always looked at")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    k = cuda.jit("void(float32[::1], float64)")(axpy)
    with pytest.raises(RuntimeError, match="nvdisasm was not found or could not be executed"):
        k.inspect_sass()


def test_inspect_sass_reports_nvdisasm_failing(monkeypatch, tmp_path):
    fake = tmp_path / "nvdisasm"
    fake.write_text("#!/bin/sh\necho 'nvdisasm fatal: bad input' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    k = cuda.jit("void(float32[::1], float64)")(axpy)
    with pytest.raises(RuntimeError, match=r"(?s)failed \(status 3\).*bad input"):
        k.inspect_sass()


def test_nopython_signatures_and_func_code():
    k = cuda.jit(axpy)
    assert k.nopython_signatures == []
    a = cuda.to_device(np.zeros(8, np.float32))
    k[1, 8](a, 2.0)
    (sig,) = k.nopython_signatures
    assert str(sig) == "(array(float32, 1d, C), float64) -> none"
    assert sig.args == (float32[::1], float64)
    assert k.func_code is axpy.__code__
    fixed = cuda.jit(["void(float32[::1], float64)", "void(float64[::1], float64)"])(axpy)
    assert [str(s) for s in fixed.nopython_signatures] == [
        "(array(float32, 1d, C), float64) -> none", "(array(float64, 1d, C), float64) -> none"]


def test_launch_configuration_attributes():
    k = cuda.jit(axpy)
    cfg = k[(2, 3), 64, 0, 16]
    assert cfg.griddim == (2, 3, 1) and cfg.blockdim == (64, 1, 1)
    assert cfg.sharedmem == 16 and cfg.dispatcher is k
    assert "Default CUDA stream" in repr(cfg.stream)
    s = cuda.stream()
    cfg = k.configure(4, (8, 8), s)
    assert cfg.stream is s and cfg.griddim == (4, 1, 1) and cfg.blockdim == (8, 8, 1)
    assert cfg.sharedmem == 0
    with pytest.raises(AttributeError):
        cfg.griddim = (1, 1, 1)


def test_pre_launch_callbacks_run_before_each_launch():
    k = cuda.jit(axpy)
    a = cuda.to_device(np.zeros(8, np.float32))
    cfg = k[1, 8]
    seen = []
    cfg.pre_launch_callbacks.append(lambda kernel, config: seen.append((kernel, config)))
    cfg(a, 2.0)
    cfg(a, 2.0)
    assert len(seen) == 2
    kernel, config = seen[0]
    assert config is cfg and kernel is k.overloads[(float32[::1], float64)]
    # numba's configurations are new each time: callbacks added to one stay with it
    assert k[1, 8] is not cfg and k[1, 8].pre_launch_callbacks == []
    if not USING_TESTDRIVER:  # the test driver runs no kernel code
        np.testing.assert_array_equal(a.copy_to_host(), np.full(8, 3, np.float32))

    def refuse(kernel, config):
        raise ValueError("not now")

    other = k[1, 8]
    other.pre_launch_callbacks.append(refuse)
    with pytest.raises(ValueError, match="not now"):
        other(a, 2.0)
    if not USING_TESTDRIVER:  # not launched: still 3s
        np.testing.assert_array_equal(a.copy_to_host(), np.full(8, 3, np.float32))


def cosine(x):
    return math.cos(x)


def test_device_function_inspect_asm_compiles_it_with_its_options():
    """numba-cuda's device dispatcher: inspect_asm(sig) is the device function's PTX compiled
    with its jit options (numba-cuda's test_fastmath compares fastmath=True with the default),
    and without a signature a dict over the signatures it was jitted for."""
    fast = cuda.jit((float32,), device=True, fastmath=True)(cosine)
    precise = cuda.jit((float32,), device=True)(cosine)
    assert "cos.approx" in fast.inspect_asm((float32,))
    assert "cos.approx" not in precise.inspect_asm((float32,))
    assert ".func" in precise.inspect_asm((float32,))
    assert list(fast.inspect_asm()) == ["(float32,)"]
    assert cuda.jit(device=True)(cosine).inspect_asm() == {}


def test_device_function_cannot_be_launched_or_give_sass():
    # numba-cuda's RuntimeErrors, rather than a TypeError about subscripting
    f = cuda.jit(device=True)(cosine)
    with pytest.raises(RuntimeError, match="Cannot compile a device function as a kernel"):
        f[1, 1]()
    with pytest.raises(RuntimeError, match="Cannot inspect SASS of a device function"):
        f.inspect_sass((float32,))


def test_type_annotation_is_numbas_typemap():
    """overload._type_annotation.typemap: each variable's type (parameters first) as type
    objects (numba-cuda's test_localmem reads a local array's dtype from it); None before
    a lazy kernel is compiled."""
    from nbcuda import int32, int64

    def local_copy(x, n):
        i = cuda.grid(1)
        loc = cuda.local.array(4, dtype=np.int32)
        loc[0] = x[i] + n
        x[i] = loc[0] * 0.5

    k = cuda.jit(void(int32[::1], int32))(local_copy)
    typemap = next(iter(k.overloads.values()))._type_annotation.typemap
    assert list(typemap) == ["x", "n", "i", "loc"]
    assert {name: str(t) for name, t in typemap.items()} == {
        "x": "array(int32, 1d, C)", "n": "int32", "i": "int64", "loc": "array(int32, 1d, C)"}
    assert typemap["loc"].dtype == int32 and typemap["i"] == int64
    assert typemap["n"] is int32
    lazy = cuda.jit(local_copy)
    assert lazy._type_annotation is None


def test_inspect_types_writes_source_and_variables(tmp_path):
    import io
    k = cuda.jit([void(float32[::1], float32), void(float64[::1], float64)])(axpy)
    out = io.StringIO()
    assert k.inspect_types(file=out) is None
    text = out.getvalue()
    assert text.count("# --- variables ---") == 2
    assert "axpy void(float32[::1], float32)" in text and "axpy void(float64[::1], float64)" in text
    assert "a[i] = a[i] * x + 1.0" in text and f"# File: {__file__}" in text
    assert "#   i :: int64" in text and "#   a :: array(float64, 1d, C)" in text
    one = io.StringIO()
    k.inspect_types(file=one, signature=void(float32[::1], float32))
    assert one.getvalue().count("# --- variables ---") == 1
    assert "#   x :: float32" in one.getvalue()
    with pytest.raises(KeyError):
        k.inspect_types(file=one, signature=void(float32[:], float64))


def test_jit_of_a_kernel_or_device_function_rejits_its_python_function():
    """numba's jit(dispatcher): a new dispatcher of the same Python function (numba-cuda's
    test_analysis.test_issue_5618 relies on it)."""
    k = cuda.jit(axpy)
    again = cuda.jit(k)
    assert type(again) is type(k) and again is not k
    assert again.py_func is axpy
    assert repr(again) == f"<nbcuda kernel {axpy!r}>"
    typed = cuda.jit("void(float32[:], float32)")(k)
    assert typed.py_func is axpy and "float32" in repr(typed)
    a = cuda.to_device(np.zeros(4, np.float32))
    again[1, 4](a, 2.0)
    if not USING_TESTDRIVER:  # the test driver runs no kernel code
        assert list(a.copy_to_host()) == [1.0] * 4

    def twice(x):
        return 2 * x

    d = cuda.jit(device=True)(twice)
    assert cuda.jit(device=True)(d).py_func is twice
    with pytest.raises(TypeError, match="decorates Python functions"):
        cuda.jit(print)


class _NumbaScalar:
    """Stands in for a numba scalar type: nbcuda knows numba's types by their classes'
    module and their attributes; equal to nbcuda's, with a hash of its own."""
    __module__ = "numba.core.types.scalars"

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    def __hash__(self):
        return hash(("numba", self.name))

    def __eq__(self, other):
        return isinstance(other, _NumbaScalar) and other.name == self.name


class _NumbaArray(_NumbaScalar):
    __module__ = "numba.core.types.npytypes"

    def __init__(self, dtype, ndim, layout):
        super().__init__(f"array({dtype}, {ndim}d, {layout})")
        self.dtype, self.ndim, self.layout = dtype, ndim, layout


def test_dicts_keyed_by_argument_types_take_numbas_types_too():
    """k.overloads, inspect_*() and get_*() dicts are keyed by tuples of nbcuda's types, as
    numba's by its own; a key of numba's types (equal, differently hashed) finds the same
    entry, through [], `in` and get()."""
    k = cuda.jit(["void(float32[::1], float64)", "void(float64[::1], float64)"])(axpy)
    theirs = (_NumbaArray(_NumbaScalar("float64"), 1, "C"), _NumbaScalar("float64"))
    ours = (float64[::1], float64)
    for d in (k.overloads, k.inspect_asm(), k.inspect_llvm(), k.get_regs_per_thread()):
        assert list(d) == [(float32[::1], float64), ours]
        assert d[theirs] == d[ours] and theirs in d and d.get(theirs) == d[ours]
        absent = (_NumbaArray(_NumbaScalar("int32"), 1, "C"), _NumbaScalar("float64"))
        assert absent not in d and d.get(absent) is None and d.get(absent, 7) == 7
        with pytest.raises(KeyError) as e:
            d[absent]
        assert e.value.args == (absent,)
    assert k.signatures == [(float32[::1], float64), ours]
    assert k.get_regs_per_thread(void(*theirs)) == k.get_regs_per_thread()[ours]


def test_kernel_and_device_function_doc_is_their_functions():
    # numba issue #5902: jitting keeps the function's docstring
    @cuda.jit
    def add_kernel(a, b):
        """Add two integers, kernel version"""

    @cuda.jit(device=True)
    def add_device(a, b):
        """Add two integers, device version"""

    assert add_kernel.__doc__ == "Add two integers, kernel version"
    assert add_device.__doc__ == "Add two integers, device version"


def test_specialize_with_types_and_specializations():
    # numba's tests specialize with type objects (k.specialize(float32[::1])): the kernel is
    # compiled for those types; `specializations` lists a lazy kernel's specialisations
    k = cuda.jit(axpy)
    assert len(k.specializations) == 0
    f32 = k.specialize(float32[::1], float64)
    assert f32.specialized and len(k.specializations) == 1
    assert k.specialize(float32[::1], float64) is f32
    f64 = k.specialize(float64[::1], float64)
    assert f64 is not f32 and len(k.specializations) == 2
    assert k.specializations[(float64[::1], float64)] is f64
    with pytest.raises(RuntimeError, match="Dispatcher already specialized"):
        f32.specialize(float32[::1], float64)
    eager = cuda.jit("void(float32[::1], float64)")(axpy)
    assert len(eager.specializations) == 0
    with pytest.raises(RuntimeError, match="Dispatcher already specialized"):
        eager.specialize(float32[::1], float64)


def _one_argument(x):
    z = x  # noqa: F841


def test_a_one_argument_signature_is_found_as_a_tuple_or_text():
    # (int32,) and "(int32,)" (a tuple of one type, printed with its comma) name the same
    # overload as "void(int32)"
    k = cuda.jit("void(int32)")(_one_argument)
    ir = only(k.inspect_llvm())
    for key in ((cuda.int32,), "(int32,)", "void(int32)", void(cuda.int32)):
        assert k.inspect_llvm(key) == ir
    lazy = cuda.jit(_one_argument)
    lazy.compile((cuda.int32,))
    assert lazy.inspect_llvm((cuda.int32,)) == lazy.inspect_llvm("void(int32)")
    # numba's _Kernel.inspect_asm(cc): an overload given a compute capability has the code
    # compiled for it (numba-cuda's test_lineinfo_with_compile_internal reads the .target)
    overload = k.overloads[(cuda.int32,)]
    own = k.inspect_asm((cuda.int32,))
    default = tuple(int(c) for c in re.search(r"\.target sm_(\d+)(\d)", own).groups())
    assert overload.inspect_asm(default) == own  # the code compiled (the default PTX cc)
    for cc in ((9, 0), (8, 6)):
        assert ".target sm_%d%d\n" % cc in overload.inspect_asm(cc)
    with pytest.raises(OverflowError):
        overload.inspect_asm((2**40, 0))
    with pytest.raises(cuda.CCSupportError, match="compute capability 1.0 is not supported"):
        overload.inspect_asm((1, 0))
    with pytest.raises(KeyError) as e:
        k.inspect_llvm((cuda.float32,))
    assert e.value.args == ((cuda.float32,),)


def plus_one(x):
    return x + 1


@pytest.fixture
def dumps():
    """nbcuda.config's DUMP_LLVM and DUMP_ASSEMBLY, put back after the test."""
    saved = cuda.config.DUMP_LLVM, cuda.config.DUMP_ASSEMBLY
    yield cuda.config
    cuda.config.DUMP_LLVM, cuda.config.DUMP_ASSEMBLY = saved


def dump_sections(out):
    """The dumps printed, as (title, text) pairs: each under its title centred in a rule of
    '-' of 80 columns (a longer title alone), ended by a rule of 80 '='."""
    sections, lines, i = [], out.splitlines(), 0
    while i < len(lines):
        head = lines[i]
        assert len(head) > 80 or (head.startswith("-") and head.endswith("-")), head
        end = lines.index("=" * 80, i)
        sections.append((head.strip("-"), "\n".join(lines[i + 1:end])))
        i = end + 1
    return sections


def test_dump_llvm_and_assembly_print_each_compilation_as_numba(dumps, capsys):
    dumps.DUMP_LLVM, dumps.DUMP_ASSEMBLY = 1, 1
    k = cuda.jit((float32[::1], float64))(axpy)
    out, err = capsys.readouterr()
    assert err == ""
    (llvm_title, ir), (asm_title, ptx) = dump_sections(out)
    assert llvm_title == "LLVM DUMP axpy" and asm_title == "ASSEMBLY axpy"
    # the IR the PTX was made from, as inspect_llvm gives it, with the kernel annotation
    # numba-cuda's test_debug looks for; the PTX is the kernel's own
    assert ir == k.inspect_llvm((float32[::1], float64)).rstrip()
    assert '!"kernel", i32 1' in ir
    assert ptx == k.inspect_asm((float32[::1], float64)).rstrip("\0\n ")
    assert ptx.startswith("//\n// Generated by NVIDIA NVVM Compiler")
    # inspecting recompiles to the IR without printing; a device function's compile prints
    # too, under its qualified name
    assert capsys.readouterr().out == ""

    def outer():
        def helper(x):
            return x + 1
        return helper
    cuda.compile_ptx(outer(), "float32(float32)", device=True)
    name = "test_dump_llvm_and_assembly_print_each_compilation_as_numba.<locals>.outer." \
           "<locals>.helper"
    titles = [t for t, _ in dump_sections(capsys.readouterr().out)]
    assert titles == ["LLVM DUMP " + name, "ASSEMBLY " + name]


def test_dumps_are_one_at_a_time_and_off_by_default(dumps, capsys):
    assert (dumps.DUMP_LLVM, dumps.DUMP_ASSEMBLY) == (0, 0) or os.environ.get("NUMBA_DEBUG")
    dumps.DUMP_LLVM, dumps.DUMP_ASSEMBLY = 0, 0
    cuda.compile_ptx(axpy, (float32[::1], float64))
    assert capsys.readouterr().out == ""
    dumps.DUMP_ASSEMBLY = 1
    cuda.compile_ptx(axpy, (float32[::1], float64))
    assert [t for t, _ in dump_sections(capsys.readouterr().out)] == ["ASSEMBLY axpy"]
    dumps.DUMP_LLVM, dumps.DUMP_ASSEMBLY = 1, 0
    cuda.compile_ptx(axpy, (float32[::1], float64))
    assert [t for t, _ in dump_sections(capsys.readouterr().out)] == ["LLVM DUMP axpy"]
    # LTO-IR is no text: only its IR is printed
    dumps.DUMP_ASSEMBLY = 1
    code, _ = cuda.compile(plus_one, "float32(float32)", device=True, output="ltoir")
    assert isinstance(code, bytes)
    assert [t for t, _ in dump_sections(capsys.readouterr().out)] == ["LLVM DUMP plus_one"]


def test_dump_settings_come_from_numbas_environment_variables(tmp_path):
    script = tmp_path / "dumped.py"
    script.write_text("import nbcuda as cuda\n"
            "def f(a):\n"
            "    a[0] = 1\n"
            "print(cuda.config.DUMP_LLVM, cuda.config.DUMP_ASSEMBLY)\n"
            "cuda.compile_ptx(f, 'void(int32[::1])')\n")

    def run(**env):
        full = {k: v for k, v in os.environ.items()
                if k not in ("NUMBA_DEBUG", "NUMBA_DUMP_LLVM", "NUMBA_DUMP_ASSEMBLY")}
        full.update(env)
        p = subprocess.run([sys.executable, str(script)], env=full, capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert p.stderr == ""
        first, *rest = p.stdout.splitlines()
        return first, [t for t, _ in dump_sections("\n".join(rest))]
    assert run() == ("0 0", [])
    assert run(NUMBA_DUMP_ASSEMBLY="1") == ("0 1", ["ASSEMBLY f"])
    assert run(NUMBA_DEBUG="1") == ("1 1", ["LLVM DUMP f", "ASSEMBLY f"])
    assert run(NUMBA_DEBUG="1", NUMBA_DUMP_LLVM="0") == ("0 1", ["ASSEMBLY f"])
    assert run(NUMBA_DUMP_LLVM="yes") == ("0 0", [])  # not an integer: the default, as numba


def test_dumps_without_stdout_or_with_a_failing_one(dumps, monkeypatch):
    """With no sys.stdout (None, as under pythonw) the dumps are skipped and the compile
    succeeds; a sys.stdout whose write fails makes the compile raise that error, as numba's
    print would."""
    dumps.DUMP_LLVM, dumps.DUMP_ASSEMBLY = 1, 1
    monkeypatch.setattr(sys, "stdout", None)
    ptx, _ = cuda.compile_ptx(axpy, (float32[::1], float64))
    assert ".entry" in ptx

    class Broken:
        def write(self, text):
            raise OSError("stdout is gone")

    monkeypatch.setattr(sys, "stdout", Broken())
    with pytest.raises(OSError, match="stdout is gone"):
        cuda.compile_ptx(axpy, (float32[::1], float64))
    monkeypatch.undo()
    dumps.DUMP_LLVM, dumps.DUMP_ASSEMBLY = 0, 0
    cuda.compile_ptx(axpy, (float32[::1], float64))  # the failed compile left nothing behind
