"""compile() / compile_ptx() of real Python functions: the corpus (PTX checked by ptxas),
options, ABIs, the resolver (globals, closures, helpers, types), errors and messages."""
import importlib.util
import math
import os
import re
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

import nbcuda as cuda
from nbcuda import float32, int32
from conftest import corpus_dir, load_kernel_module, only


def load_corpus():
    d = corpus_dir()
    cases = []
    if not d:
        return cases
    for fn in sorted(os.listdir(d)):
        if not fn.endswith(".py"):
            continue
        name = "corpus_" + fn[:-3]
        spec = importlib.util.spec_from_file_location(name, os.path.join(d, fn))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        for (fname, sig, kind, inputs) in getattr(mod, "CASES", []):
            cases.append(pytest.param(mod, fname, sig, kind, id=f"{fn[:-3]}.{fname}:{sig}"))
    return cases


CORPUS = load_corpus()


def ptxas():
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    for p in (os.path.join(home, "bin", "ptxas"), shutil.which("ptxas")):
        if p and os.path.exists(p):
            return p
    return None


def check_ptx(ptx, tmp_path, arch="sm_90", debug=False):
    """ptxas accepts the PTX (with -g, its debug sections too, when debug)."""
    exe = ptxas()
    if not exe:
        pytest.skip("ptxas not found")
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    p = subprocess.run([exe, f"-arch={arch}", *(["-g"] if debug else []), str(src), "-o",
                        str(tmp_path / "k.cubin")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def compile_checked(func, sig, tmp_path):
    """func compiled for sig (sm_90) through nbcuda.compile_ptx, ptxas accepting it: the PTX."""
    import nbcuda
    ptx, _ = nbcuda.compile_ptx(func, sig, cc=(9, 0))
    check_ptx(ptx, tmp_path)
    return ptx


def test_corpus_is_present():
    assert len(CORPUS) >= 20


@pytest.mark.parametrize("mod,fname,sig,kind", CORPUS)
def test_corpus_compiles_and_ptxas_accepts(mod, fname, sig, kind, tmp_path):
    fn = getattr(mod, fname)
    if kind == "device":
        ptx, resty = cuda.compile(fn, sig, device=True)
        assert ".visible .func" in ptx and "func_retval0" in ptx
        assert str(resty) != "none"
        if "(" in sig and not sig.startswith("("):
            assert str(resty) == sig.split("(")[0].strip()
    else:
        ptx, resty = cuda.compile_ptx(fn, sig)
        assert ".visible .entry" in ptx and "func_retval" not in ptx
        assert str(resty) == "none"
    check_ptx(ptx, tmp_path)


@pytest.mark.parametrize("mod,fname,sig,kind", CORPUS)
def test_corpus_compiles_with_debug_info(mod, fname, sig, kind, tmp_path):
    """debug=True over the corpus: every variable libNVVM is told about (numbers, arrays,
    tuples, complex) is described in a form libNVVM and ptxas -g accept."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumbaInvalidConfigWarning is not the point here
        ptx, _ = cuda.compile(getattr(mod, fname), sig, device=kind == "device", debug=True,
                              opt=False, cc=(9, 0), abi="c" if kind == "device" else "numba")
    assert ".section\t.debug_info" in ptx
    check_ptx(ptx, tmp_path, debug=True)


def add(a, b):
    return a + b


def kernel(r, x):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = x[i] * 2


def test_resty_and_code_types():
    ptx, resty = cuda.compile(add, "float32(float32, float32)")
    assert isinstance(ptx, str) and resty is cuda.float32
    _, resty = cuda.compile(add, (cuda.int32, cuda.float32))
    assert str(resty) == "float64"  # numba: int32 + float32 -> float64
    _, resty = cuda.compile(add, cuda.int16(cuda.int64, cuda.int64))
    assert resty is cuda.int16
    _, resty = cuda.compile(add, "(int32, int32)")
    assert resty is cuda.int64


def test_c_abi_names_and_abi_name():
    ptx, _ = cuda.compile(add, "float32(float32, float32)")
    assert ".visible .func  (.param .b32 func_retval0) add(" in ptx
    assert "NumbaEnv" not in ptx
    ptx, _ = cuda.compile(add, "float64(float64, float64)", abi_info={"abi_name": "my_add"})
    assert " my_add(" in ptx and ".param .b64 func_retval0" in ptx


def test_numba_abi_device_function():
    ptx, _ = cuda.compile(add, "int32(int32, int32)", abi="numba")
    assert "func_retval0" in ptx and ".visible .func" in ptx


def test_kernel_abi_and_void():
    ptx, resty = cuda.compile_ptx(kernel, "void(float32[:], float32[:])")
    assert ".visible .entry" in ptx and resty is cuda.void
    ptx, _ = cuda.compile(kernel, "void(float32[:], float32[:])", device=False, abi="numba")
    assert ".visible .entry" in ptx


def test_ltoir_output():
    code, resty = cuda.compile(add, "float32(float32, float32)", output="ltoir")
    assert isinstance(code, bytes) and code[:4] == b"\xed\x43\x4e\x7f"
    assert resty is cuda.float32


def test_lineinfo_points_at_this_file():
    ptx, _ = cuda.compile(kernel, "void(float32[:], float32[:])", device=False, abi="numba",
                          lineinfo=True)
    assert ".loc" in ptx and ".file" in ptx and "test_compile.py" in ptx
    # line tables only, as numba's DebugDirectivesOnly and nvcc's -lineinfo: no DWARF sections
    assert ".section" not in ptx
    ir = cuda.jit("void(float32[:], float32[:])", lineinfo=True)(kernel).inspect_llvm()
    assert "emissionKind: DebugDirectivesOnly" in "".join(ir.values())


def test_debug_emits_dwarf():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ptx, _ = cuda.compile(add, "float32(float32, float32)", debug=True, opt=False)
    assert ".section .debug_info" in ptx or ".section\t.debug_info" in ptx


def debug_locals(depth, scale, out, flag):
    acc = 0
    for i in range(depth):
        acc += i
    same = depth == acc
    out[0] = acc * scale if flag and not same else 0.5


def test_debug_describes_variables(tmp_path):
    """debug=True: each number-typed parameter and local gets a DILocalVariable (parameters
    with their position) and a dbg.declare on its slot, as numba-cuda's debug kernels (its
    test_debuginfo: bool as DW_ATE_boolean, parameters through dbg.declare); lineinfo alone
    describes nothing."""
    sig = "void(int32, float64, float64[::1], boolean)"
    k = cuda.jit(sig, debug=True, opt=False)(debug_locals)
    ir = "".join(k.inspect_llvm().values())
    variables = dict(re.findall(r'^!(\d+) = !DILocalVariable\(name: "(\w+)"', ir, re.M))
    assert set(variables.values()) == {"depth", "scale", "out", "flag", "acc", "i", "same"}
    for n, name in enumerate(("depth", "scale"), start=1):
        assert re.search(rf'!DILocalVariable\(name: "{name}", arg: {n},', ir)
    assert re.search(r'!DILocalVariable\(name: "flag", arg: 4,', ir)
    for meta in variables:
        assert re.search(rf"call void @llvm.dbg.declare\(metadata .+\* %\S+, metadata !{meta},", ir)
    same = next(m for m, name in variables.items() if name == "same")
    ty = re.search(rf'^!{same} = .*type: !(\d+)\)', ir, re.M).group(1)
    assert re.search(rf"^!{ty} = !DIBasicType\(name: \"bool\", size: 8, encoding: DW_ATE_boolean",
                     ir, re.M)
    scale = next(m for m, name in variables.items() if name == "scale")
    ty = re.search(rf'^!{scale} = .*type: !(\d+)\)', ir, re.M).group(1)
    assert re.search(rf"^!{ty} = !DIBasicType\(name: \"float64\", size: 64, encoding: DW_ATE_float",
                     ir, re.M)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ptx, _ = cuda.compile_ptx(debug_locals, sig, debug=True, opt=False, cc=(9, 0))
    check_ptx(ptx, tmp_path, debug=True)
    ir = "".join(cuda.jit(sig, lineinfo=True)(debug_locals).inspect_llvm().values())
    assert "DILocalVariable" not in ir and "dbg.declare" not in ir


def debug_composites(a, b, z, f):
    t = (1, 2)
    u = (f, (z, a[0, 0] > 0))
    a[0, 0] = t[0] + u[1][0].real + b[0]


def described_type(ir, meta):
    """The debug type of metadata node !meta: a basic type's (name, bits), a pointer's
    ("*", pointee), an array type's ("[]", count or (counts...), element), or a structure's
    (name, bits, [(member, offset, type), ...])."""
    line = re.search(rf"^!{meta} = (.*)$", ir, re.M).group(1)
    field = lambda key: re.search(rf"\b{key}: (!?\d+|\"[^\"]*\"|\w+)", line).group(1)
    ref = lambda key: described_type(ir, field(key)[1:])
    if "DIBasicType" in line:
        return field("name").strip('"'), int(field("size"))
    if "DW_TAG_pointer_type" in line:
        return "*", ref("baseType")
    nodes = re.search(rf"^!{field('elements')[1:]} = !{{(.*)}}$", ir, re.M).group(1)
    elements = [e.strip()[1:] for e in nodes.split(",") if e.strip()]
    if "DW_TAG_array_type" in line:
        counts = tuple(int(re.search(rf"^!{sub} = !DISubrange\(count: (\d+)\)", ir,
                                     re.M).group(1)) for sub in elements)
        return "[]", counts[0] if len(counts) == 1 else counts, ref("baseType")
    members = []
    for m in elements:
        mline = re.search(rf"^!{m} = (.*)$", ir, re.M).group(1)
        assert "DW_TAG_member" in mline
        name = re.search(r'name: "(\w+)"', mline).group(1)
        offset = int(re.search(r"offset: (\d+)", mline).group(1))
        base = re.search(r"baseType: !(\d+)", mline).group(1)
        members.append((name, offset, described_type(ir, base)))
    return field("name").strip('"'), int(field("size")), members


def test_debug_describes_arrays_tuples_and_complex(tmp_path):
    """debug=True describes arrays as numba's array structure, complex numbers as real and
    imag, tuples as members f0, f1... at the offsets of their LLVM layout (numba's own tuple
    descriptions ignore alignment: these match memory), so that cuda-gdb can print them."""
    sig = "void(float64[:, :], int16[:], complex64, boolean)"
    k = cuda.jit(sig, debug=True, opt=False)(debug_composites)
    ir = "".join(k.inspect_llvm().values())
    types = {name: described_type(ir, ty) for name, ty in re.findall(
        r'^!\d+ = !DILocalVariable\(name: "(\w+)".*type: !(\d+)\)', ir, re.M)}
    i64, byte = ("int64", 64), ("i8", 8)

    def array(name, element, ndim):
        dims = ("[]", ndim, i64)
        return (name, 320 + 128 * ndim,
                [("meminfo", 0, ("*", byte)), ("parent", 64, ("*", byte)),
                 ("nitems", 128, i64), ("itemsize", 192, i64), ("data", 256, ("*", element)),
                 ("shape", 320, dims), ("strides", 320 + 64 * ndim, dims)])
    c64 = ("complex64", 64, [("real", 0, ("float32", 32)), ("imag", 32, ("float32", 32))])
    assert types["a"] == array("array(float64, 2d, A)", ("float64", 64), 2)
    assert types["b"] == array("array(int16, 1d, A)", ("int16", 16), 1)
    assert types["z"] == c64
    assert types["f"] == ("bool", 8)
    assert types["t"] == ("UniTuple(int64 x 2)", 128, [("f0", 0, i64), ("f1", 64, i64)])
    inner = ("Tuple(complex64, bool)", 96, [("f0", 0, c64), ("f1", 64, ("bool", 8))])
    assert types["u"] == ("Tuple(bool, Tuple(complex64, bool))", 128,
                          [("f0", 0, ("bool", 8)), ("f1", 32, inner)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ptx, _ = cuda.compile_ptx(debug_composites, sig, debug=True, opt=False, cc=(9, 0))
    check_ptx(ptx, tmp_path, debug=True)
    # the DWARF ptxas -g writes into the cubin has them: the 2-d array's strides at byte 56
    if shutil.which("readelf"):
        dwarf = subprocess.run(["readelf", "--debug-dump=info", str(tmp_path / "k.cubin")],
                               capture_output=True, text=True).stdout
        assert re.search(r"DW_AT_name\s*: array\(float64, 2d, A\)\s*\n.*DW_AT_byte_size\s*: 72",
                         dwarf)
        assert re.search(r"DW_AT_name\s*: strides\s*\n(.*\n){0,4}.*DW_OP_plus_uconst: 56", dwarf)
        assert "Tuple(bool, Tuple(complex64, bool))" in dwarf


def debug_rebound(x, out):
    foo = 100
    foo = 2.5 * x
    foo = foo > 1
    out[0] = foo


def debug_grid(x):
    g = cuda.cg.this_grid()  # noqa: F841


def test_debug_describes_each_version_of_a_rebound_name_and_grid_groups(tmp_path):
    """A name bound again with another type is a separate variable with its own slot: each is
    described under its version's name (foo, foo.1, foo.2), so `info locals` shows them all;
    a grid group is numba's GridGroup, a 64-bit unsigned handle."""
    sig = "void(float64, boolean[::1])"
    ir = "".join(cuda.jit(sig, debug=True, opt=False)(debug_rebound).inspect_llvm().values())
    types = {name: described_type(ir, ty) for name, ty in re.findall(
        r'^!\d+ = !DILocalVariable\(name: "([\w.]+)".*type: !(\d+)\)', ir, re.M)}
    assert types["foo"] == ("int64", 64)
    assert types["foo.1"] == ("float64", 64)
    assert types["foo.2"] == ("bool", 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ptx, _ = cuda.compile_ptx(debug_rebound, sig, debug=True, opt=False, cc=(9, 0))
    check_ptx(ptx, tmp_path, debug=True)
    ir = "".join(cuda.jit("void(int32)", debug=True, opt=False)(debug_grid)
                 .inspect_llvm().values())
    ty = re.search(r'DILocalVariable\(name: "g",.*type: !(\d+)\)', ir).group(1)
    assert re.search(rf'^!{ty} = !DIBasicType\(name: "GridGroup", size: 64, '
                     r"encoding: DW_ATE_unsigned\)", ir, re.M)


DEBUG_INNER = np.dtype([("p", np.float32), ("q", np.int8)])
DEBUG_RECORD = np.dtype([("x", np.int32), ("y", "U3"), ("v", np.float64, (2, 3)), ("s", "S4"),
                         ("inner", DEBUG_INNER), ("z", np.complex64), ("t", "M8[s]")],
                        align=True)


def debug_records(a, n):
    r = a[0]
    o = a[0].x if n > 0 else None
    if o is not None:
        a[1].x = o + r.inner.q


def debug_strings_and_vectors(a, out):
    v = cuda.float32x3(1.0, 2.0, a[0])
    s = "héllo"  # noqa: F841
    b = b"ab"  # noqa: F841
    out[0] = v.z


def test_debug_describes_strings_and_vector_types(tmp_path):
    """A string is the array of its characters (code points for str, bytes for bytes), a
    CUDA vector type numba's structure of x, y, z, w."""
    sig = "void(float32[::1], float32[::1])"
    k = cuda.jit(sig, debug=True, opt=False)(debug_strings_and_vectors)
    ir = "".join(k.inspect_llvm().values())
    types = {name: described_type(ir, ty) for name, ty in re.findall(
        r'^!\d+ = !DILocalVariable\(name: "([\w.]+)".*type: !(\d+)\)', ir, re.M)}
    f32 = ("float32", 32)
    assert types["v"] == ("float32x3", 96, [("x", 0, f32), ("y", 32, f32), ("z", 64, f32)])
    assert types["s"] == ("[]", 5, ("uint32", 32))
    assert types["b"] == ("[]", 2, ("uint8", 8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ptx, _ = cuda.compile_ptx(debug_strings_and_vectors, sig, debug=True, opt=False,
                                  cc=(9, 0))
    check_ptx(ptx, tmp_path, debug=True)


DEBUG_NESTED_ARRAY = np.dtype([("x", np.int32), ("arr", DEBUG_INNER, (2,))], align=True)


def debug_record_array_field(a):
    r = a[0]  # noqa: F841
    a[0].x = 1


def test_debug_describes_an_array_field_of_records_as_their_bytes():
    """A record field that is an array of records holds the records themselves: its elements
    are described as their structure, not as pointers (a record variable's form)."""
    sig = (cuda.from_dtype(DEBUG_NESTED_ARRAY)[::1],)
    k = cuda.jit(sig, debug=True, opt=False)(debug_record_array_field)
    ir = "".join(k.inspect_llvm().values())
    ty = re.search(r'DILocalVariable\(name: "r",.*type: !(\d+)\)', ir).group(1)
    inner = (str(cuda.from_dtype(DEBUG_INNER)), 40, [("p", 0, ("float32", 32)),
                                                      ("q", 32, ("int8", 8))])
    assert described_type(ir, ty)[1][2][1] == ("arr", 32, ("[]", 2, inner))


def test_debug_describes_records_and_optionals(tmp_path):
    """A record variable (a pointer to its bytes) is described as a pointer to a structure of
    its fields at their offsets — array fields as arrays of their extents, strings as arrays
    of characters, nested records as structures, dates as int64 —, an array of records with
    that structure as its data's type, an Optional as numba's {data, valid}."""
    rec = cuda.from_dtype(DEBUG_RECORD)
    sig = (rec[::1], cuda.int64)
    ir = "".join(cuda.jit(sig, debug=True, opt=False)(debug_records).inspect_llvm().values())
    types = {name: described_type(ir, ty) for name, ty in re.findall(
        r'^!\d+ = !DILocalVariable\(name: "([\w.]+)".*type: !(\d+)\)', ir, re.M)}
    fields = [("x", 0, ("int32", 32)), ("y", 32, ("[]", 3, ("uint32", 32))),
              ("v", 128, ("[]", (2, 3), ("float64", 64))), ("s", 512, ("[]", 4, ("uint8", 8))),
              ("inner", 544, (str(cuda.from_dtype(DEBUG_INNER)), 40,
                              [("p", 0, ("float32", 32)), ("q", 32, ("int8", 8))])),
              ("z", 608, ("complex64", 64, [("real", 0, ("float32", 32)),
                                            ("imag", 32, ("float32", 32))])),
              ("t", 704, ("datetime64[s]", 64))]
    record = (str(rec), 8 * DEBUG_RECORD.itemsize, fields)
    assert [(n, 8 * DEBUG_RECORD.fields[n][1]) for n, _, _ in fields] == \
        [(n, off) for n, off, _ in fields]
    assert types["r"] == ("*", record)
    assert dict((m, t) for m, _, t in types["a"][2])["data"] == ("*", record)
    assert types["o"] == ("OptionalType(int32)", 64, [("data", 0, ("int32", 32)),
                                                     ("valid", 32, ("bool", 8))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ptx, _ = cuda.compile_ptx(debug_records, sig, debug=True, opt=False, cc=(9, 0))
    check_ptx(ptx, tmp_path, debug=True)


def fma_like(a, b, c):
    return a * b + c


def fdiv(a, b):
    return a / b


def test_fastmath_changes_instructions():
    precise, _ = cuda.compile(fdiv, "float32(float32, float32)")
    fast, _ = cuda.compile(fdiv, "float32(float32, float32)", fastmath=True)
    assert "div.rn.f32" in precise
    assert "div.approx.ftz.f32" in fast or "div.full.ftz.f32" in fast


def test_cc_selects_target():
    ptx, _ = cuda.compile(add, "float32(float32, float32)", cc=(8, 0))
    assert ".target sm_80" in ptx
    ptx, _ = cuda.compile(add, "float32(float32, float32)")
    assert ".target sm_75" in ptx or ".target sm_" in ptx
    with pytest.raises(cuda.CCSupportError):
        cuda.compile(add, "float32(float32, float32)", cc=(5, 0))


def test_for_current_device(cuda):
    ptx, _ = cuda.compile_ptx_for_current_device(kernel, "void(float32[:], float32[:])")
    cc = cuda.get_current_device().compute_capability
    assert ".visible .entry" in ptx and ".target sm_" in ptx
    assert f"sm_{cc[0]}{cc[1]}" in ptx or cc >= (10, 0)
    ptx, _ = cuda.compile_for_current_device(add, "float32(float32, float32)")
    assert "add(" in ptx


def test_validation_order_and_messages():
    with pytest.raises(NotImplementedError, match="^Unsupported output type: illegal$"):
        cuda.compile(add, "float32(float32, float32)", output="illegal", abi="fastcall")
    with pytest.raises(ValueError, match="Can only designate forced inlining in LTO-IR"):
        cuda.compile(add, "float32(float32, float32)", forceinline=True)
    with pytest.raises(NotImplementedError, match="^Unsupported ABI: fastcall$"):
        cuda.compile(add, "float32(float32, float32)", abi="fastcall", device=False)
    with pytest.raises(NotImplementedError, match="^The C ABI is not supported for kernels$"):
        cuda.compile(kernel, "void(float32[:], float32[:])", device=False)


def test_kernel_must_return_void():
    with pytest.raises(TypeError, match="must have void return type"):
        cuda.compile_ptx(add, "float32(float32, float32)")
    with pytest.raises(TypeError, match="must have void return type"):
        cuda.compile_ptx(add, "(float32, float32)")


def undefined_user(a):
    return a + not_defined_anywhere  # noqa: F821


def bad_types(a):
    return a.nope


def test_typing_error_shows_file_line_and_caret():
    with pytest.raises(cuda.TypingError) as info:
        cuda.compile(undefined_user, "float32(float32)")
    msg = str(info.value)
    line = undefined_user.__code__.co_firstlineno + 1
    assert f"test_compile.py:{line}:" in msg
    assert "return a + not_defined_anywhere" in msg and "^" in msg
    with pytest.raises(cuda.CompileError):
        cuda.compile(bad_types, "float32(float32)")


@cuda.jit(device=True)
def calls_undefined(x):
    return floor(x)  # noqa: F821


def kernel_calling_a_bad_device_function(out):
    out[0] = calls_undefined(1.5)


def test_error_in_a_called_device_function_names_the_call():
    """As numba's TypingError (its test_errors.test_typing_error): the callee's error, then
    the call that typed it."""
    with pytest.raises(cuda.TypingError) as info:
        cuda.compile_ptx(kernel_calling_a_bad_device_function, "void(float64[::1])")
    msg = str(info.value)
    assert "NameError: name 'floor' is not defined" in msg
    line = kernel_calling_a_bad_device_function.__code__.co_firstlineno + 1
    assert msg.endswith("\nDuring: resolving callee type: type(CUDADispatcher(<function "
                        f"calls_undefined>))\nDuring: typing of call at {__file__} ({line})")


def test_signature_errors():
    with pytest.raises(cuda.TypingError, match="signature"):
        cuda.compile(add, "float32(float32, notatype)")
    with pytest.raises(TypeError):
        cuda.compile(add, 42)


SCALE = 3
HALF = 0.5
FLAG = True


def uses_globals(x):
    if FLAG:
        return x * SCALE + HALF + math.pi
    return x


def test_resolver_constants_and_math():
    ptx, resty = cuda.compile(uses_globals, "float64(float64)")
    assert resty is cuda.float64
    ptx2, _ = cuda.compile(uses_globals, "float64(float64)")
    assert ptx == ptx2


def test_resolver_closure_and_numpy_scalars():
    np = pytest.importorskip("numpy")
    k = np.float32(2.0)
    n = np.int64(7)

    def inner(x):
        return x * k + n

    _, resty = cuda.compile(inner, "float32(float32)")
    assert resty is cuda.float32


def test_resolver_functions_jit_device_and_types():
    @cuda.jit(device=True)
    def twice(v):
        return v * 2

    def helper(v):
        return twice(v) + 1

    def caller(v):
        return float32(helper(v)) + int32(1)

    ptx, resty = cuda.compile(caller, "float32(float32)")
    assert resty is cuda.float32 and "caller(" in ptx


def test_resolver_helper_from_another_module():
    if "corpus_shared_memory" not in sys.modules:
        pytest.skip("corpus not present")
    mod = sys.modules["corpus_shared_memory"]  # apply_gelu calls a jit(device=True) gelu
    ptx, _ = cuda.compile_ptx(mod.apply_gelu, "void(float64[:], float64[:])")
    assert ".entry" in ptx


def test_resolver_python_error_is_raised():
    import ast
    exec_ns = {"cuda": cuda}
    # compiled from an AST: no source text for helper
    exec(compile(ast.parse("def helper(x):\n    return x\n"), "<ast>", "exec"), exec_ns)

    def f(x):
        return helper(x)  # noqa: F821

    f.__globals__["helper"] = exec_ns["helper"]
    try:
        with pytest.raises((OSError, TypeError, cuda.CompileError)):
            cuda.compile(f, "float32(float32)")
    finally:
        del f.__globals__["helper"]


def test_numba_type_objects_as_signature():
    numba = pytest.importorskip("numba")
    _, resty = cuda.compile(add, (numba.float32, numba.float32))
    assert str(resty) == "float32"
    _, resty = cuda.compile(add, numba.float64(numba.float64, numba.float64))
    assert resty is cuda.float64
    ptx, _ = cuda.compile_ptx(kernel, numba.void(numba.float32[:], numba.float32[::1]))
    assert ".entry" in ptx


def test_compile_releases_the_gil_and_is_thread_safe():
    import threading
    results, errors = [], []

    def work():
        try:
            results.append(cuda.compile(uses_globals, "float64(float64)")[0])
        except Exception as e:  # pragma: no cover
            errors.append(e)

    ts = [threading.Thread(target=work) for _ in range(4)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert errors == [] and len(set(results)) == 1


def test_compile_releases_the_gil_while_compiling():
    """A Python thread runs while nbc_compile works: the GIL is released (the resolver
    callback takes it back only for each lookup). With a switch interval far longer than the
    test, the interpreter never takes the GIL from a thread by itself, so the other thread
    runs during the compile only if the compile gives the GIL up; it hands the GIL back at
    each step (time.sleep(0)), so the compile is never kept waiting."""
    import sys
    import threading
    import time
    from corpus_shared_memory import fast_matmul  # noqa: F401 - loaded by load_corpus
    steps, stop, inside = [0], threading.Event(), threading.Event()

    def spin():
        while not stop.is_set():
            if inside.is_set():
                steps[0] += 1
            time.sleep(0)

    interval = sys.getswitchinterval()
    t = threading.Thread(target=spin)
    t.start()
    try:
        sys.setswitchinterval(1000.0)
        inside.set()
        before = steps[0]
        cuda.compile_ptx(fast_matmul, "void(float32[:, :], float32[:, :], float32[:, :])")
        during = steps[0] - before
    finally:
        inside.clear()
        sys.setswitchinterval(interval)
        stop.set()
        t.join()
    # Had nbc_compile kept the GIL, the other thread could not have run between the two reads.
    assert during > 0


# ---- the numba module in kernels: numba.float32 and friends, numba.types, numba.cuda ------

NUMBA_MODULE_KERNELS = '''
import numba
import numba as nb
import numba.types as nt


def k(out, a):
    sm = cuda.shared.array(4, dtype=numba.float32)
    i = numba.cuda.grid(1)
    sm[0] = a[0]
    x = numba.int32(a[0]) + nb.types.float32(2.5) + nt.int16(3)
    out[0] = sm[0] + x + numba.cuda.threadIdx.x + i


def typed(a):
    return numba.float32(a) + nb.boolean(a)


def bad(a):
    return numba.prange(3)


def cuda_types(a):
    return types.float32(a) + types.int16(1)
'''


def test_numba_module_in_kernels(tmp_path):
    pytest.importorskip("numba")
    m = load_kernel_module(tmp_path, "numba_module", NUMBA_MODULE_KERNELS, cuda)
    ptx = cuda.compile_ptx(m.k, "void(float64[:], float64[:])", cc=(9, 0))[0]
    check_ptx(ptx, tmp_path)
    assert str(cuda.compile(m.typed, "(float64,)")[1]) == "float32"
    with pytest.raises(cuda.CompileError, match="'numba.prange' is not supported in kernels"):
        cuda.compile(m.bad, "(float64,)")
    # numba-cuda's `from numba.cuda import types`, here nbcuda.types: the same type objects
    m.types = cuda.types
    assert cuda.types.float32 is cuda.float32 and cuda.types.from_dtype is cuda.from_dtype
    from nbcuda.types import int32  # numba-cuda's doc example: from numba.cuda.types import
    assert int32 is cuda.int32
    assert str(cuda.compile(m.cuda_types, "(float64,)")[1]) == "float32"


# ---- numpy in kernels: the module, its dtypes, constants and ufuncs (lib_numpy.c) ---------

def test_numpy_module_dtypes_constants_and_ufuncs(tmp_path):
    np = pytest.importorskip("numpy")
    from numpy import sqrt as np_sqrt, float32 as np_f32

    dt = np.dtype("float32")

    def k(out, x, n):
        sm = cuda.shared.array(128, dtype=np.float32)
        loc = cuda.local.array(4, dt)
        i = cuda.grid(1)
        if i < x.size:
            v = x[i]
            sm[cuda.threadIdx.x] = np.float32(v)
            loc[0] = np_f32(n)
            cuda.syncthreads()
            w = np.sqrt(v) + np_sqrt(n) + np.minimum(v, sm[0]) + np.abs(v) + np.pi
            if np.isnan(w) or np.isinf(w):
                w = np.inf
            out[i] = w + np.maximum(n, 3) + np.arctan2(v, loc[0]) + np.e

    ptx = cuda.compile_ptx(k, "void(float32[:], float32[:], int64)")[0]
    assert ".entry" in ptx and "sqrt.rn.f32" in ptx and "sqrt.rn.f64" in ptx
    check_ptx(ptx, tmp_path)


def test_numpy_ufunc_typing_follows_numba():
    np = pytest.importorskip("numpy")

    def sq(a):
        return np.sqrt(a)

    def mn(a, b):
        return np.minimum(a, b)

    def cast(a):
        return np.float32(a) + np.int16(1)

    def fl(a):
        return np.floor(a)

    assert str(cuda.compile(sq, "(float32,)")[1]) == "float32"
    assert str(cuda.compile(sq, "(int16,)")[1]) == "float32"   # int16 casts safely to float32
    assert str(cuda.compile(sq, "(int64,)")[1]) == "float64"
    assert str(cuda.compile(mn, "(int32, int64)")[1]) == "int64"
    assert str(cuda.compile(mn, "(int64, float32)")[1]) == "float32"  # numba's mixed rule
    assert str(cuda.compile(cast, "(int64,)")[1]) == "float32"
    assert str(cuda.compile(fl, "(int32,)")[1]) == "int32"


def test_numpy_unsupported_names_are_refused():
    np = pytest.importorskip("numpy")

    def uses_cumsum(a):
        return np.cumsum(a)

    def uses_float16(a):
        return np.sqrt(a)

    with pytest.raises(cuda.CompileError, match="'numpy.cumsum' is not supported in kernels"):
        cuda.compile(uses_cumsum, "(float32[:],)")
    with pytest.raises(cuda.CompileError, match="float16 arguments are not supported"):
        cuda.compile(uses_float16, "(float16,)")


def test_host_constructs_are_reported_when_compiled():
    def with_default(a, b=1):
        return a + b

    def with_statement(a):
        with open("x"):
            pass
        return a

    # defaults are fine (the signature gives every argument), as in numba
    assert str(cuda.compile(with_default, "(int64, int64)")[1]) == "int64"
    with pytest.raises(cuda.CompileError, match="unsupported statement: 'with'"):
        cuda.compile(with_statement, "(int64,)")


def test_launch_bounds_reach_the_ptx():
    """numba's launch_bounds: an int or a tuple of up to three ints (max threads per block,
    min blocks per SM, max blocks per cluster); the PTX has numba-cuda's directives."""
    sig = "void(float32[:], float32[:])"
    ptx, _ = cuda.compile_ptx(kernel, sig, cc=(9, 0))
    assert ".maxntid" not in ptx
    ptx, _ = cuda.compile_ptx(kernel, sig, cc=(9, 0), launch_bounds=256)
    assert ".maxntid 256, 1, 1" in ptx and ".minnctapersm" not in ptx
    ptx, _ = cuda.compile_ptx(kernel, sig, cc=(9, 0), launch_bounds=(128, 2, 4))
    assert ".maxntid 128, 1, 1" in ptx and ".minnctapersm 2" in ptx
    assert ".maxclusterrank 4" in ptx
    # with no cc, a cluster bound compiles for 9.0 (clusters' first), not the default 7.5 at
    # which libNVVM drops the directive; a jitted kernel too (numba-cuda's launch bounds test)
    ptx, _ = cuda.compile_ptx(kernel, sig, launch_bounds=(128, 2, 4))
    assert ".target sm_90" in ptx and ".maxclusterrank 4" in ptx
    ptx, _ = cuda.compile_ptx(kernel, sig, launch_bounds=(128, 2))
    assert ".target sm_75" in ptx
    k = cuda.jit(sig, launch_bounds=(128, 1, 2))(kernel)
    assert ".maxclusterrank 2" in only(k.inspect_asm())
    with pytest.raises(ValueError, match=r"^Got 4 launch bounds: \(1, 2, 3, 4\)\. A maximum"):
        cuda.compile_ptx(kernel, sig, launch_bounds=(1, 2, 3, 4))
    with pytest.raises(TypeError, match="launch bound 0 must be an int"):
        cuda.compile_ptx(kernel, sig, launch_bounds=("x",))


def test_forceinline_in_ltoir():
    code, resty = cuda.compile(add, "float32(float32, float32)", output="ltoir",
                               forceinline=True)
    assert isinstance(code, bytes) and len(code) > 0 and str(resty) == "float32"
    with pytest.raises(ValueError, match="^Cannot force-inline kernels$"):
        cuda.compile(kernel, "void(float32[:], float32[:])", device=False, abi="numba",
                     output="ltoir", forceinline=True)


def test_jit_launch_bounds():
    """cuda.jit(sig, launch_bounds=...) compiles the kernel with them; a malformed value
    fails when jit is called, as in numba."""
    k = cuda.jit("void(float32[:], float32[:])", launch_bounds=(64, 3))(kernel)
    (ptx,) = k.inspect_asm().values()
    assert ".maxntid 64, 1, 1" in ptx and ".minnctapersm 3" in ptx
    with pytest.raises(ValueError, match="Got 4 launch bounds"):
        cuda.jit("void(float32[:], float32[:])", launch_bounds=(1, 2, 3, 4))
    dec = cuda.jit(device=True, forceinline=True)
    assert dec(add) is not None


@cuda.jit(device=True)
def twice(x):
    return x * 2


@cuda.jit(device=True, forceinline=True)
def twice_inlined(x):
    return x * 2


def calls_twice(r, x):
    r[0] = twice(x[0])


def calls_twice_inlined(r, x):
    r[0] = twice_inlined(x[0])


def test_jit_forceinline_device_function():
    """jit(device=True, forceinline=True): the callee is alwaysinline, so even without
    optimisation (opt=False, where libNVVM inlines nothing by itself) no call remains."""
    sig = "void(float32[:], float32[:])"
    plain = cuda.jit(sig, opt=False)(calls_twice).inspect_asm(sig)
    inlined = cuda.jit(sig, opt=False)(calls_twice_inlined).inspect_asm(sig)
    assert "call.uni" in plain
    assert "call.uni" not in inlined and ".func" not in inlined
    assert twice_inlined.targetoptions["forceinline"] is True
    assert twice.targetoptions["forceinline"] is False


@cuda.jit(device=True, inline="always")
def twice_inline_always(x):
    return x * 2


def calls_twice_inline_always(r, x):
    r[0] = twice_inline_always(x[0])


def test_jit_inline_always_is_forceinline():
    """numba's jit(device=True, inline="always") (and the older inline=True) leave no call,
    as forceinline does; "never" and a cost-model callable are accepted and force nothing;
    anything else is a ValueError."""
    sig = "void(float32[:], float32[:])"
    asm = cuda.jit(sig, opt=False)(calls_twice_inline_always).inspect_asm(sig)
    assert "call.uni" not in asm
    assert twice_inline_always.targetoptions["forceinline"] is True
    assert cuda.jit(device=True, inline=True)(add).targetoptions["forceinline"] is True
    assert cuda.jit(device=True, inline="never")(add).targetoptions["forceinline"] is False
    assert cuda.jit(device=True, inline=lambda *a: True)(add).targetoptions["forceinline"] is False
    with pytest.raises(ValueError, match="inline must be"):
        cuda.jit(device=True, inline="sometimes")


@cuda.jit(forceinline=True)
def twice_kernel_object(x):
    return x * 2


def calls_twice_kernel_object(r, x):
    r[0] = twice_kernel_object(x[0])


def test_forceinline_of_a_jit_without_device_called_from_a_kernel():
    """cuda.jit(forceinline=True) without device=True makes a dispatcher that, called from
    another kernel, is a device function (numba-cuda's test_inline does this): its
    targetoptions say forceinline, its definition is alwaysinline, and no call remains."""
    sig = "void(float32[:], float32[:])"
    k = cuda.jit(sig, opt=False)(calls_twice_kernel_object)
    assert twice_kernel_object.targetoptions["forceinline"] is True
    assert cuda.jit(add).targetoptions["forceinline"] is False
    ir = k.inspect_llvm(sig)
    callee = [ln for ln in ir.splitlines() if ln.startswith("define") and "twice_kernel" in ln]
    kernel = [ln for ln in ir.splitlines() if ln.startswith("define") and "calls_twice" in ln]
    assert "alwaysinline" in callee[0] and "alwaysinline" not in kernel[0]
    assert "call.uni" not in k.inspect_asm(sig)


def test_numba_inline_always_helpers_are_inlined(tmp_path, monkeypatch):
    """A helper made by numba's own jit(device=True, inline="always"), called from a kernel
    nbcuda compiles: numba's targetoptions say inline "always", so no call remains."""
    pytest.importorskip("numba.cuda")
    (tmp_path / "numba_helpers.py").write_text(
        "from numba import cuda as ncuda\n\n"
        "@ncuda.jit(device=True, inline='always')\n"
        "def always(x):\n    return x * 2\n\n"
        "@ncuda.jit(device=True)\n"
        "def plain(x):\n    return x * 2\n\n"
        "def k_always(r, x):\n    r[0] = always(x[0])\n\n"
        "def k_plain(r, x):\n    r[0] = plain(x[0])\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_helpers
    sig = "void(float32[:], float32[:])"
    assert "call.uni" not in cuda.jit(sig, opt=False)(numba_helpers.k_always).inspect_asm(sig)
    assert "call.uni" in cuda.jit(sig, opt=False)(numba_helpers.k_plain).inspect_asm(sig)


def test_arch_specific_cc():
    """numba's cc=(major, minor, "a"|"f"): compute_XYa / compute_XYf, only for a cc libNVVM
    supports as such."""
    ptx, _ = cuda.compile_ptx(kernel, "void(float32[:], float32[:])", cc=(9, 0, "a"))
    assert ".target sm_90a" in ptx
    ptx, _ = cuda.compile(add, "float32(float32, float32)", cc=(10, 0, "f"))
    assert ".target sm_100f" in ptx
    with pytest.raises(cuda.CCSupportError, match="Can't use arch-specific compute_92a"):
        cuda.compile(add, "float32(float32, float32)", cc=(9, 2, "a"))
    with pytest.raises(ValueError, match="must be 'a'"):
        cuda.compile(add, "float32(float32, float32)", cc=(9, 0, "z"))

