"""nbcuda.info(): what nbcuda found, as a dict with the content of `nbcuda info --json`
(src/info.c): each CUDA library's path and version or why it is unavailable, the CUDA
runtime, the devices, the environment variables nbcuda reads that are set. Missing libraries
are steered with each one's variable, in a fresh interpreter (each library is looked for once
per process)."""
import json
import os
import subprocess

import pytest

from conftest import USING_TESTDRIVER
from test_install import _installed_cli

LIBRARIES = ["libcuda", "libNVVM", "libdevice", "nvJitLink", "NVRTC", "libcudart",
             "libcudadevrt"]


def test_info_reports_every_library(cuda):
    info = cuda.info()
    assert info["nbcuda"] == cuda.__version__
    assert list(info["libraries"]) == LIBRARIES
    for name, entry in info["libraries"].items():
        if "error" in entry:
            assert entry["status"].startswith("NBC_"), name
            assert entry["error"], name
        else:
            assert os.path.exists(entry["path"]) or "/" not in entry["path"], name
            version = entry["version"]
            assert version is None or (len(version) == 2 and version[0] >= 1), name
    # libNVVM is what compile_ptx uses: compiling works exactly when it was found.
    assert "error" not in info["libraries"]["libNVVM"]
    assert info["libraries"]["libdevice"]["version"] is None
    assert info["libraries"]["libdevice"]["path"].endswith("libdevice.10.bc")


def test_info_devices_and_driver(cuda):
    info = cuda.info()
    devices = cuda.list_devices()
    assert [d["id"] for d in info["devices"]] == [d.id for d in devices]
    for entry, dev in zip(info["devices"], devices):
        name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
        assert entry["name"] == name
        assert tuple(entry["compute_capability"]) == dev.compute_capability
    if USING_TESTDRIVER:
        assert info["libraries"]["libcuda"]["version"] == [13, 0]
        assert info["libraries"]["libcuda"]["path"] == os.environ["NBCUDA_DRIVER"]
        assert info["environment"]["NBCUDA_DRIVER"] == os.environ["NBCUDA_DRIVER"]


def test_info_environment_lists_only_variables_set(run_py):
    p = run_py("""
        import json, nbcuda
        print(json.dumps(nbcuda.info()["environment"]))
    """, env={"NUMBA_OPT": "2", "NBCUDA_NOT_A_SWITCH": "1"})
    env = json.loads(p.stdout)
    assert env["NUMBA_OPT"] == "2"
    assert "NBCUDA_NOT_A_SWITCH" not in env


def test_info_not_found(run_py):
    p = run_py("""
        import json, nbcuda
        print(json.dumps(nbcuda.info()))
    """, env={"NBCUDA_NVVM": "/nonexistent/libnvvm.so", "NBCUDA_NVRTC": "/nonexistent/nvrtc.so",
              "NBCUDA_DRIVER": "0"})
    info = json.loads(p.stdout)
    nvvm = info["libraries"]["libNVVM"]
    assert nvvm["status"] == "NBC_NO_NVVM"
    assert nvvm["path"] is None
    assert "/nonexistent/libnvvm.so (NBCUDA_NVVM: no such file)" in nvvm["error"]
    assert info["libraries"]["NVRTC"]["status"] == "NBC_NO_NVRTC"
    assert info["libraries"]["libcuda"]["status"] == "NBC_DRIVER_DISABLED"
    assert info["devices"] == []
    assert info["environment"]["NBCUDA_NVVM"] == "/nonexistent/libnvvm.so"


def test_info_matches_the_cli(cuda):
    cli = _installed_cli()
    if cli is None:
        pytest.skip("the nbcuda command is not installed")
    # The CLI is its own program: the ASan run's LD_PRELOAD of the runtime (for the module in
    # python) does not fit it.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    out = subprocess.run([cli, "info", "--json"], capture_output=True, text=True, timeout=60,
                         env=env)
    assert out.returncode == 0, out.stderr
    assert _same_files(json.loads(out.stdout)) == _same_files(cuda.info())


def _same_files(info):
    """info with each library's path resolved to its file: the loader names a library by the
    name the process first opened it with (libcuda.so when CuPy or numba-cuda loaded it in the
    test process, libcuda.so.1 in the CLI's), the same file either way."""
    for lib in info["libraries"].values():
        if lib.get("path"):
            lib["path"] = os.path.realpath(lib["path"])
    return info
