"""jit(cache=True), as numba's: compiled kernels are kept on disk (the source's __pycache__,
else NBCUDA_CACHE_DIR / NUMBA_CACHE_DIR or the user's cache directory) and a new process
takes them from there instead of compiling; k.stats counts hits and misses per signature.
An edited source file, other options or a corrupt file mean compiling again. Each step runs
in a fresh interpreter (run_py), as a cache is meant to be used."""
import glob
import os
import textwrap

import pytest

from conftest import real_gpu_present

KERNELS = '''
import numpy as np
import nbcuda as cuda

@cuda.jit("void(float32[::1], float32)", cache=True)
def scale(a, f):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= f

@cuda.jit(cache=True)
def lazy(a):
    a[0] = 1

@cuda.jit("void(float32[::1], float32)", cache=True, fastmath=True)
def scale_fast(a, f):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= f
'''

REPORT = '''
import sys, json
sys.path.insert(0, {where!r})
import numpy as np
import kernels
kernels.lazy[1, 1](np.zeros(2, np.float32))
kernels.lazy[1, 1](np.zeros(2, np.int64))
out = {{}}
for name in ("scale", "lazy", "scale_fast"):
    st = getattr(kernels, name).stats
    out[name] = [st.cache_path, st.cache_hits, st.cache_misses]
print(json.dumps(out))
'''


def report(run_py, where, env=None):
    import json
    p = run_py(REPORT.format(where=str(where)), env=env)
    return json.loads(p.stdout.strip().splitlines()[-1])


def files(d):
    return sorted(glob.glob(os.path.join(str(d), "*.nbcuda")))


@pytest.fixture
def module_dir(tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS)
    return tmp_path


def test_second_process_takes_the_kernels_from_the_cache(module_dir, run_py):
    first = report(run_py, module_dir)
    cache = str(module_dir / "__pycache__")
    assert first["scale"] == [cache, {}, {"void(float32[::1], float32)": 1}]
    assert first["lazy"][2] == {"void(float32[::1])": 1, "void(int64[::1])": 1}
    assert first["scale_fast"][2] == {"void(float32[::1], float32)": 1}
    assert len(files(cache)) == 4  # scale, scale_fast (other options), lazy twice
    second = report(run_py, module_dir)
    assert second["scale"] == [cache, {"void(float32[::1], float32)": 1}, {}]
    assert second["lazy"][1] == {"void(float32[::1])": 1, "void(int64[::1])": 1}
    assert second["lazy"][2] == {} and second["scale_fast"][2] == {}
    assert len(files(cache)) == 4


def test_an_edited_source_is_compiled_again(module_dir, run_py):
    report(run_py, module_dir)
    src = module_dir / "kernels.py"
    src.write_text(src.read_text() + "\n# edited\n")
    again = report(run_py, module_dir)
    assert again["scale"][1] == {} and again["scale"][2] == {"void(float32[::1], float32)": 1}
    assert report(run_py, module_dir)["scale"][1] == {"void(float32[::1], float32)": 1}


def test_a_corrupt_file_is_a_miss_and_is_rewritten(module_dir, run_py):
    report(run_py, module_dir)
    for path in files(module_dir / "__pycache__"):
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) // 2)
    again = report(run_py, module_dir)
    assert again["scale"][2] == {"void(float32[::1], float32)": 1}
    assert report(run_py, module_dir)["scale"][1] == {"void(float32[::1], float32)": 1}


def test_cache_dir_from_the_environment(module_dir, tmp_path, run_py):
    d = tmp_path / "elsewhere"
    first = report(run_py, module_dir, env={"NBCUDA_CACHE_DIR": str(d)})
    assert first["scale"][0].startswith(str(d)) and len(files(first["scale"][0])) == 4
    assert not os.path.exists(module_dir / "__pycache__") or not files(module_dir / "__pycache__")
    second = report(run_py, module_dir, env={"NUMBA_CACHE_DIR": "", "NBCUDA_CACHE_DIR": str(d)})
    assert second["scale"][1] == {"void(float32[::1], float32)": 1}


