"""numba_suite.py — numba-cuda's own kernel tests (numba.cuda.tests.cudapy), run with
`from numba import cuda` bound to nbcuda: how much of numba-cuda's test suite nbcuda passes.

`numba.cuda` is replaced in sys.modules by a module that answers each name from nbcuda first
and from numba-cuda otherwise (the tests also use numba-cuda's internals: its types module,
config, testing helpers), after numba-cuda's testing helpers were imported; their compute
capability checks ask nbcuda's device. Each test module then runs under unittest and its
counts are printed: run, passed, failed, errors, skipped; the first line of each failure
goes to the log (with --verbose), so the list is a work list of numba-cuda behaviour nbcuda
lacks. Tests that check numba-cuda's own internals (its IR, its dispatcher's caches, its
FileCheck of the LLVM it emits) fail here by construction; the figure is informational, not
a pass/fail gate.

Fallbacks are recorded, so that the figure says what nbcuda passes by itself: every name the
bound module answers from numba-cuda (a name nbcuda lacks), and every global of a test module
that is numba-cuda's own implementation (an object or module of numba.cuda.* taken directly,
e.g. `from numba.cuda.cudadrv import driver`), is recorded against the test running at that
moment, or, at a module's import, against every test of the module. numba-cuda's testing
helpers (numba.cuda.testing, numba.cuda.tests) and its types module (numba.cuda.types, and
numba's own) are the exceptions: the tests are written in them. Two figures follow: tests
passed on nbcuda alone (no fallback), and tests passed with fallbacks, with the list of
numba-cuda names used (how many tests used each).

Usage: python tests/gpu/numba_suite.py [--verbose] [--json OUT] [module ...]
(default: MODULES, MODULES_ADDED, MODULES_THIRD, MODULES_FOURTH, MODULES_FIFTH, then
MODULES_SIXTH, MODULES_SEVENTH, each with its own summary line before the total)
Needs a GPU, numba-cuda, and nbcuda installed. On numpy >= 2.5 the aliases numba needs are
set here. Without the filecheck package (numba-cuda's testing imports it), a stub stands in
and the tests that use FileCheck fail."""
import collections
import importlib
import os
import sys
import types
import unittest

# The kernel-language modules of numba-cuda 0.30's cudapy tests (host-API ones are ported
# to tests/python/test_gpu_host_api.py; extension, cffi, caching and simulator ones need
# numba's own machinery, as do the array reductions and array-creating ones, which need
# numba's NRT).
MODULES = """test_alignment test_array test_array_args test_array_methods test_atomics
test_blackscholes test_boolean test_casting test_complex test_complex_kernel test_constmem
test_device_func test_enums test_exception test_fastmath test_flow_control test_forall
test_freevar test_frexp_ldexp test_globals test_idiv test_inline test_intrinsics
test_iterators test_lang test_laplace test_libdevice test_localmem test_mandel test_math
test_minmax test_montecarlo test_nondet test_operator test_powi test_py2_div_issue
test_random test_record_dtype test_recursion test_reduction test_slicing test_sm_creation
test_ssa test_sync test_transpose test_userexc test_vector_type test_warp_ops""".split()
# Added in the sixteenth session: numpy ufuncs in kernels, branch pruning, cache hints, lazy
# jit, gufuncs and ufuncs (nbcuda's vectorize/guvectorize; the modules that build numba's own
# from `numba.vectorize`/`numba.guvectorize(target="cuda")` or its deviceufunc engine are left
# out), captured device arrays, warnings and errors. Reported after the first set, so the
# figures of both stay comparable.
MODULES_ADDED = """test_ufuncs test_analysis test_cache_hints test_cuda_jit_no_types test_gufunc
test_vectorize_decor test_vectorize_device test_vectorize_scalar_arg
test_vectorize_complex test_device_array_capture test_warning test_errors""".split()
# Added in the seventeenth session: the dispatcher's API (signatures, specialisation, launch
# bounds, carveouts, resources), pickling, the CUDA array interface, opt, gufunc scheduling,
# the stream API, extensions (retrieve_autoconverted_arrays), line and debug info (many of
# whose checks run numba's FileCheck over numba's own LLVM); reported as a third set.
# (test_cooperative_groups imports cffi, which the GPU machine lacks; its checks are ported to
# tests/python/test_declare_device.py.)
MODULES_THIRD = """test_dispatcher test_serialize test_cuda_array_interface test_optimization
test_gufunc_scheduling test_stream_api test_lineinfo test_debuginfo
test_retrieve_autoconverted_arrays""".split()
# Added in the nineteenth session: shared memory (dynamic shared slices), array alignment,
# the compiler API, print, IPC (children spawned by multiprocessing, which import numba-cuda's
# testing: sitecustomize.py gives them the filecheck stand-in), compiling in threads, array
# reductions (numpy's nan* functions over global tuples of arrays).
MODULES_FOURTH = """test_sm test_array_alignment test_compiler test_print test_ipc
test_multithreads test_typeconv test_array_reductions""".split()
# Added in the twentieth session: nested functions passed as values (make_function), the
# disk cache (whose file-counting checks read numba's index-and-overloads layout), fork
# detection, launch-config-sensitive dispatchers, numba's debug dumps, @overload interop, and
# arrays of strings and dates (which nbcuda has since the twenty-first session).
MODULES_FIFTH = """test_make_function_to_jit_function test_caching test_multiprocessing
test_launch_config_sensitive test_debug test_numba_interop test_const_string
test_datetime""".split()
# Added in the twenty-first session, once numba.vectorize/guvectorize(target="cuda") make
# nbcuda's ufuncs here: numba's ufunc and scalar-gufunc tests.
MODULES_SIXTH = """test_vectorize test_gufunc_scalar""".split()
# Added in the twenty-second session, with bfloat16: numba-cuda's bf16 tests (they import
# ml_dtypes) and its CuPy bfloat16 interop (arrays of bfloat16, which nbcuda lacks).
MODULES_SEVENTH = """test_bfloat16 test_bfloat16_bindings test_cupy_bfloat16_interop""".split()


