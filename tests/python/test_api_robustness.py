"""Random combinations of odd arguments never crash the nbcuda module.

test_bad_input.py puts one hostile value at a time into one parameter; this file draws whole
argument lists at random, so the odd values meet each other: an odd array with an odd stream
and an odd order, an index of slices, Nones and arrays together, a __cuda_array_interface__
with three bad keys, a launch configuration of odd grid, block, stream and shared memory with
odd arguments. The draws come from a fixed seed (NBCUDA_ROBUSTNESS_SEED, default 0), so a
failure repeats; NBCUDA_ROBUSTNESS_ITERATIONS (default 1) multiplies their number for longer
runs by hand (best under ASan, as tests/run_all.sh's last stage runs the suite). Every call must succeed or raise an Exception
with a message, never crash or raise SystemError (test_bad_input's Runner judges), and what a
call returns is used a little (copied back, entered, repr'd) so a bad object fails here.

Each group runs in a child process, as test_bad_input's do: the parent names the last call of
a child that died. Run one group by hand with `python tests/python/test_api_robustness.py
GROUP` (NBCUDA_DRIVER set to the test driver); NBCUDA_BAD_INPUT_LOG_OK=1 logs the successes.
"""
import ast
import functools
import linecache
import math
import operator
import os
import random
import reprlib
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_bad_input import (SKIP, BadIndex, Boom, Cai, CudaStream, HugeIndex,  # noqa: E402
                            RaisesEverywhere, Runner, _signature, _valid_args, check_child,
                            hostile_values)

ITERATIONS = max(1, int(os.environ.get("NBCUDA_ROBUSTNESS_ITERATIONS", "1")))
SEED = os.environ.get("NBCUDA_ROBUSTNESS_SEED", "0")

# Results used only when they are this small (a drawn shape may describe terabytes).
SMALL_BYTES = 1 << 16

# Drawn at random only in the 'objects' group's last phase: they end the state the others use.
DESTRUCTIVE = {"reset", "release_primary_context", "close", "set_memory_manager", "pop"}
# Not drawn: each runs nvdisasm (half a second).
SLOW = {"inspect_sass", "inspect_sass_cfg"}


def _kernel_body(a):
    a[0] = 1


def _two_args(x, y):
    return x + y


# ---------------------------------------------------------------------------- value pools


