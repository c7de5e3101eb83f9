"""jit([sig, ...]): several signatures compiled at once, the launch choosing the one the
arguments match best, as numba's dispatcher does (exact types first, then widening, then
integer to float, then narrowing), and numba's TypeError when none matches. On the test driver
the launched function's mangled name says which overload ran; on a GPU the results do."""
import numpy as np
import pytest

import nbcuda as cuda
from conftest import key_texts, sig_texts


def scale(a, f):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = a[i] * f


def put(a, v):
    a[0] = v


SIGS = ["void(float32[:], float32)", "void(float64[:], float64)"]


def test_signatures_are_compiled_up_front():
    k = cuda.jit(SIGS)(scale)
    assert sig_texts(k) == SIGS
    asm = k.inspect_asm()
    assert key_texts(asm) == SIGS and all(".entry" in p for p in asm.values())


def test_empty_signature_list_is_refused():
    with pytest.raises(ValueError, match="empty list of signatures"):
        cuda.jit([])


def test_a_bad_signature_fails_at_decoration():
    with pytest.raises(cuda.TypingError):
        cuda.jit(["void(float32[:], float32)", "void(int32[:, :], float32)"])(scale)


def test_dispatch_by_array_dtype(tdrv):
    k = cuda.jit(SIGS)(scale)
    d32 = cuda.device_array(8, np.float32)
    d64 = cuda.device_array(8, np.float64)
    k[1, 32](d32, 2.0)
    assert b"ArrayIfLi1E" in tdrv.last_launch().function  # float32 overload
    k[1, 32](d64, 2.0)
    assert b"ArrayIdLi1E" in tdrv.last_launch().function  # float64 overload
    k[1, 32](d32, 2.0)  # the choice for these argument types is remembered, per types
    assert b"ArrayIfLi1E" in tdrv.last_launch().function
    with pytest.raises(TypeError,
                       match=r"^No matching definition for argument type\(s\) int32\[::1\], float64$"):
        k[1, 32](cuda.device_array(8, np.int32), 2.0)
    with pytest.raises(TypeError, match="No matching definition"):
        k[1, 32](d32)


def test_scalar_preference_follows_numba(tdrv):
    """A Python int (int64) prefers float64 (a safe conversion) to int32 (narrowing); a numpy
    int32 matches int32 exactly."""
    k = cuda.jit(["void(int32[:], int32)", "void(int32[:], float64)"])(put)
    d = cuda.device_array(4, np.int32)
    k[1, 1](d, 5)
    assert tdrv.last_launch().function.endswith(b"Ed")  # (.., float64)
    k[1, 1](d, np.int32(5))
    assert tdrv.last_launch().function.endswith(b"Ei")  # (.., int32)


@pytest.mark.gpu
def test_overloads_compute_on_the_gpu(gpu):
    k = cuda.jit(SIGS)(scale)
    for dt in (np.float32, np.float64):
        h = np.arange(100, dtype=dt)
        d = cuda.to_device(h)
        k[1, 128](d, 3.0)
        np.testing.assert_array_equal(d.copy_to_host(), h * 3)


def test_lazy_jit_types_numpy_scalars_by_dtype(tdrv):
    """numpy scalars are typed by their dtype (they also export a buffer, which must not make
    them look like arrays)."""
    k = cuda.jit(put)
    d = cuda.device_array(4, np.float64)
    k[1, 1](d, np.int32(5))
    assert tdrv.last_launch().function.endswith(b"Ei")
    k[1, 1](d, np.float32(5))
    assert tdrv.last_launch().function.endswith(b"Ef")
    assert sorted(sig_texts(k)) == ["void(float64[::1], float32)", "void(float64[::1], int32)"]


def test_compile_method_adds_or_finds_an_overload(tdrv):
    lazy = cuda.jit(scale)
    spec = lazy.compile("void(float32[::1], float32)")
    assert lazy.compile("(float32[::1], float32)") is spec  # the same, canonically
    assert sig_texts(lazy) == ["void(float32[::1], float32)"]
    a = cuda.to_device(np.ones(8, np.float32))
    lazy[1, 32](a, np.float32(2))  # the launch takes the compiled one
    assert sig_texts(lazy) == ["void(float32[::1], float32)"]
    eager = cuda.jit("void(float32[:], float32)")(scale)
    assert eager.compile("void(float32[:], float32)") is eager
    with pytest.raises(RuntimeError, match="Compilation disabled"):
        eager.compile("void(float64[:], float64)")
    several = cuda.jit(SIGS)(scale)
    assert sig_texts(several.compile("(float64[:], float64)")) == [SIGS[1]]
    with pytest.raises(TypeError, match="a kernel returns nothing"):
        lazy.compile("float32(float32[:], float32)")