def test_no_pycache_directory_uses_the_user_cache(module_dir, tmp_path, run_py):
    # __pycache__ cannot be made (a plain file has the name; root is refused too)
    (module_dir / "__pycache__").write_text("not a directory")
    home = tmp_path / "xdg"
    first = report(run_py, module_dir, env={"XDG_CACHE_HOME": str(home)})
    assert first["scale"][0].startswith(str(home / "nbcuda"))
    assert len(files(first["scale"][0])) == 4
    second = report(run_py, module_dir, env={"XDG_CACHE_HOME": str(home)})
    assert second["scale"][1] == {"void(float32[::1], float32)": 1}


def test_no_source_file_cannot_be_cached(cuda, run_py):
    p = run_py("""
        import nbcuda as cuda
        ns = {"cuda": cuda}
        exec("def k(a):\\n    a[0] = 1\\n", ns)
        try:
            cuda.jit("void(float32[::1])", cache=True)(ns["k"])
        except RuntimeError as e:
            print("refused:", e)
    """)
    assert "refused: cannot cache function" in p.stdout and "no locator available" in p.stdout


def test_without_cache_stats_are_empty(cuda):
    k = cuda.jit("void(float32[::1])")(lambda a: None)
    assert tuple(k.stats) == (None, {}, {})


@pytest.mark.gpu
def test_cached_kernel_runs_on_the_gpu(gpu, module_dir, run_py):
    code = textwrap.dedent(f'''
        import sys
        sys.path.insert(0, {str(module_dir)!r})
        import numpy as np
        import kernels
        a = np.arange(8, dtype=np.float32)
        kernels.scale[1, 8](a, np.float32(3))
        print(a.tolist(), kernels.scale.stats.cache_hits)
    ''')
    first = run_py(code).stdout
    second = run_py(code).stdout
    assert "[0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 18.0, 21.0] {}" in first
    assert "[0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 18.0, 21.0] {'void(float32[::1], float32)': 1}" \
        in second


def test_a_kernel_from_the_cache_is_typed_again_for_its_typemap(module_dir, run_py):
    """Code taken from the cache carries no types: _type_annotation compiles the source again
    (to NVVM IR) for numba's typemap."""
    code = ("import sys\nsys.path.insert(0, {where!r})\nimport kernels\n"
            "print(kernels.scale.stats.cache_hits, "
            "{{k: str(v) for k, v in kernels.scale._type_annotation.typemap.items()}})\n")
    report(run_py, module_dir)  # fills the cache
    out = run_py(code.format(where=str(module_dir))).stdout.strip().splitlines()[-1]
    assert out == ("{'void(float32[::1], float32)': 1} {'a': 'array(float32, 1d, C)', "
                   "'f': 'float32', 'i': 'int64'}")


CLOSURES = '''
import numpy as np
import nbcuda as cuda


def make_closure(x):
    @cuda.jit("void(int64[::1], int64[::1])", cache=True)
    def closure(r, y):
        r[0] = x + y[0]
    return closure


closures = [make_closure(x) for x in (3, 5, 7, 9)]
again = make_closure(5)  # the same captured value: the same entry as closures[1]


def make_unpicklable():
    d = cuda.to_device(np.arange(3))  # captured by address, and does not pickle: not cached

    @cuda.jit("void(int64[::1])", cache=True)
    def uses_array(r):
        r[0] = d[1]
    return uses_array


unpicklable = make_unpicklable()
'''

CLOSURE_REPORT = '''
import sys, json
sys.path.insert(0, {where!r})
import closures as m
ks = m.closures + [m.again, m.unpicklable]
print(json.dumps([["".join(k.inspect_asm().values()), k.stats.cache_hits,
                   k.stats.cache_misses] for k in ks]))
'''


def test_closures_with_other_captured_values_are_other_entries(tmp_path, run_py):
    # numba's index key holds the pickled closure cells: a factory's closures over 3, 5, 7 and
    # 9 are four entries, each with its own constant, and one over 5 again is the second's
    (tmp_path / "closures.py").write_text(CLOSURES)
    import json
    sig = "void(int64[::1], int64[::1])"
    runs = []
    for _ in range(2):
        p = run_py(CLOSURE_REPORT.format(where=str(tmp_path)))
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    first, second = runs
    asm = [k[0] for k in first[:4]]
    assert len(set(asm)) == 4 and first[4][0] == asm[1]
    # the same code from the cache (not uses_array's: its array's address is this process's)
    assert [k[0] for k in second[:5]] == [k[0] for k in first[:5]]
    assert [k[2] for k in first[:4]] == [{sig: 1}] * 4 and first[4][1] == {sig: 1}
    assert [k[1] for k in second[:5]] == [{sig: 1}] * 5
    assert second[5][1:] == [{}, {"void(int64[::1])": 1}]  # compiled again each time
    assert len(files(tmp_path / "__pycache__")) == 4