class Gen:
    """The random draws of one group: each draw is (label, value)."""

    def __init__(self, cuda, group):
        import numpy as np
        self.cuda, self.np = cuda, np
        self.rng = random.Random(f"{SEED}/{group}")
        self.run = Runner(cuda)
        # (without the sizes that make real allocations of 16 and 32 GiB: under ASan each
        # takes seconds; test_bad_input.py tries them)
        self.hostile = [(label, v) for label, v in hostile_values(cuda)
                        if label not in ("2**31", "2**32")]
        self.valid = _valid_args(cuda)
        self.streams = self._streams()
        self.events = self._events()
        self.host = self._host_arrays()
        self.dev = self._device_arrays()
        self.derived = []  # small device arrays calls returned
        self.cai_target = cuda.to_device(np.arange(8.0))

    # -- helpers

    def chance(self, p):
        return self.rng.random() < p

    def pick(self, pool):
        return self.rng.choice(pool)

    def some(self, make, lo=0, hi=4):
        """A tuple of hi-lo random draws of make: (label, value)."""
        items = [make() for _ in range(self.rng.randint(lo, hi))]
        return "(" + ", ".join(label for label, _ in items) + ",)", tuple(v for _, v in items)

    def call(self, label, fn, *args, **kwargs):
        result = self.run.call(label, fn, *args, **kwargs)
        self.use(label, result)
        self.drop_numpy_errors()
        return result

    def drop_numpy_errors(self):
        # numpy's own SystemError: a str scalar of UCS4 code points past U+10FFFF (the bytes
        # of any array viewed as 'U'; numpy.frombuffer(b"\xff" * 8, "U2")[0] raises it too)
        self.run.bad = [b for b in self.run.bad
                        if not b.endswith("invalid maximum character passed to PyUnicode_New")]

    def use(self, label, result):
        """Touches what a call returned: a bad array or context manager fails here."""
        np, cuda = self.np, self.cuda
        small = isinstance(result, (cuda.DeviceNDArray, np.ndarray)) and \
            result.nbytes <= SMALL_BYTES and result.size <= SMALL_BYTES  # (dtype V0's size)
        if isinstance(result, cuda.DeviceNDArray) and small:
            drawn = (f"<{label[:80]}>", result)  # later draws use it: views of views, ...
            if len(self.derived) < 64:
                self.derived.append(drawn)
            else:
                self.derived[self.rng.randrange(64)] = drawn
            self.run.call(f"{label} -> .copy_to_host()", result.copy_to_host)
            self.run.call(f"{label} -> repr", repr, result)
            self.run.call(f"{label} -> [...]", operator.getitem, result, Ellipsis)
        elif isinstance(result, np.ndarray) and small:
            self.run.call(f"{label} -> .copy()", result.copy)
        elif hasattr(type(result), "__enter__") and hasattr(type(result), "__exit__"):
            self.run.call(f"{label} -> with", _enter_exit, result)

    # -- scalars

    def small_int(self):
        v = self.rng.randint(-2, 5)
        return repr(v), v

    def odd_int(self):
        np = self.np
        return self.pick([(repr(v), v) for v in (
            0, -1, 2**62, 2**63 - 1, 2**63, -2**63, -2**63 - 1, 2**64,
            2**100)] + [("np.int8(-1)", np.int8(-1)), ("np.uint64(max)", np.uint64(2**64 - 1)),
                        ("np.int64(2)", np.int64(2)), ("True", True), ("np.bool_", np.bool_(1)),
                        ("HugeIndex", HugeIndex()), ("BadIndex", BadIndex())])

    def odd_scalar(self):
        np = self.np
        return self.pick([("None", None), ("1.5", 1.5), ("nan", math.nan), ("-inf", -math.inf),
                          ("'x'", "x"), ("b'x'", b"x"), ("()", ()), ("[]", []), ("1j", 1j),
                          ("object()", object()), ("np.float32(2)", np.float32(2)),
                          ("np.nan", np.float64("nan")), ("RaisesEverywhere", RaisesEverywhere())])

    def integer(self):
        r = self.rng.random()
        return self.small_int() if r < 0.6 else self.odd_int() if r < 0.85 else self.odd_scalar()

    def count(self):
        """A count of work (no huge or negative int: numba's random states take
        subsequence_start as a uint64 and jump the generator that many times, as nbcuda
        does)."""
        if self.chance(0.8):
            v = self.rng.randint(0, 5)
            return repr(v), v
        return self.odd_scalar()

    def boolean(self):
        return self.pick([("True", True), ("False", False), ("0", 0), ("None", None),
                          ("'x'", "x"), ("RaisesEverywhere", RaisesEverywhere())])

    def scalar(self):
        np = self.np
        r = self.rng.random()
        if r < 0.5:
            return self.integer()
        return self.pick([("2.5", 2.5), ("-0.0", -0.0), ("1e308", 1e308), ("1+2j", 1 + 2j),
                          ("np.complex64", np.complex64(1j)), ("np.float16", np.float16(1)),
                          ("np.uint8(255)", np.uint8(255)), ("np.datetime64", np.datetime64(1, "s")),
                          ("np.timedelta64", np.timedelta64(3, "ns")), ("np.void", np.zeros(
                              1, dtype="i4,f8")[0]), ("np.str_", np.str_("ab")),
                          ("np.bytes_", np.bytes_(b"ab")), ("(1, 2.0)", (1, 2.0)),
                          ("((1,), (2,))", ((1,), (2,)))]) if r < 0.85 else self.odd_scalar()

    # -- geometry and types

    def shape(self):
        r = self.rng.random()
        if r < 0.2:
            return self.integer()
        if r < 0.85:
            label, dims = self.some(self.small_or_odd_dim, 0, 4)
            return label, dims
        if r < 0.93:
            label, dims = self.some(self.small_or_odd_dim, 1, 3)
            return "[" + label + "]", list(dims)
        return self.pick(self.hostile)

    def small_or_odd_dim(self):
        return self.small_int() if self.chance(0.8) else self.odd_int()

    def strides(self):
        r = self.rng.random()
        if r < 0.3:
            return "None", None
        if r < 0.8:
            def stride():
                if self.chance(0.8):
                    v = self.pick([0, 1, 2, 4, 8, 16, 24, -8, -4, 3])
                    return repr(v), v
                return self.odd_int()
            return self.some(stride, 0, 4)
        return self.pick(self.hostile)

    def dtype(self):
        np, cuda = self.np, self.cuda
        return self.pick([
            ("f8", "f8"), ("np.float32", np.float32), ("i1", np.int8), ("u8", "u8"),
            ("c16", np.complex128), ("f2", np.float16), ("?", np.bool_), ("M8[s]", "M8[s]"),
            ("m8[ns]", "m8[ns]"), ("V0", "V0"), ("V3", "V3"), ("S3", "S3"), ("U2", "U2"),
            ("object", object), ("i4,f8", "i4,f8"), ("nested record",
                                                      [("a", "f4", (2,)), ("b", [("c", "i1")])]),
            (">f8", ">f8"), ("float33", "float33"), ("''", ""), ("None", None), ("1", 1),
            ("cuda.float32", cuda.float32), ("cuda.int32[:]", cuda.int32[:]), ("float", float),
            ("complex", complex), ("bool", bool), ("str", str), ("np.dtype(f4)", np.dtype("f4")),
            ("f8 (3,) subarray", np.dtype(("f8", (3,)))), ("longdouble", np.longdouble),
            ("RaisesEverywhere", RaisesEverywhere())])

    def order(self):
        return self.pick([("'C'", "C"), ("'F'", "F"), ("'A'", "A"), ("'K'", "K"), ("'c'", "c"),
                          ("''", ""), ("'CF'", "CF"), ("None", None), ("1", 1), ("b'C'", b"C")])

    # -- objects of the module

    def _streams(self):
        cuda = self.cuda
        s = cuda.stream()
        return [("0", 0), ("stream", s), ("default_stream", cuda.default_stream()),
                ("legacy", cuda.legacy_default_stream()),
                ("per_thread", cuda.per_thread_default_stream()),
                ("external", cuda.external_stream(s.handle.value
                                                  if hasattr(s.handle, "value") else s.handle)),
                ("__cuda_stream__ ok", CudaStream((0, 0))),
                ("__cuda_stream__ bad", CudaStream((0, "x"))), ("None", None), ("1", 1),
                ("2", 2), ("-1", -1), ("2**64", 2**64), ("'x'", "x"), ("1.5", 1.5),
                ("event", cuda.event()), ("RaisesEverywhere", RaisesEverywhere())]

    def stream(self):
        return self.pick(self.streams)

    def _events(self):
        cuda = self.cuda
        recorded = cuda.event()
        recorded.record()
        recorded_s = cuda.event()
        recorded_s.record(self.streams[1][1])
        return [("event", cuda.event()), ("recorded", recorded), ("recorded on stream",
                                                                 recorded_s),
                ("no timing", cuda.event(timing=False)), ("None", None), ("0", 0),
                ("stream", self.streams[1][1])]

    def event(self):
        return self.pick(self.events)

    def _host_arrays(self):
        np = self.np
        readonly = np.arange(4.0)
        readonly.flags.writeable = False
        rec = np.dtype([("a", "i4"), ("b", "f8", (2,))])
        return [
            ("arange(12.)", np.arange(12.0)), ("f4 2x3", np.ones((2, 3), np.float32)),
            ("i4 3x4 F", np.asfortranarray(np.arange(12, dtype=np.int32).reshape(3, 4))),
            ("0-d", np.array(3.0)), ("empty", np.zeros(0)), ("empty 0x3", np.zeros((0, 3))),
            ("[::2]", np.arange(8.0)[::2]), ("[::-1]", np.arange(4.0)[::-1]),
            ("2-d [:, ::-1]", np.arange(6.0).reshape(2, 3)[:, ::-1]), ("read-only", readonly),
            ("records", np.zeros(3, rec)), ("object", np.array([1, None], dtype=object)),
            ("U3", np.array(["ab", "c"])), ("S4", np.array([b"ab"])), ("bool", np.ones(3, bool)),
            ("c16", np.ones(2, np.complex128)), ("f2", np.ones(4, np.float16)),
            ("M8[s]", np.zeros(2, "M8[s]")), (">f8", np.zeros(2, ">f8")),
            ("broadcast", np.broadcast_to(np.arange(3.0), (2, 3))),
            ("unaligned", np.frombuffer(bytearray(33), np.float64, 4, 1)),
            ("(1,)*32", np.zeros((1,) * 32)), ("V8", np.zeros(2, "V8")),
            ("longdouble", np.zeros(2, np.longdouble)), ("i8 2x2x2", np.zeros((2, 2, 2), "i8")),
            ("list", [1.0, 2.0]), ("nested list", [[1, 2], [3]]), ("bytearray", bytearray(8)),
            ("memoryview", memoryview(bytearray(16)).cast("d")), ("3.0", 3.0)]

    def _device_arrays(self):
        cuda, np = self.cuda, self.np
        d2 = cuda.to_device(np.arange(12.0).reshape(3, 4))
        d1 = cuda.to_device(np.arange(8, dtype=np.int32))
        out = [("d2", d2), ("d1 i4", d1), ("d2[::2]", d2[::2]), ("d2[:, ::-1]", d2[:, ::-1]),
               ("d2.T", d2.T), ("d1[::-3]", d1[::-3]), ("d2[1]", d2[1]), ("d2[1, 2]", d2[1:2, 2:3]),
               ("F 3x2", cuda.device_array((3, 2), order="F")),
               ("0-d", cuda.device_array((), np.float32)), ("empty", cuda.device_array(0)),
               ("empty 0x3", cuda.device_array((0, 3))),
               ("records", cuda.to_device(np.zeros(3, "i4,f8"))),
               ("bool", cuda.to_device(np.ones(3, bool))),
               ("c8", cuda.device_array(4, np.complex64)),
               ("M8[s]", cuda.to_device(np.zeros(2, "M8[s]"))),
               ("u1 16", cuda.device_array(16, np.uint8)),
               ("3-d", cuda.device_array((2, 3, 4), np.float32)),
               ("strided alloc", cuda.device_array((2, 2), strides=(64, 8))),
               ("bound to stream", d1.bind(self.streams[1][1])),
               ("mapped", cuda.mapped_array(4)), ("managed", cuda.managed_array((2, 2))),
               ("as_cuda_array", cuda.as_cuda_array(d2[:, 1]))]
        return out

    def host_array(self):
        return self.pick(self.host)

    def device_array(self):
        return self.pick(self.derived if self.derived and self.chance(0.3) else self.dev)

    def array(self):
        r = self.rng.random()
        return self.device_array() if r < 0.45 else self.host_array() if r < 0.9 else \
            self.pick(self.hostile)

    def anything(self):
        r = self.rng.random()
        if r < 0.35:
            return self.pick(self.hostile)
        return self.pick([self.integer, self.scalar, self.array, self.stream, self.dtype,
                          self.shape, self.event])()

    def draw(self, name):
        """A value for a parameter called `name`: a plausible one, an odd one of its kind or
        anything at all."""
        r = self.rng.random()
        if PARAM_KINDS.get(name) == "count":  # never a hostile value: it would hang
            return self.count()
        if r < 0.3 and name in self.valid:
            return f"<{name}>", self.valid[name]
        if r < 0.85 and name in PARAM_KINDS:
            return getattr(self, PARAM_KINDS[name])()
        return self.anything()

    # -- compound values

    def index_item(self):
        np = self.np
        r = self.rng.random()
        if r < 0.35:
            return self.small_int()
        if r < 0.75:
            def bound():
                return ("None", None) if self.chance(0.3) else self.small_int() \
                    if self.chance(0.7) else self.odd_int() if self.chance(0.7) else \
                    self.odd_scalar()
            (l1, a), (l2, b), (l3, c) = bound(), bound(), bound()
            if isinstance(c, int) and c == 0 and self.chance(0.8):
                l3, c = "None", None
            return f"{l1}:{l2}:{l3}", slice(a, b, c)
        return self.pick([("None", None), ("...", Ellipsis), ("[0, 1]", [0, 1]),
                          ("np [1, -1]", np.array([1, -1])), ("bools", np.array([True, False])),
                          ("[]", []), ("np.int8(1)", np.int8(1)), ("True", True), ("1.0", 1.0),
                          ("'x'", "x"), ("(0,)", (0,)), ("2**63", 2**63), ("-2**63", -2**63)])

    def index(self):
        if self.chance(0.25):
            return self.index_item()
        label, key = self.some(self.index_item, 0, 5)
        return "[" + label[1:-2] + "]", key

    def value(self):
        """A value to assign into an array."""
        r = self.rng.random()
        return self.scalar() if r < 0.4 else self.array() if r < 0.9 else \
            self.pick(self.hostile)

    def cai_dict(self):
        """A __cuda_array_interface__ dict: a valid one with some keys changed or dropped."""
        np = self.np
        ptr = self.cai_target.device_pointer
        d = {"shape": (8,), "typestr": "<f8", "data": (ptr, False), "version": 3,
             "strides": None}
        changes = []
        for _ in range(self.rng.randint(0, 3)):
            key = self.pick(list(CAI_KEYS) + ["stream", "mask", "descr", "extra"])
            if self.chance(0.2):
                d.pop(key, None)
                changes.append(f"-{key}")
                continue
            pool = CAI_KEYS.get(key) or [("None", None), ("0", 0), ("1", 1), ("'x'", "x")]
            label, v = self.pick(pool)
            if callable(v):
                v = v(ptr, np)
            d[key] = v
            changes.append(f"{key}={label}")
        return "cai(" + ", ".join(changes) + ")", d


