"""numba-cuda's environment switches are honoured or refused loudly, never silently ignored:
NUMBA_ENABLE_CUDASIM makes `import nbcuda` fail saying what nbcuda offers instead; the
driver-call log's and the linker log's switches warn that they have no effect. Each case
imports nbcuda in a fresh interpreter with the switch set."""
import os
import subprocess
import sys


def _import_with(env_extra, code="import nbcuda; print('imported')"):
    env = dict(os.environ)
    env.update(env_extra)
    return subprocess.run([sys.executable, "-W", "always", "-c", code], env=env,
                          capture_output=True, text=True, timeout=120)


def test_cudasim_is_refused_at_import():
    r = _import_with({"NUMBA_ENABLE_CUDASIM": "1"})
    assert r.returncode != 0
    assert "ImportError: NUMBA_ENABLE_CUDASIM is set, but nbcuda has no CUDA simulator" in r.stderr
    assert "compile_ptx and compile work without a GPU" in r.stderr


def test_cudasim_zero_is_not_the_simulator():
    r = _import_with({"NUMBA_ENABLE_CUDASIM": "0"},
                     "import nbcuda; print(nbcuda.config.ENABLE_CUDASIM)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_logging_switches_warn_that_they_do_nothing():
    for name in ("NUMBA_CUDA_LOG_LEVEL", "NUMBA_CUDA_LOG_API_ARGS", "NUMBA_CUDA_LOG_SIZE",
                 "NUMBA_CUDA_VERBOSE_JIT_LOG"):
        r = _import_with({name: "1"})
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "imported"
        assert f"RuntimeWarning: {name}=1 is set, but nbcuda does not log" in r.stderr


def test_no_warning_without_the_switches():
    env = {k: "" for k in ("NUMBA_CUDA_LOG_LEVEL", "NUMBA_CUDA_LOG_API_ARGS",
                           "NUMBA_CUDA_LOG_SIZE", "NUMBA_CUDA_VERBOSE_JIT_LOG")}
    r = _import_with(env)
    assert r.returncode == 0, r.stderr
    assert "RuntimeWarning" not in r.stderr


def test_disable_cuda_reaches_python():
    r = _import_with({"NUMBA_DISABLE_CUDA": "1"},
                     "import nbcuda; print(nbcuda.is_available())")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
