"""nbcuda.config.COMPILE_TIME_LIMIT (NBCUDA_COMPILE_TIME_LIMIT): the seconds libNVVM may take
for one compilation from Python (compile_ptx, jit), past which the compile is an error and
no child process is left; 0 is no limit; bad values are refused."""
import os
import textwrap

import pytest

import nbcuda as cuda
from nbcuda import config


def _slow_function(tmp_path):
    # 30 statements of a 60-link '**' chain: libNVVM takes seconds over it
    body = "".join("    a = a + a" + " ** a" * 60 + "\n" for _ in range(30))
    path = tmp_path / "slow_kernel.py"
    path.write_text("def slow(a):\n" + body + "    return a\n")
    scope = {}
    exec(compile(path.read_text(), str(path), "exec"), scope)
    return scope["slow"]


@pytest.fixture
def limit():
    saved = config.COMPILE_TIME_LIMIT
    yield
    config.COMPILE_TIME_LIMIT = saved


def test_default_is_no_limit():
    assert config.COMPILE_TIME_LIMIT == int(os.environ.get("NBCUDA_COMPILE_TIME_LIMIT", "0"))


def test_limit_ends_a_long_compile(tmp_path, limit):
    slow = _slow_function(tmp_path)
    config.COMPILE_TIME_LIMIT = 0.5
    with pytest.raises(Exception, match=r"compile exceeded the time limit of 0\.5 s"):
        cuda.compile_ptx(slow, "int32(int32)", device=True, cc=(9, 0))
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # the child was reaped: none is left


def test_within_the_limit_the_code_is_the_same(limit):
    def f(a):
        return a * 3 + 1

    plain = cuda.compile_ptx(f, "int32(int32)", device=True, cc=(9, 0))[0]
    config.COMPILE_TIME_LIMIT = 300
    assert cuda.compile_ptx(f, "int32(int32)", device=True, cc=(9, 0))[0] == plain


@pytest.mark.parametrize("bad, error", [(-1, ValueError), (float("nan"), ValueError),
                                        ("soon", TypeError)])
def test_bad_limits_are_refused(bad, error, limit):
    def f(a):
        return a

    config.COMPILE_TIME_LIMIT = bad
    with pytest.raises(error, match="COMPILE_TIME_LIMIT"):
        cuda.compile_ptx(f, "int32(int32)", device=True, cc=(9, 0))