def _enter_exit(cm):
    with cm:
        pass


PARAM_KINDS = {
    "shape": "shape", "shapes": "shape", "dtype": "dtype", "strides": "strides",
    "order": "order", "stream": "stream", "ary": "array", "obj": "array", "arrays": "array",
    "arr": "array", "i": "integer", "devnum": "integer", "device_id": "integer",
    "handle": "integer", "copy": "boolean", "to": "device_array", "sync": "boolean",
    "portable": "boolean", "wc": "boolean", "attach_global": "boolean", "timing": "boolean",
    "evtstart": "event", "evtend": "event", "ev": "event", "offset": "integer",
    "section": "integer", "axis": "integer", "size": "integer", "init": "scalar",
    "res": "device_array", "desc": "cai_dict", "key": "index", "item": "index",
    "value": "value", "subsequence_start": "count",
}

# The keys of a __cuda_array_interface__ and odd values for each (a callable makes the value
# from the data pointer and numpy).
CAI_KEYS = {
    "shape": [("(8,)", (8,)), ("(2, 4)", (2, 4)), ("()", ()), ("(0,)", (0,)), ("(-1,)", (-1,)),
              ("(2**62,)*2", (2**62, 2**62)), ("(8.0,)", (8.0,)), ("'8'", "8"), ("None", None),
              ("[8]", [8]), ("(1,)*40", (1,) * 40), ("(np.int64(8),)", (8,)), ("(True,)", (True,)),
              ("(2**64,)", (2**64,)), ("(9,)", (9,)), ("(4, 0)", (4, 0))],
    "typestr": [("<f8", "<f8"), ("<f4", "<f4"), ("|b1", "|b1"), ("<i4", "<i4"), (">f8", ">f8"),
                ("|V8", "|V8"), ("<c16", "<c16"), ("<f2", "<f2"), ("|O8", "|O8"), ("<U4", "<U4"),
                ("<M8[s]", "<M8[s]"), ("|S3", "|S3"), ("''", ""), ("f8", "f8"), ("<f0", "<f0"),
                ("<f-8", "<f-8"), ("<x8", "<x8"), ("<f8junk", "<f8junk"), ("8", 8), ("None", None),
                ("b'<f8'", b"<f8"), ("<u16", "<u16"), ("<V0", "<V0")],
    "data": [("(ptr, False)", lambda p, np: (p, False)), ("(ptr, True)", lambda p, np: (p, True)),
             ("(ptr,)", lambda p, np: (p,)), ("(ptr, False, 1)", lambda p, np: (p, False, 1)),
             ("None", None), ("ptr", lambda p, np: p), ("(0, False)", (0, False)),
             ("(0, True)", (0, True)), ("(-1, False)", (-1, False)),
             ("(2**64, False)", (2**64, False)), ("('x', False)", ("x", False)),
             ("(ptr+1, False)", lambda p, np: (p + 1, False)),
             ("(ptr+60, False)", lambda p, np: (p + 60, False)),
             ("(ptr, 'no')", lambda p, np: (p, "no")), ("[ptr, False]", lambda p, np: [p, False]),
             ("(np.uint64(ptr), False)", lambda p, np: (np.uint64(p), False)),
             ("(1.5, False)", (1.5, False))],
    "strides": [("None", None), ("(8,)", (8,)), ("(16,)", (16,)), ("(-8,)", (-8,)),
                ("(0,)", (0,)), ("(8, 8)", (8, 8)), ("()", ()), ("'8'", "8"), ("(1,)", (1,)),
                ("(2**62,)", (2**62,)), ("(4,)", (4,)), ("(None,)", (None,)), ("[8]", [8]),
                ("(32, 8)", (32, 8)), ("(8, 32)", (8, 32))],
    "version": [("0", 0), ("1", 1), ("2", 2), ("3", 3), ("99", 99), ("-1", -1), ("'3'", "3"),
                ("None", None), ("2**64", 2**64)],
    "stream": [("None", None), ("0", 0), ("1", 1), ("2", 2), ("-1", -1), ("2**64", 2**64),
               ("'x'", "x"), ("1.5", 1.5)],
    "mask": [("None", None), ("np.zeros(8)", lambda p, np: np.zeros(8)), ("1", 1)],
    "descr": [("[('', '<f8')]", [("", "<f8")]), ("'x'", "x"), ("2 fields",
                                                               [("a", "<f4"), ("b", "<f4")]),
              ("[]", []), ("[(1, 2)]", [(1, 2)]), ("None", None)],
}


# ---------------------------------------------------------------------------- the groups


def group_module(g):
    """Every function of the module and its submodules found by dir(), with a random value
    for each parameter its docstring names (some left out, some by keyword)."""
    cuda = g.cuda
    for modname, mod in [("nbcuda", cuda), ("nbcuda.random", cuda.random),
                         ("nbcuda.types", cuda.types)]:
        for name in sorted(dir(mod)):
            obj = getattr(mod, name)
            if name.startswith("__") or isinstance(obj, type) or not callable(obj):
                continue
            if f"{modname}.{name}" in SKIP or name in DESTRUCTIVE or \
                    type(obj).__name__ in ("Type", "Stub", "module"):
                continue
            _call_randomly(g, f"{modname}.{name}", obj, 12 * ITERATIONS)


def _call_randomly(g, name, obj, times):
    """obj called `times` times with random arguments for the parameters its docstring names
    (some left out, some by keyword), or 0 to 3 of anything when it names none."""
    params = _signature(obj)
    for i in range(times):
        args, kwargs, labels = [], {}, []
        if not params or g.chance(0.1):
            label, args = g.some(g.anything, 0, 3)
            g.call(f"#{i} {name}{label}", obj, *args)
            continue
        for pname, kind in params:
            if kind == "star":
                label, v = g.some(functools.partial(g.draw, pname), 0, 3)
                args.extend(v)
                labels.append("*" + label)
                continue
            if kind != "pos" and g.chance(0.4):
                continue
            label, v = g.draw(pname)
            if kind == "kw" or (kind == "opt" and g.chance(0.3)) or kwargs:
                kwargs[pname] = v
                labels.append(f"{pname}={label}")
            else:
                args.append(v)
                labels.append(label)
        g.call(f"#{i} {name}({', '.join(labels)})", obj, *args, **kwargs)