# numba-cuda's own code the tests may use without it counting as a fallback: what the tests
# are written in.
NOT_FALLBACKS = ("numba.cuda.testing", "numba.cuda.tests", "numba.cuda.types")


class Fallbacks:
    """Which of numba-cuda's names each test used: `test` is the running test's id (None
    between tests), `module` the test module being imported or run."""

    def __init__(self):
        self.test = None
        self.module = None
        self.by_test = collections.defaultdict(collections.Counter)  # test id -> name -> n
        self.by_module = collections.defaultdict(collections.Counter)  # at import

    def record(self, name):
        if self.test is not None:
            self.by_test[self.test][name] += 1
        elif self.module is not None:
            self.by_module[self.module][name] += 1

    def of(self, test_id, module):
        """The numba-cuda names test_id used (its own and its module's import's)."""
        return set(self.by_test.get(test_id, ())) | set(self.by_module.get(module, ()))


FALLBACKS = Fallbacks()


def implementation_of_numba_cuda(value):
    """The qualified name when value is numba-cuda's own implementation (a module or an object
    defined in numba.cuda.*, not its testing helpers or types), else None."""
    if isinstance(value, types.ModuleType):
        where = value.__name__
        if type(value).__name__ == "Bound":
            return None  # the bound numba.cuda: its fallbacks are recorded as they happen
        name = where
    else:
        where = getattr(value, "__module__", None)
        if not isinstance(where, str):
            return None
        name = f"{where}.{getattr(value, '__qualname__', getattr(value, '__name__', '?'))}"
    if where == "numba.cuda" or not where.startswith("numba.cuda."):
        return None
    if where.startswith(NOT_FALLBACKS):
        return None
    return name


def record_module_globals(mod):
    """numba-cuda implementation a test module took into its globals at import."""
    for value in list(vars(mod).values()):
        name = implementation_of_numba_cuda(value)
        if name:
            FALLBACKS.by_module[mod.__name__][name] += 1


class RecordingResult(unittest.TestResult):
    """A TestResult that tells FALLBACKS which test is running."""

    def __init__(self):
        super().__init__()
        self.started = []

    def startTest(self, test):
        FALLBACKS.test = test.id()
        self.started.append(test.id())
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        FALLBACKS.test = None


MIRRORED_SETTINGS = ("CUDA_LOW_OCCUPANCY_WARNINGS", "CUDA_WARN_ON_IMPLICIT_COPY",
                     "DISABLE_PERFORMANCE_WARNINGS", "CUDA_DEBUGINFO_DEFAULT", "OPT",
                     "CUDA_ARRAY_INTERFACE_SYNC", "DUMP_LLVM", "DUMP_ASSEMBLY",
                     "ALWAYS_WARN_UNINIT_VAR")


def compat_numpy():
    import numpy
    for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
        if not hasattr(numpy, old) and hasattr(numpy, new):
            setattr(numpy, old, getattr(numpy, new))