def test_configure_is_subscription(tdrv):
    k = cuda.jit(SIGS)(scale)
    a = cuda.to_device(np.ones(8, np.float32))
    assert k.configure(1, 32) is k[1, 32]
    s = cuda.stream()
    k.configure(2, 64, s, 16)(a, np.float32(3))
    s.synchronize()
    info = tdrv.last_launch()
    assert (info.grid[0], info.block[0], info.shared_bytes) == (2, 64, 16)
    assert info.stream == int(s)


def test_inspect_asm_of_one_signature():
    several = cuda.jit(SIGS)(scale)
    one = several.inspect_asm("void(float64[:], float64)")
    by_types = several.inspect_asm()
    assert isinstance(one, str) and ".entry" in one
    assert one == by_types[(cuda.float64[:], cuda.float64)]
    assert several.inspect_asm(signature="(float32[:], float32)") == list(by_types.values())[0]
    with pytest.raises(KeyError):
        several.inspect_asm("void(int32[:], int32)")
    lazy = cuda.jit(scale)
    lazy.compile("void(float32[::1], float32)")
    assert ".entry" in lazy.inspect_asm("void(float32[::1], float32)")


def bump(a):
    a[0] = a[0] + 1
    a[1] = a[1] >> 1  # a logical shift for uint32, arithmetic for int32


def test_one_signature_takes_integers_of_either_signedness():
    """numba passes an array's memory to a kernel of one signature whatever its dtype; nbcuda
    takes integer data of the signature's width either way (int32 data for uint32[:], read as
    uint32) and refuses other widths and kinds, whose elements the kernel would misread."""
    k = cuda.jit("void(uint32[:])")(bump)
    k[1, 1](cuda.to_device(np.array([-1, -8], np.int32)))
    k[1, 1](np.array([-1, -8], np.int32))
    with pytest.raises(TypeError, match=r"argument 1: expected array\(uint32, 1d, A\), got an "
                                        r"array of i64 elements"):
        k[1, 1](cuda.device_array(2, np.int64))
    with pytest.raises(TypeError, match="got an array of f32 elements"):
        k[1, 1](cuda.device_array(2, np.float32))
    with pytest.raises(TypeError, match="No matching definition"):  # several: by type, as numba
        cuda.jit(["void(uint32[:])", "void(int64[:])"])(bump)[1, 1](
            cuda.device_array(2, np.int32))


@pytest.mark.gpu
def test_integers_of_either_signedness_on_the_gpu(gpu):
    h = np.array([-1, -8], np.int32)
    d = cuda.to_device(h)
    cuda.jit("void(uint32[:])")(bump)[1, 1](d)
    # 0xFFFFFFFF + 1 wraps to 0; 0xFFFFFFF8 >> 1 = 0x7FFFFFFC (logical, as uint32)
    np.testing.assert_array_equal(d.copy_to_host(), np.array([0, 0x7FFFFFFC], np.int32))
    d = cuda.to_device(np.array([0xFFFFFFF8, 0xFFFFFFF8], np.uint32))
    cuda.jit("void(int32[:])")(bump)[1, 1](d)  # read as int32: -8 + 1, -8 >> 1 (arithmetic)
    np.testing.assert_array_equal(d.copy_to_host(),
                                  np.array([-7, -4], np.int32).view(np.uint32))


def _add(r, x, y):
    r[0] = x + y


def test_ambiguous_overloads_and_complex_arguments_are_refused():
    # numba's dispatcher: two overloads rated equally for the arguments are a TypeError naming
    # both; a complex argument converts to no real parameter (also with one signature)
    f = cuda.jit(["(float64[::1], float32, float64)", "(float64[::1], float64, float32)",
                  "(float64[::1], int64, int64)"])(_add)
    r = cuda.device_array(1, np.float64)
    with pytest.raises(TypeError) as e:
        f[1, 1](r, 1.0, 2.0)
    msg = str(e.value)
    assert msg.startswith("Ambiguous overloading for <function _add")
    assert ("(Array(float64, 1, 'C', False, aligned=True), float64, float64):\n"
            "(Array(float64, 1, 'C', False, aligned=True), float32, float64) -> none\n"
            "(Array(float64, 1, 'C', False, aligned=True), float64, float32) -> none") in msg
    assert "int64" not in msg
    f[1, 1](r, np.float32(1.0), 2.0)  # exact for the first: no ambiguity
    one = cuda.jit("(int32[::1], int32, int32)")(_add)
    ri = cuda.device_array(1, np.int32)
    one[1, 1](ri, 12.3, 4)  # float to int: unsafe, allowed as numba allows it
    for bad in (45.6j, np.complex64(1)):
        with pytest.raises(TypeError, match=r"argument 3: expected int32, got .* \(numba "
                                             "converts no complex value to a real type"):
            one[1, 1](ri, 1, bad)
    with pytest.raises(TypeError, match="No matching definition"):
        f[1, 1](r, 1j, 2.0)


