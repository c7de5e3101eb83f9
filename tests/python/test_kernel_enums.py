"""enum.Enum and IntEnum in kernels, as numba-cuda's test_enums.py uses them: a class a
kernel names gives its members as constants (`Color.red`, `Color["red"]`, `.value`), members
are kernel and device-function arguments (numba's EnumMember, "Enum<int64>(module.Color)"),
members of one class compare by value (==, !=, is, is not) and of two classes are not equal
(as in Python; numba-cuda refuses that comparison, so it is checked against Python only);
an IntEnum member (numba's IntEnumMember, "IntEnum<int64>(module.Shape)") is its int wherever
a number is needed (arithmetic, comparisons with ints, int16(...)) and keeps its class for
`is` (two classes: never the same object, as in Python and numba-cuda), `.value`, and as a
variable's or device function parameter's type. CI: the kernels compile, ptxas accepts them,
they launch on the test driver, misuse gets clear errors; the GPU compares with Python and
numba-cuda."""
import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import check_ptx

SOURCE = '''
from enum import Enum, IntEnum


class Color(Enum):
    red = 1
    green = 2
    blue = 3


class Shake(Enum):
    vanilla = 7
    chocolate = 4
    cookies = 9
    mint = 3          # Color.blue's value, another class


class Planet(Enum):
    EARTH = 5.976
    MARS = 0.642
    HOME = 5.976      # an alias of EARTH


class Body(Enum):      # Python's documentation example: tuple values (mass, radius)
    MERCURY = (3.303e+23, 2.4397e6)
    VENUS = (4.869e+24, 6.0518e6)
    EARTH = (5.976e+24, 6.37814e6)


class Shape(IntEnum):
    circle = 2
    square = 500


class RequestError(IntEnum):
    dummy = 2
    not_found = 404
    internal_error = 500


RED = Color.red       # a member bound to a global name


@cuda.jit(device=True)
def is_red(c):
    return c == Color.red


def compare(a, b, out):
    out[0] = a == b
    out[1] = a != b
    out[2] = a is b
    out[3] = a is not b


def getattr_getitem(out):
    out[0] = Color.red == Color.green
    out[1] = Color["red"] == Color["green"]
    out[2] = Color.blue.value + Shake["mint"].value
    out[3] = Planet.HOME is Planet.EARTH
    out[4] = RED == Color.red
    out[5] = is_red(Color.red) and not is_red(Color.blue)
    out[6] = Color.green.value
    out[7] = Planet.MARS.value


def gravity(body, out):
    G = 6.673e-11
    mass, radius = body.value
    out[0] = G * mass / (radius * radius)
    out[1] = Body.EARTH.value[0] / mass
    home = Body.EARTH
    out[2] = body == home
    out[3] = body is Body.VENUS


def cross_class(out):                      # Python: members of two classes are not equal
    out[0] = Color.blue == Shake.mint      # (numba-cuda refuses to compare them)
    out[1] = Color.red != Planet.MARS


def int_coerce(x, out):
    if x > RequestError.internal_error:
        out[0] = x - RequestError.not_found
    else:
        out[0] = x + Shape.circle


def int_cast(x, out):
    if x > cuda.int16(RequestError.internal_error):
        out[0] = x - cuda.int32(RequestError.not_found)
    else:
        out[0] = x + cuda.int16(Shape.circle)


@cuda.jit(device=True)
def is_circle(s):
    return s is Shape.circle


def int_enum_arg(a, out):
    out[0] = a.value + 1
    out[1] = a is Shape.circle
    out[2] = a is RequestError.dummy       # another IntEnum class: never the same object
    x = a
    out[3] = x is Shape.circle
    out[4] = a * 2 + Shape.square
    out[5] = is_circle(a)
    out[6] = a == RequestError.dummy       # == compares the ints


def is_circle_arg(a, out):
    out[0] = a is Shape.circle


def vectorized(x):
    if x != RequestError.not_found:
        return RequestError["internal_error"]
    else:
        return RequestError.dummy
'''


@pytest.fixture
def m(tmp_path):
    return load_kernel_module(tmp_path, "enums", SOURCE, cuda)