def group_arrays(g):
    """Device arrays made from odd combinations, and every method of odd device arrays."""
    cuda = g.cuda
    makers = [("device_array", cuda.device_array, ["shape", "dtype", "strides", "order",
                                                    "stream"]),
              ("to_device", cuda.to_device, ["obj", "stream", "copy", "to"]),
              ("device_array_like", cuda.device_array_like, ["ary", "stream"]),
              ("pinned_array", cuda.pinned_array, ["shape", "dtype", "strides", "order"]),
              ("mapped_array", cuda.mapped_array, ["shape", "dtype", "strides", "order", "stream",
                                                   "portable", "wc"]),
              ("managed_array", cuda.managed_array, ["shape", "dtype", "strides", "order",
                                                     "stream", "attach_global"]),
              ("pinned_array_like", cuda.pinned_array_like, ["ary"]),
              ("mapped_array_like", cuda.mapped_array_like, ["ary", "stream", "portable", "wc"]),
              ("managed_array_like", cuda.managed_array_like, ["ary", "stream", "attach_global"])]
    for i in range(60 * ITERATIONS):
        for name, fn, params in makers:
            n = g.rng.randint(1, len(params))
            drawn = [(p, g.draw(p)) for p in params[:n]]
            kw = g.chance(0.3)
            label = ", ".join(f"{p}={lv[0]}" if kw else lv[0] for p, lv in drawn)
            if kw:
                g.call(f"#{i} {name}({label})", fn, **{p: lv[1] for p, lv in drawn})
            else:
                g.call(f"#{i} {name}({label})", fn, *[lv[1] for _, lv in drawn])
    for i in range(400 * ITERATIONS):
        al, a = g.device_array()
        op = g.pick(ARRAY_OPS)
        op(g, f"#{i} {al}", a)


def _op_copy_to_host(g, al, a):
    hl, h = ("None", None) if g.chance(0.3) else g.array()
    sl, s = g.stream()
    if hasattr(a, "copy_to_host"):  # mapped and managed arrays are numpy's
        g.call(f"{al}.copy_to_host({hl}, {sl})", a.copy_to_host, h, s)


def _op_copy_to_device(g, al, a):
    hl, h = g.array()
    sl, s = g.stream()
    if hasattr(a, "copy_to_device"):
        g.call(f"{al}.copy_to_device({hl}, stream={sl})", a.copy_to_device, h, stream=s)


def _op_reshape(g, al, a):
    sl, shape = g.shape()
    if isinstance(shape, tuple) and g.chance(0.5):
        g.call(f"{al}.reshape(*{sl})", a.reshape, *shape)
    else:
        ol, order = g.order()
        g.call(f"{al}.reshape({sl}, order={ol})", a.reshape, shape, order=order)


def _op_view(g, al, a):
    dl, dt = g.dtype()
    g.call(f"{al}.view({dl})", a.view, dt)


def _op_ravel_squeeze(g, al, a):
    ol, order = g.order()
    sl, s = g.stream()
    g.call(f"{al}.ravel({ol}, {sl})", a.ravel, order, s)
    xl, axis = ("None", None) if g.chance(0.3) else g.some(g.integer, 0, 3) if g.chance(0.3) \
        else g.integer()
    g.call(f"{al}.squeeze({xl}, stream={sl})", a.squeeze, axis, stream=s)


def _op_transpose(g, al, a):
    xl, axes = ("None", None) if g.chance(0.3) else g.some(g.integer, 0, 4)
    g.call(f"{al}.transpose({xl})", a.transpose, axes)
    g.call(f"{al}.T", getattr, a, "T")


def _op_split(g, al, a):
    nl, n = g.integer()
    sl, s = g.stream()
    if hasattr(a, "split"):
        g.call(f"{al}.split({nl}, {sl})", a.split, n, s)


def _op_bind(g, al, a):
    sl, s = g.stream()
    b = g.call(f"{al}.bind({sl})", a.bind, s) if hasattr(a, "bind") else None
    if b is not None:
        g.call(f"{al}.bind({sl}).copy_to_host()", b.copy_to_host)


def _op_getitem(g, al, a):
    kl, key = g.index()
    if g.chance(0.7) or not hasattr(a, "getitem"):
        g.call(f"{al}[{kl}]", operator.getitem, a, key)
    else:
        sl, s = g.stream()
        g.call(f"{al}.getitem({kl}, {sl})", a.getitem, key, s)


def _op_setitem(g, al, a):
    kl, key = g.index()
    vl, v = g.value()
    if g.chance(0.7) or not hasattr(a, "setitem"):
        g.call(f"{al}[{kl}] = {vl}", operator.setitem, a, key, v)
    else:
        sl, s = g.stream()
        g.call(f"{al}.setitem({kl}, {vl}, {sl})", a.setitem, key, v, s)


def _op_misc(g, al, a):
    for name in ("as_cuda_arg", "get_ipc_handle", "is_c_contiguous", "is_f_contiguous"):
        if hasattr(a, name):
            g.call(f"{al}.{name}()", getattr(a, name))
    for name in ("gpu_data", "__cuda_array_interface__", "device_ctypes_pointer", "flags",
                 "alloc_size", "stream", "nbytes", "size"):
        g.call(f"{al}.{name}", getattr, a, name)
    g.call(f"len({al})", len, a)
    if a.size <= 64:
        g.call(f"list({al})", list, a)
    vl, v = g.anything()
    g.call(f"{al} == {vl}", operator.eq, a, v)


ARRAY_OPS = [_op_copy_to_host, _op_copy_to_device, _op_reshape, _op_view, _op_ravel_squeeze,
             _op_transpose, _op_split, _op_bind, _op_getitem, _op_getitem, _op_setitem,
             _op_setitem, _op_misc]


def group_index(g):
    """Indexing and assignment: random keys of ints, slices, None, Ellipsis and arrays, random
    values, on arrays of every layout."""
    for i in range(1500 * ITERATIONS):
        al, a = g.device_array()
        if g.chance(0.5):
            _op_getitem(g, f"#{i} {al}", a)
        else:
            _op_setitem(g, f"#{i} {al}", a)


def group_cai(g):
    """Malformed __cuda_array_interface__ dicts, in every consumer."""
    cuda = g.cuda
    k = cuda.jit(_kernel_body)
    for i in range(300 * ITERATIONS):
        dl, d = g.cai_dict()
        ol, owner = g.pick([("None", None), ("array", g.cai_target), ("object()", object())])
        bl, sync = g.boolean()
        g.call(f"#{i} from_cuda_array_interface({dl}, {ol}, {bl})",
               cuda.from_cuda_array_interface, d, owner=owner, sync=sync)
        obj = Cai(d)
        g.call(f"#{i} as_cuda_array({dl}, sync={bl})", cuda.as_cuda_array, obj, sync=sync)
        g.call(f"#{i} is_cuda_array({dl})", cuda.is_cuda_array, obj)
        target = g.pick([("d8", cuda.device_array(8)), ("d2x4", cuda.device_array((2, 4)))])
        g.call(f"#{i} {target[0]}.copy_to_device({dl})", target[1].copy_to_device, obj)
        g.call(f"#{i} to_device({dl})", cuda.to_device, obj)
        g.call(f"#{i} k[1, 1]({dl})", lambda: k[1, 1](obj))