def stub_filecheck():
    try:
        import filecheck  # noqa: F401
        return
    except ImportError:
        pass
    # the processes the tests spawn import numba-cuda's testing too (sitecustomize.py)
    os.environ["NBCUDA_STUB_FILECHECK"] = "1"
    names = {"matcher": ["Matcher"], "options": ["Options"],
             "parser": ["Parser", "pattern_for_opts"], "finput": ["FInput"]}
    top = types.ModuleType("filecheck")
    sys.modules["filecheck"] = top
    for sub, attrs in names.items():
        m = types.ModuleType(f"filecheck.{sub}")
        for a in attrs:
            def missing(*args, _a=a, **kwargs):
                raise RuntimeError(f"filecheck is not installed ({_a})")
            setattr(m, a, missing)
        sys.modules[f"filecheck.{sub}"] = m
        setattr(top, sub, m)


def bind_numba_cuda_to_nbcuda():
    compat_numpy()
    stub_filecheck()
    import numba
    import numba.cuda as real
    import numba.cuda.testing as testing
    import nbcuda

    def cc_at_least(major, minor):
        return nbcuda.get_current_device().compute_capability >= (major, minor)
    testing.cc_X_or_above = cc_at_least

    class Bound(types.ModuleType):
        """A module answering from `first`, else from `then`."""
        def __init__(self, name, first, then):
            super().__init__(name)
            self._first, self._then = first, then
            self.__path__ = getattr(then, "__path__", [])
            self.__file__ = getattr(then, "__file__", None)

        def __getattr__(self, name):
            # numba-cuda's bindings of CUDA's headers (numba.cuda._internal: bf16, fp8, fp16;
            # imported during the tests) declare their functions with numba's declare_device
            # and numba's types: they get numba-cuda's names. Everything else, numba-cuda's
            # helpers the tests call (its random, transpose) included, gets nbcuda's.
            importer = sys._getframe(1).f_globals.get("__name__", "")
            if importer.startswith("numba.cuda._internal"):
                try:
                    value = getattr(self._then, name)
                    FALLBACKS.record(f"{self.__name__}.{name} (for {importer})")
                    return value
                except AttributeError:
                    pass
            try:
                return getattr(self._first, name)
            except AttributeError:
                value = getattr(self._then, name)
                if not f"{self.__name__}.{name}".startswith(NOT_FALLBACKS):
                    FALLBACKS.record(f"{self.__name__}.{name}")
                return value
    # numba-cuda's test base and override_config set its config's performance-warning
    # switches (CUDATestCase turns the warnings off) and debug/opt defaults; nbcuda's config
    # follows them
    import numba.cuda.core.config as real_config

    class Mirrored(types.ModuleType):
        def __setattr__(self, name, value):
            super().__setattr__(name, value)
            if name in MIRRORED_SETTINGS:
                setattr(nbcuda.config, name, value)
    real_config.__class__ = Mirrored
    for name in MIRRORED_SETTINGS:
        setattr(nbcuda.config, name, getattr(real_config, name))
    bound = Bound("numba.cuda", nbcuda, real)
    sys.modules["numba.cuda"] = bound
    numba.cuda = bound
    # numba.cuda.types stays numba-cuda's own: its internals register their implementations
    # on its classes (types.Array, types.Type), and its tests build their inputs with
    # numba_support.as_dtype, which knows only numba's type objects. nbcuda takes numba's type
    # objects wherever it takes its own, so the tests' signatures reach nbcuda as numba's.
    bound.types = real.types
    # `from numba.cuda.compiler import compile_ptx` too gets nbcuda's
    import numba.cuda.compiler as real_compiler
    sys.modules["numba.cuda.compiler"] = Bound("numba.cuda.compiler", nbcuda, real_compiler)
    # numba.vectorize / numba.guvectorize with target="cuda" make nbcuda's GPU ufuncs (what
    # `cuda.vectorize` gives an `import nbcuda as cuda` user); other targets stay numba's
    for name in ("vectorize", "guvectorize"):
        def routed(*args, _numba=getattr(numba, name), _ours=getattr(nbcuda, name), **kwargs):
            return (_ours if kwargs.get("target") == "cuda" else _numba)(*args, **kwargs)
        setattr(numba, name, routed)


def first_line(tb):
    lines = [line for line in tb.strip().splitlines() if line.strip()]
    heads = [i for i, line in enumerate(lines) if not line.startswith(" ")]
    i = heads[-1] if heads else len(lines) - 1
    return " | ".join(line.strip() for line in lines[i:i + 3])[:300]