def pairs(m):
    return [(m.Color.red, m.Color.red), (m.Color.red, m.Color.green),
            (m.Planet.EARTH, m.Planet.EARTH), (m.Planet.MARS, m.Planet.HOME),
            (m.Color.blue, m.Shake.mint), (m.Shape.circle, m.Shape.circle),
            (m.Shape.circle, m.RequestError.dummy), (m.Body.EARTH, m.Body.EARTH),
            (m.Body.EARTH, m.Body.MERCURY)]


@pytest.mark.parametrize("name, sig", [("getattr_getitem", "void(float64[::1])"),
                                       ("cross_class", "void(boolean[::1])"),
                                       ("gravity", "void(Enum<UniTuple(float64 x 2)>"
                                                   "(enums.Body), float64[::1])"),
                                       ("int_coerce", "void(int64, int32[::1])"),
                                       ("int_cast", "void(int64, int32[::1])"),
                                       ("int_enum_arg", "void(IntEnum<int64>(enums.Shape), "
                                                        "int64[::1])")])
def test_compiles_and_ptxas_accepts(m, name, sig, tmp_path):
    ptx, _ = cuda.compile_ptx(getattr(m, name), sig, cc=(9, 0))
    check_ptx(ptx, tmp_path)


def test_numba_enum_member_types_in_signatures(m, tmp_path):
    """numba's EnumMember / IntEnumMember type objects in a signature name their class by its
    qualified name, as the members' own types do (numba's str() gives "IntEnum<int64>(Shape)"):
    `a is Shape.circle` then compares the values (a setp), not two classes (a constant)."""
    class IntEnumMember:  # stands in for numba.core.types.IntEnumMember (no numba on CI)
        def __init__(self, cls, dtype):
            self.instance_class, self.dtype = cls, dtype

    class EnumMember(IntEnumMember):
        pass

    for c in (IntEnumMember, EnumMember):
        c.__module__ = "numba.core.types.misc"
    ptx, _ = cuda.compile_ptx(m.is_circle_arg, (IntEnumMember(m.Shape, cuda.int64),
                                                cuda.boolean[::1]), cc=(9, 0))
    check_ptx(ptx, tmp_path)
    assert "setp.eq.s64" in ptx
    ptx, _ = cuda.compile_ptx(m.compare, (EnumMember(m.Color, cuda.int64),) * 2 +
                              (cuda.boolean[::1],), cc=(9, 0))
    check_ptx(ptx, tmp_path)


def test_members_are_kernel_arguments(m):
    k = cuda.jit(m.compare)
    for a, b in pairs(m):
        k[1, 1](a, b, np.zeros(4, bool))  # the test driver runs no code
    types = {t for key in k.overloads for t in map(str, key)}
    assert {t.split(">(")[0] + ">(" + t.split(".")[-1] for t in types if "Enum" in t} == {
        "Enum<int64>(Color)", "Enum<float64>(Planet)", "Enum<int64>(Shake)",
        "Enum<UniTuple(float64 x 2)>(Body)", "IntEnum<int64>(Shape)",
        "IntEnum<int64>(RequestError)"}  # numba's IntEnumMember: an int that keeps its class
    with pytest.raises(TypeError, match="members of enums whose values are all ints, all "
                                        "floats or all tuples of one type of numbers"):
        import enum
        k[1, 1](enum.Enum("Odd", {"a": "x"}).a, 1, np.zeros(4, bool))


MISUSE = '''
from enum import Enum


class Mixed(Enum):
    a = 1
    b = 2.5


class Color(Enum):
    red = 1
    green = 2


class Ragged(Enum):
    a = (1.0, 2.0)
    b = (1.0, 2.0, 3.0)


def ragged(out):
    out[0] = Ragged.a.value[0]


def mixed(out):
    out[0] = Mixed.a.value


def ordered(out):
    out[0] = Color.red < Color.green


def unknown(out):
    out[0] = Color.purple == Color.red


def by_number(out):
    out[0] = Color[1] == Color.red


def arithmetic(out):
    out[0] = Color.red + 1
'''


