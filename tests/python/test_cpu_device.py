"""The CPU device (NBCUDA_DRIVER=cpu, src/cpudevice): nbcuda's compiled kernels run without a
GPU. Every kernel and device-function case of the corpus (tests/corpus, tests/gpu/cases) runs
on it through nbcuda.jit in a fresh interpreter (cpu_device_runner.py), and the results of
those with a numpy reference are compared with it; a kernel whose PTX the CPU device cannot
run fails at load with the instruction and its PTX line."""
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

np = pytest.importorskip("numpy")

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_env(**extra):
    env = dict(os.environ)
    env.pop("NUMBA_CUDA_DRIVER", None)
    env["NBCUDA_DRIVER"] = "cpu"
    env["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"] = "0"
    env["NUMBA_CUDA_WARN_ON_IMPLICIT_COPY"] = "0"
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def corpus_results():
    r = subprocess.run([sys.executable, os.path.join(HERE, "cpu_device_runner.py")],
                       env=cpu_env(), capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(r.stdout)


def test_every_corpus_case_runs_and_matches_its_reference(corpus_results):
    bad = {k: v for k, v in corpus_results.items()
           if v != "ok" and not v.startswith("not importable")}
    assert not bad, bad
    ran = [k for k, v in corpus_results.items() if v == "ok"]
    assert len(ran) >= 50, ran  # the corpus has more than 50 cases that need no numba


@pytest.fixture
def run_snippet(tmp_path):
    """Runs code from a file (nbcuda compiles kernels from their source) on the CPU device."""
    def run(code):
        path = tmp_path / "snippet.py"
        path.write_text(textwrap.dedent(code))
        return subprocess.run([sys.executable, str(path)], env=cpu_env(), capture_output=True,
                              text=True, timeout=300)
    return run


def test_device_is_the_cpu_device(run_snippet):
    r = run_snippet("import nbcuda; print(nbcuda.get_current_device().name)")
    assert r.returncode == 0, r.stderr
    assert "nbcuda CPU device 0" in r.stdout


def test_syncthreads_count_and_warp_vote_on_real_threads(run_snippet):
    r = run_snippet("""
        import numpy as np
        import nbcuda as cuda

        @cuda.jit
        def k(out, x):
            i = cuda.threadIdx.x
            n = cuda.syncthreads_count(1 if x[i] > 0 else 0)
            b = cuda.ballot_sync(0xffffffff, x[i] > 0)
            out[i] = n * 100000 + cuda.popc(b)

        x = np.random.default_rng(5).standard_normal(96)
        out = np.zeros(96, np.int64)
        k[1, 96](out, x)
        pos = x > 0
        want = [pos.sum() * 100000 + pos[(i // 32) * 32:(i // 32) * 32 + 32].sum()
                for i in range(96)]
        assert (out == want).all(), (out, want)
        print("ok")
        """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_unsupported_ptx_is_a_load_error_naming_instruction_and_line(run_snippet):
    # kernel print (vprintf) is not run by the CPU device yet: the load says so
    r = run_snippet("""
        import nbcuda as cuda

        @cuda.jit
        def k():
            print("hello", cuda.threadIdx.x)

        try:
            k[1, 1]()
        except Exception as e:
            print(type(e).__name__, e)
        """)
    out = r.stdout + r.stderr
    assert re.search(r"CUDA_ERROR_INVALID_PTX .*\n"
                     r"nbcuda CPU device: ptx line \d+: unsupported call of 'vprintf' "
                     r"\(kernel print\)", out), out


def test_out_of_bounds_store_is_reported_with_thread_and_line(run_snippet):
    r = run_snippet("""
        import numpy as np
        import nbcuda as cuda

        @cuda.jit
        def k(out):
            out[cuda.threadIdx.x * 1000000] = 1.0

        out = cuda.device_array(4)
        k[1, 2](out)
        try:
            cuda.synchronize()
        except Exception as e:
            print(type(e).__name__, e)
        """)
    assert "thread (1,0,0): invalid global memory access at address 0x" in r.stderr, r.stderr
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in r.stdout + r.stderr


def test_numba_cuda_doc_examples_pass_their_assertions(run_snippet):
    # numba-cuda's documentation examples (test_doc_examples.py) with their original
    # assertions; those linked into a cubin (link files, cooperative launches) cannot run
    r = run_snippet(f"""
        import sys
        sys.path.insert(0, {HERE!r})
        import test_doc_examples as t
        import nbcuda
        for name in sorted(set(t.EXAMPLES) - t.GPU_ONLY - t.NEEDS_NUMBA):
            try:
                t.CHECKS[name](t.EXAMPLES[name](nbcuda))
                print("passed", name)
            except Exception as e:
                print("failed", name, type(e).__name__, str(e).replace(chr(10), " "))
        """)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    failed = [l for l in lines if l.startswith("failed") and "a cubin (ELF image)" not in l]
    assert not failed, failed
    assert sum(l.startswith("passed") for l in lines) >= 7, lines


def test_block_larger_than_launch_bounds_is_refused(run_snippet):
    # as the real driver refuses a block above the PTX's .maxntid
    r = run_snippet("""
        import numpy as np
        import nbcuda

        def count(a):
            nbcuda.atomic.add(a, 0, 1)

        k = nbcuda.jit("void(int32[:])", launch_bounds=64)(count)
        d = nbcuda.to_device(np.zeros(1, np.int32))
        k[4, 64](d)
        assert d.copy_to_host()[0] == 256
        try:
            k[2, 128](d)
            nbcuda.synchronize()
            print("launched")
        except nbcuda.CudaAPIError as e:
            print("refused", e)
        """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("refused") and "CUDA_ERROR_INVALID_VALUE" in r.stdout, r.stdout


def test_long_kernel_names_are_found(run_snippet):
    # numba's mangled names of record arguments run past 256 characters
    r = run_snippet("""
        import numpy as np
        import nbcuda

        REC = np.dtype([("alpha_field_with_a_long_name", np.float64),
                        ("beta_field_with_a_long_name", np.int32),
                        ("gamma_field_with_a_long_name", np.float32, (3, 2)),
                        ("delta_field_with_an_even_longer_name", np.int64)], align=True)

        def k(recs, out):
            i = nbcuda.grid(1)
            if i < out.size:
                out[i] = recs[i].alpha_field_with_a_long_name * 2

        recs = np.zeros(8, REC)
        recs["alpha_field_with_a_long_name"] = np.arange(8)
        out = np.zeros(8)
        nbcuda.jit(k)[1, 8](recs, out)
        print(out.tolist())
        """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str([2.0 * i for i in range(8)])
