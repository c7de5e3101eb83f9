"""A module file edited after import: nbcuda compiles a function from its source text, so a
file that no longer holds the code Python runs (the function's code object) is an error
naming the file and the function, never a compile of the new text (which would run other
code than Python's). Edits that leave the function's code as it was (below it, or in
another function that does not move it) compile as before; importlib.reload makes both
agree again. Each case imports a module written to a temporary folder."""
import importlib
import os
import sys

import pytest

import nbcuda as cuda

SOURCE = '''\
import nbcuda as cuda

def f(x):
    return x + 1.0

g = lambda x: x * 2.0

@cuda.jit(device=True)
def helper(x):
    return x - 3.0

def uses_helper(x):
    return helper(x)
'''


@pytest.fixture
def module(tmp_path, request):
    name = f"nbcuda_edit_{request.node.name}"
    path = tmp_path / f"{name}.py"
    path.write_text(SOURCE)
    sys.path.insert(0, str(tmp_path))
    try:
        mod = importlib.import_module(name)
        yield mod, path
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)


def _edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    st = os.stat(path)  # a later mtime even on a coarse clock: linecache compares it
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def _ptx(func):
    return cuda.compile_ptx(func, "float32(float32)", device=True, cc=(9, 0))[0]


def test_unchanged_file_compiles(module):
    mod, _ = module
    assert "add.f32" in _ptx(mod.f) or "add.rn.f32" in _ptx(mod.f)


def test_edited_function_is_an_error(module):
    mod, path = module
    _ptx(mod.f)  # compiled once while the file was current: nothing kept hides the edit
    _edit(path, "return x + 1.0", "return x * 5.0 + 7.0")
    with pytest.raises(RuntimeError) as e:
        _ptx(mod.f)
    msg = str(e.value)
    assert msg.startswith(f"{path} changed after Python compiled f (line 3 of the file then)")
    assert "importlib.reload" in msg


def test_function_moved_by_an_edit_above_is_an_error(module):
    mod, path = module
    _edit(path, "import nbcuda as cuda\n", "import nbcuda as cuda\nimport math\n")
    with pytest.raises(RuntimeError, match="changed after Python compiled f"):
        _ptx(mod.f)


def test_edit_below_the_function_compiles(module):
    mod, path = module
    _edit(path, "return helper(x)", "return helper(x) + 100.0")
    _ptx(mod.f)  # f's code is where and what it was


def test_edited_lambda_is_an_error(module):
    mod, path = module
    _edit(path, "x * 2.0", "x * 4.0")
    with pytest.raises(RuntimeError, match="changed after Python compiled <lambda>"):
        _ptx(mod.g)


def test_edited_device_function_a_caller_uses_is_an_error(module):
    mod, path = module
    _edit(path, "return x - 3.0", "return x - 9.0")
    with pytest.raises(RuntimeError, match="changed after Python compiled helper"):
        _ptx(mod.uses_helper)


def test_reload_makes_them_agree(module):
    mod, path = module
    _edit(path, "return x + 1.0", "return x + 2.5")
    with pytest.raises(RuntimeError):
        _ptx(mod.f)
    mod = importlib.reload(mod)
    assert "2.5" in _ptx(mod.f) or "0f40200000" in _ptx(mod.f)


def test_file_that_no_longer_parses_is_an_error(module):
    mod, path = module
    _edit(path, "return x + 1.0", "return x +")
    with pytest.raises(RuntimeError, match="changed after Python compiled f"):
        _ptx(mod.f)


def test_edited_operator_is_an_error(module):
    mod, path = module
    _edit(path, "return x + 1.0", "return x - 1.0")  # same names, constants and lines
    with pytest.raises(RuntimeError, match="changed after Python compiled f"):
        _ptx(mod.f)


def test_code_an_import_hook_rewrote_compiles():
    """This file's functions run as pytest's assertion rewriting made them (names such as
    @py_assert1 added): the file is unchanged, so they compile."""
    def k(out, x):
        assert x[0] != 0
        out[0] = x[0]

    assert any(n.startswith("@py_assert") for n in k.__code__.co_varnames)
    cuda.compile_ptx(k, "void(float32[::1], float32[::1])", cc=(9, 0))