@pytest.mark.parametrize("name, message", [
    ("mixed", "kernels use enums whose members are all ints, all floats or all tuples"),
    ("ragged", "kernels use enums whose members are all ints, all floats or all tuples"),
    ("ordered", r"Invalid use of < with parameters \(Enum<int64>\(.*Color\)"),
    ("unknown", "Unknown attribute 'purple' of enum class"),
    ("by_number", "an enum class is indexed by a member's name"),
    ("arithmetic", r"Enum<int64>"),
])
def test_misuse_is_a_clear_error(tmp_path, name, message):
    mm = load_kernel_module(tmp_path, "enum_misuse", MISUSE, cuda)
    with pytest.raises(cuda.CompileError, match=message):
        cuda.compile_ptx(getattr(mm, name), "void(float64[::1])", cc=(9, 0))


CROSS_CLASS = 4  # the pair of two Enum classes: numba-cuda refuses ==


def run_all(lib, m):
    out = {}
    k = lib.jit(m.compare)
    for i, (a, b) in enumerate(pairs(m)):
        if lib is not cuda and i == CROSS_CLASS:
            continue
        got = np.zeros(4, bool)
        k[1, 1](a, b, got)
        out[f"compare{i}"] = got
    got = np.zeros(8)
    lib.jit(m.getattr_getitem)[1, 1](got)
    out["getattr_getitem"] = got
    if lib is cuda:
        got = np.zeros(2, bool)
        lib.jit(m.cross_class)[1, 1](got)
        out["cross_class"] = got
    k = lib.jit(m.gravity)
    for body in (m.Body.MERCURY, m.Body.EARTH):
        got = np.zeros(4)
        k[1, 1](body, got)
        out[f"gravity_{body.name}"] = got
    for name in ("int_coerce", "int_cast"):
        k = lib.jit(m.__dict__[name])
        for x in (300, 450, 550):
            got = np.zeros(1, np.int32)
            k[1, 1](x, got)
            out[f"{name}{x}"] = got
    k = lib.jit(m.int_enum_arg)
    for a in (m.Shape.circle, m.Shape.square):
        got = np.zeros(7, np.int64)
        k[1, 1](a, got)
        out[f"int_enum_arg_{a.name}"] = got
    arr = np.array([2, 404, 500, 404], dtype=np.int64)
    out["vectorized"] = lib.vectorize("int64(int64)", target="cuda")(m.vectorized)(arr)
    return out


@pytest.mark.gpu
def test_enums_match_python_and_numba_cuda(gpu, tmp_path, m):
    mine = run_all(cuda, m)
    for i, (a, b) in enumerate(pairs(m)):
        want = [a == b, a != b, a is b, a is not b]
        np.testing.assert_array_equal(mine[f"compare{i}"], want, err_msg=str((a, b)))
    np.testing.assert_array_equal(mine["getattr_getitem"],
                                  [False, False, 6, True, True, True, 2, 0.642])
    np.testing.assert_array_equal(mine["cross_class"], [False, True])
    for a in (m.Shape.circle, m.Shape.square):
        want = [a.value + 1, a is m.Shape.circle, False, a is m.Shape.circle,
                a * 2 + 500, a is m.Shape.circle, a == 2]
        np.testing.assert_array_equal(mine[f"int_enum_arg_{a.name}"], want, err_msg=a.name)
    for x in (300, 450, 550):
        want = x - 404 if x > 500 else x + 2
        assert mine[f"int_coerce{x}"][0] == want and mine[f"int_cast{x}"][0] == want
    np.testing.assert_array_equal(mine["vectorized"], [m.vectorized(x) for x in
                                                       (2, 404, 500, 404)])
    for body in (m.Body.MERCURY, m.Body.EARTH):
        want = np.zeros(4)
        m.gravity(body, want)  # Python runs the kernel's body as a function
        np.testing.assert_allclose(mine[f"gravity_{body.name}"], want, rtol=1e-15)
    ncuda = pytest.importorskip("numba.cuda")
    theirs = run_all(ncuda, load_kernel_module(tmp_path, "enums_numba", SOURCE, ncuda))
    for key in set(mine) - {f"compare{CROSS_CLASS}", "cross_class"}:
        np.testing.assert_array_equal(mine[key], theirs[key], err_msg=key)