def run_modules(names, verbose):
    """Runs each module's tests, prints a table row per module; the counts over all."""
    total = collections.Counter()
    for name in names:
        full = f"numba.cuda.tests.cudapy.{name}"
        FALLBACKS.module = full
        try:
            mod = importlib.import_module(full)
        except Exception as e:  # the module needs what nbcuda does not have
            print(f"| {name} | import failed: {type(e).__name__}: {str(e)[:80]} |||||||")
            total["import failed"] += 1
            continue
        record_module_globals(mod)
        result = RecordingResult()
        tests = unittest.defaultTestLoader.loadTestsFromModule(mod)
        tests.run(result)
        FALLBACKS.module = None

        # subtests count as failures of their test: count tests, not subtest reports
        def test_id(t):
            return getattr(t, "test_case", t).id()
        bad = {test_id(t) for t, _ in result.failures + result.errors}
        failed = {test_id(t) for t, _ in result.failures}
        skipped_ids = {test_id(t) for t, _ in result.skipped}
        skipped = len(result.skipped)
        run = result.testsRun
        passed_ids = [t for t in result.started if t not in bad and t not in skipped_ids]
        passed = max(run - len(bad) - skipped, 0)
        alone = sum(1 for t in passed_ids if not FALLBACKS.of(t, full))
        errors = len(bad - failed)
        print(f"| {name} | {run} | {passed} | {alone} | {passed - alone} | {len(failed)} | "
              f"{errors} | {skipped} |", flush=True)
        total.update(run=run, passed=passed, alone=alone, with_fallbacks=passed - alone,
                     failed=len(failed), errors=errors, skipped=skipped)
        for t in passed_ids:
            for used in FALLBACKS.of(t, full):
                total["used: " + used] += 1
        if verbose:
            for t, tb in result.failures + result.errors:
                print(f"    {t.id().split('.', 5)[-1]}: {first_line(tb)}", file=sys.stderr)
    return total


def summary(title, total):
    return (f"{title}: {total['passed']} of {total['run']} passed "
            f"({total['failed']} failed, {total['errors']} errors, {total['skipped']} skipped; "
            f"{total['import failed']} modules did not import)")


def fallback_lines(total):
    """The two figures and the list of numba-cuda names the passed tests used."""
    used = sorted(((k[len("used: "):], n) for k, n in total.items() if k.startswith("used: ")),
                  key=lambda kv: (-kv[1], kv[0]))
    lines = [f"passed on nbcuda alone: {total['alone']} of {total['run']}; passed with "
             f"numba-cuda fallbacks: {total['with_fallbacks']} (of the {total['passed']} "
             "passed)"]
    if used:
        lines.append(f"fallbacks used by passed tests ({len(used)} names; tests using each):")
        lines += [f"  {name}: {n}" for name, n in used]
    return lines


def main(argv):
    verbose = "--verbose" in argv
    json_out = None
    if "--json" in argv:
        i = argv.index("--json")
        if i + 1 >= len(argv):
            print("--json needs a file name", file=sys.stderr)
            return 2
        json_out = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    named = [a for a in argv if not a.startswith("--")]
    groups = [("modules asked for", named)] if named else [
        ("first set", MODULES), ("added set", MODULES_ADDED), ("third set", MODULES_THIRD),
        ("fourth set", MODULES_FOURTH), ("fifth set", MODULES_FIFTH),
        ("sixth set", MODULES_SIXTH), ("seventh set", MODULES_SEVENTH)]
    bind_numba_cuda_to_nbcuda()
    print("| module | run | passed | of which on nbcuda alone | with numba-cuda fallbacks | "
          "failed | errors | skipped |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    total = collections.Counter()
    lines = []
    for title, names in groups:
        counts = run_modules(names, verbose)
        total.update(counts)
        lines.append(summary(title, counts))
    print()
    if len(groups) > 1:
        print("\n".join(lines))
    print(summary("numba-cuda tests", total))
    print("\n".join(fallback_lines(total)))
    if json_out:
        import json
        with open(json_out, "w") as f:
            json.dump({"totals": {k: v for k, v in total.items() if not k.startswith("used: ")},
                       "fallbacks": {k[len("used: "):]: v for k, v in total.items()
                                     if k.startswith("used: ")},
                       "by_test": {t: dict(c) for t, c in FALLBACKS.by_test.items()},
                       "by_module": {m: dict(c) for m, c in FALLBACKS.by_module.items()}},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
