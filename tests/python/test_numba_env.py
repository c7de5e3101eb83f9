"""numba-cuda's environment switches are honoured or refused loudly, never silently ignored:
NUMBA_ENABLE_CUDASIM selects the CPU device (it runs the compiled kernels); the
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


def test_cudasim_selects_the_cpu_device():
    env = dict(os.environ)
    env.pop("NBCUDA_DRIVER", None)
    env.pop("NUMBA_CUDA_DRIVER", None)
    env["NUMBA_ENABLE_CUDASIM"] = "1"
    r = subprocess.run([sys.executable, "-c",
                        "import nbcuda; print(nbcuda.get_current_device().name)"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() in ("nbcuda CPU device 0", "b'nbcuda CPU device 0'")


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
