"""Functions without a file (issue: real programs, item 8): a kernel typed at the interactive
prompt of Python >= 3.13 (which keeps the text in linecache), one from IPython / Jupyter
(text registered in linecache under the cell's name) compiles from the text CPython kept;
where there is none at all (`python -c`), the error says so and what to do."""
import os
import subprocess
import sys

import pytest

PROGRAM = ("import nbcuda as cuda\n"
           "def f(a):\n"
           "    a[0] = 7\n"
           "\n"
           "k = cuda.jit('void(int64[:])')(f)\n"
           "print('compiled', len(k.signatures))\n")


def _env():
    env = dict(os.environ)
    if os.environ.get("NBCUDA_TESTDRIVER"):
        env["NBCUDA_DRIVER"] = os.environ["NBCUDA_TESTDRIVER"]
    return env


def test_a_cell_registered_in_linecache_compiles(cuda):
    """IPython compiles each cell under a name of its own and puts the text in linecache."""
    import linecache
    name = "<ipython-input-7-0123456789ab>"
    src = "def cell_kernel(a):\n    a[0] = 5\n"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {}
    exec(compile(src, name, "exec"), ns)
    k = cuda.jit("void(int64[:])")(ns["cell_kernel"])
    assert len(k.signatures) == 1


def test_python_dash_c_says_there_is_no_source():
    p = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                       env=_env(), timeout=120)
    assert p.returncode != 0
    assert "from its Python source, and there is none" in p.stderr
    assert "define it in a file" in p.stderr


@pytest.mark.skipif(sys.version_info < (3, 13), reason="the prompt keeps its text from 3.13")
def test_the_interactive_prompt_keeps_the_text():
    p = subprocess.run([sys.executable, "-i", "-q"], input=PROGRAM, capture_output=True,
                       text=True, env=_env(), timeout=120)
    assert "compiled 1" in p.stdout, p.stderr