def group_launch(g):
    """Kernels of several signatures under random configurations and arguments."""
    cuda, np = g.cuda, g.np

    def lazy(a):
        a[0] = 1

    def scalars(a, x, y):
        a[0] = x + y

    def two(a, n):
        if n < a.size:
            a[n] = n

    def mixed(a, c, t):
        a[0, 0] = c.real + t[0]

    def noargs():
        pass

    def rec(r):
        r[0].a = 1

    def untouched(a, b, c):  # typed for any arguments: only their passing is tried
        pass

    rec_t = cuda.from_dtype(np.dtype([("a", "i4"), ("b", "f8")]))
    kernels = [("lazy", cuda.jit(lazy)), ("scalars", cuda.jit(scalars)),
               ("untouched", cuda.jit(untouched)), ("untouched", cuda.jit(untouched)),
               ("two", cuda.jit("void(float64[:], int32)")(two)),
               ("mixed", cuda.jit("void(float32[:, ::1], complex128, UniTuple(int64, 2))")(mixed)),
               ("noargs", cuda.jit("void()")(noargs)), ("rec", cuda.jit(cuda.void(rec_t[:]))(rec)),
               ("multi", cuda.jit(["void(int32[:])", "void(float64[:])"])(lazy))]

    def dim():
        r = g.rng.random()
        if r < 0.5:
            v = g.rng.randint(1, 4)
            return repr(v), v
        if r < 0.75:
            return g.some(g.small_or_odd_dim, 0, 4)
        return g.pick([g.odd_int, g.odd_scalar, lambda: ("[1, 1]", [1, 1]),
                       lambda: ("np.int32(2)", np.int32(2)),
                       lambda: ("(2.0, 1)", (2.0, 1))])()

    def arg():
        return g.pick([g.array, g.device_array, g.scalar, g.scalar, g.anything,
                       lambda: g.some(g.scalar, 0, 3)])()

    def valid_dim():
        v = g.rng.randint(1, 4)
        return (repr(v), v) if g.chance(0.7) else (f"({v}, 2)", (v, 2))

    for i in range(400 * ITERATIONS):
        kl, k = g.pick(kernels)
        n = g.pick([0, 1, 2, 2, 2, 3, 4, 5])
        parts = [valid_dim, valid_dim, g.stream, lambda: ("0", 0)] if g.chance(0.4) else \
            [dim, dim, g.stream, g.integer, g.anything]
        parts = parts[:n]
        drawn = [p() for p in parts]
        cl = ", ".join(label for label, _ in drawn)
        config = tuple(v for _, v in drawn)
        if n == 1:
            config = config[0]
        configured = g.call(f"#{i} {kl}[{cl}]", operator.getitem, k, config)
        al, args = g.some(arg, 0, 4)
        if configured is not None and g.chance(0.1):
            kw = dict(zip(("a", "b", "c", "x"), args))
            g.call(f"#{i} {kl}[{cl}](**{al})", configured, **kw)
        elif configured is not None:
            g.call(f"#{i} {kl}[{cl}]{al}", configured, *args)
        elif g.chance(0.3):
            g.call(f"#{i} {kl}[1, 1]{al}", k[1, 1], *args)
        if g.chance(0.1):
            nl, nt = g.integer()
            sl, s = g.stream()
            fa = g.call(f"#{i} {kl}.forall({nl}, {sl})", k.forall, nt, stream=s)
            if fa is not None:
                g.call(f"#{i} {kl}.forall({nl}, {sl}){al}", fa, *args)
        if g.chance(0.05):
            g.call(f"#{i} {kl}.specialize{al}", k.specialize, *args)
        if g.chance(0.05):
            g.call(f"#{i} {kl}.inspect_types()", k.inspect_types)
            g.call(f"#{i} {kl}.inspect_asm({al})", k.inspect_asm, *args[:1])


def _methods(obj):
    """[(name, bound method)] of obj's public methods, but those that end the state or are
    slow, and numpy's own (of mapped and managed arrays: numpy's repeat(2**62) crashes)."""
    import numpy as np
    out = []
    for name in dir(obj):
        if name.startswith("_") or name in DESTRUCTIVE or name in SLOW or \
                (isinstance(obj, np.ndarray) and hasattr(np.ndarray, name)):
            continue
        try:
            attr = getattr(obj, name)
        except Exception:  # noqa: BLE001 - a property that needs a state it lacks
            continue
        if callable(attr) and not isinstance(attr, type):
            out.append((name, attr))
    return out


def group_objects(g):
    """Every method of streams, events, contexts, devices and memory objects with random
    arguments; then the calls that end them (reset, pop, release) and the objects used
    after."""
    cuda, np = g.cuda, g.np
    ctx = cuda.current_context()
    dev = cuda.get_current_device()
    ptr = cuda.to_device(np.zeros(8))
    instances = g.streams[1:5] + g.events[:4] + [
        ("ctx", ctx), ("dev", dev), ("gpus", cuda.gpus), ("gpus[0]", cuda.gpus[0]),
        ("gpu_data", ptr.gpu_data), ("memalloc", ctx.memalloc(64)),
        ("memhostalloc", ctx.memhostalloc(64)), ("ipc", ptr.get_ipc_handle()),
        ("runtime", cuda.runtime), ("config", cuda.config),
        ("kernel", cuda.jit(_kernel_body)),
        ("kernel sig", cuda.jit("void(float64[:])")(_kernel_body)),
        ("launcher", cuda.jit(_kernel_body)[1, 1]),
        ("device function", cuda.jit(device=True)(_two_args)),
        ("ufunc", cuda.vectorize("float64(float64, float64)")(_add)),
        ("reduce", cuda.reduce(_add)), ("float32[:]", cuda.float32[:])]
    methods = [(f"{label}.{name}", m) for label, inst in instances
               for name, m in _methods(inst)]
    for i in range(700 * ITERATIONS):
        ml, m = g.pick(methods)
        _call_randomly(g, f"#{i} {ml}", m, 1)
        if g.chance(0.1):
            (l1, e1), (l2, e2) = g.event(), g.event()
            g.call(f"#{i} event_elapsed_time({l1}, {l2})", cuda.event_elapsed_time, e1, e2)
    # The end of everything: each destructive call, then every object again.
    for label, inst in instances:
        for name in sorted(DESTRUCTIVE):
            fn = getattr(inst, name, None)
            if callable(fn):
                al, args = g.some(g.anything, 0, 2)
                g.call(f"{label}.{name}{al}", fn, *args)
                g.call(f"{label}.{name}()", fn)
    g.call("close()", cuda.close)
    for label, inst in instances:
        for name in ("synchronize", "query", "record", "elapsed_time", "get_memory_info"):
            fn = getattr(inst, name, None)
            if callable(fn):
                g.call(f"after close: {label}.{name}()", fn)
    for al, a in g.dev:
        if not hasattr(a, "copy_to_host"):
            # A mapped or managed array is numpy's view of memory the reset freed, as numba's
            # is (the driver frees a context's page-locked and managed memory with it): numpy
            # would write into freed memory.
            continue
        g.call(f"after close: {al}.copy_to_host()", a.copy_to_host)
        g.call(f"after close: {al}[0] = 1", operator.setitem, a, 0, 1)


# Functions the compiler is given: odd kinds of callables and functions whose source text is
# missing, wrong or odd.
_LAMBDAS = [lambda x: x + 1, lambda x: x * 2]
_EXEC_NS = {}
exec("def from_exec(a):\n    a[0] = 1\n", _EXEC_NS)
exec(compile(ast.parse("def from_ast(a):\n    a[0] = 1\n"), "<ast>", "exec"), _EXEC_NS)
exec(compile("def lying(a):\n    a[0] = 1\n", "<nbcuda-lying>", "exec"), _EXEC_NS)
linecache.cache["<nbcuda-lying>"] = (3, None, ["x = (\n"], "<nbcuda-lying>")
exec(compile("\n" * 50 + "def beyond(a):\n    a[0] = 1\n", "<nbcuda-short>", "exec"), _EXEC_NS)
linecache.cache["<nbcuda-short>"] = (9, None, ["def beyond(a):\n"], "<nbcuda-short>")
_G_ODD = RaisesEverywhere()