def two(a, v):
    pass


class _Foreign:
    def __init__(self, d):
        self.__cuda_array_interface__ = dict(d.__cuda_array_interface__)


def test_the_last_dispatch_answer_is_only_reused_for_the_same_types(tdrv):
    """A launch reuses the kernel the previous one chose when its arguments have the same
    types (the dispatch remembers its last answer); any other types choose again. Launched in
    turns, every kind of argument gets the kernel a fresh dispatcher compiles for it."""
    d32 = cuda.device_array(16, np.float32)
    combos = [
        (d32, 1), (d32, 1.5), (d32, True), (d32, 1 + 2j), (d32, np.float32(1.5)),
        (d32, np.int32(3)), (d32, np.bool_(True)), (d32, np.complex64(1j)), (d32, np.uint8(3)),
        (d32, np.float64(2.5)), (d32, np.int64(-4)),
        (cuda.device_array(16, np.float64), 1), (cuda.device_array(16, np.int8), 1),
        (cuda.device_array((4, 4), np.float32), 1),
        (cuda.device_array((4, 4), np.float32, order="F"), 1),
        (d32[::2], 1), (cuda.device_array((), np.float32), 1),
        (_Foreign(cuda.device_array(16, np.float64)[::2]), 1),
        (_Foreign(cuda.device_array((4, 4), np.int32, order="F")), 2.5),
    ]

    expected = []  # the signature a fresh dispatcher compiles for each
    for a, v in combos:
        fresh = cuda.jit(two)
        fresh[1, 1](a, v)
        expected.append(sig_texts(fresh)[0])
    # (numpy.float64, numpy.int64 and numpy.bool_ are typed as float, int and bool are)
    assert len(set(expected)) == len(combos) - 3
    k = cuda.jit(two)
    launched = []
    for _ in range(2):
        for a, v in combos:
            k[1, 1](a, v)
            launched.append(tdrv.last_launch().function)
            k[1, 1](a, v)  # the same again: the remembered answer
            launched.append(tdrv.last_launch().function)
    assert sorted(sig_texts(k)) == sorted(set(expected))
    entry = {}  # each of k's overloads: its signature -> the function it launches
    for text, ptx in zip(key_texts(k.inspect_asm()), k.inspect_asm().values()):
        entry[text] = ptx.split(".entry ", 1)[1].split("(", 1)[0].strip().encode()
    assert launched == [entry[sig] for sig in expected for _ in range(2)] * 2
    several = cuda.jit(SIGS)(scale)
    d64 = cuda.device_array(8, np.float64)
    for a, name in ((d32, b"ArrayIfLi1E"), (d64, b"ArrayIdLi1E"), (_Foreign(d32), b"ArrayIfLi1E")):
        several[1, 32](a, 2.0)
        assert name in tdrv.last_launch().function


def test_disable_compile_and_typeof_pyval(tdrv):
    # numba's disable_compile(): a lazy kernel stops compiling new signatures and chooses among
    # those it has, as jit([sigs]) does; disable_compile(False) compiles again
    k = cuda.jit(put)
    d32 = cuda.device_array(2, np.float32)
    assert k._can_compile
    k[1, 1](d32, 1.5)
    assert sig_texts(k) == ["void(float32[::1], float64)"]
    k.disable_compile()
    assert not k._can_compile
    k[1, 1](d32, 2)  # an int converts to the float64 overload's parameter
    assert sig_texts(k) == ["void(float32[::1], float64)"]
    with pytest.raises(TypeError, match="No matching definition"):
        k[1, 1](cuda.device_array(2, np.int64), 2)
    with pytest.raises(RuntimeError, match="Compilation disabled"):
        k.compile("void(int64[::1], float64)")
    k.disable_compile(False)
    k[1, 1](cuda.device_array(2, np.int64), 2)
    assert len(k.overloads) == 2 and k._can_compile
    with pytest.raises(AssertionError):
        cuda.jit(put).disable_compile()  # nothing compiled yet
    eager = cuda.jit("void(float32[::1], float32)")(put)
    eager.disable_compile()
    assert not eager._can_compile
    with pytest.raises(NotImplementedError, match="one signature compiles no other"):
        eager.disable_compile(False)
    # numba's typeof_pyval: the type a launch gives an argument
    assert str(k.typeof_pyval(np.zeros((2, 3), np.int16))) == "array(int16, 2d, C)"
    assert str(k.typeof_pyval(1.5)) == "float64" and str(k.typeof_pyval(np.float32(1))) == \
        "float32"
    assert str(k.typeof_pyval(d32)) == "array(float32, 1d, C)"
