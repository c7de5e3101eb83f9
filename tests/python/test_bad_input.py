"""Bad input never crashes the nbcuda module.

Every public callable of the module, every method and property of its classes, the operators
they define ([], ==, len, iter, call), kernels and launch configurations are called with a table
of hostile arguments (None, wrong types, huge and negative ints, nan, odd numpy arrays, objects
with a malformed __cuda_array_interface__ / __cuda_stream__ / __array_interface__, objects
whose __index__ / __int__ / __bool__ / __len__ / __iter__ raise, ...). Each call must raise an
Exception or succeed; it must never crash, hang, raise SystemError (a C function that returned
NULL without an exception, or a result with one set) or raise an exception without a message.

The targets are found by introspection (dir() of the module and of the classes), so new API is
covered without editing this file; SKIP lists the few callables that block or end the process's
CUDA state. The calls of one group run in a fresh interpreter: the parent reads the child's
progress ("CALL ..." lines) so a segfault or a hang names the offending call. Run one group by
hand with `python tests/python/test_bad_input.py GROUP` (NBCUDA_DRIVER set to the test driver).
"""
import functools
import inspect
import math
import os
import re
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

# Callables never called with hostile arguments: they block (the dispatcher thread's body) or
# reset every device under the objects the other calls use.
SKIP = {
    "nbcuda._dispatch_callbacks",  # the callback thread's body: loops until the process ends
    "nbcuda.close",                # resets every device: called on its own in test_close_*
}


# ---------------------------------------------------------------------------- hostile values


class Boom(Exception):
    """Raised by the hostile objects' special methods."""


def _raise(*_args, **_kwargs):
    raise Boom("hostile object")


class RaisesEverywhere:
    """Every conversion protocol raises."""
    __index__ = __int__ = __float__ = __bool__ = __len__ = __iter__ = _raise
    __getitem__ = __eq__ = __hash__ = __complex__ = __str__ = __repr__ = _raise


class RaisingGetattr:
    def __getattr__(self, name):
        raise Boom(f"no {name}")


class LiesAboutLen:
    """A sequence whose __len__ says 3 and whose items run out (or never do)."""

    def __len__(self):
        return 3

    def __getitem__(self, i):
        if i >= 1:
            raise IndexError(i)
        return 1


class NegativeLen:
    def __len__(self):
        return -1


class HugeLen:
    def __len__(self):
        return sys.maxsize

    def __getitem__(self, i):
        return 1


class BadIndex:
    def __index__(self):
        return "not an int"


class HugeIndex:
    def __index__(self):
        return 2**70


def _with_property(attr, desc):
    """An object whose property `attr` returns desc (or raises when desc is Boom)."""
    def get(self):
        if desc is Boom:
            raise Boom(attr)
        return desc
    cls = type("Has" + attr.strip("_"), (), {attr: property(get),
                                              "__repr__": lambda self: f"<{attr}={desc!r}>"})
    return cls()


def Cai(desc):
    return _with_property("__cuda_array_interface__", desc)


def ArrayInterface(desc):
    """(the data points at a real host buffer where the test gives one)"""
    return _with_property("__array_interface__", desc)


class CudaStream:
    """An object whose __cuda_stream__ returns `value` (or raises)."""

    def __init__(self, value, callable_=True):
        self.value = value
        self.callable_ = callable_

    def _get(self):
        if self.value is Boom:
            raise Boom("__cuda_stream__")
        return self.value

    @property
    def __cuda_stream__(self):
        if self.callable_:
            return self._get
        return self._get()

    def __repr__(self):
        return f"CudaStream({self.value!r}, callable_={self.callable_})"


def _deep_tuple(depth):
    t = ()
    for _ in range(depth):
        t = (t,)
    return t


def _deep_list(depth):
    t = [1]
    for _ in range(depth):
        t = [t]
    return t