def _uses_odd_global(a):
    a[0] = _G_ODD


def _gen(a):
    yield a


async def _coro(a):
    a[0] = 1


def _varargs(*args, **kwargs):
    args[0][0] = 1


def _kwonly(a, *, b=object()):
    a[0] = b


def _swapped_code(a):
    return a


_swapped_code.__code__ = _two_args.__code__


class _Klass:
    def method(self, a):
        a[0] = 1

    @staticmethod
    def static(a):
        a[0] = 1


def _closure_over(v):
    def inner(a):
        a[0] = v
    return inner


if True:
    def _indented(a):
        a[0] = 1


def _functions(cuda, np):
    return [("_kernel_body", _kernel_body), ("_two_args", _two_args),
            ("lambda 1 of 2", _LAMBDAS[0]), ("lambda 2 of 2", _LAMBDAS[1]), ("len", len),
            ("math.sin", math.sin), ("np.add", np.add), ("class", _Klass),
            ("instance", _Klass()), ("method", _Klass().method), ("unbound", _Klass.method),
            ("static", _Klass.static), ("partial", functools.partial(_kernel_body)),
            ("from_exec", _EXEC_NS["from_exec"]), ("from_ast", _EXEC_NS["from_ast"]),
            ("lying linecache", _EXEC_NS["lying"]), ("beyond the source", _EXEC_NS["beyond"]),
            ("odd global", _uses_odd_global), ("generator", _gen), ("coroutine", _coro),
            ("varargs", _varargs), ("kwonly", _kwonly), ("swapped __code__", _swapped_code),
            ("closure over object()", _closure_over(object())),
            ("closure over device array", _closure_over(cuda.device_array(2))),
            ("indented", _indented), ("None", None), ("source text", "def f(a):\n  a[0] = 1\n"),
            ("kernel", cuda.jit(_kernel_body)), ("device function", cuda.jit(device=True)(
                _two_args)), ("RaisesEverywhere", RaisesEverywhere())]


SIG_TOKENS = ["void", "float32", "int64", "float64[:]", "float32[:, ::1]", "float32[::1, :]",
              "UniTuple(int64, 2)", "Tuple(int32, float64)", "complex128", "boolean", "none",
              "(", ")", "[", "]", ",", ":", "::", "::1", "1", "-1", "0", "99999999999999999999",
              "->", "x", "", " ", "\x00", "é", "int32x4", "CPointer(float32)", "float32[:][:]",
              "Record", "*", "=", "...", "'", "\\", "\n", "#", "float32[" + ":, " * 40 + ":]",
              "(" * 300, "float32 " * 50, "UniTuple(int64, -1)", "UniTuple(int64, 2**70)",
              "Array(float32, 1, 'C')", "optional(int32)", "float32[:, :, ::2]"]


def group_compile(g):
    """compile(), compile_ptx(), jit(), declare_device() and the ufunc builders with odd
    functions, malformed signatures and odd options."""
    cuda, np = g.cuda, g.np
    funcs = _functions(cuda, np)
    good_sigs = [("'void(float64[:])'", "void(float64[:])"),
                 ("'float32(float32, float32)'", "float32(float32, float32)"),
                 ("void(float64[:]) typed", cuda.void(cuda.float64[:])),
                 ("(float64[:],)", (cuda.float64[:],)), ("'void()'", "void()"),
                 ("None", None)]
    odd_sigs = [("1", 1), ("1.5", 1.5), ("[]", []), ("[None]", [None]),
                ("('void(float32)',)", ("void(float32)",)), ("[['void()']]", [["void()"]]),
                ("{}", {}), ("b'void()'", b"void()"), ("float32", cuda.float32),
                ("float32[:]", cuda.float32[:]), ("void", cuda.void),
                ("(float32, 'x')", (cuda.float32, "x")),
                ("RaisesEverywhere", RaisesEverywhere())]

    def sig():
        r = g.rng.random()
        if r < 0.3:
            return g.pick(good_sigs)
        if r < 0.5:
            return g.pick(odd_sigs)
        toks = [g.pick(SIG_TOKENS) for _ in range(g.rng.randint(0, 10))]
        text = "".join(toks) if g.chance(0.5) else " ".join(toks)
        return repr(text)[:80], text

    def option():
        return g.pick([
            ("debug", g.boolean), ("lineinfo", g.boolean), ("device", g.boolean),
            ("fastmath", g.boolean), ("opt", g.boolean),
            ("cc", lambda: g.pick([("None", None), ("(9, 0)", (9, 0)), ("(5, 0)", (5, 0)),
                                   ("(0, 0)", (0, 0)), ("(-1, 2)", (-1, 2)), ("(99, 99)", (99, 99)),
                                   ("'9.0'", "9.0"), ("(9,)", (9,)), ("(9, 0, 0)", (9, 0, 0)),
                                   ("9.0", 9.0), ("(2**63, 0)", (2**63, 0))])),
            ("abi", lambda: g.pick([("'c'", "c"), ("'numba'", "numba"), ("'x'", "x"),
                                    ("None", None), ("1", 1)])),
            ("abi_info", lambda: g.pick([("None", None), ("'x'", "x"),
                                         ("{abi_name: 'f'}", {"abi_name": "f"}),
                                         ("{abi_name: 1}", {"abi_name": 1}),
                                         ("{abi_name: 'é'}", {"abi_name": "é"}),
                                         ("{abi_name: ''}", {"abi_name": ""}),
                                         ("{abi_name: 'a'*5000}", {"abi_name": "a" * 5000})])),
            ("output", lambda: g.pick([("'ptx'", "ptx"), ("'ltoir'", "ltoir"), ("'x'", "x"),
                                       ("None", None)])),
            ("bogus", g.anything)])

    def options():
        out, labels = {}, []
        for _ in range(g.rng.randint(0, 3)):
            name, make = option()
            label, v = make()
            out[name] = v
            labels.append(f"{name}={label}")
        return labels, out

    compilers = [("compile", cuda.compile), ("compile_ptx", cuda.compile_ptx),
                 ("compile_all", cuda.compile_all),
                 ("compile_for_current_device", cuda.compile_for_current_device),
                 ("compile_ptx_for_current_device", cuda.compile_ptx_for_current_device)]
    for i in range(150 * ITERATIONS):
        fl, f = g.pick(funcs)
        sl, s = sig()
        cl, compiler = g.pick(compilers)
        ol, opts = options()
        g.call(f"#{i} {cl}({', '.join([fl, sl] + ol)})", compiler, f, s, **opts)
        ol, opts = options()
        opts.pop("output", None)
        opts.pop("abi", None)
        opts.pop("abi_info", None)
        opts.pop("cc", None)
        if g.chance(0.5):
            dec = g.call(f"#{i} jit({', '.join([sl] + ol)})", cuda.jit, s, **opts)
            if callable(dec):
                k = g.call(f"#{i} jit({sl})({fl})", dec, f)
            else:
                k = None
        else:
            k = g.call(f"#{i} jit({', '.join([fl] + ol)})", cuda.jit, f, **opts)
        if k is not None and hasattr(k, "__getitem__"):
            al, args = g.some(g.array, 0, 2)
            g.call(f"#{i} [1, 1]{al}", lambda: k[1, 1](*args))
        nl, name = g.pick([("'f'", "f"), ("''", ""), ("'é'", "é"), ("'a b'", "a b"),
                           ("'1x'", "1x"), ("None", None), ("1", 1), ("'a'*5000", "a" * 5000),
                           ("'\\x00'", "\x00")])
        ll, link = g.pick([("None", None), ("[]", []), ("'missing.cu'", "missing.cu"),
                           ("['x.ptx', 1]", ["x.ptx", 1]), ("1", 1)])
        g.call(f"#{i} declare_device({nl}, {sl}, link={ll})", cuda.declare_device, name, s,
               link=link)
        if g.chance(0.15):
            ul = g.call(f"#{i} vectorize({sl})({fl})", lambda: cuda.vectorize(s)(f))
            if ul is not None:
                al, args = g.some(g.array, 1, 3)
                g.call(f"#{i} vectorize({sl})({fl}){al}", ul, *args)
            yl, layout = g.pick([("'(n)->()'", "(n)->()"), ("'()->()'", "()->()"),
                                 ("'(n'", "(n"), ("''", ""), ("'->'", "->"), ("1", 1),
                                 ("'(n),(m)->(n,m)'", "(n),(m)->(n,m)")])
            gu = g.call(f"#{i} guvectorize({sl}, {yl})({fl})",
                        lambda: cuda.guvectorize(s, layout)(f))
            if gu is not None:
                al, args = g.some(g.array, 1, 3)
                g.call(f"#{i} guvectorize(...)({fl}){al}", gu, *args)
            red = g.call(f"#{i} reduce({fl})", cuda.reduce, f)
            if red is not None:
                al, args = g.some(g.anything, 1, 3)
                g.call(f"#{i} reduce({fl}){al}", red, *args)


