"""Signatures are bounded before anything is built from them.

Types nest at most 32 deep whatever the construct (tuples, named tuples, records, arrays,
pointers, enums), a signature's types expand to at most 32,768 parts, and a kernel's flattened
parameters fit the driver's limit (32,764 bytes from compute capability 7.0): each refused with
a message naming the limit. A kernel typed from its launch's arguments names the parameter
the offending value was passed for instead of a column of a signature the user never wrote.
The deep and large inputs run in a child interpreter (a crash there fails the test without
ending pytest), its address space bounded by an rlimit unless ASan (which reserves terabytes
of shadow memory) is loaded.
"""
import os

import pytest

FORMS = [("CPointer(", "int32", ")"), ("NamedTuple(P, x: ", "int32", ")"),
         ("Record(a[type=", "int32", ";offset=0];8;False)"), ("array(", "int32", ", 1d, C)"),
         ("UniTuple(", "int32", ", 2)"), ("Tuple(", "int32", ")"), ("Enum<", "int64", ">(m.E)")]

LIMIT_AS = """
import os, resource
if "asan" not in os.environ.get("LD_PRELOAD", ""):
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
"""


@pytest.mark.parametrize("form", FORMS, ids=[f[0] for f in FORMS])
def test_deep_signature_is_refused(run_py, form):
    """100,000 levels of any construct: an error at the 33rd, through cuda.compile."""
    opening, inner, closing = form
    p = run_py(LIMIT_AS + f"""
import nbcuda as cuda
ns = dict()
exec(chr(10).join(["def f(x):", "    pass", ""]), ns)
f = ns["f"]
sig = "void(" + {opening!r} * 100000 + {inner!r} + {closing!r} * 100000 + ")"
try:
    cuda.compile(f, sig)
except Exception as e:
    print(type(e).__name__, str(e).splitlines()[0])
""")
    col = 5 + 33 * len(opening) + 1
    assert p.stdout.strip() == (f"TypingError <signature>:1:{col}: error: invalid signature: "
                                f"types nested more than 32 deep at column {col}")


@pytest.mark.parametrize("device", [True, False], ids=["device", "kernel"])
def test_81_byte_signature_is_refused_before_code_generation(run_py, device):
    """64-item tuples nested 4 deep describe 16 million int32: refused by the limit on parts
    (device function) or on a kernel's parameters, within the rlimit."""
    p = run_py(LIMIT_AS + f"""
import nbcuda as cuda
ns = dict()
exec(chr(10).join(["def f(x):", "    pass", ""]), ns)
f = ns["f"]
sig = "void(UniTuple(UniTuple(UniTuple(UniTuple(int32, 64), 64), 64), 64))"
try:
    cuda.compile(f, sig, device={device}, abi={"'c'" if device else "'numba'"})
except Exception as e:
    print(type(e).__name__, str(e).splitlines()[0])
""")
    if device:
        want = ("argument 1 expands to 17043521 parts (scalars, arrays and tuples, each tuple "
                "item counted), more than the 32768 a signature's types may hold in all")
    else:
        want = ("the kernel's parameters take at least 67108864 bytes, more than the 32764 "
                "bytes a kernel's parameters may take on compute capability 7.5 (argument 1 "
                "crosses the limit)")
    assert p.stdout.strip() == f"TypingError <signature>:1:6: error: invalid signature: {want} at column 6"


def _deep(depth):
    t = ()
    for _ in range(depth):
        t = (t,)
    return t


@pytest.mark.parametrize("value,why", [
    ((1,) * 65, "a tuple of more than 64 items (tuples hold at most 64)"),
    (_deep(33), "types nested more than 32 deep"),
    ((tuple(range(64)),) * 64,
     "the kernel's parameters take 32776 bytes, more than the 32764 bytes a kernel's parameters "
     "may take on compute capability 7.5 (argument 2 crosses the limit)"),
], ids=["65 items", "33 deep", "32 KiB"])
def test_launch_argument_errors_name_the_parameter(cuda, tdrv, value, why):
    """A lazily compiled kernel types its arguments into a signature: its errors name the
    parameter, not a column of that text."""
    @cuda.jit
    def k(a, tup):
        pass

    with pytest.raises(Exception) as e:
        k[1, 1](0, value)
    assert type(e.value).__name__ == "TypingError"
    assert str(e.value) == f"the value passed for 'tup' (argument 2) cannot be typed: {why}"


def test_abi_name_must_be_a_c_name(cuda, tmp_path):
    """abi_info's abi_name is written into the IR as it is: a quote and newlines would add
    functions to the PTX. The C compiler refuses any name but a C ABI one."""
    (tmp_path / "abi_mod.py").write_text("def add(a, b):\n    return a + b\n")
    import importlib.util
    spec = importlib.util.spec_from_file_location("abi_mod", tmp_path / "abi_mod.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    evil = 'x"() {\n  ret float 0.0\n}\ndefine void @evil'
    with pytest.raises(ValueError) as e:
        cuda.compile(mod.add, "float32(float32, float32)", abi_info={"abi_name": evil})
    assert str(e.value) == ("invalid abi_name 'x\"() {\\x0a  ret float 0.0\\x0a}\\x0adefine void "
                            "@evil': a C ABI name is a letter or '_' followed by letters, "
                            "digits, '_' or '$'")
    with pytest.raises(ValueError, match=r"^abi_info\['abi_name'\] must not hold a NUL"):
        cuda.compile(mod.add, "float32(float32, float32)", abi_info={"abi_name": "f\0g"})
    ptx, _ = cuda.compile(mod.add, "float32(float32, float32)", abi_info={"abi_name": "my$add"})
    assert ") my$add(" in ptx
