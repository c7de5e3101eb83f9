"""What `pip install` gives: the module's version is the C library's and the package
metadata's, and the `nbcuda` command-line tool is installed beside the interpreter's
scripts and reports the same version."""
import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig

import nbcuda


def _installed_cli():
    for folder in (os.path.dirname(sys.executable), sysconfig.get_path("scripts")):
        path = os.path.join(folder, "nbcuda")
        if os.access(path, os.X_OK):
            return path
    return shutil.which("nbcuda")


def test_version_matches_package_metadata():
    assert nbcuda.__version__ == importlib.metadata.version("nbcuda")
    assert nbcuda.__version__.count(".") == 2


def test_pip_install_puts_the_cli_on_path():
    cli = _installed_cli()
    assert cli is not None, "pip install did not install the nbcuda command"
    # the CLI is a program of its own: an interpreter's preloaded sanitizer runtime (the ASan
    # test stage) is not for it
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    out = subprocess.run([cli, "version"], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == f"nbcuda {nbcuda.__version__}"


def test_license_files_ship_with_the_package():
    files = importlib.metadata.files("nbcuda") or []
    names = {os.path.basename(str(f)) for f in files}
    assert {"LICENSE", "NOTICE"} <= names
    meta = importlib.metadata.metadata("nbcuda")
    assert meta.get("License-Expression") == "BSD-2-Clause"