def _add(x, y):
    return x + y


def _row_sum(a, out):
    out[0] = a[0] + a[-1]


def group_ufuncs(g):
    """ufuncs, gufuncs and reductions called with odd arrays, out=, stream= and sizes."""
    cuda = g.cuda
    ufuncs = [("vectorize", cuda.vectorize(["float32(float32, float32)",
                                            "float64(float64, float64)"])(_add)),
              ("vectorize int", cuda.vectorize("int64(int64, int64)")(_add)),
              ("guvectorize", cuda.guvectorize(["void(float64[:], float64[:])"],
                                               "(n)->()")(_row_sum))]
    red = cuda.reduce(_add)

    def kwargs():
        out, labels = {}, []
        for name, make in [("out", g.array), ("stream", g.stream), ("bogus", g.anything)]:
            if g.chance(0.25):
                label, out[name] = make()
                labels.append(f"{name}={label}")
        return labels, out

    for i in range(300 * ITERATIONS):
        ul, u = g.pick(ufuncs)
        al, args = g.some(lambda: g.array() if g.chance(0.7) else g.scalar(), 0, 3)
        kl, kw = kwargs()
        g.call(f"#{i} {ul}({', '.join([al] + kl)})", u, *args, **kw)
        arl, ar = g.array()
        params = {"size": g.integer, "res": g.array, "init": g.scalar, "stream": g.stream}
        kw, labels = {}, []
        for name, make in params.items():
            if g.chance(0.3):
                label, kw[name] = make()
                labels.append(f"{name}={label}")
        g.call(f"#{i} reduce({', '.join([arl] + labels)})", red, ar, **kw)


def group_types(g):
    """Types made from types: indexed, called, composed (Array, UniTuple, Tuple, CPointer,
    from_dtype), then compiled as a kernel's parameters."""
    cuda, np = g.cuda, g.np
    scalars = [(n, getattr(cuda, n)) for n in ("float32", "int8", "uint64", "complex128",
                                               "boolean", "float16", "none", "void")]
    made = list(scalars)

    def typ():
        return g.pick(made) if g.chance(0.85) else g.anything()

    def two(a, b):
        pass

    for i in range(400 * ITERATIONS):
        tl, t = typ()
        r = g.rng.random()
        if r < 0.3:
            kl, key = g.index()
            label, fn, args = f"{tl}[{kl}]", operator.getitem, (t, key)
        elif r < 0.45:
            al, args = g.some(typ, 0, 3)
            label, fn = f"{tl}{al}", t
        elif r < 0.55:
            (nl, n), (ll, layout) = g.integer(), g.pick([("'C'", "C"), ("'A'", "A"),
                                                         ("'F'", "F"), ("'x'", "x"),
                                                         ("None", None)])
            label, fn, args = f"Array({tl}, {nl}, {ll})", cuda.types.Array, (t, n, layout)
        elif r < 0.65:
            nl, n = g.integer()
            label, fn, args = f"UniTuple({tl}, {nl})", cuda.types.UniTuple, (t, n)
        elif r < 0.72:
            al, items = g.some(typ, 0, 4)
            label, fn, args = f"Tuple({al})", cuda.types.Tuple, (list(items),)
        elif r < 0.78:
            label, fn, args = f"CPointer({tl})", cuda.types.CPointer, (t,)
        elif r < 0.85:
            dl, dt = g.dtype()
            label, fn, args = f"from_dtype({dl})", cuda.from_dtype, (dt,)
        else:
            (l1, t1), (l2, t2) = typ(), typ()
            sig = g.call(f"#{i} void({l1}, {l2})", cuda.void, t1, t2)
            if sig is not None:
                g.call(f"#{i} jit(void({l1}, {l2}))", lambda: cuda.jit(sig)(two))
            continue
        result = g.call(f"#{i} {label}", fn, *args)
        if result is not None and len(made) < 200:
            made.append((f"<{label}>", result))
            g.call(f"#{i} repr({label})", repr, result)
            g.call(f"#{i} hash({label})", hash, result)


def _short_repr(value):
    try:
        return reprlib.repr(value)[:160]
    except Exception as e:  # noqa: BLE001 - the hostile objects' __repr__ raises
        return f"<{type(value).__name__}: repr raised {type(e).__name__}>"


def _mutated(g, value, depth=0):
    """value with random items of it (in nested tuples, lists and dicts too) replaced."""
    if depth < 3 and isinstance(value, (tuple, list)) and value and g.chance(0.7):
        items = list(value)
        i = g.rng.randrange(len(items))
        items[i] = _mutated(g, items[i], depth + 1)
        return type(value)(items) if isinstance(value, list) else tuple(items)
    if depth < 3 and isinstance(value, dict) and value and g.chance(0.7):
        d = dict(value)
        k = g.pick(sorted(d, key=repr))
        d[k] = _mutated(g, d[k], depth + 1)
        return d
    return g.anything()[1]


def group_pickles(g):
    """What pickles of kernels, device functions, ufuncs, launch configurations and IPC
    handles are rebuilt from, with random parts replaced, given to the rebuilding
    functions (a pickle is data anyone can write)."""
    import pickle
    cuda, np = g.cuda, g.np
    objs = [("kernel", cuda.jit(_kernel_body)),
            ("kernel sig", cuda.jit("void(float64[:])", lineinfo=True, link=[])(_kernel_body)),
            ("device function", cuda.jit(device=True)(_two_args)),
            ("ufunc", cuda.vectorize("float64(float64, float64)")(_add)),
            ("gufunc", cuda.guvectorize(["void(float64[:], float64[:])"], "(n)->()")(_row_sum)),
            ("launch", cuda.jit(_kernel_body)[2, 3, 0, 16]),
            ("ipc", cuda.to_device(np.zeros(4)).get_ipc_handle())]
    reduced = []
    for label, obj in objs:
        r = g.call(f"{label}.__reduce__()", obj.__reduce__)
        if r is not None:
            reduced.append((label, r))
        g.call(f"pickle round trip of {label}", lambda: pickle.loads(pickle.dumps(obj)))
    for i in range(300 * ITERATIONS):
        label, (fn, args) = g.pick(reduced)
        bad = _mutated(g, args)
        bad = bad if isinstance(bad, tuple) else (bad,)
        g.call(f"#{i} {label}'s rebuild with {_short_repr(bad)}", fn, *bad)


