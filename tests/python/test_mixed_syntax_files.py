"""A kernel in a file whose other parts use syntax the kernel language lacks (issue: real
programs, item 9): jit and compile_ptx read only the function's own source, so match, classes,
lambdas, async code and decorators elsewhere in the file change nothing; a kernel reaching a
function written with them gets that function's error. (`nbcuda compile FILE.py:f` on files
with Python 3.12 syntax is tests/c/cli_compile.cmake's, with tests/data/mixed_syntax.py.)"""
import pytest

from conftest import load_kernel_module

SOURCE = '''
import math
from dataclasses import dataclass

SCALE = 2.0


def describe(x):
    match x:
        case {"a": 1, **rest}:
            return rest
        case _:
            return None


halve = lambda v: v / 2  # noqa: E731


class Accumulator:
    def __init__(self):
        self.items = []

    async def drain(self):
        async for item in self.source():
            yield item


def numbers():
    yield from (n for n in range(3) if n)


def scale(a):
    a[0] = math.sqrt(a[0]) * SCALE


def uses_describe(a):
    a[0] = describe(a)
'''


def test_only_what_the_kernel_reaches_must_compile(cuda, tmp_path):
    mod = load_kernel_module(tmp_path, "mixed_syntax_311", SOURCE, cuda)
    ptx, _ = cuda.compile_ptx(mod.scale, "void(float64[:])", cc=(9, 0))
    assert ".entry" in ptx
    assert cuda.jit("void(float64[:])")(mod.scale) is not None


def test_reaching_match_is_its_error(cuda, tmp_path):
    mod = load_kernel_module(tmp_path, "mixed_syntax_311", SOURCE, cuda)
    with pytest.raises(cuda.TypingError, match="mixed_syntax_311.py:9:5: error: unsupported "
                                               "statement: 'match'"):
        cuda.compile_ptx(mod.uses_describe, "void(float64[:])", cc=(9, 0))