RECOMPILE = '''
import sys, json
sys.path.insert(0, {where!r})
import numpy as np
import nbcuda as cuda
import glob_kernels as m
out = []
m.lazy[1, 1](np.zeros(1, np.int64))
ran = []
for k in (m.eager, m.lazy):
    a = np.ones(1, np.int64)
    k[1, 1](a)  # loads the old code
    before = "".join(k.inspect_asm().values())
    m.G = 7
    k.recompile()
    after = "".join(k.inspect_asm().values())
    k[1, 1](a)  # the new code: the old module was unloaded
    ran.append(int(a[0]))
    m.G = 5
    out.append([" 5;" in before, " 7;" in after, " 5;" in after])
m.G = object()  # no longer compiles: the error is raised, the code compiled last stays
try:
    m.eager.recompile()
except cuda.TypingError:
    out.append(" 7;" in "".join(m.eager.inspect_asm().values()))
m.G = 5
print(json.dumps([out, m.eager.stats.cache_misses, m.lazy.stats.cache_misses, ran]))
'''

GLOBALS = '''
import nbcuda as cuda
G = 5

@cuda.jit("void(int64[::1])", cache=True)
def eager(a):
    a[0] = a[0] * G

@cuda.jit(cache=True)
def lazy(a):
    a[0] = a[0] * G
'''


def test_recompile_reads_globals_again_and_rewrites_the_cache(tmp_path, run_py):
    # numba's Dispatcher.recompile(): each signature compiled afresh (a global changed since
    # is read again), the new code written over the cache entry: the next process loads it
    import json
    (tmp_path / "glob_kernels.py").write_text(GLOBALS)
    p = run_py(RECOMPILE.format(where=str(tmp_path)))
    out, eager_misses, lazy_misses, ran = json.loads(p.stdout.strip().splitlines()[-1])
    assert out == [[True, True, False], [True, True, False], True]
    if real_gpu_present():  # 1 * 5, then * 7
        assert ran == [35, 35]
    assert eager_misses == {"void(int64[::1])": 1} and lazy_misses == {"void(int64[::1])": 1}
    again = run_py("import sys; sys.path.insert(0, %r)\nimport glob_kernels as m\n"
                   "print(' 7;' in ''.join(m.eager.inspect_asm().values()), "
                   "m.eager.stats.cache_hits)" % str(tmp_path))
    assert again.stdout.strip().splitlines()[-1] == "True {'void(int64[::1])': 1}"


UNCACHEABLE = '''
import warnings
import numpy as np
import nbcuda as cuda

d = cuda.to_device(np.arange(3))


@cuda.jit("void(int64[::1])", cache=True)
def uses_global_array(r):
    r[0] = d[1]


def make():
    local = cuda.to_device(np.arange(3))

    @cuda.jit("void(int64[::1])", cache=True)
    def uses_captured_array(r):
        r[0] = local[1]
    return uses_captured_array
'''


def test_a_kernel_that_cannot_be_cached_says_so(tmp_path, run_py):
    # numba warns of a function it cannot cache (numba-cuda raises PicklingError for device
    # arrays): nbcuda compiles such a kernel, runs it uncached, and warns with numba's words
    (tmp_path / "uncacheable.py").write_text(UNCACHEABLE)
    p = run_py("import sys, warnings\nsys.path.insert(0, %r)\n"
               "with warnings.catch_warnings(record=True) as w:\n"
               "    warnings.simplefilter('always')\n"
               "    import uncacheable as m\n"
               "    m.make()\n"
               "for x in w:\n"
               "    print(type(x.message).__name__, x.message)\n" % str(tmp_path))
    lines = p.stdout.strip().splitlines()
    assert lines == [
        'NumbaWarning Cannot cache compiled function "uses_global_array" as it uses dynamic '
        'globals (device arrays)',
        'NumbaWarning Cannot cache compiled function "make.<locals>.uses_captured_array" as '
        'it uses dynamic globals (device arrays)']
    assert not files(tmp_path / "__pycache__")