def group_contexts(g):
    """Objects of one device used while the other is current: arrays copied and launched
    across, events recorded on the other's streams, devices switched at random in between
    (the test driver has two devices)."""
    cuda, np = g.cuda, g.np
    if len(cuda.gpus) < 2:
        return
    k = cuda.jit(_kernel_body)
    per_device = []
    for n in range(2):
        with cuda.gpus[n]:
            s = cuda.stream()
            per_device.append([(f"d{n}", cuda.to_device(np.zeros(8))), (f"s{n}", s),
                               (f"e{n}", cuda.event()), (f"ctx{n}", cuda.current_context()),
                               (f"view{n}", cuda.to_device(np.zeros((4, 4)))[::2, 1:]),
                               (f"mapped{n}", cuda.mapped_array(8)),
                               (f"ptr{n}", cuda.current_context().memalloc(64))])

    def obj():
        return g.pick(g.pick(per_device))

    def switch():
        n = g.rng.randint(0, 1)
        return (f"select_device({n})", lambda: cuda.select_device(n)) if g.chance(0.5) else \
            (f"gpus[{n}] push/pop", lambda: _enter_exit(cuda.gpus[n]))

    for i in range(300 * ITERATIONS):
        if g.chance(0.3):
            sl, fn = switch()
            g.call(f"#{i} {sl}", fn)
        (al, a), (bl, b) = obj(), obj()
        op = g.rng.randrange(8)
        if op == 0 and hasattr(a, "copy_to_device"):
            g.call(f"#{i} {al}.copy_to_device({bl})", a.copy_to_device, b)
        elif op == 1 and hasattr(a, "copy_to_host"):
            g.call(f"#{i} {al}.copy_to_host(stream={bl})", a.copy_to_host, stream=b)
        elif op == 2:
            g.call(f"#{i} k[1, 1, {bl}]({al})", lambda: k[1, 1, b](a))
        elif op == 3 and hasattr(a, "record"):
            g.call(f"#{i} {al}.record({bl})", a.record, b)
        elif op == 4 and hasattr(a, "wait"):
            g.call(f"#{i} {al}.wait({bl})", a.wait, b)
        elif op == 5:
            g.call(f"#{i} event_elapsed_time({al}, {bl})", cuda.event_elapsed_time, a, b)
        elif op == 6:
            g.call(f"#{i} to_device({al}, stream={bl})", cuda.to_device, a, stream=b)
        else:
            ml, m = g.pick(_methods(a) or [("__repr__", a.__repr__)])
            _call_randomly(g, f"#{i} {al}.{ml}", m, 1)


GROUPS = {"module": group_module, "contexts": group_contexts, "arrays": group_arrays, "index": group_index,
          "cai": group_cai, "launch": group_launch, "objects": group_objects,
          "compile": group_compile, "ufuncs": group_ufuncs, "types": group_types,
          "pickles": group_pickles}


def run_group(group):
    import faulthandler
    faulthandler.enable()
    import nbcuda as cuda
    g = Gen(cuda, group)
    GROUPS[group](g)
    g.drop_numpy_errors()
    g.run.finish()


# ---------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_random_arguments(cuda, tdrv, group):
    assert check_child(group, script=__file__) > 100


# ---------------------------------------------------------------------------- regressions
# What the random calls found, pinned down: each crashed (or raised SystemError) before.


def test_host_arrays_of_objects_are_refused(cuda, tdrv):
    # numpy made an object array over the new memory's garbage: a copy or its end crashed
    import numpy as np
    for make in [cuda.pinned_array, cuda.mapped_array, cuda.managed_array]:
        with pytest.raises(TypeError, match="holds Python objects"):
            make(4, dtype=object)
        with pytest.raises(TypeError, match="holds Python objects"):
            make(2, dtype=[("a", "f8"), ("b", "O")])
    for make in [cuda.pinned_array_like, cuda.mapped_array_like, cuda.managed_array_like]:
        with pytest.raises(TypeError, match="holds Python objects"):
            make(np.array([None, 1], dtype=object))
    assert cuda.pinned_array(2, dtype=np.float32).dtype == np.float32


def test_copy_to_host_into_objects_is_refused(cuda, tdrv):
    # the device's bytes became the object array's references (a crash when numpy read them);
    # a gufunc's host output given as any object went the same way
    import numpy as np
    d = cuda.to_device(np.arange(3.0))
    with pytest.raises(TypeError, match="incompatible dtype"):
        d.copy_to_host(np.array([None] * 3, dtype=object))
    with pytest.raises(TypeError, match="incompatible dtype"):
        d[::2].copy_to_host(np.array([None] * 2, dtype=object))  # the strided path
    gu = cuda.guvectorize(["void(float64[:], float64[:])"], "(n)->()")(_row_sum)
    with pytest.raises(TypeError, match="incompatible dtype"):
        gu(np.zeros(3), np.array(None, dtype=object))
    assert d.copy_to_host(np.zeros(3, np.int64)).dtype == np.int64  # same bytes: as before


def test_gufunc_out_without_inputs(cuda, tdrv):
    # out= given, the inputs not: the inputs were read past the end of the arguments
    import numpy as np
    gu = cuda.guvectorize(["void(float64[:], float64[:])"], "(n)->()")(_row_sum)
    for call in [lambda: gu(out=np.zeros(2)), lambda: gu(out=cuda.device_array(2))]:
        with pytest.raises(TypeError, match="positional argument"):
            call()
    assert gu(np.ones((2, 3)), out=np.zeros(2)).shape == (2,)  # (no kernel runs here)


def test_jit_options_whose_truth_raises(cuda, tdrv):
    # each option's __bool__ was called with the previous one's error set: SystemError
    for kwargs in [{"device": RaisesEverywhere(), "fastmath": RaisesEverywhere()},
                   {"fastmath": RaisesEverywhere()}, {"forceinline": RaisesEverywhere()},
                   {"device": True, "lineinfo": RaisesEverywhere()}]:
        with pytest.raises(Boom):
            cuda.jit(_two_args, **kwargs)
        with pytest.raises(Boom):
            cuda.jit("void(float64[:])", **kwargs)


def test_rebuild_jit_checks_the_config(cuda, tdrv):
    # a pickled config is data: links and extensions of any type were read as tuples
    # (a crash), bad ints and raising flags left errors set (SystemError)
    k = cuda.jit("void(float64[:])")(_kernel_body)
    rebuild, (config, fstate) = k.__reduce__()
    config = list(config)
    for index, value in [(10, 5), (13, 5), (10, RaisesEverywhere()), (13, RaisesEverywhere()),
                         (8, -1), (8, "x"), (12, 2**70), (1, RaisesEverywhere()),
                         (4, RaisesEverywhere()), (9, RaisesEverywhere()), (10, [object()])]:
        bad = tuple(config[:index] + [value] + config[index + 1:])
        with pytest.raises((TypeError, ValueError, OverflowError, Boom)):
            rebuild(bad, fstate)
    assert rebuild(tuple(config), fstate).signatures == k.signatures


def test_transpose_axes_that_do_not_convert(cuda, tdrv):
    # the second bad axis was converted with the first one's error set: SystemError
    import numpy as np
    d = cuda.to_device(np.zeros((2, 3)))
    for axes in [(HugeIndex(), BadIndex()), (BadIndex(), "x"), (1.5, HugeIndex())]:
        with pytest.raises((TypeError, OverflowError)):
            d.transpose(axes)


def test_memset_stream_whose_truth_raises(cuda, tdrv):
    import numpy as np
    p = cuda.to_device(np.zeros(8)).gpu_data
    with pytest.raises(ValueError, match="truth value"):
        p.memset(1, 2, np.zeros(4))  # `if stream:` of an array raises
    with pytest.raises(Boom):
        p.memset(1, stream=RaisesEverywhere())


def test_async_set_future_whose_done_raises(cuda, tdrv):
    class Future:
        def done(self):
            return RaisesEverywhere()
    with pytest.raises(Boom):
        cuda._async_set(Future(), None, 0)



def test_reshape_of_empty_array_to_huge_extents(cuda, tdrv):
    # the dense strides of (0, 2**63 - 1), the size of (2**62, 2**62, 0) overflowed int64
    # (undefined behaviour, UBSan)
    import numpy as np
    d = cuda.to_device(np.zeros((0, 3)))
    for shape in [(0, 2**63 - 1), (0, 2**61, 5), (2**62, 2**62, 0, 0), (2**62, 0, 4)]:
        with pytest.raises(ValueError, match="array is too big"):
            d.reshape(*shape)
    assert d.reshape(3, 0).shape == (3, 0)


if __name__ == "__main__":
    run_group(sys.argv[1])