def hostile_values(cuda):
    """[(label, value)]: the arguments every callable gets."""
    import numpy as np

    buf = np.zeros(8)  # a real host buffer for the __array_interface__ objects
    ptr = buf.ctypes.data
    dev = cuda.to_device(np.zeros(4))
    dptr = dev.device_pointer
    cai_ok = {"shape": (4,), "typestr": "<f8", "data": (dptr, False), "version": 3,
              "strides": None}
    ai_ok = {"shape": (4,), "typestr": "<f8", "data": (ptr, False), "version": 3}

    def changed(base, make, change):  # KeyError as a value drops the key
        d = {k: v for k, v in base.items() if change.get(k) is not KeyError}
        d.update((k, v) for k, v in change.items() if v is not KeyError)
        return make(d)

    def cai(**change):
        return changed(cai_ok, Cai, change)

    def ai(**change):
        return changed(ai_ok, ArrayInterface, change)

    unaligned = np.frombuffer(bytearray(8 * 4 + 1), dtype=np.float64, offset=1, count=4)
    readonly = np.zeros(4)
    readonly.flags.writeable = False
    values = [
        ("None", None), ("str", "x"), ("empty str", ""), ("bytes", b"x"), ("list", [1]),
        ("empty list", []), ("dict", {"a": 1}), ("empty dict", {}), ("set", {1}),
        ("float", 1.5), ("bool", True), ("complex", 1j), ("object()", object()),
        ("0", 0), ("-1", -1), ("2**31", 2**31), ("2**32", 2**32), ("2**63", 2**63),
        ("-2**63-1", -2**63 - 1), ("2**64", 2**64), ("2**200", 2**200), ("-2**200", -2**200),
        ("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf),
        ("()", ()), ("(None,)", (None,)), ("(-1,)", (-1,)), ("(2**63,)", (2**63,)),
        ("(1.5, 2)", (1.5, 2)), ("(0, 0, 0)", (0, 0, 0)), ("(1,)*5", (1,) * 5),
        ("(1,)*40", (1,) * 40), ("(2**31,)*3", (2**31,) * 3), ("(2**21,)*3", (2**21,) * 3),
        ("deep tuple", _deep_tuple(200)), ("very deep tuple", _deep_tuple(100000)),
        ("deep list", _deep_list(200)),
        ("type", int), ("function", _raise), ("lambda", lambda *a: None),
        ("generator", (i for i in range(3))),
        ("RaisesEverywhere", RaisesEverywhere()), ("RaisingGetattr", RaisingGetattr()),
        ("LiesAboutLen", LiesAboutLen()), ("NegativeLen", NegativeLen()),
        ("HugeLen", HugeLen()), ("BadIndex", BadIndex()), ("HugeIndex", HugeIndex()),
        ("np.int64(-1)", np.int64(-1)), ("np.uint64 max", np.uint64(2**64 - 1)),
        ("np.float32(nan)", np.float32("nan")), ("np.str_", np.str_("x")),
        ("array object", np.array([None, 1], dtype=object)),
        ("array str", np.array(["ab", "c"])),
        ("array structured", np.zeros(2, dtype=[("a", "i4"), ("b", "f8")])),
        ("array big-endian", np.zeros(4, dtype=">f8")),
        ("array 0-d", np.array(1.0)), ("array empty", np.zeros(0)),
        ("array empty 2-d", np.zeros((0, 3))),
        ("array non-contiguous", np.zeros(8)[::2]), ("array negative stride", np.zeros(4)[::-1]),
        ("array zero stride", np.broadcast_to(np.zeros(1), (4,))),
        ("array fortran", np.zeros((3, 2), order="F")), ("array read-only", readonly),
        ("array unaligned", unaligned), ("array datetime64", np.zeros(2, dtype="M8[s]")),
        ("array float128", np.zeros(2, dtype=np.longdouble)),
        ("array complex256", np.zeros(2, dtype=np.clongdouble)),
        ("array void", np.zeros(2, dtype="V8")), ("array bool", np.zeros(2, dtype=bool)),
        ("array float16", np.zeros(2, dtype=np.float16)),
        ("array 32-d", np.zeros((1,) * 32)),
        ("np.dtype object", np.dtype(object)), ("np.dtype structured", np.dtype("i4,f8")),
        ("np.dtype big-endian", np.dtype(">i4")), ("np.dtype V0", np.dtype("V0")),
        ("dtype str garbage", "float33"),
        ("cai raises", Cai(Boom)), ("cai None", Cai(None)), ("cai int", Cai(1)),
        ("cai empty", Cai({})), ("cai list", Cai([1, 2])),
        ("cai no shape", cai(shape=KeyError)), ("cai no typestr", cai(typestr=KeyError)),
        ("cai no data", cai(data=KeyError)), ("cai no version", cai(version=KeyError)),
        ("cai shape None", cai(shape=None)), ("cai shape int", cai(shape=4)),
        ("cai shape str", cai(shape="4")), ("cai shape negative", cai(shape=(-4,))),
        ("cai shape float", cai(shape=(4.0,))), ("cai shape huge", cai(shape=(2**62, 2**62))),
        ("cai shape 2**64", cai(shape=(2**64,))), ("cai shape 40-d", cai(shape=(1,) * 40)),
        ("cai shape raising", cai(shape=(RaisesEverywhere(),))),
        ("cai typestr garbage", cai(typestr="garbage")), ("cai typestr <f3", cai(typestr="<f3")),
        ("cai typestr int", cai(typestr=8)), ("cai typestr empty", cai(typestr="")),
        ("cai typestr |O", cai(typestr="|O8")), ("cai typestr <U4", cai(typestr="<U4")),
        ("cai typestr >f8", cai(typestr=">f8")), ("cai typestr |V0", cai(typestr="|V0")),
        ("cai typestr <f999999999999", cai(typestr="<f999999999999")),
        ("cai data None", cai(data=None)), ("cai data int", cai(data=dptr)),
        ("cai data str", cai(data=("x", False))), ("cai data 1-tuple", cai(data=(dptr,))),
        ("cai data empty", cai(data=())), ("cai data negative", cai(data=(-1, False))),
        ("cai data 2**64", cai(data=(2**64, False))), ("cai data float", cai(data=(1.5, False))),
        ("cai data null", cai(data=(0, False))), ("cai data readonly raising",
                                                  cai(data=(dptr, RaisesEverywhere()))),
        ("cai strides wrong length", cai(strides=(8, 8))), ("cai strides str", cai(strides="8")),
        ("cai strides None item", cai(strides=(None,))), ("cai strides negative",
                                                        cai(strides=(-8,))),
        ("cai strides huge", cai(strides=(2**62,))), ("cai strides zero", cai(strides=(0,))),
        ("cai version str", cai(version="3")), ("cai version 99", cai(version=99)),
        ("cai version -1", cai(version=-1)), ("cai mask", cai(mask=np.zeros(4))),
        ("cai stream str", cai(stream="x")), ("cai stream 0", cai(stream=0)),
        ("cai stream -1", cai(stream=-1)), ("cai stream 2**70", cai(stream=2**70)),
        ("cai stream float", cai(stream=1.5)), ("cai descr garbage", cai(descr="x")),
        ("__cuda_stream__ raises", CudaStream(Boom)),
        ("__cuda_stream__ None", CudaStream(None)), ("__cuda_stream__ int", CudaStream(0)),
        ("__cuda_stream__ (0,)", CudaStream((0,))), ("__cuda_stream__ (x, 1)", CudaStream(("x", 1))),
        ("__cuda_stream__ (0, x)", CudaStream((0, "x"))),
        ("__cuda_stream__ (0, -1)", CudaStream((0, -1))),
        ("__cuda_stream__ (0, 2**70)", CudaStream((0, 2**70))),
        ("__cuda_stream__ (99, 0)", CudaStream((99, 0))),
        ("__cuda_stream__ (0, 1, 2)", CudaStream((0, 1, 2))),
        ("__cuda_stream__ not callable", CudaStream((0, 0), callable_=False)),
        ("__array_interface__ raises", ArrayInterface(Boom)),
        ("__array_interface__ empty", ArrayInterface({})),
        ("__array_interface__ no data", ai(data=KeyError)),
        ("__array_interface__ data str", ai(data=("x", False))),
        ("__array_interface__ typestr garbage", ai(typestr="garbage")),
        ("__array_interface__ shape negative", ai(shape=(-4,))),
        ("__array_interface__ shape str", ai(shape="4")),
        ("__array_interface__ version 99", ai(version=99)),
    ]
    return values


# ---------------------------------------------------------------------------- targets


def _signature(obj):
    """[(name, kind)] of obj's parameters from inspect.signature (the text signature of a
    function of the module): kind is 'pos' (required), 'opt' (has a default), 'star' (*args)
    or 'kw' (keyword-only). None when inspect finds no signature."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    params = []
    for p in sig.parameters.values():
        if p.kind == p.VAR_KEYWORD:
            continue
        if p.kind == p.VAR_POSITIONAL:
            params.append((p.name, "star"))
        elif p.kind == p.KEYWORD_ONLY:
            params.append((p.name, "kw"))
        else:
            params.append((p.name, "pos" if p.default is p.empty else "opt"))
    return params


def _plain(a):
    a[0] = 1


def _valid_args(cuda):
    """A plausible value per parameter name, for the parameters not under attack."""
    import numpy as np
    return {
        "shape": 4, "dtype": np.float64, "strides": None, "order": "C", "stream": 0,
        "ary": np.zeros(4), "obj": np.zeros(4), "arrays": np.zeros(4), "pyfunc": _plain,
        "func_or_sig": None, "sig": "void(float64[:])", "desc": {
            "shape": (4,), "typestr": "<f8", "data": (cuda.to_device(np.zeros(4)).device_pointer,
                                                      False), "version": 3},
        "devnum": 0, "i": 0, "device_id": 0, "handle": 0, "evtstart": cuda.event(),
        "evtend": cuda.event(), "ev": cuda.event(), "peer_device": 0, "callback":
            (lambda *a: None), "arg": None, "shapes": 4, "section": 2, "axes": None,
            "axis": None, "timing": True, "sync": True, "owner": None, "copy": True, "to": None,
    }


def targets(cuda, group):
    """[(label, callable)] of one group: 'module', or a class name with its instances."""
    import numpy as np
    if group == "module":
        out = []
        for name in sorted(dir(cuda)):
            obj = getattr(cuda, name)
            if name.startswith("__") or isinstance(obj, type) or not callable(obj):
                continue
            if type(obj).__name__ in ("Type", "Stub"):
                continue  # their own groups
            out.append((f"nbcuda.{name}", obj))
        return out
    instances = _instances(cuda, group)
    out = []
    for label, inst in instances:
        cls = type(inst)
        own = {}
        for klass in cls.__mro__:
            if klass.__module__ in ("nbcuda",) or klass.__module__.startswith("nbcuda"):
                for k, v in vars(klass).items():
                    own.setdefault(k, v)
        for name in sorted(own):
            if name in ("__new__", "__init__", "__init_subclass__", "__doc__", "__module__",
                        "__dict__", "__vectorcalloffset__", "__class_getitem__"):
                continue
            try:
                attr = getattr(inst, name)
            except Exception:
                continue
            if callable(attr):
                out.append((f"{label}.{name}", attr))
    return out


def _kernel(cuda):
    @cuda.jit
    def k(a):
        a[0] = 1
    return k


def _instances(cuda, group):
    import numpy as np
    if group == "Context":
        return [("ctx", cuda.current_context())]
    if group == "Device":
        return [("dev", cuda.get_current_device())]
    if group == "Stream":
        return [("stream", cuda.stream()), ("default_stream", cuda.default_stream()),
                ("external_stream", cuda.external_stream(0x1234))]
    if group == "Event":
        return [("ev", cuda.event()), ("ev_notiming", cuda.event(timing=False))]
    if group == "DeviceNDArray":
        return [("arr", cuda.to_device(np.arange(12.0).reshape(3, 4))),
                ("arr1d", cuda.device_array(6, dtype=np.int32)),
                ("arr0d", cuda.device_array((), dtype=np.float32)),
                ("arr_empty", cuda.device_array(0))]
    if group == "Kernel":
        k = _kernel(cuda)
        return [("kernel", k), ("kernel_sig", cuda.jit("void(float64[:])")(_plain)),
                ("kernel[1, 1]", k[1, 1])]
    if group == "Type":
        return [("float32", cuda.float32), ("float32[:, ::1]", cuda.float32[:, ::1]),
                ("void(float32[:])", cuda.void(cuda.float32[:])), ("none", cuda.none)]
    if group == "Stub":
        return [(f"nbcuda.{n}", getattr(cuda, n)) for n in sorted(dir(cuda))
                if type(getattr(cuda, n)).__name__ == "Stub"] + \
               [("nbcuda.atomic.add", cuda.atomic.add)]
    if group == "Misc":
        return [("runtime", cuda.runtime), ("gpus", cuda.gpus), ("gpus[0]", cuda.gpus[0]),
                ("defer_cleanup()", cuda.defer_cleanup()), ("profiling()", cuda.profiling()),
                ("auto_synchronize()", cuda.stream().auto_synchronize())]
    raise KeyError(group)


GROUPS = ["module", "Context", "Device", "Stream", "Event", "DeviceNDArray", "Kernel", "Type",
          "Stub", "Misc", "operators", "launch"]


# ---------------------------------------------------------------------------- the child


def _invoke(fn, args, kwargs):
    # Through functools.partial: its C call path checks the result (the interpreter's fast
    # path for builtins does not), so a C function that returns a result with an exception
    # set raises SystemError here instead of in a later, unrelated call.
    return functools.partial(fn, *args, **kwargs)()


LOG_OK = bool(os.environ.get("NBCUDA_BAD_INPUT_LOG_OK"))  # prints "OK <call>" per success


class Runner:
    def __init__(self, cuda):
        self.cuda = cuda
        self.bad = []
        self.calls = 0

    def call(self, label, fn, *args, **kwargs):
        """fn(*args, **kwargs)'s result, or None when it raised."""
        print("CALL", label, flush=True)
        self.calls += 1
        try:
            result = _invoke(fn, args, kwargs)
            if LOG_OK:
                print("OK", label, flush=True)
            return result
        except SystemError as e:
            self.bad.append(f"{label}: SystemError: {e}")
        except Exception as e:  # noqa: BLE001 - any Exception is a clean answer
            if not str(e) and not isinstance(e, (Boom, StopIteration, KeyError, IndexError,
                                                       MemoryError)):
                self.bad.append(f"{label}: {type(e).__name__} without a message")
        except BaseException as e:  # noqa: BLE001
            self.bad.append(f"{label}: {type(e).__name__} is not an Exception: {e}")

    def finish(self):
        """Reports to the parent and ends the child."""
        print(f"DONE {self.calls} calls", flush=True)
        for line in self.bad:
            print("BAD", line, flush=True)
        sys.stdout.flush()
        os._exit(1 if self.bad else 0)  # skips atexit/finalizers: their faults are reported apart


def _fuzz_callable(run, label, fn, hostile, valid):
    params = _signature(fn)
    run.call(f"{label}()", fn)
    run.call(f"{label}(*[1]*12)", fn, *([1] * 12))
    run.call(f"{label}(bogus_keyword=1)", fn, bogus_keyword=1)
    required = [] if params is None else [valid.get(n, 1) for n, k in params if k == "pos"]
    run.call(f"{label}(<valid>, bogus_keyword=1)", fn, *required, bogus_keyword=1)
    for hl, h in hostile:
        run.call(f"{label}({hl})", fn, h)
        run.call(f"{label}({hl}, {hl})", fn, h, h)
        if not params:
            continue
        prefix = []
        for i, (name, kind) in enumerate(params):
            if kind in ("pos", "opt") and i > 0:
                run.call(f"{label}(<valid>*{i}, {name}={hl})", fn, *prefix, h)
            if kind in ("opt", "kw"):
                run.call(f"{label}(<valid>, {name}={hl}) [keyword]", fn, *required, **{name: h})
            if kind == "star":
                run.call(f"{label}(<valid>*{i}, *[{hl}]*3)", fn, *prefix, h, h, h)
                break
            prefix.append(valid.get(name, 1))


def _fuzz_operators(run, label, obj, hostile):
    import operator
    for hl, h in hostile:
        run.call(f"{label}[{hl}]", operator.getitem, obj, h)
        run.call(f"{label} == {hl}", operator.eq, obj, h)
        run.call(f"{label} < {hl}", operator.lt, obj, h)
    run.call(f"len({label})", len, obj)
    run.call(f"list({label})", list, obj)
    run.call(f"hash({label})", hash, obj)
    run.call(f"repr({label})", repr, obj)
    run.call(f"str({label})", str, obj)
    run.call(f"int({label})", int, obj)
    run.call(f"bool({label})", bool, obj)
    run.call(f"dir({label})", dir, obj)


def _fuzz_attributes(run, label, obj, hostile):
    for name in dir(obj):
        if name.startswith("__") and name not in ("__cuda_array_interface__",
                                                  "__cuda_stream__", "__name__", "__qualname__"):
            continue
        run.call(f"{label}.{name}", getattr, obj, name)
        for hl, h in hostile[:12]:
            run.call(f"{label}.{name} = {hl}", setattr, obj, name, h)
        run.call(f"del {label}.{name}", delattr, obj, name)
    for hl, h in hostile:
        if isinstance(h, str):
            run.call(f"getattr({label}, {hl})", getattr, obj, h)


def run_group(group):
    import faulthandler
    faulthandler.enable()
    import nbcuda as cuda
    hostile = hostile_values(cuda)
    valid = _valid_args(cuda)
    run = Runner(cuda)
    if group == "operators":
        import numpy as np
        for label, obj in [("arr", cuda.to_device(np.arange(12.0).reshape(3, 4))),
                           ("arr0d", cuda.device_array((), dtype=np.float32)),
                           ("float32", cuda.float32), ("float32[:]", cuda.float32[:]),
                           ("gpus", cuda.gpus), ("ctx", cuda.current_context()),
                           ("dev", cuda.get_current_device()), ("stream", cuda.stream()),
                           ("ev", cuda.event()), ("kernel", _kernel(cuda)),
                           ("nbcuda.grid", cuda.grid), ("nbcuda.atomic", cuda.atomic),
                           ("runtime", cuda.runtime), ("mapped", cuda.mapped_array(4)),
                           ("managed", cuda.managed_array((2, 2))),
                           ("pinned", cuda.pinned_array(4))]:
            _fuzz_operators(run, label, obj, hostile)
            _fuzz_attributes(run, label, obj, hostile)
        arr = cuda.to_device(np.arange(12.0).reshape(3, 4))
        for hl, h in hostile:
            run.call(f"arr[{hl}] = 1", arr.__setitem__, h, 1)
            run.call(f"arr[0] = {hl}", arr.__setitem__, 0, h)
            run.call(f"arr[:] = {hl}", arr.__setitem__, slice(None), h)
            run.call(f"arr[1:, ::2] = {hl}", arr.__setitem__, (slice(1, None), slice(None, None, 2)), h)
            run.call(f"arr[{hl}:]", arr.__getitem__, slice(h, None))
            run.call(f"arr[::{hl}]", arr.__getitem__, slice(None, None, h))
            run.call(f"arr[0, {hl}]", arr.__getitem__, (0, h))
            run.call(f"arr[{hl}, ...]", arr.__getitem__, (h, Ellipsis))
            run.call(f"float32[{hl}, :]", cuda.float32.__getitem__, (h, slice(None)))
            run.call(f"float32[::{hl}]", cuda.float32.__getitem__, slice(None, None, h))
            run.call(f"float32[{hl}:]", cuda.float32.__getitem__, slice(h, None))
            run.call(f"void({hl})", cuda.void, h)
            run.call(f"float32({hl})", cuda.float32, h)
            run.call(f"float32[:]({hl})", cuda.float32[:], h)
    elif group == "launch":
        import numpy as np
        k = _kernel(cuda)
        a = cuda.to_device(np.zeros(4))
        for hl, h in hostile:
            run.call(f"k[{hl}]", k.__getitem__, h)
            run.call(f"k[{hl}, 1]", k.__getitem__, (h, 1))
            run.call(f"k[1, {hl}]", k.__getitem__, (1, h))
            run.call(f"k[1, 1, {hl}]", k.__getitem__, (1, 1, h))
            run.call(f"k[1, 1, 0, {hl}]", k.__getitem__, (1, 1, 0, h))
            run.call(f"k[{hl}, 1](a)", lambda: k[h, 1](a))
            run.call(f"k[1, {hl}](a)", lambda: k[1, h](a))
            run.call(f"k[1, 1, {hl}](a)", lambda: k[1, 1, h](a))
            run.call(f"k[1, 1, 0, {hl}](a)", lambda: k[1, 1, 0, h](a))
            run.call(f"k[1, 1]({hl})", lambda: k[1, 1](h))
            run.call(f"k[1, 1](a, {hl})", lambda: k[1, 1](a, h))
            run.call(f"k({hl})", k, h)
        for grid in [0, -1, 2**31, 2**40, (0, 1), (1, 0, 1), (2**31, 2**16, 2**16),
                     (1, 1, 1, 1), 1.0, "1"]:
            run.call(f"k[{grid!r}, 1](a)", lambda: k[grid, 1](a))
        for block in [0, -1, 1025, 2**40, (32, 32, 2), (1, 1, 65), (1, 1, 1, 1), 1.0]:
            run.call(f"k[1, {block!r}](a)", lambda: k[1, block](a))
        for shared in [-1, 2**31, 2**40, 2**64, 1.5]:
            run.call(f"k[1, 1, 0, {shared!r}](a)", lambda: k[1, 1, 0, shared](a))
        run.call("k[1, 1]()", lambda: k[1, 1]())
        run.call("k[1, 1](a, a)", lambda: k[1, 1](a, a))
        run.call("k[1, 1](a=a)", lambda: k[1, 1](a=a))
        ks = cuda.jit("void(float64[:])")(_plain)
        for hl, h in hostile:
            run.call(f"ks[1, 1]({hl})", lambda: ks[1, 1](h))
        run.call("ks[1, 1](a, a)", lambda: ks[1, 1](a, a))
    else:
        for label, fn in targets(cuda, group):
            if label in SKIP:
                continue
            _fuzz_callable(run, label, fn, hostile, valid)
    run.finish()


# ---------------------------------------------------------------------------- the tests


# Per group; NBCUDA_BAD_INPUT_TIMEOUT raises it for slow builds (ASan maps shadow memory for
# every huge allocation a hostile shape asks for).
GROUP_TIMEOUT = float(os.environ.get("NBCUDA_BAD_INPUT_TIMEOUT", "60"))


def _run_child(group, timeout=GROUP_TIMEOUT, script=__file__):
    with tempfile.TemporaryFile("w+") as out:
        p = subprocess.Popen([sys.executable, "-X", "faulthandler", os.path.abspath(script),
                              group], stdout=out, stderr=subprocess.STDOUT, text=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            rc = "timeout"
        out.seek(0)
        text = out.read()
    return rc, text


def check_child(group, script=__file__):
    """Runs one group in a child (run_group of `script`); fails the test on a crash, a hang or
    a bad answer; returns the number of calls made."""
    rc, text = _run_child(group, script=script)
    lines = text.splitlines()
    calls = [line[5:] for line in lines if line.startswith("CALL ")]
    bad = [line[4:] for line in lines if line.startswith("BAD ")]
    done = any(line.startswith("DONE ") for line in lines)
    if not done:
        last = calls[-1] if calls else "(before the first call)"
        tail = "\n".join(line for line in lines[-40:] if not line.startswith("CALL "))
        pytest.fail(f"group {group}: the child died ({rc}) in {last}\n{tail}")
    assert not bad, f"group {group}: " + "\n".join(bad)
    assert rc == 0, text[-2000:]
    return len(calls)


@pytest.mark.parametrize("group", GROUPS)
def test_hostile_arguments(cuda, tdrv, group):
    assert check_child(group) > 50


def test_introspection_finds_the_api(cuda, tdrv):
    """The generated targets cover the public API: a new function or method is fuzzed."""
    labels = {label for g in GROUPS if g not in ("operators", "launch")
              for label, _ in targets(cuda, g)}
    for want in ["nbcuda.device_array", "nbcuda.to_device", "nbcuda.jit", "nbcuda.compile",
                 "nbcuda.as_cuda_array", "nbcuda.pinned_array", "nbcuda.mapped",
                 "ctx.get_memory_info", "dev.get_primary_context", "stream.add_callback",
                 "ev.record", "arr.copy_to_host", "arr.reshape", "kernel.inspect_asm",
                 "float32.__getitem__", "nbcuda.grid.__call__", "runtime.get_version"]:
        assert want in labels, want
    assert _signature(cuda.device_array)[:2] == [("shape", "pos"), ("dtype", "opt")]


# ---------------------------------------------------------------------------- regressions
# What the fuzzing found, pinned down (each passed silently or raised SystemError before).


def test_device_array_strides_are_checked(cuda, tdrv):
    # strides="x" (and any non-int item) left a TypeError set under a returned array:
    # SystemError "returned a result with an exception set"
    for bad in ["x", ("x", 8), (None, 8), (1.5, 8), (2**63, 8)]:
        with pytest.raises((TypeError, ValueError, OverflowError)):
            cuda.device_array((4, 4), strides=bad)
    with pytest.raises(ValueError, match="do not match the 2 dimension"):
        cuda.device_array((4, 4), strides=(8,))  # was: the missing stride silently dense
    with pytest.raises(ValueError, match="must not be negative"):
        cuda.device_array((4, 4), strides=(-8, 8))
    with pytest.raises(ValueError, match="span more memory"):
        cuda.device_array(4, strides=(2**62,))
    # the allocation covers the extent the strides describe (was 128 bytes: out of bounds)
    a = cuda.device_array((4, 4), strides=(800, 8))
    assert a.strides == (800, 8) and a.nbytes == 3 * 800 + 3 * 8 + 8
    assert cuda.device_array((0, 4), strides=(2**62, 8)).nbytes == 0


def test_device_array_size_overflow_is_refused(cuda, tdrv):
    # (2**31,)*3 doubles wrapped to 0 bytes: a "successful" 2**93-element array over nothing
    for shape in [(2**31,) * 3, (2**62, 4), (2**61, 2**61)]:
        with pytest.raises(ValueError, match="array is too big"):
            cuda.device_array(shape)
    with pytest.raises(ValueError, match="array is too big"):
        cuda.device_array((0, 2**62))  # as numpy: the dense strides would overflow
    assert cuda.device_array((0, 2**40)).size == 0


def test_cuda_array_interface_geometry_is_checked(cuda, tdrv):
    import numpy as np
    ptr = cuda.to_device(np.zeros(4)).device_pointer

    def desc(**change):
        d = {"shape": (4,), "typestr": "<f8", "data": (ptr, False), "version": 3}
        d.update(change)
        return Cai(d)

    # a negative extent gave nbytes 2**64 - 32; a huge shape wrapped to 0 bytes
    with pytest.raises(ValueError, match="negative dimensions"):
        cuda.as_cuda_array(desc(shape=(-4,)))
    with pytest.raises(ValueError, match="array is too big"):
        cuda.as_cuda_array(desc(shape=(2**62, 2**62)))
    with pytest.raises(TypeError):
        cuda.as_cuda_array(desc(strides=("x",)))
    assert cuda.as_cuda_array(desc()).nbytes == 32


def test_launch_dimensions_do_not_wrap(cuda, tdrv):
    import numpy as np
    k = _kernel(cuda)
    a = cuda.to_device(np.zeros(4))
    launches = tdrv.launch_count()
    # 2**32 + 1 was cast to unsigned: a launch of 1 block; sharedmem 2**32 launched with 0
    for config in [(2**32 + 1, 1), ((1, 2**32 + 1), 1), (1, 2**32 + 1), (1, (2**33, 1)),
                   (1, 1, 0, 2**32), (1, 1, 0, 2**200), (1, 1, 0, -1)]:
        with pytest.raises(ValueError):
            k[config](a)
    assert tdrv.launch_count() == launches
    k[1, 1, 0, 2**32 - 1]  # the largest sharedmem is a valid configuration


def test_overflowing_geometry_under_ubsan(cuda, tdrv):
    # each multiplied past int64 (undefined behaviour; found by the UBSan run)
    import numpy as np
    for make in [cuda.pinned_array, cuda.mapped_array, cuda.managed_array]:
        with pytest.raises(ValueError, match="array is too big"):
            make((2**31,) * 3)
        with pytest.raises(ValueError, match="array is too big"):
            make((4, 4), strides=(2**62, 8))
    arr = cuda.to_device(np.arange(4.0))
    with pytest.raises(ValueError):
        arr.reshape(2**31, 2**31, 2**31)
    with pytest.raises(ValueError):
        arr.reshape(-1, 2**40, 2**40)  # the known extents overflow: no size to infer from
    assert arr[::2**63].shape == (1,) and arr[::2**63].copy_to_host()[0] == 0.0
    assert arr[::-2**63].shape == (1,) and arr[::-2**63].copy_to_host()[0] == 3.0


def test_cuda_stream_protocol_version(cuda, tdrv):
    import numpy as np
    k = _kernel(cuda)
    a = cuda.to_device(np.zeros(4))
    for version in [99, "x", None, -1]:
        with pytest.raises(ValueError, match="version 0 expected"):
            k[1, 1, CudaStream((version, 0))](a)
        with pytest.raises(ValueError, match="version 0 expected"):
            cuda.event().record(CudaStream((version, 0)))


if __name__ == "__main__":
    run_group(sys.argv[1])


def test_function_without_source_is_a_clear_oserror(cuda):
    """A function whose code was compiled from an AST has no source text for the compiler: an
    OSError that says why (inspect's own error is its cause); exec() of the text itself
    compiles (nbcuda keeps it, test_exec_source.py), and so does the function defined through
    linecache, as IPython registers cells."""
    import ast
    import linecache
    text = "def k(a):\n    a[0] = 1\n"
    ns = {"cuda": cuda}
    exec(compile(ast.parse(text), "<from an ast>", "exec"), ns)
    with pytest.raises(OSError, match=r"from its Python source, and there is none for it in "
                                      r"'<from an ast>'") as e:
        cuda.compile_ptx(ns["k"], "void(int32[::1])", cc=(9, 0))
    assert isinstance(e.value.__cause__, OSError)
    ns = {"cuda": cuda}
    exec(text, ns)
    assert ".entry" in cuda.compile_ptx(ns["k"], "void(int32[::1])", cc=(9, 0))[0]
    name = "<nbcuda-test-cell>"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    ns = {"cuda": cuda}
    exec(compile(text, name, "exec"), ns)
    ptx, _ = cuda.compile_ptx(ns["k"], "void(int32[::1])", cc=(9, 0))
    assert ".entry" in ptx
