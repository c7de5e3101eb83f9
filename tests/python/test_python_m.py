"""`python -m nbcuda` runs the `nbcuda` command installed beside this interpreter with the same
arguments, output and exit status; where the command is missing it says where it looked."""
import os
import shutil
import subprocess
import sys
import sysconfig

import pytest


def installed_cli():
    path = os.path.join(sysconfig.get_path("scripts"), "nbcuda")
    if not os.path.isfile(path):
        pytest.skip("the nbcuda command is not installed beside this interpreter")
    return path


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=120, **kw)


@pytest.mark.parametrize("args", [["version"], ["--bogus"], ["compile", "--help"]])
def test_same_as_the_command(cuda, args):
    cli = installed_cli()
    direct, via = run([cli] + args), run([sys.executable, "-m", "nbcuda"] + args)
    assert (via.returncode, via.stdout, via.stderr) == (
        direct.returncode, direct.stdout, direct.stderr)


def test_reads_stdin(cuda, tmp_path):
    installed_cli()
    source = "def add(a, b):\n    return a + b\n"
    p = run([sys.executable, "-m", "nbcuda", "compile", "-:add", "--sig",
             "float32(float32, float32)", "--cc", "9.0"], input=source)
    assert p.returncode == 0, p.stderr
    assert ".target sm_90" in p.stdout


def test_missing_command_is_explained(cuda, tmp_path):
    p = run([sys.executable, "-c",
             "import sysconfig, runpy\n"
             "sysconfig.get_path = lambda *a, **k: '/nonexistent/bin'\n"
             "runpy.run_module('nbcuda', run_name='__main__')\n"])
    assert p.returncode == 127, (p.stdout, p.stderr)
    assert p.stderr.startswith("python -m nbcuda: the nbcuda command is not installed beside "
                               "this Python (looked in /nonexistent/bin"), p.stderr
